//! Our client and our server over real Streamable HTTP on 127.0.0.1, in the legacy
//! (2025-11-25) and modern (2026-07-28) eras; malformed requests get the spec's status and a
//! JSON-RPC error body, and the server keeps serving

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

mod common;

use async_io::Timer;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, InputRequest, InputRequests, InputResponse, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, ServerConfig};
use mcp_sansio_async_std::{Client, ClientOptions, HttpServerHandle, InputHandler, Server};
use serde_json::{Map, Value, json};

const LEGACY: EraMode = EraMode::Legacy(ProtocolVersion::V2025_11_25);

fn schema() -> Map<String, Value> {
    let Value::Object(m) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    else {
        unreachable!()
    };
    m
}

struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn server(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("http-test-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(Tool::new("echo", schema()), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let aborted = Arc::clone(&aborted);
            async move {
                let _flag = Flag(aborted);
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0));
                    Timer::after(Duration::from_millis(10)).await;
                }
                Timer::after(Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("never"))
            }
        })
        .unwrap()
        .tool(Tool::new("greet", Map::new()), move |cx, _args| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let request: InputRequest = serde_json::from_value(json!({
                    "method": "elicitation/create",
                    "params": {"message": "Your name?", "requestedSchema": {
                        "type": "object", "properties": {"name": {"type": "string"}}}}
                }))
                .unwrap();
                let mut requests = InputRequests::new();
                requests.insert("name".into(), request);
                let answers = cx.ask(requests).await.map_err(|e| e.to_error())?;
                let Some(InputResponse::Elicit(answer)) = answers.get("name") else {
                    return Ok(CallToolResult::error("no name"));
                };
                let v = serde_json::to_value(answer).unwrap();
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    v["content"]["name"].as_str().unwrap_or("?")
                )))
            }
        })
        .unwrap()
        .build()
}

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

async fn start(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> HttpServerHandle {
    let mut config = HttpConfig::default();
    config.max_body_size = 64 * 1024;
    server(aborted, runs)
        .serve_http_with(localhost(), config)
        .await
        .unwrap()
}

fn url(handle: &HttpServerHandle) -> String {
    format!("http://{}/mcp", handle.local_addr())
}

fn answering() -> InputHandler {
    Arc::new(|requests: InputRequests| {
        Box::pin(async move {
            let responses = requests
                .keys()
                .map(|k| {
                    let r: InputResponse = serde_json::from_value(
                        json!({"action": "accept", "content": {"name": "Ada"}}),
                    )
                    .unwrap();
                    (k.clone(), r)
                })
                .collect();
            Ok(responses)
        })
    })
}

async fn connect(url: &str, era: EraMode) -> Client {
    let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
    config.era = era;
    config.capabilities = json!({"elicitation": {}});
    let options = ClientOptions::default().input(answering());
    common::timeout(
        Duration::from_secs(10),
        Client::connect_http(url, config, options),
    )
    .await
    .expect("connects in time")
    .unwrap()
}

fn text(text: &str) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("text".into(), json!(text));
    args
}

#[test]
fn list_call_progress_cancel_and_ask_in_both_eras() {
    smol::block_on(async {
        for (era, version, expected_runs) in [
            (LEGACY, ProtocolVersion::V2025_11_25, 1),
            (EraMode::Modern, ProtocolVersion::V2026_07_28, 2),
            (EraMode::Auto, ProtocolVersion::V2026_07_28, 2),
        ] {
            let aborted = Arc::new(AtomicBool::new(false));
            let runs = Arc::new(AtomicUsize::new(0));
            let handle = start(Arc::clone(&aborted), Arc::clone(&runs)).await;
            let client = connect(&url(&handle), era).await;
            assert_eq!(client.peer().version, version, "{era:?}");

            let tools = client.list_tools().await.unwrap();
            let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["echo", "greet", "slow"]);
            let result = client.call_tool("echo", text("over http")).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("over http"));
            match client.call_tool("nope", Map::new()).await {
                Err(mcp_sansio_async_std::ClientError::Call(mcp_sansio::CallError::Remote(e))) => {
                    assert_eq!(e.code, -32602);
                }
                other => panic!("{era:?}: {other:?}"),
            }

            // Progress arrives on the request's stream; dropping the call aborts the handler.
            let (tx, rx) = async_channel::unbounded();
            let call = {
                let client = client.clone();
                smol::spawn(async move {
                    client
                        .call_tool_with("slow", Map::new(), Default::default(), tx)
                        .await
                })
            };
            for expected in 1..=3 {
                let p = common::timeout(Duration::from_secs(5), rx.recv())
                    .await
                    .expect("progress in time")
                    .unwrap();
                assert_eq!(p.progress, f64::from(expected));
            }
            // Dropping the task drops the call's future, which cancels the request.
            drop(call);
            assert!(
                common::wait_for(&aborted).await,
                "{era:?}: the handler was aborted"
            );

            // Context::ask: live elicitation (2025) or input_required and a retry (2026).
            let result = client.call_tool("greet", Map::new()).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");

            let result = client.call_tool("echo", text("still here")).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("still here"));
            client.close().await;
            handle.shutdown().await;
        }
    });
}

