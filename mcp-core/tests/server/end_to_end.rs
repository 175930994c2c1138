//! A server loop built on `server::Catalog`, driven by a real client session, in a legacy and
//! a modern session
//!
//! `dispatch` below is the shape a binding copies: decode the params, ask the catalog, run
//! the handler (here: small functions standing in for the application's closures), answer.

use crate::common;

use common::origin;
use mcp_sansio::schema::method::{CallTool, GetPrompt, ListTools, Method, ReadResource};
use mcp_sansio::schema::{
    CacheScope, CallToolParams, CallToolResult, FitVersion, GetPromptParams, GetPromptResult,
    PaginatedParams, Prompt, PromptArgument, PromptMessage, ReadResourceParams, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Tool,
};
use mcp_sansio::server::{CachePolicy, Catalog, CatalogConfig, ResourceMatch, resource_not_found};
use mcp_sansio::testing::{Pair, Side};
use mcp_sansio::{
    CallError, ClientEvent, ErrorObject, InboundRequest, ProtocolVersion, RequestOptions,
    Responder, ServerEvent, ServerSession, jsonrpc,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

// The server side: what a binding writes

/// Answers one request from the catalog and the application's handlers
fn dispatch(session: &mut ServerSession, catalog: &Catalog, request: InboundRequest) {
    let method = request.method.as_str();
    if method == ListTools::NAME {
        let outcome = request
            .params::<ListTools>()
            .and_then(|params| catalog.list_tools(&params));
        answer(session, request.responder, outcome);
    } else if method == CallTool::NAME {
        let outcome =
            request
                .params::<CallTool>()
                .and_then(|params| match catalog.check_call(&params) {
                    Ok(tool) => Ok(run_tool(&tool.name, &params)),
                    Err(refused) => refused.into_response(),
                });
        answer(session, request.responder, outcome);
    } else if method == ReadResource::NAME {
        let outcome = request
            .params::<ReadResource>()
            .and_then(|params| read_resource(catalog, &params.uri))
            .map(|result| catalog.with_read_cache(result));
        answer(session, request.responder, outcome);
    } else if method == GetPrompt::NAME {
        let outcome = request.params::<GetPrompt>().and_then(|params| {
            let prompt = catalog.check_prompt_args(&params.name, params.arguments.as_ref())?;
            Ok(get_prompt(&prompt.name, &params))
        });
        answer(session, request.responder, outcome);
    } else {
        session.respond_error(request.responder, &ErrorObject::method_not_found(method));
    }
}

/// Sends a result (fitted to the request's version) or an error
fn answer<T: Serialize + FitVersion>(
    session: &mut ServerSession,
    responder: Responder,
    outcome: Result<T, ErrorObject>,
) {
    match outcome {
        Ok(result) => session
            .respond(responder, result)
            .expect("results are objects"),
        Err(error) => session.respond_error(responder, &error),
    }
}

/// The tool handlers; the catalog already checked the arguments
fn run_tool(name: &str, params: &CallToolParams) -> CallToolResult {
    let args = params.arguments.clone().unwrap_or_default();
    match name {
        "add" => {
            let sum = args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap();
            CallToolResult::text(sum.to_string())
        }
        "echo" => CallToolResult::text(args["text"].as_str().unwrap()),
        _ => CallToolResult::text("done"),
    }
}

/// The resource handler: a registered resource, or a template with its variables
fn read_resource(catalog: &Catalog, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
    let text = match catalog
        .resolve(uri)
        .ok_or_else(|| resource_not_found(uri))?
    {
        ResourceMatch::Resource(resource) => format!("static {}", resource.name),
        ResourceMatch::Template { variables, .. } => {
            let id = variables.get_str("id").unwrap_or_default();
            json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                .to_string()
        }
        _ => return Err(ErrorObject::internal_error("unexpected match")),
    };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(
        uri, text,
    )]))
}

/// The prompt handler; the catalog already checked the required arguments
fn get_prompt(name: &str, params: &GetPromptParams) -> GetPromptResult {
    let args = params.arguments.clone().unwrap_or_default();
    GetPromptResult::new(vec![PromptMessage::user(format!(
        "{name}: hello {}",
        args["who"]
    ))])
}

