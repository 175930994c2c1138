//! Who asks travels with the request (DESIGN.md section 3, item 9): a handler reads the
//! verified principal, the HTTP headers, `_meta`, the client's info and capabilities, the
//! version and the 2025 session id from `Context::request`; a tool requiring a scope is
//! refused to a user without it (HTTP 403 with the step-up challenge, -32003 on a byte
//! stream) or hidden from their lists; tasks and sealed `requestState` answer only the user
//! who made them, and another user gets exactly what an unknown id gets; our OAuth client
//! steps up to the scope a tool needs; and each binding's everything-server example does
//! the same behind `--jwt-secret`.
//!
//! The users are alice (`mcp:read mcp:admin`, client `alice-app`) and bob (`mcp:read`,
//! client `bob-app`), with HS256 tokens minted here for each server's resource URL.

use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, TaskSupport, Tool};
use mcp_sansio::server::{EntryKind, INSUFFICIENT_SCOPE};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions,
    ServerConfig, TaskOptions,
};
use serde_json::{Map, Value, json};

use super::support::{LEGACY, echo_schema, text};
use crate::binding::{Client, ClientError, RequestInfo, Server};
use crate::rt;

/// The scope `admin_echo` needs
const ADMIN: &str = "mcp:admin";

/// What a handler knows of its request, as the `whoami` fixture answers it
fn seen(request: &RequestInfo) -> Value {
    let principal = request.principal();
    json!({
        "subject": principal.and_then(|p| p.subject.as_deref()),
        "client_id": principal.and_then(|p| p.client_id.as_deref()),
        "scopes": principal.map(|p| &p.scopes),
        "has_headers": request.headers().is_some(),
        "trace": request.header("x-identity-trace"),
        "session_header": request.header("mcp-session-id"),
        "meta": request.meta().and_then(|m| m.get("example.com/trace")).cloned(),
        "client": request.client_info().map(|i| i.name.as_str()),
        "capabilities": request.client_capabilities().clone(),
        "version": request.protocol_version().as_str(),
        "session": request.session_id(),
    })
}

/// A server named `identity`, with tasks in both forms and tools `whoami` (what its
/// handler knows of the request, as JSON), `echo`, `admin_echo` (needs [`ADMIN`]),
/// `long_job` (a task when the client allows it, for `ms` milliseconds) and `greet` (asks
/// a name: 2026 `requestState`); `hide` leaves out of the lists what a caller may not use
fn server(hide: bool) -> Server {
    let builder = Server::builder(ServerConfig::new(Implementation::new("identity", "1.0")))
        .tasks()
        .tool(
            Tool::new("whoami", Map::new()),
            handler!(|cx, _args| { Ok(CallToolResult::text(seen(cx.request()).to_string())) }),
        )
        .unwrap()
        .tool(
            Tool::new("admin_echo", echo_schema()),
            handler!(|_cx, args| {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            }),
        )
        .unwrap()
        .require_scopes(EntryKind::Tool, "admin_echo", [ADMIN])
        .unwrap()
        .tool(
            Tool::new("long_job", Map::new()).with_task_support(TaskSupport::Optional),
            handler!(|cx, args| {
                if cx.task_offered() {
                    let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                    aw!(cx.run_as_task(options)).map_err(|e| e.to_error())?;
                }
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
                nap!(cx, Duration::from_millis(ms));
                Ok(CallToolResult::text(format!("finished after {ms} ms")))
            }),
        )
        .unwrap();
    let builder = super::greet_tool(super::echo_tool(builder), Arc::default());
    if hide {
        builder.hide_forbidden().build()
    } else {
        builder.build()
    }
}

/// A client configuration in `era`, named `name`, declaring an experimental capability the
/// handler can see
fn config(name: &str, era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new(name, "1.0"));
    config.era = era;
    config.capabilities = json!({"experimental": {"identity-test": {}}});
    config
}

/// The version a client in `era` speaks (Modern or [`LEGACY`])
fn version(era: EraMode) -> &'static str {
    match era {
        EraMode::Legacy(v) => v.as_str(),
        _ => ProtocolVersion::V2026_07_28.as_str(),
    }
}

dialect_fn! {
    /// `whoami` called with `_meta: {"example.com/trace": trace}`: what its handler saw
    async fn whoami(client: &Client, trace: &str) -> Value {
        let params = json!({"name": "whoami", "arguments": {},
                            "_meta": {"example.com/trace": trace}});
        let params = serde_json::value::to_raw_value(&params).unwrap();
        let raw = aw!(client.request_raw(
            "tools/call",
            Some(params),
            RequestOptions::default(),
            None
        ))
        .unwrap();
        let result: CallToolResult = serde_json::from_str(raw.get()).unwrap();
        serde_json::from_str(result.content[0].as_text().unwrap()).unwrap()
    }
}

