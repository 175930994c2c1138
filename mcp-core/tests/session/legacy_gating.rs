//! Legacy era: capability gating both ways, custom methods, automatic ping, and request
//! correlation

use crate::common;
use crate::legacy_kit;

use mcp_sansio::testing::Side;
use serde_json::{Value, json};

use common::raw;
use legacy_kit::{
    LEGACY, Raw, client_call, only_input, only_live_input, only_request, only_response, ready,
    ready_with, remote, server_ask, server_call,
};
use legacy_kit::{client_ready, server_ready};
use mcp_sansio::schema::{
    ElicitParams, InputRequest, InputResponse, InputResponses, ListRootsResult, Root,
};
use mcp_sansio::session::Role;
use mcp_sansio::session::{InputError, InputId};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientEvent, EraMode, ErrorObject, ProtocolVersion, RequestOptions, SendError, ServerEvent,
};

fn with_server_caps(version: ProtocolVersion, caps: Value) -> Pair {
    let mut server = Pair::server_config();
    server.capabilities = caps;
    ready_with(Pair::client_config(EraMode::Legacy(version)), server)
}

fn with_client_caps(version: ProtocolVersion, caps: Value) -> Pair {
    let mut client = Pair::client_config(EraMode::Legacy(version));
    client.capabilities = caps;
    ready_with(client, Pair::server_config())
}

fn missing(method: &str, capability: &'static str) -> Result<mcp_sansio::OutboundId, SendError> {
    Err(SendError::MissingCapability {
        method: method.to_owned(),
        capability,
    })
}

// --- 4. capability gating ----------------------------------------------------------------

#[test]
fn client_refuses_methods_the_server_did_not_declare() {
    let mut pair = with_server_caps(ProtocolVersion::V2025_11_25, json!({"tools": {}}));
    let before = pair.transcript().len();
    for (method, capability) in [
        ("prompts/get", "prompts"),
        ("prompts/list", "prompts"),
        ("resources/read", "resources"),
        ("resources/subscribe", "resources.subscribe"),
        ("logging/setLevel", "logging"),
        ("completion/complete", "completions"),
    ] {
        assert_eq!(
            pair.client.send_request_raw(
                pair.now,
                method,
                Some(raw(json!({}))),
                RequestOptions::default()
            ),
            missing(method, capability)
        );
    }
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing was sent");
    assert_eq!(pair.client.outbound_in_flight(), 0);
    // A declared capability works.
    let (_, request) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    assert_eq!(request.method, "tools/list");
}

