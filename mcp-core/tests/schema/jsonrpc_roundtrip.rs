//! Encode then decode: examples and properties, plus "decode never panics"

use mcp_sansio::jsonrpc::{
    Decoded, ErrorId, ErrorObject, Invalid, Message, RequestId, code, decode, write_error,
    write_notification, write_request, write_result,
};
use proptest::prelude::*;
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

fn text(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get)
}

fn decode_one(bytes: &[u8]) -> Result<Message, Invalid> {
    let frame = std::str::from_utf8(bytes).expect("encoders write UTF-8");
    match decode(frame) {
        Decoded::Single(entry) => entry,
        other => panic!("not a single message: {other:?}"),
    }
}

/// Writes a decoded message back out, the way a proxy would pass it on.
fn encode(out: &mut Vec<u8>, message: &Message) {
    match message {
        Message::Request(r) => write_request(out, &r.id, &r.method, r.params.as_deref()),
        Message::Notification(n) => write_notification(out, &n.method, n.params.as_deref()),
        Message::Response(r) => match (&r.outcome, &r.id) {
            (Ok(result), Some(id)) => write_result(out, id, result),
            (Ok(_), None) => panic!("a result response always has an id"),
            (Err(error), Some(id)) => write_error(out, ErrorId::Known(id), error),
            (Err(error), None) => write_error(out, ErrorId::Omitted, error),
        },
        other => panic!("unknown message kind {other:?}"),
    }
}

