//! Hostile input and limits: malformed and foreign messages, oversize lines, backpressure,
//! queue limits, batch limits, and chunking invariance. After each, the session keeps working.

use crate::common;
use crate::wire;

use std::time::Duration;

use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::schema::{InputResponse, InputResponses, ListRootsResult};
use mcp_sansio::session::InputId;
use mcp_sansio::session::role::{Client, Server};
use mcp_sansio::testing::Side;
use mcp_sansio::testing::{Chunking, Pair};
use mcp_sansio::{
    CallError, ClientEvent, CloseReason, EraMode, ErrorObject, Limits, Progress, ProtocolVersion,
    RequestOptions, SendError, ServerEvent,
};
use wire::{
    Raw, assert_error, assert_error_no_id, client_config_with, initialize, live_input_of,
    modern_request, request_of, server_config_with,
};

// --- sessions and "still working" probes --------------------------------------------------

fn server(limits: Limits) -> Raw<Server> {
    Raw::server(server_config_with(limits), origin())
}

/// A legacy (2025-11-25) client after a hand-answered handshake
fn client(limits: Limits) -> Raw<Client> {
    let mut c = Raw::client(
        client_config_with(EraMode::Legacy(ProtocolVersion::V2025_11_25), limits),
        origin(),
    );
    let init = c.one_out();
    assert_eq!(init["method"], "initialize");
    c.feed(&json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "raw-server", "version": "0.1"},
    }}));
    assert!(matches!(c.events().as_slice(), [ClientEvent::Ready { .. }]));
    assert_eq!(c.one_out()["method"], "notifications/initialized");
    c
}

/// A fresh server still serves a modern request end to end
fn server_still_works(s: &mut Raw<Server>) {
    let id = json!("probe");
    s.feed(&modern_request(id.clone(), "tools/list", json!({})));
    let events = s.events();
    let [ServerEvent::Request(r)] = <[ServerEvent; 1]>::try_from(events).expect("one request")
    else {
        panic!("not a request")
    };
    assert_eq!(r.method, "tools/list");
    s.session
        .respond_raw(r.responder, &raw(json!({"tools": []})))
        .unwrap();
    let out = s.one_out();
    assert_eq!(out["id"], id);
    assert_eq!(out["result"]["tools"], json!([]));
    assert!(!s.session.is_closed());
}

/// A legacy client still answers a ping and still matches a response to its request
fn client_still_works(c: &mut Raw<Client>) {
    c.feed_line(r#"{"jsonrpc":"2.0","id":"probe-ping","method":"ping"}"#);
    let pong = c.one_out();
    assert_eq!(pong["id"], "probe-ping");
    assert_eq!(pong["result"], json!({}));
    let id = c
        .session
        .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let sent = c.one_out();
    assert_eq!(sent["id"], id.wire_id());
    c.feed(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"tools": []}}));
    let events = c.events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::Response { id: got, outcome: Ok(_) }] if *got == id),
        "{events:?}"
    );
    assert!(!c.session.is_closed());
}

fn small(max_message_size: usize) -> Limits {
    let mut l = Limits::default();
    l.max_message_size = max_message_size;
    l
}

// --- 7. hostile input -----------------------------------------------------------------------

#[test]
fn malformed_json_is_a_parse_error() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
        "not json",
        "{]",
        r#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,
        "[1,",
    ];
    let mut s = server(Limits::default());
    let mut c = client(Limits::default());
    for (i, line) in lines.iter().enumerate() {
        s.feed_line(line);
        assert_error_no_id(&s.one_out(), -32700);
        c.feed_line(line);
        assert_error_no_id(&c.one_out(), -32700);
        assert_eq!(s.session.stats().invalid_messages, i as u64 + 1);
        assert_eq!(c.session.stats().invalid_messages, i as u64 + 1);
    }
    assert!(s.events().is_empty());
    assert!(c.events().is_empty());
    server_still_works(&mut s);
    client_still_works(&mut c);
}

