//! The server: register tools, resources and prompts as async functions, then serve over
//! stdio, any byte stream or Streamable HTTP (the runtime layer's
//! [`Server`](mcp_sansio_runtime::Server) on async-std and smol)

use crate::runtime::AsyncStd;

/// What a handler can do besides returning its result (the runtime layer's
/// [`Context`](mcp_sansio_runtime::server::Context) on async-std and smol)
pub type Context = mcp_sansio_runtime::server::Context<AsyncStd>;

/// Builds a [`Server`] (the runtime layer's
/// [`ServerBuilder`](mcp_sansio_runtime::server::ServerBuilder) on async-std and smol)
pub type ServerBuilder = mcp_sansio_runtime::server::ServerBuilder<AsyncStd, Server>;

/// A built server on async-std and smol; serve as many connections as you like (the runtime layer's
/// [`Server`](mcp_sansio_runtime::Server): `serve` takes `futures-io`'s `AsyncRead`
/// and `AsyncWrite`)
pub type Server = mcp_sansio_runtime::Server<AsyncStd>;
