//! The blocking binding (mcp-sansio-blocking) against the official SDKs: the same scenarios as the
//! tokio modules, on plain threads

mod client_python_server;
mod client_server_everything;
mod sdk_clients;

use std::sync::mpsc;
use std::time::Duration;

use mcp_interop::TEST_DEADLINE;
use mcp_sansio::schema::CallToolResult;
use mcp_sansio::{CallError, EraMode, Progress, RequestOptions};
use mcp_sansio_blocking::{Client, ClientError};
use serde_json::{Map, Value};

use crate::common::{args, config};

/// Runs a test body on a thread, failing the test when it takes longer than
/// [`TEST_DEADLINE`]; the body's clients (and so their child processes) are dropped, and
/// killed, when it ends
pub(crate) fn within_deadline(body: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(TEST_DEADLINE) {
        Ok(()) => runner.join().expect("the test body"),
        // The body panicked: show its panic
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = runner.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the test did not end within {TEST_DEADLINE:?}")
        }
    }
}

/// Starts `command` as a child process and connects to it
pub(crate) fn connect(command: std::process::Command, era: EraMode) -> Client {
    let what = format!("{command:?}");
    Client::spawn(command, config(era))
        .unwrap_or_else(|e| panic!("connecting to {what} failed: {e}"))
}

/// Connects to a Streamable HTTP endpoint
pub(crate) fn connect_http(url: &str, era: EraMode) -> Client {
    Client::connect_http(url, config(era), Default::default())
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"))
}

/// Calls a tool asking for progress; returns the result and every progress report, in order
pub(crate) fn call_with_progress(
    client: &Client,
    name: &str,
    arguments: Value,
) -> (CallToolResult, Vec<Progress>) {
    let (tx, rx) = mpsc::channel();
    let result = client
        .call_tool_with(
            name,
            args(arguments),
            RequestOptions::default().timeout(Duration::from_secs(30)),
            tx,
        )
        .unwrap_or_else(|e| panic!("tools/call {name} with progress failed: {e}"));
    // Progress notifications precede the response on the wire, so all have been forwarded.
    (result, rx.try_iter().collect())
}

/// Asserts that calling an unknown tool fails: a JSON-RPC error (-32602 per the spec) or a
/// result with `isError: true`
pub(crate) fn assert_unknown_tool_fails(client: &Client) {
    match client.call_tool("no-such-tool", Map::new()) {
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
