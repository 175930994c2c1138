//! The official Python SDK's client → our everything-server (mcp-tokio example)

use std::process::Command;

use mcp_interop::{PeerOutput, TEST_DEADLINE, everything_server, peer_script, python, run_peer};
use serde_json::{Value, json};

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

/// Asserts the scenario of `py_client.py` and `ts_client.mjs` against mcp-tokio's
/// everything-server
pub(crate) fn assert_everything_scenario(s: &Value, version: &str, output: &PeerOutput) {
    assert_scenario_of(s, "mcp-tokio-everything", version, output);
}

/// Asserts the scenario against the everything-server named `server_name` (each binding
/// has one, with the same catalog)
pub(crate) fn assert_scenario_of(s: &Value, server_name: &str, version: &str, output: &PeerOutput) {
    let ctx = format!("\nsummary: {s:#}\n{output}");
    assert_eq!(s["protocol_version"], version, "negotiated version{ctx}");
    assert_eq!(s["server_name"], server_name, "server name{ctx}");
    assert_eq!(
        s["tools"],
        json!(["add", "ask_name", "echo", "long_job", "slow"]),
        "tools/list{ctx}"
    );

    let echo = &s["echo"];
    assert_eq!(echo["is_error"], false, "echo{ctx}");
    let echoed = echo["texts"][0].as_str().unwrap_or_default();
    assert!(echoed.starts_with("hello from "), "echo text{ctx}");

    assert_eq!(
        s["add"],
        json!({"texts": ["5.5"], "is_error": false}),
        "add{ctx}"
    );

    let slow = &s["slow"];
    assert_eq!(slow["texts"], json!(["done after 3 steps"]), "slow{ctx}");
    let progress = slow["progress"].as_array().expect("progress list");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert_eq!(
        values,
        [1.0, 2.0, 3.0],
        "every progress value, in order{ctx}"
    );
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["total"].as_f64(), Some(3.0), "progress total{ctx}");
        assert_eq!(
            p["message"],
            format!("step {} of 3", i + 1),
            "progress message{ctx}"
        );
    }

    assert_eq!(
        s["static"],
        json!([{"uri": "test://static-text", "text": "Hello from a static resource"}]),
        "resources/read static{ctx}"
    );
    assert_eq!(
        s["template"],
        json!([{"uri": "test://template/42/data", "text": "Data for 42"}]),
        "resources/read template{ctx}"
    );
    assert_eq!(
        s["prompt"],
        json!([{"role": "user", "text": "Say hello to Ada."}]),
        "prompts/get{ctx}"
    );

    let unknown = &s["unknown_tool"];
    let failed = unknown["error"]["code"] == -32602 || unknown["is_error"] == true;
    assert!(failed, "an unknown tool must fail (-32602 or isError){ctx}");
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
