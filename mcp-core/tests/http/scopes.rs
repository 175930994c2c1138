//! The step-up challenge on both HTTP wires: with a catalog's per-entry scopes
//! (`HttpServer::set_required_scopes(catalog.access())`), a `tools/call`, `resources/read` or
//! `prompts/get` naming an entry whose scopes the request's principal lacks is answered `403`
//! with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` (and the
//! protection's `resource_metadata` when the server has one) before any session sees it;
//! with the scopes it goes through

use std::sync::Arc;

use serde_json::{Value, json};

use mcp_sansio::http::protected::ResourceServer;
use mcp_sansio::http::{RequiredScopes, Source};
use mcp_sansio::schema::{Prompt, Resource, ResourceTemplate, Tool};
use mcp_sansio::server::{Catalog, EntryKind};

use super::identity_kit::{Answer, Cluster, anonymous, principal};

const ADMIN: &str = "mcp:admin";

fn catalog() -> Catalog {
    let mut c = Catalog::default();
    let schema = json!({"type": "object"}).as_object().unwrap().clone();
    c.add_tool(Tool::new("admin", schema.clone())).unwrap();
    c.add_tool(Tool::new("echo", schema)).unwrap();
    c.add_resource(Resource::new("file:///readme", "readme"))
        .unwrap();
    c.add_template(ResourceTemplate::new("secret:///{name}", "secrets"))
        .unwrap();
    c.add_prompt(Prompt::new("admin_prompt")).unwrap();
    c.add_prompt(Prompt::new("hello")).unwrap();
    for (kind, key) in [
        (EntryKind::Tool, "admin"),
        (EntryKind::Template, "secret:///{name}"),
        (EntryKind::Prompt, "admin_prompt"),
    ] {
        assert!(c.require_scopes(kind, key, vec![ADMIN.into()]));
    }
    c
}

fn access(catalog: &Catalog) -> Option<Arc<dyn RequiredScopes>> {
    catalog.access().map(|a| a as Arc<dyn RequiredScopes>)
}

/// A server with the catalog's scopes, and `rules` as its protection
fn server(rules: Option<ResourceServer>) -> Cluster {
    let mut c = Cluster::single();
    c.nodes[0].http.set_required_scopes(access(&catalog()));
    c.nodes[0].http.set_resource_server(rules.map(Arc::new));
    c
}

fn with_scopes(subject: &str, scopes: &[&str]) -> Source {
    Source::unknown().with_principal(Some(
        principal(subject).with_scopes(scopes.iter().map(|s| (*s).to_owned()).collect()),
    ))
}

/// bob's token grants `mcp` only; alice's also `mcp:admin`
fn bob() -> Source {
    with_scopes("bob", &["mcp"])
}

fn alice() -> Source {
    with_scopes("alice", &["mcp", ADMIN])
}

