//! The endpoint served by another HTTP stack (the `endpoint-async-h1` example: async-h1 and a
//! handler written against the endpoint's entry point): both eras, progress streamed as SSE,
//! the app's own route beside it

#[path = "../examples/endpoint-async-h1.rs"]
#[allow(dead_code)]
mod example;

use std::time::Duration;

use futures_lite::FutureExt;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions};
use mcp_sansio_async_std::{Client, ClientOptions};
use serde_json::{Map, Value, json};

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    future
        .or(async {
            async_io::Timer::after(Duration::from_secs(20)).await;
            panic!("{what}: not within 20 s")
        })
        .await
}

#[test]
fn async_h1_serves_the_endpoint_in_both_eras_with_progress() {
    async_std::task::block_on(async {
        let listener = async_std::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let endpoint = example::server().http_endpoint(HttpConfig::default());
        async_std::task::spawn(example::serve(listener, endpoint.clone()));
        let url = format!("http://{addr}/mcp");
        for (era, version) in [
            (
                EraMode::Legacy(ProtocolVersion::V2025_11_25),
                ProtocolVersion::V2025_11_25,
            ),
            (EraMode::Modern, ProtocolVersion::V2026_07_28),
        ] {
            let mut config = ClientConfig::new(Implementation::new("h1-test", "1.0"));
            config.era = era;
            let connect = Client::connect_http(&url, config, ClientOptions::default());
            let client = within("connect", connect).await.unwrap();
            assert_eq!(client.peer().version, version);
            let echoed = within(
                "echo",
                client.call_tool("echo", args(json!({"text": "h1"}))),
            )
            .await
            .unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("h1"), "{era:?}");
            let (tx, rx) = async_channel::unbounded();
            let call = client.call_tool_with(
                "slow",
                args(json!({"steps": 3})),
                RequestOptions::default(),
                tx,
            );
            let done = within("slow", call).await.unwrap();
            assert_eq!(done.content[0].as_text(), Some("done after 3 steps"));
            let seen: Vec<f64> = std::iter::from_fn(|| rx.try_recv().ok())
                .map(|p| p.progress)
                .collect();
            assert_eq!(
                seen,
                [1.0, 2.0, 3.0],
                "{era:?}: progress through the stream"
            );
            within("close", client.close()).await;
        }
        // The app's own route
        let mut stream = async_std::net::TcpStream::connect(addr).await.unwrap();
        use async_std::prelude::*;
        stream
            .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = String::new();
        within("health", stream.read_to_string(&mut response))
            .await
            .unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.ends_with("ok"), "{response}");
        endpoint.shutdown();
    });
}