/// `outcome` is the JSON-RPC error -32003 naming [`ADMIN`]
fn insufficient_scope(outcome: Result<CallToolResult, ClientError>) {
    match outcome {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!(e.code, INSUFFICIENT_SCOPE, "{e:?}");
            let data: Value = serde_json::from_str(e.data.as_ref().unwrap().get()).unwrap();
            assert_eq!(data["error"], "insufficient_scope");
            assert_eq!(data["requiredScopes"], json!([ADMIN]));
        }
        other => panic!("-32003 expected: {other:?}"),
    }
}

#[test]
fn on_a_byte_stream_a_handler_sees_no_headers_and_no_principal_and_a_scoped_tool_is_refused() {
    rt::block_on(async {
        for era in [EraMode::Modern, LEGACY] {
            let (r, w) = super::serve(server(false));
            let client = aw!(Client::connect(r, w, config("piped", era))).unwrap();
            let seen = aw!(whoami(&client, "meta-piped"));
            assert_eq!(seen["subject"], Value::Null, "{era:?}: {seen}");
            assert_eq!(seen["client_id"], Value::Null, "{era:?}: {seen}");
            assert_eq!(seen["scopes"], Value::Null, "{era:?}: {seen}");
            assert_eq!(seen["has_headers"], false, "{era:?}: {seen}");
            assert_eq!(seen["trace"], Value::Null, "{era:?}: {seen}");
            assert_eq!(seen["session"], Value::Null, "{era:?}: {seen}");
            // What the request itself carried is there.
            assert_eq!(seen["meta"], "meta-piped", "{era:?}: {seen}");
            assert_eq!(seen["client"], "piped", "{era:?}: {seen}");
            assert_eq!(
                seen["capabilities"]["experimental"]["identity-test"],
                json!({}),
                "{era:?}: {seen}"
            );
            assert_eq!(seen["version"], version(era), "{era:?}: {seen}");

            // No principal, so no scope: admin_echo is refused, echo served.
            insufficient_scope(aw!(client.call_tool("admin_echo", text("hi"))));
            let echoed = aw!(client.call_tool("echo", text("hi"))).unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("hi"));
            aw!(client.close());
        }
    });
}

#[cfg(feature = "auth")]
mod over_http {
    //! The same server over HTTP, protected by HS256 JWTs (any scope passes the front
    //! door; `admin_echo` needs `mcp:admin`), and unprotected

    use std::collections::HashMap;
    use std::net::SocketAddr;
    use std::time::Duration;

    use jsonwebtoken::DecodingKey;
    use mcp_sansio::auth::{BearerChallenge, OAuthConfig};
    use mcp_sansio::http::HttpConfig;
    use mcp_sansio::http::protected::ResourceServer;
    use mcp_sansio::{CallError, EraMode};
    use serde_json::{Value, json};

    use super::super::support::LEGACY;
    use super::super::support::oauth::{
        AuthorizationServer, REDIRECT, SCOPE, SECRET, free_port, rules, user_token, validation,
    };
    use super::super::support::shares::{client, eventually, messages, request};
    use super::{ADMIN, config, insufficient_scope, server, version, whoami};
    use crate::binding::{
        Client, ClientError, ClientOptions, HttpServerHandle, OAuthOptions, Protection,
        headless_user_agent, jwt_verifier,
    };
    use crate::rt;

    /// The issuer the servers trust (never contacted: the tokens are minted here)
    const ISSUER: &str = "http://127.0.0.1:1";

    /// A user: name (the token's subject), OAuth client, granted scopes
    #[derive(Clone, Copy)]
    struct User {
        name: &'static str,
        client_id: &'static str,
        scope: &'static str,
    }

    const ALICE: User = User {
        name: "alice",
        client_id: "alice-app",
        scope: "mcp:read mcp:admin",
    };
    const BOB: User = User {
        name: "bob",
        client_id: "bob-app",
        scope: "mcp:read",
    };

    impl User {
        /// Their `Authorization` value at `resource` of a server trusting `issuer`
        fn bearer_from(self, issuer: &str, resource: &str) -> String {
            let token = user_token(issuer, resource, self.name, self.client_id, self.scope);
            format!("Bearer {token}")
        }

        /// Their `Authorization` value at `resource` of a server trusting [`ISSUER`]
        fn bearer(self, resource: &str) -> String {
            self.bearer_from(ISSUER, resource)
        }
    }

