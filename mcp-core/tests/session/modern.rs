//! Behaviour of the modern era (2026-07-28): discovery, per-request `_meta`, server-side
//! validation and error mapping, the result envelope, era rules, `EraMode::Auto` fallback,
//! and one server session serving both eras

use crate::common;
use crate::wire;

use mcp_sansio::testing::Side;
use std::time::Duration;

use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::session::role::{Client, Server};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, ClientEvent, CloseReason, EraMode, Implementation, ProtocolVersion, RequestOptions,
    SendError, ServerConfig, ServerEvent,
};
use wire::{MODERN, Raw, assert_error, initialize, meta_with, modern_request, request, request_of};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const CINFO: &str = "io.modelcontextprotocol/clientInfo";
const SINFO: &str = "io.modelcontextprotocol/serverInfo";

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

fn no_initialize_on_the_wire(pair: &Pair) {
    for (_, line) in pair.transcript() {
        let v = parse(line);
        assert_ne!(v["method"], "initialize", "{line}");
        assert_ne!(v["method"], "notifications/initialized", "{line}");
    }
}

fn modern_pair_ready() -> Pair {
    let mut pair = Pair::modern(origin());
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2026_07_28
        }]
    ));
    pair
}

fn raw_server() -> Raw<Server> {
    Raw::server(Pair::server_config(), origin())
}

// --- 1. the modern client ------------------------------------------------------------------

#[test]
fn modern_client_discovers_and_reads_the_server_from_the_result() {
    let mut server = Pair::server_config();
    server.instructions = Some("Use the echo tool.".into());
    let mut pair = Pair::new(origin(), Pair::client_config(EraMode::Modern), server);
    // Nothing is ready before the discover answer arrives.
    assert!(pair.client.peer().is_none());
    assert_eq!(pair.client.version(), None);
    assert_eq!(
        pair.client
            .send_request_raw(pair.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::NotReady)
    );
    pair.drive();

    let client_sent = pair.sent_by(Side::Client);
    assert_eq!(client_sent.len(), 1, "{client_sent:#?}");
    let discover = &client_sent[0];
    assert_eq!(discover["method"], "server/discover");
    let meta = &discover["params"]["_meta"];
    assert_eq!(meta[PV], MODERN);
    assert_eq!(
        meta[CAPS],
        json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}})
    );
    assert_eq!(meta[CINFO]["name"], "test-client");
    assert_eq!(meta[CINFO]["version"], "1.0.0");

    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Ready {
                version: ProtocolVersion::V2026_07_28
            }]
        ),
        "{events:?}"
    );
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2026_07_28));
    let peer = pair.client.peer().expect("known after discovery");
    assert_eq!(peer.version, ProtocolVersion::V2026_07_28);
    assert_eq!(*peer.capabilities, Pair::server_config().capabilities);
    let info = peer
        .info
        .as_ref()
        .expect("serverInfo from the result _meta");
    assert_eq!(info.name, "test-server");
    assert_eq!(info.version, "1.0.0");
    assert_eq!(peer.instructions.as_deref(), Some("Use the echo tool."));
    // The server core answered discover itself; a modern server has no Ready moment.
    assert!(pair.server_events().is_empty());
    no_initialize_on_the_wire(&pair);
}

#[test]
fn server_info_is_read_from_the_result_meta_of_a_foreign_server() {
    let mut c = Raw::client(Pair::client_config(EraMode::Modern), origin());
    let discover = c.one_out();
    c.feed(&json!({"jsonrpc": "2.0", "id": discover["id"], "result": {
        "resultType": "complete",
        "supportedVersions": ["2099-01-01", MODERN],
        "capabilities": {"tools": {}},
        "ttlMs": 1000, "cacheScope": "private",
        "_meta": {SINFO: {"name": "foreign", "version": "9.9"}},
    }}));
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2026_07_28
        }]
    ));
    let peer = c.session.peer().unwrap();
    assert_eq!(peer.info.as_ref().unwrap().name, "foreign");
    assert_eq!(*peer.capabilities, json!({"tools": {}}));
    assert_eq!(peer.instructions, None);
    assert!(
        c.out().is_empty(),
        "no initialized notification in the modern era"
    );
}

