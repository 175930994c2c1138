//! The HTTP layer's shares of the server: requests in progress capped per 2025 session, per
//! connection, per client address and in all (429 and 503 with `Retry-After`, never a 200
//! carrying -32603); at `max_sessions` the least recently used idle session makes room for a
//! new client, a busy one never; and a 2025 session answers only the principal that created
//! it

use crate::http_kit;

use std::time::Duration;

use http_kit::{Kit, modern};
use mcp_sansio::http::{ExchangeId, HttpConfig, HttpResponse, Principal, Source};
use serde_json::{Value, json};

fn from(addr: &str) -> Source {
    Source::from_peer(addr.parse().unwrap())
}

fn modern_call(id: i64, tool: &str) -> (Vec<(&'static str, String)>, Value) {
    let headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", tool.to_owned()),
    ];
    let body = modern(id, "tools/call", json!({"name": tool, "arguments": {}}));
    (headers, body)
}

/// A 2026 `tools/call` of `tool` from `source`
fn call_from(
    kit: &mut Kit,
    source: Source,
    id: i64,
    tool: &str,
) -> Result<HttpResponse, ExchangeId> {
    kit.source = source;
    let (headers, body) = modern_call(id, tool);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    kit.post(&headers, &body)
}

/// A refusal past a cap: the status, `Retry-After`, and a JSON-RPC error with the id
fn refused(r: Result<HttpResponse, ExchangeId>, status: u16, id: i64) {
    let r = r.expect("a complete refusal, not an open exchange");
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("Retry-After"), Some("1"));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["id"], id);
    assert!(body["error"]["code"].is_i64(), "{body}");
}

/// An open exchange that was answered with a result
fn answered(kit: &Kit, r: Result<HttpResponse, ExchangeId>) {
    let exchange = r.expect_err("an open exchange");
    let c = kit.collected(exchange);
    assert!(c.ended, "answered");
    assert_eq!(c.status(), 200);
    let last = c.messages().last().cloned().unwrap();
    assert!(last.get("result").is_some(), "{last}");
}

fn caps(per_peer: usize, total: usize) -> HttpConfig {
    let mut config = HttpConfig::default();
    config.max_in_flight_per_peer = per_peer;
    config.max_in_flight = total;
    config
}

#[test]
fn one_client_address_cannot_take_the_shared_2026_capacity() {
    let mut kit = Kit::with_config(caps(2, 3));
    let a1 = call_from(&mut kit, from("10.0.0.1:1000"), 1, "slow").unwrap_err();
    let _a2 = call_from(&mut kit, from("10.0.0.1:1001"), 2, "slow").unwrap_err();
    assert_eq!(kit.http.in_flight(), 2);
    // A third from the same address (another connection): 429, its handler never runs.
    refused(
        call_from(&mut kit, from("10.0.0.1:1002"), 3, "slow"),
        429,
        3,
    );
    assert_eq!(kit.held.len(), 2);
    // Another client is served.
    let r = call_from(&mut kit, from("10.0.0.2:1000"), 4, "echo");
    answered(&kit, r);
    // The server is full (3 in progress): 503 for everyone.
    let _b = call_from(&mut kit, from("10.0.0.2:1000"), 5, "slow").unwrap_err();
    refused(
        call_from(&mut kit, from("10.0.0.3:1000"), 6, "echo"),
        503,
        6,
    );
    // A client closing its response cancels its request and frees its share.
    kit.close(a1);
    assert_eq!(kit.cancelled.len(), 1);
    assert_eq!(kit.http.in_flight(), 2);
    let r = call_from(&mut kit, from("10.0.0.3:1000"), 7, "echo");
    answered(&kit, r);
    // Answered requests free theirs too: nothing is left in progress.
    while let Some(name) = kit.held.first().map(|h| h.2.clone()) {
        kit.finish(&name, "done");
    }
    assert_eq!(kit.http.in_flight(), 0);
    let r = call_from(&mut kit, from("10.0.0.1:1000"), 8, "echo");
    answered(&kit, r);
}

#[test]
fn a_connection_has_its_own_cap_and_unknown_sources_only_the_global_one() {
    let mut config = caps(100, 4);
    config.max_in_flight_per_connection = 1;
    let mut kit = Kit::with_config(config);
    let _a = call_from(&mut kit, from("10.0.0.1:1000"), 1, "slow").unwrap_err();
    refused(
        call_from(&mut kit, from("10.0.0.1:1000"), 2, "slow"),
        429,
        2,
    );
    let _b = call_from(&mut kit, from("10.0.0.1:1001"), 3, "slow").unwrap_err();
    // Without a peer address only the endpoint's cap counts.
    let _c = call_from(&mut kit, Source::unknown(), 4, "slow").unwrap_err();
    let _d = call_from(&mut kit, Source::unknown(), 5, "slow").unwrap_err();
    refused(call_from(&mut kit, Source::unknown(), 6, "slow"), 503, 6);
}

