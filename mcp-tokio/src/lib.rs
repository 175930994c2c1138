//! Model Context Protocol on tokio
//!
//! A thin binding over the sans-IO [`mcp_sansio`]: one actor task owns each connection's
//! `Session` (no lock around the core), reads and writes the transport, and sleeps until the
//! core's next deadline. Every protocol decision is the core's.
//!
//! - [`Client`]: connect over any `AsyncRead`/`AsyncWrite` pair or to a child process over
//!   stdio; typed calls; dropping a call's future cancels the request.
//! - [`Server`]: register tools, resources, templates and prompts as async functions; serve
//!   over stdio or any byte stream; a cancelled request aborts its handler.
//!
//! Time comes from `tokio::time::Instant`, so `#[tokio::test(start_paused = true)]` drives
//! the protocol's timeouts.

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
mod driver;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
pub mod server;

#[cfg(feature = "auth")]
pub use auth::{
    DpopKey, JwtSigner, OAuthOptions, Protection, TokenVerifier, UserAgent, VerifiedToken,
    headless_user_agent, jwt_verifier,
};
pub use client::{CallWatch, CancelHandle, Client, ClientError, ConnectError};
#[doc(hidden)]
pub use driver::Tokio;
pub use driver::{AskFailure, ClientOptions, InputHandler, TaskStatusUpdate};
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
pub use server::{Context, Server, ServerBuilder};
