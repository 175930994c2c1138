//! Child processes: a server's stderr can be captured line by line; a server that dies during
//! the handshake is a clear error; the last client gone, the child is killed and reaped

use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion};

use crate::binding::{Client, ClientOptions, ConnectError};
use crate::rt;

#[test]
fn stderr_is_captured_and_a_dead_server_fails_the_handshake() {
    rt::block_on(async {
        let mut command = rt::Command::new("sh");
        command.args(["-c", "echo 'starting up' >&2; echo 'giving up' >&2; exit 3"]);
        let (tx, mut rx) = rt::channel();
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
        let outcome = aw!(Client::spawn_with(
            command,
            config,
            ClientOptions::default().stderr(tx)
        ));
        // Said as what happened, with the program and its status.
        match outcome {
            Err(e @ ConnectError::Exited { .. }) => assert_eq!(
                e.to_string(),
                "the server `sh` exited (exit status: 3) before the handshake was done"
            ),
            other => panic!("{:?}", other.map(|_| ())),
        }
        // The channel ends when the child closes its stderr.
        let mut lines = Vec::new();
        while let Some(line) = aw!(rx.recv()) {
            lines.push(line);
        }
        assert_eq!(lines, ["starting up", "giving up"]);
    });
}

#[test]
fn a_missing_program_is_named_with_the_os_cause() {
    rt::block_on(async {
        let command = rt::Command::new("/nonexistent/mcp-server");
        let config = ClientConfig::new(Implementation::new("c", "1"));
        let outcome = aw!(Client::spawn(command, config));
        match outcome {
            Err(e @ ConnectError::Spawn { .. }) => assert_eq!(
                e.to_string(),
                "could not start the server `/nonexistent/mcp-server`: No such file or \
                 directory (os error 2)"
            ),
            other => panic!("{:?}", other.map(|_| ())),
        }
    });
}

/// The binding's everything-server example beside this test binary (`cargo test` builds the
/// examples; it needs `http`)
#[cfg(feature = "http")]
pub(crate) fn everything_server() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target/<profile>/deps");
    let server = dir.join("examples").join(rt::EVERYTHING_SERVER);
    assert!(server.exists(), "{} is not built", server.display());
    server
}

#[cfg(feature = "http")]
#[test]
fn a_child_server_is_killed_and_reaped_when_the_last_client_goes() {
    rt::block_on(async {
        let dir = std::env::temp_dir().join(format!(
            "mcp-{}-child-{}",
            rt::EVERYTHING_SERVER,
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("pid");
        // `exec` keeps the shell's pid: the file names the server process itself.
        let mut command = rt::Command::new("sh");
        command.arg("-c").arg(format!(
            "echo $$ > '{}'; exec '{}'",
            pid_file.display(),
            everything_server().display()
        ));
        let config = ClientConfig::new(Implementation::new("c", "1"));
        let client = aw!(Client::spawn(command, config)).unwrap();
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
        assert!(proc_dir.exists());
        let tools = aw!(client.list_tools()).unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        let clone = client.clone();
        drop(client);
        // A clone keeps the server alive.
        let sum = aw!(clone.call_tool(
            "add",
            super::support::object(serde_json::json!({"a": 1, "b": 2})),
        ))
        .unwrap();
        assert_eq!(sum.content[0].as_text(), Some("3"));
        drop(clone);
        // Killed and reaped: no process, not even a zombie, is left.
        let mut gone = false;
        for _ in 0..400 {
            if !proc_dir.exists() {
                gone = true;
                break;
            }
            aw!(rt::sleep(std::time::Duration::from_millis(5)));
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(gone, "the server process {pid} is still there");
    });
}

/// A stdio server whose stdin closes while calls are in flight still writes every answer it
/// owes before it exits
#[cfg(feature = "http")]
#[test]
fn a_server_writes_every_answer_it_owes_before_it_exits_on_eof() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let server = everything_server();
    // A race shows up only now and then: a few rounds, each short.
    for round in 0..12 {
        let mut child = Command::new(&server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the example starts");
        let mut stdin = child.stdin.take().expect("piped");
        let lines = [
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "eof-test", "version": "1"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "long_job", "arguments": {"ms": 30}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "last"}}}),
        ];
        for line in &lines {
            writeln!(stdin, "{line}").unwrap();
        }
        // EOF while both calls may still run.
        drop(stdin);
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut answered = Vec::new();
        for line in stdout.lines() {
            let message: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            if let Some(id) = message.get("id").and_then(serde_json::Value::as_i64) {
                assert!(message.get("result").is_some(), "round {round}: {message}");
                answered.push(id);
            }
        }
        let status = child.wait().unwrap();
        answered.sort_unstable();
        assert_eq!(
            answered,
            [0, 1, 2],
            "round {round}: every answer before exit"
        );
        assert!(status.success(), "round {round}: {status}");
    }
}
