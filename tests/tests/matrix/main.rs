//! The interop matrix: every binding's client against every binding's everything-server,
//! over stdio, Streamable HTTP and Streamable HTTP over TLS, in both eras
//!
//! 3 clients (mcp-sansio-tokio, mcp-sansio-async-std, mcp-sansio-blocking) × 3 servers (`everything-server`,
//! `everything-server-async-std`, `everything-server-blocking`) × 3 transports (stdio,
//! `http`, `https`: a CA and a certificate for 127.0.0.1 made by the test, the CA passed to
//! the client as `HttpOptions::root_certificates`) × 2 eras
//! (2025-11-25 `initialize`, 2026-07-28 `server/discover`) = 54 tests, and the
//! tokio server's endpoint mounted in an axum app (the `axum-app` example) × 3 clients × 2
//! eras = 6 more, each its own named
//! test: `<client>_client::<server>_server::<transport>::<era>`, for example
//! `tokio_client::blocking_server::http::modern`. Filter with any part of the path
//! (`cargo test -p mcp-interop --test matrix -- --include-ignored blocking_server::http`).
//!
//! Every cell runs the same scenario through its client binding's API (`client_*.rs`):
//! connect (spawning the server for stdio; the test starts it with `--http 127.0.0.1:0` for
//! HTTP), check the negotiated version and the server's name, list the tools, call `echo`
//! and `add`, call `slow` with progress (strictly increasing values), cancel a `slow` call
//! after its first progress report and see it end as cancelled, answer `ask_name`'s
//! elicitation through the client's input handler, run `long_job` (task-backed on 2026),
//! read the static resource and the template, get the prompt, call an unknown tool (-32602
//! or `isError`) and close. The clients fill in one [`common::Summary`];
//! [`common::assert_summary`] checks it.
//!
//! Like the other interop tests they are `#[ignore]`d: they need the example binaries that
//! `scripts/interop-setup` builds (`MCP_INTEROP_SERVER`, `MCP_INTEROP_SERVER_ASYNC_STD`,
//! `MCP_INTEROP_SERVER_BLOCKING`); `scripts/test-all` runs them with `--include-ignored`.
//! Each ends within `mcp_interop::TEST_DEADLINE`, killing the servers it started.

mod client_async_std;
mod client_blocking;
mod client_tokio;
mod common;

/// Generates the matrix: for each client, a module per server, per transport, with one test
/// per era
macro_rules! matrix {
    ($($client:ident => $scenario:path;)*) => {
        $(
            mod $client {
                matrix!(@server $scenario, tokio_server, Tokio);
                matrix!(@server $scenario, async_std_server, AsyncStd);
                matrix!(@server $scenario, blocking_server, Blocking);
                /// The tokio server's endpoint mounted in an axum app (the `axum-app` example)
                mod tokio_server_in_axum {
                    matrix!(@transport $scenario, Tokio, http, Mounted);
                }
            }
        )*
    };
    (@server $scenario:path, $server:ident, $binding:ident) => {
        mod $server {
            matrix!(@transport $scenario, $binding, stdio, Stdio);
            matrix!(@transport $scenario, $binding, http, Http);
            matrix!(@transport $scenario, $binding, https, Https);
        }
    };
    (@transport $scenario:path, $binding:ident, $transport:ident, $kind:ident) => {
        mod $transport {
            use crate::common::{Era, ServerBinding, Transport, run};

            #[test]
            #[ignore = "needs the everything-server examples: run scripts/test-all"]
            fn legacy() {
                run($scenario, ServerBinding::$binding, Transport::$kind, Era::Legacy);
            }

            #[test]
            #[ignore = "needs the everything-server examples: run scripts/test-all"]
            fn modern() {
                run($scenario, ServerBinding::$binding, Transport::$kind, Era::Modern);
            }
        }
    };
}

matrix! {
    tokio_client => crate::client_tokio::run;
    async_std_client => crate::client_async_std::run;
    blocking_client => crate::client_blocking::run;
}
