//! Pushing changes from the server's handle: a resource update and a list change reach a
//! legacy subscriber and a 2026 listener on every connection the one `Server` serves (byte
//! streams and HTTP), a tool added or removed at run time shows in the next `tools/list`;
//! and the defaults that work: no `state_key` set, a 2026 request still asks for input, and a
//! client with an input handler but no declared capability gets its elicitation

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, ReadResourceResult, Resource, ResourceContents, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, InboundNotification, ListKind,
    RequestOptions, ServerConfig,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::greet_tool;
use super::support::{LEGACY, answer_ada};
use crate::binding::{CallWatch, Client, ClientError, ClientOptions, Server};
use crate::{dialect, rt};

pub(super) const NOTE: &str = "notes://a";

/// A server that can change: `listChanged` on every list, resource subscriptions, one
/// resource ([`NOTE`]) and the `echo` tool
fn server() -> Server {
    let config = ServerConfig::new(Implementation::new("push-server", "1.0"));
    let builder = Server::builder(config)
        .list_changed()
        .resource_subscriptions()
        .resource(
            Resource::new(NOTE, "a note"),
            handler!(|_cx, uri, _vars| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri, "a",
                )]))
            }),
        )
        .unwrap();
    super::echo_tool(builder).build()
}

/// A tool to add at run time
fn late_tool(server: &Server) {
    server
        .add_tool(
            Tool::new("late", Map::new()),
            handler!(|_cx, _args| { Ok(CallToolResult::text("late but here")) }),
        )
        .unwrap();
}

fn raw(value: &Value) -> Option<Box<RawValue>> {
    Some(serde_json::value::to_raw_value(value).unwrap())
}

dialect_fn! {
    /// The next notification named `method`, skipping others; at most 10 s (a failure guard:
    /// it polls, and the test fails if nothing came)
    pub(super) async fn next_named(
        rx: &mut rt::Receiver<InboundNotification>,
        method: &str,
    ) -> InboundNotification {
        for _ in 0..2000 {
            match rx.try_recv() {
                Some(n) if n.method == method => return n,
                Some(_) => {}
                None => aw!(rt::sleep(Duration::from_millis(5))),
            }
        }
        panic!("no {method} within 10 s")
    }

    /// Subscribes to [`NOTE`] the way the client's era does it (legacy `resources/subscribe`,
    /// 2026 a `subscriptions/listen` kept open in the background, for tools list changes and
    /// the note: keep what this returns), and waits until the server has it
    pub(super) async fn subscribe(
        client: &Client,
        rx: &mut rt::Receiver<InboundNotification>,
        era: EraMode,
    ) -> Option<impl Sized + use<>> {
        if era == EraMode::Modern {
            let filter = json!({"notifications": {
                "toolsListChanged": true,
                "resourceSubscriptions": [NOTE],
            }});
            let options = RequestOptions::default();
            let watch = CallWatch::default();
            let listen = dialect::start(client, "subscriptions/listen", raw(&filter), options, watch);
            let ack = aw!(next_named(rx, "notifications/subscriptions/acknowledged"));
            let params: Value = serde_json::from_str(ack.params.as_deref().unwrap().get()).unwrap();
            assert_eq!(params["notifications"]["toolsListChanged"], true, "{params}");
            assert_eq!(params["notifications"]["resourceSubscriptions"], json!([NOTE]));
            Some(listen)
        } else {
            let uri = json!({ "uri": NOTE });
            let options = RequestOptions::default();
            aw!(client.request_raw("resources/subscribe", raw(&uri), options, None)).unwrap();
            None
        }
    }

    /// What each subscriber hears after the server pushes: the note's update, then the tools
    /// list change that adding a tool sends; a 2026 listener's carry its subscription id
    async fn hears_the_pushes(
        subscribers: &mut [(EraMode, rt::Receiver<InboundNotification>)],
        server: &Server,
    ) {
        server.notify_resource_updated(NOTE);
        late_tool(server);
        for (era, rx) in subscribers.iter_mut() {
            let modern = *era == EraMode::Modern;
            let updated = aw!(next_named(rx, "notifications/resources/updated"));
            let params: Value =
                serde_json::from_str(updated.params.as_deref().unwrap().get()).unwrap();
            assert_eq!(params["uri"], NOTE, "{era:?}");
            assert_eq!(updated.subscription_id().is_some(), modern, "{era:?}");
            let changed = aw!(next_named(rx, "notifications/tools/list_changed"));
            assert_eq!(changed.subscription_id().is_some(), modern, "{era:?}");
        }
    }

    /// `late` is in `tools/list` and answers; removed, it is in neither
    async fn sees_late_come_and_go(client: &Client, server: &Server) {
        let names = |tools: Vec<Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(aw!(client.list_tools()).unwrap()), ["echo", "late"]);
        let result = aw!(client.call_tool("late", Map::new())).unwrap();
        assert_eq!(result.content[0].as_text(), Some("late but here"));
        assert!(server.remove_tool("late"));
        assert!(!server.remove_tool("late"), "gone already");
        assert_eq!(names(aw!(client.list_tools()).unwrap()), ["echo"]);
        match aw!(client.call_tool("late", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602, "{e:?}"),
            other => panic!("{other:?}"),
        }
    }
}

