//! Model Context Protocol clients and servers on plain threads
//!
//! `mcp-sansio-blocking` runs [`mcp_sansio`], a sans-IO implementation of the
//! [Model Context Protocol](https://modelcontextprotocol.io), with no async runtime anywhere:
//! handlers are plain functions and calls block the calling thread. Both ends speak every
//! protocol version of both eras: the legacy one (2024-11-05 to 2025-11-25, one `initialize`
//! handshake per connection) and the modern one (2026-07-28: no handshake, `server/discover`,
//! every request carries its version); one server serves both at once.
//!
//! The API is that of the async bindings (`mcp-sansio-tokio`, `mcp-sansio-async-std`, whose
//! API the runtime layer `mcp-sansio-runtime` documents once), without `async`: [`Server`],
//! [`ServerBuilder`], [`Context`], [`Client`], [`ClientOptions`], with the same names and
//! behaviour; it shares the runtime layer's per-connection plumbing and keeps its own threads.
//! [`mcp_sansio`] is re-exported, so this crate is the only dependency you need. The guide in
//! the repository (`guide/`, an mdBook whose every example is a doc test) has the rest, by what
//! you want to do: `server.md`, `client.md`, `input.md`, `tasks.md` (cancellation on plain
//! threads), `http.md`, `auth.md`, `scale-out.md`, `testing.md`, and `bindings.md` (the three
//! bindings compared, and the measurements behind this crate's design).
//!
//! # Example
//!
//! A server on Streamable HTTP and a client that calls its tool (this runs as is;
//! `server.serve_stdio()` serves stdin and stdout instead, and
//! `Client::spawn(std::process::Command::new("my-server"), config)` starts a server as a child
//! process, killed and reaped on drop; `examples/hello.rs` does that):
//!
//! ```
//! use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_blocking::mcp_sansio::{ClientConfig, Implementation, ServerConfig};
//! use mcp_sansio_blocking::{Client, ClientOptions, Server};
//! use serde_json::Map;
//!
//! # #[cfg(feature = "http")]
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder(ServerConfig::new(Implementation::new("hello-server", "1.0")))
//!         .tool(Tool::new("hello", Map::new()), |_cx, _args| {
//!             Ok(CallToolResult::text("Hello over HTTP"))
//!         })?
//!         .build();
//!     // Port 0: any free port; the handle says which. Runs until shutdown (or the handle drops).
//!     let handle = server.serve_http("127.0.0.1:0".parse()?)?;
//!     let url = format!("http://{}/mcp", handle.local_addr());
//!
//!     let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//!     let client = Client::connect_http(&url, config, ClientOptions::default())?;
//!     let result = client.call_tool("hello", Map::new())?;
//!     assert_eq!(result.content[0].as_text(), Some("Hello over HTTP"));
//!
//!     client.close();
//!     handle.shutdown();
//!     Ok(())
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
//!
//! # What is this crate's own
//!
//! - **Handlers** run on a bounded pool of worker threads ([`DEFAULT_WORKERS`] unless
//!   [`ServerBuilder::workers`] says otherwise); a call cancelled while it waits for a worker
//!   never runs, and a cancelled handler that keeps running lends its worker to the next call.
//!   A call that waited [`DEFAULT_START_WITHIN`] gets a thread of its own, so handlers that
//!   block for long never hold quick calls up; past [`DEFAULT_MAX_THREADS`] handler threads
//!   ([`ServerBuilder::max_threads`]) a call is refused at once, "busy" (503 on the 2026 wire).
//!   One server's connections share one pool.
//! - **Cancellation** cannot abort a thread: a cancelled request cancels the handler's
//!   [`CancellationToken`] ([`Context::is_cancelled`]; [`Context::sleep`] wakes up at once with
//!   [`Cancelled`]).
//! - **Calls** block. [`Client::start`] returns a [`PendingCall`] (`wait` for the outcome,
//!   `cancel_handle` for another thread, dropped: cancelled). A `Client` is cheap to clone, and
//!   its clones may call from many threads at once. The [`InputHandler`] is a plain function,
//!   run on a thread of its own, so it may block on a user.
//! - **Channels** the application hands in are `std::sync::mpsc` senders.
//! - **Design.** On a byte stream (stdio, a child's pipes, a socket) each connection's `Session`
//!   sits behind one lock, and whoever has something for it feeds it on its own thread: the
//!   reader thread its bytes, a caller its request, a handler its result. Nobody writes under
//!   that lock, so a peer slow to read never stops the reader; a driver thread only fires the
//!   core's timers. Streamable HTTP runs one actor thread per server or client that owns the
//!   sessions. The guide's `bindings.md` measures why byte streams are not driven by an actor.
//! - **HTTP**: the server runs a thread per connection on std sockets, with the runtime layer's
//!   HTTP/1.1 framing; the client is `ureq`. `cargo tree` shows no async runtime, with any
//!   features.
//!
//! # Handlers and their Context
//!
//! Every handler gets a [`Context`]: [`progress`](Context::progress), [`log`](Context::log),
//! [`ask`](Context::ask) (elicitation, sampling, roots in either era; it blocks until the
//! answers, and on a modern request whose run ends with `input_required` it returns
//! [`AskFailure::Cancelled`]: return any error, the retry runs the handler again),
//! `elicit::<T>`, [`sample_text`](Context::sample_text), [`run_as_task`](Context::run_as_task),
//! and `request()`/`principal()` (who called). The guide's `input.md` and `tasks.md` show it
//! at work.
//!
//!
//! Here a client answers the handler's question and watches its progress:
//!
//! ```
//! use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, InputResponse, Tool};
//! use mcp_sansio_blocking::mcp_sansio::{ClientConfig, Implementation, Progress, RequestOptions, ServerConfig};
//! use mcp_sansio_blocking::{Client, ClientOptions, Elicited, InputHandler, Server};
//! use serde_json::{Map, json};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Guest {
//!     /// Who you are
//!     name: String,
//! }
//!
//! # #[cfg(feature = "schemars")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder(ServerConfig::new(Implementation::new("greeter", "1.0")))
//!     .tool(Tool::new("greet", Map::new()), |cx, _args| {
//!         // Ask first: on a modern session the handler runs again with the answers
//!         let Elicited::Accepted(guest) = cx.elicit::<Guest>("Who are you?")? else {
//!             return Ok(CallToolResult::error("no name given"));
//!         };
//!         for step in 1..=3 {
//!             cx.progress(Progress::new(f64::from(step)).total(3.0).message("composing"));
//!         }
//!         Ok(CallToolResult::text(format!("Hello, {}!", guest.name)))
//!     })?
//!     .build();
//!
//! // The client's side: a plain function answers the form (it may block on a user)
//! let answer: InputHandler = std::sync::Arc::new(|requests| {
//!     let form = json!({"action": "accept", "content": {"name": "Ada"}});
//!     let form: InputResponse = serde_json::from_value(form).expect("an answer to the form");
//!     Ok(requests.into_keys().map(|key| (key, form.clone())).collect())
//! });
//! let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
//! let client = Client::in_memory_with(&server, config, ClientOptions::default().input(answer))?;
//! let (progress, reports) = std::sync::mpsc::channel();
//! let result = client.call_tool_with("greet", Map::new(), RequestOptions::default(), progress)?;
//! assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
//! assert_eq!(reports.try_recv()?.total, Some(3.0)); // progress arrives before the result
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "schemars"))]
//! # fn main() {}
//! ```
//!
//! # Typed tools
//!
//! With the `macros` feature (on by default), [`#[tool]`](macro@tool),
//! [`#[tool_router]`](macro@tool_router), [`#[prompt]`](macro@prompt) and
//! [`#[resource]`](macro@resource) make plain functions tools, prompts and resources, registered with
//! [`ServerBuilder::register`](ServerBuilder#method.register) and [`tools!`]; with `schemars`,
//! [`ServerBuilder::typed_tool`](ServerBuilder#method.typed_tool) derives one tool's arguments
//! from a Rust type. The guide's `server.md` has examples.
//!
//! # Testing your server
//!
//! [`Client::in_memory`] connects a client to a built [`Server`] in this process: no child
//! process, socket, port or file descriptor. Threads have no paused clock, so keep a test's
//! durations short, as here, where a 50 ms timeout meets a tool that would sleep for a
//! minute ([`Context::sleep`] wakes up at once when the timed-out request is cancelled):
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_blocking::mcp_sansio::{CallError, ClientConfig, Implementation, RequestOptions, ServerConfig};
//! use mcp_sansio_blocking::{Client, ClientError, Server};
//! use serde_json::Map;
//!
//! let server = Server::builder(ServerConfig::new(Implementation::new("slow-server", "1.0")))
//!     .tool(Tool::new("wait", Map::new()), |cx, _args| {
//!         cx.sleep(Duration::from_secs(60))?;
//!         Ok(CallToolResult::text("waited a minute"))
//!     })?
//!     .build();
//! let client = Client::in_memory(&server, ClientConfig::new(Implementation::new("test", "1.0")))?;
//! let start = Instant::now();
//! let (progress, _reports) = std::sync::mpsc::channel();
//! let options = RequestOptions::default().timeout(Duration::from_millis(50));
//! let outcome = client.call_tool_with("wait", Map::new(), options, progress);
//! assert!(matches!(outcome, Err(ClientError::Call(CallError::TimedOut))));
//! assert!(start.elapsed() < Duration::from_secs(10));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The guide's `testing.md` has the same test on tokio's paused clock and on smol.
//!
//! # Features
//!
//! `http` (on by default: Streamable HTTP), `tls` (on: HTTPS with rustls on ring, both sides),
//! `schemars` (on: `typed_tool`, `Context::elicit`), `macros` (on: `#[tool]` and its family),
//! `auth` (off: OAuth 2.1 clients, with a blocking user agent, and protected servers, whose
//! verifier runs on the request's own thread), `redis` (off: the Redis task store for several
//! server processes), `otel` (off: distributed traces, the caller's W3C trace context in each
//! request's `_meta`), `otlp` (off: `otel` and an OTLP/HTTP span exporter). Without `http`: stdio, child processes and byte streams only, and no HTTP
//! crates (`default-features = false`). The guide's `bindings.md` lists what each brings in.
//!
//! Connections, HTTP exchanges, sessions and requests are [`tracing`](https://docs.rs/tracing)
//! spans under targets that start with `mcp_sansio` ([`mcp_sansio_runtime::trace`] lists them).
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth")]
pub mod auth;
mod cancel;
pub mod client;
#[cfg(feature = "http")]
mod client_tls;
mod driver;
#[cfg(feature = "http")]
pub mod endpoint;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
#[cfg(feature = "http")]
mod lane;
pub mod middleware;
mod one;
mod pool;
#[cfg(feature = "http")]
mod proxy_form;
pub mod server;
mod threads;

