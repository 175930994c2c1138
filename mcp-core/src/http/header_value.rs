//! Values of `Mcp-Param-*` headers (2026-07-28 Streamable HTTP, SEP-2243)
//!
//! A client mirrors each argument whose property carries `x-mcp-header` into a header; the
//! server checks that the header matches the body. HTTP field values cannot carry every
//! string, so a string that is not plain printable ASCII travels as
//! `=?base64?<base64 of its UTF-8>?=`.
//!
//! ```
//! use mcp_sansio::http::{decode_header_value, encode_header_value};
//! use serde_json::json;
//!
//! assert_eq!(encode_header_value(&json!("us-west-1")).as_deref(), Some("us-west-1"));
//! assert_eq!(encode_header_value(&json!("Hello, 世界")).as_deref(), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
//! assert_eq!(encode_header_value(&json!(null)), None);
//! assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
//! ```

use serde_json::Value;
use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// The header value a client sends for an argument, or `None` when it sends no header
///
/// - string: as-is when every character is printable ASCII (space to `~`) and it neither
///   starts nor ends with a space; otherwise `=?base64?…?=`. The empty string is an empty
///   header value. A string that itself looks like `=?base64?…?=` is encoded too, so the
///   server cannot mistake it for an encoded one.
/// - integer: decimal; other numbers: their JSON text (`x-mcp-header` is not valid on
///   `number` properties, so this only happens for a non-integer sent to an `integer` one).
/// - boolean: `true` or `false`.
/// - null, arrays and objects: `None` (null means "no header"; the others are not allowed
///   on `x-mcp-header` properties).
pub fn encode_header_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(encode_string(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

fn encode_string(s: &str) -> String {
    let printable = s.bytes().all(|b| (0x20..=0x7E).contains(&b));
    let padded = s.starts_with(' ') || s.ends_with(' ');
    if printable && !padded && !looks_encoded(s) {
        s.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", BASE64.encode(s.as_bytes()))
    }
}

/// `=?base64?…?=` in any letter case (the decoder is case-sensitive; encoding every
/// look-alike keeps a lenient peer from misreading a plain value)
fn looks_encoded(s: &str) -> bool {
    s.len() > PREFIX.len()
        && s.as_bytes()[..PREFIX.len()].eq_ignore_ascii_case(PREFIX.as_bytes())
        && s.ends_with(SUFFIX)
}

/// Why an `Mcp-Param-*` header value does not decode
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The part between `=?base64?` and `?=` is not strict, padded, standard base64
    #[error("invalid base64 in an encoded header value")]
    InvalidBase64,
    /// The decoded bytes are not UTF-8
    #[error("the base64 header value does not decode to UTF-8")]
    NotUtf8,
}

/// The argument value a server reads from an `Mcp-Param-*` header, to compare with the body
///
/// `=?base64?<b64>?=` decodes `<b64>` strictly (standard alphabet, `=` padding required, no
/// whitespace) to UTF-8; any other value, including `=?base64?…` without the closing `?=`,
/// is taken literally.
///
/// # Errors
/// [`HeaderValueError`] when a value in the encoded form does not decode; the server should
/// answer `-32020` (HTTP 400).
pub fn decode_header_value(value: &str) -> Result<String, HeaderValueError> {
    decoded(value).map(Cow::into_owned)
}

/// [`decode_header_value`], borrowing a value that is not encoded (the HTTP rules compare
/// `Mcp-Name` on every request)
pub(crate) fn decoded(value: &str) -> Result<Cow<'_, str>, HeaderValueError> {
    let encoded = value.len() >= PREFIX.len() + SUFFIX.len()
        && value.starts_with(PREFIX)
        && value.ends_with(SUFFIX);
    if !encoded {
        return Ok(Cow::Borrowed(value));
    }
    let inner = &value[PREFIX.len()..value.len() - SUFFIX.len()];
    let bytes = BASE64
        .decode(inner)
        .map_err(|_| HeaderValueError::InvalidBase64)?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| HeaderValueError::NotUtf8)
}
