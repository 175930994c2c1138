//! mcp-sansio-async-std's client and server against the official MCP SDKs, over real stdio pipes
//! and Streamable HTTP: the same scenarios as `tests/interop` runs for mcp-sansio-tokio
//!
//! Every test here is `#[ignore]`d: it needs the pinned peers that `scripts/interop-setup`
//! installs (`MCP_INTEROP_PYTHON`, `MCP_INTEROP_NODE_MODULES`) and our
//! everything-server-async-std example (`MCP_INTEROP_SERVER_ASYNC_STD`). The Rust sides run
//! on smol (`smol::block_on`); each test ends within `TEST_DEADLINE`, killing what it started.

mod common;
mod our_client_python_server;
mod our_client_server_everything;
mod sdk_clients;
