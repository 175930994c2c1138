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
//!
//! Behind a load balancer (`scripts/scale-out`): `--node NAME` puts `NAME.` before every
//! 2025-wire session id, for sticky routing, and `--state-key HEX` (64 hex digits) is the
//! `requestState` key all the processes share.
//!
//! `--jwt-secret SECRET` (built with `--features auth`) protects it: every request needs an
//! HS256 JWT signed with `SECRET` for `http://127.0.0.1:PORT/mcp` from
//! `http://127.0.0.1:<PORT+1>` (mint one with the `jwt-protected-server` example's `mint`);
//! `whoami` then answers the token's subject, client id and scopes, and `admin_echo` needs
//! `mcp:admin`. Flags go in any order; see `args.rs`.

mod args;
mod catalog;
mod conformance;
mod telemetry;

/// What the conformance fixtures (shared with mcp-sansio-async-std's everything-server) need of the
/// binding
mod rt {
    pub(crate) use mcp_sansio_tokio::{AskFailure, Context, ServerBuilder};
    pub(crate) use tokio::time::sleep;
}

use args::Transport;
use catalog::object;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let name = "everything-server";
    let args = args::parse(name);
    let _telemetry = telemetry::init(name, args.otlp.as_deref());
    let store = args.store(name);
    let server = catalog::server(args.fixtures, args.state_key, store);
    let config = args.http_config();
    match args.transport {
        #[cfg(feature = "auth")]
        Transport::Http(addr) if args.jwt_secret.is_some() => {
            let (rules, key, validation) =
                args::jwt_rules(args.jwt_secret.as_deref(), "http", addr).expect("a secret");
            let protection = mcp_sansio_tokio::Protection::new(
                rules,
                mcp_sansio_tokio::jwt_verifier(key, validation),
            );
            let handle = server
                .serve_http_protected(addr, config, protection)
                .await
                .expect("the address binds");
            eprintln!(
                "serving MCP at http://{}/mcp (protected)",
                handle.local_addr()
            );
            let _ = tokio::signal::ctrl_c().await;
            handle.shutdown().await;
        }
        Transport::Http(addr) => {
            let handle = server
                .serve_http_with(addr, config)
                .await
                .expect("the address binds");
            eprintln!("serving MCP at http://{}/mcp", handle.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            handle.shutdown().await;
        }
        #[cfg(feature = "tls")]
        Transport::Https { addr, chain, key } => {
            let read = |path: &str| std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let identity = mcp_sansio_tokio::TlsIdentity::from_pem(&read(&chain), &read(&key))
                .unwrap_or_else(|e| panic!("{e}"));
            #[cfg(feature = "auth")]
            let handle = match args::jwt_rules(args.jwt_secret.as_deref(), "https", addr) {
                Some((rules, key, validation)) => {
                    let verifier = mcp_sansio_tokio::jwt_verifier(key, validation);
                    let protection = mcp_sansio_tokio::Protection::new(rules, verifier);
                    server
                        .serve_https_protected(addr, config, protection, identity)
                        .await
                }
                None => server.serve_https_with(addr, config, identity).await,
            }
            .expect("the address binds");
            #[cfg(not(feature = "auth"))]
            let handle = server
                .serve_https_with(addr, config, identity)
                .await
                .expect("the address binds");
            eprintln!("serving MCP at https://{}/mcp", handle.local_addr());
            let _ = tokio::signal::ctrl_c().await;
            handle.shutdown().await;
        }
        #[cfg(not(feature = "tls"))]
        Transport::Https { .. } => {
            eprintln!(
                "{name}: --https needs the `tls` feature\n{}",
                args::usage(name)
            );
            std::process::exit(2);
        }
        Transport::Stdio => server.serve_stdio().await,
    }
}
