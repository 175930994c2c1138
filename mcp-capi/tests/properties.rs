//! Property tests of the boundary: arbitrary bytes, arbitrary JSON-RPC messages and arbitrary
//! answers through `mcp_server_handle_bytes` / `mcp_client_handle_bytes` and every poll; no
//! call ever reports a panic, every status is one the header documents for the call, and
//! every poll loop ends
//!
//! The cases come from `PROPTEST_RNG_SEED` when set (scripts/test-all fixes it), so a run is
//! repeatable.

// The tests call the C functions, which are unsafe by nature (common/mod.rs wraps them).
#![allow(unsafe_code)]

mod common;

use common::{Client, Pair, Server};
use mcp_capi::mcp_status::{self, *};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// Any JSON value, a few levels deep
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z/_ ]{0,12}".prop_map(Value::from),
        Just(json!("2025-11-25")),
        Just(json!("2026-07-28")),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-zA-Z_]{1,8}".boxed(),
                    Just("name".to_owned()).boxed(),
                    Just("arguments".to_owned()).boxed(),
                    Just("_meta".to_owned()).boxed(),
                    Just("protocolVersion".to_owned()).boxed(),
                    Just("requestId".to_owned()).boxed(),
                    Just("progressToken".to_owned()).boxed(),
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "resources/list",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "tasks/get",
    "subscriptions/listen",
    "unknown/method",
];

/// One line a peer might send: a request, a notification, a response, or garbage
fn any_line() -> impl Strategy<Value = Vec<u8>> {
    let id = prop_oneof![
        (0i64..6).prop_map(Value::from),
        "[a-z0-9]{1,4}".prop_map(Value::from),
        Just(Value::Null),
    ];
    let method = prop::sample::select(METHODS);
    let message = (method, id, any_json(), 0u8..4).prop_map(|(method, id, params, shape)| {
        let mut m = json!({"jsonrpc": "2.0"});
        match shape {
            0 => {
                m["id"] = id;
                m["method"] = json!(method);
                m["params"] = params;
            }
            1 => {
                m["method"] = json!(method);
                m["params"] = params;
            }
            2 => {
                m["id"] = id;
                m["result"] = params;
            }
            _ => {
                m["id"] = id;
                m["error"] = json!({"code": -32000, "message": "x", "data": params});
            }
        }
        let mut line = m.to_string().into_bytes();
        line.push(b'\n');
        line
    });
    // The echo tool called (often valid), and cancellations of the ids in use
    let echo = (0i64..6, ".{0,10}").prop_map(|(id, text)| {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}, "_meta": {"progressToken": id}}});
        format!("{m}\n").into_bytes()
    });
    let cancel = (0i64..6).prop_map(|id| {
        let m = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
        format!("{m}\n").into_bytes()
    });
    prop_oneof![
        6 => message,
        2 => echo,
        1 => cancel,
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => any_json().prop_map(|v| { let mut l = v.to_string().into_bytes(); l.push(b'\n'); l }),
    ]
}

/// What the application does with each request event
#[derive(Debug, Clone)]
enum Answer {
    Result(String),
    Error(i64, String),
    Progress(f64, f64),
    Nothing,
}

fn any_answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        any_json().prop_map(|v| Answer::Result(v.to_string())),
        ".{0,16}".prop_map(Answer::Result),
        (any::<i64>(), ".{0,8}").prop_map(|(c, m)| Answer::Error(c, m)),
        (any::<f64>(), any::<f64>()).prop_map(|(p, t)| Answer::Progress(p, t)),
        Just(Answer::Nothing),
    ]
}

fn assert_documented(status: mcp_status, allowed: &[mcp_status]) {
    assert_ne!(status, MCP_ERR_PANIC, "{}", common::last_error());
    assert!(
        allowed.contains(&status),
        "{status:?}: {}",
        common::last_error()
    );
}

/// Drives a server's outputs the way a C loop does, answering requests with `answers`
fn drive_server(server: &mut Server, now: u64, answers: &[Answer]) {
    let mut next = answers.iter().cycle();
    for event in server.events() {
        assert!(event["kind"].is_string(), "{event}");
        if event["kind"] == "request" {
            let handle = event["request"].as_u64().expect("a request number");
            let status = match next.next().unwrap_or(&Answer::Nothing) {
                Answer::Result(json) => server.respond(now, handle, json),
                Answer::Error(code, message) => server.respond_error(now, handle, *code, message),
                Answer::Progress(p, t) => server.progress(now, handle, *p, *t, Some("p")),
                Answer::Nothing => MCP_OK,
            };
            assert_documented(status, &[MCP_OK, MCP_ERR_JSON, MCP_ERR_STATE]);
        }
    }
    let _ = server.transmit();
    if let Some(deadline) = server.deadline() {
        assert_documented(server.timeout(deadline.max(now)), &[MCP_OK]);
        let _ = server.events();
        let _ = server.transmit();
    }
    assert!(server.is_closed() == 0 || server.is_closed() == 1);
    assert!(server.wants_read() == 0 || server.wants_read() == 1);
}

