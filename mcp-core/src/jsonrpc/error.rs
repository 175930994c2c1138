//! Error objects and error codes

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// Standard and MCP error codes
pub mod code {
    /// The frame is not valid JSON (JSON-RPC 2.0).
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid request object (JSON-RPC 2.0).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available (JSON-RPC 2.0).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method parameters are invalid (JSON-RPC 2.0).
    pub const INVALID_PARAMS: i64 = -32602;
    /// An internal error of the receiver (JSON-RPC 2.0).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The HTTP headers do not match the request body, or required headers are missing or
    /// malformed (MCP 2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The server requires a client capability the request did not declare (MCP 2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The request's protocol version is not supported by the server (MCP 2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// The server cannot start the request's work now (every handler it may run at once
    /// is taken): retry later. Implementation-defined (this library); on the 2026 HTTP wire
    /// the answer is `503 Service Unavailable` with `Retry-After`.
    pub const SERVER_BUSY: i64 = -32004;
}

/// A JSON-RPC error object
///
/// `data` is kept as raw JSON text; two error objects are equal when their codes, messages and
/// data texts are equal.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{message} (code {code})")]
pub struct ErrorObject {
    /// The error code; see [`code`] for the standard ones
    pub code: i64,
    /// A short description of the error, one sentence
    pub message: String,
    /// Additional information defined by the sender, as raw JSON
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl ErrorObject {
    /// An error object with this code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`, serialized to JSON.
    ///
    /// If `data` fails to serialize (possible only for types whose `Serialize` impl errors,
    /// such as maps with non-string keys) the error object is returned without data; use
    /// [`try_with_data`](Self::try_with_data) to see that failure.
    #[must_use]
    pub fn with_data<T: Serialize + ?Sized>(self, data: &T) -> Self {
        match serde_json::value::to_raw_value(data) {
            Ok(raw) => Self {
                data: Some(raw),
                ..self
            },
            Err(_) => self,
        }
    }

    /// Attaches `data`, serialized to JSON, or fails when it does not serialize.
    pub fn try_with_data<T: Serialize + ?Sized>(self, data: &T) -> Result<Self, serde_json::Error> {
        Ok(Self {
            data: Some(serde_json::value::to_raw_value(data)?),
            ..self
        })
    }

    /// [`PARSE_ERROR`](code::PARSE_ERROR): `"Parse error: <detail>"`.
    pub(crate) fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(code::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// [`INVALID_REQUEST`](code::INVALID_REQUEST): `"Invalid request: <detail>"`.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_REQUEST, format!("Invalid request: {detail}"))
    }

    /// [`METHOD_NOT_FOUND`](code::METHOD_NOT_FOUND): `"Method not found: <method>"`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// [`INVALID_PARAMS`](code::INVALID_PARAMS): `"Invalid params: <detail>"`.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// [`SERVER_BUSY`](code::SERVER_BUSY): `"Server busy: <detail>"`, the answer to a
    /// request whose work the server cannot start now (retry later).
    pub fn server_busy(detail: impl fmt::Display) -> Self {
        Self::new(code::SERVER_BUSY, format!("Server busy: {detail}"))
    }

    /// [`INTERNAL_ERROR`](code::INTERNAL_ERROR): `"Internal error: <detail>"`.
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        Self::new(code::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }

    /// The data as a typed value: `None` when there is no data, else the result of
    /// deserializing it.
    pub fn data<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        self.data
            .as_deref()
            .map(|raw| serde_json::from_str(raw.get()))
    }
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_deref().map(RawValue::get) == other.data.as_deref().map(RawValue::get)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_and_display() {
        let e = ErrorObject::method_not_found("tools/call");
        assert_eq!(e.code, code::METHOD_NOT_FOUND);
        assert_eq!(e.to_string(), "Method not found: tools/call (code -32601)");
        assert_eq!(ErrorObject::parse_error("x").message, "Parse error: x");
        assert_eq!(ErrorObject::invalid_request("x").code, -32600);
        assert_eq!(
            ErrorObject::invalid_params("x").message,
            "Invalid params: x"
        );
        assert_eq!(ErrorObject::internal_error("x").code, -32603);
    }

    #[test]
    fn data_round_trips_and_compares_by_text() {
        let e = ErrorObject::new(-1, "m").with_data(&[1, 2]);
        assert_eq!(e.data.as_deref().map(RawValue::get), Some("[1,2]"));
        assert_eq!(e.data::<Vec<i32>>().unwrap().unwrap(), vec![1, 2]);
        assert!(e.data::<String>().unwrap().is_err());
        assert!(ErrorObject::new(-1, "m").data::<i32>().is_none());
        assert_eq!(e, ErrorObject::new(-1, "m").with_data(&[1, 2]));
        assert_ne!(e, ErrorObject::new(-1, "m"));
    }

    #[test]
    fn unserializable_data_is_left_out() {
        let map = std::collections::BTreeMap::from([((1, 2), 3)]);
        assert_eq!(
            ErrorObject::new(-1, "m")
                .with_data(&map)
                .data
                .map(|d| d.to_string()),
            None
        );
        assert!(ErrorObject::new(-1, "m").try_with_data(&map).is_err());
    }
}
