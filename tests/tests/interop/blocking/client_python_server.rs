//! Our blocking client (mcp-sansio-blocking) → a Python `MCPServer` (tests/peers/py_server.py), over
//! stdio and Streamable HTTP

use std::process::Command;

use mcp_interop::{peer_script, python};
use mcp_sansio::schema::{GetPromptParams, ResourceContents};
use mcp_sansio::{EraMode, ProtocolVersion};
use mcp_sansio_blocking::Client;
use serde_json::json;

use super::{assert_unknown_tool_fails, call_with_progress, connect, within_deadline};
use crate::common::{LEGACY, args, assert_progress, texts};

fn scenario(era: EraMode, version: ProtocolVersion) {
    let mut command = Command::new(python());
    command.arg(peer_script("py_server.py"));
    checks(&connect(command, era), version);
}

fn http_scenario(era: EraMode, version: ProtocolVersion, tls: bool) {
    let pki = tls.then(mcp_interop::Pki::new);
    let (_server, url) = mcp_interop::python_http_server(pki.as_ref());
    let mut options = mcp_sansio_blocking::ClientOptions::default();
    if let Some(pki) = &pki {
        options = options.http(
            mcp_sansio_blocking::HttpOptions::default().root_certificates_pem(pki.ca.clone()),
        );
    }
    let client = Client::connect_http(&url, crate::common::config(era), options)
        .unwrap_or_else(|e| panic!("connecting to {url} failed: {e}"));
    checks(&client, version);
}

fn checks(client: &Client, version: ProtocolVersion) {
    let peer = client.peer();
    assert_eq!(peer.version, version, "negotiated version");
    assert_eq!(
        peer.info.as_ref().map(|i| i.name.as_str()),
        Some("py-interop-server"),
        "server info"
    );
    let tools = client.list_tools().expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["echo", "slow"], "tools/list");

    let echo = client
        .call_tool("echo", args(json!({"text": "hello from rust"})))
        .expect("tools/call echo");
    assert_eq!(texts(&echo), ["hello from rust"], "echo: {echo:?}");

    let (slow, progress) = call_with_progress(client, "slow", json!({"steps": 3}));
    assert_eq!(texts(&slow), ["done after 3 steps"], "slow: {slow:?}");
    assert_progress(&progress, &[1.0, 2.0, 3.0], 3.0);
    assert_eq!(progress[0].message.as_deref(), Some("step 1 of 3"));

    let resources = client.list_resources().expect("resources/list");
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
            .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
        match read.contents.as_slice() {
            [ResourceContents::Text(t)] => {
                assert_eq!(t.uri, uri);
                assert_eq!(t.text, expected);
            }
            other => panic!("resources/read {uri}: {other:?}"),
        }
    }

    let prompts = client.list_prompts().expect("prompts/list");
    assert!(
        prompts.iter().any(|p| p.name == "greeting"),
        "prompts/list: {prompts:?}"
    );
    let mut params = GetPromptParams::new("greeting");
    params.arguments = Some([("name".to_owned(), "Ada".to_owned())].into());
    let prompt = client.get_prompt(params).expect("prompts/get");
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Say hello to Ada.")
    );

    assert_unknown_tool_fails(client);
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_auto_to_python_server() {
    within_deadline(|| scenario(EraMode::Auto, ProtocolVersion::V2026_07_28));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_client_legacy_to_python_server() {
    within_deadline(|| scenario(LEGACY, ProtocolVersion::V2025_11_25));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_http_client_auto_to_python_server() {
    within_deadline(|| http_scenario(EraMode::Auto, ProtocolVersion::V2026_07_28, false));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_http_client_legacy_to_python_server() {
    within_deadline(|| http_scenario(LEGACY, ProtocolVersion::V2025_11_25, false));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_https_client_auto_to_python_server_under_uvicorn_tls() {
    within_deadline(|| http_scenario(EraMode::Auto, ProtocolVersion::V2026_07_28, true));
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn blocking_https_client_legacy_to_python_server_under_uvicorn_tls() {
    within_deadline(|| http_scenario(LEGACY, ProtocolVersion::V2025_11_25, true));
}
