//! What a session keeps of the shared task store: the operations it has issued and the
//! replies it awaits, and a task's record as the store holds it

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::task_table::{ServerTask, iso8601, millis};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::{InputRequests, TaskStatus};
use crate::session::Principal;
use crate::session::ids::TaskId;
use crate::session::inbound_table::Answers;
use crate::store::{StoreOp, Ticket};
use crate::version::ProtocolVersion;

/// The store side of a session: operations to run, replies awaited, remote waiters
#[derive(Debug, Default)]
pub(crate) struct SharedState {
    pub(super) next_ticket: u64,
    pub(super) ops: VecDeque<StoreOp>,
    pub(super) pending: HashMap<Ticket, (Instant, Pending)>,
    pub(super) deadlines: BTreeSet<(Instant, Ticket)>,
    /// When the records of running tasks are written again
    pub(super) next_renewal: Option<Instant>,
    /// 2025-11-25 `tasks/result` requests waiting for a task another process runs
    pub(super) remote_waiters: BTreeMap<String, Vec<(RequestId, Option<u32>)>>,
    /// When those tasks' records are read again
    pub(super) next_recheck: Option<Instant>,
}

impl SharedState {
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let answer = self.deadlines.first().map(|(at, _)| *at);
        [answer, self.next_renewal, self.next_recheck]
            .into_iter()
            .flatten()
            .min()
    }

    /// `tasks/result` requests waiting on other processes' tasks
    pub(super) fn waiting(&self) -> usize {
        self.remote_waiters.values().map(Vec::len).sum()
    }

    /// Drops a waiting `tasks/result` the peer cancelled; `true` if it was one
    pub(crate) fn cancel_waiter(&mut self, wire: &RequestId) -> bool {
        for waiters in self.remote_waiters.values_mut() {
            if let Some(i) = waiters.iter().position(|(w, _)| w == wire) {
                waiters.remove(i);
                self.remote_waiters.retain(|_, w| !w.is_empty());
                return true;
            }
        }
        false
    }

    pub(crate) fn poll(&mut self) -> Option<StoreOp> {
        let op = self.ops.pop_front();
        if op.is_none() && self.ops.capacity() > 256 {
            self.ops.shrink_to(16);
        }
        op
    }
}

/// What a ticket's reply is for
#[derive(Debug)]
pub(super) enum Pending {
    /// A new task's first record: the client gets the handle once it is stored
    Create {
        task: TaskId,
        wire: RequestId,
        batch: Option<u32>,
        created: String,
        modern: bool,
    },
    /// A later record of one of our tasks
    Write { task: TaskId },
    /// A task method for a task this session does not hold
    Lookup(Lookup),
    /// `tasks/cancel` through this process: the cancelled record
    Cancel {
        task: String,
        wire: RequestId,
        batch: Option<u32>,
        modern: bool,
        record: Box<Record>,
    },
    /// Writing down that a task's process died; nothing waits for it
    Settle,
    /// Reading again a task remote `tasks/result` requests wait for
    Recheck { task: String },
}

#[derive(Debug)]
pub(super) struct Lookup {
    pub(super) method: Method,
    pub(super) wire: RequestId,
    pub(super) batch: Option<u32>,
    pub(super) modern: bool,
    pub(super) task: String,
    pub(super) responses: Answers,
    /// The digest of the caller's principal: the record's must match
    pub(super) caller: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Result,
    Cancel,
    Update,
}

/// A task as the store holds it
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Record {
    pub(super) task_id: String,
    pub(super) owner: String,
    pub(super) modern: bool,
    pub(super) version: String,
    pub(super) status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
    pub(super) created_ms: u64,
    pub(super) updated_ms: u64,
    #[serde(default)]
    pub(super) ttl_ms: Option<u64>,
    #[serde(default)]
    pub(super) poll_ms: Option<u64>,
    #[serde(default)]
    pub(super) lease_until_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<Box<RawValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<ErrorObject>,
    #[serde(default, skip_serializing_if = "InputRequests::is_empty")]
    pub(super) input_requests: InputRequests,
    /// Who created it: a digest of the principal's identity; only requests of the same
    /// principal reach it, from any process
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) principal: Option<String>,
}

impl Record {
    pub(super) fn of(task: &ServerTask, owner: &str, lease_until_ms: Option<u64>) -> Self {
        Self {
            task_id: task.wire_id.clone(),
            owner: owner.to_owned(),
            modern: task.modern,
            version: task.version.as_str().to_owned(),
            status: task.status,
            message: task.message.clone(),
            created_ms: task.created_ms,
            updated_ms: task.updated_ms,
            ttl_ms: task.ttl.map(millis),
            poll_ms: task.poll_interval.map(millis),
            lease_until_ms: (!task.status.is_terminal())
                .then_some(lease_until_ms)
                .flatten(),
            result: task.result.clone(),
            error: task.error.clone(),
            input_requests: task.pending_input.clone(),
            principal: task.owner.as_ref().map(Principal::digest),
        }
    }

    /// The task as this session's rules render it
    pub(super) fn view(&self) -> ServerTask {
        ServerTask {
            wire_id: self.task_id.clone(),
            // Checked against the record's digest before a view is made
            owner: None,
            modern: self.modern,
            version: ProtocolVersion::parse(&self.version).unwrap_or(if self.modern {
                ProtocolVersion::LATEST
            } else {
                ProtocolVersion::V2025_11_25
            }),
            status: self.status,
            message: self.message.clone(),
            created_ms: self.created_ms,
            updated_ms: self.updated_ms,
            ttl: self.ttl_ms.map(Duration::from_millis),
            poll_interval: self.poll_ms.map(Duration::from_millis),
            expires: None,
            result: self.result.clone(),
            error: self.error.clone(),
            pending_input: self.input_requests.clone(),
            answers: Answers::new(),
            waiters: Vec::new(),
            announced: true,
            stored: true,
        }
    }

    /// A running task whose process stopped renewing it: `failed` from now on
    pub(super) fn lease_ended(&self, now_ms: u64) -> bool {
        !self.status.is_terminal() && self.lease_until_ms.is_some_and(|until| until <= now_ms)
    }

    pub(super) fn fail_lost(&mut self, now_ms: u64) {
        let until = self.lease_until_ms.unwrap_or(now_ms);
        let message = format!(
            "the server process running this task ({}) stopped: its lease ended at {}",
            self.owner,
            iso8601(until)
        );
        self.status = TaskStatus::Failed;
        self.error = Some(ErrorObject::internal_error(message.clone()));
        self.message = Some(message);
        self.updated_ms = now_ms;
        self.lease_until_ms = None;
        self.input_requests.clear();
    }

    pub(super) fn expires_at_ms(&self, retention: Duration) -> u64 {
        match self.ttl_ms {
            Some(ttl) => self.created_ms.saturating_add(ttl),
            None => self.updated_ms.saturating_add(millis(retention)),
        }
    }
}