#[test]
fn valid_json_that_is_not_a_message_is_an_invalid_request() {
    let lines = [
        "42",
        "{}",
        "\"text\"",
        "null",
        "[]",
        "true",
        r#"{"jsonrpc":"1.0","method":"tools/list"}"#,
        r#"{"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","method":7}"#,
    ];
    let mut s = server(Limits::default());
    let mut c = client(Limits::default());
    for line in lines {
        s.feed_line(line);
        assert_error_no_id(&s.one_out(), -32600);
        c.feed_line(line);
        assert_error_no_id(&c.one_out(), -32600);
    }
    // With a readable id, the error echoes it.
    let with_id = [
        (
            json!(5),
            r#"{"jsonrpc":"1.0","id":5,"method":"tools/list"}"#,
        ),
        (json!(3), r#"{"id":3,"method":"tools/list"}"#),
        (json!("s"), r#"{"jsonrpc":"2.0","id":"s","method":7}"#),
        (json!(6), r#"{"jsonrpc":"2.0","id":6}"#),
    ];
    for (id, line) in with_id {
        s.feed_line(line);
        assert_error(&s.one_out(), &id, -32600);
        c.feed_line(line);
        assert_error(&c.one_out(), &id, -32600);
    }
    assert!(s.events().is_empty());
    assert!(c.events().is_empty());
    server_still_works(&mut s);
    client_still_works(&mut c);
}

/// A valid modern request padded to `len` bytes
fn padded_request(id: u64, len: usize) -> String {
    let mut v = modern_request(json!(id), "tools/call", json!({"name": "t", "pad": ""}));
    let base = v.to_string().len();
    v["params"]["pad"] = json!("x".repeat(len.saturating_sub(base)));
    let s = v.to_string();
    assert_eq!(s.len(), len.max(base));
    s
}

#[test]
fn an_oversize_line_gets_an_error_and_the_next_line_is_processed() {
    for chunk in [usize::MAX, 7, 1] {
        let mut s = server(small(400));
        let mut input = padded_request(1, 2000).into_bytes();
        input.push(b'\n');
        input.extend_from_slice(padded_request(2, 390).as_bytes());
        input.push(b'\n');
        for piece in input.chunks(chunk.min(input.len())) {
            s.feed_bytes(piece);
        }
        let out = s.out();
        assert_eq!(out.len(), 1, "{out:#?}");
        // Answered under its own id, told as it was dropped, naming its size.
        assert_eq!(out[0]["error"]["code"], -32600, "{}", out[0]);
        assert_eq!(out[0]["id"], 1, "{}", out[0]);
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(" bytes, over the message limit of 400 bytes"),
            "{message}"
        );
        let events = s.events();
        assert_eq!(events.len(), 1, "chunk {chunk}: {events:?}");
        let r = request_of(events.into_iter().next().unwrap());
        assert_eq!(s.session.inbound_in_flight(), 1);
        s.session.respond_raw(r.responder, &raw(json!({}))).unwrap();
        assert_eq!(s.one_out()["id"], 2, "the line after the oversize one");
        assert_eq!(s.session.stats().invalid_messages, 1);
        server_still_works(&mut s);
    }

    let mut c = client(small(300));
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
        "y".repeat(1000)
    );
    line.push('\n');
    c.feed_bytes(line.as_bytes());
    // A notification gets no answer: it is dropped and counted.
    assert!(c.out().is_empty());
    assert!(c.events().is_empty());
    assert_eq!(c.session.stats().invalid_messages, 1);
    client_still_works(&mut c);
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let bad: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/\xff\xfe\"}\n";
    let mut s = server(Limits::default());
    s.feed_bytes(bad);
    assert_error_no_id(&s.one_out(), -32700);
    server_still_works(&mut s);
    let mut c = client(Limits::default());
    c.feed_bytes(bad);
    assert_error_no_id(&c.one_out(), -32700);
    client_still_works(&mut c);
}

#[test]
fn handle_message_rejects_oversize_and_invalid_utf8_the_same_way() {
    let mut s = server(small(400));
    let now = s.now;
    s.session
        .handle_message(now, padded_request(1, 1000).as_bytes());
    let e = s.one_out();
    assert!(e["error"]["code"].is_i64(), "{e}");
    s.session.handle_message(
        now,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}",
    );
    assert_error_no_id(&s.one_out(), -32700);
    s.session.handle_message(now, b"{nope");
    assert_error_no_id(&s.one_out(), -32700);
    // A message exactly at the limit is accepted.
    s.session
        .handle_message(now, padded_request(2, 400).as_bytes());
    assert_eq!(s.events().len(), 1);
    assert!(s.out().is_empty());
    assert_eq!(s.session.stats().invalid_messages, 3);
    let mut c = client(small(300));
    let now = c.now;
    c.session.handle_message(now, &[b'{'; 301]);
    assert!(c.one_out()["error"]["code"].is_i64());
    c.session.handle_message(now, b"\xff");
    assert_error_no_id(&c.one_out(), -32700);
    client_still_works(&mut c);
}

