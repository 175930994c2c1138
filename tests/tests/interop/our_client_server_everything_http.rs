//! Our client (mcp-sansio-tokio) → `@modelcontextprotocol/server-everything streamableHttp`

use std::time::Duration;

use mcp_interop::{ServerProcess, free_port, server_everything};
use mcp_sansio::EraMode;
use mcp_sansio::ProtocolVersion;
use mcp_sansio_tokio::{Client, ClientOptions};
use serde_json::json;

use crate::common::{
    LEGACY, args, assert_progress, assert_unknown_tool_fails, call_with_progress, config, texts,
    within_deadline,
};

async fn scenario(era: EraMode) {
    let port = free_port();
    let mut command = std::process::Command::new(server_everything());
    command.arg("streamableHttp").env("PORT", port.to_string());
    let server = ServerProcess::start(command);
    server.wait_for_line("listening on port", Duration::from_secs(30));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = Client::connect_http(&url, config(era), ClientOptions::default())
        .await
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    // Built on the TypeScript SDK 1.x: handshake era only (Auto falls back).
    assert_eq!(client.peer().version, ProtocolVersion::V2025_11_25);

    let tools = client.list_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "echo"), "tools/list: echo");
    let echo = client
        .call_tool("echo", args(json!({"message": "hi over http"})))
        .await
        .expect("tools/call echo");
    assert!(
        texts(&echo).iter().any(|t| t.contains("hi over http")),
        "echo: {echo:?}"
    );
    let (long, progress) = call_with_progress(
        &client,
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
    )
    .await;
    assert_ne!(long.is_error, Some(true), "long-running: {long:?}");
    assert_progress(&progress, &[1.0, 2.0, 3.0], 3.0);
    let resources = client.list_resources().await.expect("resources/list");
    let first = resources.first().expect("resources");
    let read = client
        .read_resource(&first.uri)
        .await
        .expect("resources/read");
    assert!(!read.contents.is_empty());
    assert_unknown_tool_fails(&client).await;
    client.close().await;
    drop(server);
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_auto_to_server_everything_http() {
    within_deadline(scenario(EraMode::Auto)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_legacy_to_server_everything_http() {
    within_deadline(scenario(LEGACY)).await;
}
