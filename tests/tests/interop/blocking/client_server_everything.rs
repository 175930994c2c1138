//! Our blocking client (mcp-sansio-blocking) → `@modelcontextprotocol/server-everything`, over
//! stdio and Streamable HTTP

use std::process::Command;
use std::time::Duration;

use mcp_interop::{ServerProcess, free_port, server_everything};
use mcp_sansio::schema::ResourceContents;
use mcp_sansio::{EraMode, ProtocolVersion};
use mcp_sansio_blocking::Client;
use serde_json::json;

use super::{
    assert_unknown_tool_fails, call_with_progress, connect, connect_http, within_deadline,
};
use crate::common::{LEGACY, args, assert_progress, texts};

fn checks(client: &Client) {
    // server-everything is built on the TypeScript SDK 1.x: handshake era only, so Auto falls
    // back from server/discover to initialize.
    assert_eq!(client.peer().version, ProtocolVersion::V2025_11_25);
    let tools = client.list_tools().expect("tools/list");
    for name in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "tools/list lacks {name}"
        );
    }
    let echo = client
        .call_tool("echo", args(json!({"message": "hi"})))
        .expect("tools/call echo");
    assert!(
        texts(&echo).iter().any(|t| t.contains("hi")),
        "echo: {echo:?}"
    );
    let sum = client
        .call_tool("get-sum", args(json!({"a": 2, "b": 3})))
        .expect("tools/call get-sum");
    assert!(
        texts(&sum).iter().any(|t| t.contains("is 5")),
        "get-sum: {sum:?}"
    );
    let (long, progress) = call_with_progress(
        client,
        "trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
    );
    assert_ne!(long.is_error, Some(true), "long-running: {long:?}");
    assert_progress(&progress, &[1.0, 2.0, 3.0], 3.0);
    let resources = client.list_resources().expect("resources/list");
    let first = resources
        .first()
        .expect("server-everything lists resources");
    let read = client.read_resource(&first.uri).expect("resources/read");
    let uri = match &read.contents[0] {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
        other => panic!("resources/read: unexpected contents {other:?}"),
    };
    assert_eq!(uri, &first.uri, "resources/read answers for the URI asked");
    assert_unknown_tool_fails(client);
}

fn scenario(era: EraMode) {
    let mut command = Command::new(server_everything());
    command.arg("stdio");
    checks(&connect(command, era));
}

fn http_scenario(era: EraMode) {
    let port = free_port();
    let mut command = Command::new(server_everything());
    command.arg("streamableHttp").env("PORT", port.to_string());
    let server = ServerProcess::start(command);
    server.wait_for_line("listening on port", Duration::from_secs(30));
    checks(&connect_http(&format!("http://127.0.0.1:{port}/mcp"), era));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_auto_to_server_everything() {
    within_deadline(|| scenario(EraMode::Auto));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_legacy_to_server_everything() {
    within_deadline(|| scenario(LEGACY));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_auto_to_server_everything_http() {
    within_deadline(|| http_scenario(EraMode::Auto));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_legacy_to_server_everything_http() {
    within_deadline(|| http_scenario(LEGACY));
}
