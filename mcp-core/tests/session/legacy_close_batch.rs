//! Legacy era: end of input, local close, and JSON-RPC batches (2025-03-26 only)

use crate::common;
use crate::legacy_kit;

use std::time::Duration;

use serde_json::{Value, json};

use common::origin;
use common::raw;
use legacy_kit::{
    KitEvent, LEGACY, Raw, client_call, only_live_input, only_request, parse, ready, server_ask,
};
use legacy_kit::{client_ready, server_ready};
use mcp_sansio::schema::{InputRequest, InputResponse, InputResponses, ListRootsResult};
use mcp_sansio::session::role::Server;
use mcp_sansio::session::{InputError, InputId};
use mcp_sansio::testing::{Chunking, Pair, Side, drain_events};
use mcp_sansio::{
    CallError, CancelError, ClientEvent, CloseReason, ErrorObject, Progress, ProtocolVersion,
    RequestOptions, SendError, ServerEvent,
};

const V: ProtocolVersion = ProtocolVersion::V2025_11_25;
const BATCH_V: ProtocolVersion = ProtocolVersion::V2025_03_26;

fn assert_closed_with<E: KitEvent>(events: &[E], reason: &CloseReason) {
    match events.last().map(|e| (e, e.close_reason())) {
        Some((_, Some(got))) => assert_eq!(got, reason),
        other => panic!(
            "Closed must come last: {:?} in {events:?}",
            other.map(|(e, _)| e)
        ),
    }
    assert_eq!(
        events.iter().filter(|e| e.close_reason().is_some()).count(),
        1
    );
}

// --- 10. EOF and close -------------------------------------------------------------------

#[test]
fn client_eof_fails_pending_requests_then_closes() {
    let mut pair = ready(V);
    let a = pair
        .client
        .send_request_raw(pair.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let b = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "x"}))),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    let c = pair
        .client
        .send_request_raw(
            pair.now,
            "ping",
            None,
            RequestOptions::default().no_timeout(),
        )
        .unwrap();
    // The server's answers (the ping's among them) never come back.
    pair.pause(Side::Client);
    pair.drive();
    assert_eq!(pair.client.outbound_in_flight(), 3);
    assert!(pair.client.poll_timeout().is_some());
    pair.client.handle_eof(pair.now);
    let events = drain_events(&mut pair.client);
    assert_eq!(events.len(), 4, "{events:?}");
    for (event, id) in events.iter().zip([a, b, c]) {
        match event {
            ClientEvent::Response {
                id: got,
                outcome: Err(CallError::SessionClosed),
            } => assert_eq!(*got, id),
            other => panic!("{other:?}"),
        }
    }
    assert_closed_with(&events, &CloseReason::PeerClosed);
    assert!(pair.client.is_closed());
    assert!(!pair.client.wants_read());
    assert_eq!(pair.client.poll_timeout(), None);
    assert_eq!(pair.client.outbound_in_flight(), 0);
    assert_eq!(
        pair.client
            .send_request_raw(pair.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::Closed)
    );
    // Later input and EOF change nothing.
    pair.client.handle_eof(pair.now);
    pair.client.handle_bytes(
        pair.now,
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n",
    );
    assert!(drain_events(&mut pair.client).is_empty());
    let mut buf = Vec::new();
    assert!(pair.client.poll_transmit(&mut buf).is_none());
}

