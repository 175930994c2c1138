//! The JSON-RPC envelope decoder fed arbitrary text
//!
//! Oracle: nothing panics; a message that decodes, written again with the crate's encoders,
//! decodes to the same message (the raw params and results pass through unchanged); an
//! invalid request that is answerable yields an error reply that decodes as a response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::jsonrpc::{self, Decoded, ErrorId, Message};

fn reencode(m: &Message) -> Vec<u8> {
    let mut out = Vec::new();
    match m {
        Message::Request(r) => jsonrpc::write_request(&mut out, &r.id, &r.method, r.params.as_deref()),
        Message::Notification(n) => {
            jsonrpc::write_notification(&mut out, &n.method, n.params.as_deref());
        }
        Message::Response(r) => match (&r.outcome, &r.id) {
            (Ok(result), Some(id)) => jsonrpc::write_result(&mut out, id, result),
            (Err(e), Some(id)) => jsonrpc::write_error(&mut out, ErrorId::Known(id), e),
            (Err(e), None) => jsonrpc::write_error(&mut out, ErrorId::Null, e),
            (Ok(_), None) => return out,
        },
        _ => return out,
    }
    out
}

fn check(item: &Result<Message, jsonrpc::Invalid>) {
    match item {
        Ok(m) => {
            let text = reencode(m);
            if text.is_empty() {
                return;
            }
            let text = std::str::from_utf8(&text).expect("the encoders write UTF-8");
            match jsonrpc::decode(text) {
                Decoded::Single(Ok(again)) => assert_eq!(&again, m, "round trip of {text}"),
                other => panic!("{text} does not decode again: {other:?}"),
            }
        }
        Err(invalid) => {
            let mut out = Vec::new();
            let id = invalid.id.as_ref().map_or(ErrorId::Null, ErrorId::Known);
            jsonrpc::write_error(&mut out, id, &invalid.error);
            let text = std::str::from_utf8(&out).expect("UTF-8");
            assert!(
                matches!(jsonrpc::decode(text), Decoded::Single(Ok(Message::Response(_)))),
                "the error reply is a response: {text}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match jsonrpc::decode(text) {
        Decoded::Single(item) => check(&item),
        Decoded::Batch(items) => items.iter().for_each(check),
        _ => {}
    }
});
