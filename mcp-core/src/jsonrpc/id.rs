//! Request ids

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::raw::{self, Kind};

/// A JSON-RPC request id: a string or an integer. null and fractional numbers are invalid.
///
/// MCP forbids `null` ids, and numbers are accepted only when written as integers that fit
/// in an `i64` (`1.0`, `1e3` and `-0` are rejected), so every id survives a round trip unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, such as `7`
    Number(i64),
    /// A string id, such as `"abc"`
    String(Box<str>),
}

impl RequestId {
    /// Reads an id from raw JSON text, the way [`decode`](super::decode) does.
    pub(crate) fn from_raw(raw: &RawValue) -> Result<Self, IdError> {
        let text = raw.get();
        match Kind::of(text) {
            Some(Kind::String) => raw::string(raw)
                .map(|s| Self::String(s.into()))
                .ok_or(IdError::UnpairedSurrogate),
            // A byte scan: the text is short, and a `char` set's searcher costs more.
            Some(Kind::Number) if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
                Err(IdError::Fractional)
            }
            // serde_json reads `-0` as a float; reject it here too so both paths agree.
            Some(Kind::Number) if text == "-0" => Err(IdError::NegativeZero),
            Some(Kind::Number) => text
                .parse::<i64>()
                .map(Self::Number)
                .map_err(|_| IdError::OutOfRange),
            Some(kind) => Err(IdError::Not(kind)),
            None => Err(IdError::Not(Kind::Null)),
        }
    }
}

/// Why a JSON value is not a valid request id
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdError {
    /// Not a string or a number at all
    Not(Kind),
    /// A number with a fraction or an exponent
    Fractional,
    /// An integer outside the `i64` range
    OutOfRange,
    /// `-0`, which JSON parsers read as a float
    NegativeZero,
    /// A string with an unpaired surrogate escape such as `"\ud800"`
    UnpairedSurrogate,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("id must be a string or an integer")?;
        match self {
            Self::Not(kind) => write!(f, ", not {}", kind.with_article()),
            Self::Fractional => f.write_str(", not a number with a fraction or an exponent"),
            Self::OutOfRange => f.write_str(" between -2^63 and 2^63-1"),
            Self::NegativeZero => f.write_str(", not -0"),
            Self::UnpairedSurrogate => {
                f.write_str(", and this string has an unpaired surrogate escape")
            }
        }
    }
}

impl fmt::Display for RequestId {
    /// Numbers are written plain (`7`), strings as quoted JSON (`"abc"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => {
                let quoted = serde_json::to_string(&**s).map_err(|_| fmt::Error)?;
                f.write_str(&quoted)
            }
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s.into_boxed_str())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => serializer.serialize_i64(*n),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl Visitor<'_> for IdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer between -2^63 and 2^63-1")
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<RequestId, E> {
        i64::try_from(n)
            .map(RequestId::Number)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<RequestId, E> {
        Ok(RequestId::from(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<RequestId, E> {
        Ok(RequestId::from(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_raw(s: &str) -> Result<RequestId, IdError> {
        RequestId::from_raw(serde_json::from_str(s).unwrap())
    }

    #[test]
    fn raw_ids() {
        assert_eq!(from_raw("7"), Ok(RequestId::Number(7)));
        assert_eq!(from_raw("-0"), Err(IdError::NegativeZero));
        assert_eq!(from_raw("0"), Ok(RequestId::Number(0)));
        assert_eq!(
            from_raw("-9223372036854775808"),
            Ok(RequestId::Number(i64::MIN))
        );
        assert_eq!(from_raw("9223372036854775808"), Err(IdError::OutOfRange));
        assert_eq!(from_raw("1.0"), Err(IdError::Fractional));
        assert_eq!(from_raw("1e3"), Err(IdError::Fractional));
        assert_eq!(from_raw(r#""a\"b""#), Ok(RequestId::from("a\"b")));
        assert_eq!(from_raw(r#""\ud800""#), Err(IdError::UnpairedSurrogate));
        assert_eq!(from_raw("null"), Err(IdError::Not(Kind::Null)));
        assert_eq!(from_raw("true"), Err(IdError::Not(Kind::Bool)));
        assert_eq!(from_raw("[]"), Err(IdError::Not(Kind::Array)));
        assert_eq!(from_raw("{}"), Err(IdError::Not(Kind::Object)));
    }

    #[test]
    fn serde_agrees_with_raw() {
        for text in [
            "7",
            "-0",
            "1.0",
            "1.5",
            "1e3",
            "null",
            "true",
            "{}",
            "[]",
            r#""x""#,
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            r#""\ud800""#,
        ] {
            let by_serde = serde_json::from_str::<RequestId>(text).ok();
            assert_eq!(by_serde, from_raw(text).ok(), "{text}");
        }
    }

    #[test]
    fn display_and_serialize() {
        assert_eq!(RequestId::from(7).to_string(), "7");
        assert_eq!(RequestId::from("a\"b").to_string(), r#""a\"b""#);
        assert_eq!(
            serde_json::to_string(&RequestId::from("x")).unwrap(),
            r#""x""#
        );
        assert_eq!(serde_json::to_string(&RequestId::from(-3)).unwrap(), "-3");
    }
}
