//! Sharing tasks and changes between server processes, sans-IO: what to write, read and
//! publish, and what to do with what came back
//!
//! One server process keeps its tasks in its sessions' tables. Several processes behind a
//! load balancer share them through a store (Redis in the bindings, [`MemoryStore`] in one
//! process and in tests) once [`ServerConfig::shared_tasks`](crate::ServerConfig::shared_tasks)
//! is set. The rules stay in the session: status transitions, ttl, what every `tasks/*`
//! request answers. Only records and signals move:
//!
//! - **Records.** The session that runs a task writes its record ([`StoreOp::Put`]) when it
//!   is created (the task handle goes to the client only once that write succeeded), at every
//!   change, and every third of [`SharedTasks::lease`] while it runs (its lease). A write
//!   never replaces a terminal record: a terminal status never changes, whichever process
//!   wrote it. A `tasks/*` request for a task another process runs reads its record
//!   ([`StoreOp::Get`]); a running task whose lease ended reads `failed` ("the server process
//!   running this task stopped"), and that outcome is written back.
//! - **Signals** ([`Signal`], [`StoreOp::Publish`]): `tasks/cancel` and `tasks/update` reach
//!   the process that runs the handler; a task's end wakes 2025-11-25 `tasks/result`
//!   requests waiting on other processes (which also re-read every third of the lease, so a
//!   lost signal delays them, no more); list and resource changes reach every process's
//!   subscribers.
//!
//! A binding drains [`ServerSession::poll_store`](crate::ServerSession::poll_store) (or
//! [`HttpServer::poll_store`](crate::http::HttpServer::poll_store)) **in order**, runs each
//! operation, answers `Put` and `Get` with
//! [`handle_store_reply`](crate::ServerSession::handle_store_reply), and hands every message
//! the store delivers to
//! [`handle_store_signal`](crate::ServerSession::handle_store_signal). A store that cannot be
//! reached answers [`StoreError`]: the affected requests fail with its text, tasks already
//! stored stay, and a running task's record is written again at its next lease renewal.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::schema::ListKind;

/// How a server shares its tasks with other processes
///
/// Records carry Unix times (leases, expiry): anchor the wall clock of every sharing session
/// ([`Session::anchor_wall_clock`](crate::Session::anchor_wall_clock),
/// [`HttpServer::anchor_wall_clock`](crate::http::HttpServer::anchor_wall_clock)); the
/// bindings do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SharedTasks {
    /// This process's name in task records (for the message of a task whose process died)
    pub node: String,
    /// How long a running task's record stays valid without its process renewing it; the
    /// process renews every third of it. Once it ends the task reads `failed`.
    pub lease: Duration,
    /// How long a record stays in the store when the task has no ttl (counted from its last
    /// change)
    pub retention: Duration,
}

impl SharedTasks {
    /// Sharing as process `node`, with a 10 s lease and a one-hour retention
    pub fn new(node: impl Into<String>) -> Self {
        Self {
            node: node.into(),
            lease: Duration::from_secs(10),
            retention: Duration::from_secs(3600),
        }
    }

    /// With a lease (at least 30 ms)
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// With a retention for records of tasks without a ttl
    #[must_use]
    pub fn retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }
}

/// Names one store operation whose reply the session waits for
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub(crate) u64);

impl Ticket {
    /// A ticket from its number (a store carrying tickets across a language boundary, a
    /// store's own tests); a session ignores replies to tickets it did not issue
    pub fn from_raw(n: u64) -> Self {
        Self(n)
    }

    /// Its number
    pub fn raw(self) -> u64 {
        self.0
    }
}

/// An operation for the store, from [`ServerSession::poll_store`](crate::ServerSession::poll_store)
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreOp {
    /// Write `record` under `task`, unless the stored record is terminal; answer with
    /// [`StoreReply::Stored`] or, when a terminal record was kept, [`StoreReply::Kept`]
    /// with it
    Put {
        /// For the reply
        ticket: Ticket,
        /// The task's id (the key)
        task: String,
        /// The record: opaque JSON text
        record: String,
        /// Whether this record is terminal (a later `Put` of the same task must keep it)
        terminal: bool,
        /// When the store may forget the record: Unix milliseconds
        expires_at_ms: u64,
    },
    /// Read the record of `task`: [`StoreReply::Found`]
    Get {
        /// For the reply
        ticket: Ticket,
        /// The task's id
        task: String,
    },
    /// Deliver `message` to every process's [`handle_store_signal`](crate::ServerSession::handle_store_signal)
    /// (this one's too); no reply
    Publish {
        /// The signal, encoded ([`Signal::decode`] reads it)
        message: String,
    },
}