#[test]
fn resources_subscribe_needs_the_subscribe_capability() {
    for caps in [
        json!({"resources": {}}),
        json!({"resources": {"subscribe": false}}),
        json!({"resources": {"listChanged": true}}),
    ] {
        let mut pair = with_server_caps(ProtocolVersion::V2025_06_18, caps.clone());
        let params = json!({"uri": "file:///a"});
        for method in ["resources/subscribe", "resources/unsubscribe"] {
            assert_eq!(
                pair.client.send_request_raw(
                    pair.now,
                    method,
                    Some(raw(params.clone())),
                    RequestOptions::default()
                ),
                missing(method, "resources.subscribe"),
                "{caps}"
            );
        }
        client_call(
            &mut pair,
            "resources/read",
            params,
            RequestOptions::default(),
        );
    }
    let mut pair = with_server_caps(
        ProtocolVersion::V2025_06_18,
        json!({"resources": {"subscribe": true}}),
    );
    // With the capability, the core keeps the subscription and answers `{}` itself.
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "resources/subscribe",
            Some(raw(json!({"uri": "file:///a"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    assert!(pair.server_events().is_empty());
    assert_eq!(only_response(pair.client_events(), id).unwrap(), json!({}));
    assert_eq!(pair.server.notify_resource_updated("file:///a").unwrap(), 1);
}

#[test]
fn server_answers_undeclared_methods_with_method_not_found() {
    let mut config = Pair::server_config();
    config.capabilities = json!({"tools": {}, "resources": {}});
    let mut server = server_ready(config, ProtocolVersion::V2025_11_25, json!({}));
    for (id, method, capability) in [
        (1, "prompts/list", "prompts"),
        (2, "prompts/get", "prompts"),
        (3, "resources/subscribe", "resources.subscribe"),
        (4, "logging/setLevel", "logging"),
        (5, "completion/complete", "completions"),
    ] {
        server.feed(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        let out = server.out();
        assert_eq!(out.len(), 1, "{method}: {out:?}");
        assert_eq!(out[0]["id"], id);
        assert_eq!(out[0]["error"]["code"], -32601, "{method}");
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(method), "{message}");
        assert!(message.contains(capability), "{message}");
    }
    assert!(server.events().is_empty());
    assert_eq!(server.session.inbound_in_flight(), 0);
    // Declared ones reach the application.
    server.feed(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
                        "params": {"uri": "file:///a"}}),
    );
    assert!(server.out().is_empty());
    assert!(
        matches!(server.events().as_slice(), [ServerEvent::Request(r)] if r.method == "resources/read")
    );
}

#[test]
fn server_requests_need_the_clients_capabilities() {
    let mut pair = with_client_caps(ProtocolVersion::V2025_11_25, json!({}));
    let before = pair.transcript().len();
    for (method, capability) in [
        ("sampling/createMessage", "sampling"),
        ("elicitation/create", "elicitation"),
        ("roots/list", "roots"),
    ] {
        assert_eq!(
            pair.server
                .send_request_raw(pair.now, method, None, RequestOptions::default()),
            missing(method, capability)
        );
    }
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing was sent");
    assert_eq!(pair.server.outbound_in_flight(), 0);
}

#[test]
fn server_requests_reach_a_client_that_declared_them() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    for (method, params, result) in [
        (
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 10}),
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}),
        ),
        (
            "elicitation/create",
            json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
            json!({"action": "accept", "content": {}}),
        ),
        ("roots/list", json!({}), json!({"roots": []})),
    ] {
        // They reach the client application as input requests, keyed by the method, typed,
        // with the params as sent.
        let (id, inbound, request) =
            server_ask(&mut pair, method, params.clone(), RequestOptions::default());
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"method": method, "params": params})
        );
        let typed_ok = match (&request, method) {
            (InputRequest::CreateMessage(p), "sampling/createMessage") => p.max_tokens == 10,
            (InputRequest::Elicit(ElicitParams::Form(p)), "elicitation/create") => {
                p.message == "name?"
            }
            (InputRequest::ListRoots(Some(p)), "roots/list") => p.extra.is_empty(),
            _ => false,
        };
        assert!(typed_ok, "{method}: {request:?}");
        // The session they arrive on is in the negotiated version with the server's
        // capabilities (the event itself carries neither).
        assert_eq!(pair.client.version(), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(
            pair.client.peer().unwrap().capabilities["tools"],
            json!({"listChanged": true})
        );
        assert_eq!(pair.client.inbound_in_flight(), 1);
        // The typed answer reaches the server as the JSON result.
        let answer: InputResponse = serde_json::from_value(result.clone()).unwrap();
        pair.client
            .provide_input(
                pair.now,
                InputId::Live(inbound),
                InputResponses::from([(method.to_owned(), answer)]),
            )
            .unwrap();
        pair.drive();
        assert_eq!(only_response(pair.server_events(), id).unwrap(), result);
        assert!(pair.client_events().is_empty());
        assert_eq!(pair.client.inbound_in_flight(), 0);
    }
}

