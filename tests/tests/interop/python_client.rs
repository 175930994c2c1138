//! The official Python SDK's client → our everything-server (mcp-sansio-tokio example)

use std::process::Command;

use mcp_interop::{PeerOutput, TEST_DEADLINE, everything_server, peer_script, python, run_peer};
use serde_json::Value;

/// Runs `py_client.py MODE <our server>`; returns the summary and the whole output
fn python_client(mode: &str) -> (Value, PeerOutput) {
    let mut command = Command::new(python());
    command
        .arg(peer_script("py_client.py"))
        .arg(mode)
        .arg(everything_server());
    let output = run_peer(command, TEST_DEADLINE);
    let summary = output.summary();
    assert!(
        output.status.success() && summary.get("fatal").is_none(),
        "the Python client failed: {}\n{output}",
        summary["fatal"]
    );
    (summary, output)
}

/// Asserts the scenario against the tokio everything-server
pub(crate) fn assert_everything_scenario(s: &Value, version: &str, output: &PeerOutput) {
    mcp_interop::assert_everything_scenario(s, "mcp-tokio-everything", version, output);
}

/// Asserts the scenario against the everything-server named `server_name` (each binding
/// has one, with the same catalog)
pub(crate) fn assert_scenario_of(s: &Value, server_name: &str, version: &str, output: &PeerOutput) {
    mcp_interop::assert_everything_scenario(s, server_name, version, output);
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_server() {
    let (summary, output) = python_client("legacy");
    assert_everything_scenario(&summary, "2025-11-25", &output);
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_server() {
    let (summary, output) = python_client("modern");
    assert_everything_scenario(&summary, "2026-07-28", &output);
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_auto_to_our_server() {
    let (summary, output) = python_client("auto");
    assert_everything_scenario(&summary, "2026-07-28", &output);
}
