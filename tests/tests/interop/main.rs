//! Interop over real stdio pipes and Streamable HTTP with the official MCP SDKs, for the
//! tokio binding (the modules here) and the blocking one (`blocking/`)
//!
//! Every test here is `#[ignore]`d: it needs the pinned peers that `scripts/interop-setup`
//! installs (`MCP_INTEROP_PYTHON`, `MCP_INTEROP_NODE_MODULES`) and our everything-server
//! example (`MCP_INTEROP_SERVER`). `scripts/test-all` sets them up and runs
//! `cargo test -p mcp-interop -- --include-ignored`; without them the tests fail, naming what
//! is missing. Each test ends within `TEST_DEADLINE`, killing the processes it started.

mod blocking;
mod common;
mod our_client_python_server;
mod our_client_server_everything;
mod our_client_server_everything_http;
mod our_client_server_filesystem;
mod python_client;
mod python_client_http;
mod python_client_typed;
mod ts_client;
mod ts_client_http;
