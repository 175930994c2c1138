//! Per-entry scopes in the catalog: `Catalog::route` refuses a tool, resource, template or
//! prompt whose scopes the request's principal lacks with the JSON-RPC error -32003 (a
//! byte-stream session has no principal unless the application set a caller), before it
//! looks at the arguments; `hide_forbidden` leaves such entries out of the caller's lists;
//! the requirements follow their entry, and `Catalog::access` is what an HTTP server checks

use std::sync::Arc;

use mcp_sansio::http::RequiredScopes;
use mcp_sansio::schema::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use mcp_sansio::server::{
    Catalog, CatalogConfig, EntryKind, INSUFFICIENT_SCOPE, Route, insufficient_scope, respond,
};
use mcp_sansio::session::{Caller, Principal};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientEvent, InboundRequest, ProtocolVersion, RequestOptions, ServerEvent, jsonrpc,
};
use serde_json::{Map, Value, json};

use crate::common::origin;

const ADMIN: &str = "mcp:admin";

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("{other}"),
    }
}

/// Open and scoped entries of every kind
fn catalog(config: CatalogConfig) -> Catalog {
    let mut c = Catalog::new(config);
    let text = object(
        json!({"type": "object", "properties": {"text": {"type": "string"}},
        "required": ["text"]}),
    );
    c.add_tool(Tool::new("echo", text.clone())).unwrap();
    c.add_tool(Tool::new("admin", text)).unwrap();
    c.add_resource(Resource::new("file:///readme", "readme"))
        .unwrap();
    c.add_resource(Resource::new("file:///payroll", "payroll"))
        .unwrap();
    c.add_template(ResourceTemplate::new("secret:///{name}", "secrets"))
        .unwrap();
    c.add_template(ResourceTemplate::new("file:///{name}", "files"))
        .unwrap();
    c.add_prompt(Prompt::new("hello")).unwrap();
    c.add_prompt(
        Prompt::new("admin_prompt").with_arguments(vec![PromptArgument::new("who").required(true)]),
    )
    .unwrap();
    let admin = || vec![ADMIN.to_owned()];
    assert!(c.require_scopes(EntryKind::Tool, "admin", admin()));
    assert!(c.require_scopes(EntryKind::Resource, "file:///payroll", admin()));
    assert!(c.require_scopes(EntryKind::Template, "secret:///{name}", admin()));
    assert!(c.require_scopes(EntryKind::Prompt, "admin_prompt", admin()));
    c
}

fn alice_admin() -> Principal {
    Principal::new(Some("alice".into()), Some("app".into()))
        .with_scopes(vec!["mcp".into(), ADMIN.into()])
}

fn bob() -> Principal {
    Principal::new(Some("bob".into()), Some("app".into())).with_scopes(vec!["mcp".into()])
}

fn ready(mut pair: Pair) -> Pair {
    pair.drive();
    pair.client_events();
    pair.server_events();
    pair
}

fn pairs() -> [Pair; 2] {
    [
        ready(Pair::modern(origin())),
        ready(Pair::legacy(origin(), ProtocolVersion::V2025_11_25)),
    ]
}

