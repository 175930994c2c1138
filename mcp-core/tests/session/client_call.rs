//! `check_call_result`: a typed `tools/list` feeds the `OutputValidator`, then `tools/call`
//! outcomes are decoded and checked in one step, over a real session pair

use crate::common;

use common::origin;
use mcp_sansio::client::{OutputError, OutputValidator, ToolCallError, check_call_result};
use mcp_sansio::schema::method::{CallTool, ListTools};
use mcp_sansio::schema::{CallToolParams, CallToolResult, ListToolsResult, PaginatedParams, Tool};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, ClientEvent, ErrorObject, ProtocolVersion, RequestOptions, ServerEvent,
};
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

fn schema() -> Map<String, Value> {
    match json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// Sends a request, lets the server answer with `answer`, returns the client's outcome
fn exchange<F>(pair: &mut Pair, send: F, answer: Result<Value, ErrorObject>) -> ClientEvent
where
    F: FnOnce(&mut Pair),
{
    send(pair);
    pair.drive();
    let Some(ServerEvent::Request(request)) = pair.server_events().pop() else {
        panic!("no request")
    };
    match answer {
        Ok(v) => {
            let raw = serde_json::value::to_raw_value(&v).unwrap();
            pair.server.respond_raw(request.responder, &raw).unwrap();
        }
        Err(e) => pair.server.respond_error(request.responder, &e),
    }
    pair.drive();
    pair.client_events().pop().expect("a response")
}

type Answer = Result<Value, ErrorObject>;
type Expect = fn(&Result<CallToolResult, ToolCallError>) -> bool;

#[test]
fn list_then_checked_calls() {
    for version in [
        Some(ProtocolVersion::V2025_06_18),
        Some(ProtocolVersion::V2025_11_25),
        None,
    ] {
        let mut pair = ready(version);
        let mut outputs = OutputValidator::new();

        let mut list = None;
        let tools = ListToolsResult::new(vec![
            Tool::new("count", Map::new()).with_output_schema(schema()),
            Tool::new("plain", Map::new()),
        ]);
        let event = exchange(
            &mut pair,
            |p| {
                list = Some(
                    p.client
                        .send_request::<ListTools>(
                            p.now,
                            PaginatedParams::default(),
                            RequestOptions::default(),
                        )
                        .unwrap(),
                );
            },
            Ok(
                json!({"tools": serde_json::to_value(&tools).unwrap()["tools"], "ttlMs": 0, "cacheScope": "private"}),
            ),
        );
        let ClientEvent::Response { id, outcome } = event else {
            panic!("{event:?}")
        };
        let list = list.unwrap();
        assert_eq!(list, id);
        let listed = list.decode(outcome).unwrap();
        assert!(outputs.observe_tools(&listed).is_empty());

        let cases: [(&str, Answer, Expect); 6] = [
            (
                "count",
                Ok(json!({"content": [], "structuredContent": {"n": 3}})),
                |r| r.is_ok(),
            ),
            (
                "count",
                Ok(json!({"content": [], "structuredContent": {"n": "three"}})),
                |r| matches!(r, Err(ToolCallError::Output(OutputError::Invalid { tool, errors })) if tool == "count" && errors[0].instance_path == "/n"),
            ),
            (
                "count",
                Ok(json!({"content": [{"type": "text", "text": "3"}]})),
                |r| {
                    matches!(
                        r,
                        Err(ToolCallError::Output(
                            OutputError::MissingStructuredContent { .. }
                        ))
                    )
                },
            ),
            ("count", Ok(json!({"content": [], "isError": true})), |r| {
                r.as_ref().is_ok_and(CallToolResult::is_error)
            }),
            ("plain", Ok(json!({"content": []})), |r| r.is_ok()),
            ("count", Err(ErrorObject::invalid_params("no")), |r| {
                matches!(r, Err(ToolCallError::Call(CallError::Remote(_))))
            }),
        ];
        for (tool, answer, expect) in cases {
            let mut call = None;
            let event = exchange(
                &mut pair,
                |p| {
                    call = Some(
                        p.client
                            .send_request::<CallTool>(
                                p.now,
                                CallToolParams::new(tool),
                                RequestOptions::default(),
                            )
                            .unwrap(),
                    );
                },
                answer,
            );
            let ClientEvent::Response { id, outcome } = event else {
                panic!("{event:?}")
            };
            let call = call.unwrap();
            assert_eq!(call, id);
            let checked = check_call_result(&outputs, tool, call, outcome);
            assert!(expect(&checked), "{version:?} {tool}: {checked:?}");
        }
    }
}

#[test]
fn undecodable_results_are_call_errors() {
    let outputs = OutputValidator::new();
    let mut pair = ready(Some(ProtocolVersion::V2025_11_25));
    let mut call = None;
    let event = exchange(
        &mut pair,
        |p| {
            call = Some(
                p.client
                    .send_request::<CallTool>(
                        p.now,
                        CallToolParams::new("x"),
                        RequestOptions::default(),
                    )
                    .unwrap(),
            );
        },
        Ok(json!({"content": "not a list"})),
    );
    let ClientEvent::Response { outcome, .. } = event else {
        panic!()
    };
    let err = check_call_result(&outputs, "x", call.unwrap(), outcome).unwrap_err();
    assert!(
        matches!(err, ToolCallError::Call(CallError::InvalidResult(_))),
        "{err:?}"
    );
    assert!(err.to_string().contains("tools/call"), "{err}");
}
