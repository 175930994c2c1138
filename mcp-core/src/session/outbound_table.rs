//! Requests we sent and the peer has not answered yet, with their deadlines

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::id_map::{IdMap, id_map};

use serde_json::value::RawValue;

use super::ids::{InboundId, OutboundId, TaskId};
use crate::schema::TaskStatus;

/// A task the client follows for one of its requests
#[derive(Debug, Clone)]
pub(crate) struct FollowedTask {
    pub(crate) task_id: String,
    pub(crate) status: TaskStatus,
    pub(crate) poll_interval: Duration,
    /// 2025-11-25: `tasks/result` was sent (a poll and a notification may both report the
    /// end; the result is fetched once)
    pub(crate) result_asked: bool,
}

/// The task methods a client sends for a task it follows
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskOp {
    Get,
    Result,
    Update,
    Cancel,
}

/// The JSON-RPC id a request we sent travels under: the key of the outbound table
///
/// Allocated in increasing order and never reused. A multi-round-trip retry goes out under a
/// new one; the application keeps its [`OutboundId`], the first wire id of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct WireId(pub(crate) u64);

/// Who owns an outbound request, with what only that owner needs
#[derive(Debug)]
pub(crate) enum Owner {
    /// A request of the application
    App(AppCall),
    /// A legacy-era input request (elicitation, sampling, roots) asked by the handler of an
    /// inbound request, under the handler's key
    Input { request: InboundId, key: Box<str> },
    /// A 2025-11-25 input request for a server task, under the task's key
    TaskInput { task: TaskId, key: Box<str> },
    /// A task request for the task behind one of the application's calls
    Task { call: OutboundId, op: TaskOp },
    /// The legacy handshake; never cancelled
    Initialize,
    /// The modern probe
    Discover,
}

/// The state of one of the application's requests
#[derive(Debug)]
pub(crate) struct AppCall {
    /// The id the application knows; set by [`OutboundTable::insert`] to the first wire id
    /// and kept when a multi-round-trip retry goes out under a new wire id
    pub(crate) id: OutboundId,
    /// Multi-round-trip state (modern era): rounds so far and the server's opaque state
    pub(crate) rounds: u8,
    pub(crate) request_state: Option<String>,
    /// Waiting for the application's input before a retry (no deadline meanwhile)
    pub(crate) awaiting_input: bool,
    /// The client asked for a task (2025-11-25 `params.task`)
    pub(crate) task_requested: bool,
    /// The task behind this call, once the server created one; the entry's deadline is
    /// then the next poll
    pub(crate) task: Option<Box<FollowedTask>>,
    /// Progress was asked for (the progress token is the application id)
    pub(crate) progress: bool,
    pub(crate) last_progress: Option<f64>,
    pub(crate) reset_on_progress: bool,
    /// The hard cap, from `max_total`
    pub(crate) cap: Option<Instant>,
}

impl AppCall {
    /// A call with no progress, no task and no multi-round-trip state yet
    pub(crate) fn new() -> Self {
        Self {
            id: OutboundId(0),
            rounds: 0,
            request_state: None,
            awaiting_input: false,
            task_requested: false,
            task: None,
            progress: false,
            last_progress: None,
            reset_on_progress: false,
            cap: None,
        }
    }

    /// Whether the request is on the wire now: not waiting for input, not behind a task
    pub(crate) fn on_the_wire(&self) -> bool {
        !self.awaiting_input && self.task.is_none()
    }
}

/// A request in flight: what to send it again with, its timeout and its owner
#[derive(Debug)]
pub(crate) struct OutEntry {
    pub(crate) owner: Owner,
    /// Kept for retries (modern era) and diagnostics; a method of the spec is not copied
    pub(crate) method: Cow<'static, str>,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) deadline: Option<Instant>,
}

impl OutEntry {
    /// A request of `owner` with no timeout
    pub(crate) fn new(owner: Owner, method: &str, params: Option<Box<RawValue>>) -> Self {
        Self {
            owner,
            method: super::gating::static_name(method)
                .map_or_else(|| Cow::Owned(method.to_owned()), Cow::Borrowed),
            params,
            timeout: None,
            deadline: None,
        }
    }

    /// A request of `owner` timing out `timeout` after `now`
    pub(crate) fn with_timeout(
        owner: Owner,
        method: &str,
        params: Option<Box<RawValue>>,
        now: Instant,
        timeout: Option<Duration>,
    ) -> Self {
        Self {
            timeout,
            deadline: timeout.map(|t| now + t),
            ..Self::new(owner, method, params)
        }
    }

    /// The application's call, if the application owns the request
    pub(crate) fn app(&self) -> Option<&AppCall> {
        match &self.owner {
            Owner::App(call) => Some(call),
            _ => None,
        }
    }

    pub(crate) fn app_mut(&mut self) -> Option<&mut AppCall> {
        match &mut self.owner {
            Owner::App(call) => Some(call),
            _ => None,
        }
    }

    /// The key of an input request (legacy ask or task input)
    pub(crate) fn input_key(&self) -> &str {
        match &self.owner {
            Owner::Input { key, .. } | Owner::TaskInput { key, .. } => key,
            _ => "",
        }
    }
}

