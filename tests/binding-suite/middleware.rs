//! Middleware around every request (issue 32, item 3): a server's chain sees each call a
//! handler serves with its caller, answers some itself, sees the outcome and how long it
//! took, runs in the order it was added, turns a panic into -32603 and goes on; over pipes
//! and HTTP, in both eras, for task-backed calls too. A client's chain adds `_meta` the
//! server sees, and retries after an error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::jsonrpc::code::INTERNAL_ERROR;
use mcp_sansio::schema::{
    CallToolResult, GetPromptParams, GetPromptResult, Prompt, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, TaskSupport, Tool,
};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, RequestOptions, ServerConfig, TaskOptions,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::support::{LEGACY, text};
use crate::binding::middleware::Outcome;
use crate::binding::{CallWatch, Client, ClientError, ClientOptions, Server, ServerBuilder};
use crate::{dialect, rt};

/// What the chain wrote down, in order
type Log = Arc<Mutex<Vec<String>>>;

/// What the chain wrote down, each duration written `0 ms` (they vary; `exercise` checks
/// the one that matters)
fn lines(log: &Log) -> Vec<String> {
    let mut lines = log.lock().unwrap().clone();
    for line in &mut lines {
        if let Some(at) = line.rfind(" (") {
            line.replace_range(at.., " (0 ms)");
        }
    }
    lines
}

/// A server with `echo`, `wipe` (refused by the chain unless the caller sends
/// `X-Confirm`), `slow` (naps `ms` milliseconds), `boom` (whose call makes a middleware
/// panic), `flaky` (fails with -32000 on odd runs, counted in `runs`), `meta` (answers its
/// request's `_meta`), `long_job` (a task when the client allows it) and the resource
/// `mem://a`. Its chain, outermost first: `audit` writes `who method name -> outcome` to
/// `log` once the call ended (who: the `X-User` header, or `-`), `guard` refuses `wipe`
/// and panics on `boom`
fn server(log: &Log, runs: &Arc<AtomicUsize>) -> Server {
    let audit = Arc::clone(log);
    let guard_log = Arc::clone(log);
    let builder = Server::builder(ServerConfig::new(Implementation::new("mw", "1.0")))
        .tasks()
        .middleware(middleware!([audit]; |call, next| {
            let who = call.request().header("x-user").unwrap_or("-").to_owned();
            let outcome = pass!(next, call);
            let what = match outcome.result() {
                Err(e) => format!("error {}", e.code),
                Ok(raw) => {
                    let result: Value = serde_json::from_str(raw.get()).unwrap();
                    let text = result["content"][0]["text"].as_str()
                        .or(result["contents"][0]["text"].as_str())
                        .or(result["messages"][0]["content"]["text"].as_str())
                        .unwrap_or("?")
                        .to_owned();
                    format!("ok {text}")
                }
            };
            let name = call.name().unwrap_or("").to_owned();
            let ms = outcome.elapsed().as_millis();
            audit.lock().unwrap().push(format!("{who} {} {name} -> {what} ({ms} ms)", call.method()));
            outcome
        }))
        .middleware(middleware!([guard_log]; |call, next| {
            guard_log.lock().unwrap().push(format!("guard {}", call.name().unwrap_or("")));
            if call.name() == Some("boom") {
                panic!("the guard panics on boom");
            }
            if call.name() == Some("wipe") && call.request().header("x-confirm").is_none() {
                return Outcome::error(ErrorObject::new(-32001, "wipe needs X-Confirm"));
            }
            pass!(next, call)
        }));
    tools(builder, runs).build()
}