#[test]
fn request_round_trip() {
    let mut out = Vec::new();
    let id = RequestId::from("req-1");
    write_request(&mut out, &id, "tools/call", Some(&raw(r#"{"name" : "x"}"#)));
    let Ok(Message::Request(r)) = decode_one(&out) else {
        panic!("not a request");
    };
    assert_eq!((r.id, r.method.as_str()), (id, "tools/call"));
    assert_eq!(text(r.params.as_deref()), Some(r#"{"name" : "x"}"#));
}

#[test]
fn notification_round_trip() {
    let mut out = Vec::new();
    write_notification(&mut out, "notifications/initialized", None);
    assert_eq!(
        out,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let Ok(Message::Notification(n)) = decode_one(&out) else {
        panic!("not a notification");
    };
    assert_eq!(n.method, "notifications/initialized");
    assert!(n.params.is_none());
}

#[test]
fn error_reply_to_an_invalid_message_decodes() {
    let Decoded::Single(Err(invalid)) = decode(r#"{"jsonrpc":"1.0","id":7,"method":"m"}"#) else {
        panic!("accepted an invalid message");
    };
    assert!(invalid.answerable);
    for (error_id, want_id) in [
        (
            ErrorId::Known(invalid.id.as_ref().unwrap()),
            Some(RequestId::from(7)),
        ),
        (ErrorId::Null, None),
        (ErrorId::Omitted, None),
    ] {
        let mut out = Vec::new();
        write_error(&mut out, error_id, &invalid.error);
        let Ok(Message::Response(r)) = decode_one(&out) else {
            panic!("not a response: {}", String::from_utf8_lossy(&out));
        };
        assert_eq!(r.id, want_id);
        assert_eq!(r.outcome.unwrap_err(), invalid.error);
    }
}

#[test]
fn error_data_round_trips_typed() {
    let error = ErrorObject::new(code::INVALID_PARAMS, "Invalid params: x")
        .with_data(&serde_json::json!({"field": "name", "n": [1, 2]}));
    let mut out = Vec::new();
    write_error(&mut out, ErrorId::Known(&RequestId::from(1)), &error);
    let Ok(Message::Response(r)) = decode_one(&out) else {
        panic!("not a response");
    };
    let decoded = r.outcome.unwrap_err();
    assert_eq!(decoded, error);
    let data: Value = decoded.data().unwrap().unwrap();
    assert_eq!(data["n"][1], 2);
}

#[test]
fn request_id_serde_round_trip() {
    for id in [
        RequestId::from(i64::MIN),
        RequestId::from(0),
        RequestId::from("\u{0}\"\\"),
    ] {
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<RequestId>(&json).unwrap(), id);
    }
    for bad in [
        "null",
        "1.5",
        "1.0",
        "true",
        "{}",
        "[]",
        "9223372036854775808",
    ] {
        assert!(serde_json::from_str::<RequestId>(bad).is_err(), "{bad}");
    }
}

// Strategies

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::from),
        any::<String>().prop_map(RequestId::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Box<RawValue>> {
    prop::collection::btree_map(any::<String>(), json_value(), 0..6).prop_map(|m| {
        to_raw_value(&Value::Object(m.into_iter().collect())).expect("a Value serializes")
    })
}

fn params() -> impl Strategy<Value = Option<Box<RawValue>>> {
    prop_oneof![
        Just(None),
        json_object().prop_map(Some),
        prop::collection::vec(json_value(), 0..4)
            .prop_map(|v| Some(to_raw_value(&v).expect("a Value serializes"))),
    ]
}

fn error_object() -> impl Strategy<Value = ErrorObject> {
    (
        any::<i64>(),
        any::<String>(),
        prop::option::of(json_value()),
    )
        .prop_map(|(c, m, data)| {
            let error = ErrorObject::new(c, m);
            match data {
                Some(data) => error.with_data(&data),
                None => error,
            }
        })
}

/// Text that looks a bit like JSON-RPC, to reach deeper into the decoder than random strings.
fn jsonish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("\"jsonrpc\"".to_owned()),
        Just("\"2.0\"".to_owned()),
        Just("\"id\"".to_owned()),
        Just("\"method\"".to_owned()),
        Just("\"params\"".to_owned()),
        Just("\"result\"".to_owned()),
        Just("\"error\"".to_owned()),
        Just("\"code\"".to_owned()),
        Just("\"message\"".to_owned()),
        Just("\"data\"".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just(" ".to_owned()),
        "-?[0-9]{1,25}(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,3})?",
        "\"([a-z/]|\\\\u[0-9a-fA-F]{4}|\\\\[nt\"\\\\])*\"",
    ];
    prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

/// The decoder's oracle for any input: no panic, and whatever it accepts re-encodes to an
/// equal message.
fn check_decode(frame: &str) {
    let entries = match decode(frame) {
        Decoded::Single(entry) => vec![entry],
        Decoded::Batch(entries) => {
            assert!(!entries.is_empty(), "empty batch decoded as a batch");
            entries
        }
        other => panic!("unknown frame kind {other:?}"),
    };
    for entry in entries {
        match entry {
            Ok(message) => {
                let mut out = Vec::new();
                encode(&mut out, &message);
                assert_eq!(decode_one(&out), Ok(message));
            }
            Err(invalid) => {
                assert!([code::PARSE_ERROR, code::INVALID_REQUEST].contains(&invalid.error.code));
                assert!(invalid.answerable || invalid.error.code == code::INVALID_REQUEST);
            }
        }
    }
}

proptest! {
    #![proptest_config(crate::common::beside_source(ProptestConfig::default()))]
    #[test]
    fn request_encodes_then_decodes(id in request_id(), method in any::<String>(), params in params()) {
        let mut out = Vec::new();
        write_request(&mut out, &id, &method, params.as_deref());
        let Ok(Message::Request(r)) = decode_one(&out) else {
            panic!("not a request: {}", String::from_utf8_lossy(&out));
        };
        prop_assert_eq!(r.id, id);
        prop_assert_eq!(r.method, method);
        prop_assert_eq!(text(r.params.as_deref()), text(params.as_deref()));
    }

    #[test]
    fn notification_encodes_then_decodes(method in any::<String>(), params in params()) {
        let mut out = Vec::new();
        write_notification(&mut out, &method, params.as_deref());
        let Ok(Message::Notification(n)) = decode_one(&out) else {
            panic!("not a notification: {}", String::from_utf8_lossy(&out));
        };
        prop_assert_eq!(n.method, method);
        prop_assert_eq!(text(n.params.as_deref()), text(params.as_deref()));
    }

    #[test]
    fn result_encodes_then_decodes(id in request_id(), result in json_value()) {
        let result = to_raw_value(&result).expect("a Value serializes");
        let mut out = Vec::new();
        write_result(&mut out, &id, &result);
        let Ok(Message::Response(r)) = decode_one(&out) else {
            panic!("not a response: {}", String::from_utf8_lossy(&out));
        };
        prop_assert_eq!(r.id, Some(id));
        prop_assert_eq!(r.outcome.map(|r| r.get().to_owned()), Ok(result.get().to_owned()));
    }

    #[test]
    fn error_encodes_then_decodes(id in prop::option::of(request_id()), null in any::<bool>(), error in error_object()) {
        let error_id = match (&id, null) {
            (Some(id), _) => ErrorId::Known(id),
            (None, true) => ErrorId::Null,
            (None, false) => ErrorId::Omitted,
        };
        let mut out = Vec::new();
        write_error(&mut out, error_id, &error);
        let Ok(Message::Response(r)) = decode_one(&out) else {
            panic!("not a response: {}", String::from_utf8_lossy(&out));
        };
        prop_assert_eq!(r.id, id);
        prop_assert_eq!(r.outcome.unwrap_err(), error);
    }

    #[test]
    fn batch_keeps_order(ids in prop::collection::vec(request_id(), 1..8)) {
        let mut out = b"[".to_vec();
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_request(&mut out, id, "m", None);
        }
        out.push(b']');
        let Decoded::Batch(entries) = decode(std::str::from_utf8(&out).unwrap()) else {
            panic!("not a batch");
        };
        let got: Vec<RequestId> = entries
            .into_iter()
            .map(|e| match e {
                Ok(Message::Request(r)) => r.id,
                other => panic!("not a request: {other:?}"),
            })
            .collect();
        prop_assert_eq!(got, ids);
    }

    #[test]
    fn arbitrary_strings_never_panic(frame in any::<String>()) {
        check_decode(&frame);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_decode(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn jsonish_text_never_panics(frame in jsonish()) {
        check_decode(&frame);
    }

    #[test]
    fn truncated_and_spliced_messages_never_panic(
        id in request_id(),
        params in params(),
        cut in any::<prop::sample::Index>(),
        insert in jsonish(),
    ) {
        let mut out = Vec::new();
        write_request(&mut out, &id, "tools/call", params.as_deref());
        let frame = String::from_utf8(out).unwrap();
        let mut at = cut.index(frame.len() + 1);
        while !frame.is_char_boundary(at) {
            at -= 1;
        }
        check_decode(&frame[..at]);
        check_decode(&format!("{}{}{}", &frame[..at], insert, &frame[at..]));
    }
}
