//! One trace from a client's span through the MCP call into the tool's own work, exported
//! to an OTLP/HTTP collector (Jaeger, the OpenTelemetry Collector, Grafana Tempo, ...)
//!
//! ```sh
//! cargo build -p mcp-sansio-tokio --features otlp --example everything-server
//! cargo run -p mcp-sansio-tokio --features otlp --example otel-client -- http://127.0.0.1:4318 target/debug/examples/everything-server
//! ```
//!
//! The client exports its spans to the collector at the first argument; it starts the
//! server (the second argument) over stdio with `--otlp` and the same collector, and calls
//! `echo` inside its span `otel-client.work`. The collector then shows one trace:
//! `otel-client.work` > `mcp.request` (client) > `mcp.request` (server) > `tool.echo`.

use mcp_sansio_tokio::otel::tracing_opentelemetry::OpenTelemetrySpanExt as _;
use mcp_sansio_tokio::otel::{opentelemetry::trace::TraceContextExt as _, otlp};
use mcp_sansio_tokio::{Client, ClientOptions};
use tracing::Instrument as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let (Some(collector), Some(server)) = (argv.next(), argv.next()) else {
        eprintln!("usage: otel-client http://HOST:PORT EVERYTHING-SERVER");
        std::process::exit(2);
    };
    // Spans to the collector: the library's at DEBUG (its `mcp.request` spans), the rest at INFO
    let (layer, exporter) = otlp::layer(&collector, "otel-client")?;
    let spans = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("mcp_sansio", LevelFilter::DEBUG);
    tracing_subscriber::registry()
        .with(layer.with_filter(spans))
        .init();

    let mut command = tokio::process::Command::new(server);
    command.args(["--otlp", &collector]);
    let config =
        mcp_sansio::ClientConfig::new(mcp_sansio::Implementation::new("otel-client", "0.1.0"));
    let client = Client::spawn_with(command, config, ClientOptions::default()).await?;

    let work = tracing::info_span!("otel-client.work");
    let trace_id = work.context().span().span_context().trace_id();
    let arguments = serde_json::json!({"text": "traced"});
    let result = client
        .call_tool("echo", arguments.as_object().cloned().unwrap_or_default())
        .instrument(work)
        .await?;
    println!("echo: {:?}", result.content);
    println!("trace {trace_id}");
    // The server exports its spans every half second; closing kills the child process, so
    // give it a moment first (a server that exits by itself flushes on exit).
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    client.close().await;
    exporter.flush();
    Ok(())
}
