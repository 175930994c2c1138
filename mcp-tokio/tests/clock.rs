//! Timeouts on tokio's paused clock (`start_paused`): time jumps, nothing sleeps, so the
//! deadlines can be exact. The binding suite (`suite.rs`) runs the same glue on the real
//! clock on every binding; only tokio's clock can be paused

use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
};
use mcp_sansio_tokio::{Client, ClientError, Server};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// `echo` answers its `text`; `slow` takes an hour
fn server() -> Server {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    else {
        unreachable!()
    };
    Server::builder(ServerConfig::new(Implementation::new("test-server", "1.0")))
        .tool(Tool::new("echo", schema), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), |_cx, _args| async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(CallToolResult::text("never"))
        })
        .unwrap()
        .build()
}

async fn connect() -> Client {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = server();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(client_io);
    let mut config = ClientConfig::new(Implementation::new("test-client", "1.0"));
    config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    Client::connect(r, w, config).await.unwrap()
}

fn slow() -> Box<RawValue> {
    RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap()
}

fn timed_out(outcome: &Result<Box<RawValue>, ClientError>) -> bool {
    matches!(outcome, Err(ClientError::Call(CallError::TimedOut)))
}

#[tokio::test(start_paused = true)]
async fn a_request_times_out_on_the_paused_clock() {
    let client = connect().await;
    let options = RequestOptions::default().timeout(Duration::from_secs(30));
    let outcome = client
        .request_raw("tools/call", Some(slow()), options, None)
        .await;
    assert!(timed_out(&outcome), "{outcome:?}");
}

/// The connection's one timer is armed lazily (moved only for a sooner deadline): a sooner
/// deadline must still fire on time, and a later one must fire after the timer went off
/// early for a deadline that went away
#[tokio::test(start_paused = true)]
async fn each_timeout_fires_at_its_own_deadline_whatever_the_timer_was_armed_for() {
    let client = connect().await;
    let timeout = |s| RequestOptions::default().timeout(Duration::from_secs(s));

    // An answered call arms the timer for 10 s; the next call's 30 s deadline comes later.
    let start = tokio::time::Instant::now();
    let echo = RawValue::from_string(r#"{"name":"echo","arguments":{"text":"hi"}}"#.into());
    client
        .request_raw("tools/call", Some(echo.unwrap()), timeout(10), None)
        .await
        .unwrap();
    let outcome = client
        .request_raw("tools/call", Some(slow()), timeout(30), None)
        .await;
    assert!(timed_out(&outcome), "{outcome:?}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );

    // A call waiting an hour arms the timer for an hour; a second call's 5 s deadline moves it.
    let long = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request_raw("tools/call", Some(slow()), timeout(3600), None)
                .await
        })
    };
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    let outcome = client
        .request_raw("tools/call", Some(slow()), timeout(5), None)
        .await;
    assert!(timed_out(&outcome), "{outcome:?}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    let outcome = long.await.unwrap();
    assert!(timed_out(&outcome), "{outcome:?}");
}
