//! Our blocking client and server over real Streamable HTTP on 127.0.0.1, in the legacy
//! (2025-11-25) and modern (2026-07-28) eras; malformed requests get the spec's status and a
//! JSON-RPC error body, and the server keeps serving

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, InputRequest, InputRequests, InputResponse, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, RequestOptions,
    ServerConfig,
};
use mcp_sansio_blocking::{
    CallWatch, CancellationToken, Client, ClientError, ClientOptions, HttpServerHandle,
    InputHandler, Server,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use common::object;

const LEGACY: EraMode = EraMode::Legacy(ProtocolVersion::V2025_11_25);

fn server(tokens: mpsc::Sender<CancellationToken>, runs: Arc<AtomicUsize>) -> Server {
    let tokens = Mutex::new(tokens);
    let mut config = ServerConfig::new(Implementation::new("http-test-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(
            Tool::new("echo", object(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))),
            |_cx, args| Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())),
        )
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
            let request: InputRequest = serde_json::from_value(json!({
                "method": "elicitation/create",
                "params": {"message": "Your name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string"}}}}
            }))
            .unwrap();
            let answers = cx
                .ask([("name".to_owned(), request)].into())
                .map_err(|e| e.to_error())?;
            let Some(InputResponse::Elicit(answer)) = answers.get("name") else {
                return Ok(CallToolResult::error("no name"));
            };
            let v = serde_json::to_value(answer).unwrap();
            Ok(CallToolResult::text(format!(
                "Hello, {}!",
                v["content"]["name"].as_str().unwrap_or("?")
            )))
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
    Arc::new(|requests: InputRequests| {
        Ok(requests
            .keys()
            .map(|k| {
                let r: InputResponse =
                    serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                        .unwrap();
                (k.clone(), r)
            })
            .collect())
    })
}

fn connect(url: &str, era: EraMode) -> Client {
    let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
    config.era = era;
    config.capabilities = json!({"elicitation": {}});
    config.timeouts.request = Some(Duration::from_secs(20));
    Client::connect_http(url, config, ClientOptions::default().input(answering())).unwrap()
}

fn text(text: &str) -> Map<String, Value> {
    object(json!({ "text": text }))
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

/// A raw HTTP request: status, session id header and body
fn raw(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Option<String>, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = ureq::http::Request::builder().method(method).uri(url);
    for (n, v) in headers {
        request = request.header(*n, *v);
    }
    let response = agent.run(request.body(body.to_owned()).unwrap()).unwrap();
    let status = response.status().as_u16();
    let sid = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|c| c.to_str().unwrap().starts_with("text/event-stream"));
    let mut reader = response.into_body().into_reader();
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        use std::io::Read;
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
        // An event stream: read until the first answer, then stop.
        if sse && String::from_utf8_lossy(&all).contains("\"result\"") {
            break;
        }
    }
    (status, sid, String::from_utf8(all).unwrap())
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn error_code(body: &str) -> i64 {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("a JSON body: {body}"));
    assert_eq!(v["jsonrpc"], "2.0");
    v["error"]["code"].as_i64().expect("a JSON-RPC error")
}

#[test]
fn malformed_requests_get_the_spec_status_and_the_server_keeps_serving() {
    let handle = start(mpsc::channel().0, Arc::default());
    let url = url(&handle);
    let other = connect(&url, LEGACY);

    let (status, _, body) = raw(&url, "POST", &[JSON, ACCEPT], "{not json");
    assert_eq!(status, 400);
    assert_eq!(error_code(&body), -32700);
    let (status, _, body) = raw(
        &url,
        "POST",
        &[("Content-Type", "text/plain"), ACCEPT],
        "{}",
    );
    assert_eq!(status, 415);
    error_code(&body);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let unknown = [JSON, ACCEPT, ("Mcp-Session-Id", "no-such-session")];
    let (status, _, body) = raw(&url, "POST", &unknown, ping);
    assert_eq!(status, 404);
    error_code(&body);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100 * 1024)
    );
    let (status, _, body) = raw(&url, "POST", &[JSON, ACCEPT], &big);
    assert_eq!(status, 413);
    error_code(&body);
    let hostile = [JSON, ACCEPT, ("Origin", "http://evil.example")];
    let (status, _, body) = raw(&url, "POST", &hostile, ping);
    assert_eq!(status, 403);
    error_code(&body);

    // The session of a 2025 client is deleted: later requests get 404.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, sid, _) = raw(&url, "POST", &[JSON, ACCEPT], &init.to_string());
    assert_eq!(status, 200);
    let sid = sid.expect("a session id");
    let (status, _, _) = raw(&url, "DELETE", &[("Mcp-Session-Id", sid.as_str())], "");
    assert_eq!(status, 200);
    let (status, _, body) = raw(
        &url,
        "POST",
        &[JSON, ACCEPT, ("Mcp-Session-Id", sid.as_str())],
        ping,
    );
    assert_eq!(status, 404);
    error_code(&body);

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