#[test]
fn unknown_methods_are_method_not_found_on_both_sides() {
    let mut s = server(Limits::default());
    s.feed(&modern_request(json!(1), "nope/nothing", json!({})));
    assert_error(&s.one_out(), &json!(1), -32601);
    // Legacy server too.
    s.feed(&initialize(json!(2), "2025-11-25", json!({})));
    let _ = s.one_out();
    s.feed_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let _ = s.events();
    s.feed_line(r#"{"jsonrpc":"2.0","id":3,"method":"nope/nothing"}"#);
    assert_error(&s.one_out(), &json!(3), -32601);
    // A server-to-client method sent to the server.
    s.feed_line(r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}"#);
    assert_error(&s.one_out(), &json!(4), -32601);
    assert!(s.events().is_empty());

    let mut c = client(Limits::default());
    c.feed_line(r#"{"jsonrpc":"2.0","id":"u","method":"nope/nothing"}"#);
    assert_error(&c.one_out(), &json!("u"), -32601);
    // A client-to-server method sent to the client.
    c.feed_line(r#"{"jsonrpc":"2.0","id":"t","method":"tools/list"}"#);
    assert_error(&c.one_out(), &json!("t"), -32601);
    // A capability the client did not declare (the raw-config client has roots).
    assert!(c.events().is_empty());
    client_still_works(&mut c);
}

#[test]
fn a_duplicate_in_flight_id_is_an_invalid_request() {
    let mut s = server(Limits::default());
    let line = modern_request(json!(9), "tools/call", json!({"name": "a"}));
    s.feed(&line);
    let first = request_of(s.events().pop().unwrap());
    s.feed(&line);
    assert_error(&s.one_out(), &json!(9), -32600);
    assert!(s.events().is_empty());
    assert_eq!(s.session.inbound_in_flight(), 1);
    // The original is still answerable, exactly once.
    s.session
        .respond_raw(first.responder, &raw(json!({"content": []})))
        .unwrap();
    let out = s.one_out();
    assert_eq!(out["id"], 9);
    assert!(out.get("result").is_some());
    // Once answered, the id may be used again.
    s.feed(&line);
    assert_eq!(s.events().len(), 1);
    assert!(s.out().is_empty());

    let mut c = client(Limits::default());
    c.feed_line(r#"{"jsonrpc":"2.0","id":"r","method":"roots/list"}"#);
    let (roots, requests) = live_input_of(c.events().pop().unwrap());
    assert!(requests.contains_key("roots/list"), "{requests:?}");
    c.feed_line(r#"{"jsonrpc":"2.0","id":"r","method":"roots/list"}"#);
    assert_error(&c.one_out(), &json!("r"), -32600);
    assert!(c.events().is_empty());
    assert_eq!(c.session.inbound_in_flight(), 1);
    c.session
        .provide_input(
            c.now,
            InputId::Live(roots),
            InputResponses::from([(
                "roots/list".to_owned(),
                InputResponse::ListRoots(ListRootsResult::new(vec![])),
            )]),
        )
        .unwrap();
    let out = c.one_out();
    assert_eq!(out["id"], "r");
    assert_eq!(out["result"], json!({"roots": []}));
    client_still_works(&mut c);
}

#[test]
fn a_response_to_an_unknown_id_is_dropped_and_counted() {
    let stray = [
        r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":-3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#,
    ];
    let mut s = server(Limits::default());
    let mut c = client(Limits::default());
    for line in stray {
        s.feed_line(line);
        c.feed_line(line);
    }
    assert_eq!(s.session.stats().unknown_responses, 4);
    assert_eq!(c.session.stats().unknown_responses, 4);
    assert!(s.out().is_empty() && s.events().is_empty());
    assert!(c.out().is_empty() && c.events().is_empty());
    server_still_works(&mut s);
    client_still_works(&mut c);
}

#[test]
fn crlf_line_endings_and_blank_lines_work() {
    let mut s = server(Limits::default());
    let a = modern_request(json!(1), "tools/list", json!({})).to_string();
    let b = modern_request(json!(2), "prompts/list", json!({})).to_string();
    let input = format!("\r\n\n   \n\t\r\n{a}\r\n\r\n\n{b}\r\n \n");
    s.feed_bytes(input.as_bytes());
    let methods: Vec<_> = s
        .events()
        .into_iter()
        .map(|e| request_of(e).method)
        .collect();
    assert_eq!(methods, ["tools/list", "prompts/list"]);
    assert!(s.out().is_empty());
    assert_eq!(s.session.stats().invalid_messages, 0);
    server_still_works(&mut s);

    let mut c = client(Limits::default());
    c.feed_bytes(b"\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n");
    assert_eq!(c.one_out()["id"], 1);
    client_still_works(&mut c);
}

#[test]
fn nothing_after_eof_or_close_and_no_panic() {
    let mut s = server(Limits::default());
    s.feed(&modern_request(json!(1), "tools/list", json!({})));
    let r = request_of(s.events().pop().unwrap());
    s.session.handle_eof(s.now);
    assert!(!s.session.is_closed(), "waits for the pending answer");
    assert!(!s.session.wants_read());
    s.feed(&modern_request(json!(2), "tools/list", json!({})));
    assert!(s.events().is_empty(), "input after EOF is ignored");
    s.session
        .respond_raw(r.responder, &raw(json!({"tools": []})))
        .unwrap();
    assert_eq!(s.one_out()["id"], 1);
    assert!(matches!(
        s.events().as_slice(),
        [ServerEvent::Closed {
            reason: CloseReason::PeerClosed
        }]
    ));
    s.feed_line(r#"{"garbage"#);
    s.session.handle_eof(s.now);
    s.session.handle_timeout(s.now + Duration::from_secs(1000));
    assert!(s.out().is_empty());
    assert!(s.events().is_empty());
}

// --- 8. backpressure and limits --------------------------------------------------------------

fn many_requests(ids: std::ops::Range<u64>) -> Vec<u8> {
    let mut input = Vec::new();
    for i in ids {
        input.extend_from_slice(
            modern_request(json!(i), "tools/call", json!({"name": format!("t{i}")}))
                .to_string()
                .as_bytes(),
        );
        input.push(b'\n');
    }
    input
}

#[test]
fn a_full_event_queue_stops_reading_and_draining_resumes_it() {
    let mut limits = Limits::default();
    limits.max_queued_events = 4;
    let mut s = server(limits);
    assert!(s.session.wants_read());
    s.feed_bytes(&many_requests(0..20));
    assert!(
        !s.session.wants_read(),
        "complete frames wait in the backlog"
    );
    assert_eq!(
        s.session.inbound_in_flight(),
        4,
        "processed only up to the event limit"
    );
    assert!(
        s.out().is_empty(),
        "no overload replies below the hard limit"
    );
    // Draining only drains; once the events are taken the timer is due at once, and
    // handling it lets the next part of the backlog in.
    let mut ids = Vec::new();
    let mut responders = Vec::new();
    let mut rounds = 0;
    loop {
        let before = s.session.inbound_in_flight();
        while let Some(e) = s.session.poll_event() {
            let r = request_of(e);
            ids.push(r.params_as::<Value>().unwrap()["name"].clone());
            responders.push(r.responder);
        }
        assert_eq!(
            s.session.inbound_in_flight(),
            before,
            "poll_event processes no input"
        );
        if !s.handle_due() {
            break;
        }
        rounds += 1;
    }
    assert!(rounds >= 4, "the backlog came in parts: {rounds}");
    let expected: Vec<_> = (0..20).map(|i| json!(format!("t{i}"))).collect();
    assert_eq!(ids, expected, "every request, in order");
    assert!(s.session.wants_read());
    assert!(s.out().is_empty());
    for r in responders {
        s.session.respond_raw(r, &raw(json!({}))).unwrap();
    }
    assert_eq!(s.out().len(), 20);
    server_still_works(&mut s);
}

#[test]
fn unread_output_stops_reading_and_writing_it_resumes() {
    // A peer that floods pings but never reads the answers: the answers pile up in
    // `poll_transmit`, so the session stops taking input instead of growing without bound.
    let mut limits = Limits::default();
    limits.max_queued_bytes = 200;
    let mut s = server(limits);
    let mut input = Vec::new();
    for i in 0..50 {
        input.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#).as_bytes(),
        );
        input.push(b'\n');
    }
    s.feed_bytes(&input);
    assert!(!s.session.wants_read(), "the unread answers stop reading");
    let mut answered = s.out();
    assert!(answered.len() < 50, "poll_transmit processes no input");
    while s.handle_due() {
        answered.extend(s.out());
    }
    let ids: Vec<_> = answered.iter().map(|m| m["id"].clone()).collect();
    let expected: Vec<_> = (0..50).map(|i| json!(i)).collect();
    assert_eq!(
        ids, expected,
        "writing the answers out lets the backlog in, in order"
    );
    assert!(s.session.wants_read());
    server_still_works(&mut s);
}

#[test]
fn the_inbound_limit_stops_reading_and_answering_frees_room() {
    let mut limits = Limits::default();
    limits.max_in_flight_inbound = 3;
    let mut s = server(limits);
    s.feed_bytes(&many_requests(0..10));
    let mut order = Vec::new();
    let mut pending = std::collections::VecDeque::new();
    loop {
        for e in s.events() {
            let r = request_of(e);
            order.push(r.params_as::<Value>().unwrap()["name"].clone());
            pending.push_back(r.responder);
        }
        assert!(s.session.inbound_in_flight() <= 3);
        let Some(next) = pending.pop_front() else {
            break;
        };
        if order.len() < 10 {
            assert!(!s.session.wants_read(), "full at {} delivered", order.len());
        }
        s.session.respond_raw(next, &raw(json!({}))).unwrap();
        s.handle_due();
    }
    let expected: Vec<_> = (0..10).map(|i| json!(format!("t{i}"))).collect();
    assert_eq!(order, expected);
    let answers = s.out();
    assert_eq!(answers.len(), 10);
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["id"], i, "answered in order, none twice: {a}");
        assert!(a.get("result").is_some(), "no overload error: {a}");
    }
    assert!(s.session.wants_read());
    server_still_works(&mut s);
}

#[test]
fn ignoring_wants_read_gets_overload_replies_not_unbounded_growth() {
    let mut limits = Limits::default();
    limits.max_message_size = 512;
    limits.max_queued_events = 2;
    limits.max_in_flight_inbound = 2;
    let mut s = server(limits);
    // Each write alone is below the message size; the caller keeps writing regardless.
    let mut delivered = Vec::new();
    let mut answers: Vec<Value> = Vec::new();
    for i in 0..60u64 {
        s.feed_bytes(&many_requests(i..i + 1));
        answers.extend(s.out());
    }
    // Queued events stay bounded even though nothing drained them.
    let events = s.events();
    assert!(events.len() <= 2 * 2 + 1, "{}", events.len());
    for e in events {
        delivered.push(request_of(e).params_as::<Value>().unwrap()["name"].clone());
    }
    answers.extend(s.out());
    assert!(!answers.is_empty(), "overload must show as error replies");
    for a in &answers {
        assert_eq!(a["error"]["code"], -32603, "{a}");
    }
    let mut answered: Vec<u64> = answers.iter().map(|a| a["id"].as_u64().unwrap()).collect();
    answered.sort_unstable();
    answered.dedup();
    assert_eq!(answered.len(), answers.len(), "each refused once");
    // Every request was either delivered or refused; none vanished. Some may still wait in
    // the backlog (at most one message's worth): drain them now.
    let mut rest = Vec::new();
    while let Some(e) = s.session.poll_event() {
        rest.push(e);
    }
    let backlog_len = rest.len();
    let line_len = many_requests(0..1).len();
    assert!(
        backlog_len <= 512 / line_len + 1,
        "at most one message size of backlog: {backlog_len}"
    );
    let refused_more: Vec<_> = s.out();
    assert!(refused_more.iter().all(|a| a["error"]["code"] == -32603));
    assert_eq!(
        delivered.len() + backlog_len + answers.len() + refused_more.len(),
        60,
        "delivered {} + backlog {} + refused {} + {}",
        delivered.len(),
        backlog_len,
        answers.len(),
        refused_more.len()
    );
}

#[test]
fn ignoring_wants_read_drops_notifications_past_the_hard_limit() {
    let mut limits = Limits::default();
    limits.max_message_size = 256;
    limits.max_queued_events = 2;
    let mut c = client(limits);
    let mut input = Vec::new();
    for i in 0..40 {
        input.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":{i}}}}}\n"
            )
            .as_bytes(),
        );
    }
    c.feed_bytes(&input);
    let queued = c.events().len();
    assert!(queued <= 4 + 2, "{queued}");
    assert!(c.session.stats().dropped_messages > 0);
    assert_eq!(queued as u64 + c.session.stats().dropped_messages, 40);
    assert!(c.out().is_empty(), "notifications are never answered");
    client_still_works(&mut c);
}

#[test]
fn a_full_send_queue_blocks_until_drained() {
    let mut limits = Limits::default();
    limits.max_queued_bytes = 600;
    let mut c = client(limits);
    let params = || {
        Some(raw(
            json!({"name": "t", "arguments": {"x": "y".repeat(100)}}),
        ))
    };
    let mut sent = 0;
    let blocked = loop {
        match c
            .session
            .send_request_raw(c.now, "tools/call", params(), RequestOptions::default())
        {
            Ok(_) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent < 100, "never blocked");
    };
    assert_eq!(blocked, SendError::Blocked);
    assert!(sent >= 3);
    assert_eq!(
        c.session.outbound_in_flight(),
        sent,
        "a refused command changes nothing"
    );
    assert_eq!(
        c.session
            .send_notification_raw("notifications/roots/list_changed", None),
        Err(SendError::Blocked)
    );
    assert!(c.events().is_empty(), "not unblocked before draining");
    let mut buf = Vec::new();
    let mut frames = 0;
    while c.session.poll_transmit(&mut buf).is_some() {
        frames += 1;
    }
    assert_eq!(frames, sent);
    let events = c.events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::Unblocked]),
        "{events:?}"
    );
    c.session
        .send_request_raw(c.now, "tools/call", params(), RequestOptions::default())
        .unwrap();
    assert_eq!(c.out().len(), 1);
    assert!(c.events().is_empty(), "Unblocked only once");
}

