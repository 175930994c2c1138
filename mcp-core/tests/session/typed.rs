//! The typed layer: `Session::send_request::<M>`, `InboundRequest::params::<M>`,
//! `Session::respond`, `Pending::decode`, version fitting of what is sent

use crate::common;

use common::origin;
use mcp_sansio::schema::method::{CallTool, ListTools, Method};
use mcp_sansio::schema::{CallToolParams, CallToolResult, ContentBlock, ListToolsResult, Tool};
use mcp_sansio::testing::Pair;
use mcp_sansio::testing::Side;
use mcp_sansio::{CallError, ClientEvent, ProtocolVersion, RequestOptions, ServerEvent, jsonrpc};
use serde_json::{Map, Value, json};

fn ready(version: Option<ProtocolVersion>) -> Pair {
    let mut pair = match version {
        Some(v) => Pair::legacy(origin(), v),
        None => Pair::modern(origin()),
    };
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready { .. }]
    ));
    pair.server_events();
    pair
}

fn one_request(pair: &mut Pair) -> mcp_sansio::InboundRequest {
    pair.drive();
    let mut events = pair.server_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop() {
        Some(ServerEvent::Request(r)) => r,
        other => panic!("{other:?}"),
    }
}

fn one_response(
    pair: &mut Pair,
) -> (
    mcp_sansio::OutboundId,
    Result<Box<serde_json::value::RawValue>, CallError>,
) {
    pair.drive();
    let mut events = pair.client_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop() {
        Some(ClientEvent::Response { id, outcome }) => (id, outcome),
        other => panic!("{other:?}"),
    }
}

fn last_sent_by_server(pair: &Pair) -> Value {
    let (_, line) = pair
        .transcript()
        .iter()
        .rev()
        .find(|(side, _)| *side == Side::Server)
        .expect("the server sent something");
    serde_json::from_str(line).unwrap()
}

#[test]
fn typed_call_round_trip_in_every_era() {
    for version in [
        Some(ProtocolVersion::V2024_11_05),
        Some(ProtocolVersion::V2025_06_18),
        Some(ProtocolVersion::V2025_11_25),
        None,
    ] {
        let mut pair = ready(version);
        let mut args = Map::new();
        args.insert("text".into(), json!("hi"));
        let call = pair
            .client
            .send_request::<CallTool>(
                pair.now,
                CallToolParams::new("echo").with_arguments(args),
                RequestOptions::default(),
            )
            .unwrap();
        let request = one_request(&mut pair);
        // The peer's JSON-RPC id, while the request is in flight (for the bindings' logs)
        let wire_id = jsonrpc::RequestId::Number(i64::try_from(call.id().wire_id()).unwrap());
        let inbound = request.responder.id();
        assert_eq!(pair.server.inbound_wire_id(inbound), Some(&wire_id));
        assert!(request.is::<CallTool>());
        assert!(!request.is::<ListTools>());
        let params = request.params::<CallTool>().unwrap();
        assert_eq!(params.name, "echo");
        assert_eq!(params.arguments.as_ref().unwrap()["text"], "hi");
        pair.server
            .respond(request.responder, CallToolResult::text("hi back"))
            .unwrap();
        assert_eq!(pair.server.inbound_wire_id(inbound), None, "answered");
        let (id, outcome) = one_response(&mut pair);
        assert!(call == id);
        let result = call.decode(outcome).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hi back"));
        assert!(!result.is_error());
        let wire = last_sent_by_server(&pair);
        // Legacy results carry no modern envelope; modern ones say resultType.
        assert_eq!(
            wire["result"].get("resultType").is_some(),
            version.is_none(),
            "{wire}"
        );
    }
}