/// The tools and the resource of [`server`]
fn tools(builder: ServerBuilder, runs: &Arc<AtomicUsize>) -> ServerBuilder {
    let runs = Arc::clone(runs);
    super::echo_tool(builder)
        .tool(
            Tool::new("wipe", Map::new()),
            handler!(|_cx, _args| { Ok(CallToolResult::text("wiped")) }),
        )
        .unwrap()
        .tool(
            Tool::new("boom", Map::new()),
            handler!(|_cx, _args| { Ok(CallToolResult::text("never")) }),
        )
        .unwrap()
        .tool(
            Tool::new("slow", Map::new()),
            handler!(|cx, args| {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(30);
                let _ = &cx; // the blocking dialect naps on it
                nap!(cx, Duration::from_millis(ms));
                Ok(CallToolResult::text(format!("slept {ms}")))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("flaky", Map::new()),
            handler!([runs]; |_cx, _args| {
                if runs.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
                    return Err(ErrorObject::new(-32000, "try again"));
                }
                Ok(CallToolResult::text("steady"))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("meta", Map::new()),
            handler!(|cx, _args| {
                let meta = cx
                    .request()
                    .meta()
                    .and_then(|m| m.get("example.com/added"))
                    .cloned();
                Ok(CallToolResult::text(
                    meta.unwrap_or(Value::Null).to_string(),
                ))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("long_job", Map::new()).with_task_support(TaskSupport::Optional),
            handler!(|cx, _args| {
                if cx.task_offered() {
                    let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                    aw!(cx.run_as_task(options)).map_err(|e| e.to_error())?;
                }
                nap!(cx, Duration::from_millis(40));
                Ok(CallToolResult::text("job done"))
            }),
        )
        .unwrap()
        .prompt(
            Prompt::new("hello"),
            handler!(|_cx, _args| {
                Ok(GetPromptResult::new(vec![PromptMessage::user(
                    "hello there",
                )]))
            }),
        )
        .unwrap()
        .resource(
            Resource::new("mem://a", "a"),
            handler!(|_cx, uri, _vars| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "contents of a",
                )]))
            }),
        )
        .unwrap()
}

/// A client configuration in `era` that accepts tasks (2026 extension)
fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("mw-client", "1.0"));
    config.era = era;
    config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    config
}

/// The JSON-RPC error code of `outcome`
fn code<T: std::fmt::Debug>(outcome: Result<T, ClientError>) -> i64 {
    match outcome {
        Err(ClientError::Call(CallError::Remote(e))) => e.code,
        other => panic!("a JSON-RPC error expected: {other:?}"),
    }
}

fn said(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

dialect_fn! {
    /// The checks every transport and era passes: what the audit saw, the refusal, the
    /// order, the panic, the timing and the resource read; `who` is the `X-User` the
    /// client sends (`-` for none)
    async fn exercise(client: &Client, log: &Log, who: &str, era: EraMode) {
        log.lock().unwrap().clear();
        let echoed = aw!(client.call_tool("echo", text("hi"))).unwrap();
        assert_eq!(said(&echoed), "hi");
        // Outermost first in, last out: guard wrote before audit did.
        assert_eq!(
            lines(log),
            [
                "guard echo".to_owned(),
                format!("{who} tools/call echo -> ok hi (0 ms)"),
            ],
            "{era:?}"
        );

        // Refused by the chain itself: the handler never ran, the audit saw the refusal.
        log.lock().unwrap().clear();
        assert_eq!(code(aw!(client.call_tool("wipe", Map::new()))), -32001, "{era:?}");
        assert_eq!(lines(log)[1], format!("{who} tools/call wipe -> error -32001 (0 ms)"));

        // A middleware that panics: -32603, which the audit around it saw; the server goes on.
        log.lock().unwrap().clear();
        assert_eq!(code(aw!(client.call_tool("boom", Map::new()))), INTERNAL_ERROR, "{era:?}");
        assert!(lines(log)[1].starts_with(&format!("{who} tools/call boom -> error -32603")));
        let echoed = aw!(client.call_tool("echo", text("after"))).unwrap();
        assert_eq!(said(&echoed), "after", "{era:?}");

        // The outcome's duration covers the handler.
        log.lock().unwrap().clear();
        let slept = aw!(client.call_tool("slow", super::support::object(json!({"ms": 30})))).unwrap();
        assert_eq!(said(&slept), "slept 30");
        let line = log.lock().unwrap()[1].clone();
        let ms: u64 = line.rsplit('(').next().unwrap().trim_end_matches(" ms)").parse().unwrap();
        assert!(ms >= 30, "{era:?}: {line}");

        // Resources go through the chain, named by their URI.
        log.lock().unwrap().clear();
        let read = aw!(client.read_resource("mem://a")).unwrap();
        assert_eq!(read.contents.len(), 1);
        assert_eq!(
            lines(log),
            ["guard mem://a".to_owned(), format!("{who} resources/read mem://a -> ok contents of a (0 ms)")],
        );

        // So do prompts.
        log.lock().unwrap().clear();
        let prompt = aw!(client.get_prompt(GetPromptParams::new("hello"))).unwrap();
        assert_eq!(prompt.messages.len(), 1);
        assert_eq!(
            lines(log),
            [
                "guard hello".to_owned(),
                format!("{who} prompts/get hello -> ok hello there (0 ms)")
            ],
        );

        // The catalog's own answers go through the chain too: a list ...
        log.lock().unwrap().clear();
        let listed = aw!(client.list_tools()).unwrap();
        assert!(listed.iter().any(|t| t.name == "wipe"));
        let seen = lines(log);
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], "guard ");
        assert!(seen[1].starts_with(&format!("{who} tools/list  -> ok")), "{seen:?}");

        // ... and a call of a tool the server does not have (the catalog's -32602).
        log.lock().unwrap().clear();
        let unknown = aw!(client.call_tool("no_such_tool", Map::new()));
        assert_eq!(code(unknown), -32602, "{era:?}");
        let seen = lines(log);
        assert_eq!(seen[0], "guard no_such_tool");
        assert!(
            seen[1].starts_with(&format!("{who} tools/call no_such_tool -> error -32602")),
            "{seen:?}"
        );
    }
}

