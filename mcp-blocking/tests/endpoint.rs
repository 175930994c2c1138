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