#[test]
fn missing_required_params_name_the_field() {
    let mut pair = ready(Some(ProtocolVersion::V2025_11_25));
    let raw = serde_json::value::RawValue::from_string(r#"{"arguments":{}}"#.into()).unwrap();
    pair.client
        .send_request_raw(pair.now, "tools/call", Some(raw), RequestOptions::default())
        .unwrap();
    let request = one_request(&mut pair);
    let error = request.params::<CallTool>().unwrap_err();
    assert_eq!(error.code, jsonrpc::code::INVALID_PARAMS);
    assert!(error.message.contains("`name`"), "{}", error.message);
    pair.server.respond_error(request.responder, &error);
    let (_, outcome) = one_response(&mut pair);
    match outcome {
        Err(CallError::Remote(e)) => assert!(e.message.contains("`name`")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_result_of_the_wrong_shape_is_an_invalid_result() {
    let mut pair = ready(Some(ProtocolVersion::V2025_11_25));
    let list = pair
        .client
        .send_request::<ListTools>(pair.now, Default::default(), RequestOptions::default())
        .unwrap();
    let request = one_request(&mut pair);
    // `tools` is required in a tools/list result.
    pair.server
        .respond_raw(
            request.responder,
            &serde_json::value::RawValue::from_string("{}".into()).unwrap(),
        )
        .unwrap();
    let (_, outcome) = one_response(&mut pair);
    match list.decode(outcome) {
        Err(CallError::InvalidResult(why)) => {
            assert!(
                why.contains("tools/list") && why.contains("`tools`"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn results_are_fitted_to_the_request_version() {
    // Audio content did not exist in 2024-11-05: the same handler result becomes text there
    // and stays audio on 2025-06-18.
    for (version, kind) in [
        (ProtocolVersion::V2024_11_05, "text"),
        (ProtocolVersion::V2025_06_18, "audio"),
    ] {
        let mut pair = ready(Some(version));
        pair.client
            .send_request::<CallTool>(
                pair.now,
                CallToolParams::new("speak"),
                RequestOptions::default(),
            )
            .unwrap();
        let request = one_request(&mut pair);
        let result = CallToolResult::new(vec![ContentBlock::audio("UklGRg==", "audio/wav")]);
        pair.server.respond(request.responder, result).unwrap();
        pair.drive();
        let wire = last_sent_by_server(&pair);
        assert_eq!(
            wire["result"]["content"][0]["type"], kind,
            "{version}: {wire}"
        );
    }
}

#[test]
fn typed_list_decodes_tools() {
    let mut pair = ready(None);
    let list = pair
        .client
        .send_request::<ListTools>(pair.now, Default::default(), RequestOptions::default())
        .unwrap();
    let request = one_request(&mut pair);
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    let result = ListToolsResult::new(vec![Tool::new("echo", schema)]);
    pair.server.respond(request.responder, result).unwrap();
    let (_, outcome) = one_response(&mut pair);
    let tools = list.decode(outcome).unwrap();
    assert_eq!(tools.tools[0].name, "echo");
    assert_eq!(ListTools::NAME, "tools/list");
}

#[test]
fn respond_with_after_the_peer_cancelled_sends_nothing() {
    let mut pair = ready(Some(ProtocolVersion::V2025_11_25));
    let call = pair
        .client
        .send_request::<CallTool>(
            pair.now,
            CallToolParams::new("slow"),
            RequestOptions::default(),
        )
        .unwrap();
    let request = one_request(&mut pair);
    pair.client.cancel(pair.now, call.id(), None).unwrap();
    pair.drive();
    let sent_before = pair.transcript().len();
    pair.server
        .respond(request.responder, CallToolResult::text("late"))
        .unwrap();
    pair.drive();
    assert_eq!(pair.transcript().len(), sent_before);
}

#[test]
fn cacheable_modern_results_get_caching_hints_unless_the_handler_set_them() {
    for (version, method, result, expect) in [
        (
            None,
            "tools/list",
            json!({"tools": []}),
            Some((json!(0), json!("private"))),
        ),
        (
            None,
            "resources/list",
            json!({"resources": [], "ttlMs": 5000, "cacheScope": "public"}),
            Some((json!(5000), json!("public"))),
        ),
        (None, "tools/call", json!({"content": []}), None),
        (
            Some(ProtocolVersion::V2025_11_25),
            "tools/list",
            json!({"tools": []}),
            None,
        ),
    ] {
        let mut pair = ready(version);
        pair.client
            .send_request_raw(pair.now, method, None, RequestOptions::default())
            .unwrap();
        let request = one_request(&mut pair);
        let raw = serde_json::value::RawValue::from_string(result.to_string()).unwrap();
        pair.server.respond_raw(request.responder, &raw).unwrap();
        pair.drive();
        let wire = last_sent_by_server(&pair);
        let got = wire["result"]
            .get("ttlMs")
            .map(|t| (t.clone(), wire["result"]["cacheScope"].clone()));
        assert_eq!(got, expect, "{version:?} {method}: {wire}");
    }
}