#[test]
fn over_a_byte_stream_the_chain_sees_refuses_times_and_survives_a_panic_in_both_eras() {
    rt::block_on(async {
        for era in [EraMode::Modern, LEGACY] {
            let log = Log::default();
            let (r, w) = super::serve(server(&log, &Arc::default()));
            let client = aw!(Client::connect(r, w, config(era))).unwrap();
            aw!(exercise(&client, &log, "-", era));
            aw!(client.close());
        }
    });
}

#[test]
fn the_first_middleware_added_is_the_outermost() {
    rt::block_on(async {
        let log = Log::default();
        let (a, b) = (Arc::clone(&log), Arc::clone(&log));
        let builder = Server::builder(ServerConfig::new(Implementation::new("order", "1.0")))
            .middleware(middleware!([a]; |call, next| {
                a.lock().unwrap().push("a in".to_owned());
                let outcome = pass!(next, call);
                a.lock().unwrap().push("a out".to_owned());
                outcome
            }))
            .middleware(middleware!([b]; |call, next| {
                b.lock().unwrap().push("b in".to_owned());
                let outcome = pass!(next, call);
                b.lock().unwrap().push("b out".to_owned());
                outcome
            }));
        let (r, w) = super::serve(super::echo_tool(builder).build());
        let client = aw!(Client::connect(r, w, config(EraMode::Modern))).unwrap();
        let echoed = aw!(client.call_tool("echo", text("in order"))).unwrap();
        assert_eq!(said(&echoed), "in order");
        assert_eq!(lines(&log), ["a in", "b in", "b out", "a out"]);
        aw!(client.close());
    });
}

#[test]
fn a_task_backed_call_goes_through_the_chain_once_with_its_final_outcome() {
    rt::block_on(async {
        for (era, options) in [
            (EraMode::Modern, RequestOptions::default()),
            (
                LEGACY,
                RequestOptions::default().as_task(Some(Duration::from_secs(60))),
            ),
        ] {
            let log = Log::default();
            let (r, w) = super::serve(server(&log, &Arc::default()));
            let client = aw!(Client::connect(r, w, config(era))).unwrap();
            let params =
                serde_json::value::to_raw_value(&json!({"name": "long_job", "arguments": {}}))
                    .unwrap();
            let (tx, mut statuses) = rt::channel();
            let mut watch = CallWatch::default();
            watch.task_status = Some(tx);
            let (_, pending) = dialect::start(&client, "tools/call", Some(params), options, watch);
            let result = aw!(pending.join()).unwrap();
            let result: Value = serde_json::from_str(result.get()).unwrap();
            assert_eq!(
                result["content"][0]["text"], "job done",
                "{era:?}: {result}"
            );
            // It ran as a task: the client followed the task's status.
            assert!(statuses.try_recv().is_some(), "{era:?}: no task status");
            // The client has its result once the handler returned: the chain has written by
            // then (it answers through the chain).
            assert_eq!(
                lines(&log),
                [
                    "guard long_job",
                    "- tools/call long_job -> ok job done (0 ms)"
                ],
                "{era:?}"
            );
            aw!(client.close());
        }
    });
}

