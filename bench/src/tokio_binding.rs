//! mcp-sansio-tokio: a client and a server over an in-memory duplex (W1, W2) on a current-thread or
//! a two-worker multi-thread runtime, and over stdio to a child process (W3)

use std::hint::black_box;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};
use mcp_sansio_tokio::{Client, Server};
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;

use crate::common::IN_FLIGHT;

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

fn runtime(multi: bool) -> Runtime {
    if multi {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
    .expect("a runtime")
}

async fn duplex_client(era: EraMode) -> Result<Client, String> {
    let (a, b) = tokio::io::duplex(256 * 1024);
    let server = server();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(b);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(a);
    Client::connect(r, w, config(era))
        .await
        .map_err(|e| e.to_string())
}

async fn child_client(era: EraMode, multi: bool) -> Result<Client, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = tokio::process::Command::new(exe);
    command.args([
        "serve",
        "--binding",
        if multi { "tokio-mt" } else { "tokio-ct" },
    ]);
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
    let mut tasks = Vec::with_capacity(k);
    for i in 0..k {
        let client = client.clone();
        let share = n / k + usize::from(i < n % k);
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                black_box(
                    client
                        .call_tool("echo", args())
                        .await
                        .map_err(|e| e.to_string())?,
                );
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// W1 (`sequential`), W2, or W3 (`stdio`, sequential) on a tokio runtime
pub(crate) fn run(
    sequential: bool,
    stdio: bool,
    multi: bool,
    era: EraMode,
    runs: usize,
    n: usize,
) -> Result<Vec<f64>, String> {
    let rt = runtime(multi);
    let client = rt.block_on(async {
        if stdio {
            child_client(era, multi).await
        } else {
            duplex_client(era).await
        }
    })?;
    let k = if sequential || stdio { 1 } else { IN_FLIGHT };
    let mut failure = None;
    let rates = crate::common::time_runs(runs, n, |n| {
        if failure.is_none()
            && let Err(e) = rt.block_on(calls(&client, n, k))
        {
            failure = Some(e);
        }
    });
    drop(client);
    match failure {
        Some(e) => Err(e),
        None => Ok(rates),
    }
}

/// The W3 child: serve stdio until EOF
pub(crate) fn serve_stdio(multi: bool) {
    runtime(multi).block_on(server().serve_stdio());
}
