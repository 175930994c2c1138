//! The official TypeScript SDK's client → our everything-server (mcp-sansio-tokio example)

use std::process::Command;

use mcp_interop::{TEST_DEADLINE, everything_server, node_modules, peer_script, run_peer};

use crate::python_client::assert_everything_scenario;

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn ts_client_to_our_server() {
    let mut command = Command::new("node");
    command
        .arg(peer_script("ts_client.mjs"))
        .arg(everything_server())
        .env("MCP_INTEROP_NODE_MODULES", node_modules());
    let output = run_peer(command, TEST_DEADLINE);
    let summary = output.summary();
    assert!(
        output.status.success() && summary.get("fatal").is_none(),
        "the TypeScript client failed: {}\n{output}",
        summary["fatal"]
    );
    // The TypeScript SDK (1.x) speaks only the handshake era.
    assert_eq!(
        summary["instructions"],
        "A demonstration server: echo, add, slow (with progress)."
    );
    assert_everything_scenario(&summary, "2025-11-25", &output);
}