/// Sends `method` from the client; the request as the server sees it
fn inbound(pair: &mut Pair, method: &str, params: Value) -> InboundRequest {
    pair.client
        .send_request_raw(
            pair.now,
            method,
            Some(mcp_sansio::testing::raw(params)),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    let mut events = pair.server_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop() {
        Some(ServerEvent::Request(request)) => request,
        other => panic!("{other:?}"),
    }
}

/// Asserts the catalog refuses `method` for want of `mcp:admin`, and that the client
/// receives that error
fn refused(pair: &mut Pair, catalog: &Catalog, method: &str, params: Value) {
    let request = inbound(pair, method, params.clone());
    let route = catalog.route(&request, true);
    let Route::Answer(Err(error)) = &route else {
        panic!("{method} {params}: {route:?}")
    };
    assert_eq!(error.code, INSUFFICIENT_SCOPE, "{error:?}");
    assert_eq!(error.code, -32003);
    let data: Value = serde_json::from_str(error.data.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        data,
        json!({"error": "insufficient_scope", "requiredScopes": [ADMIN]}),
        "{method}"
    );
    assert!(error.message.contains(ADMIN), "{}", error.message);
    let Route::Answer(answer) = route else {
        unreachable!()
    };
    respond(&mut pair.server, request.responder, &answer);
    pair.drive();
    let events = pair.client_events();
    let [
        ClientEvent::Response {
            outcome: Err(received),
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    match received {
        mcp_sansio::CallError::Remote(e) => {
            assert_eq!(e.code, INSUFFICIENT_SCOPE);
            let data: Value = serde_json::from_str(e.data.as_ref().unwrap().get()).unwrap();
            assert_eq!(data["requiredScopes"], json!([ADMIN]));
        }
        other => panic!("{other:?}"),
    }
}

/// The route of a request that goes to its handler
fn routed(pair: &mut Pair, catalog: &Catalog, method: &str, params: Value) -> Route {
    let request = inbound(pair, method, params.clone());
    let route = catalog.route(&request, true);
    assert!(
        !matches!(route, Route::Answer(_)),
        "{method} {params}: {route:?}"
    );
    // Answered, so that the pair has nothing in flight.
    pair.server.respond_error(
        request.responder,
        &jsonrpc::ErrorObject::internal_error("x"),
    );
    pair.drive();
    pair.client_events();
    route
}

/// The scoped requests: admin, the scoped resource and template, the scoped prompt
fn scoped_requests() -> Vec<(&'static str, Value)> {
    vec![
        (
            "tools/call",
            json!({"name": "admin", "arguments": {"text": "x"}}),
        ),
        // Invalid arguments: refused for the scope first, not answered isError.
        ("tools/call", json!({"name": "admin", "arguments": {}})),
        ("resources/read", json!({"uri": "file:///payroll"})),
        ("resources/read", json!({"uri": "secret:///root"})),
        (
            "prompts/get",
            json!({"name": "admin_prompt", "arguments": {"who": "me"}}),
        ),
        // A missing required argument: refused for the scope first.
        ("prompts/get", json!({"name": "admin_prompt"})),
    ]
}

#[test]
fn a_byte_stream_caller_without_the_scopes_gets_32003() {
    let catalog = catalog(CatalogConfig::default());
    for mut pair in pairs() {
        // No caller at all (a stdio server that authenticated nobody), then bob.
        for caller in [None, Some(Caller::principal(bob()))] {
            pair.server.set_caller(caller.map(Arc::new));
            for (method, params) in scoped_requests() {
                refused(&mut pair, &catalog, method, params);
            }
            // What needs no scope goes through.
            let r = routed(
                &mut pair,
                &catalog,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "x"}}),
            );
            assert!(
                matches!(r, Route::Tool { ref name, .. } if name == "echo"),
                "{r:?}"
            );
            let r = routed(
                &mut pair,
                &catalog,
                "resources/read",
                json!({"uri": "file:///readme"}),
            );
            assert!(matches!(r, Route::Resource { ref key, .. } if key == "file:///readme"));
            // Another URI under an open template is open.
            let r = routed(
                &mut pair,
                &catalog,
                "resources/read",
                json!({"uri": "file:///notes"}),
            );
            assert!(matches!(r, Route::Resource { ref key, .. } if key == "file:///{name}"));
            let r = routed(&mut pair, &catalog, "prompts/get", json!({"name": "hello"}));
            assert!(matches!(r, Route::Prompt { .. }), "{r:?}");
        }

        // alice has the scope: every scoped entry goes to its handler.
        pair.server
            .set_caller(Some(Arc::new(Caller::principal(alice_admin()))));
        let r = routed(
            &mut pair,
            &catalog,
            "tools/call",
            json!({"name": "admin", "arguments": {"text": "x"}}),
        );
        assert!(
            matches!(r, Route::Tool { ref name, .. } if name == "admin"),
            "{r:?}"
        );
        let r = routed(
            &mut pair,
            &catalog,
            "resources/read",
            json!({"uri": "file:///payroll"}),
        );
        assert!(matches!(r, Route::Resource { ref key, .. } if key == "file:///payroll"));
        let r = routed(
            &mut pair,
            &catalog,
            "resources/read",
            json!({"uri": "secret:///root"}),
        );
        match r {
            Route::Resource { key, variables, .. } => {
                assert_eq!(key, "secret:///{name}");
                assert_eq!(variables.get_str("name"), Some("root"));
            }
            other => panic!("{other:?}"),
        }
        let r = routed(
            &mut pair,
            &catalog,
            "prompts/get",
            json!({"name": "admin_prompt", "arguments": {"who": "me"}}),
        );
        assert!(matches!(r, Route::Prompt { ref name, .. } if name == "admin_prompt"));
        // And the request carried alice.
        let request = inbound(&mut pair, "tools/list", json!({}));
        assert_eq!(request.principal(), Some(&alice_admin()));
        assert_eq!(request.principal().unwrap().scopes, alice_admin().scopes);
    }
}