#[test]
fn client_answers_undeclared_server_requests_with_method_not_found() {
    let mut config = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_06_18));
    config.capabilities = json!({"sampling": {}});
    let mut client = client_ready(config, ProtocolVersion::V2025_06_18, json!({"tools": {}}));
    for (id, method, capability) in [
        (1, "roots/list", "roots"),
        (2, "elicitation/create", "elicitation"),
    ] {
        client.feed(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        let out = client.out();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0]["id"], id);
        assert_eq!(out[0]["error"]["code"], -32601);
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(capability), "{message}");
    }
    assert!(client.events().is_empty());
    client.feed(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage",
                        "params": {"messages": [], "maxTokens": 1}}),
    );
    assert!(client.out().is_empty());
    let (_, request) = only_live_input(client.events(), "sampling/createMessage");
    assert!(
        matches!(&request, InputRequest::CreateMessage(p) if p.max_tokens == 1),
        "{request:?}"
    );
}

#[test]
fn unknown_methods_are_refused_unless_listed_in_extra_methods() {
    // Client to server.
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let id = pair
        .client
        .send_request_raw(pair.now, "acme/frobnicate", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    assert!(pair.server_events().is_empty());
    let error = remote(only_response(pair.client_events(), id));
    assert_eq!(error.code, -32601);
    assert!(
        error.message.contains("acme/frobnicate"),
        "{}",
        error.message
    );

    let mut server = Pair::server_config();
    server.extra_methods = vec!["acme/frobnicate".into()];
    let mut pair = ready_with(
        Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        server,
    );
    let (id, request) = client_call(
        &mut pair,
        "acme/frobnicate",
        json!({"n": 1}),
        RequestOptions::default(),
    );
    pair.server
        .respond_raw(request.responder, &raw(json!({"ok": true})))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.client_events(), id).unwrap(),
        json!({"ok": true})
    );

    // Server to client.
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let id = pair
        .server
        .send_request_raw(pair.now, "acme/ask", None, RequestOptions::default())
        .unwrap();
    pair.drive();
    assert!(pair.client_events().is_empty());
    assert_eq!(remote(only_response(pair.server_events(), id)).code, -32601);

    let mut client = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    client.extra_methods = vec!["acme/ask".into()];
    let mut pair = ready_with(client, Pair::server_config());
    let (_, request) = server_call(&mut pair, "acme/ask", json!({}), RequestOptions::default());
    assert_eq!(request.method, "acme/ask");
}

#[test]
fn completion_is_not_gated_by_completions_on_2024_11_05() {
    let caps = json!({"prompts": {}, "resources": {}});
    let mut pair = with_server_caps(ProtocolVersion::V2024_11_05, caps.clone());
    let params = json!({"ref": {"type": "ref/prompt", "name": "p"},
                        "argument": {"name": "a", "value": "x"}});
    client_call(
        &mut pair,
        "completion/complete",
        params.clone(),
        RequestOptions::default(),
    );
    for v in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        let mut pair = with_server_caps(v, caps.clone());
        assert_eq!(
            pair.client.send_request_raw(
                pair.now,
                "completion/complete",
                Some(raw(params.clone())),
                RequestOptions::default()
            ),
            missing("completion/complete", "completions"),
            "{v}"
        );
    }
    // The server side applies the same rule to what it receives.
    let mut config = Pair::server_config();
    config.capabilities = caps;
    for (v, delivered) in [
        (ProtocolVersion::V2024_11_05, true),
        (ProtocolVersion::V2025_06_18, false),
    ] {
        let mut server = server_ready(config.clone(), v, json!({}));
        server.feed(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete",
                            "params": params}),
        );
        let out = server.out();
        let events = server.events();
        if delivered {
            assert!(out.is_empty(), "{out:?}");
            assert!(
                matches!(events.as_slice(), [ServerEvent::Request(_)]),
                "{events:?}"
            );
        } else {
            assert_eq!(out[0]["error"]["code"], -32601);
            assert!(events.is_empty());
        }
    }
}

// --- 5. ping -----------------------------------------------------------------------------

