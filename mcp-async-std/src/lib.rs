//! Model Context Protocol on async-std and smol
//!
//! A thin binding over the sans-IO [`mcp_sansio`], written against the runtime-neutral
//! `futures-io` traits and the smol family of crates (`async-io`, `async-net`,
//! `async-process`, `async-channel`, `blocking`), so the same code serves async-std and smol
//! users: one actor task owns each connection's `Session` (no lock around the core), reads
//! and writes the transport, and sleeps until the core's next deadline with
//! `async_io::Timer`. Every protocol decision is the core's.
//!
//! - [`Client`]: connect over any `AsyncRead`/`AsyncWrite` pair, to a child process over
//!   stdio, or to a Streamable HTTP endpoint; typed calls; dropping a call's future cancels
//!   the request.
//! - [`Server`]: register tools, resources, templates and prompts as async functions; serve
//!   over stdio, any byte stream, or Streamable HTTP (HTTP/1.1 framed by the crate over `httparse`); a cancelled request drops its
//!   handler.
//! - OAuth ([`auth`]): an HTTP client authorizes when challenged
//!   ([`ClientOptions::auth`], the flow is `mcp_sansio::auth`'s; this crate performs its HTTP
//!   requests), and [`Server::serve_http_protected`] makes a resource server with an async
//!   token verifier ([`jwt_verifier`] for JWTs).
//!
//! Actors and handlers run on smol's global executor (`smol::spawn`), which drives itself on
//! its own threads: it works the same whether the application runs async-std, smol, or only
//! `futures_lite::future::block_on`. It has one thread unless `SMOL_THREADS` says more, so
//! a handler that computes for long should hand that work to `blocking::unblock`. Channels
//! in this API are `async-channel`'s (the same type as `async_std::channel` and
//! `smol::channel`).
//!
//! **async-std is discontinued upstream** (its authors recommend smol); this crate depends
//! on smol's crates, not on async-std, so it keeps working for both. A server on smol:
//!
//! ```no_run
//! use mcp_sansio_async_std::Server;
//! use mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio::{Implementation, ServerConfig};
//!
//! let server = Server::builder(ServerConfig::new(Implementation::new("hello", "1.0")))
//!     .tool(Tool::new("hello", serde_json::Map::new()), |_cx, _args| async {
//!         Ok(CallToolResult::text("Hello from smol"))
//!     })
//!     .expect("a valid tool")
//!     .build();
//! smol::block_on(server.serve_stdio());
//! ```
//!
//! And a client on async-std (`async_std::task::block_on` works the same way):
//!
//! ```no_run
//! use mcp_sansio_async_std::Client;
//! use mcp_sansio::{ClientConfig, Implementation};
//!
//! smol::block_on(async {
//!     let command = async_process::Command::new("my-mcp-server");
//!     let config = ClientConfig::new(Implementation::new("hello-client", "1.0"));
//!     let client = Client::spawn(command, config).await?;
//!     for tool in client.list_tools().await? {
//!         println!("{}", tool.name);
//!     }
//!     client.close().await;
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })
//! .unwrap();
//! ```

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
mod driver;
#[cfg(feature = "http")]
mod h1;
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
pub use driver::AsyncStd;
pub use driver::{AskFailure, ClientOptions, InputHandler, TaskStatusUpdate};
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
pub use server::{Context, Server, ServerBuilder};