/// The scoped requests and an open one of each method
fn scoped() -> [(&'static str, Value); 3] {
    [
        ("tools/call", json!({"name": "admin", "arguments": {}})),
        ("resources/read", json!({"uri": "secret:///root"})),
        ("prompts/get", json!({"name": "admin_prompt"})),
    ]
}

fn open() -> [(&'static str, Value); 3] {
    [
        ("tools/call", json!({"name": "echo", "arguments": {}})),
        ("resources/read", json!({"uri": "file:///readme"})),
        ("prompts/get", json!({"name": "hello"})),
    ]
}

/// Asserts a step-up challenge for `scope`: 403, the `WWW-Authenticate` header, the OAuth
/// error body; returns the header
fn challenge(answer: &Answer, scope: &str) -> String {
    assert_eq!(answer.status, 403, "{answer:?}");
    let www = answer
        .header("WWW-Authenticate")
        .unwrap_or_else(|| panic!("a challenge: {answer:?}"))
        .to_owned();
    assert!(www.starts_with("Bearer "), "{www}");
    assert!(www.contains(r#"error="insufficient_scope""#), "{www}");
    assert!(www.contains(&format!(r#"scope="{scope}""#)), "{www}");
    assert_eq!(answer.body["error"], "insufficient_scope", "{answer:?}");
    www
}

/// A request that reached its handler and was answered
fn through(c: &Cluster, answer: &Answer, method: &str) {
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.body.get("result").is_some(), "{answer:?}");
    assert_eq!(c.seen.last().map(|s| s.method.as_str()), Some(method));
}

#[test]
fn the_2026_wire_challenges_a_principal_without_the_scope_before_the_session() {
    let mut c = server(None);
    for stranger in [bob(), anonymous()] {
        for (method, params) in scoped() {
            let answer = c.modern(0, &stranger, 1, method, params);
            let www = challenge(&answer, ADMIN);
            assert!(!www.contains("resource_metadata"), "no protection: {www}");
        }
    }
    assert!(c.seen.is_empty(), "no session saw a refused request");
    assert_eq!(c.nodes[0].http.in_flight(), 0);
    // What needs no scope goes through for anyone; the scoped entries for alice.
    for (method, params) in open() {
        let answer = c.modern(0, &bob(), 2, method, params);
        through(&c, &answer, method);
    }
    for (method, params) in scoped() {
        let answer = c.modern(0, &alice(), 3, method, params);
        through(&c, &answer, method);
    }
    assert_eq!(c.seen.len(), 6);
}

#[test]
fn the_2025_wire_challenges_inside_a_session_which_goes_on() {
    let mut c = server(None);
    let sid = c.initialize(0, &bob());
    for (method, params) in scoped() {
        let answer = c.legacy(0, &bob(), &sid, 1, method, params);
        challenge(&answer, ADMIN);
        assert_eq!(answer.header("Mcp-Session-Id"), Some(sid.as_str()));
    }
    assert!(c.seen.is_empty(), "no session saw a refused request");
    for (method, params) in open() {
        let answer = c.legacy(0, &bob(), &sid, 2, method, params);
        through(&c, &answer, method);
    }
    // bob steps up: a token with the scope is the same principal, in the same session.
    let stepped_up = with_scopes("bob", &["mcp", ADMIN]);
    for (method, params) in scoped() {
        let answer = c.legacy(0, &stepped_up, &sid, 3, method, params);
        through(&c, &answer, method);
    }
    // A session without a principal is refused the same.
    let sid = c.initialize(0, &anonymous());
    let answer = c.legacy(
        0,
        &anonymous(),
        &sid,
        4,
        "tools/call",
        json!({"name": "admin", "arguments": {}}),
    );
    challenge(&answer, ADMIN);
}

#[test]
fn a_protected_server_names_its_metadata_and_its_own_scopes_in_the_challenge() {
    let rules = ResourceServer::new("https://mcp.example.com/mcp", "https://auth.example.com")
        .unwrap()
        .required_scopes(&["mcp"]);
    let metadata =
        r#"resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#;
    let mut c = server(Some(rules));
    let sid = c.initialize(0, &bob());
    for (method, params) in scoped() {
        let modern = c.modern(0, &bob(), 1, method, params.clone());
        let legacy = c.legacy(0, &bob(), &sid, 1, method, params);
        for answer in [modern, legacy] {
            // Every scope the request needs: the endpoint's and the entry's.
            let www = challenge(&answer, &format!("mcp {ADMIN}"));
            assert!(www.contains(metadata), "{www}");
        }
    }
    // A token with the entry's scope but not the endpoint's is challenged for both too.
    let admin_only = with_scopes("carol", &[ADMIN]);
    let answer = c.modern(
        0,
        &admin_only,
        2,
        "tools/call",
        json!({"name": "admin", "arguments": {}}),
    );
    challenge(&answer, &format!("mcp {ADMIN}"));
    assert!(c.seen.is_empty());
    let answer = c.modern(
        0,
        &alice(),
        3,
        "tools/call",
        json!({"name": "admin", "arguments": {}}),
    );
    through(&c, &answer, "tools/call");
}

#[test]
fn the_scopes_checked_are_those_last_given() {
    let mut catalog = catalog();
    let mut c = Cluster::single();
    let call = |c: &mut Cluster, source: &Source, tool: &str| {
        c.modern(
            0,
            source,
            1,
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        )
    };
    // None given: nothing is checked here.
    let answer = call(&mut c, &bob(), "admin");
    through(&c, &answer, "tools/call");
    c.nodes[0].http.set_required_scopes(access(&catalog));
    challenge(&call(&mut c, &bob(), "admin"), ADMIN);
    // The catalog changed: the server checks the new rules once given them.
    assert!(catalog.require_scopes(EntryKind::Tool, "echo", vec!["mcp:echo".into()]));
    let answer = call(&mut c, &bob(), "echo");
    through(&c, &answer, "tools/call");
    c.nodes[0].http.set_required_scopes(access(&catalog));
    challenge(&call(&mut c, &bob(), "echo"), "mcp:echo");
    c.nodes[0].http.set_required_scopes(None);
    let answer = call(&mut c, &bob(), "echo");
    through(&c, &answer, "tools/call");
}
