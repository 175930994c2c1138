//! Sans-IO Model Context Protocol engine
//!
//! `mcp-sansio` is the protocol, and only the protocol: pure state machines that consume bytes
//! and emit events. It does no I/O, reads no clock, starts no thread and needs no async
//! runtime, so the same code runs under tokio, async-std, smol, plain threads, a GUI or game
//! loop, Python's asyncio, or a unit test on a fake clock.
//!
//! # The contract
//!
//! 1. No I/O, no clock, no threads, no async, no global state. Time comes in as `now:
//!    Instant` arguments.
//! 2. One owner, `&mut self`. The two ends are two types, [`ClientSession`] and
//!    [`ServerSession`] (a [`Session`] over its [`Role`](session::Role)), each with its own
//!    events ([`ClientEvent`], [`ServerEvent`]); what only one end may do is a method of that
//!    end alone, so a role mismatch is a compile error. Both are `Send + Sync + UnwindSafe`.
//! 3. Inputs (`handle_*`) never fail and never panic: what the peer did becomes events,
//!    automatic JSON-RPC error replies, or a `Closed` event. Commands fail only for local
//!    misuse, and leave the session unchanged when they do.
//! 4. Exactly once: every outbound request ends in exactly one `Response` event; every
//!    inbound request is answered at most once, through its single-use [`Responder`]. What a
//!    server does for a request meanwhile (progress, asking for input, a task, notifications)
//!    goes through the borrowing handle [`ServerSession::inbound`](Session::inbound).
//! 5. Everything is bounded (see [`Limits`]); a limit reached is a visible signal
//!    ([`Session::wants_read`], [`SendError::Blocked`], an error reply).
//! 6. One API layer: typed commands first (`send_request::<M>`, `respond`), raw JSON as the
//!    explicit escape hatch (`send_request_raw`, `respond_raw`).
//! 7. Outputs only drain. `poll_transmit`, `poll_event` and `poll_timeout` process no input;
//!    input is processed by the calls that bring a `now` (the `handle_*` inputs, and the
//!    commands that can arm a timer: sending a request, asking for input, starting a task,
//!    cancelling, closing). Input that waited while the application was behind is processed
//!    by `handle_timeout`, which `poll_timeout` makes due at once when it can be.
//!
//! # The run loop
//!
//! A client and a server session joined by two in-memory pipes; a real binding writes the
//! transmits to its transport instead.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//! use mcp_sansio::schema::{CallToolParams, CallToolResult, method::CallTool};
//! use mcp_sansio::{
//!     ClientConfig, ClientEvent, ClientSession, EraMode, Implementation, ProtocolVersion,
//!     ServerConfig, ServerEvent, ServerSession,
//! };
//! use serde_json::json;
//!
//! let now = Instant::now();
//! let mut client_config = ClientConfig::new(Implementation::new("demo-client", "1.0"));
//! client_config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
//! let mut server_config = ServerConfig::new(Implementation::new("demo-server", "1.0"));
//! server_config.capabilities = json!({"tools": {}});
//! let mut client = ClientSession::new(Arc::new(client_config), now);
//! let mut server = ServerSession::new(Arc::new(server_config), now);
//!
//! let mut call = None;
//! let mut answer = None;
//! let mut buf = Vec::new();
//! for _ in 0..10 {
//!     // Move bytes both ways.
//!     while client.poll_transmit(&mut buf).is_some() {}
//!     server.handle_bytes(now, &buf);
//!     buf.clear();
//!     while server.poll_transmit(&mut buf).is_some() {}
//!     client.handle_bytes(now, &buf);
//!     buf.clear();
//!     // React to events.
//!     while let Some(event) = server.poll_event() {
//!         if let ServerEvent::Request(request) = event {
//!             server.respond(request.responder, CallToolResult::text("hello")).unwrap();
//!         }
//!     }
//!     while let Some(event) = client.poll_event() {
//!         match event {
//!             ClientEvent::Ready { .. } => {
//!                 let params = CallToolParams::new("greet");
//!                 call = Some(client.send_request::<CallTool>(now, params, Default::default()).unwrap());
//!             }
//!             ClientEvent::Response { id, outcome } if Some(id) == call.map(|c| c.id()) => {
//!                 answer = Some(call.unwrap().decode(outcome).unwrap());
//!             }
//!             _ => {}
//!         }
//!     }
//! }
//! assert_eq!(answer.unwrap().content[0].as_text(), Some("hello"));
//! ```
//!
//! # Modules
//!
//! Each module has one job; they depend one way, lower before higher:
//! `codec` → `jsonrpc` → `session` → `http`, with `version` and `schema` beneath all of them,
//! `auth` beside `http` (`http` uses `auth`, never the reverse), and the application helpers
//! `client` and `server` on top.
//!
//! | module | its job |
//! |---|---|
//! | [`version`] | the protocol versions and the two eras they belong to |
//! | [`codec`] | framing: newline-delimited JSON and server-sent events |
//! | [`jsonrpc`] | the JSON-RPC 2.0 envelope: ids, error objects and codes, decoding |
//! | [`schema`] | the typed messages of every protocol version, and fitting them to a version |
//! | [`session`] | the session engine: one connection's lifecycle, correlation, timers, progress, cancellation, input, tasks and subscriptions, as [`ClientSession`] and [`ServerSession`] |
//! | [`http`] | the Streamable HTTP rules for both wires: the server endpoint, the client transport, header rules, and the protected resource's answers |
//! | [`auth`] | OAuth 2.1 for MCP clients: discovery, registration, PKCE, tokens, DPoP, as one machine the binding performs the requests of |
//! | [`client`] | application helpers for clients: checking a server's answers (output schemas, caching hints) and a response cache |
//! | [`server`] | application helpers for servers: the catalog of tools, resources and prompts, routing, argument checks, handler runs |
//! | [`uri_template`] | RFC 6570 URI templates: parse, expand, and match a URI back to its variables (the catalog's resource templates use it) |
//! | `testing` | (feature `testing`) a deterministic test kit: two sessions joined in memory, on a fake clock |
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(clippy::disallowed_methods)]

pub mod auth;
pub mod client;
pub mod codec;
pub mod http;
pub mod id_map;
pub mod jsonrpc;
mod raw;
pub mod schema;
pub mod server;
pub mod session;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;
pub mod uri_template;
pub mod version;

pub use jsonrpc::{ErrorObject, RequestId};
pub use schema::Implementation;
pub use session::{
    AskError, Asked, CallError, CancelError, ClientConfig, ClientEvent, ClientSession, CloseReason,
    EraMode, InboundId, InboundNotification, InboundRequest, InputError, InputId, Limits, ListKind,
    OutboundId, PeerInfo, Pending, Progress, ProgressError, Relation, RequestOptions, RespondError,
    Responder, SendError, ServerConfig, ServerEvent, ServerSession, Session, Stats,
    TASKS_EXTENSION, TaskError, TaskId, TaskOptions, TaskUpdate, Timeouts, Transmit,
};
pub use version::{Era, ProtocolVersion};

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