#[test]
fn too_many_outbound_requests_is_refused_until_one_ends() {
    let mut limits = Limits::default();
    limits.max_in_flight_outbound = 2;
    let mut c = client(limits);
    let a = c
        .session
        .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let _b = c
        .session
        .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    assert_eq!(
        c.session
            .send_request_raw(c.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::TooManyRequests)
    );
    assert_eq!(c.out().len(), 2);
    c.session.cancel(c.now, a, None).unwrap();
    let _ = c.out();
    let _ = c.events();
    let d = c
        .session
        .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    assert_eq!(
        c.session
            .send_request_raw(c.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::TooManyRequests)
    );
    let line = c.one_out();
    c.feed(&json!({"jsonrpc": "2.0", "id": line["id"], "result": {}}));
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Response { id, outcome: Ok(_) }] if *id == d
    ));
    assert!(
        c.session
            .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
            .is_ok()
    );
}

#[test]
fn a_batch_over_the_limit_is_one_invalid_request() {
    let mut limits = Limits::default();
    limits.max_batch_len = 3;
    let mut s = server(limits);
    s.feed(&initialize(json!(0), "2025-03-26", json!({})));
    assert_eq!(s.one_out()["result"]["protocolVersion"], "2025-03-26");
    s.feed_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let _ = s.events();
    let entry = |i: u64| json!({"jsonrpc": "2.0", "id": i, "method": "tools/list"});
    s.feed(&Value::Array((1..=4).map(entry).collect()));
    let out = s.out();
    assert_eq!(out.len(), 1, "{out:#?}");
    assert!(out[0].is_object(), "one error, not an array: {}", out[0]);
    assert_error_no_id(&out[0], -32600);
    assert!(s.events().is_empty());
    // A batch at the limit is served, its answers as one array.
    s.feed(&Value::Array((5..=7).map(entry).collect()));
    let rs: Vec<_> = s.events().into_iter().map(request_of).collect();
    assert_eq!(rs.len(), 3);
    assert!(s.out().is_empty(), "answers wait for the whole batch");
    for r in rs {
        s.session
            .respond_raw(r.responder, &raw(json!({"tools": []})))
            .unwrap();
    }
    let array = s.one_out();
    let ids: Vec<_> = array
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].clone())
        .collect();
    assert_eq!(ids, [json!(5), json!(6), json!(7)]);
}

