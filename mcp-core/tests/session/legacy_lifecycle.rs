//! Legacy era: the initialize handshake, version negotiation, what works before the handshake
//! completes, error ids without a known request, and independence from chunking

use crate::common;
use crate::legacy_kit;

use std::time::Duration;

use serde_json::{Value, json};

use common::{origin, raw};
use legacy_kit::{LEGACY, Raw, client_ready, parse, ready, server_ready};
use mcp_sansio::schema::{InputRequest, InputResponse, InputResponses, ListRootsResult, Root};
use mcp_sansio::session::InputId;
use mcp_sansio::session::Role;
use mcp_sansio::testing::{Chunking, Pair, Side};
use mcp_sansio::{
    ClientConfig, ClientEvent, CloseReason, EraMode, Implementation, ProtocolVersion,
    RequestOptions, SendError, ServerConfig, ServerEvent,
};

fn client_caps() -> Value {
    json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}})
}

fn server_caps() -> Value {
    json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {},
        "logging": {},
        "completions": {}
    })
}

// --- 1. the handshake, step by step ------------------------------------------------------

#[test]
fn handshake_in_every_legacy_version() {
    for v in LEGACY {
        let mut server = Pair::server_config();
        server.instructions = Some("Call `echo` first.".into());
        let mut pair = Pair::new(origin(), Pair::client_config(EraMode::Legacy(v)), server);

        // Step 1: initialize reaches the server; its answer is held back.
        pair.pause(Side::Client);
        pair.drive();
        let init = &pair.sent_by(Side::Client)[0];
        assert_eq!(init["jsonrpc"], "2.0");
        assert_eq!(init["method"], "initialize");
        assert!(init["id"].is_number() || init["id"].is_string(), "{init}");
        assert_eq!(init["params"]["protocolVersion"], v.as_str());
        assert_eq!(init["params"]["capabilities"], client_caps());
        assert_eq!(
            init["params"]["clientInfo"],
            json!({"name": "test-client", "version": "1.0.0"})
        );
        let result = &pair.sent_by(Side::Server)[0];
        assert_eq!(result["id"], init["id"]);
        assert_eq!(result["result"]["protocolVersion"], v.as_str());
        assert_eq!(result["result"]["capabilities"], server_caps());
        assert_eq!(
            result["result"]["serverInfo"],
            json!({"name": "test-server", "version": "1.0.0"})
        );
        assert_eq!(result["result"]["instructions"], "Call `echo` first.");
        assert!(
            pair.server_events().is_empty(),
            "no Ready before initialized"
        );
        assert!(pair.client_events().is_empty());
        assert_eq!(pair.server.version(), Some(v));
        let peer = pair.server.peer().expect("the server knows the client");
        assert_eq!(peer.version, v);
        assert_eq!(peer.info.as_ref().unwrap().name, "test-client");
        assert_eq!(peer.info.as_ref().unwrap().version, "1.0.0");
        assert_eq!(*peer.capabilities, client_caps());
        assert_eq!(peer.instructions, None);

        // Step 2: the result reaches the client; its initialized notification is held back.
        pair.pause(Side::Server);
        pair.resume(Side::Client);
        pair.drive();
        let events = pair.client_events();
        assert!(
            matches!(events.as_slice(), [ClientEvent::Ready { version }] if *version == v),
            "{v}: {events:?}"
        );
        assert_eq!(pair.client.version(), Some(v));
        let peer = pair.client.peer().expect("the client knows the server");
        assert_eq!(peer.version, v);
        assert_eq!(peer.info.as_ref().unwrap().name, "test-server");
        assert_eq!(*peer.capabilities, server_caps());
        assert_eq!(peer.instructions.as_deref(), Some("Call `echo` first."));
        assert!(
            pair.server_events().is_empty(),
            "initialized not delivered yet"
        );

        // Step 3: initialized reaches the server.
        pair.resume(Side::Server);
        pair.drive();
        let events = pair.server_events();
        assert!(
            matches!(events.as_slice(), [ServerEvent::Ready { version }] if *version == v),
            "{v}: {events:?}"
        );
        let client_sent = pair.sent_by(Side::Client);
        assert_eq!(client_sent.len(), 2);
        assert_eq!(client_sent[1]["method"], "notifications/initialized");
        assert!(
            client_sent[1].get("id").is_none(),
            "a notification has no id"
        );
        assert_eq!(pair.sent_by(Side::Server).len(), 1);
        assert!(pair.client_events().is_empty());
    }
}