fn drive_client(client: &mut Client, now: u64, answers: &[Answer]) {
    let mut next = answers.iter().cycle();
    for event in client.events() {
        assert!(event["kind"].is_string(), "{event}");
        let number = event["request"].as_u64().or(event["input"].as_u64());
        let status = match (
            event["kind"].as_str().unwrap_or_default(),
            next.next().unwrap_or(&Answer::Nothing),
            number,
        ) {
            ("request", Answer::Result(json), Some(n)) => client.respond(now, n, json),
            ("request", Answer::Error(code, m), Some(n)) => client.respond_error(now, n, *code, m),
            ("input_required", Answer::Result(json), Some(n)) => client.provide_input(now, n, json),
            ("input_required", Answer::Error(code, m), Some(n)) => {
                client.refuse_input(now, n, *code, m)
            }
            ("response" | "progress", Answer::Progress(..), Some(n)) => client.cancel(now, n),
            _ => MCP_OK,
        };
        assert_documented(status, &[MCP_OK, MCP_ERR_JSON, MCP_ERR_STATE]);
    }
    let _ = client.transmit();
    if let Some(deadline) = client.deadline() {
        assert_documented(client.timeout(deadline.max(now)), &[MCP_OK]);
        let _ = client.events();
        let _ = client.transmit();
    }
    assert!(client.is_closed() == 0 || client.is_closed() == 1);
}

proptest! {
    #![proptest_config(config())]

    /// Raw bytes in arbitrary chunks into a fresh server and a ready one
    #[test]
    fn arbitrary_bytes_into_a_server(
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..8),
        answers in prop::collection::vec(any_answer(), 1..4),
        ready in any::<bool>(),
        eof in any::<bool>(),
    ) {
        let mut pair = Pair::ready("2025-11-25", "");
        let mut fresh = Server::new(r#"{"name":"s","version":"1"}"#, 0);
        let server = if ready { &mut pair.server } else { &mut fresh };
        let mut now = 1_000;
        for chunk in &chunks {
            now += 7;
            assert_documented(server.bytes(now, chunk), &[MCP_OK]);
            drive_server(server, now, &answers);
        }
        if eof {
            assert_documented(server.eof(now), &[MCP_OK]);
            drive_server(server, now, &answers);
        }
    }

    /// Raw bytes into a client (waiting for its handshake, or ready)
    #[test]
    fn arbitrary_bytes_into_a_client(
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..8),
        answers in prop::collection::vec(any_answer(), 1..4),
        era in prop::sample::select(&["auto", "2025-11-25", "2026-07-28"][..]),
        ready in any::<bool>(),
    ) {
        let mut pair = Pair::ready(era, "");
        let mut fresh = Client::new(&format!(r#"{{"name":"c","version":"1","protocolVersion":"{era}"}}"#), 0);
        let client = if ready { &mut pair.client } else { &mut fresh };
        let mut now = 1_000;
        for chunk in &chunks {
            now += 11;
            assert_documented(client.bytes(now, chunk), &[MCP_OK]);
            drive_client(client, now, &answers);
        }
    }

    /// Messages shaped like JSON-RPC, cut anywhere, into a server in either era
    #[test]
    fn arbitrary_messages_into_a_server(
        lines in prop::collection::vec(any_line(), 1..12),
        cut in 1usize..64,
        answers in prop::collection::vec(any_answer(), 1..4),
        era in prop::sample::select(&["2025-11-25", "2026-07-28"][..]),
    ) {
        let mut pair = Pair::ready(era, "");
        let bytes: Vec<u8> = lines.concat();
        let mut now = pair.now;
        for chunk in bytes.chunks(cut) {
            now += 3;
            assert_documented(pair.server.bytes(now, chunk), &[MCP_OK]);
            drive_server(&mut pair.server, now, &answers);
        }
    }

    /// Messages shaped like JSON-RPC into a client in either era, with answers and input
    /// from the application
    #[test]
    fn arbitrary_messages_into_a_client(
        lines in prop::collection::vec(any_line(), 1..12),
        answers in prop::collection::vec(any_answer(), 1..4),
        era in prop::sample::select(&["2025-11-25", "2026-07-28"][..]),
        requests in prop::collection::vec((prop::sample::select(METHODS), any_json()), 0..4),
    ) {
        let extra = r#","capabilities":{"sampling":{},"elicitation":{},"roots":{}},"extraMethods":["unknown/method"]"#;
        let mut pair = Pair::ready(era, extra);
        let now = pair.now;
        for (method, params) in &requests {
            let params = params.to_string();
            match pair.client.request(now, method, Some(&params)) {
                Ok(_) => {}
                Err(status) => assert_documented(status, &[MCP_ERR_JSON, MCP_ERR_STATE, MCP_ERR_BLOCKED]),
            }
        }
        let _ = pair.client.transmit();
        for line in &lines {
            assert_documented(pair.client.bytes(now, line), &[MCP_OK]);
            drive_client(&mut pair.client, now, &answers);
        }
        // EOF closes the session once the server's requests are answered (some may stay
        // open: the application's answer was refused, or it gave none).
        assert_documented(pair.client.eof(now), &[MCP_OK]);
        drive_client(&mut pair.client, now, &answers);
    }
}
