//! Model Context Protocol on plain threads
//!
//! A thin binding over the sans-IO [`mcp_sansio`], with no async runtime anywhere. On a byte
//! stream (stdio, a child's pipes, a socket) each connection's `Session` sits behind one
//! lock, and whoever has something for it feeds it on its own thread: the reader thread its
//! bytes, a caller its request, a handler its result. Nobody writes under that lock: one
//! thread at a time writes the session's output outside it (a caller or a handler itself,
//! else a writer thread), so a peer slow to read never stops our reader; a driver thread
//! only fires the core's timers. Streamable HTTP runs one actor thread per
//! server or client that owns the sessions and waits on one channel. Every protocol
//! decision is the core's.
//!
//! - [`Client`]: connect over any `Read`/`Write` pair, to a child process over stdio, or to
//!   a Streamable HTTP endpoint (`ureq`);
//!   blocking typed calls (`call_tool(..) -> Result<..>`); a [`CancelHandle`] cancels a
//!   call from another thread, and dropping a [`PendingCall`] cancels it too.
//! - [`Server`]: register tools, resources, templates and prompts as plain functions; they
//!   run on a bounded pool of worker threads; serve over stdio, any byte stream, or
//!   Streamable HTTP (`tiny_http`). A cancelled request cancels its handler's
//!   [`CancellationToken`] (see [`Context::is_cancelled`], [`Context::sleep`]).
//! - [`auth`]: OAuth 2.1 on both sides of HTTP, with [`mcp_sansio::auth`] making every
//!   decision: [`ClientOptions::auth`] authorizes a client connection when the server
//!   challenges it; [`Server::serve_http_protected`] checks bearer tokens with a
//!   [`TokenVerifier`] before the MCP server sees a request.

#[cfg(feature = "auth")]
pub mod auth;
mod cancel;
pub mod client;
mod driver;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
mod pool;
pub mod server;

#[cfg(feature = "auth")]
pub use auth::{
    DpopKey, JwtSigner, OAuthOptions, Protection, TokenVerifier, UserAgent, VerifiedToken,
    headless_user_agent, jwt_verifier,
};
pub use cancel::{CancellationToken, Cancelled};
pub use client::{CallWatch, CancelHandle, Client, ClientError, ConnectError, PendingCall};
pub use driver::{AskFailure, ClientOptions, InputHandler, TaskStatusUpdate};
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
pub use server::{Context, DEFAULT_WORKERS, Server, ServerBuilder};
