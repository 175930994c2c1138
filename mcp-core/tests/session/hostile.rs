//! The hostile-input table at the core, on a byte stream (stdio): each bad input with the
//! outcome it must get, fed whole, byte by byte and at random splits; after each, a `ping`
//! proves the session still works. The HTTP table (the same kinds of input through the
//! Streamable HTTP rules and every binding's server) is `mcp-interop`'s `hostile_http`.

use crate::common;

use std::sync::Arc;

use common::origin;
use mcp_sansio::{Limits, ServerConfig, ServerEvent, ServerSession};
use serde_json::{Value, json};

/// What a case must get back
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// One error reply with this code; `id` is the echoed id (`Value::Null` when unknown)
    Error(i64, &'static str),
    /// A batch of this many error replies, each with the code
    ErrorBatch(usize, i64),
    /// Nothing is written, nothing is reported (dropped and counted)
    Nothing,
    /// An event the application sees; no automatic reply
    Request,
}

/// Which session the input goes to
#[derive(Debug, Clone, Copy, PartialEq)]
enum At {
    /// A server that has seen nothing yet
    Fresh,
    /// A server after a 2025-11-25 handshake
    Legacy,
    /// A server after a 2025-03-26 handshake (batches allowed)
    Batches,
}

const MAX: usize = 4096;

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}})
}

fn table() -> Vec<(&'static str, At, Vec<u8>, Expect)> {
    let line = |v: Value| v.to_string().into_bytes();
    vec![
        ("malformed JSON", At::Legacy, b"{\"jsonrpc\":\"2.0\",\"id\":1,".to_vec(), Expect::Error(-32700, "null")),
        ("not JSON at all", At::Fresh, b"hello".to_vec(), Expect::Error(-32700, "omitted")),
        ("invalid UTF-8", At::Legacy, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}".to_vec(), Expect::Error(-32700, "null")),
        ("wrong jsonrpc version", At::Legacy, line(json!({"jsonrpc": "1.0", "id": 5, "method": "ping"})), Expect::Error(-32600, "5")),
        ("missing jsonrpc", At::Legacy, line(json!({"id": 5, "method": "ping"})), Expect::Error(-32600, "5")),
        ("null id", At::Legacy, line(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})), Expect::Error(-32600, "null")),
        ("fractional id", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})), Expect::Error(-32600, "null")),
        ("object id", At::Legacy, line(json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"})), Expect::Error(-32600, "null")),
        ("a message over the size limit", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x".repeat(MAX)}})), Expect::Error(-32600, "1")),
        ("deep nesting in params", At::Legacy, format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"t","arguments":{}}}}}"#, "[".repeat(1000) + &"]".repeat(1000)).into_bytes(), Expect::Request),
        ("deep nesting of the message", At::Legacy, ("[".repeat(1500) + &"]".repeat(1500)).into_bytes(), Expect::Error(-32600, "null")),
        ("unknown method", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 6, "method": "x/unknown"})), Expect::Error(-32601, "6")),
        ("a request before initialize", At::Fresh, line(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})), Expect::Error(-32602, "7")),
        ("initialize twice", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})), Expect::Error(-32600, "8")),
        ("a modern request with an unknown version", At::Fresh, line(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}})), Expect::Error(-32022, "10")),
        ("a modern request with _meta not an object", At::Fresh, line(json!({"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": "x"}})), Expect::Error(-32602, "11")),
        ("_meta an array (the spec's _meta is an object)", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {"name": "t", "_meta": ["tok"]}})), Expect::Error(-32602, "14")),
        ("a modern request with _meta an array", At::Fresh, line(json!({"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"_meta": []}})), Expect::Error(-32602, "15")),
        ("_meta null (none)", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 16, "method": "tools/call", "params": {"name": "t", "_meta": null}})), Expect::Request),
        ("a duplicate id while the first is in flight", At::Legacy, [line(json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "t"}})), b"\n".to_vec(), line(json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "t"}}))].concat(), Expect::Error(-32600, "12")),
        ("a response to nothing", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 99, "result": {}})), Expect::Nothing),
        ("an error response to nothing", At::Legacy, line(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "x"}})), Expect::Nothing),
        ("a cancellation of nothing", At::Legacy, line(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})), Expect::Nothing),
        ("progress for nothing", At::Legacy, line(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 3, "progress": 1}})), Expect::Nothing),
        ("a batch where batches are not allowed", At::Legacy, line(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])), Expect::Error(-32600, "null")),
        ("an empty batch", At::Batches, b"[]".to_vec(), Expect::Error(-32600, "null")),
        ("a batch of invalid entries", At::Batches, b"[1,2]".to_vec(), Expect::ErrorBatch(2, -32600)),
        ("a batch over the limit", At::Batches, line(Value::Array((0..20).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect())), Expect::Error(-32600, "null")),
        ("a modern request to a legacy session", At::Legacy, line(json!({"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": {"_meta": meta()}})), Expect::Request),
    ]
}

