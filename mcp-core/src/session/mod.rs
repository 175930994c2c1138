//! The session engine: one MCP connection as a pure state machine, a [`ClientSession`] or a
//! [`ServerSession`]
//!
//! Both are [`Session`] over their [`Role`]: what both ends do (feed bytes, drain transmits
//! and events, send requests, answer them) is written once, what only one end does is a
//! method of that end's type. See the crate docs for the run loop.
//!
//! Inside, the sub-machines depend one way, each file's `impl Core` calling only the layers
//! below it (checked, for every file of this folder, by `tests/session/layers.rs`): the
//! core's primitives (`engine.rs`), then writing (`outgoing.rs`), then followed tasks,
//! subscriptions and the handshake (`tasks/client.rs`, `subscriptions.rs`, `lifecycle.rs`),
//! asking for input (`ask.rs`), the shared task store's operations (`tasks/shared.rs`),
//! server tasks (`tasks/server.rs`), what the store answers (`tasks/shared_replies.rs`), and
//! on top the dispatchers that route what comes in to them: messages from the peer
//! (`receive.rs`) and deadlines and the peer's end (`timers.rs`). The public [`Session`]
//! methods (`machine.rs`, `inbound_handle.rs`, `typed.rs`) call into all of them. Below the
//! engine is the data every layer uses, which names no `Core`: the tables
//! (`outbound_table.rs`, `inbound_table.rs`, `subscription_table.rs`, `task_table.rs`,
//! `task_store.rs`, `transmit_queue.rs`, `batch.rs`), the phase (`phase.rs`), ids, events,
//! configuration and the literal gating table (`gating.rs`). This file only declares and
//! re-exports.

mod ask;
mod batch;
mod caller;
mod config;
mod engine;
mod error;
mod event;
mod gating;
mod header_fields;
mod ids;
mod inbound_handle;
mod inbound_table;
mod lifecycle;
mod machine;
mod outbound_table;
mod outgoing;
mod params;
mod phase;
mod receive;
pub mod role;
mod seal;
mod subscription_table;
mod subscriptions;
mod task_store;
mod task_table;
mod tasks;
mod timers;
mod transmit_queue;
mod typed;

pub use crate::schema::ListKind;
pub use ask::{AskError, Asked, InputError};
pub use caller::{Caller, Principal};
pub use config::{ClientConfig, EraMode, Limits, RequestOptions, ServerConfig, Timeouts};
pub use engine::Stats;
use engine::{Core, Side};
pub use error::{CancelError, ProgressError, RespondError, SendError};
pub(crate) use event::Event;
pub use event::{CallError, CloseReason, InboundNotification, InboundRequest, Progress};
pub use header_fields::HeaderFields;
pub use ids::{InboundId, InputId, OutboundId, Responder, TaskId};
pub use inbound_handle::Inbound;
pub use machine::{ClientSession, ServerSession, Session};
use outgoing::Answer;
pub(crate) use params::{CallSpans, ParamsView, ParamsWithMeta};
pub use phase::PeerInfo;
pub use role::{ClientEvent, Role, ServerEvent};
pub use subscription_table::{ListenFilter, subscription_covers};
#[doc(hidden)]
pub use task_table::task_wire_id;
pub use task_table::{TASKS_EXTENSION, TaskError, TaskOptions, TaskUpdate};
pub use transmit_queue::{Relation, Transmit};
pub use typed::Pending;