#[test]
fn every_modern_request_carries_the_meta_keys_and_keeps_the_apps_meta() {
    let mut pair = modern_pair_ready();
    let a = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({
                "name": "echo",
                "_meta": {"com.example/trace": "abc", "progressToken": "mine"}
            }))),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    let b = pair
        .client
        .send_request_raw(pair.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    let c = pair
        .client
        .send_request_raw(
            pair.now,
            "prompts/get",
            Some(raw(json!({"name": "p", "_meta": {PV: "1999-01-01"}}))),
            RequestOptions::default(),
        )
        .unwrap();
    let d = pair
        .client
        .send_request_raw(
            pair.now,
            "resources/list",
            Some(raw(json!({"cursor": "x"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();

    let sent = pair.sent_by(Side::Client);
    let by_id = |id: mcp_sansio::OutboundId| -> Value {
        sent.iter()
            .find(|m| m["id"] == id.wire_id())
            .cloned()
            .unwrap_or_else(|| panic!("{id} not on the wire"))
    };
    for id in [a, b, c, d] {
        let m = by_id(id);
        let meta = &m["params"]["_meta"];
        assert_eq!(meta[PV], MODERN, "{m}");
        assert_eq!(meta[CAPS]["sampling"], json!({}), "{m}");
        assert_eq!(meta[CINFO]["name"], "test-client", "{m}");
    }
    let ma = by_id(a);
    assert_eq!(ma["params"]["name"], "echo");
    assert_eq!(ma["params"]["_meta"]["com.example/trace"], "abc");
    // The core mints the progress token (the wire id) and it replaces the app's own.
    assert_eq!(ma["params"]["_meta"]["progressToken"], json!(a.wire_id()));
    let mb = by_id(b);
    assert!(mb["params"]["_meta"].get("progressToken").is_none(), "{mb}");
    // The core owns the era's keys: an app's value does not survive.
    assert_eq!(by_id(c)["params"]["_meta"][PV], MODERN);
    assert_eq!(by_id(d)["params"]["cursor"], "x");

    let requests: Vec<_> = pair.server_events().into_iter().map(request_of).collect();
    assert_eq!(requests.len(), 4);
    assert!(requests[0].wants_progress);
    assert!(!requests[1].wants_progress);
    for r in &requests {
        assert_eq!(r.version, ProtocolVersion::V2026_07_28);
        assert_eq!(
            *r.peer_capabilities,
            Pair::client_config(EraMode::Modern).capabilities
        );
    }
    no_initialize_on_the_wire(&pair);
}

#[test]
fn modern_progress_round_trip() {
    let mut pair = modern_pair_ready();
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "slow"}))),
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    pair.drive();
    let r = request_of(pair.server_events().pop().unwrap());
    pair.server
        .inbound(r.responder.id())
        .report_progress(&mcp_sansio::Progress::new(0.5).total(1.0))
        .unwrap();
    pair.drive();
    match pair.client_events().as_slice() {
        [ClientEvent::Progress { id: got, progress }] => {
            assert_eq!(*got, id);
            assert_eq!(progress.progress, 0.5);
            assert_eq!(progress.total, Some(1.0));
        }
        other => panic!("{other:?}"),
    }
}

// --- 2. server validation of modern requests --------------------------------------------

#[test]
fn missing_meta_or_version_is_invalid_params() {
    let mut s = raw_server();
    let cases = [
        (json!(1), request(json!(1), "tools/list", json!({}))),
        (
            json!("a"),
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list"}),
        ),
        (
            json!(2),
            request(json!(2), "tools/list", json!({"_meta": {}})),
        ),
        (
            json!(3),
            request(
                json!(3),
                "tools/list",
                json!({"_meta": {CAPS: {}, CINFO: {"name": "x", "version": "1"}}}),
            ),
        ),
    ];
    for (id, line) in cases {
        s.feed(&line);
        assert_error(&s.one_out(), &id, -32602);
    }
    assert!(s.events().is_empty());
}

#[test]
fn missing_or_non_object_capabilities_is_invalid_params() {
    let mut s = raw_server();
    let bad_caps = [
        None,
        Some(json!(null)),
        Some(json!("x")),
        Some(json!([])),
        Some(json!(1)),
    ];
    for (i, caps) in bad_caps.into_iter().enumerate() {
        let mut meta = json!({PV: MODERN});
        if let Some(c) = caps {
            meta[CAPS] = c;
        }
        let id = json!(format!("req-{i}"));
        s.feed(&request(id.clone(), "tools/list", json!({"_meta": meta})));
        assert_error(&s.one_out(), &id, -32602);
    }
    assert!(s.events().is_empty());
    // clientInfo is optional.
    s.feed(&request(
        json!(9),
        "tools/list",
        json!({"_meta": {PV: MODERN, CAPS: {}}}),
    ));
    assert!(matches!(s.events().as_slice(), [ServerEvent::Request(_)]));
}

#[test]
fn unknown_version_is_32022_with_supported_and_requested() {
    let mut s = raw_server();
    s.feed(&request(
        json!(7),
        "tools/list",
        json!({"_meta": meta_with("v999.0.0", json!({}))}),
    ));
    let error = assert_error(&s.one_out(), &json!(7), -32022);
    assert_eq!(
        error["data"],
        json!({"supported": [MODERN], "requested": "v999.0.0"})
    );
    // `supported` is a subset of what discover advertises.
    s.feed(&modern_request(json!(8), "server/discover", json!({})));
    let discover = s.one_out();
    let advertised = discover["result"]["supportedVersions"]
        .as_array()
        .unwrap()
        .clone();
    for v in error["data"]["supported"].as_array().unwrap() {
        assert!(advertised.contains(v), "{v} not in {advertised:?}");
    }
}

#[test]
fn legacy_version_in_meta_is_32022() {
    let mut s = raw_server();
    for (i, v) in ["2025-11-25", "2024-11-05"].into_iter().enumerate() {
        s.feed(&request(
            json!(i),
            "tools/list",
            json!({"_meta": meta_with(v, json!({}))}),
        ));
        let error = assert_error(&s.one_out(), &json!(i), -32022);
        assert_eq!(error["data"]["requested"], v);
        assert_eq!(error["data"]["supported"], json!([MODERN]));
    }
    assert!(s.events().is_empty());
}

#[test]
fn methods_removed_in_2026_are_method_not_found() {
    // Pair::server_config declares logging and resources.subscribe, so only the era refuses.
    let mut s = raw_server();
    let removed = [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ];
    for (i, method) in removed.into_iter().enumerate() {
        let id = json!(format!("{method}-{i}"));
        let mut params = json!({"_meta": meta_with(MODERN, json!({}))});
        if method == "initialize" {
            // even with the legacy params as well
            params["protocolVersion"] = json!("2025-11-25");
            params["capabilities"] = json!({});
            params["clientInfo"] = json!({"name": "x", "version": "1"});
        }
        s.feed(&request(id.clone(), method, params));
        assert_error(&s.one_out(), &id, -32601);
    }
    assert!(s.events().is_empty());
    // The session did not become a legacy one.
    assert_eq!(s.session.version(), None);
    s.feed(&modern_request(json!(100), "tools/list", json!({})));
    let r = request_of(s.events().pop().unwrap());
    assert_eq!(r.version, ProtocolVersion::V2026_07_28);
}

#[test]
fn initialize_with_only_modern_meta_is_method_not_found() {
    let mut s = raw_server();
    s.feed(&modern_request(json!(1), "initialize", json!({})));
    assert_error(&s.one_out(), &json!(1), -32601);
    assert_eq!(s.session.version(), None);
}

#[test]
fn undeclared_server_capability_and_unknown_method_are_method_not_found() {
    let mut config = ServerConfig::new(Implementation::new("bare", "1"));
    config.capabilities = json!({"prompts": {}});
    let mut s = Raw::server(config, origin());
    for (i, method) in ["tools/list", "tools/call", "resources/read", "x/unknown"]
        .into_iter()
        .enumerate()
    {
        s.feed(&modern_request(json!(i), method, json!({"name": "a"})));
        assert_error(&s.one_out(), &json!(i), -32601);
    }
    assert!(s.events().is_empty());
    s.feed(&modern_request(json!(50), "prompts/list", json!({})));
    assert_eq!(request_of(s.events().pop().unwrap()).method, "prompts/list");
}

#[test]
fn server_discover_is_answered_by_the_core() {
    let mut config = Pair::server_config();
    config.instructions = Some("be nice".into());
    let mut s = Raw::server(config, origin());
    s.feed(&modern_request(json!("d1"), "server/discover", json!({})));
    let v = s.one_out();
    assert_eq!(v["id"], "d1");
    let r = &v["result"];
    assert_eq!(r["supportedVersions"], json!([MODERN]));
    assert_eq!(r["capabilities"], Pair::server_config().capabilities);
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].as_u64().is_some(), "{r}");
    assert!(
        ["public", "private"].contains(&r["cacheScope"].as_str().unwrap()),
        "{r}"
    );
    assert_eq!(r["_meta"][SINFO]["name"], "test-server");
    assert_eq!(r["_meta"][SINFO]["version"], "1.0.0");
    assert_eq!(r["instructions"], "be nice");
    assert!(s.events().is_empty(), "the application never sees discover");

    // Without instructions configured, none are sent.
    let mut s = raw_server();
    s.feed(&modern_request(json!(2), "server/discover", json!({})));
    assert!(s.one_out()["result"].get("instructions").is_none());
}

