//! Requests we sent and the peer has not answered yet, with their deadlines

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use super::ids::InboundId;
use super::tasks::client::FollowedTask;

/// The task methods a client sends for a task it follows
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskOp {
    Get,
    Result,
    Update,
    Cancel,
}

/// Who owns an outbound request: the application, the lifecycle, or a handler's input ask
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    App,
    /// A legacy-era input request (elicitation, sampling, roots) asked by the handler of an
    /// inbound request
    Input(InboundId),
    /// A 2025-11-25 input request for a server task (by the task's table id)
    TaskInput(u64),
    /// A task request for the task behind one of the application's calls (by its app id)
    Task(u64, TaskOp),
    /// The legacy handshake; never cancelled
    Initialize,
    /// The modern probe
    Discover,
}

#[derive(Debug)]
pub(crate) struct OutEntry {
    pub(crate) owner: Owner,
    /// The id the application knows ([`OutboundId`](super::OutboundId)); equals the first
    /// wire id, kept when a multi-round-trip retry goes out under a new wire id
    pub(crate) app_id: u64,
    /// Multi-round-trip state (modern era): rounds so far and the server's opaque state
    pub(crate) rounds: u8,
    pub(crate) request_state: Option<String>,
    /// The key of an input ask (`Owner::Input`)
    pub(crate) input_key: Option<Box<str>>,
    /// Waiting for the application's input before a retry (no deadline meanwhile)
    pub(crate) awaiting_input: bool,
    /// The client asked for a task (2025-11-25 `params.task`)
    pub(crate) task_requested: bool,
    /// The task behind this call, once the server created one; `deadline` is then the next
    /// poll
    pub(crate) task: Option<Box<FollowedTask>>,
    /// Kept for retries (modern era) and diagnostics
    pub(crate) method: Box<str>,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) progress: bool,
    pub(crate) last_progress: Option<f64>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reset_on_progress: bool,
    /// The hard cap, from `max_total`
    pub(crate) cap: Option<Instant>,
    pub(crate) deadline: Option<Instant>,
}

impl OutEntry {
    /// A request with no timeout, no progress and no multi-round-trip state yet
    pub(crate) fn new(owner: Owner, method: &str, params: Option<Box<RawValue>>) -> Self {
        Self {
            owner,
            app_id: 0,
            rounds: 0,
            request_state: None,
            input_key: None,
            awaiting_input: false,
            task_requested: false,
            task: None,
            method: method.into(),
            params,
            progress: false,
            last_progress: None,
            timeout: None,
            reset_on_progress: false,
            cap: None,
            deadline: None,
        }
    }
}

/// The in-flight table: wire ids are the keys, allocated in increasing order
#[derive(Debug)]
pub(crate) struct OutboundTable {
    next_id: u64,
    entries: HashMap<u64, OutEntry>,
    deadlines: BTreeSet<(Instant, u64)>,
    app_count: usize,
    /// Application id -> current wire id, for requests re-sent under a new wire id
    reissued: HashMap<u64, u64>,
}

impl Default for OutboundTable {
    fn default() -> Self {
        Self {
            next_id: 1,
            entries: HashMap::new(),
            deadlines: BTreeSet::new(),
            app_count: 0,
            reissued: HashMap::new(),
        }
    }
}

impl OutboundTable {
    /// Releases spare capacity (idle sessions)
    pub(crate) fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        self.reissued.shrink_to_fit();
    }

    /// Requests of the application in flight
    pub(crate) fn app_len(&self) -> usize {
        self.app_count
    }

    /// Stores a new request under a fresh wire id, which is also its application id
    pub(crate) fn insert(&mut self, mut entry: OutEntry) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        entry.app_id = id;
        if let Some(d) = entry.deadline {
            self.deadlines.insert((d, id));
        }
        if entry.owner == Owner::App {
            self.app_count += 1;
        }
        self.entries.insert(id, entry);
        id
    }

    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut OutEntry> {
        self.entries.get_mut(&id)
    }

    /// The wire id a request currently travels under
    pub(crate) fn wire_of(&self, app_id: u64) -> u64 {
        self.reissued.get(&app_id).copied().unwrap_or(app_id)
    }

    /// Moves a request to a fresh wire id (a multi-round-trip retry); returns the new id
    pub(crate) fn reissue(&mut self, wire: u64, deadline: Option<Instant>) -> Option<u64> {
        let mut entry = self.remove(wire)?;
        let new = self.next_id;
        self.next_id += 1;
        entry.deadline = deadline;
        if let Some(d) = deadline {
            self.deadlines.insert((d, new));
        }
        if entry.owner == Owner::App {
            self.app_count += 1;
        }
        self.reissued.insert(entry.app_id, new);
        self.entries.insert(new, entry);
        Some(new)
    }

    /// Puts back a request taken out by [`Self::remove`], under the same wire id
    pub(crate) fn restore(&mut self, wire: u64, entry: OutEntry) {
        if let Some(d) = entry.deadline {
            self.deadlines.insert((d, wire));
        }
        if entry.owner == Owner::App {
            self.app_count += 1;
        }
        if entry.app_id != wire {
            self.reissued.insert(entry.app_id, wire);
        }
        self.entries.insert(wire, entry);
    }

    /// Wire ids of the live input requests made for one task
    pub(crate) fn task_inputs_of(&self, task: u64) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.owner == Owner::TaskInput(task))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Wire ids of the input asks made for one inbound request
    pub(crate) fn inputs_of(&self, inbound: InboundId) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.owner == Owner::Input(inbound))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<OutEntry> {
        let entry = self.entries.remove(&id)?;
        if entry.app_id != id {
            self.reissued.remove(&entry.app_id);
        }
        if let Some(d) = entry.deadline {
            self.deadlines.remove(&(d, id));
        }
        if entry.owner == Owner::App {
            self.app_count -= 1;
        }
        Some(entry)
    }

    /// Moves a request's deadline
    pub(crate) fn set_deadline(&mut self, id: u64, deadline: Option<Instant>) {
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
    pub(crate) fn expired(&self, now: Instant) -> Option<u64> {
        self.deadlines
            .first()
            .filter(|(d, _)| *d <= now)
            .map(|(_, id)| *id)
    }

    /// Removes every request, in id order
    pub(crate) fn drain(&mut self) -> Vec<(u64, OutEntry)> {
        let mut all: Vec<_> = self.entries.drain().collect();
        all.sort_unstable_by_key(|(id, _)| *id);
        self.deadlines.clear();
        self.app_count = 0;
        self.reissued.clear();
        all
    }
}