#[test]
fn the_2026_wire_never_answers_overload_inside_a_200() {
    // The shared session's own cap (256 + 128 by default) no longer applies to it: the
    // HTTP caps do, with statuses.
    let mut config = caps(1000, 600);
    config.max_in_flight_per_connection = 1000;
    let mut kit = Kit::with_config(config);
    for id in 0..600 {
        let source = from(&format!("10.0.{}.{}:1", id / 200, id % 200));
        let r = call_from(&mut kit, source, id, "slow");
        assert!(r.is_err(), "request {id} is in progress: {r:?}");
    }
    refused(
        call_from(&mut kit, from("10.9.9.9:1"), 600, "slow"),
        503,
        600,
    );
    assert_eq!(kit.held.len(), 600);
    while let Some(name) = kit.held.first().map(|h| h.2.clone()) {
        kit.finish(&name, "done");
    }
    assert_eq!(kit.http.in_flight(), 0);
}

fn on(sid: &str) -> Vec<(&str, &str)> {
    vec![
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

fn legacy_call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}})
}

fn list(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

#[test]
fn legacy_requests_count_too_and_a_cancellation_frees_its_share() {
    let mut kit = Kit::with_config(caps(2, 10));
    kit.source = from("10.0.0.1:1000");
    let sid = kit.initialize();
    let first = kit.post(&on(&sid), &legacy_call(1, "slow")).unwrap_err();
    let _second = kit.post(&on(&sid), &legacy_call(2, "slow")).unwrap_err();
    refused(kit.post(&on(&sid), &legacy_call(3, "slow")), 429, 3);
    // notifications/cancelled ends the request: its share is free, its response ends.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "no longer needed"}});
    assert_eq!(kit.post(&on(&sid), &cancel).unwrap().status, 202);
    assert_eq!(kit.cancelled.len(), 1);
    assert!(
        kit.collected(first).ended,
        "the cancelled request's response ended"
    );
    assert_eq!(kit.http.in_flight(), 1);
    let _third = kit.post(&on(&sid), &legacy_call(4, "slow")).unwrap_err();
    assert_eq!(kit.http.in_flight(), 2);
    // Deleting the session frees the rest.
    assert_eq!(kit.request("DELETE", &on(&sid), "").unwrap().status, 200);
    assert_eq!(kit.http.in_flight(), 0);
}

#[test]
fn a_legacy_session_past_its_own_cap_gets_429_not_a_200() {
    let mut kit = Kit::new();
    let mut server_config = http_kit::server_config();
    server_config.limits.max_in_flight_inbound = 2;
    kit.http = mcp_sansio::http::HttpServer::new(
        std::sync::Arc::new(HttpConfig::default()),
        std::sync::Arc::new(server_config),
        kit.now,
    );
    let sid = kit.initialize();
    let _a = kit.post(&on(&sid), &legacy_call(1, "slow")).unwrap_err();
    let _b = kit.post(&on(&sid), &legacy_call(2, "slow")).unwrap_err();
    refused(kit.post(&on(&sid), &legacy_call(3, "slow")), 429, 3);
    // Another session has its own.
    let other = kit.initialize();
    let _c = kit.post(&on(&other), &legacy_call(1, "slow")).unwrap_err();
    assert_eq!(kit.held.len(), 3);
}

fn init(kit: &mut Kit) -> Result<HttpResponse, ExchangeId> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    kit.post(&[], &init)
}

fn ok(kit: &mut Kit, sid: &str, id: i64) -> bool {
    match kit.post(&on(sid), &list(id)) {
        Err(exchange) => kit.collected(exchange).status() == 200,
        Ok(r) => {
            assert_eq!(r.status, 404, "{r:?}");
            false
        }
    }
}

#[test]
fn at_max_sessions_the_least_recently_used_idle_session_makes_room() {
    let mut config = HttpConfig::default();
    config.max_sessions = 3;
    let mut kit = Kit::with_config(config);
    let a = kit.initialize();
    let b = kit.initialize();
    let c = kit.initialize();
    assert!(
        ok(&mut kit, &a, 1),
        "a is used: b is now the least recently used"
    );
    let d = kit.initialize();
    assert_eq!(kit.http.session_count(), 3);
    assert_eq!(kit.closed.len(), 1, "one session closed for the new client");
    assert!(!ok(&mut kit, &b, 2), "b was evicted: 404");
    for sid in [&a, &c, &d] {
        assert!(ok(&mut kit, sid, 3), "{sid} lives");
    }
    // A flood of initializes never locks new clients out: each evicts the oldest idle one.
    for _ in 0..10 {
        kit.initialize();
    }
    assert_eq!(kit.http.session_count(), 3);
    assert_eq!(kit.closed.len(), 11);
}

