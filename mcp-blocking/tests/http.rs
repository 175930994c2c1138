//! Our blocking client and server over real Streamable HTTP on 127.0.0.1, in the legacy
//! (2025-11-25) and modern (2026-07-28) eras; malformed requests get the spec's status and a
//! JSON-RPC error body, and the server keeps serving

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, InputRequests, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, RequestOptions,
    ServerConfig,
};
use mcp_sansio_blocking::{
    CallWatch, CancellationToken, Client, ClientError, ClientOptions, HttpServerHandle,
    InputHandler, Server,
};
use serde_json::value::RawValue;
use serde_json::{Map, json};

use common::support::raw_http::malformed_requests_get_the_spec_status;
use common::support::{LEGACY, answer_ada, echo_schema, greeting, name_request, text};

fn server(tokens: mpsc::Sender<CancellationToken>, runs: Arc<AtomicUsize>) -> Server {
    let tokens = Mutex::new(tokens);
    let mut config = ServerConfig::new(Implementation::new("http-test-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(Tool::new("echo", echo_schema()), |_cx, args| {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let _ = tokens.lock().unwrap().send(cx.cancellation());
            for i in 1..=3 {
                cx.progress(Progress::new(f64::from(i)).total(3.0));
            }
            cx.sleep(Duration::from_secs(3600))?;
            Ok(CallToolResult::text("never"))
        })
        .unwrap()
        .tool(Tool::new("greet", Map::new()), move |cx, _args| {
            runs.fetch_add(1, Ordering::SeqCst);
            let answers = cx.ask(name_request()).map_err(|e| e.to_error())?;
            Ok(greeting(&answers))
        })
        .unwrap()
        .build()
}

fn start(tokens: mpsc::Sender<CancellationToken>, runs: Arc<AtomicUsize>) -> HttpServerHandle {
    let mut config = HttpConfig::default();
    config.max_body_size = 64 * 1024;
    // A quiet response writes a keepalive this often, so the server learns soon that a
    // client closed it (tiny_http sees a closed connection only when it writes).
    config.keepalive = Some(Duration::from_millis(200));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    server(tokens, runs).serve_http_with(addr, config).unwrap()
}

fn url(handle: &HttpServerHandle) -> String {
    format!("http://{}/mcp", handle.local_addr())
}

fn answering() -> InputHandler {
    Arc::new(|requests: InputRequests| Ok(answer_ada(&requests)))
}

fn connect(url: &str, era: EraMode) -> Client {
    let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
    config.era = era;
    config.capabilities = json!({"elicitation": {}});
    config.timeouts.request = Some(Duration::from_secs(20));
    Client::connect_http(url, config, ClientOptions::default().input(answering())).unwrap()
}

#[test]
fn list_call_progress_cancel_and_ask_in_both_eras() {
    for (era, version, expected_runs) in [
        (LEGACY, ProtocolVersion::V2025_11_25, 1),
        (EraMode::Modern, ProtocolVersion::V2026_07_28, 2),
        (EraMode::Auto, ProtocolVersion::V2026_07_28, 2),
    ] {
        let (tokens_tx, tokens) = mpsc::channel();
        let runs = Arc::new(AtomicUsize::new(0));
        let handle = start(tokens_tx, Arc::clone(&runs));
        let client = connect(&url(&handle), era);
        assert_eq!(client.peer().version, version, "{era:?}");

        let tools = client.list_tools().unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "greet", "slow"]);
        let result = client.call_tool("echo", text("over http")).unwrap();
        assert_eq!(result.content[0].as_text(), Some("over http"));
        match client.call_tool("nope", Map::new()) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602),
            other => panic!("{era:?}: {other:?}"),
        }

        // Progress arrives on the request's stream; cancelling ends the call at once.
        let (tx, rx) = mpsc::channel();
        let mut watch = CallWatch::default();
        watch.progress = Some(tx);
        let raw = RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
        let call = client.start(
            "tools/call",
            Some(raw),
            RequestOptions::default().with_progress(),
            watch,
        );
        for expected in 1..=3 {
            let p = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("progress in time");
            assert_eq!(p.progress, f64::from(expected));
        }
        let token = tokens.recv().unwrap();
        call.cancel_handle().cancel();
        match call.wait() {
            Err(ClientError::Call(CallError::Cancelled)) => {}
            other => panic!("{era:?}: {other:?}"),
        }
        // The handler's token is cancelled: by notifications/cancelled (2025), or because
        // the client closed the response (2026), which the quiet handler's stream learns
        // when its next keepalive fails to write.
        assert_eq!(
            token.sleep(Duration::from_secs(3600)),
            Err(mcp_sansio_blocking::Cancelled),
            "{era:?}"
        );

        // Context::ask: live elicitation (2025) or input_required and a retry (2026).
        let result = client.call_tool("greet", Map::new()).unwrap();
        assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
        assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");

        let result = client.call_tool("echo", text("still here")).unwrap();
        assert_eq!(result.content[0].as_text(), Some("still here"));
        client.close();
        handle.shutdown();
    }
}

#[test]
fn malformed_requests_get_the_spec_status_and_the_server_keeps_serving() {
    let handle = start(mpsc::channel().0, Arc::default());
    let url = url(&handle);
    let other = connect(&url, LEGACY);

    malformed_requests_get_the_spec_status(&url);

    // Other clients are unaffected, in both eras.
    let result = other.call_tool("echo", text("fine")).unwrap();
    assert_eq!(result.content[0].as_text(), Some("fine"));
    let modern = connect(&url, EraMode::Modern);
    let result = modern.call_tool("echo", text("fine too")).unwrap();
    assert_eq!(result.content[0].as_text(), Some("fine too"));
    other.close();
    modern.close();
    handle.shutdown();
}

#[test]
fn shutdown_ends_open_streams_and_the_call_in_flight() {
    let (tokens_tx, tokens) = mpsc::channel();
    let handle = start(tokens_tx, Arc::default());
    let url = url(&handle);
    let client = connect(&url, LEGACY);
    let result = client.call_tool("echo", text("hi")).unwrap();
    assert_eq!(result.content[0].as_text(), Some("hi"));
    let call = {
        let client = client.clone();
        std::thread::spawn(move || client.call_tool("slow", Map::new()))
    };
    // The handler runs: the call's stream is open.
    let token = tokens.recv().unwrap();
    handle.shutdown();
    // The server's handlers are cancelled and the client's call ends.
    assert_eq!(
        token.sleep(Duration::from_secs(3600)),
        Err(mcp_sansio_blocking::Cancelled)
    );
    let outcome = call.join().unwrap();
    assert!(outcome.is_err(), "{outcome:?}");
}