    dialect_fn! {
        /// [`server`] behind HS256 tokens from [`ISSUER`], no scope required of every
        /// request: its handle and its resource URL
        async fn protected(hide: bool) -> (HttpServerHandle, String) {
            let port = free_port();
            let resource = format!("http://127.0.0.1:{port}/mcp");
            let verifier = jwt_verifier(
                DecodingKey::from_secret(SECRET).unwrap(),
                validation(&resource, ISSUER),
            );
            let rules = ResourceServer::new(&resource, ISSUER).unwrap();
            let handle = aw!(server(hide).serve_http_protected(
                SocketAddr::from(([127, 0, 0, 1], port)),
                HttpConfig::default(),
                Protection::new(rules, verifier),
            ))
            .unwrap();
            (handle, resource)
        }

        /// [`server`] with no protection: its handle and URL
        async fn unprotected() -> (HttpServerHandle, String) {
            let handle = aw!(server(false).serve_http(SocketAddr::from(([127, 0, 0, 1], 0))))
                .unwrap();
            let url = format!("http://{}/mcp", handle.local_addr());
            (handle, url)
        }

        /// A client of `url` in `era` as `user` (a static bearer token), sending an
        /// `X-Identity-Trace` header of its own
        async fn connect_as(url: &str, era: EraMode, user: User) -> Client {
            let options = ClientOptions::default()
                .header("Authorization", user.bearer(url))
                .header("X-Identity-Trace", format!("trace-{}", user.name));
            let name = format!("{}-client", user.name);
            aw!(rt::timeout(
                Duration::from_secs(30),
                Client::connect_http(url, config(&name, era), options),
            ))
            .expect("connects in time")
            .expect("connects")
        }
    }

    // --- raw HTTP, for what our clients never send (another user's ids and state) ---

    const JSON: (&str, &str) = ("Content-Type", "application/json");
    const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

    /// A response: status, headers (lower-case names), the last JSON-RPC message
    type Answer = (u16, HashMap<String, String>, Value);