fn client_config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("push-client", "1.0"));
    config.era = era;
    config
}

#[test]
fn pushes_reach_a_legacy_subscriber_and_a_modern_listener_over_byte_streams() {
    rt::block_on(async {
        let server = server();
        let mut subscribers = Vec::new();
        let mut clients = Vec::new();
        let mut listens = Vec::new();
        for era in [LEGACY, EraMode::Modern] {
            let (r, w) = super::serve(server.clone());
            let (tx, mut rx) = rt::channel();
            let options = ClientOptions::default().notifications(tx);
            let client = aw!(Client::connect_with(r, w, client_config(era), options)).unwrap();
            listens.push(aw!(subscribe(&client, &mut rx, era)));
            subscribers.push((era, rx));
            clients.push(client);
        }
        aw!(hears_the_pushes(&mut subscribers, &server));
        for client in &clients {
            let names: Vec<_> = aw!(client.list_tools()).unwrap();
            assert!(names.iter().any(|t| t.name == "late"));
        }
        aw!(sees_late_come_and_go(&clients[0], &server));
        // Each removal told every connection again.
        for (era, rx) in &mut subscribers {
            let changed = aw!(next_named(rx, "notifications/tools/list_changed"));
            assert_eq!(changed.subscription_id().is_some(), *era == EraMode::Modern);
        }
        drop(listens);
    });
}

#[cfg(feature = "http")]
#[test]
fn pushes_reach_a_legacy_subscriber_and_a_modern_listener_over_http() {
    use std::net::SocketAddr;

    use mcp_sansio::http::HttpConfig;

    rt::block_on(async {
        let server = server();
        let mut config = HttpConfig::default();
        if let Some(keepalive) = rt::HTTP_KEEPALIVE {
            config.keepalive = Some(keepalive);
        }
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server.serve_http_with(localhost, config)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        let mut subscribers = Vec::new();
        let mut clients = Vec::new();
        let mut listens = Vec::new();
        for era in [LEGACY, EraMode::Modern] {
            let (tx, mut rx) = rt::channel();
            let options = ClientOptions::default().notifications(tx);
            let client = aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, client_config(era), options),
            ))
            .expect("connects in time")
            .unwrap();
            listens.push(aw!(subscribe(&client, &mut rx, era)));
            subscribers.push((era, rx));
            clients.push(client);
        }
        aw!(hears_the_pushes(&mut subscribers, &server));
        // Run-time tools over both wires: the 2025 session and the 2026 requests.
        aw!(sees_late_come_and_go(&clients[1], &server));
        late_tool(&server);
        aw!(sees_late_come_and_go(&clients[0], &server));
        drop(listens);
        aw!(handle.shutdown());
    });
}

#[test]
fn a_list_the_server_does_not_declare_changing_is_refused_by_name() {
    let server = Server::builder(ServerConfig::new(Implementation::new("s", "1"))).build();
    let err = server.notify_list_changed(ListKind::Tools).unwrap_err();
    assert_eq!(err.list, "tools");
    assert!(err.to_string().contains("list_changed"), "{err}");
    let server = self::server();
    server.notify_list_changed(ListKind::Prompts).unwrap();
}

