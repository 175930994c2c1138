//! The engine every sub-machine works on: [`Core`], everything of a session but the input
//! framing, with its primitives (clock, limits, capabilities, closing)

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use serde_json::value::RawValue;

use super::batch::Batches;
use super::inbound_table::InboundTable;
use super::outbound_table::OutboundTable;
use super::phase::Phase;
use super::subscription_table::Subscriptions;
use super::task_store::SharedState;
use super::task_table::ServerTasks;
use super::transmit_queue::TransmitQueue;
use super::{
    CallError, Caller, ClientConfig, CloseReason, Event, Limits, OutboundId, PeerInfo,
    ServerConfig, Timeouts,
};
use crate::jsonrpc::ErrorId;

/// Counters of peer input the session dropped; for diagnostics and tests
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Responses whose id matched no request in flight (late answers to cancelled or
    /// timed-out requests land here)
    pub unknown_responses: u64,
    /// Messages that were not valid JSON-RPC (each answered with an error where JSON-RPC
    /// allows)
    pub invalid_messages: u64,
    /// Valid messages dropped: requests the era forbids, progress for unknown or finished
    /// requests, non-increasing progress, notifications and progress past the overload limit,
    /// and (counted here too) frames read while the caller ignored
    /// [`Session::wants_read`](super::Session::wants_read) and our own output was not being written
    pub dropped_messages: u64,
}

/// Everything but the input framing, so a frame borrowed from the codec can be handled
#[derive(Debug)]
pub(super) struct Core {
    pub(super) role: Side,
    pub(super) phase: Phase,
    pub(super) peer: Option<Arc<PeerInfo>>,
    pub(super) now: Instant,
    pub(super) out: TransmitQueue,
    pub(super) events: VecDeque<Event>,
    pub(super) outbound: OutboundTable,
    pub(super) inbound: InboundTable,
    pub(super) batches: Batches,
    pub(super) stats: Stats,
    /// A command returned `SendError::Blocked`; emit `Event::Unblocked` once drained
    pub(super) blocked: bool,
    /// Complete frames wait in the codec because the application is behind
    pub(super) backlog: bool,
    /// The peer closed its side; we close once every inbound request is answered
    pub(super) eof: bool,
    /// Pre-serialized JSON reused on every message
    pub(super) own_caps_json: Box<str>,
    pub(super) own_info_json: Box<str>,
    /// The capabilities text of the last modern request and its parsed value
    pub(super) last_modern_caps: Option<(Box<str>, Arc<Value>)>,
    /// When the session was created, and the wall-clock anchor if one was given
    pub(super) created: Instant,
    pub(super) wall_anchor: Option<(Instant, u64)>,
    /// The server's task table
    pub(super) server_tasks: ServerTasks,
    /// Client: the tasks behind our calls, task id -> the call's app id
    pub(super) followed: std::collections::HashMap<String, OutboundId>,
    /// Server: listen streams and legacy resource subscriptions
    pub(super) subscriptions: Subscriptions,
    /// Server: tasks shared with other processes (see [`crate::store`])
    pub(super) shared: SharedState,
    /// Who sent the message being processed: the connection's caller
    /// ([`Session::set_caller`]), or the one a message came with
    /// ([`Session::handle_message_as`])
    pub(super) caller: Option<Arc<Caller>>,
}

/// The configuration of this end, by role
#[derive(Debug)]
pub(super) enum Side {
    Client(Arc<ClientConfig>),
    Server(Arc<ServerConfig>),
}

impl Core {
    pub(super) fn new(role: Side, now: Instant, caps_json: String, info_json: String) -> Self {
        Self {
            role,
            phase: Phase::Fresh,
            peer: None,
            now,
            out: TransmitQueue::default(),
            events: VecDeque::new(),
            outbound: OutboundTable::default(),
            inbound: InboundTable::default(),
            batches: Batches::default(),
            stats: Stats::default(),
            blocked: false,
            backlog: false,
            eof: false,
            own_caps_json: caps_json.into(),
            own_info_json: info_json.into(),
            last_modern_caps: None,
            created: now,
            wall_anchor: None,
            server_tasks: ServerTasks::default(),
            followed: std::collections::HashMap::new(),
            subscriptions: Subscriptions::default(),
            shared: SharedState::default(),
            caller: None,
        }
    }