#[test]
fn ping_is_answered_automatically_both_ways() {
    for v in LEGACY {
        let mut pair = ready(v);
        let from_client = pair
            .client
            .send_request_raw(pair.now, "ping", None, RequestOptions::default())
            .unwrap();
        pair.drive();
        assert!(
            pair.server_events().is_empty(),
            "{v}: ping reached the server app"
        );
        assert_eq!(
            only_response(pair.client_events(), from_client).unwrap(),
            json!({})
        );
        let answer = pair.sent_by(Side::Server).pop().unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": from_client.wire_id(), "result": {}})
        );

        let from_server = pair
            .server
            .send_request_raw(pair.now, "ping", None, RequestOptions::default())
            .unwrap();
        pair.drive();
        assert!(
            pair.client_events().is_empty(),
            "{v}: ping reached the client app"
        );
        assert_eq!(
            only_response(pair.server_events(), from_server).unwrap(),
            json!({})
        );
        let answer = pair.sent_by(Side::Client).pop().unwrap();
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": from_server.wire_id(), "result": {}})
        );
        assert_eq!(pair.server.inbound_in_flight(), 0);
        assert_eq!(pair.client.inbound_in_flight(), 0);
    }
}

// --- 6. request correlation --------------------------------------------------------------

#[test]
fn out_of_order_answers_resolve_to_the_right_requests() {
    let mut pair = ready(ProtocolVersion::V2025_06_18);
    let mut calls = Vec::new();
    for n in 0..4 {
        let id = pair
            .client
            .send_request_raw(
                pair.now,
                "tools/call",
                Some(raw(json!({"name": "t", "arguments": {"n": n}}))),
                RequestOptions::default(),
            )
            .unwrap();
        calls.push(id);
    }
    assert_eq!(pair.client.outbound_in_flight(), 4);
    pair.drive();
    let mut requests: Vec<_> = pair
        .server_events()
        .into_iter()
        .map(|e| match e {
            ServerEvent::Request(r) => r,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(requests.len(), 4);
    assert_eq!(pair.server.inbound_in_flight(), 4);
    // Answer 2, 0, 3, 1; each result names the argument it saw; n = 1 gets an error.
    for index in [2, 0, 3, 1] {
        let request = requests.remove(
            requests
                .iter()
                .position(|r| {
                    let p: Value = r.params_as().unwrap();
                    p["arguments"]["n"] == index
                })
                .unwrap(),
        );
        if index == 1 {
            pair.server
                .respond_error(request.responder, &ErrorObject::new(-32000, "n = 1 fails"));
        } else {
            pair.server
                .respond_raw(request.responder, &raw(json!({"n": index})))
                .unwrap();
        }
    }
    pair.drive();
    let events = pair.client_events();
    assert_eq!(events.len(), 4, "{events:?}");
    let mut seen = Vec::new();
    for event in events {
        let ClientEvent::Response { id, outcome } = event else {
            panic!("{event:?}")
        };
        let n = calls.iter().position(|c| *c == id).expect("a known id");
        assert!(!seen.contains(&n), "two responses for one request");
        seen.push(n);
        match outcome {
            Ok(result) => assert_eq!(parse_raw(&result), json!({"n": n})),
            Err(e) => {
                assert_eq!(n, 1);
                assert_eq!(remote(Err(e)).message, "n = 1 fails");
            }
        }
    }
    assert_eq!(seen, vec![2, 0, 3, 1], "in answer order");
    assert_eq!(pair.client.outbound_in_flight(), 0);
    assert_eq!(pair.server.inbound_in_flight(), 0);
}

fn parse_raw(r: &serde_json::value::RawValue) -> Value {
    serde_json::from_str(r.get()).unwrap()
}

#[test]
fn duplicate_in_flight_inbound_id_is_refused_and_the_original_still_works() {
    for side in [Side::Server, Side::Client] {
        // The server gets `tools/call` as a request; the client gets `roots/list` as a live
        // input request.
        match side {
            Side::Server => duplicate_in_flight(
                side,
                server_ready(
                    Pair::server_config(),
                    ProtocolVersion::V2025_11_25,
                    json!({}),
                ),
                "tools/call",
                |events, _| only_request(events),
                |peer, original, _| {
                    let p: Value = original.params_as().unwrap();
                    assert_eq!(p, json!({"first": true}));
                    peer.session
                        .respond_raw(original.responder, &raw(json!({"answered": "first"})))
                        .unwrap();
                    json!({"answered": "first"})
                },
                |_| {},
            ),
            _ => duplicate_in_flight(
                side,
                client_ready(
                    Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
                    ProtocolVersion::V2025_11_25,
                    json!({}),
                ),
                "roots/list",
                only_live_input,
                |peer, (id, request), method| {
                    assert_eq!(
                        serde_json::to_value(&request).unwrap(),
                        json!({"method": method, "params": {"first": true}})
                    );
                    let roots = ListRootsResult::new(vec![Root::new("file:///first")]);
                    let responses = InputResponses::from([(
                        method.to_owned(),
                        InputResponse::ListRoots(roots),
                    )]);
                    peer.session
                        .provide_input(peer.now, InputId::Live(id), responses.clone())
                        .unwrap();
                    // Exactly once: a second answer finds nothing waiting.
                    assert_eq!(
                        peer.session
                            .provide_input(peer.now, InputId::Live(id), responses),
                        Err(InputError::NotWaiting)
                    );
                    json!({"roots": [{"uri": "file:///first"}]})
                },
                |events| {
                    let ids: Vec<_> = events.into_iter().map(|e| only_input(vec![e]).0).collect();
                    assert_ne!(ids[0], ids[1]);
                },
            ),
        }
    }
}

/// The body of the test above for one side: `take` reads the original from the events,
/// `answer` answers it and returns the expected result, `distinct` checks the events of the
/// two requests whose ids differ only in type
fn duplicate_in_flight<R: Role, O>(
    side: Side,
    mut peer: Raw<R>,
    method: &str,
    take: impl FnOnce(Vec<R::Event>, &str) -> O,
    answer: impl FnOnce(&mut Raw<R>, O, &str) -> Value,
    distinct: impl FnOnce(Vec<R::Event>),
) {
    peer.feed(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {"first": true}}));
    let events = peer.events();
    let original = take(events, method);
    assert!(peer.out().is_empty());
    peer.feed(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": {"second": true}}));
    let out = peer.out();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 7);
    assert_eq!(out[0]["error"]["code"], -32600);
    assert!(
        peer.events().is_empty(),
        "{side:?}: the duplicate reached the app"
    );
    assert_eq!(peer.session.inbound_in_flight(), 1);
    // The original is still answerable, exactly once.
    let answer = answer(&mut peer, original, method);
    assert_eq!(
        peer.out(),
        vec![json!({"jsonrpc": "2.0", "id": 7, "result": answer})]
    );
    assert_eq!(peer.session.inbound_in_flight(), 0);
    // A string id equal in text to a number id is a different id.
    peer.feed(&json!({"jsonrpc": "2.0", "id": 8, "method": method}));
    peer.feed(&json!({"jsonrpc": "2.0", "id": "8", "method": method}));
    let events = peer.events();
    assert_eq!(events.len(), 2);
    distinct(events);
    assert!(peer.out().is_empty());
}

