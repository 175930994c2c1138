//! The server: register tools, resources and prompts as async functions, then serve over
//! stdio, any byte stream or Streamable HTTP (the runtime layer's
//! [`Server`](mcp_sansio_runtime::Server) on tokio)

use crate::runtime::Tokio;

/// What a handler can do besides returning its result (the runtime layer's
/// [`Context`](mcp_sansio_runtime::server::Context) on tokio)
pub type Context = mcp_sansio_runtime::server::Context<Tokio>;

/// Builds a [`Server`] (the runtime layer's
/// [`ServerBuilder`](mcp_sansio_runtime::server::ServerBuilder) on tokio)
pub type ServerBuilder = mcp_sansio_runtime::server::ServerBuilder<Tokio, Server>;

/// A built server on tokio; serve as many connections as you like (the runtime layer's
/// [`Server`](mcp_sansio_runtime::Server): `serve` takes tokio's `AsyncRead` and
/// `AsyncWrite`)
pub type Server = mcp_sansio_runtime::Server<Tokio>;
