//! Our client and our server over real Streamable HTTP on 127.0.0.1, in the legacy
//! (2025-11-25) and modern (2026-07-28) eras; malformed requests get the spec's status and a
//! JSON-RPC error body, and the server keeps serving; closing, shutting down and timeouts

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::InputRequests;
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
};
use serde_json::value::RawValue;
use serde_json::{Map, json};

use super::support::raw_http::malformed_requests_get_the_spec_status;
use super::support::{LEGACY, answer_ada, text};
use super::{echo_tool, greet_tool, slow_tool, wait_for};
use crate::binding::{Client, ClientError, ClientOptions, HttpServerHandle, InputHandler, Server};
use crate::rt;

/// `echo`, `slow` (which sets `aborted` when it is dropped) and `greet` (which counts its
/// runs in `runs`)
fn server(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("http-test-server", "1.0"));
    config.state_key = Some([7; 32]);
    let builder = slow_tool(echo_tool(Server::builder(config)), aborted);
    greet_tool(builder, runs).build()
}

async fn start(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> HttpServerHandle {
    let mut config = HttpConfig::default();
    config.max_body_size = 64 * 1024;
    let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
    server(aborted, runs)
        .serve_http_with(localhost, config)
        .await
        .unwrap()
}

fn url(handle: &HttpServerHandle) -> String {
    format!("http://{}/mcp", handle.local_addr())
}

fn answering() -> InputHandler {
    Arc::new(|requests: InputRequests| Box::pin(async move { Ok(answer_ada(&requests)) }))
}

async fn connect(url: &str, era: EraMode) -> Client {
    let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
    config.era = era;
    config.capabilities = json!({"elicitation": {}});
    let options = ClientOptions::default().input(answering());
    rt::timeout(
        Duration::from_secs(10),
        Client::connect_http(url, config, options),
    )
    .await
    .expect("connects in time")
    .unwrap()
}

fn slow() -> Box<RawValue> {
    RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap()
}

#[test]
fn list_call_progress_cancel_and_ask_in_both_eras() {
    rt::block_on(async {
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
                Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602),
                other => panic!("{era:?}: {other:?}"),
            }

            // Progress arrives on the request's stream; dropping the call aborts the handler.
            let (tx, mut rx) = rt::channel();
            let call = {
                let client = client.clone();
                rt::spawn(async move {
                    client
                        .call_tool_with("slow", Map::new(), Default::default(), tx)
                        .await
                })
            };
            for expected in 1..=3 {
                let p = rt::timeout(Duration::from_secs(5), rx.recv())
                    .await
                    .expect("progress in time")
                    .unwrap();
                assert_eq!(p.progress, f64::from(expected));
            }
            // Aborting the task drops the call's future, which cancels the request.
            call.abort().await;
            assert!(wait_for(&aborted).await, "{era:?}: the handler was aborted");

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

#[test]
fn malformed_requests_get_the_spec_status_and_the_server_keeps_serving() {
    rt::block_on(async {
        let handle = start(Arc::default(), Arc::default()).await;
        let url = url(&handle);
        let other = connect(&url, LEGACY).await;

        // The raw requests block: they go from a thread of their own.
        let raw_url = url.clone();
        rt::unblock(move || malformed_requests_get_the_spec_status(&raw_url)).await;

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
    rt::block_on(async {
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
            rt::spawn(async move { client.call_tool("slow", Map::new()).await })
        };
        rt::sleep(Duration::from_millis(100)).await;
        rt::timeout(Duration::from_secs(10), handle.shutdown())
            .await
            .expect("shutdown in time");
        let outcome = rt::timeout(Duration::from_secs(10), call.join())
            .await
            .expect("the call ends");
        assert!(outcome.is_err(), "{outcome:?}");
    });
}

/// The HTTP client's one timer (armed lazily, for the earliest deadline): a call times out
/// over HTTP, its handler on the server is cancelled, and the session goes on
#[test]
fn a_call_times_out_over_http_and_the_session_goes_on() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let handle = start(Arc::clone(&aborted), Arc::default()).await;
        for era in [LEGACY, EraMode::Modern] {
            aborted.store(false, Ordering::SeqCst);
            let client = connect(&url(&handle), era).await;
            // A long deadline first, so the timer is armed later than the short one below.
            let long = {
                let client = client.clone();
                rt::spawn(async move {
                    let options = RequestOptions::default().timeout(Duration::from_secs(600));
                    client
                        .request_raw("tools/call", Some(slow()), options, None)
                        .await
                })
            };
            let options = RequestOptions::default().timeout(Duration::from_millis(300));
            let outcome = rt::timeout(
                Duration::from_secs(30),
                client.request_raw("tools/call", Some(slow()), options, None),
            )
            .await
            .expect("the timeout fires");
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
                "{outcome:?}"
            );
            assert!(
                wait_for(&aborted).await,
                "the timed-out handler is cancelled"
            );
            let echoed = client.call_tool("echo", text("still here")).await.unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("still here"));
            long.abort().await;
            client.close().await;
        }
        handle.shutdown().await;
    });
}