use common::raw;

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn error_code(body: &[u8]) -> i64 {
    let v: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("a JSON body: {}", String::from_utf8_lossy(body)));
    assert_eq!(v["jsonrpc"], "2.0");
    v["error"]["code"].as_i64().expect("a JSON-RPC error")
}

#[test]
fn malformed_requests_get_the_spec_status_and_the_server_keeps_serving() {
    smol::block_on(async {
        let handle = start(Arc::default(), Arc::default()).await;
        let url = url(&handle);
        let other = connect(&url, LEGACY).await;

        // Bad JSON
        let (status, _, body) = raw(&url, "POST", &[JSON, ACCEPT], "{not json").await;
        assert_eq!(status, 400);
        assert_eq!(error_code(&body), -32700);
        // Wrong content type
        let (status, _, body) = raw(
            &url,
            "POST",
            &[("Content-Type", "text/plain"), ACCEPT],
            "{}",
        )
        .await;
        assert_eq!(status, 415);
        error_code(&body);
        // Unknown session
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let (status, _, body) = raw(
            &url,
            "POST",
            &[JSON, ACCEPT, ("Mcp-Session-Id", "no-such-session")],
            ping,
        )
        .await;
        assert_eq!(status, 404);
        error_code(&body);
        // Oversize body
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(100 * 1024)
        );
        let (status, _, body) = raw(&url, "POST", &[JSON, ACCEPT], big).await;
        assert_eq!(status, 413);
        error_code(&body);
        // Hostile Origin (DNS rebinding)
        let (status, _, body) = raw(
            &url,
            "POST",
            &[JSON, ACCEPT, ("Origin", "http://evil.example")],
            ping,
        )
        .await;
        assert_eq!(status, 403);
        error_code(&body);

        // The session of a 2025 client is deleted: later requests get 404.
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, headers, _) = raw(&url, "POST", &[JSON, ACCEPT], init.to_string()).await;
        assert_eq!(status, 200);
        let sid = headers["mcp-session-id"].clone();
        let session = [("Mcp-Session-Id", sid.as_str())];
        let (status, _, _) = raw(&url, "DELETE", &session, "").await;
        assert_eq!(status, 200);
        let (status, _, body) = raw(
            &url,
            "POST",
            &[JSON, ACCEPT, ("Mcp-Session-Id", sid.as_str())],
            ping,
        )
        .await;
        assert_eq!(status, 404);
        error_code(&body);

        // Other clients are unaffected, in both eras.
        let result = other.call_tool("echo", text("fine")).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("fine"));
        let modern = connect(&url, EraMode::Modern).await;
        let result = modern.call_tool("echo", text("fine too")).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("fine too"));
        other.close().await;
        modern.close().await;
        handle.shutdown().await;
    });
}

#[test]
fn closing_the_client_deletes_its_session_and_shutdown_ends_open_streams() {
    smol::block_on(async {
        let handle = start(Arc::default(), Arc::default()).await;
        let url = url(&handle);
        let client = connect(&url, LEGACY).await;
        let result = client.call_tool("echo", text("hi")).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hi"));
        client.close().await;

        // A slow call is in flight when the server shuts down: the call ends, shutdown returns.
        let client = connect(&url, LEGACY).await;
        let call = {
            let client = client.clone();
            smol::spawn(async move { client.call_tool("slow", Map::new()).await })
        };
        Timer::after(Duration::from_millis(100)).await;
        common::timeout(Duration::from_secs(10), handle.shutdown())
            .await
            .expect("shutdown in time");
        let outcome = common::timeout(Duration::from_secs(10), call)
            .await
            .expect("the call ends");
        assert!(outcome.is_err(), "{outcome:?}");
    });
}