/// The in-flight table: wire ids are the keys, allocated in increasing order
#[derive(Debug)]
pub(crate) struct OutboundTable {
    next_id: u64,
    entries: IdMap<WireId, OutEntry>,
    deadlines: BTreeSet<(Instant, WireId)>,
    app_count: usize,
    /// Application id -> current wire id, for requests re-sent under a new wire id
    reissued: IdMap<OutboundId, WireId>,
}

impl Default for OutboundTable {
    fn default() -> Self {
        Self {
            next_id: 1,
            entries: id_map(),
            deadlines: BTreeSet::new(),
            app_count: 0,
            reissued: id_map(),
        }
    }
}

impl OutboundTable {
    /// Releases spare capacity (idle sessions)
    pub(crate) fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        self.reissued.shrink_to_fit();
    }

    /// Whether any request of ours (the application's or the core's own) is in flight
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Requests of the application in flight
    pub(crate) fn app_len(&self) -> usize {
        self.app_count
    }

    /// Stores a new request under a fresh wire id, which is also its application id
    pub(crate) fn insert(&mut self, mut entry: OutEntry) -> WireId {
        let id = self.allocate();
        if let Some(call) = entry.app_mut() {
            call.id = OutboundId(id.0);
            self.app_count += 1;
        }
        if let Some(d) = entry.deadline {
            self.deadlines.insert((d, id));
        }
        self.entries.insert(id, entry);
        id
    }

    fn allocate(&mut self) -> WireId {
        let id = WireId(self.next_id);
        self.next_id += 1;
        id
    }

    pub(crate) fn get_mut(&mut self, id: WireId) -> Option<&mut OutEntry> {
        self.entries.get_mut(&id)
    }

    /// The wire id an application's request currently travels under
    pub(crate) fn wire_of(&self, id: OutboundId) -> WireId {
        self.reissued.get(&id).copied().unwrap_or(WireId(id.0))
    }

    /// The application's request traveling under `wire`, if any
    pub(crate) fn app_of(&self, wire: WireId) -> Option<OutboundId> {
        self.entries
            .get(&wire)
            .and_then(OutEntry::app)
            .map(|c| c.id)
    }

    /// Whether the application's call `id` is in flight
    pub(crate) fn has_call(&self, id: OutboundId) -> bool {
        self.entries
            .get(&self.wire_of(id))
            .and_then(OutEntry::app)
            .is_some()
    }

    /// The application's call `id`, if it is in flight
    pub(crate) fn call_mut(&mut self, id: OutboundId) -> Option<&mut AppCall> {
        let wire = self.wire_of(id);
        self.entries.get_mut(&wire).and_then(OutEntry::app_mut)
    }

    /// Moves a request to a fresh wire id (a multi-round-trip retry); returns the new id
    pub(crate) fn reissue(&mut self, wire: WireId, deadline: Option<Instant>) -> Option<WireId> {
        let mut entry = self.remove(wire)?;
        let new = self.allocate();
        entry.deadline = deadline;
        self.restore(new, entry);
        Some(new)
    }

    /// Puts back a request taken out by [`Self::remove`], under the same wire id
    pub(crate) fn restore(&mut self, wire: WireId, entry: OutEntry) {
        if let Some(d) = entry.deadline {
            self.deadlines.insert((d, wire));
        }
        if let Some(call) = entry.app() {
            self.app_count += 1;
            if call.id.0 != wire.0 {
                self.reissued.insert(call.id, wire);
            }
        }
        self.entries.insert(wire, entry);
    }

    /// Wire ids of the live input requests made for one task
    pub(crate) fn task_inputs_of(&self, task: TaskId) -> Vec<WireId> {
        let mut ids: Vec<WireId> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.owner, Owner::TaskInput { task: t, .. } if t == task))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Wire ids of the input asks made for one inbound request
    pub(crate) fn inputs_of(&self, inbound: InboundId) -> Vec<WireId> {
        let mut ids: Vec<WireId> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e.owner, Owner::Input { request, .. } if request == inbound))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    pub(crate) fn remove(&mut self, id: WireId) -> Option<OutEntry> {
        let entry = self.entries.remove(&id)?;
        if let Some(call) = entry.app() {
            self.app_count -= 1;
            if call.id.0 != id.0 {
                self.reissued.remove(&call.id);
            }
        }
        if let Some(d) = entry.deadline {
            self.deadlines.remove(&(d, id));
        }
        Some(entry)
    }

    /// Moves a request's deadline
    pub(crate) fn set_deadline(&mut self, id: WireId, deadline: Option<Instant>) {
        let Some(entry) = self.entries.get_mut(&id) else {
            return;
        };
        if let Some(d) = entry.deadline {
            self.deadlines.remove(&(d, id));
        }
        entry.deadline = deadline;
        if let Some(d) = deadline {
            self.deadlines.insert((d, id));
        }
    }

    /// The earliest deadline
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(d, _)| *d)
    }

    /// The request whose deadline passed first, if any passed by `now`
    pub(crate) fn expired(&self, now: Instant) -> Option<WireId> {
        self.deadlines
            .first()
            .filter(|(d, _)| *d <= now)
            .map(|(_, id)| *id)
    }

    /// Removes every request, in id order
    pub(crate) fn drain(&mut self) -> Vec<(WireId, OutEntry)> {
        let mut all: Vec<_> = self.entries.drain().collect();
        all.sort_unstable_by_key(|(id, _)| *id);
        self.deadlines.clear();
        self.app_count = 0;
        self.reissued.clear();
        all
    }
}
