//! Our client (mcp-sansio-tokio) → a Python `MCPServer` (tests/peers/py_server.py)

use mcp_interop::{peer_script, python};
use mcp_sansio::schema::GetPromptParams;
use mcp_sansio::schema::ResourceContents;
use mcp_sansio::{EraMode, ProtocolVersion};
use serde_json::json;
use tokio::process::Command;

use crate::common::{
    LEGACY, args, assert_progress, assert_unknown_tool_fails, call_with_progress, connect, texts,
    within_deadline,
};

async fn scenario(era: EraMode, version: ProtocolVersion) {
    let mut command = Command::new(python());
    command.arg(peer_script("py_server.py"));
    let client = connect(command, era).await;
    checks(client, version).await;
}

/// The same scenario over Streamable HTTP (`tls`: HTTPS, under uvicorn with TLS, trusting the
/// test CA through `HttpOptions::root_certificates`)
async fn http_scenario(era: EraMode, version: ProtocolVersion, tls: bool) {
    let pki = tls.then(mcp_interop::Pki::new);
    let (_server, url) = mcp_interop::python_http_server(pki.as_ref());
    let mut options = mcp_sansio_tokio::ClientOptions::default();
    if let Some(pki) = &pki {
        options = options
            .http(mcp_sansio_tokio::HttpOptions::default().root_certificates_pem(pki.ca.clone()));
    }
    let client = mcp_sansio_tokio::Client::connect_http(&url, crate::common::config(era), options)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    checks(client, version).await;
}

async fn checks(client: mcp_sansio_tokio::Client, version: ProtocolVersion) {
    let peer = client.peer();
    assert_eq!(peer.version, version, "negotiated version");
    assert_eq!(
        peer.info.as_ref().map(|i| i.name.as_str()),
        Some("py-interop-server"),
        "server info"
    );

    let tools = client.list_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["echo", "slow"], "tools/list");

    let echo = client
        .call_tool("echo", args(json!({"text": "hello from rust"})))
        .await
        .expect("tools/call echo");
    assert_ne!(echo.is_error, Some(true), "echo: {echo:?}");
    assert_eq!(texts(&echo), ["hello from rust"], "echo: {echo:?}");

    let (slow, progress) = call_with_progress(&client, "slow", json!({"steps": 3})).await;
    assert_eq!(texts(&slow), ["done after 3 steps"], "slow: {slow:?}");
    assert_progress(&progress, &[1.0, 2.0, 3.0], 3.0);
    assert_eq!(progress[0].message.as_deref(), Some("step 1 of 3"));

    let resources = client.list_resources().await.expect("resources/list");
    assert!(
        resources.iter().any(|r| r.uri == "test://py/static"),
        "resources/list: {resources:?}"
    );
    for (uri, expected) in [
        ("test://py/static", "Hello from the Python server"),
        ("test://py/items/7", "Item 7"),
    ] {
        let read = client
            .read_resource(uri)
            .await
            .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
        match read.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.uri, uri);
                assert_eq!(t.text, expected);
            }
            other => panic!("resources/read {uri}: {other:?}"),
        }
    }

    let prompts = client.list_prompts().await.expect("prompts/list");
    assert!(
        prompts.iter().any(|p| p.name == "greeting"),
        "prompts/list: {prompts:?}"
    );
    let mut params = GetPromptParams::new("greeting");
    params.arguments = Some([("name".to_owned(), "Ada".to_owned())].into());
    let prompt = client.get_prompt(params).await.expect("prompts/get");
    assert_eq!(prompt.messages.len(), 1, "prompts/get: {prompt:?}");
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Say hello to Ada."),
        "prompts/get: {prompt:?}"
    );

    assert_unknown_tool_fails(&client).await;
    client.close().await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_auto_to_python_server() {
    within_deadline(scenario(EraMode::Auto, ProtocolVersion::V2026_07_28)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_legacy_to_python_server() {
    within_deadline(scenario(LEGACY, ProtocolVersion::V2025_11_25)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_http_client_auto_to_python_server() {
    within_deadline(http_scenario(
        EraMode::Auto,
        ProtocolVersion::V2026_07_28,
        false,
    ))
    .await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_http_client_legacy_to_python_server() {
    within_deadline(http_scenario(LEGACY, ProtocolVersion::V2025_11_25, false)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_https_client_auto_to_python_server_under_uvicorn_tls() {
    within_deadline(http_scenario(
        EraMode::Auto,
        ProtocolVersion::V2026_07_28,
        true,
    ))
    .await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_https_client_legacy_to_python_server_under_uvicorn_tls() {
    within_deadline(http_scenario(LEGACY, ProtocolVersion::V2025_11_25, true)).await;
}