#[test]
fn a_client_chain_adds_meta_the_server_sees_and_retries_after_an_error() {
    rt::block_on(async {
        for era in [EraMode::Modern, LEGACY] {
            let runs = Arc::new(AtomicUsize::new(0));
            let (r, w) = super::serve(server(&Log::default(), &runs));
            let plain = aw!(Client::connect(r, w, config(era))).unwrap();

            // One middleware from the client's options, one added to its handle (inner).
            let sent = Log::default();
            let (outer, inner) = (Arc::clone(&sent), Arc::clone(&sent));
            let options =
                ClientOptions::default().middleware(client_middleware!([outer]; |call, next| {
                    outer.lock().unwrap().push(format!("outer {}", call.method));
                    let mut call = call;
                    call.set_meta("example.com/added", "by the client chain");
                    send!(next, call)
                }));
            let (r, w) = super::serve(server(&Log::default(), &runs));
            let client = aw!(Client::connect_with(r, w, config(era), options))
                .unwrap()
                .with_middleware(client_middleware!([inner]; |call, next| {
                    inner.lock().unwrap().push(format!("retry {}", call.method));
                    match send!(next, call.clone()) {
                        Err(ClientError::Call(CallError::Remote(e))) if e.code == -32000 => {
                            send!(next, call)
                        }
                        other => other,
                    }
                }));
            let meta = aw!(client.call_tool("meta", Map::new())).unwrap();
            assert_eq!(said(&meta), "\"by the client chain\"", "{era:?}");
            // The handle without the chain sends no `_meta` of it.
            let meta = aw!(plain.call_tool("meta", Map::new())).unwrap();
            assert_eq!(said(&meta), "null", "{era:?}");

            // flaky fails on its even runs: the retrying chain runs it twice and gets the
            // success...
            let flaky = aw!(client.call_tool("flaky", Map::new())).unwrap();
            assert_eq!(said(&flaky), "steady", "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), 2, "{era:?}");
            // ...where the handle without the chain gets the error.
            assert_eq!(code(aw!(plain.call_tool("flaky", Map::new()))), -32000);
            assert_eq!(runs.load(Ordering::SeqCst), 3, "{era:?}");
            assert_eq!(
                lines(&sent),
                [
                    "outer tools/call",
                    "retry tools/call",
                    "outer tools/call",
                    "retry tools/call"
                ],
                "{era:?}"
            );
            aw!(plain.close());
            aw!(client.close());
        }
    });
}

#[test]
fn a_client_middleware_may_answer_without_sending() {
    rt::block_on(async {
        let (r, w) = super::serve(server(&Log::default(), &Arc::default()));
        let client = aw!(Client::connect(r, w, config(EraMode::Modern))).unwrap();
        let cached = client.with_middleware(client_middleware!([]; |call, next| {
            if call.method == "tools/call" {
                let text = json!({"content": [{"type": "text", "text": "from the cache"}]});
                let raw: Box<RawValue> = serde_json::value::to_raw_value(&text).unwrap();
                return Ok(raw);
            }
            send!(next, call)
        }));
        let hit = aw!(cached.call_tool("echo", text("hi"))).unwrap();
        assert_eq!(said(&hit), "from the cache");
        assert!(!aw!(cached.list_tools()).unwrap().is_empty());
        aw!(client.close());
    });
}

#[cfg(feature = "http")]
mod over_http {
    //! The same server over HTTP, two users told apart by their `X-User` header, and two
    //! users behind tokens told apart by their verified principal

    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_sansio::EraMode;
    use serde_json::Map;

    use super::super::support::LEGACY;
    use super::{Log, code, config, exercise, lines, said, server};
    use crate::binding::{Client, ClientOptions};
    use crate::rt;

    dialect_fn! {
        async fn connect_as(url: &str, era: EraMode, user: &str) -> Client {
            let options = ClientOptions::default().header("X-User", user);
            aw!(rt::timeout(Duration::from_secs(30), Client::connect_http(url, config(era), options)))
                .expect("connects in time")
                .expect("connects")
        }
    }

    #[test]
    fn over_http_the_chain_sees_each_user_and_a_header_lets_a_refused_call_through() {
        rt::block_on(async {
            let log = Log::default();
            let handle = aw!(
                server(&log, &Arc::default()).serve_http(SocketAddr::from(([127, 0, 0, 1], 0)))
            )
            .unwrap();
            let url = format!("http://{}/mcp", handle.local_addr());
            for era in [EraMode::Modern, LEGACY] {
                let alice = aw!(connect_as(&url, era, "alice"));
                let bob = aw!(connect_as(&url, era, "bob"));
                aw!(exercise(&alice, &log, "alice", era));
                aw!(exercise(&bob, &log, "bob", era));

                // The guard reads the caller's headers: X-Confirm lets wipe through.
                log.lock().unwrap().clear();
                let confirmed = alice.with_headers([("X-Confirm", "yes")]).unwrap();
                let wiped = aw!(confirmed.call_tool("wipe", Map::new())).unwrap();
                assert_eq!(said(&wiped), "wiped", "{era:?}");
                assert_eq!(
                    code(aw!(bob.call_tool("wipe", Map::new()))),
                    -32001,
                    "{era:?}"
                );
                assert_eq!(
                    lines(&log),
                    [
                        "guard wipe",
                        "alice tools/call wipe -> ok wiped (0 ms)",
                        "guard wipe",
                        "bob tools/call wipe -> error -32001 (0 ms)",
                    ],
                    "{era:?}"
                );
                aw!(alice.close());
                aw!(bob.close());
            }
            drop(handle);
        });
    }

    /// Two users behind HS256 tokens: the chain sees each one's verified principal
    #[cfg(feature = "auth")]
    #[test]
    fn behind_tokens_the_chain_sees_each_callers_principal() {
        use jsonwebtoken::DecodingKey;
        use mcp_sansio::http::HttpConfig;
        use mcp_sansio::http::protected::ResourceServer;

        use super::super::support::oauth::{SECRET, free_port, user_token, validation};
        use crate::binding::{Protection, Server, jwt_verifier};
        use mcp_sansio::{Implementation, ServerConfig};

        const ISSUER: &str = "http://127.0.0.1:1";
        rt::block_on(async {
            let seen = Log::default();
            let who = Arc::clone(&seen);
            let builder = Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
                .middleware(middleware!([who]; |call, next| {
                    let principal = call.request().principal();
                    let subject = principal.and_then(|p| p.subject.clone()).unwrap_or_default();
                    let client = principal.and_then(|p| p.client_id.clone()).unwrap_or_default();
                    who.lock().unwrap().push(format!("{subject}/{client} {}", call.name().unwrap_or("")));
                    pass!(next, call)
                }));
            let server = super::super::echo_tool(builder).build();
            let port = free_port();
            let url = format!("http://127.0.0.1:{port}/mcp");
            let verifier = jwt_verifier(
                DecodingKey::from_secret(SECRET).unwrap(),
                validation(&url, ISSUER),
            );
            let rules = ResourceServer::new(&url, ISSUER).unwrap();
            let handle = aw!(server.serve_http_protected(
                SocketAddr::from(([127, 0, 0, 1], port)),
                HttpConfig::default(),
                Protection::new(rules, verifier),
            ))
            .unwrap();
            for era in [EraMode::Modern, LEGACY] {
                seen.lock().unwrap().clear();
                for (user, app) in [("alice", "alice-app"), ("bob", "bob-app")] {
                    let token = user_token(ISSUER, &url, user, app, "mcp:read");
                    let options =
                        ClientOptions::default().header("Authorization", format!("Bearer {token}"));
                    let client = aw!(rt::timeout(
                        Duration::from_secs(30),
                        Client::connect_http(&url, config(era), options),
                    ))
                    .expect("connects in time")
                    .expect("connects");
                    let echoed = aw!(client.call_tool("echo", super::text(user))).unwrap();
                    assert_eq!(said(&echoed), user);
                    aw!(client.close());
                }
                assert_eq!(
                    lines(&seen),
                    ["alice/alice-app echo", "bob/bob-app echo"],
                    "{era:?}"
                );
            }
            drop(handle);
        });
    }
}