#[test]
fn a_batch_outside_2025_03_26_is_an_invalid_request() {
    let mut s = server(Limits::default());
    let batch = json!([modern_request(json!(1), "tools/list", json!({}))]);
    s.feed(&batch);
    assert_error_no_id(&s.one_out(), -32600);
    assert!(s.events().is_empty());
    server_still_works(&mut s);
}

// --- 9. chunking invariance ----------------------------------------------------------------

/// One scripted exchange; returns the transcript and both event sequences, Debug-rendered
fn scripted(era: EraMode, chunking: Chunking) -> (Vec<(Side, String)>, Vec<String>, Vec<String>) {
    let mut pair = Pair::new(origin(), Pair::client_config(era), Pair::server_config());
    pair.chunking = chunking;
    let mut client_events = Vec::new();
    let mut server_events = Vec::new();
    let log = |pair: &mut Pair, c: &mut Vec<String>, s: &mut Vec<String>| {
        c.extend(pair.client_events().iter().map(|e| format!("{e:?}")));
        let mut requests = Vec::new();
        for e in pair.server_events() {
            s.push(format!("{e:?}"));
            if let ServerEvent::Request(r) = e {
                requests.push(r);
            }
        }
        requests
    };
    pair.drive();
    assert!(log(&mut pair, &mut client_events, &mut server_events).is_empty());
    let mut ids = Vec::new();
    for i in 0..4 {
        let big = "é→😀".repeat(40 * i);
        ids.push(
            pair.client
                .send_request_raw(
                    pair.now,
                    "tools/call",
                    Some(raw(
                        json!({"name": format!("tool{i}"), "arguments": {"s": big}}),
                    )),
                    RequestOptions::default()
                        .with_progress()
                        .timeout(Duration::from_secs(30)),
                )
                .unwrap(),
        );
    }
    pair.client
        .send_notification_raw(
            "notifications/roots/list_changed",
            Some(&raw(json!({"n": 1}))),
        )
        .unwrap();
    pair.drive();
    let mut requests = log(&mut pair, &mut client_events, &mut server_events);
    assert_eq!(requests.len(), 4);
    for (i, r) in requests.iter().enumerate() {
        pair.server
            .inbound(r.responder.id())
            .report_progress(&Progress::new(1.0).total(4.0).message(format!("step {i}")))
            .unwrap();
    }
    pair.server
        .send_notification_raw(
            "notifications/tools/list_changed",
            Some(&raw(json!({"x": "ü\n\"q"}))),
        )
        .unwrap();
    pair.drive();
    pair.client
        .cancel(pair.now, ids[1], Some("enough"))
        .unwrap();
    pair.advance(Duration::from_secs(1));
    log(&mut pair, &mut client_events, &mut server_events);
    let r3 = requests.pop().unwrap();
    let r2 = requests.pop().unwrap();
    let r1 = requests.pop().unwrap();
    let r0 = requests.pop().unwrap();
    pair.server
        .respond_raw(
            r0.responder,
            &raw(json!({"content": [{"type": "text", "text": "a\nb"}]})),
        )
        .unwrap();
    pair.server
        .respond_raw(r1.responder, &raw(json!({"late": true})))
        .unwrap();
    pair.server
        .respond_error(r2.responder, &ErrorObject::invalid_params("bad"));
    pair.drive();
    // The fourth request times out.
    pair.advance(Duration::from_secs(40));
    let _ = r3;
    log(&mut pair, &mut client_events, &mut server_events);
    (pair.take_transcript(), client_events, server_events)
}

