//! The client: connect over any byte stream, to a child process, in memory or over
//! Streamable HTTP, then make typed calls (the runtime layer's [`Client`](mcp_sansio_runtime::Client) on tokio)

pub use mcp_sansio_runtime::client::{ClientError, ConnectError};

use crate::runtime::Tokio;

/// A connected MCP client on tokio; cheap to clone, every clone talks to the same connection
///
/// Dropping a call's future before it finishes cancels the request
/// (`notifications/cancelled`, or `tasks/cancel` for a task-backed call). Its methods are
/// documented below; [`Client::connect`](mcp_sansio_runtime::Client::connect) takes tokio's
/// `AsyncRead` and `AsyncWrite`, [`Client::spawn`](mcp_sansio_runtime::Client::spawn) a
/// `tokio::process::Command`.
pub type Client = mcp_sansio_runtime::Client<Tokio>;

/// Cancels one request from anywhere (dropping the request's future does the same)
///
/// `Client::start` returns one with the request's future; `cancel` sends
/// `notifications/cancelled`, or `tasks/cancel` for a task-backed call, and the future then
/// ends with `ClientError::Call(CallError::Cancelled)`. It is `Clone` and `Send`: hand it to
/// another task. A cancel before the future first runs ends it at once, without sending the
/// request; once the request has ended, `cancel` is a no-op.
pub type CancelHandle = mcp_sansio_runtime::client::CancelHandle<Tokio>;

/// What a started request reports while it runs: its progress, and the status of the task
/// behind it
///
/// Give one to `Client::start`: it is `Default` with both channels unset; set `progress`
/// (and ask for progress with `RequestOptions::with_progress`) or `task_status` to an
/// unbounded sender, and read the receivers while the call runs.
pub type CallWatch = mcp_sansio_runtime::client::CallWatch<Tokio>;