/// Why the store could not run an operation (it is unreachable, say): the text reaches the
/// client in the error of the affected request
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// The store's answer to a [`StoreOp::Put`] or [`StoreOp::Get`]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreReply {
    /// The record was written
    Stored,
    /// A terminal record was there and stays: it is this
    Kept(String),
    /// The record read, if there is one
    Found(Option<String>),
    /// The operation failed
    Failed(StoreError),
}

/// A message between processes, carried by [`StoreOp::Publish`]
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Signal {
    /// A client cancelled the task (its record already says so)
    Cancel {
        /// The task
        task: String,
    },
    /// A client answered the task's input requests (2026 `tasks/update`)
    Input {
        /// The task
        task: String,
        /// The answers by key, as sent
        responses: HashMap<String, Box<RawValue>>,
    },
    /// The task ended: read its record again
    Ended {
        /// The task
        task: String,
    },
    /// A list changed on process `origin`
    ListChanged {
        /// The process that raised it ([`SharedTasks::node`])
        origin: String,
        /// Which list
        kind: ListKind,
    },
    /// A resource changed on process `origin`
    ResourceUpdated {
        /// The process that raised it
        origin: String,
        /// The resource
        uri: String,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "mcp", rename_all = "camelCase")]
enum Wire {
    #[serde(rename = "task.cancel", rename_all = "camelCase")]
    Cancel { task_id: String },
    #[serde(rename = "task.input", rename_all = "camelCase")]
    Input {
        task_id: String,
        // Values, not raw text: an internally tagged enum buffers its members.
        input_responses: HashMap<String, serde_json::Value>,
    },
    #[serde(rename = "task.ended", rename_all = "camelCase")]
    Ended { task_id: String },
    #[serde(rename = "list.changed")]
    ListChanged { origin: String, list: String },
    #[serde(rename = "resource.updated")]
    ResourceUpdated { origin: String, uri: String },
}

impl Signal {
    /// The signal as the text a store carries (JSON)
    pub fn encode(&self) -> String {
        let wire = match self {
            Self::Cancel { task } => Wire::Cancel {
                task_id: task.clone(),
            },
            Self::Input { task, responses } => Wire::Input {
                task_id: task.clone(),
                input_responses: responses
                    .iter()
                    .map(|(k, v)| {
                        let value = serde_json::from_str(v.get()).unwrap_or_default();
                        (k.clone(), value)
                    })
                    .collect(),
            },
            Self::Ended { task } => Wire::Ended {
                task_id: task.clone(),
            },
            Self::ListChanged { origin, kind } => Wire::ListChanged {
                origin: origin.clone(),
                list: match kind {
                    ListKind::Tools => "tools",
                    ListKind::Prompts => "prompts",
                    ListKind::Resources => "resources",
                }
                .into(),
            },
            Self::ResourceUpdated { origin, uri } => Wire::ResourceUpdated {
                origin: origin.clone(),
                uri: uri.clone(),
            },
        };
        serde_json::to_string(&wire).expect("a signal serializes")
    }

    /// Reads a signal; `None` for text that is not one (another program's message on the
    /// same channel, say)
    pub fn decode(text: &str) -> Option<Self> {
        Some(match serde_json::from_str::<Wire>(text).ok()? {
            Wire::Cancel { task_id } => Self::Cancel { task: task_id },
            Wire::Input {
                task_id,
                input_responses,
            } => Self::Input {
                task: task_id,
                responses: input_responses
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, serde_json::value::to_raw_value(&v).ok()?)))
                    .collect(),
            },
            Wire::Ended { task_id } => Self::Ended { task: task_id },
            Wire::ListChanged { origin, list } => Self::ListChanged {
                origin,
                kind: match list.as_str() {
                    "tools" => ListKind::Tools,
                    "prompts" => ListKind::Prompts,
                    "resources" => ListKind::Resources,
                    _ => return None,
                },
            },
            Wire::ResourceUpdated { origin, uri } => Self::ResourceUpdated { origin, uri },
        })
    }
}

