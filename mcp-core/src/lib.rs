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
//! 2. One owner, `&mut self`. [`Session`] is `Send + Sync + UnwindSafe`.
//! 3. Inputs (`handle_*`) never fail and never panic: what the peer did becomes events,
//!    automatic JSON-RPC error replies, or [`Event::Closed`]. Commands fail only for local
//!    misuse, and leave the session unchanged when they do.
//! 4. Exactly once: every outbound request ends in exactly one [`Event::Response`]; every
//!    inbound request is answered at most once, through its single-use [`Responder`].
//! 5. Everything is bounded (see [`Limits`]); a limit reached is a visible signal
//!    ([`Session::wants_read`], [`SendError::Blocked`], an error reply).
//!
//! # The run loop
//!
//! A client and a server session joined by two in-memory pipes; a real binding writes the
//! transmits to its transport instead.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//! use mcp_sansio::{ClientConfig, Event, EraMode, Implementation, ProtocolVersion, ServerConfig, Session};
//! use serde_json::{json, value::RawValue};
//!
//! let now = Instant::now();
//! let mut client_config = ClientConfig::new(Implementation::new("demo-client", "1.0"));
//! client_config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
//! let mut server_config = ServerConfig::new(Implementation::new("demo-server", "1.0"));
//! server_config.capabilities = json!({"tools": {}});
//! let mut client = Session::client(Arc::new(client_config), now);
//! let mut server = Session::server(Arc::new(server_config), now);
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
//!         if let Event::Request(request) = event {
//!             let result = RawValue::from_string(
//!                 json!({"content": [{"type": "text", "text": "hello"}]}).to_string(),
//!             ).unwrap();
//!             server.respond(request.responder, &result).unwrap();
//!         }
//!     }
//!     while let Some(event) = client.poll_event() {
//!         match event {
//!             Event::Ready { .. } => {
//!                 let params = RawValue::from_string(json!({"name": "greet"}).to_string()).unwrap();
//!                 call = Some(client.send_request(now, "tools/call", Some(params), Default::default()).unwrap());
//!             }
//!             Event::Response { id, outcome } if Some(id) == call => answer = Some(outcome.unwrap()),
//!             _ => {}
//!         }
//!     }
//! }
//! assert!(answer.unwrap().get().contains("hello"));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(clippy::disallowed_methods)]

pub mod auth;
pub mod client;
pub mod codec;
pub mod http;
pub mod jsonrpc;
mod raw;
pub mod schema;
pub mod server;
pub mod session;
#[cfg(feature = "testing")]
pub mod testing;
pub mod uri_template;
pub mod version;

pub use jsonrpc::{ErrorObject, RequestId};
pub use schema::Implementation;
pub use session::{
    AskError, Asked, CallError, CancelError, ClientConfig, CloseReason, EraMode, Event, InboundId,
    InboundNotification, InboundRequest, InputError, InputId, Limits, ListKind, OutboundId,
    PeerInfo, Pending, Progress, ProgressError, Relation, RequestOptions, RespondError, Responder,
    SendError, ServerConfig, Session, Side, Stats, TASKS_EXTENSION, TaskError, TaskId, TaskOptions,
    TaskUpdate, Timeouts, Transmit,
};
pub use version::{Era, ProtocolVersion};

/// The README (for crates.io), whose examples run as doc tests too
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
