//! Our client (mcp-sansio-tokio) → `@modelcontextprotocol/server-everything` (`stdio`)

use mcp_interop::server_everything;
use mcp_sansio::schema::ResourceContents;
use mcp_sansio::{EraMode, ProtocolVersion};
use serde_json::json;
use tokio::process::Command;

use crate::common::{
    LEGACY, args, assert_progress, assert_unknown_tool_fails, call_with_progress, connect, texts,
    within_deadline,
};

async fn scenario(era: EraMode) {
    let mut command = Command::new(server_everything());
    command.arg("stdio");
    let client = connect(command, era).await;

    // server-everything is built on the TypeScript SDK 1.x: handshake era only, so Auto falls
    // back from server/discover to initialize.
    assert_eq!(client.peer().version, ProtocolVersion::V2025_11_25);
    assert!(client.peer().info.is_some(), "serverInfo");

    let tools = client.list_tools().await.expect("tools/list");
    for name in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "tools/list lacks {name}: {:?}",
            tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
    }

    let echo = client
        .call_tool("echo", args(json!({"message": "hi"})))
        .await
        .expect("tools/call echo");
    assert_ne!(echo.is_error, Some(true), "echo: {echo:?}");
    assert!(
        texts(&echo).iter().any(|t| t.contains("hi")),
        "echo: {echo:?}"
    );

    let sum = client
        .call_tool("get-sum", args(json!({"a": 2, "b": 3})))
        .await
        .expect("tools/call get-sum");
    assert_ne!(sum.is_error, Some(true), "get-sum: {sum:?}");
    assert!(
        texts(&sum).iter().any(|t| t.contains("is 5")),
        "get-sum: {sum:?}"
    );

    let (long, progress) = call_with_progress(
        &client,
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
    )
    .await;
    assert_ne!(long.is_error, Some(true), "long-running: {long:?}");
    assert!(
        texts(&long).iter().any(|t| t.contains("completed")),
        "long-running: {long:?}"
    );
    assert_progress(&progress, &[1.0, 2.0, 3.0], 3.0);

    let resources = client.list_resources().await.expect("resources/list");
    let first = resources
        .first()
        .expect("server-everything lists resources");
    let read = client
        .read_resource(&first.uri)
        .await
        .unwrap_or_else(|e| panic!("resources/read {}: {e}", first.uri));
    assert!(!read.contents.is_empty(), "resources/read: {read:?}");
    let uri = match &read.contents[0] {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
        other => panic!("resources/read: unexpected contents {other:?}"),
    };
    assert_eq!(uri, &first.uri, "resources/read answers for the URI asked");

    assert_unknown_tool_fails(&client).await;
    client.close().await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_auto_to_server_everything() {
    within_deadline(scenario(EraMode::Auto)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_legacy_to_server_everything() {
    within_deadline(scenario(LEGACY)).await;
}