#[test]
fn server_discover_leaves_out_the_legacy_tasks_slot() {
    // A server declaring 2025-11-25 tasks and the 2026 extension: discover shows only the
    // extension (the 2026 capabilities have no `tasks`)
    let mut config = Pair::server_config();
    config.capabilities["tasks"] = json!({"requests": {"tools": {"call": {}}}});
    config.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    let mut s = Raw::server(config, origin());
    s.feed(&modern_request(json!(1), "server/discover", json!({})));
    let caps = &s.one_out()["result"]["capabilities"];
    assert!(caps.get("tasks").is_none(), "{caps}");
    assert_eq!(
        caps["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );
    assert!(caps.get("tools").is_some(), "{caps}");
}

#[test]
fn capabilities_are_per_request() {
    let mut s = raw_server();
    let with = |id: u64, caps: Value| {
        request(
            json!(id),
            "tools/call",
            json!({"name": "t", "_meta": meta_with(MODERN, caps)}),
        )
    };
    s.feed(&with(1, json!({"sampling": {}})));
    s.feed(&with(2, json!({})));
    s.feed(&with(3, json!({"elicitation": {"form": {}}})));
    let requests: Vec<_> = s.events().into_iter().map(request_of).collect();
    assert_eq!(requests.len(), 3);
    assert_eq!(*requests[0].peer_capabilities, json!({"sampling": {}}));
    assert_eq!(*requests[1].peer_capabilities, json!({}));
    assert_eq!(
        *requests[2].peer_capabilities,
        json!({"elicitation": {"form": {}}})
    );
    for r in &requests {
        assert_eq!(r.version, ProtocolVersion::V2026_07_28);
        assert!(!r.wants_progress);
    }
    // No request fixes the session's version or peer.
    assert_eq!(s.session.version(), None);
    assert!(s.session.peer().is_none());
}

#[test]
fn modern_progress_token_reaches_the_server_and_progress_goes_back() {
    let mut s = raw_server();
    let mut params = json!({"name": "t", "_meta": meta_with(MODERN, json!({}))});
    params["_meta"]["progressToken"] = json!("tok-1");
    s.feed(&request(json!(1), "tools/call", params));
    let r = request_of(s.events().pop().unwrap());
    assert!(r.wants_progress);
    s.session
        .inbound(r.responder.id())
        .report_progress(&mcp_sansio::Progress::new(1.0))
        .unwrap();
    let n = s.one_out();
    assert_eq!(n["method"], "notifications/progress");
    assert_eq!(n["params"]["progressToken"], "tok-1");
    assert_eq!(n["params"]["progress"], 1.0);
}

// --- 3. modern results ------------------------------------------------------------------

fn answer_modern(result: Value) -> Value {
    let mut s = raw_server();
    s.feed(&modern_request(
        json!(42),
        "tools/call",
        json!({"name": "t"}),
    ));
    let r = request_of(s.events().pop().unwrap());
    s.session.respond_raw(r.responder, &raw(result)).unwrap();
    let v = s.one_out();
    assert_eq!(v["id"], 42);
    v["result"].clone()
}

#[test]
fn modern_results_get_result_type_complete() {
    let r = answer_modern(json!({"content": [{"type": "text", "text": "hi"}]}));
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"][0]["text"], "hi");
    assert_eq!(r["_meta"][SINFO]["name"], "test-server");
    let r = answer_modern(json!({}));
    assert_eq!(r["resultType"], "complete");
}

#[test]
fn the_apps_result_type_is_kept() {
    let r = answer_modern(json!({
        "resultType": "input_required",
        "inputRequests": {"name": {"method": "elicitation/create", "params": {}}},
        "requestState": "s1",
    }));
    assert_eq!(r["resultType"], "input_required");
    assert_eq!(r["requestState"], "s1");
    assert_eq!(r["_meta"][SINFO]["name"], "test-server");
}

#[test]
fn the_apps_meta_is_kept_beside_server_info() {
    let r = answer_modern(json!({"content": [], "_meta": {"com.example/cost": 3}}));
    assert_eq!(r["_meta"]["com.example/cost"], 3);
    assert_eq!(r["_meta"][SINFO]["name"], "test-server");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["content"], json!([]));
}

#[test]
fn modern_errors_pass_through_unchanged() {
    let mut s = raw_server();
    s.feed(&modern_request(
        json!(5),
        "tools/call",
        json!({"name": "t"}),
    ));
    let r = request_of(s.events().pop().unwrap());
    s.session.respond_error(
        r.responder,
        &mcp_sansio::ErrorObject::new(-32021, "needs sampling")
            .with_data(&json!({"requiredCapabilities": {"sampling": {}}})),
    );
    let e = assert_error(&s.one_out(), &json!(5), -32021);
    assert_eq!(e["data"], json!({"requiredCapabilities": {"sampling": {}}}));
}

// --- 4. era rules -----------------------------------------------------------------------

#[test]
fn a_modern_server_session_never_sends_requests() {
    let mut s = raw_server();
    assert_eq!(
        s.session
            .send_request_raw(s.now, "roots/list", None, RequestOptions::default()),
        Err(SendError::NotReady)
    );
    s.feed(&modern_request(json!(1), "tools/list", json!({})));
    let _pending = s.events();
    for method in [
        "sampling/createMessage",
        "elicitation/create",
        "ping",
        "x/y",
    ] {
        assert_eq!(
            s.session
                .send_request_raw(s.now, method, None, RequestOptions::default()),
            Err(SendError::NotReady),
            "{method}"
        );
    }
    assert!(s.out().is_empty());
}

#[test]
fn a_modern_client_drops_requests_from_the_server() {
    let mut pair = modern_pair_ready();
    let before = pair.client.stats();
    pair.inject(
        Side::Client,
        b"{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"sampling/createMessage\",\"params\":{}}\n\
          {\"jsonrpc\":\"2.0\",\"id\":78,\"method\":\"ping\"}\n",
    );
    assert_eq!(
        pair.client.stats().dropped_messages,
        before.dropped_messages + 2
    );
    assert!(pair.client_events().is_empty());
    let client_sent: Vec<_> = pair.sent_by(Side::Client);
    assert_eq!(
        client_sent.len(),
        1,
        "only discover went out: {client_sent:#?}"
    );
    // Still working.
    let id = pair
        .client
        .send_request_raw(pair.now, "tools/list", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let r = request_of(pair.server_events().pop().unwrap());
    pair.server
        .respond_raw(r.responder, &raw(json!({"tools": []})))
        .unwrap();
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { id: got, outcome: Ok(_) }] if *got == id
    ));
}

