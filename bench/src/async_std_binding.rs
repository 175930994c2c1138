//! mcp-sansio-async-std: a client and a server on smol's global executor over an in-memory duplex
//! (two `piper` pipes; W1, W2), and over stdio to a child process (W3)
//!
//! The binding's actors and handlers run on smol's global executor (one thread unless
//! `SMOL_THREADS` says more); the calls are made from `smol::block_on` on the main thread.

use std::hint::black_box;

use async_process::Command;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};
use mcp_sansio_async_std::{Client, Server};
use serde_json::{Map, Value, json};

use crate::common::IN_FLIGHT;

/// Bytes each direction of the in-memory duplex buffers (as the tokio arm's duplex)
const PIPE: usize = 256 * 1024;

fn server() -> Server {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!()
    };
    Server::builder(ServerConfig::new(Implementation::new("bench", "1.0")))
        .tool(Tool::new("echo", schema), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .expect("valid tool")
        .build()
}

fn config(era: EraMode) -> ClientConfig {
    let mut c = ClientConfig::new(Implementation::new("bench-client", "1.0"));
    c.era = era;
    c
}

fn args() -> Map<String, Value> {
    serde_json::from_str(crate::common::ARGS).expect("an object")
}

async fn duplex_client(era: EraMode) -> Result<Client, String> {
    let (server_reader, client_writer) = piper::pipe(PIPE);
    let (client_reader, server_writer) = piper::pipe(PIPE);
    let server = server();
    smol::spawn(async move { server.serve(server_reader, server_writer).await }).detach();
    Client::connect(client_reader, client_writer, config(era))
        .await
        .map_err(|e| e.to_string())
}

async fn child_client(era: EraMode) -> Result<Client, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new(exe);
    command.args(["serve", "--binding", "async-std"]);
    Client::spawn(command, config(era))
        .await
        .map_err(|e| e.to_string())
}

/// `n` calls, `k` at a time
async fn calls(client: &Client, n: usize, k: usize) -> Result<(), String> {
    if k == 1 {
        for _ in 0..n {
            black_box(
                client
                    .call_tool("echo", args())
                    .await
                    .map_err(|e| e.to_string())?,
            );
        }
        return Ok(());
    }
    let tasks: Vec<_> = (0..k)
        .map(|i| {
            let client = client.clone();
            let share = n / k + usize::from(i < n % k);
            smol::spawn(async move {
                for _ in 0..share {
                    black_box(
                        client
                            .call_tool("echo", args())
                            .await
                            .map_err(|e| e.to_string())?,
                    );
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for t in tasks {
        t.await?;
    }
    Ok(())
}

/// W1 (`sequential`), W2, or W3 (`stdio`, sequential) on smol
pub(crate) fn run(
    sequential: bool,
    stdio: bool,
    era: EraMode,
    runs: usize,
    n: usize,
) -> Result<Vec<f64>, String> {
    let client = smol::block_on(async {
        if stdio {
            child_client(era).await
        } else {
            duplex_client(era).await
        }
    })?;
    let k = if sequential || stdio { 1 } else { IN_FLIGHT };
    let mut failure = None;
    let rates = crate::common::time_runs(runs, n, |n| {
        // The caller runs on the global executor beside the binding's tasks (as a smol
        // application's work does), not across threads from `block_on`.
        let caller = client.clone();
        if failure.is_none()
            && let Err(e) = smol::block_on(smol::spawn(async move { calls(&caller, n, k).await }))
        {
            failure = Some(e);
        }
    });
    smol::block_on(client.close());
    match failure {
        Some(e) => Err(e),
        None => Ok(rates),
    }
}

/// The W3 child: serve stdio until EOF
pub(crate) fn serve_stdio() {
    smol::block_on(server().serve_stdio());
}
