//! An MCP server over stdio with a few of everything: tools (one with progress), a resource,
//! a resource template and a prompt
//!
//! `cargo run -p mcp-sansio-tokio --example everything-server` and speak MCP on stdin/stdout, or
//! let a client start it as a child process (see the `demo` example). With
//! `-- --http 127.0.0.1:PORT` it serves Streamable HTTP at `http://127.0.0.1:PORT/mcp`
//! instead (any path works); `-- --https 127.0.0.1:PORT CHAIN.pem KEY.pem` serves it over
//! TLS at `https://127.0.0.1:PORT/mcp`, presenting that certificate chain and key, until Ctrl-C.
//!
//! `--conformance` adds the fixtures of the official conformance suite (see
//! `conformance.rs`): `--conformance --http 127.0.0.1:PORT` is the server its server legs
//! run against. Without it the catalog is the small demo one the interop tests assert on.

mod catalog;
mod conformance;

/// What the conformance fixtures (shared with mcp-sansio-async-std's everything-server) need of the
/// binding
mod rt {
    pub(crate) use mcp_sansio_tokio::{AskFailure, Context, ServerBuilder};
    pub(crate) use tokio::time::sleep;
}

use catalog::object;

/// Logs to stderr (stdout may be the stdio transport) as `RUST_LOG` says, nothing without it:
/// `RUST_LOG=mcp_sansio=debug` shows every session and request
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    init_logging();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let fixtures = args
        .iter()
        .position(|a| a == "--conformance")
        .map(|i| args.remove(i))
        .is_some();
    let server = catalog::server(fixtures);
    let mut args = args.into_iter();
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), addr) => {
            let addr: std::net::SocketAddr = addr
                .as_deref()
                .unwrap_or("127.0.0.1:3000")
                .parse()
                .expect("--http takes an address such as 127.0.0.1:3000");
            let handle = server.serve_http(addr).await.expect("the address binds");
            eprintln!("serving MCP at http://{}/mcp", handle.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            handle.shutdown().await;
        }
        #[cfg(feature = "tls")]
        (Some("--https"), addr) => {
            let usage = "--https takes an address such as 127.0.0.1:3443, then the certificate \
                         chain and the private key files (PEM)";
            let addr: std::net::SocketAddr = addr.as_deref().expect(usage).parse().expect(usage);
            let (chain, key) = (args.next().expect(usage), args.next().expect(usage));
            let read = |path: &str| std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let identity = mcp_sansio_tokio::TlsIdentity::from_pem(&read(&chain), &read(&key))
                .unwrap_or_else(|e| panic!("{e}"));
            let handle = server
                .serve_https(addr, identity)
                .await
                .expect("the address binds");
            eprintln!("serving MCP at https://{}/mcp", handle.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            handle.shutdown().await;
        }
        (None, _) => server.serve_stdio().await,
        (Some(other), _) => {
            eprintln!(
                "usage: everything-server [--conformance] [--http 127.0.0.1:PORT | --https 127.0.0.1:PORT CHAIN.pem KEY.pem]  (unknown: {other})"
            );
            std::process::exit(2);
        }
    }
}