#[test]
fn a_modern_client_may_not_send_removed_methods() {
    let mut pair = modern_pair_ready();
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let r = pair
            .client
            .send_request_raw(pair.now, method, None, RequestOptions::default());
        assert!(
            matches!(r, Err(SendError::NotAllowed { method: ref m, .. }) if m == method),
            "{method}: {r:?}"
        );
    }
    assert_eq!(pair.client.outbound_in_flight(), 0);
    pair.drive();
    assert_eq!(pair.sent_by(Side::Client).len(), 1);
}

// --- 5. EraMode::Auto and discovery failures ----------------------------------------------

fn legacy_only_server() -> ServerConfig {
    let mut s = Pair::server_config();
    s.versions = ProtocolVersion::ALL
        .into_iter()
        .filter(|v| v.era() == mcp_sansio::Era::Legacy)
        .collect();
    s
}

#[test]
fn auto_against_our_server_is_modern() {
    let mut pair = Pair::new(
        origin(),
        Pair::client_config(EraMode::Auto),
        Pair::server_config(),
    );
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2026_07_28
        }]
    ));
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2026_07_28));
    no_initialize_on_the_wire(&pair);
}

#[test]
fn auto_against_a_legacy_only_server_falls_back_to_initialize() {
    let mut pair = Pair::new(
        origin(),
        Pair::client_config(EraMode::Auto),
        legacy_only_server(),
    );
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Ready {
                version: ProtocolVersion::V2025_11_25
            }]
        ),
        "{events:?}"
    );
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2025_11_25));
    let methods: Vec<_> = pair
        .sent_by(Side::Client)
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        methods,
        ["server/discover", "initialize", "notifications/initialized"]
    );
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Ready {
            version: ProtocolVersion::V2025_11_25
        }]
    ));
    // Legacy from here on: no _meta keys, ping allowed.
    pair.client
        .send_request_raw(pair.now, "ping", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    let last = pair.sent_by(Side::Client).pop().unwrap();
    assert_eq!(last["method"], "ping");
    assert!(last.get("params").is_none_or(|p| p.get("_meta").is_none()));
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { outcome: Ok(_), .. }]
    ));
}