#[cfg(feature = "auth")]
pub use auth::{
    DpopKey, JwtSigner, OAuthOptions, Protection, TokenVerifier, UserAgent, VerifiedToken,
    headless_user_agent, jwt_verifier,
};
pub use cancel::{CancellationToken, Cancelled};
pub use client::{CallWatch, CancelHandle, Client, ClientError, ConnectError, PendingCall};
#[cfg(feature = "http")]
pub use endpoint::HttpEndpoint;
#[cfg(feature = "http")]
pub use http_server::HttpServerHandle;
pub use mcp_sansio;
/// `#[prompt]`: a function as a prompt, its parameters the arguments
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::prompt_blocking as prompt;
/// `#[resource("uri")]`: a function as a resource, or a template whose variables are its
/// parameters
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::resource_blocking as resource;
/// `#[tool]`: a function as a typed tool (see the crate's docs, "Typed tools")
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_blocking as tool;
/// `#[tool_router]`: the `#[tool]` methods of an impl block, registered with a value
#[cfg(feature = "macros")]
pub use mcp_sansio_macros::tool_router_blocking as tool_router;
/// The metrics the bindings record (feature `metrics`): names, labels, and
/// [`describe`](meter::describe)
pub use mcp_sansio_runtime::meter;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
/// Distributed traces across the call (feature `otel`): see the runtime layer's module
pub use mcp_sansio_runtime::otel;
/// What `#[tool]`'s code is generated against
#[cfg(feature = "macros")]
#[doc(hidden)]
pub use mcp_sansio_runtime::typed as __macros;
pub use threads::{AskFailure, ClientOptions, InputHandler, TaskStatusUpdate};

