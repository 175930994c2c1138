//! An axum app with an MCP server in it: `GET /health` beside the everything-server's tools
//! at `/mcp`, on one listener, behind the app's own middleware, with one graceful shutdown,
//! and `GET /metrics`: the server's metrics (feature `metrics`) in Prometheus' text format
//!
//! `cargo run -p mcp-sansio-tokio --example axum-app -- 127.0.0.1:PORT` (default
//! 127.0.0.1:3000), then point an MCP client at `http://127.0.0.1:PORT/mcp`. `RUST_LOG`
//! chooses what it logs (to stderr). Ctrl-C ends the open event streams, then
//! axum waits for the connections to finish.

#[path = "everything-server/catalog.rs"]
mod catalog;
#[path = "everything-server/conformance.rs"]
mod conformance;

/// What the conformance fixtures need of the binding
mod rt {
    pub(crate) use mcp_sansio_tokio::{AskFailure, Context, ServerBuilder};
    pub(crate) use tokio::time::sleep;
}

use catalog::object;

use axum::Router;
use axum::routing::get;
use mcp_sansio::http::HttpConfig;
use metrics_exporter_prometheus::PrometheusBuilder;

/// Logs to stderr as `RUST_LOG` says, nothing without it: `RUST_LOG=mcp_sansio=debug` shows
/// every session and request
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

#[tokio::main]
async fn main() {
    init_logging();
    // The recorder the binding's metrics go to, rendered at /metrics for Prometheus to scrape
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .expect("the only recorder of this process");
    mcp_sansio_tokio::meter::describe();
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .unwrap_or_else(|e| panic!("{addr}: {e}"));
    let addr = listener.local_addr().expect("bound");

    // The MCP server's endpoint, mounted at /mcp beside the app's own routes.
    let mcp = catalog::server(false, None, None).http_endpoint(HttpConfig::default());
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/metrics", get(move || async move { prometheus.render() }))
        .nest_service("/mcp", mcp.clone());

    eprintln!("serving MCP at http://{addr}/mcp (and /health, /metrics)");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Open event streams end first, so the connections can finish.
            mcp.shutdown();
        })
        .await
        .expect("the server runs");
}