#[test]
fn server_eof_lets_the_app_answer_then_closes() {
    let mut pair = ready(V);
    let (_, first) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "a"}),
        RequestOptions::default().with_progress(),
    );
    let (_, second) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "b"}),
        RequestOptions::default(),
    );
    let (roots, _, _) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.server.handle_eof(pair.now);
    let events = drain_events(&mut pair.server);
    // The server's own request fails at once; the session stays open for the answers.
    match events.as_slice() {
        [
            ServerEvent::Response {
                id,
                outcome: Err(CallError::SessionClosed),
            },
        ] => assert_eq!(*id, roots),
        other => panic!("{other:?}"),
    }
    assert!(!pair.server.is_closed());
    assert!(!pair.server.wants_read());
    assert_eq!(
        pair.server
            .send_request_raw(pair.now, "ping", None, RequestOptions::default()),
        Err(SendError::Closed)
    );
    // Progress and the first answer still go out.
    pair.server
        .inbound(first.responder.id())
        .report_progress(&Progress::new(1.0))
        .unwrap();
    pair.server
        .respond_raw(first.responder, &raw(json!({"n": "a"})))
        .unwrap();
    assert!(drain_events(&mut pair.server).is_empty(), "not closed yet");
    assert!(!pair.server.is_closed());
    pair.server
        .respond_raw(second.responder, &raw(json!({"n": "b"})))
        .unwrap();
    let events = drain_events(&mut pair.server);
    assert_eq!(events.len(), 1);
    assert_closed_with(&events, &CloseReason::PeerClosed);
    pair.drive();
    let answers: Vec<Value> = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter_map(|m| m.get("result").cloned())
        .collect();
    assert_eq!(
        answers[answers.len() - 2..],
        [json!({"n": "a"}), json!({"n": "b"})]
    );
    let tail: Vec<Value> = pair
        .sent_by(Side::Server)
        .into_iter()
        .rev()
        .take(3)
        .collect();
    assert_eq!(tail[2]["method"], "notifications/progress");
}

#[test]
fn server_eof_without_pending_requests_closes_at_once() {
    let mut pair = ready(V);
    pair.server.handle_eof(pair.now);
    let events = drain_events(&mut pair.server);
    assert_eq!(events.len(), 1);
    assert_closed_with(&events, &CloseReason::PeerClosed);
}

#[test]
fn close_fails_pending_drops_inbound_and_closes_last() {
    let mut pair = ready(V);
    let (out_a, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    let (out_b, _) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default().with_progress(),
    );
    let (_, inbound, _) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    assert!(pair.client.poll_timeout().is_some());
    pair.client.close(pair.now);
    let events = drain_events(&mut pair.client);
    assert_eq!(events.len(), 3, "{events:?}");
    for (event, id) in events.iter().zip([out_a, out_b]) {
        assert!(
            matches!(event, ClientEvent::Response { id: got, outcome: Err(CallError::SessionClosed) } if *got == id),
            "{event:?}"
        );
    }
    assert_closed_with(&events, &CloseReason::Local);
    assert!(pair.client.is_closed());
    assert_eq!(pair.client.poll_timeout(), None);
    assert_eq!(pair.client.inbound_in_flight(), 0);
    // Answering a dropped input request is refused, and sends nothing.
    let before = pair.transcript().len();
    assert_eq!(
        pair.client
            .provide_input(pair.now, InputId::Live(inbound), roots_answer()),
        Err(InputError::Closed)
    );
    assert_eq!(
        pair.client.refuse_input(
            pair.now,
            InputId::Live(inbound),
            &ErrorObject::new(-1, "no")
        ),
        Err(InputError::NotWaiting)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing sent after close");
    // Every command refuses.
    assert_eq!(
        pair.client
            .send_request_raw(pair.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::Closed)
    );
    assert_eq!(
        pair.client
            .send_notification_raw("notifications/roots/list_changed", None),
        Err(SendError::Closed)
    );
    assert_eq!(
        pair.client.cancel(pair.now, out_a, None),
        Err(CancelError::NotInFlight)
    );
    // Close twice: still one Closed.
    pair.client.close(pair.now);
    assert!(drain_events(&mut pair.client).is_empty());
    pair.advance(Duration::from_secs(3600));
    assert!(pair.client_events().is_empty());
}

#[test]
fn bytes_queued_before_close_stay_available() {
    let mut pair = ready(V);
    pair.client
        .send_notification_raw("notifications/roots/list_changed", None)
        .unwrap();
    pair.client.close(pair.now);
    let mut buf = Vec::new();
    assert!(pair.client.poll_transmit(&mut buf).is_some());
    let message = parse(std::str::from_utf8(&buf).unwrap().trim_end());
    assert_eq!(message["method"], "notifications/roots/list_changed");
    assert!(pair.client.poll_transmit(&mut buf).is_none());
}

#[test]
fn server_close_drops_inbound_requests() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default(),
    );
    pair.server.close(pair.now);
    let events = drain_events(&mut pair.server);
    assert_eq!(events.len(), 1);
    assert_closed_with(&events, &CloseReason::Local);
    let before = pair.transcript().len();
    pair.server
        .respond_raw(request.responder, &raw(json!({})))
        .unwrap();
    pair.drive();
    assert_eq!(pair.transcript().len(), before);
    // The client learns it only from its transport.
    pair.client.handle_eof(pair.now);
    let events = drain_events(&mut pair.client);
    assert!(matches!(
        events.as_slice(),
        [ClientEvent::Response { id: got, outcome: Err(CallError::SessionClosed) }, ClientEvent::Closed { reason: CloseReason::PeerClosed }] if *got == id
    ));
}