fn catalog() -> Catalog {
    let mut config = CatalogConfig::new();
    config.page_size = 2;
    config.cache = CachePolicy::new(30_000, CacheScope::Public);
    let mut catalog = Catalog::new(config);
    let schema = |v: Value| -> Map<String, Value> { v.as_object().unwrap().clone() };
    catalog
        .add_tool(Tool::new(
            "add",
            schema(json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            })),
        ))
        .unwrap();
    catalog
        .add_tool(Tool::new(
            "echo",
            schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            })),
        ))
        .unwrap();
    catalog
        .add_tool(Tool::new("simple", schema(json!({"type": "object"}))))
        .unwrap();
    catalog
        .add_resource(Resource::new("test://static-text", "static-text"))
        .unwrap();
    catalog
        .add_template(ResourceTemplate::new("test://template/{id}/data", "data"))
        .unwrap();
    catalog
        .add_prompt(
            Prompt::new("greeting").with_arguments(vec![PromptArgument::new("who").required(true)]),
        )
        .unwrap();
    catalog
}

// The client side of the test

struct Harness {
    pair: Pair,
    catalog: Catalog,
}

impl Harness {
    fn new(version: Option<ProtocolVersion>) -> Self {
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
        Self {
            pair,
            catalog: catalog(),
        }
    }

    /// Sends one typed request, lets the server dispatch it, and returns the outcome and the
    /// server's answer as sent on the wire
    fn request<M: Method>(&mut self, params: M::Params) -> (Result<M::Result, CallError>, Value) {
        let pending = self
            .pair
            .client
            .send_request::<M>(self.pair.now, params, RequestOptions::default())
            .unwrap();
        self.pair.drive();
        for event in self.pair.server_events() {
            match event {
                ServerEvent::Request(request) => {
                    dispatch(&mut self.pair.server, &self.catalog, request)
                }
                other => panic!("unexpected server event {other:?}"),
            }
        }
        self.pair.drive();
        let mut events = self.pair.client_events();
        assert_eq!(events.len(), 1, "{events:?}");
        let outcome = match events.pop() {
            Some(ClientEvent::Response { id, outcome }) if pending == id => pending.decode(outcome),
            other => panic!("{other:?}"),
        };
        let (_, line) = self
            .pair
            .transcript()
            .iter()
            .rev()
            .find(|(side, _)| *side == Side::Server)
            .unwrap();
        (outcome, serde_json::from_str(line).unwrap())
    }
}