#[test]
fn no_instructions_member_when_none_configured() {
    let pair = ready(ProtocolVersion::V2025_06_18);
    let result = &pair.sent_by(Side::Server)[0]["result"];
    assert!(result.get("instructions").is_none(), "{result}");
    assert_eq!(pair.client.peer().unwrap().instructions, None);
}

// --- 2. version negotiation --------------------------------------------------------------

#[test]
fn server_echoes_a_version_it_supports() {
    for v in LEGACY {
        let mut server = Pair::server_config();
        server.versions = LEGACY.to_vec();
        let pair = legacy_kit::ready_with(Pair::client_config(EraMode::Legacy(v)), server);
        assert_eq!(
            pair.sent_by(Side::Server)[0]["result"]["protocolVersion"],
            v.as_str()
        );
        assert_eq!(pair.client.version(), Some(v));
        assert_eq!(pair.server.version(), Some(v));
    }
}

#[test]
fn server_answers_its_latest_legacy_version_when_the_clients_is_unsupported() {
    let mut server = Pair::server_config();
    server.versions = vec![
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2026_07_28,
    ];
    let mut pair = Pair::new(
        origin(),
        Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        server,
    );
    pair.drive();
    assert_eq!(
        pair.sent_by(Side::Server)[0]["result"]["protocolVersion"],
        "2025-03-26",
        "the latest legacy version, not the modern one"
    );
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Ready {
                version: ProtocolVersion::V2025_03_26
            }]
        ),
        "{events:?}"
    );
    let events = pair.server_events();
    assert!(
        matches!(
            events.as_slice(),
            [ServerEvent::Ready {
                version: ProtocolVersion::V2025_03_26
            }]
        ),
        "{events:?}"
    );
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2025_03_26));
}

#[test]
fn server_answers_its_latest_legacy_version_to_an_unknown_version() {
    let mut server = Raw::server(Pair::server_config(), origin());
    server.feed(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2099-01-01", "capabilities": {},
                   "clientInfo": {"name": "future", "version": "9"}}
    }));
    let out = server.out();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
}

fn legacy_client(v: ProtocolVersion) -> ClientConfig {
    Pair::client_config(EraMode::Legacy(v))
}

#[test]
fn client_closes_when_the_server_picks_a_version_it_does_not_support() {
    for bad in ["1999-01-01", "2026-07-28", ""] {
        let mut client = Raw::client(legacy_client(ProtocolVersion::V2025_11_25), origin());
        let init = client.out().remove(0);
        client.feed(&json!({
            "jsonrpc": "2.0", "id": init["id"], "result": {
                "protocolVersion": bad, "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"}
            }
        }));
        assert!(
            client.out().is_empty(),
            "{bad}: no initialized notification"
        );
        let events = client.events();
        match events.as_slice() {
            [
                ClientEvent::Closed {
                    reason: CloseReason::Handshake(why),
                },
            ] => assert!(why.contains(&format!("\"{bad}\"")), "{bad}: {why}"),
            other => panic!("{bad}: {other:?}"),
        }
        assert!(client.session.is_closed());
        assert_eq!(client.session.version(), None);
        assert_eq!(
            client.session.send_request_raw(
                client.now,
                "tools/list",
                None,
                RequestOptions::default()
            ),
            Err(SendError::Closed)
        );
    }
}

#[test]
fn client_accepts_an_older_legacy_version_than_it_offered() {
    let mut client = Raw::client(legacy_client(ProtocolVersion::V2025_11_25), origin());
    let init = client.out().remove(0);
    client.feed(&json!({
        "jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
            "serverInfo": {"name": "old", "version": "1"}
        }
    }));
    let events = client.events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Ready {
                version: ProtocolVersion::V2024_11_05
            }]
        ),
        "{events:?}"
    );
    assert_eq!(client.out()[0]["method"], "notifications/initialized");
}

