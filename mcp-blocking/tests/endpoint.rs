//! The endpoint served by another HTTP stack (the `endpoint-tiny-http` example: tiny_http
//! and a handler written against the endpoint's entry point): both eras, progress streamed
//! as SSE, the app's own route beside it

#[path = "../examples/endpoint-tiny-http.rs"]
#[allow(dead_code)]
mod example;

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions};
use mcp_sansio_blocking::{Client, ClientOptions};
use serde_json::{Map, Value, json};

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[test]
fn tiny_http_serves_the_endpoint_in_both_eras_with_progress() {
    let http = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let addr = http.server_addr().to_ip().unwrap();
    let endpoint = example::server()
        .http_endpoint(HttpConfig::default())
        .unwrap();
    let serving = {
        let (http, endpoint) = (Arc::clone(&http), endpoint.clone());
        std::thread::spawn(move || example::serve(&http, &endpoint))
    };
    let url = format!("http://{addr}/mcp");
    for (era, version) in [
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
        (EraMode::Modern, ProtocolVersion::V2026_07_28),
    ] {
        let mut config = ClientConfig::new(Implementation::new("tiny-http-test", "1.0"));
        config.era = era;
        let client = Client::connect_http(&url, config, ClientOptions::default()).unwrap();
        assert_eq!(client.peer().version, version);
        let echoed = client
            .call_tool("echo", args(json!({"text": "tiny"})))
            .unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("tiny"), "{era:?}");
        let (tx, rx) = std::sync::mpsc::channel();
        let done = client
            .call_tool_with(
                "slow",
                args(json!({"steps": 3})),
                RequestOptions::default(),
                tx,
            )
            .unwrap();
        assert_eq!(done.content[0].as_text(), Some("done after 3 steps"));
        let seen: Vec<f64> = rx.try_iter().map(|p| p.progress).collect();
        assert_eq!(
            seen,
            [1.0, 2.0, 3.0],
            "{era:?}: progress through the stream"
        );
        client.close();
    }
    // The app's own route
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("ok"), "{response}");
    endpoint.shutdown();
    http.unblock();
    serving.join().unwrap();
}

/// A 2026 call through [`HttpEndpoint::handle`] (served on the calling thread by the fast
/// path): its header fields and body
fn modern_call(id: u64, tool: &str, progress: bool) -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if progress {
        meta["progressToken"] = json!(format!("p{id}"));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"text": "hi", "steps": 3}, "_meta": meta}});
    let fields = [
        ("Host", "127.0.0.1"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let fields = fields
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.as_bytes().to_vec()))
        .collect();
    (fields, body.to_string().into_bytes())
}

/// The endpoint's 2026 requests: whole, as an event stream read to its end, and refused
/// with 503 once the endpoint shut down (on both wires)
#[test]
fn a_2026_request_is_answered_whole_or_streamed_and_refused_after_shutdown() {
    use mcp_sansio::http::Source;
    use mcp_sansio_blocking::endpoint::Body;
    let endpoint = example::server()
        .http_endpoint(HttpConfig::default())
        .unwrap();
    let (fields, body) = modern_call(1, "echo", false);
    let response = endpoint.handle(Source::unknown(), "POST".into(), fields, body);
    assert_eq!(response.status, 200);
    let Body::Whole(bytes) = response.body else {
        panic!("a quick answer is whole JSON");
    };
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");

    let (fields, body) = modern_call(2, "slow", true);
    let response = endpoint.handle(Source::unknown(), "POST".into(), fields, body);
    assert_eq!(response.status, 200);
    let Body::Stream(pieces) = response.body else {
        panic!("progress before the answer opens an event stream");
    };
    let text: String = pieces
        .map(|piece| String::from_utf8(piece.expect("not dropped")).unwrap())
        .collect();
    assert_eq!(text.matches("notifications/progress").count(), 3, "{text}");
    assert!(text.contains("done after 3 steps"), "{text}");

    endpoint.shutdown();
    let (fields, body) = modern_call(3, "echo", false);
    let response = endpoint.handle(Source::unknown(), "POST".into(), fields, body);
    assert_eq!(
        response.status, 503,
        "a stopped endpoint serves no 2026 request"
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let fields = vec![
        ("Host".to_owned(), b"127.0.0.1".to_vec()),
        ("Content-Type".to_owned(), b"application/json".to_vec()),
        (
            "Accept".to_owned(),
            b"application/json, text/event-stream".to_vec(),
        ),
    ];
    let response = endpoint.handle(
        Source::unknown(),
        "POST".into(),
        fields,
        initialize.to_string().into_bytes(),
    );
    assert_eq!(response.status, 503, "nor a 2025 one");
}