fn remote_error<T: std::fmt::Debug>(outcome: Result<T, CallError>) -> ErrorObject {
    match outcome {
        Err(CallError::Remote(error)) => error,
        other => panic!("{other:?}"),
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn serve(version: Option<ProtocolVersion>) {
    let modern = version.is_none();
    let mut h = Harness::new(version);

    // tools/list, two pages
    let (first, wire) = h.request::<ListTools>(PaginatedParams::new());
    let first = first.unwrap();
    let names: Vec<_> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "echo"]);
    assert_eq!(wire["result"].get("ttlMs").is_some(), modern, "{wire}");
    assert_eq!(wire["result"].get("cacheScope").is_some(), modern, "{wire}");
    if modern {
        assert_eq!(wire["result"]["ttlMs"], 30_000);
        assert_eq!(wire["result"]["cacheScope"], "public");
    }
    let cursor = first.next_cursor.expect("a second page");
    let (second, _) = h.request::<ListTools>(PaginatedParams::at(cursor));
    let second = second.unwrap();
    assert_eq!(second.tools.len(), 1);
    assert_eq!(second.tools[0].name, "simple");
    assert!(second.next_cursor.is_none());

    // a bad cursor
    let (bad, _) = h.request::<ListTools>(PaginatedParams::at("garbage"));
    let error = remote_error(bad);
    assert_eq!(
        (error.code, error.message.as_str()),
        (jsonrpc::code::INVALID_PARAMS, "Invalid cursor")
    );

    // tools/call: valid
    let (sum, _) = h.request::<CallTool>(
        CallToolParams::new("add").with_arguments(args(json!({"a": 2, "b": 3}))),
    );
    let sum = sum.unwrap();
    assert!(!sum.is_error());
    assert_eq!(sum.content[0].as_text(), Some("5"));

    // tools/call without `arguments` on a tool that needs none
    let (simple, _) = h.request::<CallTool>(CallToolParams::new("simple"));
    assert_eq!(simple.unwrap().content[0].as_text(), Some("done"));

    // tools/call: invalid arguments are a result with isError
    let (invalid, wire) =
        h.request::<CallTool>(CallToolParams::new("add").with_arguments(args(json!({"a": "two"}))));
    let invalid = invalid.unwrap();
    assert!(invalid.is_error(), "{wire}");
    let text = invalid.content[0].as_text().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool add:"),
        "{text}"
    );
    assert!(
        text.contains("/a: \"two\" is not of type \"integer\""),
        "{text}"
    );
    assert!(text.contains("\"b\" is a required property"), "{text}");

    // tools/call: unknown tool is a JSON-RPC error
    let (unknown, _) = h.request::<CallTool>(CallToolParams::new("nope"));
    let error = remote_error(unknown);
    assert_eq!(error.code, jsonrpc::code::INVALID_PARAMS);
    assert_eq!(error.message, "Unknown tool: nope");

    // resources/read through a template
    let (read, wire) =
        h.request::<ReadResource>(ReadResourceParams::new("test://template/123/data"));
    let read = read.unwrap();
    let text = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(text["uri"], "test://template/123/data");
    assert!(text["text"].as_str().unwrap().contains("Data for ID: 123"));
    assert_eq!(wire["result"].get("ttlMs").is_some(), modern, "{wire}");

    // resources/read of an exact resource, and of nothing
    let (read, _) = h.request::<ReadResource>(ReadResourceParams::new("test://static-text"));
    let text = serde_json::to_value(&read.unwrap().contents[0]).unwrap();
    assert_eq!(text["text"], "static static-text");
    let (missing, _) = h.request::<ReadResource>(ReadResourceParams::new("test://nothing"));
    let error = remote_error(missing);
    assert_eq!(error.code, jsonrpc::code::INVALID_PARAMS);
    assert_eq!(
        error.data::<Value>().unwrap().unwrap(),
        json!({"uri": "test://nothing"})
    );

    // prompts/get with and without its required argument
    let mut params = GetPromptParams::new("greeting");
    params.arguments = Some([("who".to_owned(), "Ada".to_owned())].into());
    let (prompt, _) = h.request::<GetPrompt>(params);
    let prompt = prompt.unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("greeting: hello Ada")
    );
    let (missing, _) = h.request::<GetPrompt>(GetPromptParams::new("greeting"));
    let error = remote_error(missing);
    assert_eq!(error.code, jsonrpc::code::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Missing required argument who for prompt greeting"
    );
}

#[test]
fn a_catalog_server_in_a_legacy_session() {
    serve(Some(ProtocolVersion::V2025_11_25));
}

#[test]
fn a_catalog_server_in_an_old_legacy_session() {
    serve(Some(ProtocolVersion::V2024_11_05));
}

#[test]
fn a_catalog_server_in_a_modern_session() {
    serve(None);
}

#[test]
fn list_changes_become_notifications_in_a_legacy_session() {
    let mut h = Harness::new(Some(ProtocolVersion::V2025_11_25));
    h.catalog.take_changes();
    h.catalog.remove_tool("simple");
    h.catalog
        .add_resource(Resource::new("test://new", "new"))
        .unwrap();
    // The capabilities the server declared (tools and resources with listChanged, prompts
    // without).
    let capabilities = Pair::server_config().capabilities;
    let changes = h.catalog.take_changes();
    for method in changes.notifications(&capabilities) {
        h.pair
            .server
            .send_notification_raw(method, None)
            .expect("the session accepts notifications");
    }
    h.pair.drive();
    let got: Vec<String> = h
        .pair
        .client_events()
        .into_iter()
        .map(|event| match event {
            ClientEvent::Notification(n) => n.method,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        [
            "notifications/tools/list_changed",
            "notifications/resources/list_changed"
        ]
    );
}