/// The names a list request gives the current caller
fn listed(
    pair: &mut Pair,
    catalog: &Catalog,
    method: &str,
    member: &str,
    key: &str,
) -> Vec<String> {
    let request = inbound(pair, method, json!({}));
    let Route::Answer(Ok(page)) = catalog.route(&request, false) else {
        panic!("a page")
    };
    let page: Value = serde_json::from_str(page.get()).unwrap();
    let mut names: Vec<String> = page[member]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[key].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    pair.server.respond_error(
        request.responder,
        &jsonrpc::ErrorObject::internal_error("x"),
    );
    pair.drive();
    pair.client_events();
    names
}

/// Every list a caller sees, as (tools, resources, templates, prompts)
fn lists(pair: &mut Pair, catalog: &Catalog) -> [Vec<String>; 4] {
    [
        listed(pair, catalog, "tools/list", "tools", "name"),
        listed(pair, catalog, "resources/list", "resources", "uri"),
        listed(
            pair,
            catalog,
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
        ),
        listed(pair, catalog, "prompts/list", "prompts", "name"),
    ]
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn hide_forbidden_leaves_out_of_the_lists_what_the_caller_may_not_use() {
    let everything = [
        strings(&["admin", "echo"]),
        strings(&["file:///payroll", "file:///readme"]),
        strings(&["file:///{name}", "secret:///{name}"]),
        strings(&["admin_prompt", "hello"]),
    ];
    let open = [
        strings(&["echo"]),
        strings(&["file:///readme"]),
        strings(&["file:///{name}"]),
        strings(&["hello"]),
    ];
    let shown = catalog(CatalogConfig::default());
    let mut config = CatalogConfig::default();
    config.hide_forbidden = true;
    let hidden = catalog(config);
    for mut pair in pairs() {
        for caller in [None, Some(bob()), Some(alice_admin())] {
            let admin = caller.as_ref().is_some_and(|p| p.has_scopes(&[ADMIN]));
            pair.server
                .set_caller(caller.map(|p| Arc::new(Caller::principal(p))));
            // By default lists show everything (a call is refused).
            assert_eq!(lists(&mut pair, &shown), everything);
            let expected = if admin { &everything } else { &open };
            assert_eq!(&lists(&mut pair, &hidden), expected, "admin: {admin}");
        }
    }
    // The catalog's own listing for a principal does the same.
    let params = mcp_sansio::schema::PaginatedParams::default();
    let names = |r: mcp_sansio::schema::ListToolsResult| -> Vec<String> {
        r.tools.into_iter().map(|t| t.name).collect()
    };
    assert_eq!(
        names(hidden.list_tools_for(&params, Some(&bob())).unwrap()),
        ["echo"]
    );
    assert_eq!(names(hidden.list_tools(&params).unwrap()), ["echo"]);
    assert_eq!(
        names(
            hidden
                .list_tools_for(&params, Some(&alice_admin()))
                .unwrap()
        ),
        ["admin", "echo"]
    );
}

#[test]
fn required_scopes_follow_their_entry_and_access_is_a_snapshot() {
    let mut c = catalog(CatalogConfig::default());
    let admin = [ADMIN.to_owned()];
    assert!(!c.require_scopes(EntryKind::Tool, "nope", vec![ADMIN.into()]));
    assert!(
        !c.require_scopes(EntryKind::Prompt, "admin", vec![ADMIN.into()]),
        "by kind"
    );
    assert_eq!(c.required_scopes(EntryKind::Tool, "admin"), &admin[..]);
    assert!(c.required_scopes(EntryKind::Tool, "echo").is_empty());
    assert!(c.has_scoped_entries());

    // The scopes an HTTP server checks, by method and name (a URI for reads).
    let access = c.access().expect("scoped entries");
    assert_eq!(access.required("tools/call", "admin"), Some(&admin[..]));
    assert_eq!(access.required("tools/call", "echo"), None);
    assert_eq!(access.required("tools/list", "admin"), None);
    assert_eq!(
        access.required("prompts/get", "admin_prompt"),
        Some(&admin[..])
    );
    assert_eq!(
        access.required("resources/read", "file:///payroll"),
        Some(&admin[..])
    );
    assert_eq!(
        access.required("resources/read", "secret:///x"),
        Some(&admin[..])
    );
    assert_eq!(access.required("resources/read", "file:///readme"), None);
    assert_eq!(access.required("resources/read", "file:///other"), None);

    // Replacing, and clearing with no scopes.
    assert!(c.require_scopes(EntryKind::Tool, "echo", vec!["a".into(), "b".into()]));
    assert!(
        c.check_access(EntryKind::Tool, "echo", Some(&bob()))
            .is_err()
    );
    let ab = Principal::new(Some("carol".into()), None).with_scopes(vec!["b".into(), "a".into()]);
    assert!(c.check_access(EntryKind::Tool, "echo", Some(&ab)).is_ok());
    let error = c.check_access(EntryKind::Tool, "echo", None).unwrap_err();
    assert_eq!(
        error,
        insufficient_scope(EntryKind::Tool, "echo", &["a".into(), "b".into()])
    );
    // The snapshot taken before does not know of it: refresh it when the catalog changes.
    assert_eq!(access.required("tools/call", "echo"), None);
    let refreshed = c.access().unwrap();
    assert_eq!(
        refreshed.required("tools/call", "echo"),
        Some(&["a".to_owned(), "b".to_owned()][..])
    );
    assert!(c.require_scopes(EntryKind::Tool, "echo", Vec::new()));
    assert!(c.check_access(EntryKind::Tool, "echo", None).is_ok());

    // Removing an entry removes its requirement; one added again under its name is open.
    assert!(c.remove_prompt("admin_prompt"));
    c.add_prompt(Prompt::new("admin_prompt")).unwrap();
    assert!(
        c.required_scopes(EntryKind::Prompt, "admin_prompt")
            .is_empty()
    );
    assert!(c.remove_template("secret:///{name}"));
    assert!(c.remove_resource("file:///payroll"));
    assert!(c.remove_tool("admin"));
    assert!(!c.has_scoped_entries());
    assert!(c.access().is_none(), "nothing to check any more");
}

#[test]
fn completing_an_argument_of_a_scoped_prompt_or_template_needs_its_scopes() {
    let catalog = catalog(CatalogConfig::default());
    let complete =
        |reference: Value| json!({"ref": reference, "argument": {"name": "name", "value": "r"}});
    let prompt = complete(json!({"type": "ref/prompt", "name": "admin_prompt"}));
    let template = complete(json!({"type": "ref/resource", "uri": "secret:///{name}"}));
    let open_prompt = complete(json!({"type": "ref/prompt", "name": "hello"}));
    let open_template = complete(json!({"type": "ref/resource", "uri": "file:///{name}"}));
    for mut pair in pairs() {
        for caller in [None, Some(bob())] {
            pair.server
                .set_caller(caller.map(|p| Arc::new(Caller::principal(p))));
            // The values a scoped entry's arguments take are its own: refused like a use.
            refused(&mut pair, &catalog, "completion/complete", prompt.clone());
            refused(&mut pair, &catalog, "completion/complete", template.clone());
            for open in [&open_prompt, &open_template] {
                let r = routed(&mut pair, &catalog, "completion/complete", open.clone());
                assert!(matches!(r, Route::Complete(_)), "{r:?}");
            }
        }
        pair.server
            .set_caller(Some(Arc::new(Caller::principal(alice_admin()))));
        for scoped in [&prompt, &template] {
            let r = routed(&mut pair, &catalog, "completion/complete", scoped.clone());
            assert!(matches!(r, Route::Complete(_)), "{r:?}");
        }
    }
}
