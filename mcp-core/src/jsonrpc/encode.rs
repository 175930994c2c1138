//! Encoding messages as compact JSON

use serde::Serialize;
use serde_json::value::RawValue;

use super::error::ErrorObject;
use super::id::RequestId;

/// How to write the id of an error response whose request id is unknown
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorId<'a> {
    /// The id of the request being answered
    Known(&'a RequestId),
    /// "id": null (JSON-RPC 2.0; MCP schemas before 2025-11-25)
    Null,
    /// no id member (MCP 2025-11-25 and later schemas)
    Omitted,
}

/// Appends a request: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`.
///
/// `params` is copied byte for byte; the member is left out when `None`.
pub fn write_request(out: &mut Vec<u8>, id: &RequestId, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(out, id);
    write_call(out, method, params);
}

/// Appends a notification: `{"jsonrpc":"2.0","method":..,"params":..}`.
///
/// `params` is copied byte for byte; the member is left out when `None`.
pub fn write_notification(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    write_call(out, method, params);
}

/// Appends a result response: `{"jsonrpc":"2.0","id":..,"result":..}`.
///
/// `result` is copied byte for byte.
pub fn write_result(out: &mut Vec<u8>, id: &RequestId, result: &RawValue) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(out, id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.get().as_bytes());
    out.push(b'}');
}

/// Appends an error response: `{"jsonrpc":"2.0","id":..,"error":{"code":..,"message":..,"data":..}}`.
///
/// With [`ErrorId::Omitted`] there is no `id` member; `data` is copied byte for byte and left
/// out when `None`.
pub fn write_error(out: &mut Vec<u8>, id: ErrorId<'_>, error: &ErrorObject) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","#);
    match id {
        ErrorId::Known(id) => {
            out.extend_from_slice(br#""id":"#);
            write_json(out, id);
            out.push(b',');
        }
        ErrorId::Null => out.extend_from_slice(br#""id":null,"#),
        ErrorId::Omitted => {}
    }
    out.extend_from_slice(br#""error":{"code":"#);
    write_json(out, &error.code);
    out.extend_from_slice(br#","message":"#);
    write_json(out, error.message.as_str());
    if let Some(data) = &error.data {
        out.extend_from_slice(br#","data":"#);
        out.extend_from_slice(data.get().as_bytes());
    }
    out.extend_from_slice(b"}}");
}

/// The `"method":..,"params":..}` tail shared by requests and notifications.
fn write_call(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(br#","method":"#);
    write_json(out, method);
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        out.extend_from_slice(params.get().as_bytes());
    }
    out.push(b'}');
}

/// Appends a string, an integer or an id as compact JSON.
fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value)
        .expect("strings and integers always serialize, and writing to a Vec cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> &RawValue {
        serde_json::from_str(s).unwrap()
    }

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = b"prefix ".to_vec();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn member_order_and_appending() {
        let id = RequestId::from(1);
        assert_eq!(
            text(|o| write_request(o, &id, "a\"b", Some(raw(r#"{"x" : 1}"#)))),
            r#"prefix {"jsonrpc":"2.0","id":1,"method":"a\"b","params":{"x" : 1}}"#
        );
        assert_eq!(
            text(|o| write_request(o, &"s".into(), "m", None)),
            r#"prefix {"jsonrpc":"2.0","id":"s","method":"m"}"#
        );
        assert_eq!(
            text(|o| write_notification(o, "m", Some(raw("[]")))),
            r#"prefix {"jsonrpc":"2.0","method":"m","params":[]}"#
        );
        assert_eq!(
            text(|o| write_result(o, &id, raw("{}"))),
            r#"prefix {"jsonrpc":"2.0","id":1,"result":{}}"#
        );
    }

    #[test]
    fn error_ids() {
        let e = ErrorObject::new(-32600, "bad\n").with_data("d");
        assert_eq!(
            text(|o| write_error(o, ErrorId::Known(&RequestId::from(2)), &e)),
            r#"prefix {"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"bad\n","data":"d"}}"#
        );
        let e = ErrorObject::new(1, "m");
        assert_eq!(
            text(|o| write_error(o, ErrorId::Null, &e)),
            r#"prefix {"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#
        );
        assert_eq!(
            text(|o| write_error(o, ErrorId::Omitted, &e)),
            r#"prefix {"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#
        );
    }
}
