//! Tasks shared with other server processes: the session's side of [`crate::store`]
//!
//! The owner of a task (the session whose handler runs it) writes its record; any session
//! asked about a task it does not hold reads the record and answers from it under the same
//! rules as for its own tasks; cancellations and input go to the owner as signals. Every
//! store operation the session waits for has a deadline of one lease: a store that does not
//! answer fails the request instead of leaving it hanging.

use std::time::Duration;

use crate::jsonrpc::RequestId;
use crate::session::ids::TaskId;
use crate::session::task_store::{Lookup, Method, Pending, Record};
use crate::session::task_table::{TaskIdParams, millis};
use crate::session::{Core, Principal, Side};
use crate::store::{SharedTasks, Signal, StoreOp, Ticket};

impl Core {
    /// The sharing settings, on a server that shares its tasks
    pub(in crate::session) fn shared_config(&self) -> Option<&SharedTasks> {
        match &self.role {
            Side::Server(s) => s.shared_tasks.as_ref(),
            Side::Client(_) => None,
        }
    }

    pub(super) fn lease(&self) -> Duration {
        self.shared_config()
            .map_or(Duration::from_secs(10), |s| s.lease)
    }

    pub(super) fn issue(&mut self, pending: Pending) -> Ticket {
        self.shared.next_ticket += 1;
        let ticket = Ticket(self.shared.next_ticket);
        let at = self.now + self.lease();
        self.shared.pending.insert(ticket, (at, pending));
        self.shared.deadlines.insert((at, ticket));
        ticket
    }

    pub(super) fn put_record(&mut self, record: &Record, pending: Pending) {
        let Some(config) = self.shared_config() else {
            return;
        };
        let expires_at_ms = record.expires_at_ms(config.retention);
        let ticket = self.issue(pending);
        self.shared.ops.push_back(StoreOp::Put {
            ticket,
            task: record.task_id.clone(),
            record: serde_json::to_string(record).expect("a record serializes"),
            terminal: record.status.is_terminal(),
            expires_at_ms,
        });
    }

    pub(super) fn publish(&mut self, signal: &Signal) {
        self.shared.ops.push_back(StoreOp::Publish {
            message: signal.encode(),
        });
    }

    /// The record of one of our tasks as it stands now
    pub(super) fn own_record(&self, id: TaskId) -> Option<Record> {
        let config = self.shared_config()?;
        let task = self.server_tasks.tasks.get(&id)?;
        let lease_until = self.clock_ms().saturating_add(millis(config.lease));
        Some(Record::of(task, &config.node, Some(lease_until)))
    }

    pub(super) fn arm_renewal(&mut self) {
        if self.shared.next_renewal.is_none() {
            self.shared.next_renewal = Some(self.now + self.lease() / 3);
        }
    }

    /// A task was created: store it, then answer with its handle
    pub(super) fn shared_create(
        &mut self,
        id: TaskId,
        wire: RequestId,
        batch: Option<u32>,
        created: String,
        modern: bool,
    ) {
        if let Some(task) = self.server_tasks.tasks.get_mut(&id) {
            task.announced = false;
        }
        let Some(record) = self.own_record(id) else {
            return;
        };
        self.put_record(
            &record,
            Pending::Create {
                task: id,
                wire,
                batch,
                created,
                modern,
            },
        );
        self.arm_renewal();
    }

    /// One of our tasks changed: write its record (and wake other processes' waiters
    /// once it ended)
    pub(super) fn shared_put(&mut self, id: TaskId) {
        let Some(record) = self.own_record(id) else {
            return;
        };
        let terminal = record.status.is_terminal();
        self.put_record(&record, Pending::Write { task: id });
        if terminal {
            self.publish(&Signal::Ended {
                task: record.task_id,
            });
        } else {
            self.arm_renewal();
        }
    }

    /// A task method for a task this session does not hold: read its record
    pub(super) fn shared_lookup(
        &mut self,
        method: &str,
        wire: RequestId,
        batch: Option<u32>,
        modern: bool,
        params: TaskIdParams,
        caller: Option<Principal>,
    ) {
        let method = match method {
            "tasks/get" => Method::Get,
            "tasks/result" => Method::Result,
            "tasks/cancel" => Method::Cancel,
            _ => Method::Update,
        };
        if let Some(b) = batch {
            self.batches.add_pending(b);
        }
        let task = params.task_id;
        let ticket = self.issue(Pending::Lookup(Lookup {
            method,
            wire,
            batch,
            modern,
            task: task.clone(),
            responses: params.input_responses.unwrap_or_default(),
            caller: caller.as_ref().map(Principal::digest),
        }));
        self.shared.ops.push_back(StoreOp::Get { ticket, task });
    }
}
