//! Our client (mcp-sansio-tokio) → `@modelcontextprotocol/server-filesystem` (stdio): a
//! 10 MB file read whole with the default limits (issue #18: it used to be dropped at 8 MiB
//! and the call waited for its timeout), and the same read failing at once, with the size,
//! on a client whose limit is smaller

use std::time::{Duration, Instant};

use mcp_interop::server_filesystem;
use mcp_sansio::CallError;
use mcp_sansio_tokio::{Client, ClientError};
use serde_json::json;
use tokio::process::Command;

use crate::common::{LEGACY, args, config, texts, within_deadline};

const FILE_BYTES: usize = 10 * 1000 * 1000;

/// A folder of its own (the tests run in parallel, and each removes its folder when done)
/// holding `big.txt` of [`FILE_BYTES`] bytes
fn folder() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("mcp-interop-fs-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = "0123456789abcdefghijklmnopqrstuvwxyz".repeat(2) + "\n";
    let mut text = line.repeat(FILE_BYTES / line.len() + 1);
    text.truncate(FILE_BYTES);
    std::fs::write(dir.join("big.txt"), text).unwrap();
    dir
}

async fn scenario(limit: Option<usize>) {
    let dir = folder();
    let mut command = Command::new(server_filesystem());
    command.arg(&dir);
    let mut config = config(LEGACY);
    if let Some(limit) = limit {
        config.limits.max_message_size = limit;
    }
    let client = Client::spawn(command, config).await.expect("connects");
    let path = dir.join("big.txt").display().to_string();
    let started = Instant::now();
    let outcome = client
        .call_tool("read_text_file", args(json!({"path": path})))
        .await;
    match (limit, outcome) {
        (None, Ok(result)) => {
            assert_ne!(result.is_error, Some(true), "{:?}", texts(&result));
            let read: usize = texts(&result).iter().map(|t| t.len()).sum();
            assert_eq!(read, FILE_BYTES, "the whole file");
        }
        (Some(limit), Err(ClientError::Call(e @ CallError::TooLarge { size, .. }))) => {
            assert!(size.is_some_and(|s| s > FILE_BYTES as u64), "{e}");
            assert!(
                e.to_string()
                    .contains(&format!("over the message limit of {limit} bytes")),
                "{e}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "at once, not at the timeout"
            );
            // The session goes on.
            client
                .list_tools()
                .await
                .expect("tools/list after the drop");
        }
        (limit, other) => panic!("limit {limit:?}: {:?}", other.map(|_| ())),
    }
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn our_client_reads_a_10_mb_file_from_server_filesystem() {
    within_deadline(scenario(None)).await;
}

#[tokio::test]
#[ignore = "needs the interop peers: run scripts/test-all"]
async fn a_file_over_the_clients_limit_fails_its_call_at_once_with_the_size() {
    within_deadline(scenario(Some(4 * 1024 * 1024))).await;
}