fn answer_initialize(c: &mut Raw<Client>, init: &Value, version: &str) {
    c.feed(&json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "old", "version": "0.1"},
    }}));
}

#[test]
fn auto_falls_back_when_discover_is_method_not_found() {
    let mut c = Raw::client(Pair::client_config(EraMode::Auto), origin());
    let discover = c.one_out();
    assert_eq!(discover["method"], "server/discover");
    c.feed(&json!({"jsonrpc": "2.0", "id": discover["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    assert!(c.events().is_empty());
    let init = c.one_out();
    assert_eq!(init["method"], "initialize");
    assert_ne!(init["id"], discover["id"], "a fresh request id");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["params"]["capabilities"],
        Pair::client_config(EraMode::Auto).capabilities
    );
    assert_eq!(init["params"]["clientInfo"]["name"], "test-client");
    assert!(init["params"].get("_meta").is_none(), "{init}");
    answer_initialize(&mut c, &init, "2025-06-18");
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2025_06_18
        }]
    ));
    assert_eq!(c.one_out()["method"], "notifications/initialized");
    assert_eq!(c.session.peer().unwrap().info.as_ref().unwrap().name, "old");
}

#[test]
fn auto_falls_back_after_the_discover_timeout_on_a_raw_session() {
    let mut config = Pair::client_config(EraMode::Auto);
    config.discover_timeout = Duration::from_millis(1500);
    let mut c = Raw::client(config, origin());
    let discover = c.one_out();
    assert_eq!(
        c.session.poll_timeout(),
        Some(c.now + Duration::from_millis(1500))
    );
    c.advance(Duration::from_millis(1499));
    assert!(c.out().is_empty());
    assert!(c.events().is_empty());
    c.advance(Duration::from_millis(1));
    let init = c.one_out();
    assert_eq!(init["method"], "initialize");
    assert!(c.events().is_empty());
    // The late discover answer is dropped and counted.
    c.feed(&json!({"jsonrpc": "2.0", "id": discover["id"], "result": {
        "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {},
    }}));
    assert!(c.events().is_empty());
    assert!(c.out().is_empty());
    assert_eq!(c.session.stats().unknown_responses, 1);
    assert_eq!(c.session.version(), None);
    answer_initialize(&mut c, &init, "2025-11-25");
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2025_11_25
        }]
    ));
}

