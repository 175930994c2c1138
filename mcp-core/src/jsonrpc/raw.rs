//! Reading scalars out of raw JSON text without a second parse where possible

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// Deserializes a member that is present into `Some`, even when its value is `null`.
///
/// `Option<&RawValue>` alone turns `"id": null` into `None`; with this helper and
/// `#[serde(default)]`, `None` means absent and `Some("null")` means null.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// The kind of a JSON value, read from the first byte of its (valid) text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// Classifies valid JSON text; leading whitespace is skipped.
    pub(crate) fn of(json: &str) -> Option<Self> {
        match json
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .as_bytes()
            .first()?
        {
            b'n' => Some(Self::Null),
            b't' | b'f' => Some(Self::Bool),
            b'-' | b'0'..=b'9' => Some(Self::Number),
            b'"' => Some(Self::String),
            b'[' => Some(Self::Array),
            b'{' => Some(Self::Object),
            _ => None,
        }
    }

    /// The kind with its article, for error messages ("not a number").
    pub(crate) fn with_article(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool => "a boolean",
            Self::Number => "a number",
            Self::String => "a string",
            Self::Array => "an array",
            Self::Object => "an object",
        }
    }
}

/// The contents of a raw JSON string value, or `None` when `raw` is not a string.
///
/// Strings without escapes are borrowed straight from the text; only escaped strings are parsed.
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        // Valid JSON string text without backslashes holds its contents verbatim.
        Some(Cow::Borrowed(inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> &RawValue {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn string_borrows_plain_and_unescapes_escaped() {
        assert!(matches!(
            string(raw(r#""abc""#)),
            Some(Cow::Borrowed("abc"))
        ));
        assert_eq!(string(raw(r#""a\u0062\n""#)).as_deref(), Some("ab\n"));
        assert_eq!(string(raw(r#""""#)).as_deref(), Some(""));
        assert_eq!(string(raw("1")), None);
        assert_eq!(string(raw("null")), None);
    }

    #[test]
    fn kind_reads_first_byte() {
        assert_eq!(Kind::of(" {}"), Some(Kind::Object));
        assert_eq!(Kind::of("-1"), Some(Kind::Number));
        assert_eq!(Kind::of("false"), Some(Kind::Bool));
        assert_eq!(Kind::of(""), None);
    }
}
