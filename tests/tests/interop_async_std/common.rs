//! What the async-std client tests share

use std::future::Future;
use std::time::Duration;

use async_process::Command;
use futures_lite::FutureExt;
use mcp_interop::TEST_DEADLINE;
use mcp_sansio::schema::CallToolResult;
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, RequestOptions,
};
use mcp_sansio_async_std::{Client, ClientError};
use serde_json::{Map, Value};

/// Runs a test body on smol, failing the test when it takes longer than [`TEST_DEADLINE`];
/// the body's clients (and so their child processes) are dropped, and killed, either way
pub(crate) fn within_deadline<F: Future<Output = ()>>(body: F) {
    let finished = smol::block_on(
        async {
            body.await;
            true
        }
        .or(async {
            async_io::Timer::after(TEST_DEADLINE).await;
            false
        }),
    );
    assert!(finished, "the test did not end within {TEST_DEADLINE:?}");
}

/// A client configuration in `era`
pub(crate) fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("mcp-interop-async-std", "0.1.0"));
    config.era = era;
    // A silent peer fails its request with a clear error well before the test's deadline.
    config.timeouts.request = Some(Duration::from_secs(20));
    // A child server's start-up counts against the `server/discover` probe: the Python SDK
    // can take more than the default 3 s to start on a loaded machine, and a probe answered
    // after the fallback to `initialize` makes that server refuse the handshake (-32022).
    config.discover_timeout = Duration::from_secs(15);
    config
}

/// The legacy era at the newest handshake version
pub(crate) const LEGACY: EraMode = EraMode::Legacy(ProtocolVersion::V2025_11_25);

/// Starts `command` as a child process and connects to it
pub(crate) async fn connect(command: Command, era: EraMode) -> Client {
    let what = format!("{command:?}");
    Client::spawn(command, config(era))
        .await
        .unwrap_or_else(|e| panic!("connecting to {what} failed: {e}"))
}

/// Connects to a Streamable HTTP endpoint
pub(crate) async fn connect_http(url: &str, era: EraMode) -> Client {
    Client::connect_http(url, config(era), Default::default())
        .await
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"))
}

/// A JSON object from a `json!` literal
pub(crate) fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// The text blocks of a result
pub(crate) fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(|b| b.as_text()).collect()
}

/// Calls a tool asking for progress; returns the result and every progress report, in order
pub(crate) async fn call_with_progress(
    client: &Client,
    name: &str,
    arguments: Value,
) -> (CallToolResult, Vec<Progress>) {
    let (tx, rx) = async_channel::unbounded();
    let result = client
        .call_tool_with(
            name,
            args(arguments),
            RequestOptions::default().timeout(Duration::from_secs(30)),
            tx,
        )
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} with progress failed: {e}"));
    // Progress notifications precede the response on the wire, so all have been forwarded.
    let mut seen = Vec::new();
    while let Ok(p) = rx.try_recv() {
        seen.push(p);
    }
    (result, seen)
}

/// Asserts that progress values are `expected` (so strictly increasing) with total `total`
pub(crate) fn assert_progress(seen: &[Progress], expected: &[f64], total: f64) {
    let values: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(values, expected, "progress values: {seen:?}");
    assert!(
        seen.iter().all(|p| p.total == Some(total)),
        "every report has total {total}: {seen:?}"
    );
}

/// Asserts that calling an unknown tool fails: a JSON-RPC error (-32602 per the spec) or a
/// result with `isError: true`
pub(crate) async fn assert_unknown_tool_fails(client: &Client) {
    match client.call_tool("no-such-tool", Map::new()).await {
        Err(ClientError::Call(CallError::Remote(e))) => {
            assert_eq!(e.code, -32602, "unknown tool: {e:?}");
        }
        Ok(result) => assert_eq!(
            result.is_error,
            Some(true),
            "an unknown tool must fail, got {result:?}"
        ),
        Err(e) => panic!("an unknown tool must fail with an error or isError, got {e}"),
    }
}