#[test]
fn auto_rediscovers_when_the_fallback_initialize_is_refused_as_unsupported() {
    // A server slower than the discover timeout answers discover late and then, committed
    // to the modern era, refuses the fallback initialize with -32022 (the Python SDK does).
    let mut config = Pair::client_config(EraMode::Auto);
    config.discover_timeout = Duration::from_millis(1500);
    config.timeouts.request = Some(Duration::from_secs(30));
    let mut c = Raw::client(config, origin());
    let discover = c.one_out();
    c.advance(Duration::from_millis(1500));
    let init = c.one_out();
    assert_eq!(init["method"], "initialize");
    c.feed(&json!({"jsonrpc": "2.0", "id": discover["id"], "result": {
        "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {},
    }}));
    c.feed(&json!({"jsonrpc": "2.0", "id": init["id"], "error": {
        "code": -32022, "message": "unsupported protocol version",
        "data": {"supported": [MODERN], "requested": "2025-11-25"},
    }}));
    assert!(
        c.events().is_empty(),
        "not closed: it tries discovery again"
    );
    let again = c.one_out();
    assert_eq!(again["method"], "server/discover");
    assert_eq!(
        again["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        MODERN
    );
    // Patient this time: the request timeout, not the discover timeout.
    assert_eq!(
        c.session.poll_timeout(),
        Some(c.now + Duration::from_secs(30))
    );
    c.feed(&json!({"jsonrpc": "2.0", "id": again["id"], "result": {
        "resultType": "complete", "supportedVersions": [MODERN], "capabilities": {},
    }}));
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Ready {
            version: ProtocolVersion::V2026_07_28
        }]
    ));
}

#[test]
fn a_refused_initialize_without_a_prior_discover_still_closes() {
    let mut c = Raw::client(
        Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        origin(),
    );
    let init = c.one_out();
    c.feed(&json!({"jsonrpc": "2.0", "id": init["id"], "error": {
        "code": -32022, "message": "unsupported protocol version",
        "data": {"supported": [MODERN]},
    }}));
    assert!(c.out().is_empty(), "a Legacy client does not switch eras");
    assert!(c.session.is_closed());
}

#[test]
fn auto_falls_back_after_the_discover_timeout_in_a_pair() {
    let mut pair = Pair::new(
        origin(),
        Pair::client_config(EraMode::Auto),
        Pair::server_config(),
    );
    let timeout = Pair::client_config(EraMode::Auto).discover_timeout;
    pair.pause(Side::Server);
    pair.drive();
    pair.advance(timeout - Duration::from_millis(1));
    assert!(pair.client_events().is_empty());
    assert_eq!(pair.sent_by(Side::Client).len(), 1);
    pair.advance(Duration::from_millis(1));
    assert_eq!(pair.sent_by(Side::Client)[1]["method"], "initialize");
    // Now the server hears both: it answers discover (too late) and the initialize.
    pair.resume(Side::Server);
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Ready {
                version: ProtocolVersion::V2025_11_25
            }]
        ),
        "{events:?}"
    );
    assert_eq!(pair.client.stats().unknown_responses, 1);
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2025_11_25));
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Ready {
            version: ProtocolVersion::V2025_11_25
        }]
    ));
}

#[test]
fn modern_against_a_legacy_only_server_closes_with_a_handshake_error() {
    let mut pair = Pair::new(
        origin(),
        Pair::client_config(EraMode::Modern),
        legacy_only_server(),
    );
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Closed {
                reason: CloseReason::Handshake(_)
            }]
        ),
        "{events:?}"
    );
    assert!(pair.client.is_closed());
    assert_eq!(pair.sent_by(Side::Client).len(), 1);
    no_initialize_on_the_wire(&pair);
    assert_eq!(
        pair.client
            .send_request_raw(pair.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::Closed)
    );
}

#[test]
fn modern_closes_when_discover_is_refused_or_times_out() {
    let mut c = Raw::client(Pair::client_config(EraMode::Modern), origin());
    let d = c.one_out();
    c.feed(&json!({"jsonrpc": "2.0", "id": d["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Closed {
            reason: CloseReason::Handshake(_)
        }]
    ));
    assert!(c.out().is_empty());

    let mut c = Raw::client(Pair::client_config(EraMode::Modern), origin());
    let _ = c.one_out();
    let deadline = c.session.poll_timeout().expect("discover has a timeout");
    c.now = deadline;
    c.session.handle_timeout(deadline);
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Closed {
            reason: CloseReason::Handshake(_)
        }]
    ));
    assert!(c.out().is_empty(), "no initialize in Modern mode");
    assert_eq!(c.session.poll_timeout(), None);
}

fn unsupported(id: &Value, supported: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": MODERN},
    }})
}