#[test]
fn closed_stays_the_last_event_when_the_send_queue_was_blocked() {
    let mut client = Pair::client_config(mcp_sansio::EraMode::Legacy(V));
    client.limits.max_queued_bytes = 256;
    let mut pair = legacy_kit::ready_with(client, Pair::server_config());
    let big = json!({"name": "x".repeat(300)});
    let mut sent = Vec::new();
    let blocked = loop {
        match pair.client.send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(big.clone())),
            RequestOptions::default(),
        ) {
            Ok(id) => sent.push(id),
            Err(e) => break e,
        }
    };
    assert_eq!(blocked, SendError::Blocked);
    assert_eq!(sent.len(), 1);
    pair.client.close(pair.now);
    // The queued bytes may still be written; the session stays closed and quiet.
    let mut buf = Vec::new();
    while pair.client.poll_transmit(&mut buf).is_some() {}
    let events = drain_events(&mut pair.client);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_closed_with(&events, &CloseReason::Local);
}

#[test]
fn eof_processes_a_last_line_without_newline() {
    let mut server = server_ready(Pair::server_config(), V, json!({}));
    server.session.handle_bytes(
        server.now,
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    );
    assert!(server.events().is_empty(), "not a complete line yet");
    server.session.handle_eof(server.now);
    let request = only_request(server.events());
    assert!(!server.session.is_closed());
    server
        .session
        .respond_raw(request.responder, &raw(json!({"tools": []})))
        .unwrap();
    assert_eq!(
        server.out(),
        vec![json!({"jsonrpc": "2.0", "id": 5, "result": {"tools": []}})]
    );
    let events = server.events();
    assert_closed_with(&events, &CloseReason::PeerClosed);
}

// --- 11. batches -------------------------------------------------------------------------

fn batch_server() -> Raw<Server> {
    let mut config = Pair::server_config();
    config.capabilities = json!({"tools": {}, "prompts": {}});
    server_ready(config, BATCH_V, json!({"roots": {}}))
}

