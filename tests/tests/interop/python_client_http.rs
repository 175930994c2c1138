//! The official Python SDK's client → our everything-server over Streamable HTTP

use std::process::Command;

use mcp_interop::{ServerProcess, TEST_DEADLINE, everything_server, peer_script, python, run_peer};

use crate::python_client::assert_everything_scenario;

/// Starts our everything-server on a port the OS picks; returns it and its URL
pub(crate) fn our_http_server() -> (ServerProcess, String) {
    mcp_interop::everything_http_server(&everything_server())
}

/// Starts an everything-server binary with `--http 127.0.0.1:0`; returns it and its URL
pub(crate) fn http_server_of(binary: std::path::PathBuf) -> (ServerProcess, String) {
    mcp_interop::everything_http_server(&binary)
}

fn python_http_client(mode: &str, version: &str) {
    let (_server, url) = our_http_server();
    let mut command = Command::new(python());
    command.arg(peer_script("py_client.py")).arg(mode).arg(&url);
    run_python_client(command, version);
}

/// The official Python SDK's client over HTTPS to our everything-server (`--https`, a
/// certificate of a test CA), trusting the CA through `SSL_CERT_FILE`
fn python_https_client(mode: &str, version: &str) {
    let pki = mcp_interop::Pki::new();
    let (_server, url) =
        mcp_interop::everything_https_server(&everything_server(), &pki.chain, &pki.key);
    assert!(url.starts_with("https://"), "{url}");
    let ca = pki.chain.with_extension("ca.pem");
    std::fs::write(&ca, &pki.ca).unwrap();
    let mut command = Command::new(python());
    command
        .arg(peer_script("py_client.py"))
        .arg(mode)
        .arg(&url)
        .env("SSL_CERT_FILE", &ca);
    run_python_client(command, version);
    let _ = std::fs::remove_file(&ca);
}

fn run_python_client(command: Command, version: &str) {
    let output = run_peer(command, TEST_DEADLINE);
    let summary = output.summary();
    assert!(
        output.status.success() && summary.get("fatal").is_none(),
        "the Python client failed over HTTP: {}\n{output}",
        summary["fatal"]
    );
    assert_everything_scenario(&summary, version, &output);
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_http_server() {
    python_http_client("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_http_server() {
    python_http_client("modern", "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_auto_to_our_http_server() {
    python_http_client("auto", "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_https_server() {
    python_https_client("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_https_server() {
    python_https_client("modern", "2026-07-28");
}

/// The official Python SDK's client → the tokio everything-server's endpoint mounted at
/// `/mcp` in an axum app (the `axum-app` example), whose own `GET /health` answers beside it
fn python_client_to_axum_app(mode: &str, version: &str) {
    let (_server, url) = mcp_interop::axum_app_server();
    assert_eq!(health(&url), "ok", "GET /health beside /mcp");
    let mut command = Command::new(python());
    command.arg(peer_script("py_client.py")).arg(mode).arg(&url);
    run_python_client(command, version);
    assert_eq!(health(&url), "ok", "GET /health after the MCP session");
    // The app's `GET /metrics` (Prometheus' text format) timed the client's calls.
    let metrics = get(&url, "/metrics");
    let echo = "mcp_server_operation_duration_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\",outcome=\"ok\"} ";
    let line = metrics.lines().find(|l| l.starts_with(echo));
    let count: u64 = line
        .and_then(|l| l[echo.len()..].trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of echo calls in /metrics:\n{metrics}"));
    assert!(count >= 1, "{metrics}");
    for series in [
        "mcp_bytes_received{transport=\"http\"}",
        "mcp_server_sessions_active ",
        "mcp_server_requests_active{mcp_method_name=\"tools/call\"}",
    ] {
        assert!(
            metrics.contains(series),
            "no {series} in /metrics:\n{metrics}"
        );
    }
}

/// The body of `GET /health` on the app serving `mcp_url`
fn health(mcp_url: &str) -> String {
    get(mcp_url, "/health")
}

/// The body of `GET path` on the app serving `mcp_url` (a 200 answer)
fn get(mcp_url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let authority = mcp_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("an authority");
    let mut stream = std::net::TcpStream::connect(authority).expect("the app listens");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_legacy_to_our_server_mounted_in_axum() {
    python_client_to_axum_app("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_modern_to_our_server_mounted_in_axum() {
    python_client_to_axum_app("modern", "2026-07-28");
}

#[test]
#[ignore = "needs the interop peers: run scripts/test-all"]
fn python_client_auto_to_our_server_mounted_in_axum() {
    python_client_to_axum_app("auto", "2026-07-28");
}