fn server(at: At) -> (ServerSession, ServerConfig) {
    let mut config = ServerConfig::new(mcp_sansio::Implementation::new("hostile", "1"));
    config.capabilities = json!({"tools": {}});
    let mut limits = Limits::default();
    limits.max_message_size = MAX;
    limits.max_batch_len = 8;
    config.limits = limits;
    let mut s = ServerSession::new(Arc::new(config.clone()), origin());
    let version = match at {
        At::Fresh => return (s, config),
        At::Legacy => "2025-11-25",
        At::Batches => "2025-03-26",
    };
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    s.handle_bytes(origin(), format!("{init}\n").as_bytes());
    s.handle_bytes(
        origin(),
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
    );
    drain(&mut s);
    (s, config)
}

/// Everything written and every event
fn drain(s: &mut ServerSession) -> (Vec<Value>, Vec<ServerEvent>) {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while s.poll_transmit(&mut buf).is_some() {}
    for l in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        out.push(serde_json::from_slice(l).expect("the session writes JSON"));
    }
    let mut events = Vec::new();
    while let Some(e) = s.poll_event() {
        events.push(e);
    }
    (out, events)
}

fn check(name: &str, expect: Expect, out: &[Value], events: &[ServerEvent]) {
    match expect {
        Expect::Error(code, id) => {
            let last = out.last().unwrap_or_else(|| panic!("{name}: no reply"));
            assert_eq!(last["error"]["code"], code, "{name}: {last}");
            match id {
                "omitted" => assert!(last.get("id").is_none_or(Value::is_null), "{name}: {last}"),
                "null" => assert!(last["id"].is_null(), "{name}: {last}"),
                n => assert_eq!(last["id"].to_string(), n, "{name}: {last}"),
            }
        }
        Expect::ErrorBatch(n, code) => {
            let batch = out
                .last()
                .and_then(Value::as_array)
                .unwrap_or_else(|| panic!("{name}: {out:?}"));
            assert_eq!(batch.len(), n, "{name}");
            assert!(
                batch.iter().all(|e| e["error"]["code"] == code),
                "{name}: {batch:?}"
            );
        }
        Expect::Nothing => {
            assert!(out.is_empty(), "{name}: {out:?}");
            assert!(events.is_empty(), "{name}: {events:?}");
        }
        Expect::Request => {
            assert!(
                out.iter().all(|m| m.get("error").is_none()),
                "{name}: {out:?}"
            );
            assert!(
                events.iter().any(|e| matches!(e, ServerEvent::Request(_))),
                "{name}: {events:?}"
            );
        }
    }
}

#[test]
fn every_bad_input_gets_its_outcome_and_the_session_goes_on() {
    for (name, at, input, expect) in table() {
        for cut in [0usize, 1, 7] {
            let (mut s, _) = server(at);
            let mut bytes = input.clone();
            bytes.push(b'\n');
            if cut == 0 {
                s.handle_bytes(origin(), &bytes);
            } else {
                for chunk in bytes.chunks(cut) {
                    s.handle_bytes(origin(), chunk);
                }
            }
            let (out, events) = drain(&mut s);
            check(name, expect, &out, &events);
            assert!(!s.is_closed(), "{name}: the session closed");
            // Still working: a ping (after initialize) is answered.
            if at != At::Fresh {
                s.handle_bytes(
                    origin(),
                    b"{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"ping\"}\n",
                );
                let (out, _) = drain(&mut s);
                assert!(
                    out.iter()
                        .any(|m| m["id"] == "probe" && m.get("result").is_some()),
                    "{name}: no answer to the probe: {out:?}"
                );
            }
        }
    }
}

#[test]
fn floods_keep_every_queue_bounded() {
    type Line = fn(usize) -> String;
    let floods: [(&str, Line); 3] = [
        ("requests", |i| {
            format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"t"}}}}"#)
        }),
        ("progress", |i| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":{i}}}}}"#
            )
        }),
        ("cancellations", |i| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{i}}}}}"#
            )
        }),
    ];
    for (name, line) in floods {
        let (mut s, config) = server(At::Legacy);
        let limits = &config.limits;
        // The application never answers and never drains: the worst caller.
        for i in 0..20_000 {
            s.handle_bytes(origin(), format!("{}\n", line(i)).as_bytes());
            assert!(
                s.queued_events() <= 2 * limits.max_queued_events,
                "{name}: {} events",
                s.queued_events()
            );
            assert!(
                s.queued_bytes() <= limits.max_queued_bytes + limits.max_message_size,
                "{name}: {} bytes",
                s.queued_bytes()
            );
            assert!(
                s.inbound_in_flight() <= limits.max_in_flight_inbound + limits.max_batch_len,
                "{name}"
            );
        }
    }
}
