//! Model Context Protocol clients and servers on tokio
//!
//! `mcp-sansio-tokio` runs [`mcp_sansio`], a sans-IO implementation of the
//! [Model Context Protocol](https://modelcontextprotocol.io), on tokio. Both ends speak every
//! protocol version of both eras: the legacy one (2024-11-05 to 2025-11-25, one `initialize`
//! handshake per connection) and the modern one (2026-07-28: no handshake, `server/discover`,
//! every request carries its version); one server serves both at once.
//!
//! The API ([`Server`], [`ServerBuilder`], [`Context`], [`Client`], [`ClientOptions`], ...) is
//! the runtime layer's, `mcp-sansio-runtime`, whose crate docs document it once, with its
//! examples; this crate is tokio's `Runtime` for that layer and tokio's IO (stdio, child
//! processes, `AsyncRead`/`AsyncWrite` streams, hyper for Streamable HTTP, tokio-rustls), and
//! re-exports the API under its own names, with [`mcp_sansio`] so this crate is the only
//! dependency you need. The guide in the repository (`guide/`, an mdBook whose every example
//! is a doc test) has the rest, by what you want to do: `server.md` (write a server),
//! `client.md` (call one), `input.md`, `tasks.md`, `http.md` (HTTP, HTTPS, axum), `auth.md`
//! (OAuth, who is calling), `scale-out.md`, `testing.md`, `bindings.md` (the three bindings
//! compared).
//!
//! # Example
//!
//! A server on Streamable HTTP and a client that calls its tool (this runs as is;
//! `server.serve_stdio().await` serves stdin and stdout instead, and
//! `Client::spawn(tokio::process::Command::new("my-server"), config)` starts a server as a
//! child process):
//!
//! ```
//! use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_tokio::mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_tokio::{Client, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder(ServerConfig::new(Implementation::new("hello-server", "1.0")))
//!         .tool(Tool::new("hello", Map::new()), |_cx, _args| async {
//!             Ok(CallToolResult::text("Hello over HTTP"))
//!         })?
//!         .build();
//!     // Port 0: any free port; the handle says which. Runs until shutdown (or the handle drops).
//!     let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//!     let url = format!("http://{}/mcp", handle.local_addr());
//!
//!     let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
//!     let result = client.call_tool("hello", Map::new()).await?;
//!     assert_eq!(result.content[0].as_text(), Some("Hello over HTTP"));
//!
//!     client.close().await;
//!     handle.shutdown().await;
//!     Ok(())
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! # What is tokio's own
//!
//! - **The clock** is `tokio::time::Instant`, so under `#[tokio::test(start_paused = true)]`
//!   (tokio's `test-util` feature) a handler's sleeps and the client's request timeouts jump
//!   ahead whenever every task is idle.
//! - **Handlers** are tokio tasks; a cancelled request aborts its handler's task, so its future
//!   is dropped at its next `.await`.
//! - **Channels** the application hands in ([`ClientOptions`]' notifications and stderr,
//!   [`CallWatch`]'s progress and task status) are tokio's unbounded `mpsc` senders.
//! - **Child processes**: [`Client::spawn`] takes a `tokio::process::Command`; the child is
//!   killed when the last clone of the client goes.
//! - **HTTP** is hyper's. [`Server::http_endpoint`] is a `tower::Service`, so the endpoint
//!   mounts as an axum route or behind any tower middleware, sharing the app's listener and
//!   graceful shutdown (the `axum-app` example).
//!
//! # Handlers and their Context
//!
//! Every handler gets a [`Context`]: `progress`, `log`, `ask` (elicitation, sampling, roots in
//! either era), `elicit::<T>`, `sample_text`, `run_as_task`, and `request()`/`principal()` (who
//! called). Its full documentation, with examples, is the runtime layer's `Context`; the guide's
//! `input.md` and `tasks.md` show it at work.
//!
//! # Typed tools
//!
//! With the `macros` feature (on by default), [`#[tool]`](macro@tool),
//! [`#[tool_router]`](macro@tool_router), [`#[prompt]`](macro@prompt) and
//! [`#[resource]`](macro@resource) make functions tools, prompts and resources, registered with
//! [`ServerBuilder::register`](ServerBuilder#method.register) and [`tools!`]; with `schemars`,
//! [`ServerBuilder::typed_tool`](ServerBuilder#method.typed_tool) derives one tool's arguments
//! from a Rust type. The guide's `server.md` has examples.
//!
//! # Cancellation
//!
//! Dropping a call's future cancels the request; [`Client::start`](Client#method.start) returns
//! a [`CancelHandle`] to cancel it from anywhere, and a [`CallWatch`] receives its progress and
//! task status (the guide's `tasks.md`).
//!
//! # Testing your server
//!
//! [`Client::in_memory`] connects a client to a built [`Server`] in this process, with no socket
//! or child process; on tokio's paused clock a 30-second tool runs in no wall time and a timeout
//! fires at its exact deadline (the guide's `testing.md`).
//!
//! # Features
//!
//! `http` (on by default: Streamable HTTP on hyper), `tls` (on: HTTPS with rustls on ring, both
//! sides), `schemars` (on: `typed_tool`, `Context::elicit`), `macros` (on: `#[tool]` and its
//! family), `auth` (off: OAuth 2.1 clients and protected servers), `redis` (off: the Redis task
//! store for several server processes), `otel` (off: distributed traces, the caller's W3C trace
//! context in each request's `_meta`), `otlp` (off: `otel` and an OTLP/HTTP span exporter). Without `http`: stdio, child processes and byte streams
//! only (`default-features = false`). The guide's `bindings.md` lists what each brings in.
//!
//! Connections, HTTP exchanges, sessions and requests are [`tracing`](https://docs.rs/tracing)
//! spans under targets that start with `mcp_sansio` ([`mcp_sansio_runtime::trace`] lists them).
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
#[cfg(feature = "http")]
pub mod edge;
#[cfg(feature = "http")]
pub mod endpoint;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
mod io;
mod runtime;
pub mod server;

#[cfg(feature = "auth")]
pub use auth::{
    DpopKey, JwtSigner, OAuthOptions, Protection, TokenVerifier, UserAgent, VerifiedToken,
    headless_user_agent, jwt_verifier,
};
pub use client::{CallWatch, CancelHandle, Client};
#[cfg(feature = "http")]
pub use endpoint::HttpEndpoint;
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
/// `#[prompt]`: a function as a prompt, its parameters the arguments
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::prompt_tokio as prompt;
/// `#[resource("uri")]`: a function as a resource, or a template whose variables are its
/// parameters
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::resource_tokio as resource;
/// `#[tool_router]`: the `#[tool]` methods of an impl block, registered with a value
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_router_tokio as tool_router;
/// `#[tool]`: a function as a typed tool (see the crate's docs, "Typed tools")
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_tokio as tool;
pub use mcp_sansio_runtime::api::*;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
/// Distributed traces across the call (feature `otel`): see the runtime layer's module
pub use mcp_sansio_runtime::otel;
/// What `#[tool]`'s code is generated against
#[cfg(feature = "macros")]
#[doc(hidden)]
pub use mcp_sansio_runtime::typed as __macros;

/// Several `#[tool]` functions to register at once: `builder.register(tools![a, b])`
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! tools {
    ($($tool:ident),+ $(,)?) => {
        ($($tool {},)+)
    };
}
pub use runtime::ClientOptions;
/// tokio as the runtime layer sees it: the type that implements
/// [`Runtime`](mcp_sansio_runtime::Runtime) and [`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)
pub use runtime::Tokio;
pub use server::{Context, Server, ServerBuilder};

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