#[test]
fn responses_to_unknown_ids_are_dropped_and_counted() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 999, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "2", "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1000, "error": {"code": -1, "message": "x"}}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}),
    ];
    for (n, line) in lines.iter().enumerate() {
        let before = pair.transcript().len();
        pair.inject(Side::Client, format!("{line}\n").as_bytes());
        assert!(pair.client_events().is_empty(), "{line}");
        assert_eq!(
            pair.transcript().len(),
            before,
            "a response is never answered"
        );
        assert_eq!(pair.client.stats().unknown_responses, n as u64 + 1);
    }
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2025_11_25));
    // The same on the server side.
    pair.inject(
        Side::Server,
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n",
    );
    assert_eq!(pair.server.stats().unknown_responses, 1);
    assert!(pair.server_events().is_empty());
    // Both keep working.
    let (id, request) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.server
        .respond_raw(request.responder, &raw(json!({"tools": []})))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.client_events(), id).unwrap(),
        json!({"tools": []})
    );
    assert_eq!(pair.client.stats().unknown_responses, 4);
}

// --- methods newer than the negotiated version -------------------------------------------

#[test]
fn methods_added_after_the_negotiated_version_are_not_part_of_it() {
    // tasks/* arrived in 2025-11-25, elicitation/create in 2025-06-18. The test kit's client
    // declares elicitation whatever the version, so only the version can refuse it.
    for v in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26] {
        let mut pair = ready(v);
        assert!(
            matches!(
                pair.server.send_request_raw(
                    pair.now,
                    "elicitation/create",
                    None,
                    RequestOptions::default()
                ),
                Err(SendError::NotAllowed { .. })
            ),
            "{v}"
        );
        let mut client = client_ready(Pair::client_config(EraMode::Legacy(v)), v, json!({}));
        client.feed(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
                            "params": {"message": "?", "requestedSchema": {"type": "object"}}}),
        );
        let out = client.out();
        assert_eq!(out[0]["error"]["code"], -32601, "{v}: {out:?}");
        assert!(client.events().is_empty(), "{v}");
    }
    for v in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let mut pair = ready(v);
        for method in ["tasks/get", "tasks/list"] {
            assert!(
                matches!(
                    pair.client.send_request_raw(
                        pair.now,
                        method,
                        Some(raw(json!({"taskId": "t"}))),
                        RequestOptions::default()
                    ),
                    Err(SendError::NotAllowed { .. })
                ),
                "{v} {method}"
            );
        }
        let mut server = server_ready(Pair::server_config(), v, json!({}));
        server.feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                            "params": {"taskId": "t"}}));
        let out = server.out();
        assert_eq!(out[0]["error"]["code"], -32601, "{v}: {out:?}");
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(v.as_str()), "{message}");
        assert!(server.events().is_empty(), "{v}");
    }
    // Where they exist, they pass (elicitation/create as a live input request; 2025-06-18
    // requires `requestedSchema`).
    let mut pair = ready(ProtocolVersion::V2025_06_18);
    server_ask(
        &mut pair,
        "elicitation/create",
        json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
        RequestOptions::default(),
    );
    // tasks/* need the server's `tasks` capability; the core answers them from its task
    // table (an unknown task is -32602).
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    assert!(matches!(
        pair.client.send_request_raw(
            pair.now,
            "tasks/get",
            Some(raw(json!({"taskId": "t"}))),
            RequestOptions::default()
        ),
        Err(SendError::MissingCapability {
            capability: "tasks",
            ..
        })
    ));
    let mut server_config = Pair::server_config();
    server_config.capabilities["tasks"] = json!({"list": {}, "cancel": {}});
    let mut pair = Pair::new(
        common::origin(),
        Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        server_config,
    );
    pair.drive();
    pair.client_events();
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tasks/get",
            Some(raw(json!({"taskId": "t"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    assert!(
        pair.server_events()
            .iter()
            .all(|e| !matches!(e, ServerEvent::Request(_)))
    );
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id: got,
                outcome: Err(mcp_sansio::CallError::Remote(e)),
            },
        ] => {
            assert_eq!(*got, id);
            assert_eq!(e.code, -32602);
        }
        other => panic!("{other:?}"),
    }
}