#[test]
fn batch_answers_leave_as_one_array_once_all_are_answered() {
    let mut server = batch_server();
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": "three", "method": "prompts/get", "params": {"name": "p"}},
        42,
        {"jsonrpc": "2.0", "id": 5, "method": "nope/unknown"},
        {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
    ]));
    assert!(
        server.out().is_empty(),
        "nothing before every request is answered"
    );
    let events = server.events();
    let mut requests = Vec::new();
    let mut notifications = 0;
    for e in events {
        match e {
            ServerEvent::Request(r) => requests.push(r),
            ServerEvent::Notification(n) => {
                assert_eq!(n.method, "notifications/roots/list_changed");
                notifications += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(notifications, 1);
    let methods: Vec<_> = requests.iter().map(|r| r.method.clone()).collect();
    assert_eq!(methods, ["tools/list", "prompts/get"]);
    let tools = requests.remove(0);
    let prompts = requests.remove(0);
    server
        .session
        .respond_raw(prompts.responder, &raw(json!({"messages": []})))
        .unwrap();
    assert!(server.out().is_empty(), "tools/list still open");
    server
        .session
        .respond_raw(tools.responder, &raw(json!({"tools": []})))
        .unwrap();
    let out = server.out_lines();
    assert_eq!(out.len(), 1, "one transmit: {out:?}");
    assert!(
        out[0].starts_with('[') && out[0].ends_with(']'),
        "{}",
        out[0]
    );
    let answers = parse(&out[0]);
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), 6, "{answers:#?}");
    // In the order they were produced: automatic ones first, then the application's.
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(
        answers[1]["id"],
        Value::Null,
        "2025-03-26 writes an unknown id as null"
    );
    assert_eq!(answers[1]["error"]["code"], -32600);
    assert_eq!(answers[2]["id"], 5);
    assert_eq!(answers[2]["error"]["code"], -32601);
    assert_eq!(answers[3]["id"], 6);
    assert_eq!(
        answers[3]["error"]["code"], -32601,
        "resources not declared"
    );
    assert_eq!(
        answers[4],
        json!({"jsonrpc": "2.0", "id": "three", "result": {"messages": []}})
    );
    assert_eq!(
        answers[5],
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    );
}

#[test]
fn a_batch_of_automatic_answers_leaves_at_once_and_notifications_alone_get_none() {
    let mut server = batch_server();
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]));
    let out = server.out();
    assert_eq!(
        out,
        vec![json!([
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "result": {}},
        ])]
    );
    server.feed(&json!([
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    ]));
    assert!(server.out().is_empty(), "nothing to answer");
    assert_eq!(server.events().len(), 2);
}

#[test]
fn initialize_inside_a_batch_is_refused() {
    let mut server = batch_server();
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                    "clientInfo": {"name": "again", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]));
    let out = server.out();
    assert_eq!(out.len(), 1);
    let answers = out[0].as_array().expect("an array");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert!(server.events().is_empty());
    assert_eq!(server.session.version(), Some(BATCH_V));
    assert_eq!(
        server.session.peer().unwrap().info.as_ref().unwrap().name,
        "raw-client"
    );
}

#[test]
fn a_batch_before_initialization_gets_one_error() {
    let mut server = Raw::server(Pair::server_config(), origin());
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"}}},
    ]));
    let out = server.out();
    assert_eq!(out.len(), 1);
    assert!(
        out[0].is_object(),
        "a single error, not an array: {}",
        out[0]
    );
    assert_eq!(out[0]["error"]["code"], -32600);
    assert!(server.events().is_empty());
    assert_eq!(
        server.session.version(),
        None,
        "initialize was not processed"
    );
    // A plain initialize still works afterwards.
    server.feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}}));
    assert_eq!(server.out()[0]["result"]["protocolVersion"], "2025-03-26");
}

#[test]
fn a_cancelled_batch_member_is_left_out() {
    let mut server = batch_server();
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b"}},
    ]));
    let events = server.events();
    assert_eq!(events.len(), 2);
    let mut responders = events.into_iter().map(|e| match e {
        ServerEvent::Request(r) => r.responder,
        other => panic!("{other:?}"),
    });
    let (first, second) = (responders.next().unwrap(), responders.next().unwrap());
    server.feed(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "stop"}}),
    );
    assert!(matches!(
        server.events().as_slice(),
        [ServerEvent::Cancelled { id, .. }] if *id == first.id()
    ));
    assert!(server.out().is_empty());
    server
        .session
        .respond_raw(first, &raw(json!({"n": "a"})))
        .unwrap();
    assert!(server.out().is_empty());
    server
        .session
        .respond_raw(second, &raw(json!({"n": "b"})))
        .unwrap();
    assert_eq!(
        server.out(),
        vec![json!([{"jsonrpc": "2.0", "id": 2, "result": {"n": "b"}}])]
    );

    // When every member is cancelled, nothing at all is sent.
    server.feed(&json!([
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "c"}},
    ]));
    let request = only_request(server.events());
    server.feed(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3}}),
    );
    assert_eq!(server.events().len(), 1);
    server
        .session
        .respond_raw(request.responder, &raw(json!({})))
        .unwrap();
    assert!(server.out().is_empty());
}