    /// POSTs `body` as JSON with `headers`, on a connection of its own, read to its end
    fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
        let mut all = vec![JSON, ACCEPT];
        all.extend_from_slice(headers);
        let (status, headers, body) =
            request(url, client(1), "POST", &all, body.to_string().as_bytes());
        let last = messages(&body).pop().unwrap_or(Value::Null);
        (status, headers, last)
    }

    /// A 2026 request (its `_meta` declaring elicitation and the tasks extension) with
    /// `authorization`; `name` goes in `Mcp-Name`
    fn modern(
        url: &str,
        authorization: Option<&str>,
        method: &str,
        name: &str,
        mut params: Value,
    ) -> Answer {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ];
        if let Some(a) = authorization {
            headers.push(("Authorization", a));
        }
        post(url, &headers, &body)
    }

    /// A 2025-11-25 session of `authorization`'s user (initialized): its id
    fn legacy_session(url: &str, authorization: Option<&str>) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let mut headers = vec![];
        if let Some(a) = authorization {
            headers.push(("Authorization", a));
        }
        let (status, response_headers, answer) = post(url, &headers, &init);
        assert_eq!(status, 200, "{answer}");
        let sid = response_headers["mcp-session-id"].clone();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = legacy_post(url, authorization, &sid, &initialized);
        assert_eq!(status, 202);
        sid
    }

    fn legacy_post(url: &str, authorization: Option<&str>, sid: &str, body: &Value) -> Answer {
        let mut headers = vec![
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        if let Some(a) = authorization {
            headers.push(("Authorization", a));
        }
        post(url, &headers, body)
    }

    /// A 2025-11-25 request in session `sid`
    fn legacy(
        url: &str,
        authorization: Option<&str>,
        sid: &str,
        method: &str,
        params: Value,
    ) -> Answer {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        legacy_post(url, authorization, sid, &body)
    }

    /// The 403 step-up challenge for [`ADMIN`] at `resource`
    fn step_up_challenge(answer: &Answer, resource: &str) {
        let (status, headers, body) = answer;
        assert_eq!(*status, 403, "{body}");
        let www = headers
            .get("www-authenticate")
            .expect("a WWW-Authenticate header");
        for part in [
            "error=\"insufficient_scope\"",
            &format!("scope=\"{ADMIN}\""),
            "resource_metadata=",
        ] {
            assert!(www.contains(part), "{part} in {www}");
        }
        let challenge = BearerChallenge::from_headers([www.as_str()]).expect("a Bearer challenge");
        let metadata = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some(metadata.as_str())
        );
    }

    /// A made-up task id of the same form as the server's
    const MADE_UP: &str = "0123456789abcdef0123456789abcdef";

    /// Whether `id` has the form of the server's task ids: 128 bits in 32 lower-case hex
    /// digits
    fn is_task_id(id: &str) -> bool {
        id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    /// What an answer about task `id` refuses with: HTTP status, code, message and data (with
    /// the id written `<id>`)
    fn refusal(answer: &Answer, id: &str) -> (u16, i64, String, Value) {
        let error = &answer.2["error"];
        assert!(error.is_object(), "an error: {}", answer.2);
        (
            answer.0,
            error["code"].as_i64().unwrap(),
            error["message"].as_str().unwrap().replace(id, "<id>"),
            serde_json::from_str(
                &error
                    .get("data")
                    .unwrap_or(&Value::Null)
                    .to_string()
                    .replace(id, "<id>"),
            )
            .unwrap(),
        )
    }

    /// `other`'s answer about task `id` is exactly the answer about an unknown task
    /// (`unknown`, about [`MADE_UP`]): -32602, same status, same words, same data
    fn as_if_unknown(other: &Answer, id: &str, unknown: &Answer) {
        let refused = refusal(other, id);
        assert_eq!(refused, refusal(unknown, MADE_UP));
        assert_eq!(refused.1, -32602, "{refused:?}");
    }

    /// The status of a `tasks/get` answer
    fn status_of(answer: &Answer) -> String {
        assert_eq!(answer.0, 200, "{}", answer.2);
        answer.2["result"]["status"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {}", answer.2))
            .to_owned()
    }

    #[test]
    fn whoami_over_http_answers_each_user_with_the_request_they_sent() {
        rt::block_on(async {
            let (handle, url) = aw!(protected(false));
            for era in [EraMode::Modern, LEGACY] {
                let mut sessions = Vec::new();
                for user in [ALICE, BOB] {
                    let client = aw!(connect_as(&url, era, user));
                    let seen = aw!(whoami(&client, &format!("meta-{}", user.name)));
                    let ctx = format!("{era:?}, {}: {seen}", user.name);
                    assert_eq!(seen["subject"], user.name, "{ctx}");
                    assert_eq!(seen["client_id"], user.client_id, "{ctx}");
                    let scopes: Vec<&str> = user.scope.split(' ').collect();
                    assert_eq!(seen["scopes"], json!(scopes), "{ctx}");
                    assert_eq!(seen["has_headers"], true, "{ctx}");
                    assert_eq!(seen["trace"], format!("trace-{}", user.name), "{ctx}");
                    assert_eq!(seen["meta"], format!("meta-{}", user.name), "{ctx}");
                    assert_eq!(seen["client"], format!("{}-client", user.name), "{ctx}");
                    assert_eq!(
                        seen["capabilities"]["experimental"]["identity-test"],
                        json!({}),
                        "{ctx}"
                    );
                    assert_eq!(seen["version"], version(era), "{ctx}");
                    match era {
                        // 2026 has no sessions.
                        EraMode::Modern => {
                            assert_eq!(seen["session"], Value::Null, "{ctx}");
                            assert_eq!(seen["session_header"], Value::Null, "{ctx}");
                        }
                        // The session id the request came in, the same on the next call.
                        _ => {
                            let session = seen["session"].as_str().expect("a session id");
                            assert!(!session.is_empty(), "{ctx}");
                            assert_eq!(seen["session_header"], session, "{ctx}");
                            let again = aw!(whoami(&client, "again"));
                            assert_eq!(again["session"], session, "{ctx}");
                            sessions.push(session.to_owned());
                        }
                    }
                    aw!(client.close());
                }
                if era != EraMode::Modern {
                    assert_ne!(sessions[0], sessions[1], "a session each");
                }
            }
            aw!(handle.shutdown());
        });
    }

    #[test]
    fn admin_echo_is_refused_to_bob_with_the_step_up_challenge_and_served_to_alice() {
        rt::block_on(async {
            let (handle, url) = aw!(protected(false));
            let raw_url = url.clone();
            aw!(rt::unblock(move || {
                let url = raw_url;
                let (alice, bob) = (ALICE.bearer(&url), BOB.bearer(&url));
                let call = json!({"name": "admin_echo", "arguments": {"text": "hi"}});
                // 2026: bob is refused before any handler runs; alice is served.
                let refused = modern(&url, Some(&bob), "tools/call", "admin_echo", call.clone());
                step_up_challenge(&refused, &url);
                let served = modern(&url, Some(&alice), "tools/call", "admin_echo", call.clone());
                assert_eq!(served.0, 200, "{}", served.2);
                assert_eq!(
                    served.2["result"]["content"][0]["text"], "hi",
                    "{}",
                    served.2
                );
                // 2025: the same, in each user's session.
                let bobs = legacy_session(&url, Some(&bob));
                let refused = legacy(&url, Some(&bob), &bobs, "tools/call", call.clone());
                step_up_challenge(&refused, &url);
                let alices = legacy_session(&url, Some(&alice));
                let served = legacy(&url, Some(&alice), &alices, "tools/call", call);
                assert_eq!(
                    served.2["result"]["content"][0]["text"], "hi",
                    "{}",
                    served.2
                );
            }));
            // Our clients: alice's call is answered, bob's fails; bob's echo is served.
            for era in [EraMode::Modern, LEGACY] {
                let alice = aw!(connect_as(&url, era, ALICE));
                let echoed = aw!(alice.call_tool("admin_echo", super::text("hi"))).unwrap();
                assert_eq!(echoed.content[0].as_text(), Some("hi"), "{era:?}");
                let bob = aw!(connect_as(&url, era, BOB));
                let refused = aw!(bob.call_tool("admin_echo", super::text("hi")));
                // Without OAuth options it cannot step up: the failure says why.
                match refused {
                    Err(ClientError::Call(CallError::Transport(why))) => assert!(
                        why.starts_with(
                            "the server answered HTTP 403 with WWW-Authenticate: Bearer \
                             error=\"insufficient_scope\""
                        ) && why.contains("scope=\"mcp:admin\"")
                            && why.ends_with("; this client has no authorization configured"),
                        "{era:?}: {why}"
                    ),
                    other => panic!("{era:?}: {other:?}"),
                }
                let echoed = aw!(bob.call_tool("echo", super::text("hi"))).unwrap();
                assert_eq!(echoed.content[0].as_text(), Some("hi"), "{era:?}");
                aw!(alice.close());
                aw!(bob.close());
            }
            aw!(handle.shutdown());
        });
    }

    #[test]
    fn with_hide_forbidden_only_the_users_granted_its_scope_see_admin_echo() {
        rt::block_on(async {
            for hide in [true, false] {
                let (handle, url) = aw!(protected(hide));
                for era in [EraMode::Modern, LEGACY] {
                    for (user, sees) in [(ALICE, true), (BOB, !hide)] {
                        let client = aw!(connect_as(&url, era, user));
                        let names: Vec<String> = aw!(client.list_tools())
                            .unwrap()
                            .into_iter()
                            .map(|t| t.name)
                            .collect();
                        let ctx = format!("hide {hide}, {era:?}, {}: {names:?}", user.name);
                        assert_eq!(names.iter().any(|n| n == "admin_echo"), sees, "{ctx}");
                        assert!(names.iter().any(|n| n == "echo"), "{ctx}");
                        aw!(client.close());
                    }
                }
                aw!(handle.shutdown());
            }
        });
    }

    /// On the 2026 wire at `url`: `owner` starts `long_job` as a task; `other`'s
    /// `tasks/get` and `tasks/cancel` of it get exactly what a made-up id gets, the owner's
    /// get sees it working, and the owner cancels it. The task's id.
    fn a_modern_task_answers_only_its_owner(url: &str, owner: &str, other: &str) -> String {
        let start = json!({"name": "long_job", "arguments": {"ms": 60_000}});
        let (status, _, created) = modern(url, Some(owner), "tools/call", "long_job", start);
        assert_eq!(status, 200, "{created}");
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        assert!(is_task_id(&id), "{id}");
        let about = |id: &str| json!({"taskId": id});
        for method in ["tasks/get", "tasks/cancel"] {
            let theirs = modern(url, Some(other), method, &id, about(&id));
            let unknown = modern(url, Some(other), method, MADE_UP, about(MADE_UP));
            as_if_unknown(&theirs, &id, &unknown);
        }
        // The owner's task is there, still working (the other's cancel did nothing).
        let got = modern(url, Some(owner), "tasks/get", &id, about(&id));
        assert_eq!(got.2["result"]["taskId"], id.as_str());
        assert_eq!(status_of(&got), "working");
        let cancelled = modern(url, Some(owner), "tasks/cancel", &id, about(&id));
        assert_eq!(cancelled.0, 200, "{}", cancelled.2);
        assert!(cancelled.2["result"].is_object(), "{}", cancelled.2);
        eventually("the owner's cancel settles the task", || {
            status_of(&modern(url, Some(owner), "tasks/get", &id, about(&id))) == "cancelled"
        });
        id
    }

    /// The same on the 2025-11-25 wire, each user in a session of their own
    fn a_legacy_task_answers_only_its_owner(url: &str, owner: &str, other: &str) -> String {
        let owners = legacy_session(url, Some(owner));
        let start = json!({"name": "long_job", "arguments": {"ms": 60_000},
                           "task": {"ttl": 60_000}});
        let (status, _, created) = legacy(url, Some(owner), &owners, "tools/call", start);
        assert_eq!(status, 200, "{created}");
        let id = created["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        assert!(is_task_id(&id), "{id}");
        let about = |id: &str| json!({"taskId": id});
        let others = legacy_session(url, Some(other));
        for method in ["tasks/get", "tasks/cancel"] {
            let theirs = legacy(url, Some(other), &others, method, about(&id));
            let unknown = legacy(url, Some(other), &others, method, about(MADE_UP));
            as_if_unknown(&theirs, &id, &unknown);
        }
        let got = legacy(url, Some(owner), &owners, "tasks/get", about(&id));
        assert_eq!(got.2["result"]["taskId"], id.as_str());
        assert_eq!(status_of(&got), "working");
        let cancelled = legacy(url, Some(owner), &owners, "tasks/cancel", about(&id));
        assert_eq!(cancelled.0, 200, "{}", cancelled.2);
        assert!(cancelled.2["result"].is_object(), "{}", cancelled.2);
        eventually("the owner's cancel settles the task", || {
            status_of(&legacy(url, Some(owner), &owners, "tasks/get", about(&id))) == "cancelled"
        });
        id
    }

    #[test]
    fn a_task_answers_only_the_user_who_started_it_on_both_wires() {
        rt::block_on(async {
            let (handle, url) = aw!(protected(false));
            aw!(rt::unblock(move || {
                let (alice, bob) = (ALICE.bearer(&url), BOB.bearer(&url));
                let modern_id = a_modern_task_answers_only_its_owner(&url, &alice, &bob);
                let legacy_id = a_legacy_task_answers_only_its_owner(&url, &alice, &bob);
                assert_ne!(modern_id, legacy_id);
                // And the other way round.
                a_modern_task_answers_only_its_owner(&url, &bob, &alice);
            }));
            aw!(handle.shutdown());
        });
    }

    /// Without an authorization context there is nothing to bind a task to (the spec):
    /// requests without a principal see each other's tasks on the 2026 wire, which is why
    /// task ids are unguessable (128 bits from a keyed hash); a 2025 task stays in its
    /// session
    #[test]
    fn without_a_principal_task_ids_are_unguessable_and_2025_tasks_stay_in_their_session() {
        rt::block_on(async {
            let (handle, url) = aw!(unprotected());
            aw!(rt::unblock(move || {
                let start = || json!({"name": "long_job", "arguments": {"ms": 60_000}});
                let about = |id: &str| json!({"taskId": id});
                let ids: Vec<String> = (0..2)
                    .map(|_| {
                        let (status, _, created) =
                            modern(&url, None, "tools/call", "long_job", start());
                        assert_eq!(status, 200, "{created}");
                        created["result"]["taskId"].as_str().unwrap().to_owned()
                    })
                    .collect();
                assert!(ids.iter().all(|id| is_task_id(id)), "{ids:?}");
                assert_ne!(ids[0], ids[1]);
                // The rule: a principal-less request may read a principal-less task.
                let got = modern(&url, None, "tasks/get", &ids[0], about(&ids[0]));
                assert_eq!(status_of(&got), "working");
                for id in &ids {
                    let cancelled = modern(&url, None, "tasks/cancel", id, about(id));
                    assert_eq!(cancelled.0, 200, "{}", cancelled.2);
                }
                // 2025: another anonymous session gets what an unknown id gets.
                let first = legacy_session(&url, None);
                let task = json!({"name": "long_job", "arguments": {"ms": 60_000},
                                  "task": {"ttl": 60_000}});
                let (_, _, created) = legacy(&url, None, &first, "tools/call", task);
                let id = created["result"]["task"]["taskId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a task: {created}"))
                    .to_owned();
                assert!(is_task_id(&id), "{id}");
                assert!(!ids.contains(&id));
                let second = legacy_session(&url, None);
                for method in ["tasks/get", "tasks/cancel"] {
                    let theirs = legacy(&url, None, &second, method, about(&id));
                    let unknown = legacy(&url, None, &second, method, about(MADE_UP));
                    as_if_unknown(&theirs, &id, &unknown);
                }
                let got = legacy(&url, None, &first, "tasks/get", about(&id));
                assert_eq!(status_of(&got), "working");
                legacy(&url, None, &first, "tasks/cancel", about(&id));
            }));
            aw!(handle.shutdown());
        });
    }

    #[test]
    fn a_request_state_issued_to_alice_is_refused_to_bob() {
        rt::block_on(async {
            let (handle, url) = aw!(protected(false));
            aw!(rt::unblock(move || {
                let (alice, bob) = (ALICE.bearer(&url), BOB.bearer(&url));
                let asked = modern(
                    &url,
                    Some(&alice),
                    "tools/call",
                    "greet",
                    json!({"name": "greet", "arguments": {}}),
                );
                let result = &asked.2["result"];
                assert_eq!(result["resultType"], "input_required", "{}", asked.2);
                assert!(result["inputRequests"]["name"].is_object(), "{result}");
                let state = result["requestState"].as_str().expect("a requestState");
                let retry = json!({
                    "name": "greet", "arguments": {},
                    "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                    "requestState": state,
                });
                let (status, _, refused) =
                    modern(&url, Some(&bob), "tools/call", "greet", retry.clone());
                assert_eq!(refused["error"]["code"], -32602, "{status}: {refused}");
                let message = refused["error"]["message"].as_str().unwrap();
                assert!(
                    message.ends_with("requestState was issued to another caller"),
                    "{refused}"
                );
                // Alice's own retry is answered.
                let (_, _, greeted) = modern(&url, Some(&alice), "tools/call", "greet", retry);
                assert_eq!(
                    greeted["result"]["content"][0]["text"], "Hello, Ada!",
                    "{greeted}"
                );
            }));
            aw!(handle.shutdown());
        });
    }

    dialect_fn! {
        /// [`server`] behind the authorization server at `issuer`, every request needing
        /// [`SCOPE`] (`admin_echo` also [`ADMIN`]): its handle and resource URL
        async fn behind(issuer: &str) -> (HttpServerHandle, String) {
            let port = free_port();
            let resource = format!("http://127.0.0.1:{port}/mcp");
            let verifier = jwt_verifier(
                DecodingKey::from_secret(SECRET).unwrap(),
                validation(&resource, issuer),
            );
            let handle = aw!(server(false).serve_http_protected(
                SocketAddr::from(([127, 0, 0, 1], port)),
                HttpConfig::default(),
                Protection::new(rules(&resource, issuer), verifier),
            ))
            .unwrap();
            (handle, resource)
        }
    }

    #[test]
    fn our_client_steps_up_to_the_scope_a_tool_needs_and_the_call_succeeds() {
        rt::block_on(async {
            for era in [EraMode::Modern, LEGACY] {
                let authorization = AuthorizationServer::start();
                let (handle, resource) = aw!(behind(&authorization.issuer));
                let auth =
                    OAuthOptions::new(OAuthConfig::new(REDIRECT), headless_user_agent(REDIRECT));
                let client = aw!(rt::timeout(
                    Duration::from_secs(30),
                    Client::connect_http(
                        &resource,
                        config("oauth-client", era),
                        ClientOptions::default().auth(auth),
                    ),
                ))
                .expect("connects in time")
                .expect("connects after authorizing");
                // The first token has what the challenge named: mcp:read, no mcp:admin.
                let seen = aw!(whoami(&client, "before"));
                assert_eq!(seen["scopes"], json!([SCOPE]), "{era:?}: {seen}");
                // admin_echo: 403 insufficient_scope, a new authorization, then the call.
                let echoed = aw!(rt::timeout(
                    Duration::from_secs(30),
                    client.call_tool("admin_echo", super::text("stepped up")),
                ))
                .expect("answered in time")
                .expect("answered after stepping up");
                assert_eq!(echoed.content[0].as_text(), Some("stepped up"), "{era:?}");
                let seen = aw!(whoami(&client, "after"));
                assert_eq!(seen["scopes"], json!([SCOPE, ADMIN]), "{era:?}: {seen}");
                aw!(client.close());
                aw!(handle.shutdown());
                let seen = authorization.seen.lock().unwrap();
                assert_eq!(
                    seen.scopes_asked,
                    [Some(SCOPE.to_owned()), Some(format!("{SCOPE} {ADMIN}"))],
                    "{era:?}: {:?}",
                    seen.requests
                );
            }
        });
    }

    // --- the everything-server example of the binding, behind `--jwt-secret` ---

    /// A child process, killed and reaped when dropped
    struct Child(std::process::Child);

    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// The binding's everything-server serving `http://127.0.0.1:PORT/mcp` behind HS256
    /// tokens signed with [`SECRET`] from `http://127.0.0.1:<PORT+1>`: the child,
    /// its resource URL and that issuer
    fn example_behind_jwt() -> (Child, String, String) {
        use std::io::BufRead;

        let port = free_port();
        let mut child = std::process::Command::new(super::super::child::everything_server())
            .args(["--http", &format!("127.0.0.1:{port}")])
            .args(["--jwt-secret", std::str::from_utf8(SECRET).unwrap()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stderr = child.stderr.take().expect("its stderr");
        let child = Child(child);
        let mut stderr = std::io::BufReader::new(stderr);
        let mut line = String::new();
        stderr
            .read_line(&mut line)
            .expect("the example's first line");
        // The rest (logs, with RUST_LOG) is read and dropped, so the example never blocks
        // on it or meets a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        assert!(
            line.starts_with("serving MCP at") && line.contains("(protected)"),
            "{line:?} (an example built without the `auth` feature?)"
        );
        let issuer = format!("http://127.0.0.1:{}", port + 1);
        (child, format!("http://127.0.0.1:{port}/mcp"), issuer)
    }

    /// The text of a `tools/call` answer, as JSON
    fn text_json(answer: &Answer) -> Value {
        let text = answer.2["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a text result: {}", answer.2));
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_everything_server_example_behind_a_jwt_secret_knows_its_callers() {
        let (_child, url, issuer) = example_behind_jwt();
        let (alice, bob) = (
            ALICE.bearer_from(&issuer, &url),
            BOB.bearer_from(&issuer, &url),
        );
        let call = |tool: &str, arguments: Value| json!({"name": tool, "arguments": arguments});

        // No token, and a token from another issuer: 401.
        let (status, headers, _) = modern(
            &url,
            None,
            "tools/call",
            "whoami",
            call("whoami", json!({})),
        );
        assert_eq!(status, 401);
        assert!(headers["www-authenticate"].contains("resource_metadata="));
        let foreign = ALICE.bearer(&url);
        let (status, _, _) = modern(
            &url,
            Some(&foreign),
            "tools/call",
            "whoami",
            call("whoami", json!({})),
        );
        assert_eq!(status, 401);

        // whoami: each user's subject, client and scopes.
        for user in [ALICE, BOB] {
            let bearer = user.bearer_from(&issuer, &url);
            let answer = modern(
                &url,
                Some(&bearer),
                "tools/call",
                "whoami",
                call("whoami", json!({})),
            );
            let scopes: Vec<&str> = user.scope.split(' ').collect();
            assert_eq!(
                text_json(&answer),
                json!({"subject": user.name, "client_id": user.client_id, "scopes": scopes})
            );
        }

        // admin_echo: bob is challenged to step up, alice is served.
        let echo = call("admin_echo", json!({"text": "hi"}));
        step_up_challenge(
            &modern(&url, Some(&bob), "tools/call", "admin_echo", echo.clone()),
            &url,
        );
        let served = modern(&url, Some(&alice), "tools/call", "admin_echo", echo);
        assert_eq!(
            served.2["result"]["content"][0]["text"], "hi",
            "{}",
            served.2
        );

        // long_job runs as alice's task, which bob cannot see.
        let (status, _, created) = modern(
            &url,
            Some(&alice),
            "tools/call",
            "long_job",
            call("long_job", json!({"ms": 30})),
        );
        assert_eq!(status, 200, "{created}");
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        assert!(is_task_id(&id), "{id}");
        let about = |id: &str| json!({"taskId": id});
        let theirs = modern(&url, Some(&bob), "tasks/get", &id, about(&id));
        let unknown = modern(&url, Some(&bob), "tasks/get", MADE_UP, about(MADE_UP));
        as_if_unknown(&theirs, &id, &unknown);
        let mut done = Value::Null;
        eventually("long_job completes", || {
            done = modern(&url, Some(&alice), "tasks/get", &id, about(&id)).2;
            done["result"]["status"] == "completed"
        });
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "finished after 30 ms",
            "{done}"
        );
    }

    #[test]
    fn the_everything_server_example_on_stdio_knows_no_caller() {
        rt::block_on(async {
            let command = rt::Command::new(super::super::child::everything_server());
            let client = aw!(Client::spawn(command, config("stdio", EraMode::Modern))).unwrap();
            let who = aw!(client.call_tool("whoami", serde_json::Map::new())).unwrap();
            let who: Value = serde_json::from_str(who.content[0].as_text().unwrap()).unwrap();
            assert_eq!(
                who,
                json!({"subject": null, "client_id": null, "scopes": null})
            );
            insufficient_scope(aw!(client.call_tool("admin_echo", super::text("hi"))));
            aw!(client.close());
        });
    }
}
