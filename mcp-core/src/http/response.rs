//! What the rules answer: complete responses, response heads, and JSON-RPC error bodies

use crate::jsonrpc::{self, ErrorId, ErrorObject, RequestId, code};

/// A whole HTTP response, for the binding to write as is
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpResponse {
    /// The status code
    pub status: u16,
    /// Header fields to send
    pub headers: Vec<(&'static str, String)>,
    /// The body (empty for 202 and most DELETE answers)
    pub body: Vec<u8>,
}

/// The start of a response whose body follows in pieces
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResponseHead {
    /// The status code
    pub status: u16,
    /// Header fields to send, including `Content-Type`
    pub headers: Vec<(&'static str, String)>,
}

impl HttpResponse {
    /// A response without a body
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A JSON-RPC error body with the given HTTP status; `id` is the request's id when it
    /// could be read (every 2026 error must echo it), else the body has `"id": null`
    pub fn json_error(status: u16, id: Option<&RequestId>, error: &ErrorObject) -> Self {
        let mut body = Vec::new();
        let id = id.map_or(ErrorId::Null, ErrorId::Known);
        jsonrpc::write_error(&mut body, id, error);
        Self {
            status,
            headers: vec![("Content-Type", "application/json".to_owned())],
            body,
        }
    }

    /// The JSON-RPC error code of the body, if it is an error body (for tests and logs)
    pub fn error_code(&self) -> Option<i64> {
        let value: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        value.get("error")?.get("code")?.as_i64()
    }

    /// Why the rules refused the request, as the JSON-RPC error body tells the client (for
    /// logs); `None` when the body is no error body
    ///
    /// A binding logs it with the status: the rules say why in the body they answer with,
    /// and nowhere else. They name what was wrong (a version, a host, a missing header),
    /// never the value of an `Authorization` header or a token.
    pub fn error_message(&self) -> Option<String> {
        let value: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        Some(value.get("error")?.get("message")?.as_str()?.to_owned())
    }

    /// The first value of a response header, by case-insensitive name
    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }

    pub(crate) fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

impl ResponseHead {
    /// The first value of a response header, by case-insensitive name
    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }
}

fn header_of<'a>(headers: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The HTTP status of a 2026 answer that is a JSON-RPC error (FIXTURES §2.1.2): method not
/// found is 404, request and parameter problems (including the MCP header, capability and
/// version errors) are 400, a server too busy to start the work
/// ([`SERVER_BUSY`](code::SERVER_BUSY)) is 503 (with `Retry-After`), anything else is a
/// normal 200 answer
pub(crate) fn modern_error_status(code: i64) -> u16 {
    match code {
        code::METHOD_NOT_FOUND => 404,
        code::SERVER_BUSY => 503,
        code::PARSE_ERROR
        | code::INVALID_REQUEST
        | code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}

/// `{"jsonrpc":"2.0","id":…,"method":…}`: the session writes requests with this prefix
pub(crate) fn is_request(message: &[u8]) -> bool {
    const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    message.starts_with(PREFIX) && message.windows(10).any(|w| w == br#","method":"#)
}

/// The error code of an error response, if it is one
///
/// A result the session wrote (`{"jsonrpc":"2.0","id":<id>,"result":…`) is known from its
/// first bytes; anything else is parsed.
pub(crate) fn error_code(message: &[u8]) -> Option<i64> {
    if let Some(rest) = message.strip_prefix(br#"{"jsonrpc":"2.0","id":"#.as_slice())
        && let Some(after) = past_id(rest)
        && after.starts_with(br#","result":"#)
    {
        return None;
    }
    parsed_error_code(message)
}

/// What follows the id a message starts with: a number, or a string (whose quotes inside
/// are escaped, so no member can seem to begin in it); `None` for anything else
fn past_id(rest: &[u8]) -> Option<&[u8]> {
    match rest.first()? {
        b'"' => {
            let mut i = 1;
            while i < rest.len() {
                match rest[i] {
                    b'\\' => i += 2,
                    b'"' => return rest.get(i + 1..),
                    _ => i += 1,
                }
            }
            None
        }
        b'-' | b'0'..=b'9' => {
            let end = rest
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))?;
            rest.get(end..)
        }
        _ => None,
    }
}

fn parsed_error_code(message: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct E {
        code: i64,
    }
    #[derive(serde::Deserialize)]
    struct R {
        error: Option<E>,
    }
    let r: R = serde_json::from_slice(message).ok()?;
    r.error.map(|e| e.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_read_from_the_first_bytes_agree_with_a_parse() {
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"result":{"error":{"code":5}}}"#,
            r#"{"jsonrpc":"2.0","id":"a,\"result\":","error":{"code":-32602,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":"x\\","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}"#,
            r#"{"id":1,"jsonrpc":"2.0","error":{"code":-1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":"unterminated"#,
            "not json",
        ] {
            assert_eq!(
                error_code(message.as_bytes()),
                parsed_error_code(message.as_bytes()),
                "{message}"
            );
        }
        assert_eq!(
            error_code(
                br#"{"jsonrpc":"2.0","id":"a,\"result\":","error":{"code":-32602,"message":"m"}}"#
            ),
            Some(-32602)
        );
    }
}