    /// The limits of this session: the configuration's (shared, not copied per session)
    #[inline]
    pub(super) fn limits(&self) -> &Limits {
        match &self.role {
            Side::Client(c) => &c.limits,
            Side::Server(s) => &s.limits,
        }
    }

    /// Our capabilities, as sent: the configuration's
    pub(super) fn own_caps(&self) -> &Value {
        match &self.role {
            Side::Client(c) => &c.capabilities,
            Side::Server(s) => &s.capabilities,
        }
    }

    /// The capabilities of a modern request; a client sends the same text on every request,
    /// so the last one parsed is reused rather than parsed again
    pub(super) fn modern_caps(&mut self, caps: &RawValue) -> Arc<Value> {
        if let Some((text, parsed)) = &self.last_modern_caps
            && **text == *caps.get()
        {
            return Arc::clone(parsed);
        }
        let parsed: Arc<Value> = Arc::new(
            serde_json::from_str(caps.get()).expect("already parsed as JSON by the envelope"),
        );
        self.last_modern_caps = Some((caps.get().into(), Arc::clone(&parsed)));
        parsed
    }

    /// Time never goes backwards
    pub(super) fn tick(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }

    /// Room for more peer input: events drained, requests answered, and our output written
    /// (a peer that floods us without reading our answers stops being read)
    pub(super) fn accepts_input(&self) -> bool {
        !matches!(self.phase, Phase::Closed)
            && self.events.len() < self.limits().max_queued_events
            && self.inbound.len() < self.limits().max_in_flight_inbound
            && self.out.len() <= self.limits().max_queued_bytes
    }

    /// Past the soft limits, because the caller ignored `wants_read`
    pub(super) fn overloaded(&self) -> bool {
        self.events.len() >= self.limits().max_queued_events.saturating_mul(2)
            || self.inbound.len()
                >= self.limits().max_in_flight_inbound + self.limits().max_batch_len
    }

    pub(super) fn extra_methods(&self) -> &[String] {
        match &self.role {
            Side::Client(c) => &c.extra_methods,
            Side::Server(s) => &s.extra_methods,
        }
    }

    /// How to write the id of an error whose request id is unknown
    pub(super) fn unknown_error_id(&self) -> ErrorId<'static> {
        match self.phase.version() {
            Some(v) if !v.omits_unknown_error_id() => ErrorId::Null,
            _ => ErrorId::Omitted,
        }
    }

    // --- shutdown ------------------------------------------------------------------------

    pub(super) fn close_if_drained(&mut self) {
        if self.eof && self.inbound.len() == 0 {
            self.close(CloseReason::PeerClosed);
        }
    }

    pub(super) fn close(&mut self, reason: CloseReason) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        for (_, entry) in self.outbound.drain() {
            if let Some(call) = entry.app() {
                self.events.push_back(Event::Response {
                    id: call.id,
                    outcome: Err(CallError::SessionClosed),
                });
            }
        }
        self.inbound.clear();
        self.batches.clear();
        self.subscriptions = Subscriptions::default();
        self.followed.clear();
        self.phase = Phase::Closed;
        self.backlog = false;
        // Commands fail with `Closed` from now on; `Unblocked` would follow `Closed`.
        self.blocked = false;
        self.events.push_back(Event::Closed { reason });
    }
}

impl Side {
    pub(super) fn is_client(&self) -> bool {
        matches!(self, Self::Client(_))
    }

    pub(super) fn timeouts(&self) -> Timeouts {
        match self {
            Self::Client(c) => c.timeouts,
            Self::Server(s) => s.timeouts,
        }
    }
}