#[test]
fn chunking_does_not_change_the_exchange() {
    for era in [
        EraMode::Modern,
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        EraMode::Auto,
    ] {
        let whole = scripted(era, Chunking::Whole);
        // The exchange did what the script says.
        let outcomes: Vec<_> = whole
            .1
            .iter()
            .filter(|e| e.starts_with("Response"))
            .cloned()
            .collect();
        assert_eq!(outcomes.len(), 4, "{outcomes:#?}");
        assert!(outcomes.iter().any(|o| o.contains("Cancelled")));
        assert!(outcomes.iter().any(|o| o.contains("TimedOut")));
        assert!(outcomes.iter().any(|o| o.contains("-32602")));
        assert!(whole.1.iter().any(|e| e.contains("tools/list_changed")));
        assert!(whole.2.iter().any(|e| e.starts_with("Cancelled")));
        assert!(whole.2.iter().any(|e| e.contains("roots/list_changed")));
        for chunking in [
            Chunking::ByteByByte,
            Chunking::Random(1),
            Chunking::Random(7),
            Chunking::Random(0xDEAD_BEEF),
            Chunking::Random(u64::MAX),
        ] {
            let other = scripted(era, chunking);
            assert_eq!(whole.0, other.0, "{era:?} transcript with {chunking:?}");
            assert_eq!(whole.1, other.1, "{era:?} client events with {chunking:?}");
            assert_eq!(whole.2, other.2, "{era:?} server events with {chunking:?}");
        }
    }
}

