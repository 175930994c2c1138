//! Child processes: a server's stderr can be captured line by line; a server that dies during
//! the handshake is a clear error

use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion};
use mcp_sansio_tokio::{Client, ClientOptions, ConnectError};

#[tokio::test]
async fn stderr_is_captured_and_a_dead_server_fails_the_handshake() {
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", "echo 'starting up' >&2; echo 'giving up' >&2; exit 3"]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    let outcome = Client::spawn_with(command, config, ClientOptions::default().stderr(tx)).await;
    assert!(
        matches!(outcome, Err(ConnectError::Handshake(_))),
        "{outcome:?}"
    );
    let mut lines = Vec::new();
    while let Some(line) = rx.recv().await {
        lines.push(line);
    }
    assert_eq!(lines, ["starting up", "giving up"]);
}
