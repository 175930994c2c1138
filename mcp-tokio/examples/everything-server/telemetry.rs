//! The everything-servers' logs and traces, shared by the Rust bindings' copies
//! (mcp-sansio-async-std's and mcp-sansio-blocking's include this file)
//!
//! Logs go to stderr (stdout may be the stdio transport) as `RUST_LOG` says, nothing
//! without it: `RUST_LOG=mcp_sansio=debug` shows every session and request. With
//! `--otlp http://HOST:PORT` (built with the `otlp` feature) every span (the library's at
//! DEBUG and up, the rest at INFO and up) is also exported over OTLP/HTTP to
//! `http://HOST:PORT/v1/traces`, within a second of its end, and what is left on exit
//! (stdin closed, SIGINT, SIGTERM).

use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Kept until `main` returns: exports the spans still waiting
pub(crate) struct Telemetry {
    #[cfg(feature = "otlp")]
    _otlp: Option<mcp_sansio_runtime::otel::otlp::Otlp>,
}

/// Installs the logs (and the OTLP export `--otlp` asks for) of the example called `name`
pub(crate) fn init(name: &str, otlp: Option<&str>) -> Telemetry {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let registry = tracing_subscriber::registry().with(logs);
    #[cfg(feature = "otlp")]
    if let Some(endpoint) = otlp {
        use tracing_subscriber::filter::{LevelFilter, Targets};
        let (layer, otlp) =
            mcp_sansio_runtime::otel::otlp::layer(endpoint, name).unwrap_or_else(|e| {
                eprintln!("{name}: --otlp: {e}");
                std::process::exit(2);
            });
        let spans = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("mcp_sansio", LevelFilter::DEBUG);
        registry.with(layer.with_filter(spans)).init();
        if let Err(e) = otlp.flush_on_signals() {
            eprintln!("{name}: --otlp: no signal handlers ({e}): spans may be lost on a signal");
        }
        return Telemetry { _otlp: Some(otlp) };
    }
    #[cfg(not(feature = "otlp"))]
    if otlp.is_some() {
        eprintln!("{name}: --otlp needs the `otlp` feature (cargo build --features otlp)");
        std::process::exit(2);
    }
    registry.init();
    Telemetry {
        #[cfg(feature = "otlp")]
        _otlp: None,
    }
}
