//! Requests we sent and the peer has not answered yet, with their deadlines

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

/// Who owns an outbound request: the application, or the lifecycle
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    App,
    /// The legacy handshake; never cancelled
    Initialize,
    /// The modern probe
    Discover,
}

#[derive(Debug)]
pub(crate) struct OutEntry {
    pub(crate) owner: Owner,
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

/// The in-flight table: wire ids are the keys, allocated in increasing order
#[derive(Debug)]
pub(crate) struct OutboundTable {
    next_id: u64,
    entries: HashMap<u64, OutEntry>,
    deadlines: BTreeSet<(Instant, u64)>,
    app_count: usize,
}

impl Default for OutboundTable {
    fn default() -> Self {
        Self {
            next_id: 1,
            entries: HashMap::new(),
            deadlines: BTreeSet::new(),
            app_count: 0,
        }
    }
}

impl OutboundTable {
    /// Requests of the application in flight
    pub(crate) fn app_len(&self) -> usize {
        self.app_count
    }

    pub(crate) fn insert(&mut self, entry: OutEntry) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
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

    pub(crate) fn remove(&mut self, id: u64) -> Option<OutEntry> {
        let entry = self.entries.remove(&id)?;
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
        all
    }
}