// --- floods while the caller neither reads events nor writes output (found by the simulation)

/// Simulation finding: a flood of (valid, increasing) progress reports while the application
/// does not drain its events grew the event queue without bound
#[test]
fn a_progress_flood_keeps_the_event_queue_bounded() {
    let mut limits = Limits::default();
    limits.max_queued_events = 8;
    limits.max_message_size = 1024;
    let mut pair = Pair::new(
        origin(),
        {
            let mut c = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
            c.limits = limits.clone();
            c
        },
        Pair::server_config(),
    );
    pair.drive();
    let _ = pair.client_events();
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "t"}))),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    pair.drive();
    let token = id.wire_id();
    for i in 1..=5_000 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{i}}}}}"#
        );
        pair.client.handle_bytes(pair.now, line.as_bytes());
        pair.client.handle_bytes(pair.now, b"\n");
        assert!(
            pair.client.queued_events() <= 2 * limits.max_queued_events,
            "{} events queued",
            pair.client.queued_events()
        );
    }
    assert!(pair.client.stats().dropped_messages > 0);
}

/// Simulation finding: a flood of garbage lines while our output is not written (and the
/// caller ignores `wants_read`) queued one error reply per line without bound
#[test]
fn a_flood_while_output_is_not_written_keeps_the_byte_queue_bounded() {
    let mut limits = Limits::default();
    limits.max_queued_bytes = 4096;
    limits.max_message_size = 1024;
    let mut s = server(limits.clone());
    for _ in 0..20_000 {
        s.session.handle_bytes(origin(), b"x\n");
        assert!(
            s.session.queued_bytes() <= limits.max_queued_bytes + limits.max_message_size,
            "{} bytes queued",
            s.session.queued_bytes()
        );
    }
    assert!(s.session.stats().dropped_messages > 0);
}

