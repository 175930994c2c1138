//! Model Context Protocol clients and servers on async-std and smol
//!
//! `mcp-sansio-async-std` runs [`mcp_sansio`], a sans-IO implementation of the
//! [Model Context Protocol](https://modelcontextprotocol.io), on the runtime-neutral
//! `futures-io` traits and the smol family of crates (`async-io`, `async-net`,
//! `async-process`, `async-channel`, `blocking`), so the same code serves async-std and smol
//! programs, and needs no tokio (not even the crate). Both ends speak every protocol version of
//! both eras: the legacy one (2024-11-05 to 2025-11-25, one `initialize` handshake per
//! connection) and the modern one (2026-07-28: no handshake, `server/discover`, every request
//! carries its version); one server serves both at once.
//!
//! The API ([`Server`], [`ServerBuilder`], [`Context`], [`Client`], [`ClientOptions`], ...) is
//! `mcp-sansio-tokio`'s, name for name: both are the runtime layer's, `mcp-sansio-runtime`,
//! whose crate docs document it once, with its examples. This crate is smol's `Runtime` for that
//! layer and its IO (stdio, child processes, `futures-io` streams, HTTP/1.1 over `async-net`,
//! futures-rustls), and re-exports the API under its own names, with [`mcp_sansio`]. The guide
//! in the repository (`guide/`, an mdBook whose every example is a doc test) has the rest, by
//! what you want to do: `server.md`, `client.md`, `input.md`, `tasks.md`, `http.md`, `auth.md`,
//! `scale-out.md`, `testing.md`, and `bindings.md` (the three bindings compared, and why this
//! one frames HTTP/1.1 itself rather than use hyper).
//!
//! # Example
//!
//! A server on Streamable HTTP and a client that calls its tool (this runs as is;
//! `server.serve_stdio().await` serves stdin and stdout instead, and
//! `Client::spawn(async_process::Command::new("my-server"), config)` starts a server as a child
//! process):
//!
//! ```
//! use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_async_std::mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_async_std::{Client, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // `async_std::task::block_on` works the same way
//!     smol::block_on(async {
//!         let server = Server::builder(ServerConfig::new(Implementation::new("hello", "1.0")))
//!             .tool(Tool::new("hello", Map::new()), |_cx, _args| async {
//!                 Ok(CallToolResult::text("Hello over HTTP"))
//!             })?
//!             .build();
//!         // Port 0: any free port; the handle says which. Runs until shutdown (or drop).
//!         let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
//!         let url = format!("http://{}/mcp", handle.local_addr());
//!
//!         let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!         let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
//!         let result = client.call_tool("hello", Map::new()).await?;
//!         assert_eq!(result.content[0].as_text(), Some("Hello over HTTP"));
//!
//!         client.close().await;
//!         handle.shutdown().await;
//!         Ok(())
//!     })
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! # What is smol's own
//!
//! - **Executor.** Actors and handlers run on smol's global executor (`smol::spawn`), which
//!   drives itself on its own threads: it works the same whether the application runs
//!   async-std, smol, or only `futures_lite::future::block_on`. It has one thread unless
//!   `SMOL_THREADS` says more, so a handler that computes for long should hand that work to
//!   `blocking::unblock`. **async-std is discontinued upstream** (its authors recommend smol);
//!   this crate depends on smol's crates, not on async-std, so it keeps working for both.
//! - **The clock** is the real one (`async_io::Timer`): there is no paused clock, so tests keep
//!   their durations short.
//! - **Handlers** are smol tasks; a cancelled request drops its handler's task, so its future
//!   stops at its next `.await`.
//! - **Channels** the application hands in ([`ClientOptions`]' notifications and stderr,
//!   [`CallWatch`]'s progress and task status) are `async-channel`'s, the same type as
//!   `smol::channel` and `async_std::channel`; the connection never waits on them (a message
//!   that does not fit a full bounded channel is dropped, so prefer unbounded ones).
//! - **Child processes**: [`Client::spawn`] takes an `async_process::Command` (=
//!   `smol::process::Command`); the child is killed on drop, and reaped.
//! - **HTTP** is HTTP/1.1 framed by the runtime layer over `httparse` and `async-net`, not
//!   hyper, so `cargo tree` shows no tokio crate (the repository's test script checks it).
//!   `Server::http_endpoint` is the endpoint to drive from another HTTP stack (the
//!   `endpoint-async-h1` example).
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
//! a [`CancelHandle`] to cancel it from anywhere (`smol::spawn` the call's future to keep it
//! running meanwhile), and a [`CallWatch`] receives its progress and task status (the guide's
//! `tasks.md`).
//!
//! # Testing your server
//!
//! [`Client::in_memory`] connects a client to a built [`Server`] in this process, with no socket
//! or child process. Handlers sleep and requests time out on the real clock: a 50 ms timeout
//! against a tool that sleeps for a minute (the guide's `testing.md` has the test).
//!
//! # Features
//!
//! `http` (on by default: Streamable HTTP), `tls` (on: HTTPS with futures-rustls on ring, both
//! sides, no tokio), `schemars` (on: `typed_tool`, `Context::elicit`), `macros` (on: `#[tool]`
//! and its family), `auth` (off: OAuth 2.1 clients and protected servers), `redis` (off: the
//! Redis task store for several server processes), `otel` (off: distributed traces, the
//! caller's W3C trace context in each request's `_meta`), `otlp` (off: `otel` and an OTLP/HTTP
//! span exporter). Without `http`: stdio, child processes and
//! byte streams only (`default-features = false`). The guide's `bindings.md` lists what each
//! brings in.
//!
//! Connections, HTTP exchanges, sessions and requests are [`tracing`](https://docs.rs/tracing)
//! spans under targets that start with `mcp_sansio` ([`mcp_sansio_runtime::trace`] lists them).
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
/// A server's Streamable HTTP endpoint, for any HTTP stack: hand it a request whose body
/// was read, write the [`Response`](endpoint::Response) it gives (whole, or a
/// [`BodyStream`](endpoint::BodyStream) of pieces to write and flush as they come; dropping
/// the stream tells the server the client went away)
///
/// [`Server::http_endpoint`] makes one; [`Server::serve_http`] drives the same entry point
/// with the binding's own HTTP/1.1. The `endpoint-async-h1` example serves it with async-h1.
#[cfg(feature = "http")]
pub mod endpoint;
#[cfg(feature = "http")]
mod h1;
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
pub use mcp_sansio_macros::prompt_async_std as prompt;
/// `#[resource("uri")]`: a function as a resource, or a template whose variables are its
/// parameters
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::resource_async_std as resource;
/// `#[tool]`: a function as a typed tool (see the crate's docs, "Typed tools")
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_async_std as tool;
/// `#[tool_router]`: the `#[tool]` methods of an impl block, registered with a value
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_router_async_std as tool_router;
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
/// async-std and smol as the runtime layer sees it: the type that implements
/// [`Runtime`](mcp_sansio_runtime::Runtime) and [`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)
pub use runtime::AsyncStd;
pub use runtime::ClientOptions;
pub use server::{Context, Server, ServerBuilder};

/// The README (for crates.io), whose example (on Streamable HTTP) runs as a doc test too
#[cfg(all(doctest, feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