#[test]
fn client_closes_when_initialize_is_refused() {
    let mut client = Raw::client(legacy_client(ProtocolVersion::V2025_06_18), origin());
    let init = client.out().remove(0);
    client.feed(&json!({
        "jsonrpc": "2.0", "id": init["id"],
        "error": {"code": -32602, "message": "Unsupported protocol version"}
    }));
    assert!(client.out().is_empty());
    match client.events().as_slice() {
        [
            ClientEvent::Closed {
                reason: CloseReason::Handshake(why),
            },
        ] => {
            assert!(why.contains("refused initialize"), "{why}");
            assert!(why.contains("Unsupported protocol version"), "{why}");
            assert!(why.contains("-32602"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    assert!(client.session.is_closed());
}

#[test]
fn client_closes_on_an_invalid_initialize_result() {
    let mut client = Raw::client(legacy_client(ProtocolVersion::V2025_06_18), origin());
    let init = client.out().remove(0);
    client.feed(&json!({
        "jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": "2025-06-18"}
    }));
    match client.events().as_slice() {
        [
            ClientEvent::Closed {
                reason: CloseReason::Handshake(why),
            },
        ] => assert!(why.contains("serverInfo"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn initialize_timing_out_closes_the_client() {
    let mut config = legacy_client(ProtocolVersion::V2025_11_25);
    config.timeouts.request = Some(Duration::from_secs(5));
    let mut client = Raw::client(config, origin());
    assert_eq!(client.out()[0]["method"], "initialize");
    let t0 = client.now;
    assert_eq!(
        client.session.poll_timeout(),
        Some(t0 + Duration::from_secs(5))
    );
    client
        .session
        .handle_timeout(t0 + Duration::from_millis(4999));
    assert!(client.events().is_empty());
    assert!(!client.session.is_closed());
    client.session.handle_timeout(t0 + Duration::from_secs(5));
    match client.events().as_slice() {
        [
            ClientEvent::Closed {
                reason: CloseReason::Handshake(why),
            },
        ] => assert!(why.contains("initialize"), "{why}"),
        other => panic!("{other:?}"),
    }
    // The client MUST NOT cancel its initialize request.
    assert!(client.out().is_empty());
    assert_eq!(client.session.poll_timeout(), None);
}

// --- 3. before the handshake completes ---------------------------------------------------

#[test]
fn server_refuses_requests_before_initialize_except_ping() {
    let mut server = Raw::server(Pair::server_config(), origin());
    server.feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let out = server.out();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], 1);
    assert_eq!(out[0]["error"]["code"], -32602);
    let message = out[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("initialize"), "{message}");
    assert!(message.contains("protocolVersion"), "{message}");
    assert!(server.events().is_empty());

    server.feed(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(
        server.out(),
        vec![json!({"jsonrpc": "2.0", "id": "p", "result": {}})]
    );
    assert!(server.events().is_empty(), "ping never reaches the app");

    // Neither changed the state: the handshake still works.
    let mut server = server_ready(
        Pair::server_config(),
        ProtocolVersion::V2025_06_18,
        json!({}),
    );
    server.feed(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert!(server.out().is_empty());
    assert!(
        matches!(server.events().as_slice(), [ServerEvent::Request(r)] if r.method == "tools/list")
    );
}

#[test]
fn client_cannot_send_before_ready() {
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    assert_eq!(
        pair.client
            .send_request_raw(pair.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::NotReady)
    );
    assert_eq!(
        pair.client
            .send_notification_raw("notifications/roots/list_changed", None),
        Err(SendError::NotReady)
    );
    // The refused commands left nothing behind: only the handshake goes out.
    pair.drive();
    let client_sent = pair.sent_by(Side::Client);
    let methods: Vec<_> = client_sent.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        methods,
        vec![json!("initialize"), json!("notifications/initialized")]
    );
    assert_eq!(pair.client.outbound_in_flight(), 0);
}

#[test]
fn server_cannot_send_requests_before_initialized() {
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    pair.pause(Side::Client);
    pair.drive();
    assert_eq!(pair.server.version(), Some(ProtocolVersion::V2025_11_25));
    // (ping is left out: the spec lets a server ping before `initialized`.)
    for method in ["roots/list", "sampling/createMessage", "elicitation/create"] {
        assert_eq!(
            pair.server
                .send_request_raw(pair.now, method, None, RequestOptions::default()),
            Err(SendError::NotReady),
            "{method}"
        );
    }
    // Logging before `initialized` is allowed.
    pair.server
        .send_notification_raw(
            "notifications/message",
            Some(&raw(json!({"level": "info", "data": "starting"}))),
        )
        .unwrap();
    pair.resume(Side::Client);
    pair.drive();
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Ready { .. }]
    ));
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready { .. }, ClientEvent::Notification(n)] if n.method == "notifications/message"
    ));
    assert!(
        pair.server
            .send_request_raw(pair.now, "roots/list", None, RequestOptions::default())
            .is_ok()
    );
}

