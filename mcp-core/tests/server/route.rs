//! `Catalog::route`: what each server method becomes (an answer now, or the handler to run),
//! on requests from a real client session in a legacy and a modern session

use crate::common;

use common::origin;
use mcp_sansio::schema::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use mcp_sansio::server::{Catalog, Route, respond};
use mcp_sansio::testing::Pair;
use mcp_sansio::{ClientEvent, InboundRequest, ProtocolVersion, RequestOptions, ServerEvent};
use serde_json::{Map, Value, json};

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("{other}"),
    }
}

fn catalog() -> Catalog {
    let mut catalog = Catalog::default();
    catalog
        .add_tool(Tool::new(
            "echo",
            object(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
        ))
        .unwrap();
    catalog
        .add_resource(Resource::new("test://static", "static"))
        .unwrap();
    catalog
        .add_template(ResourceTemplate::new("test://items/{id}", "items"))
        .unwrap();
    catalog
        .add_prompt(
            Prompt::new("greeting")
                .with_arguments(vec![PromptArgument::new("name").required(true)]),
        )
        .unwrap();
    catalog
}

/// Sends `method` with `params` from the client; returns the request as the server sees it
fn inbound(pair: &mut Pair, method: &str, params: Value) -> InboundRequest {
    let raw = serde_json::value::to_raw_value(&params).unwrap();
    pair.client
        .send_request_raw(pair.now, method, Some(raw), RequestOptions::default())
        .unwrap();
    pair.drive();
    let mut events = pair.server_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop() {
        Some(ServerEvent::Request(request)) => request,
        other => panic!("{other:?}"),
    }
}

/// The route of one request, and (for an answer) what the client then receives
fn route(
    pair: &mut Pair,
    catalog: &Catalog,
    method: &str,
    params: Value,
    completion: bool,
) -> (Route, Option<Value>) {
    let request = inbound(pair, method, params);
    let route = catalog.route(&request, completion);
    let Route::Answer(answer) = &route else {
        return (route, None);
    };
    respond(&mut pair.server, request.responder, answer);
    pair.drive();
    let mut events = pair.client_events();
    let received = match events.pop() {
        Some(ClientEvent::Response {
            outcome: Ok(raw), ..
        }) => serde_json::from_str(raw.get()).unwrap(),
        Some(ClientEvent::Response {
            outcome: Err(e), ..
        }) => json!({"error": e.to_string()}),
        other => panic!("{other:?}"),
    };
    (route, Some(received))
}

fn routes(mut pair: Pair) {
    pair.drive();
    pair.client_events();
    pair.server_events();
    let catalog = catalog();

    // Lists are answered from the catalog.
    let (_, list) = route(&mut pair, &catalog, "tools/list", json!({}), false);
    assert_eq!(list.unwrap()["tools"][0]["name"], "echo");
    let (_, list) = route(
        &mut pair,
        &catalog,
        "resources/templates/list",
        json!({}),
        false,
    );
    assert_eq!(
        list.unwrap()["resourceTemplates"][0]["uriTemplate"],
        "test://items/{id}"
    );

    // A valid call goes to the tool's handler; invalid arguments are an isError result; an
    // unknown tool an error.
    match route(
        &mut pair,
        &catalog,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        false,
    )
    .0
    {
        Route::Tool { name, arguments } => {
            assert_eq!(name, "echo");
            assert_eq!(arguments["text"], "hi");
        }
        other => panic!("{other:?}"),
    }
    let (_, invalid) = route(
        &mut pair,
        &catalog,
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
        false,
    );
    assert_eq!(invalid.unwrap()["isError"], true);
    let (_, unknown) = route(
        &mut pair,
        &catalog,
        "tools/call",
        json!({"name": "nope"}),
        false,
    );
    assert!(
        unknown.unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("-32602")
    );

    // Reads go to the resource's or the matching template's reader.
    match route(
        &mut pair,
        &catalog,
        "resources/read",
        json!({"uri": "test://static"}),
        false,
    )
    .0
    {
        Route::Resource {
            key,
            uri,
            variables,
        } => {
            assert_eq!(
                (key.as_str(), uri.as_str()),
                ("test://static", "test://static")
            );
            assert!(variables.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match route(
        &mut pair,
        &catalog,
        "resources/read",
        json!({"uri": "test://items/7"}),
        false,
    )
    .0
    {
        Route::Resource {
            key,
            uri,
            variables,
        } => {
            assert_eq!(
                (key.as_str(), uri.as_str()),
                ("test://items/{id}", "test://items/7")
            );
            assert_eq!(variables.get_str("id"), Some("7"));
        }
        other => panic!("{other:?}"),
    }
    let (_, missing) = route(
        &mut pair,
        &catalog,
        "resources/read",
        json!({"uri": "test://nothing"}),
        false,
    );
    assert!(missing.unwrap()["error"].as_str().is_some());

    // Prompts need their required arguments.
    match route(
        &mut pair,
        &catalog,
        "prompts/get",
        json!({"name": "greeting", "arguments": {"name": "Ada"}}),
        false,
    )
    .0
    {
        Route::Prompt { name, arguments } => {
            assert_eq!(name, "greeting");
            assert_eq!(arguments["name"], "Ada");
        }
        other => panic!("{other:?}"),
    }
    let (_, missing) = route(
        &mut pair,
        &catalog,
        "prompts/get",
        json!({"name": "greeting"}),
        false,
    );
    assert!(
        missing.unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("-32602")
    );

    // Completion only with a handler (the session itself refuses methods it does not know).
    let complete = json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "A"}});
    assert!(matches!(
        route(
            &mut pair,
            &catalog,
            "completion/complete",
            complete.clone(),
            true
        )
        .0,
        Route::Complete(_)
    ));
    let (_, none) = route(&mut pair, &catalog, "completion/complete", complete, false);
    assert!(none.unwrap()["error"].as_str().unwrap().contains("-32601"));
}

/// `try_route` decides what `route` decides, and leaves what the catalog does not serve to
/// the caller instead of answering it method-not-found
fn tries(mut pair: Pair) {
    pair.drive();
    pair.client_events();
    pair.server_events();
    let catalog = catalog();

    let request = inbound(&mut pair, "tools/list", json!({}));
    match catalog.try_route(&request, false) {
        Some(Route::Answer(Ok(list))) => {
            let list: Value = serde_json::from_str(list.get()).unwrap();
            assert_eq!(list["tools"][0]["name"], "echo");
        }
        other => panic!("{other:?}"),
    }
    let call = json!({"name": "echo", "arguments": {"text": "hi"}});
    let request = inbound(&mut pair, "tools/call", call);
    assert!(matches!(
        catalog.try_route(&request, false),
        Some(Route::Tool { name, .. }) if name == "echo"
    ));

    let complete = json!({"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "A"}});
    let request = inbound(&mut pair, "completion/complete", complete);
    assert!(matches!(
        catalog.try_route(&request, true),
        Some(Route::Complete(_))
    ));
    assert!(catalog.try_route(&request, false).is_none());
    match catalog.route(&request, false) {
        Route::Answer(Err(e)) => assert_eq!(e.code, mcp_sansio::jsonrpc::code::METHOD_NOT_FOUND),
        other => panic!("{other:?}"),
    }
}

#[test]
fn try_route_leaves_unserved_methods_to_the_caller_in_a_legacy_session() {
    tries(Pair::legacy(origin(), ProtocolVersion::V2025_11_25));
}

#[test]
fn try_route_leaves_unserved_methods_to_the_caller_in_a_modern_session() {
    tries(Pair::modern(origin()));
}

#[test]
fn routes_in_a_legacy_session() {
    routes(Pair::legacy(origin(), ProtocolVersion::V2025_11_25));
}

#[test]
fn routes_in_a_modern_session() {
    routes(Pair::modern(origin()));
}

#[test]
fn a_call_s_params_are_refused_exactly_when_call_tool_params_refuse_them() {
    // The route reads only a call's name and arguments, skipping `_meta`; it must still
    // check every member `CallToolParams` types, and nothing more. (The session refuses
    // some first: those are refused all the same.)
    use mcp_sansio::schema::CallToolParams;
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    pair.drive();
    pair.client_events();
    pair.server_events();
    let catalog = catalog();
    let hi = json!({"text": "hi"});
    for params in [
        json!({"name": "echo", "arguments": hi}),
        json!({"name": "echo", "arguments": hi, "other": [1, {"a": null}]}),
        json!({"name": "echo", "arguments": null}),
        json!({"name": "echo"}),
        json!({"arguments": hi}),
        json!({"name": 5, "arguments": hi}),
        json!({"name": "echo", "arguments": []}),
        json!({"name": "echo", "arguments": "text"}),
        json!({"name": "echo", "arguments": hi, "_meta": {"a": [1, {"b": 2}], "c": "d"}}),
        json!({"name": "echo", "arguments": hi, "_meta": null}),
        json!({"name": "echo", "arguments": hi, "_meta": 5}),
        json!({"name": "echo", "arguments": hi, "_meta": ["x"]}),
        json!({"name": "echo", "arguments": hi, "task": {"ttl": 5}}),
        json!({"name": "echo", "arguments": hi, "task": "x"}),
        json!({"name": "echo", "arguments": hi, "task": {"ttl": "long"}}),
        json!({"name": "echo", "arguments": hi, "requestState": "s"}),
        json!({"name": "echo", "arguments": hi, "requestState": 1}),
        json!({"name": "echo", "arguments": hi, "inputResponses": 3}),
        json!({"name": "echo", "arguments": hi, "inputResponses": {}}),
    ] {
        let typed = serde_json::from_value::<CallToolParams>(params.clone());
        let raw = serde_json::value::to_raw_value(&params).unwrap();
        pair.client
            .send_request_raw(pair.now, "tools/call", Some(raw), RequestOptions::default())
            .unwrap();
        pair.drive();
        let Some(ServerEvent::Request(request)) = pair.server_events().pop() else {
            // The session refused it before any route (a member it reads itself).
            let refused = pair.client_events().into_iter().any(|e| {
                matches!(e, ClientEvent::Response { outcome: Err(e), .. }
                    if e.to_string().contains("-32602"))
            });
            assert!(refused && typed.is_err(), "{params}");
            continue;
        };
        let routed = catalog.route(&request, false);
        let refused = matches!(&routed, Route::Answer(Err(e)) if e.code == -32602);
        assert_eq!(refused, typed.is_err(), "{params}: {routed:?}");
        if let Route::Answer(Err(e)) = &routed {
            assert!(e.message.contains("invalid tools/call params: "), "{e:?}");
        }
        if let Route::Answer(answer) = &routed {
            respond(&mut pair.server, request.responder, answer);
        }
        pair.drive();
        pair.client_events();
    }
}
