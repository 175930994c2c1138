//! The official Python and TypeScript SDK clients → our everything-server-blocking
//! (mcp-sansio-blocking example), over stdio and Streamable HTTP

use std::process::Command;

use mcp_interop::{
    PeerOutput, TEST_DEADLINE, everything_server_blocking, node_modules, peer_script, python,
    run_peer,
};

use crate::python_client::assert_scenario_of;
use crate::python_client_http::http_server_of;

const NAME: &str = "mcp-blocking-everything";

/// Runs a peer client script against `target` (our server's binary, or its URL)
fn run(mut command: Command, what: &str) -> (serde_json::Value, PeerOutput) {
    let output = run_peer(
        {
            command.env("MCP_INTEROP_NODE_MODULES", node_modules());
            command
        },
        TEST_DEADLINE,
    );
    let summary = output.summary();
    assert!(
        output.status.success() && summary.get("fatal").is_none(),
        "the {what} client failed: {}\n{output}",
        summary["fatal"]
    );
    (summary, output)
}

fn python_client(mode: &str, target: &str, version: &str) {
    let mut command = Command::new(python());
    command
        .arg(peer_script("py_client.py"))
        .arg(mode)
        .arg(target);
    let (summary, output) = run(command, "Python");
    assert_scenario_of(&summary, NAME, version, &output);
}

fn ts_client(target: &str) {
    let mut command = Command::new("node");
    command.arg(peer_script("ts_client.mjs")).arg(target);
    let (summary, output) = run(command, "TypeScript");
    // The TypeScript SDK (1.x) speaks only the handshake era.
    assert_eq!(
        summary["instructions"],
        "A demonstration server: echo, add, slow (with progress)."
    );
    assert_scenario_of(&summary, NAME, "2025-11-25", &output);
}

fn binary() -> String {
    everything_server_blocking().display().to_string()
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_to_blocking_server_in_every_mode() {
    for (mode, version) in [
        ("legacy", "2025-11-25"),
        ("modern", "2026-07-28"),
        ("auto", "2026-07-28"),
    ] {
        python_client(mode, &binary(), version);
    }
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_to_blocking_http_server_in_every_mode() {
    let (_server, url) = http_server_of(everything_server_blocking());
    for (mode, version) in [
        ("legacy", "2025-11-25"),
        ("modern", "2026-07-28"),
        ("auto", "2026-07-28"),
    ] {
        python_client(mode, &url, version);
    }
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn ts_client_to_blocking_server() {
    ts_client(&binary());
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn ts_client_to_blocking_http_server() {
    let (_server, url) = http_server_of(everything_server_blocking());
    ts_client(&url);
}