// --- live input requests (server to client) ----------------------------------------------

#[test]
fn refuse_input_answers_a_live_request_with_the_error() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let (id, inbound, _) = server_ask(
        &mut pair,
        "elicitation/create",
        json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
        RequestOptions::default(),
    );
    let error = ErrorObject::new(-32000, "the user is away").with_data(&json!({"retry": false}));
    pair.client
        .refuse_input(pair.now, InputId::Live(inbound), &error)
        .unwrap();
    assert_eq!(pair.client.inbound_in_flight(), 0);
    pair.drive();
    assert_eq!(
        pair.sent_by(Side::Client).pop().unwrap(),
        json!({"jsonrpc": "2.0", "id": id.wire_id(), "error": {
            "code": -32000, "message": "the user is away", "data": {"retry": false}
        }})
    );
    assert_eq!(remote(only_response(pair.server_events(), id)), error);
    assert!(pair.client_events().is_empty());
    // Refused once, it waits no more.
    let before = pair.transcript().len();
    assert_eq!(
        pair.client
            .refuse_input(pair.now, InputId::Live(inbound), &error),
        Err(InputError::NotWaiting)
    );
    assert_eq!(
        pair.client
            .provide_input(pair.now, InputId::Live(inbound), roots_answer(vec![])),
        Err(InputError::NotWaiting)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), before);
}

