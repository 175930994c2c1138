//! W1 through mcp-sansio-tokio: sequential `tools/call echo` round trips over an in-memory duplex
//! (current-thread and multi-thread runtimes) and over real stdio to a child process; W2:
//! 64 calls in flight over the duplex
//!
//! `cargo bench -p mcp-sansio-tokio --bench round_trip`. The bench binary is its own stdio server:
//! started with `MCP_BENCH_SERVE=1` it serves instead of benchmarking.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use mcp_sansio_tokio::{Client, Server};
use serde_json::{Map, Value, json};

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

fn config() -> ClientConfig {
    let mut c = ClientConfig::new(Implementation::new("bench-client", "1.0"));
    c.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    c
}

async fn duplex_client() -> Client {
    let (a, b) = tokio::io::duplex(256 * 1024);
    let server = server();
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(b);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(a);
    Client::connect(r, w, config()).await.expect("connects")
}

fn args() -> Map<String, Value> {
    let Value::Object(m) = json!({"text": "hello world"}) else {
        unreachable!()
    };
    m
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("w1_tokio");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));
    for (name, rt) in [
        (
            "duplex_current_thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build(),
        ),
        (
            "duplex_multi_thread",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build(),
        ),
    ] {
        let rt = rt.expect("a runtime");
        let client = rt.block_on(duplex_client());
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let client = client.clone();
                async move { black_box(client.call_tool("echo", args()).await.expect("echo")) }
            });
        });
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let client = rt.block_on(async {
        let mut command = tokio::process::Command::new(std::env::current_exe().expect("exe"));
        command.env("MCP_BENCH_SERVE", "1");
        Client::spawn(command, config()).await.expect("spawns")
    });
    group.bench_function("stdio_child_current_thread", |b| {
        b.to_async(&rt).iter(|| {
            let client = client.clone();
            async move { black_box(client.call_tool("echo", args()).await.expect("echo")) }
        });
    });
    group.finish();
    w2(c);
}

/// W2: 64 calls in flight (64 tasks sharing one client), over the duplex
fn w2(c: &mut Criterion) {
    const IN_FLIGHT: usize = 64;
    let mut group = c.benchmark_group("w2_tokio");
    group.throughput(Throughput::Elements(IN_FLIGHT as u64));
    group.measurement_time(Duration::from_secs(5));
    for (name, rt) in [
        (
            "duplex_current_thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build(),
        ),
        (
            "duplex_multi_thread",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build(),
        ),
    ] {
        let rt = rt.expect("a runtime");
        let client = rt.block_on(duplex_client());
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let client = client.clone();
                async move {
                    let tasks: Vec<_> = (0..IN_FLIGHT)
                        .map(|_| {
                            let client = client.clone();
                            tokio::spawn(async move { client.call_tool("echo", args()).await })
                        })
                        .collect();
                    for t in tasks {
                        black_box(t.await.expect("joined").expect("echo"));
                    }
                }
            });
        });
    }
    group.finish();
}

fn main() {
    if std::env::var_os("MCP_BENCH_SERVE").is_some() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(server().serve_stdio());
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
