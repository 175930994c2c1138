//! Model Context Protocol on plain threads
//!
//! A thin binding over the sans-IO [`mcp_core`], with no async runtime anywhere: a driver
//! thread owns each connection's `Session` (no lock around the core) and waits on one
//! channel with the core's next deadline; a reader thread feeds it bytes. Every protocol
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

mod cancel;
pub mod client;
mod driver;
mod http_client;
mod http_server;
mod pool;
pub mod server;

pub use cancel::{CancellationToken, Cancelled};
pub use client::{CallWatch, CancelHandle, Client, ClientError, ConnectError, PendingCall};
pub use driver::{AskFailure, ClientOptions, InputHandler, TaskStatusUpdate};
pub use http_server::HttpServerHandle;
pub use mcp_core;
pub use server::{Context, DEFAULT_WORKERS, Server, ServerBuilder};