/// The lifecycle text of every legacy version: "The client SHOULD NOT send requests other
/// than pings before the server has responded to the initialize request" and "The server
/// SHOULD NOT send requests other than pings and logging before receiving the initialized
/// notification". So pings cross the handshake, and are answered.
#[test]
fn pings_may_be_sent_before_the_handshake_completes() {
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    let client_ping = pair
        .client
        .send_request_raw(pair.now, "ping", None, RequestOptions::default())
        .expect("a client may ping before the initialize result");
    // Hold everything bound for the client: the server answers initialize but never hears
    // `notifications/initialized` yet.
    pair.pause(Side::Client);
    pair.drive();
    assert_eq!(pair.server.version(), Some(ProtocolVersion::V2025_11_25));
    let server_ping = pair
        .server
        .send_request_raw(pair.now, "ping", None, RequestOptions::default())
        .expect("a server may ping before notifications/initialized");
    assert_eq!(
        pair.server
            .send_request_raw(pair.now, "roots/list", None, RequestOptions::default()),
        Err(SendError::NotReady),
        "other requests wait for notifications/initialized"
    );
    pair.resume(Side::Client);
    pair.drive();
    let client_events = pair.client_events();
    assert!(
        client_events.iter().any(|e| matches!(e,
            ClientEvent::Response { id, outcome: Ok(r) } if *id == client_ping && r.get() == "{}")),
        "{client_events:?}"
    );
    let server_events = pair.server_events();
    assert!(
        server_events.iter().any(|e| matches!(e,
            ServerEvent::Response { id, outcome: Ok(r) } if *id == server_ping && r.get() == "{}")),
        "{server_events:?}"
    );
}

#[test]
fn second_initialize_is_refused() {
    for initialized in [false, true] {
        let mut server = Raw::server(Pair::server_config(), origin());
        server.feed(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}
        }));
        assert_eq!(server.out().len(), 1);
        if initialized {
            server.feed(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            assert_eq!(server.events().len(), 1);
        }
        server.feed(&json!({
            "jsonrpc": "2.0", "id": 2, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {"roots": {}},
                       "clientInfo": {"name": "other", "version": "2"}}
        }));
        let out = server.out();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["id"], 2);
        assert_eq!(out[0]["error"]["code"], -32600);
        assert!(server.events().is_empty());
        assert_eq!(server.session.version(), Some(ProtocolVersion::V2025_06_18));
        let peer = server.session.peer().unwrap();
        assert_eq!(peer.info.as_ref().unwrap().name, "c");
        assert_eq!(*peer.capabilities, json!({}));
    }
}