#[test]
fn a_live_input_request_with_invalid_params_is_refused_without_an_event() {
    let mut client = client_ready(
        Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        ProtocolVersion::V2025_11_25,
        json!({}),
    );
    for (id, method, params) in [
        // An array passes the envelope but is not roots/list params.
        (1, "roots/list", json!([])),
        (
            2,
            "sampling/createMessage",
            json!({"messages": "no", "maxTokens": 1}),
        ),
        (
            3,
            "elicitation/create",
            json!({"requestedSchema": {"type": "object"}}),
        ),
    ] {
        client.feed(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let out = client.out();
        assert_eq!(out.len(), 1, "{method}: {out:?}");
        assert_eq!(out[0]["id"], id);
        assert_eq!(out[0]["error"]["code"], -32602, "{method}: {out:?}");
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(method), "{message}");
        assert!(client.events().is_empty(), "{method}: reached the app");
        assert_eq!(client.session.inbound_in_flight(), 0);
    }
    // The id is free again, and valid params reach the app.
    client.feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}));
    assert!(client.out().is_empty());
    let (_, request) = only_live_input(client.events(), "roots/list");
    assert_eq!(request, InputRequest::ListRoots(None));
}

#[test]
fn provide_input_without_an_answer_is_missing_and_the_request_still_waits() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let (id, inbound, _) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    let before = pair.transcript().len();
    assert!(matches!(
        pair.client
            .provide_input(pair.now, InputId::Live(inbound), InputResponses::new()),
        Err(InputError::Missing(_))
    ));
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing sent");
    assert!(pair.server_events().is_empty());
    assert_eq!(pair.client.inbound_in_flight(), 1);
    // It can still be answered.
    pair.client
        .provide_input(
            pair.now,
            InputId::Live(inbound),
            roots_answer(vec![{
                let mut root = Root::new("file:///w");
                root.name = Some("w".into());
                root
            }]),
        )
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.server_events(), id).unwrap(),
        json!({"roots": [{"uri": "file:///w", "name": "w"}]})
    );
    assert_eq!(pair.client.inbound_in_flight(), 0);
}

fn roots_answer(roots: Vec<Root>) -> InputResponses {
    InputResponses::from([(
        "roots/list".to_owned(),
        InputResponse::ListRoots(ListRootsResult::new(roots)),
    )])
}

// --- methods of the other direction ------------------------------------------------------

#[test]
fn a_server_may_not_send_a_client_method() {
    // `tools/call` and `server/discover` are MCP methods a client sends; a server sending
    // one is refused as not part of the version, never passed as a custom extension.
    for v in LEGACY {
        let mut pair = ready(v);
        for method in ["tools/call", "server/discover"] {
            assert!(
                matches!(
                    pair.server.send_request_raw(
                        pair.now,
                        method,
                        Some(raw(json!({"name": "t"}))),
                        RequestOptions::default()
                    ),
                    Err(SendError::NotAllowed { .. })
                ),
                "{v} {method}"
            );
        }
        let mut client = client_ready(Pair::client_config(EraMode::Legacy(v)), v, json!({}));
        client.feed(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}));
        let out = client.out();
        assert_eq!(out[0]["error"]["code"], -32601, "{v}: {out:?}");
        let message = out[0]["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("is not part of protocol version"),
            "{message}"
        );
        assert!(client.events().is_empty(), "{v}");
    }
}
