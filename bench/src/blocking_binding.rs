//! mcp-sansio-blocking: a client and a server on plain threads over a Unix socket pair (W1, W2; the
//! in-process duplex of a threaded binding), and over stdio to a child process (W3)

use std::hint::black_box;
use std::os::unix::net::UnixStream;
use std::process::Command;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};
use mcp_sansio_blocking::{Client, Server};
use serde_json::{Map, Value, json};

use crate::common::IN_FLIGHT;

fn server() -> Server {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!()
    };
    Server::builder(ServerConfig::new(Implementation::new("bench", "1.0")))
        .tool(Tool::new("echo", schema), |_cx, args| {
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

fn socket_client(era: EraMode) -> Result<Client, String> {
    let (a, b) = UnixStream::pair().map_err(|e| e.to_string())?;
    let server = server();
    let b_write = b.try_clone().map_err(|e| e.to_string())?;
    std::thread::spawn(move || server.serve(b, b_write));
    let a_write = a.try_clone().map_err(|e| e.to_string())?;
    Client::connect(a, a_write, config(era)).map_err(|e| e.to_string())
}

fn child_client(era: EraMode) -> Result<Client, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new(exe);
    command.args(["serve", "--binding", "blocking"]);
    Client::spawn(command, config(era)).map_err(|e| e.to_string())
}

fn calls(client: &Client, n: usize, k: usize) -> Result<(), String> {
    if k == 1 {
        for _ in 0..n {
            black_box(
                client
                    .call_tool("echo", args())
                    .map_err(|e| e.to_string())?,
            );
        }
        return Ok(());
    }
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..k)
            .map(|i| {
                let client = client.clone();
                let share = n / k + usize::from(i < n % k);
                s.spawn(move || {
                    for _ in 0..share {
                        black_box(
                            client
                                .call_tool("echo", args())
                                .map_err(|e| e.to_string())?,
                        );
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        threads
            .into_iter()
            .try_for_each(|t| t.join().map_err(|_| "a caller panicked".to_owned())?)
    })
}

/// W1 (`sequential`), W2, or W3 (`stdio`) on threads
pub(crate) fn run(
    sequential: bool,
    stdio: bool,
    era: EraMode,
    runs: usize,
    n: usize,
) -> Result<Vec<f64>, String> {
    let client = if stdio {
        child_client(era)?
    } else {
        socket_client(era)?
    };
    let k = if sequential || stdio { 1 } else { IN_FLIGHT };
    let mut failure = None;
    let rates = crate::common::time_runs(runs, n, |n| {
        if failure.is_none()
            && let Err(e) = calls(&client, n, k)
        {
            failure = Some(e);
        }
    });
    client.close();
    match failure {
        Some(e) => Err(e),
        None => Ok(rates),
    }
}

/// The W3 child: serve stdio until EOF
pub(crate) fn serve_stdio() {
    server().serve_stdio();
}