#[test]
fn client_answers_only_ping_before_ready() {
    let mut client = Raw::client(legacy_client(ProtocolVersion::V2025_11_25), origin());
    let _ = client.out();
    client.feed(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    client.feed(&json!({"jsonrpc": "2.0", "id": 10, "method": "roots/list"}));
    let out = client.out();
    assert_eq!(out[0], json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert_eq!(out[1]["id"], 10);
    assert_eq!(out[1]["error"]["code"], -32600);
    assert!(client.events().is_empty());
}

#[test]
fn a_second_initialized_notification_is_ignored() {
    let mut server = server_ready(
        Pair::server_config(),
        ProtocolVersion::V2025_03_26,
        json!({}),
    );
    server.feed(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(server.events().is_empty());
    assert!(server.out().is_empty());
    assert_eq!(server.session.version(), Some(ProtocolVersion::V2025_03_26));
}

#[test]
fn initialized_before_initialize_does_not_make_the_server_ready() {
    let mut server = Raw::server(Pair::server_config(), origin());
    server.feed(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(server.events().is_empty());
    assert!(server.out().is_empty());
    assert_eq!(server.session.version(), None);
    assert_eq!(
        server
            .session
            .send_request_raw(server.now, "ping", None, RequestOptions::default()),
        Err(SendError::NotReady)
    );
}

// --- 12. error responses without a known id ----------------------------------------------

#[test]
fn unknown_error_id_is_null_before_2025_11_25_and_omitted_from_it() {
    for v in LEGACY {
        for side in [Side::Server, Side::Client] {
            match side {
                Side::Server => unknown_error_id(
                    v,
                    side,
                    server_ready(Pair::server_config(), v, client_caps()),
                ),
                _ => unknown_error_id(v, side, client_ready(legacy_client(v), v, server_caps())),
            }
        }
    }
}

/// The body of the test above for one side
fn unknown_error_id<R: Role>(v: ProtocolVersion, side: Side, mut peer: Raw<R>) {
    for line in [r#"{"jsonrpc":"2.0","id":"#, "42"] {
        peer.feed_line(line);
        let out = peer.out_lines();
        assert_eq!(out.len(), 1, "{v} {side:?} {line}: {out:?}");
        let error = parse(&out[0]);
        let code = error["error"]["code"].as_i64().unwrap();
        assert!(code == -32700 || code == -32600, "{error}");
        if v == ProtocolVersion::V2025_11_25 {
            assert!(!out[0].contains("\"id\""), "{v} {side:?}: {}", out[0]);
            assert!(error.get("id").is_none());
        } else {
            assert!(out[0].contains(r#""id":null"#), "{v} {side:?}: {}", out[0]);
            assert_eq!(error["id"], Value::Null);
            assert!(error.as_object().unwrap().contains_key("id"));
        }
    }
    assert_eq!(peer.session.stats().invalid_messages, 2);
    assert!(peer.events().is_empty());
    assert!(!peer.session.is_closed());
}

// --- independence from chunking ----------------------------------------------------------

/// A scripted flow: handshake, a call with progress, a server-to-client request, a notification
fn scripted_flow(chunking: Chunking) -> (Vec<(Side, String)>, Vec<String>) {
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    pair.chunking = chunking;
    pair.drive();
    let mut log: Vec<String> = Vec::new();
    fn take(pair: &mut Pair, log: &mut Vec<String>) {
        for e in pair.client_events() {
            log.push(format!("client {e:?}"));
        }
        for e in pair.server_events() {
            log.push(format!("server {e:?}"));
        }
    }
    take(&mut pair, &mut log);
    let call = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(
                json!({"name": "slow", "arguments": {"text": "héllo\n✓"}}),
            )),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    pair.drive();
    let mut events = pair.server_events();
    let Some(ServerEvent::Request(request)) = events.pop() else {
        panic!("{events:?}")
    };
    pair.server
        .inbound(request.responder.id())
        .report_progress(&mcp_sansio::Progress::new(1.0).total(2.0).message("half"))
        .unwrap();
    let roots = pair
        .server
        .send_request_raw(pair.now, "roots/list", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let mut events = pair.client_events();
    let Some(ClientEvent::InputRequired {
        id: InputId::Live(roots_request),
        requests,
    }) = events.pop()
    else {
        panic!("{events:?}")
    };
    assert!(
        matches!(
            requests.get("roots/list"),
            Some(InputRequest::ListRoots(None))
        ),
        "{requests:?}"
    );
    assert_eq!(requests.len(), 1, "{requests:?}");
    log.extend(events.iter().map(|e| format!("client {e:?}")));
    log.push(format!("client input {requests:?}"));
    let answer = ListRootsResult::new(vec![Root::new("file:///tmp")]);
    pair.client
        .provide_input(
            pair.now,
            InputId::Live(roots_request),
            InputResponses::from([("roots/list".to_owned(), InputResponse::ListRoots(answer))]),
        )
        .unwrap();
    pair.server
        .send_notification_raw(
            "notifications/message",
            Some(&raw(json!({"level": "info", "data": "x"}))),
        )
        .unwrap();
    pair.server
        .respond_raw(request.responder, &raw(json!({"content": []})))
        .unwrap();
    pair.drive();
    take(&mut pair, &mut log);
    log.push(format!("{call:?} {roots:?}"));
    (pair.take_transcript(), log)
}

#[test]
fn handshake_and_calls_do_not_depend_on_chunking() {
    let whole = scripted_flow(Chunking::Whole);
    // The flow itself did what it should, so the comparison below compares something.
    assert_eq!(whole.0.len(), 9, "{:#?}", whole.0);
    // The client answered the live roots/list with the roots it was given.
    assert!(
        whole.0.iter().any(|(side, text)| *side == Side::Client
            && parse(text)["result"] == json!({"roots": [{"uri": "file:///tmp"}]})),
        "{:#?}",
        whole.0
    );
    let kinds: Vec<&str> = whole
        .1
        .iter()
        .map(|l| l.split(['(', ' ', '{']).take(2).last().unwrap())
        .collect();
    assert!(kinds.contains(&"Progress"), "{:#?}", whole.1);
    assert!(kinds.contains(&"Notification"), "{:#?}", whole.1);
    assert_eq!(kinds.iter().filter(|k| **k == "Response").count(), 2);
    for chunking in [
        Chunking::ByteByByte,
        Chunking::Random(1),
        Chunking::Random(0xDEAD_BEEF),
    ] {
        let other = scripted_flow(chunking);
        assert_eq!(other.0, whole.0, "{chunking:?}: transcript");
        assert_eq!(other.1, whole.1, "{chunking:?}: events");
    }
}

#[test]
fn server_config_versions_without_legacy_refuse_initialize() {
    let mut config = ServerConfig::new(Implementation::new("modern-only", "1"));
    config.versions = vec![ProtocolVersion::V2026_07_28];
    let mut server = Raw::server(config, origin());
    server.feed(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}
    }));
    let out = server.out();
    assert_eq!(out[0]["id"], 1);
    assert!(out[0]["error"].is_object(), "{out:?}");
    assert_eq!(server.session.version(), None);
}
