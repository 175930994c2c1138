//! The official SDKs' clients (Python, TypeScript) → our everything-server-async-std, over
//! stdio and Streamable HTTP

use std::process::Command;

use mcp_interop::{
    PeerOutput, TEST_DEADLINE, assert_everything_scenario, everything_http_server,
    everything_server_async_std, node_modules, peer_script, python, run_peer,
};
use serde_json::Value;

const SERVER_NAME: &str = "mcp-async-std-everything";

/// Runs a peer client to its end and returns its summary, failing on a fatal error
fn run_client(command: Command, what: &str) -> (Value, PeerOutput) {
    let output = run_peer(command, TEST_DEADLINE);
    let summary = output.summary();
    assert!(
        output.status.success() && summary.get("fatal").is_none(),
        "the {what} client failed: {}\n{output}",
        summary["fatal"]
    );
    (summary, output)
}

/// `py_client.py MODE TARGET` (a server binary to start, or a URL)
fn python_client(mode: &str, target: &str, version: &str) {
    let mut command = Command::new(python());
    command
        .arg(peer_script("py_client.py"))
        .arg(mode)
        .arg(target);
    let (summary, output) = run_client(command, "Python");
    assert_everything_scenario(&summary, SERVER_NAME, version, &output);
}

/// `ts_client.mjs TARGET`; the TypeScript SDK (1.x) speaks only the handshake era
fn ts_client(target: &str) {
    let mut command = Command::new("node");
    command
        .arg(peer_script("ts_client.mjs"))
        .arg(target)
        .env("MCP_INTEROP_NODE_MODULES", node_modules());
    let (summary, output) = run_client(command, "TypeScript");
    assert_eq!(
        summary["instructions"],
        "A demonstration server: echo, add, slow (with progress)."
    );
    assert_everything_scenario(&summary, SERVER_NAME, "2025-11-25", &output);
}

fn server() -> String {
    everything_server_async_std().display().to_string()
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_server() {
    python_client("legacy", &server(), "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_server() {
    python_client("modern", &server(), "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_auto_to_our_server() {
    python_client("auto", &server(), "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_http_server() {
    let (_server, url) = everything_http_server(&everything_server_async_std());
    python_client("legacy", &url, "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_http_server() {
    let (_server, url) = everything_http_server(&everything_server_async_std());
    python_client("modern", &url, "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_auto_to_our_http_server() {
    let (_server, url) = everything_http_server(&everything_server_async_std());
    python_client("auto", &url, "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn ts_client_to_our_server() {
    ts_client(&server());
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn ts_client_to_our_http_server() {
    let (_server, url) = everything_http_server(&everything_server_async_std());
    ts_client(&url);
}