/// Several `#[tool]` functions to register at once: `builder.register(tools![a, b])`
#[cfg(feature = "macros")]
#[macro_export]
macro_rules! tools {
    ($($tool:ident),+ $(,)?) => {
        ($($tool {},)+)
    };
}
pub use mcp_sansio::session::{Caller, Principal};
pub use mcp_sansio_runtime::elicit::{ElicitError, Elicited};
#[cfg(feature = "http")]
pub use mcp_sansio_runtime::http_options::{HttpOptions, Proxy};
pub use mcp_sansio_runtime::peer::StartedTask;
pub use mcp_sansio_runtime::request::RequestInfo;
pub use mcp_sansio_runtime::sample::SampleError;
pub use mcp_sansio_runtime::server::NotDeclared;
#[cfg(feature = "tls")]
pub use mcp_sansio_runtime::tls::{TlsError, TlsIdentity};
pub use server::{
    Context, DEFAULT_MAX_THREADS, DEFAULT_START_WITHIN, DEFAULT_WORKERS, Server, ServerBuilder,
};

/// Several server processes sharing tasks and changes (see [`ServerBuilder::task_store`]
/// and the rules in [`mcp_sansio::store`])
pub mod store {
    pub use mcp_sansio::store::SharedTasks;
    #[cfg(feature = "redis")]
    pub use mcp_sansio_runtime::redis_store::RedisTaskStore;
    pub use mcp_sansio_runtime::store::{MemoryTaskStore, TaskStore};
}

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