#[test]
fn unsupported_version_naming_ours_retries_discover_once() {
    for era in [EraMode::Modern, EraMode::Auto] {
        let mut c = Raw::client(Pair::client_config(era), origin());
        let first = c.one_out();
        c.feed(&unsupported(&first["id"], json!(["2099-01-01", MODERN])));
        assert!(c.events().is_empty());
        let second = c.one_out();
        assert_eq!(second["method"], "server/discover");
        assert_ne!(second["id"], first["id"]);
        assert_eq!(second["params"]["_meta"][PV], MODERN);
        // A second refusal ends discovery: no third attempt.
        c.feed(&unsupported(&second["id"], json!([MODERN])));
        let out = c.out();
        match era {
            EraMode::Modern => {
                assert!(out.is_empty(), "{out:?}");
                assert!(matches!(
                    c.events().as_slice(),
                    [ClientEvent::Closed {
                        reason: CloseReason::Handshake(_)
                    }]
                ));
            }
            _ => {
                assert_eq!(out.len(), 1);
                assert_eq!(out[0]["method"], "initialize");
                assert!(c.events().is_empty());
            }
        }
    }
}

#[test]
fn unsupported_version_naming_no_modern_version_does_not_retry() {
    let mut c = Raw::client(Pair::client_config(EraMode::Modern), origin());
    let first = c.one_out();
    c.feed(&unsupported(&first["id"], json!(["2025-11-25"])));
    assert!(c.out().is_empty());
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Closed {
            reason: CloseReason::Handshake(_)
        }]
    ));
}

#[test]
fn requests_before_discovery_finishes_are_not_ready() {
    let mut c = Raw::client(Pair::client_config(EraMode::Auto), origin());
    let _ = c.one_out();
    assert_eq!(
        c.session
            .send_request_raw(c.now, "tools/list", None, RequestOptions::default()),
        Err(SendError::NotReady)
    );
    assert_eq!(
        c.session
            .send_notification_raw("notifications/roots/list_changed", None),
        Err(SendError::NotReady)
    );
    assert!(c.out().is_empty());
}

#[test]
fn a_discover_answer_after_close_is_ignored() {
    // A discover answered after the client closed is dropped silently.
    let mut pair = Pair::modern(origin());
    pair.pause(Side::Client);
    pair.drive();
    pair.client.close(pair.now);
    pair.resume(Side::Client);
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::Closed {
                reason: CloseReason::Local
            }]
        ),
        "{events:?}"
    );
}

// --- 6. one server, both eras -------------------------------------------------------------

#[test]
fn a_fresh_server_serves_modern_then_accepts_initialize() {
    let mut s = raw_server();
    s.feed(&modern_request(json!(1), "tools/list", json!({})));
    let r = request_of(s.events().pop().unwrap());
    assert_eq!(r.version, ProtocolVersion::V2026_07_28);
    // A second modern request stays in flight across the handshake.
    s.feed(&modern_request(
        json!(2),
        "tools/call",
        json!({"name": "t"}),
    ));
    let pending = request_of(s.events().pop().unwrap());
    s.session
        .respond_raw(r.responder, &raw(json!({"tools": []})))
        .unwrap();
    assert_eq!(s.one_out()["result"]["resultType"], "complete");

    s.feed(&initialize(json!(10), "2025-06-18", json!({"roots": {}})));
    let init = s.one_out();
    assert_eq!(init["id"], 10);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "test-server");
    assert!(init["result"].get("resultType").is_none(), "{init}");
    assert_eq!(s.session.version(), Some(ProtocolVersion::V2025_06_18));
    s.feed_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(matches!(
        s.events().as_slice(),
        [ServerEvent::Ready {
            version: ProtocolVersion::V2025_06_18
        }]
    ));
    // The modern request answered late keeps its era's envelope.
    s.session
        .respond_raw(pending.responder, &raw(json!({"content": []})))
        .unwrap();
    let late = s.one_out();
    assert_eq!(late["id"], 2);
    assert_eq!(late["result"]["resultType"], "complete");

    s.feed(&request(json!(11), "tools/list", json!({})));
    let legacy = request_of(s.events().pop().unwrap());
    assert_eq!(legacy.version, ProtocolVersion::V2025_06_18);
    assert_eq!(*legacy.peer_capabilities, json!({"roots": {}}));
    s.session
        .respond_raw(legacy.responder, &raw(json!({"tools": []})))
        .unwrap();
    let out = s.one_out();
    assert_eq!(out["id"], 11);
    assert!(out["result"].get("resultType").is_none(), "{out}");
    assert!(out["result"].get("_meta").is_none(), "{out}");
    // ping is legal again.
    s.feed_line(r#"{"jsonrpc":"2.0","id":12,"method":"ping"}"#);
    assert_eq!(s.one_out()["result"], json!({}));
}

