//! Child processes: a server's stderr can be captured line by line; a server that dies during
//! the handshake is a clear error; dropping the client kills and reaps the child

use std::sync::mpsc;

use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion};
use mcp_sansio_blocking::{Client, ClientOptions, ConnectError};

#[test]
fn stderr_is_captured_and_a_dead_server_fails_the_handshake() {
    let mut command = std::process::Command::new("sh");
    command.args(["-c", "echo 'starting up' >&2; echo 'giving up' >&2; exit 3"]);
    let (tx, rx) = mpsc::channel();
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    let outcome = Client::spawn_with(command, config, ClientOptions::default().stderr(tx));
    assert!(
        matches!(outcome, Err(ConnectError::Handshake(_))),
        "{outcome:?}"
    );
    // The channel ends when the child closes its stderr.
    let lines: Vec<String> = rx.iter().collect();
    assert_eq!(lines, ["starting up", "giving up"]);
}