#[test]
fn progress_past_the_queue_limit_is_dropped_not_queued() {
    let mut limits = Limits::default();
    limits.max_queued_bytes = 64 * 1024;
    let mut s = server(limits);
    let mut call = modern_request(
        json!(1),
        "tools/call",
        json!({"name": "t", "arguments": {}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    s.feed(&call);
    let r = request_of(s.events().remove(0));
    let message = "m".repeat(1000);
    for i in 1..=1000 {
        let p = Progress::new(f64::from(i)).message(message.clone());
        s.session
            .inbound(r.responder.id())
            .report_progress(&p)
            .unwrap();
    }
    assert!(s.session.stats().dropped_messages > 900);
    let queued: usize = s.out_lines().iter().map(String::len).sum();
    assert!(queued < 64 * 1024 + 2 * 1100, "{queued}");
    // the answer still goes out, and later progress once the queue drained
    s.session
        .inbound(r.responder.id())
        .report_progress(&Progress::new(2000.0))
        .unwrap();
    assert_eq!(s.one_out()["params"]["progress"], 2000.0);
    s.session
        .respond_raw(r.responder, &raw(json!({"content": []})))
        .unwrap();
    assert_eq!(s.one_out()["id"], 1);
}

#[test]
fn an_answer_over_the_limit_fails_its_request_at_once_and_an_untold_one_closes() {
    let payload = "z".repeat(2000);
    for chunk in [usize::MAX, 13, 1] {
        let mut c = client(small(300));
        let id = c
            .session
            .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
            .unwrap();
        let sent = c.one_out();
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[],"pad":"{payload}"}}}}"#,
            sent["id"]
        );
        let line = format!("{answer}\n");
        for piece in line.as_bytes().chunks(chunk.min(line.len())) {
            c.feed_bytes(piece);
        }
        let events = c.events();
        match events.as_slice() {
            [
                ClientEvent::Response {
                    id: got,
                    outcome: Err(e),
                },
            ] => {
                assert_eq!(*got, id);
                assert_eq!(
                    *e,
                    CallError::TooLarge {
                        size: Some(answer.len() as u64),
                        limit: 300
                    }
                );
                assert_eq!(
                    e.to_string(),
                    format!(
                        "the answer is {} bytes, over the message limit of 300 bytes \
                         (Limits::max_message_size)",
                        answer.len()
                    )
                );
            }
            other => panic!("chunk {chunk}: {other:?}"),
        }
        assert!(c.out().is_empty(), "nothing is sent back");
        client_still_works(&mut c);
    }

    // An answer whose id cannot be told while a request waits: the session closes, saying
    // why, rather than leave the request to its timeout.
    let mut c = client(small(300));
    c.session
        .send_request_raw(c.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let _ = c.one_out();
    c.feed_bytes(format!(r#"{{"jsonrpc":"2.0","result":{{"pad":"{payload}"}}}}"#).as_bytes());
    c.feed_bytes(b"\n");
    assert!(c.session.is_closed());
    let closed = c.events().into_iter().find_map(|e| match e {
        ClientEvent::Closed { reason } => Some(reason),
        _ => None,
    });
    match closed {
        Some(CloseReason::Transport(why)) => assert!(
            why.contains("over the message limit of 300 bytes")
                && why.contains("could not be told"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
}