#[test]
fn with_no_state_key_and_no_declared_capability_input_still_works_in_both_eras() {
    rt::block_on(async {
        for (era, expected_runs) in [(LEGACY, 1), (EraMode::Modern, 2)] {
            let runs = Arc::new(AtomicUsize::new(0));
            // ServerConfig::new and nothing else: the server picks its own requestState key.
            let config = ServerConfig::new(Implementation::new("ask-server", "1.0"));
            let server = greet_tool(Server::builder(config), Arc::clone(&runs)).build();
            let (r, w) = super::serve(server);
            // An input handler, and no capability declared by hand.
            let answering = dialect::input_handler(|requests| Ok(answer_ada(requests)));
            let options = ClientOptions::default().input(answering);
            let client = aw!(Client::connect_with(r, w, client_config(era), options)).unwrap();
            let result = aw!(client.call_tool("greet", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
        }
    });
}

#[cfg(feature = "http")]
#[test]
fn with_no_state_key_and_no_declared_capability_input_still_works_over_http() {
    use std::net::SocketAddr;

    rt::block_on(async {
        let runs = Arc::new(AtomicUsize::new(0));
        let config = ServerConfig::new(Implementation::new("ask-server", "1.0"));
        let server = greet_tool(Server::builder(config), Arc::clone(&runs)).build();
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server.serve_http(localhost)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        for era in [LEGACY, EraMode::Modern] {
            let answering = dialect::input_handler(|requests| Ok(answer_ada(requests)));
            let options = ClientOptions::default().input(answering);
            let client = aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, client_config(era), options),
            ))
            .expect("connects in time")
            .unwrap();
            let result = aw!(client.call_tool("greet", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
        }
        // Legacy: one run; modern: a first run ending in input_required and the retry.
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        aw!(handle.shutdown());
    });
}

/// A 2026 `tools/call` of `deploy` with `region` "eu", with the `Mcp-Param-Region` header
/// or without it, as raw HTTP: its status and body
#[cfg(feature = "http")]
fn deploy(url: &str, mirror: bool) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
    "params": {"name": "deploy", "arguments": {"region": "eu"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }}});
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "deploy"),
    ];
    if mirror {
        headers.push(("Mcp-Param-Region", "eu"));
    }
    let (status, _, body) =
        super::support::raw_http::raw(url, "POST", &headers, body.to_string().as_bytes());
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[cfg(feature = "http")]
#[test]
fn a_tool_added_at_run_time_gets_its_header_checks_over_http_and_loses_them_when_removed() {
    use std::net::SocketAddr;

    rt::block_on(async {
        let server = server();
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server.serve_http(localhost)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        let schema = super::support::object(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}));
        server
            .add_tool(
                Tool::new("deploy", schema),
                handler!(|_cx, _args| { Ok(CallToolResult::text("deployed")) }),
            )
            .unwrap();
        let (with, without, removed) = aw!(rt::unblock({
            let server = server.clone();
            move || {
                let with = deploy(&url, true);
                let without = deploy(&url, false);
                server.remove_tool("deploy");
                (with, without, deploy(&url, false))
            }
        }));
        assert_eq!(with.0, 200, "{}", with.1);
        assert!(with.1.contains("deployed"), "{}", with.1);
        // The HTTP core learnt the tool's mirror: a call without the header is refused.
        assert_eq!(without.0, 400, "{}", without.1);
        // Removed: no header rule any more, the catalog answers that the tool is unknown.
        assert!(removed.1.contains("Unknown tool: deploy"), "{removed:?}");
        aw!(handle.shutdown());
    });
}

#[test]
fn prompts_resources_and_templates_come_and_go_at_run_time() {
    use mcp_sansio::schema::{GetPromptResult, Prompt, PromptMessage, ResourceTemplate};

    rt::block_on(async {
        let server = server();
        let (r, w) = super::serve(server.clone());
        let (tx, mut rx) = rt::channel();
        let options = ClientOptions::default().notifications(tx);
        let client = aw!(Client::connect_with(r, w, client_config(LEGACY), options)).unwrap();

        server
            .add_prompt(
                Prompt::new("hello"),
                handler!(|_cx, _args| {
                    Ok(GetPromptResult::new(vec![PromptMessage::user("hi")]))
                }),
            )
            .unwrap();
        aw!(next_named(&mut rx, "notifications/prompts/list_changed"));
        let prompts = aw!(client.list_prompts()).unwrap();
        assert_eq!(
            prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["hello"]
        );
        let params = mcp_sansio::schema::GetPromptParams::new("hello");
        assert!(aw!(client.get_prompt(params)).is_ok());
        assert!(server.remove_prompt("hello"));
        aw!(next_named(&mut rx, "notifications/prompts/list_changed"));
        assert!(aw!(client.list_prompts()).unwrap().is_empty());

        server
            .add_resource(
                Resource::new("notes://b", "another note"),
                handler!(|_cx, uri, _vars| {
                    Ok(ReadResourceResult::new(vec![ResourceContents::text(
                        uri, "b",
                    )]))
                }),
            )
            .unwrap();
        aw!(next_named(&mut rx, "notifications/resources/list_changed"));
        let uris = |list: Vec<Resource>| list.into_iter().map(|r| r.uri).collect::<Vec<_>>();
        assert_eq!(
            uris(aw!(client.list_resources()).unwrap()),
            [NOTE, "notes://b"]
        );
        assert!(aw!(client.read_resource("notes://b")).is_ok());
        assert!(server.remove_resource("notes://b"));
        aw!(next_named(&mut rx, "notifications/resources/list_changed"));
        assert_eq!(uris(aw!(client.list_resources()).unwrap()), [NOTE]);
        assert!(aw!(client.read_resource("notes://b")).is_err());

        server
            .add_resource_template(
                ResourceTemplate::new("drafts://{id}", "a draft"),
                handler!(|_cx, uri, _vars| {
                    Ok(ReadResourceResult::new(vec![ResourceContents::text(
                        uri, "draft",
                    )]))
                }),
            )
            .unwrap();
        aw!(next_named(&mut rx, "notifications/resources/list_changed"));
        let read = aw!(client.read_resource("drafts://7")).unwrap();
        assert_eq!(read.contents.len(), 1);
        assert!(server.remove_resource_template("drafts://{id}"));
        assert!(aw!(client.read_resource("drafts://7")).is_err());
    });
}