#[test]
fn a_session_with_work_in_flight_is_never_evicted() {
    let mut config = HttpConfig::default();
    config.max_sessions = 2;
    let mut kit = Kit::with_config(config);
    let calling = kit.initialize();
    let streaming = kit.initialize();
    // One has a call in progress, the other an open GET stream: both are busy.
    let call = kit
        .post(&on(&calling), &legacy_call(1, "slow"))
        .unwrap_err();
    // Its response closing does not end the call on the 2025 wire: still busy.
    kit.close(call);
    let mut h = on(&streaming);
    h.push(("Accept", "text/event-stream"));
    let get = kit.request("GET", &h, "").unwrap_err();
    let r = init(&mut kit).unwrap();
    assert_eq!(r.status, 503);
    assert_eq!(r.header("Retry-After"), Some("1"));
    assert!(kit.closed.is_empty());
    // The call ends: that session is idle now and makes room.
    kit.finish("slow", "done");
    let r = init(&mut kit);
    assert_eq!(kit.collected(r.unwrap_err()).status(), 200);
    assert_eq!(kit.closed.len(), 1);
    assert!(!ok(&mut kit, &calling, 2), "the idle one went");
    // Again: the newest session is the only idle one; the streaming one stays.
    let r = init(&mut kit);
    assert_eq!(kit.collected(r.unwrap_err()).status(), 200);
    assert_eq!(kit.closed.len(), 2);
    assert!(!kit.collected(get).ended, "the streaming one stays");
    assert!(ok(&mut kit, &streaming, 3));
}

#[test]
fn idle_expiry_still_closes_sessions() {
    let mut config = HttpConfig::default();
    config.idle_timeout = Duration::from_secs(60);
    let mut kit = Kit::with_config(config);
    kit.initialize();
    kit.advance(Duration::from_secs(61));
    assert_eq!(kit.http.session_count(), 0);
}

fn user(subject: &str) -> Option<Principal> {
    Some(Principal::new(Some(subject.into()), Some("app".into())))
}

#[test]
fn a_session_answers_only_the_principal_that_created_it() {
    let mut kit = Kit::new();
    let alice = from("10.0.0.1:1000").with_principal(user("alice"));
    let bob = from("10.0.0.1:1000").with_principal(user("bob"));
    let other_app = from("10.0.0.1:1000").with_principal(Some(Principal::new(
        Some("alice".into()),
        Some("other".into()),
    )));
    kit.source = alice.clone();
    let sid = kit.initialize();
    assert!(ok(&mut kit, &sid, 1), "its creator uses it");
    for stranger in [bob, other_app, from("10.0.0.1:1000")] {
        kit.source = stranger;
        let r = kit.post(&on(&sid), &list(2)).unwrap();
        assert_eq!((r.status, r.error_code()), (404, Some(-32600)));
        let mut h = on(&sid);
        h.push(("Accept", "text/event-stream"));
        assert_eq!(kit.request("GET", &h, "").unwrap().status, 404);
        assert_eq!(kit.request("DELETE", &on(&sid), "").unwrap().status, 404);
    }
    assert_eq!(kit.http.session_count(), 1, "a stranger cannot delete it");
    kit.source = alice;
    assert!(ok(&mut kit, &sid, 3), "still its creator's");
}

#[test]
fn a_call_that_just_ended_counts_as_recent_use() {
    let mut config = HttpConfig::default();
    config.max_sessions = 2;
    let mut kit = Kit::with_config(config);
    let a = kit.initialize();
    let b = kit.initialize();
    let _call = kit.post(&on(&a), &legacy_call(1, "slow")).unwrap_err();
    assert!(ok(&mut kit, &b, 2), "b is used while a's call runs");
    kit.finish("slow", "done");
    // a's call ended after b's use: b is the least recently used.
    let r = init(&mut kit);
    assert_eq!(kit.collected(r.unwrap_err()).status(), 200);
    assert!(!ok(&mut kit, &b, 3), "b went");
    assert!(ok(&mut kit, &a, 4), "a stays");
}

#[test]
fn one_user_cannot_take_the_capacity_from_behind_any_address() {
    let mut config = caps(100, 100);
    config.max_in_flight_per_principal = 1;
    let mut kit = Kit::with_config(config);
    let alice_here = from("10.0.0.1:1000").with_principal(user("alice"));
    let alice_there = from("10.0.0.2:1000").with_principal(user("alice"));
    let bob_here = from("10.0.0.1:1001").with_principal(user("bob"));
    let held = call_from(&mut kit, alice_here, 1, "slow").unwrap_err();
    refused(call_from(&mut kit, alice_there.clone(), 2, "echo"), 429, 2);
    let r = call_from(&mut kit, bob_here, 3, "echo");
    answered(&kit, r);
    kit.close(held);
    let r = call_from(&mut kit, alice_there, 4, "echo");
    answered(&kit, r);
}
