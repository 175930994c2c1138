//! The runtime-free kernel that the `mcp-sansio` bindings share: an internal support crate
//!
//! **This crate is not meant to be used directly.** It is published because
//! [`mcp-sansio-tokio`](https://docs.rs/mcp-sansio-tokio),
//! [`mcp-sansio-async-std`](https://docs.rs/mcp-sansio-async-std) and
//! [`mcp-sansio-blocking`](https://docs.rs/mcp-sansio-blocking) depend on it, and its API is
//! whatever they need: it changes in any release, patch releases included, with no stability
//! promise and no deprecation period. Depend on one of those bindings instead (each re-exports
//! what its users see, and documents it on its own pages), or on
//! [`mcp_sansio`] itself to drive the protocol with your own I/O.
//!
//! # What is here
//!
//! Nothing in this crate is protocol logic (every protocol decision is `mcp-sansio`'s). It is
//! the binding kernel: what a binding does with an input once it has one lives here, once.
//! The async bindings are facades over it: each implements the small [`Runtime`] trait
//! (spawn, stop a handler run, one timer, its channel type, now) and keeps only its IO
//! (sockets, its HTTP stack, child processes, stdio), type aliases and docs. The blocking
//! binding shares the per-connection state through [`peer::Plumbing`] and keeps its threads.
//!
//! - [`runtime`]: the [`Runtime`] trait, all the kernel asks of an async runtime;
//! - [`peer`]: the per-connection state every binding's actor runs: the application's calls
//!   in flight, the server's handler runs, the messages between them and the actor, and what
//!   the application does with what the peer sends (an [`App`](peer::App) of closures);
//! - [`driver`]: the async bindings' actor that owns one session over a byte stream;
//! - [`server`]: the catalog-and-handlers [`Registry`](server::Registry) every binding's
//!   `ServerBuilder` fills, and the async bindings' builder, handler `Context` and dispatcher;
//! - [`elicit`]: typed input from the user (`Context::elicit`): the form derived from a
//!   Rust type, the question, the answer decoded; [`sample`]: the text of a sampling
//!   (`Context::sample_text`);
//! - [`client`] and [`calls`]: the errors every client shares, the async bindings' typed calls
//!   and `ClientOptions`, and those calls as sans-IO exchanges;
//! - [`push`]: the hub of a server's live connections, and the changes its handle pushes
//!   to them (resource updates, list changes, the HTTP core's tool cache);
//! - [`trace`]: the spans and events every binding emits through `tracing` (their names,
//!   targets, levels and fields);
//! - [`chan`]: the kernel's own runtime-neutral channels;
//! - [`memory`]: in-memory connections (a client wired to a server in the same process,
//!   the bindings' `Client::in_memory`): byte pipes both the async actors and threads drive;
//! - `alarm`: one timer per connection, moved only when the core's deadline comes earlier;
//! - `stdio` (Unix): this process's stdin and stdout as pipes an event loop can drive;
//! - `http` (feature `http`): the Streamable HTTP front ends' state around the core's
//!   `HttpServer` and `ClientTransport`, and conversions to the `http` crate's types;
//!   `http_client` and `http_server`: the async bindings' HTTP actors over that state;
//!   `http_options`: how every binding's HTTP client reaches its server (headers, roots,
//!   proxy, timeouts); `tunnel`: the proxy's `CONNECT` request and reply; `net_error`:
//!   why a client could not reach its server, in the same words in every binding;
//! - `tls` (feature `tls`): HTTPS: the rustls client configuration (the platform's roots
//!   and the options' own, on ring), the server's `TlsIdentity`, handshake errors in words;
//! - `auth` (feature `auth`): the OAuth client's options, the `private_key_jwt` signer, DPoP
//!   keys, the headless user agent's redirect following, JWT verification, and the protected
//!   server's gate.
//!
//! # Example
//!
//! A typed call is a sans-IO [`Exchange`](calls::Exchange): it says which request to send and
//! reads what comes back, and each binding's `Client` only moves the bytes. Here `call_tool`
//! with the request answered by hand:
//!
//! ```
//! use mcp_sansio::RequestOptions;
//! use mcp_sansio_runtime::calls::{self, Exchange, Next};
//! use serde_json::value::RawValue;
//!
//! let mut call = calls::call_tool("echo", serde_json::Map::new(), RequestOptions::default());
//! let Next::Send(request) = call.step(None)? else { unreachable!("a call sends first") };
//! assert_eq!(request.method, "tools/call");
//! assert_eq!(request.params.get(), r#"{"name":"echo","arguments":{}}"#);
//!
//! // A binding sends `request` and feeds the result back
//! let result = RawValue::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.into())?;
//! let Next::Done(result) = call.step(Some(result))? else { unreachable!("one request") };
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod alarm;
pub mod api;
mod arguments;
#[cfg(feature = "auth")]
pub mod auth;
pub mod calls;
pub mod chan;
pub mod client;
mod connecting;
pub mod driver;
pub mod elicit;
#[cfg(feature = "http")]
pub mod endpoint;
mod error;
#[cfg(feature = "http")]
pub mod h1;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod http_client;
#[cfg(feature = "http")]
pub mod http_options;
#[cfg(feature = "http")]
pub mod http_server;
pub mod io;
pub mod memory;
#[cfg(feature = "http")]
pub mod net_error;
pub mod peer;
pub mod push;
#[cfg(feature = "redis")]
pub mod redis_store;
pub mod request;
pub mod runtime;
pub mod sample;
pub mod server;
mod serving;
#[cfg(unix)]
pub mod stdio;
pub mod store;
#[cfg(feature = "tls")]
pub mod tls;
pub mod trace;
#[cfg(feature = "http")]
pub mod tunnel;
#[cfg(feature = "schemars")]
pub mod typed;

pub use client::Client;
#[cfg(feature = "http")]
pub use io::HttpIo;
#[cfg(feature = "tls")]
pub use io::TlsIo;
pub use io::{RuntimeIo, StartedChild};
pub use runtime::Runtime;
pub use serving::Server;

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