/// A store in memory, with the semantics a shared store must have: for several servers of
/// one process, for tests, and as the reference for other stores
///
/// [`apply`](Self::apply) runs an operation; published messages wait in
/// [`take_published`](Self::take_published) for the caller to deliver to every subscriber.
/// Records are forgotten at their `expires_at_ms` (on the clock given to `apply`).
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: HashMap<String, Record>,
    published: Vec<String>,
}

#[derive(Debug)]
struct Record {
    text: String,
    terminal: bool,
    expires_at_ms: u64,
}

impl MemoryStore {
    /// An empty store
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `op` at `now_ms` (Unix milliseconds); `None` for a `Publish`
    pub fn apply(&mut self, now_ms: u64, op: StoreOp) -> Option<(Ticket, StoreReply)> {
        self.records.retain(|_, r| r.expires_at_ms > now_ms);
        match op {
            StoreOp::Put {
                ticket,
                task,
                record,
                terminal,
                expires_at_ms,
            } => {
                if let Some(kept) = self.records.get(&task).filter(|r| r.terminal) {
                    return Some((ticket, StoreReply::Kept(kept.text.clone())));
                }
                self.records.insert(
                    task,
                    Record {
                        text: record,
                        terminal,
                        expires_at_ms,
                    },
                );
                Some((ticket, StoreReply::Stored))
            }
            StoreOp::Get { ticket, task } => Some((
                ticket,
                StoreReply::Found(self.records.get(&task).map(|r| r.text.clone())),
            )),
            StoreOp::Publish { message } => {
                self.published.push(message);
                None
            }
        }
    }

    /// The messages published since the last call, oldest first
    pub fn take_published(&mut self) -> Vec<String> {
        std::mem::take(&mut self.published)
    }

    /// How many records the store holds
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the store holds no record
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_round_trip() {
        let raw = RawValue::from_string(r#"{"action":"accept","content":{"a":1}}"#.into()).unwrap();
        let signals = [
            Signal::Cancel { task: "t1".into() },
            Signal::Input {
                task: "t2".into(),
                responses: HashMap::from([("k".to_owned(), raw)]),
            },
            Signal::Ended { task: "t3".into() },
            Signal::ListChanged {
                origin: "a".into(),
                kind: ListKind::Prompts,
            },
            Signal::ResourceUpdated {
                origin: "b".into(),
                uri: "file:///x".into(),
            },
        ];
        for s in signals {
            let text = s.encode();
            let back = Signal::decode(&text).unwrap();
            assert_eq!(back.encode(), text);
        }
        assert!(Signal::decode("hello").is_none());
        assert!(Signal::decode(r#"{"mcp":"list.changed","origin":"a","list":"x"}"#).is_none());
    }

    #[test]
    fn memory_store_keeps_terminal_records_and_expires() {
        let mut store = MemoryStore::new();
        let put = |ticket, record: &str, terminal| StoreOp::Put {
            ticket: Ticket(ticket),
            task: "t".into(),
            record: record.into(),
            terminal,
            expires_at_ms: 1_000,
        };
        assert_eq!(
            store.apply(0, put(1, "a", false)).unwrap().1,
            StoreReply::Stored
        );
        assert_eq!(
            store.apply(0, put(2, "b", true)).unwrap().1,
            StoreReply::Stored
        );
        assert_eq!(
            store.apply(0, put(3, "c", false)).unwrap().1,
            StoreReply::Kept("b".into())
        );
        let get = StoreOp::Get {
            ticket: Ticket(4),
            task: "t".into(),
        };
        assert_eq!(
            store.apply(999, get.clone()).unwrap().1,
            StoreReply::Found(Some("b".into()))
        );
        assert_eq!(store.apply(1_000, get).unwrap().1, StoreReply::Found(None));
        assert!(
            store
                .apply(
                    0,
                    StoreOp::Publish {
                        message: "m".into()
                    }
                )
                .is_none()
        );
        assert_eq!(store.take_published(), vec!["m".to_owned()]);
    }
}