#[test]
fn batches_are_refused_on_other_versions() {
    for v in LEGACY.into_iter().filter(|v| *v != BATCH_V) {
        let mut server = server_ready(Pair::server_config(), v, json!({}));
        server.feed(&json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        ]));
        let out = server.out_lines();
        assert_eq!(out.len(), 1, "{v}: {out:?}");
        let error = parse(&out[0]);
        assert!(error.is_object(), "{v}: {error}");
        assert_eq!(error["error"]["code"], -32600);
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("2025-03-26"), "{message}");
        // 2025-11-25 lets an error whose request id is unknown omit `id`
        if v == ProtocolVersion::V2025_11_25 {
            assert!(error.get("id").is_none(), "{v}: {error}");
        } else {
            assert_eq!(error["id"], Value::Null, "{v}");
            assert!(out[0].contains(r#""id":null"#));
        }
        assert!(server.events().is_empty(), "{v}: nothing delivered");
        assert_eq!(server.session.inbound_in_flight(), 0);
    }
}

#[test]
fn a_client_answers_a_server_batch_on_2025_03_26() {
    let mut client = client_ready(
        Pair::client_config(mcp_sansio::EraMode::Legacy(BATCH_V)),
        BATCH_V,
        json!({}),
    );
    client.feed(&json!([
        {"jsonrpc": "2.0", "id": 1, "method": "roots/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]));
    let (id, request) = only_live_input(client.events(), "roots/list");
    assert_eq!(request, InputRequest::ListRoots(None));
    assert!(client.out().is_empty());
    client
        .session
        .provide_input(client.now, InputId::Live(id), roots_answer())
        .unwrap();
    assert_eq!(
        client.out(),
        vec![json!([
            {"jsonrpc": "2.0", "id": 2, "result": {}},
            {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}},
        ])]
    );
}

/// An input answer: an empty roots list
fn roots_answer() -> InputResponses {
    InputResponses::from([(
        "roots/list".to_owned(),
        InputResponse::ListRoots(ListRootsResult::new(vec![])),
    )])
}

/// A batch flow through a pair: the same transcript and events under every chunking
fn batch_flow(chunking: Chunking) -> (Vec<(Side, String)>, Vec<String>) {
    let mut pair = ready(BATCH_V);
    pair.chunking = chunking;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 101, "method": "tools/call", "params": {"name": "é✓"}},
        {"jsonrpc": "2.0", "id": 102, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 103, "method": "tools/list"},
    ]);
    pair.inject(Side::Server, format!("{batch}\n").as_bytes());
    let mut log = Vec::new();
    let mut responders = Vec::new();
    for e in pair.server_events() {
        log.push(format!("{e:?}"));
        if let ServerEvent::Request(r) = e {
            responders.push(r.responder);
        }
    }
    for (n, responder) in responders.into_iter().rev().enumerate() {
        pair.server
            .respond_raw(responder, &raw(json!({"n": n})))
            .unwrap();
    }
    pair.drive();
    log.extend(pair.client_events().iter().map(|e| format!("{e:?}")));
    log.push(format!("{:?}", pair.client.stats()));
    (pair.take_transcript(), log)
}

#[test]
fn batches_do_not_depend_on_chunking() {
    let whole = batch_flow(Chunking::Whole);
    let last = &whole.0.last().unwrap();
    assert_eq!(last.0, Side::Server);
    let answers = parse(&last.1);
    assert_eq!(answers.as_array().map(Vec::len), Some(3), "{answers}");
    assert_eq!(whole.1.len(), 4, "{:#?}", whole.1);
    for chunking in [
        Chunking::ByteByByte,
        Chunking::Random(7),
        Chunking::Random(2025),
    ] {
        let other = batch_flow(chunking);
        assert_eq!(other.0, whole.0, "{chunking:?}: transcript");
        assert_eq!(other.1, whole.1, "{chunking:?}: events");
    }
}