#[test]
fn a_legacy_initialized_server_treats_modern_meta_as_legacy() {
    let mut s = raw_server();
    s.feed(&initialize(json!(0), "2025-11-25", json!({"sampling": {}})));
    let _ = s.one_out();
    s.feed_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let _ = s.events();
    for (i, version) in [MODERN, "v999.0.0"].into_iter().enumerate() {
        s.feed(&request(
            json!(i + 1),
            "tools/call",
            json!({"name": "t", "_meta": meta_with(version, json!({"elicitation": {}}))}),
        ));
        let r = request_of(s.events().pop().unwrap());
        assert_eq!(r.version, ProtocolVersion::V2025_11_25);
        assert_eq!(*r.peer_capabilities, json!({"sampling": {}}));
        s.session
            .respond_raw(r.responder, &raw(json!({"content": []})))
            .unwrap();
        let out = s.one_out();
        assert_eq!(out["id"], i + 1);
        assert!(out["result"].get("resultType").is_none(), "{out}");
    }
    // server/discover is not a legacy method.
    s.feed(&modern_request(json!(9), "server/discover", json!({})));
    assert_error(&s.one_out(), &json!(9), -32601);
    // And the legacy server may send requests to its client.
    assert!(
        s.session
            .send_request_raw(
                s.now,
                "sampling/createMessage",
                None,
                RequestOptions::default()
            )
            .is_ok()
    );
}

#[test]
fn a_modern_pair_request_times_out_like_any_other() {
    let mut pair = modern_pair_ready();
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "slow"}))),
            RequestOptions::default().timeout(Duration::from_secs(2)),
        )
        .unwrap();
    pair.drive();
    let _r = request_of(pair.server_events().pop().unwrap());
    pair.advance(Duration::from_secs(2));
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { id: got, outcome: Err(CallError::TimedOut) }] if *got == id
    ));
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Cancelled { .. }]
    ));
}

#[test]
fn validation_order_meta_before_version_before_method() {
    let mut s = raw_server();
    // Missing capabilities wins over an unknown version and an unknown method.
    s.feed(&request(
        json!(1),
        "x/unknown",
        json!({"_meta": {PV: "v999.0.0"}}),
    ));
    assert_error(&s.one_out(), &json!(1), -32602);
    // An unsupported version wins over a removed or unknown method.
    for (i, method) in ["x/unknown", "ping", "tools/list"].into_iter().enumerate() {
        s.feed(&request(
            json!(10 + i),
            method,
            json!({"_meta": meta_with("v999.0.0", json!({}))}),
        ));
        assert_error(&s.one_out(), &json!(10 + i), -32022);
    }
    assert!(s.events().is_empty());
}

#[test]
fn malformed_meta_is_invalid_params_with_the_id() {
    let mut s = raw_server();
    let bad = [
        json!({"_meta": "not an object"}),
        json!({"_meta": [1]}),
        json!({"_meta": {PV: 20260728, CAPS: {}}}),
        json!({"_meta": {PV: MODERN, CAPS: {}, "progressToken": {"no": 1}}}),
    ];
    for (i, params) in bad.into_iter().enumerate() {
        s.feed(&request(json!(format!("m{i}")), "tools/list", params));
        assert_error(&s.one_out(), &json!(format!("m{i}")), -32602);
    }
    assert!(s.events().is_empty());
    s.feed(&modern_request(json!(1), "tools/list", json!({})));
    assert_eq!(s.events().len(), 1);
}

#[test]
fn a_discover_result_without_a_modern_version_falls_back_or_closes() {
    let results = [
        json!({"resultType": "complete", "supportedVersions": ["2025-11-25"], "capabilities": {}}),
        json!({"resultType": "complete", "supportedVersions": [], "capabilities": {}}),
        json!({"capabilities": {}}),
        json!({"supportedVersions": "2026-07-28"}),
    ];
    for result in results {
        let mut c = Raw::client(Pair::client_config(EraMode::Auto), origin());
        let d = c.one_out();
        c.feed(&json!({"jsonrpc": "2.0", "id": d["id"], "result": result}));
        assert!(c.events().is_empty(), "{result}");
        assert_eq!(c.one_out()["method"], "initialize", "{result}");

        let mut c = Raw::client(Pair::client_config(EraMode::Modern), origin());
        let d = c.one_out();
        c.feed(&json!({"jsonrpc": "2.0", "id": d["id"], "result": result}));
        assert!(
            matches!(
                c.events().as_slice(),
                [ClientEvent::Closed {
                    reason: CloseReason::Handshake(_)
                }]
            ),
            "{result}"
        );
        assert!(c.out().is_empty());
    }
}

#[test]
fn eof_during_discovery_closes_with_a_transport_error() {
    let mut c = Raw::client(Pair::client_config(EraMode::Auto), origin());
    let _ = c.one_out();
    c.session.handle_eof(c.now);
    assert!(matches!(
        c.events().as_slice(),
        [ClientEvent::Closed {
            reason: CloseReason::Transport(why)
        }] if why == "the server closed the connection before the handshake was done"
    ));
    assert!(c.out().is_empty(), "no fallback after EOF");
}
