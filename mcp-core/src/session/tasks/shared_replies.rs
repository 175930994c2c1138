//! Tasks shared with other server processes, what comes back: the store's replies, the
//! signals it delivers, and the lease timers (the operations go out from [`shared`](super::shared))

use std::time::Instant;

use serde_json::json;

use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::TaskStatus;
use crate::session::ids::TaskId;
use crate::session::task_store::{Lookup, Method, Pending, Record};
use crate::session::task_table::{CANCELLED_MESSAGE, ServerTask};
use crate::session::{Answer, Core, Event};
use crate::store::{Signal, StoreError, StoreOp, StoreReply, Ticket};

fn store_error(e: &StoreError) -> ErrorObject {
    ErrorObject::internal_error(format!("the task store failed: {e}"))
}

fn unknown_task(task: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("unknown task: {task}"))
        .with_data(&json!({ "taskId": task }))
}

impl Core {
    /// Answers a request that waited for the store, and ends its part of a batch
    fn finish(&mut self, wire: &RequestId, batch: Option<u32>, answer: Answer<'_>) {
        self.answer(Some(wire), batch, answer);
        if let Some(b) = batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
    }

    fn finish_error(&mut self, wire: &RequestId, batch: Option<u32>, error: &ErrorObject) {
        self.finish(wire, batch, Answer::Error(error));
    }

    /// The store's answer to an operation
    pub(in crate::session) fn store_reply(&mut self, ticket: Ticket, reply: StoreReply) {
        let Some((at, pending)) = self.shared.pending.remove(&ticket) else {
            // Late (its deadline passed) or never ours.
            return;
        };
        self.shared.deadlines.remove(&(at, ticket));
        match pending {
            Pending::Create {
                task,
                wire,
                batch,
                created,
                modern,
            } => self.created_stored(task, &wire, batch, &created, modern, reply),
            Pending::Write { task } => self.write_stored(task, reply),
            Pending::Lookup(lookup) => match reply {
                StoreReply::Found(Some(text)) | StoreReply::Kept(text) => {
                    match serde_json::from_str::<Record>(&text) {
                        Ok(record) => self.serve_remote(lookup, record),
                        Err(e) => {
                            let error = ErrorObject::internal_error(format!(
                                "the stored record of task {} is unreadable: {e}",
                                lookup.task
                            ));
                            self.finish_error(&lookup.wire, lookup.batch, &error);
                        }
                    }
                }
                StoreReply::Failed(e) => {
                    self.finish_error(&lookup.wire, lookup.batch, &store_error(&e));
                }
                StoreReply::Found(None) | StoreReply::Stored => {
                    self.finish_error(&lookup.wire, lookup.batch, &unknown_task(&lookup.task));
                }
            },
            Pending::Cancel {
                task,
                wire,
                batch,
                modern,
                record,
            } => match reply {
                StoreReply::Stored => {
                    self.publish(&Signal::Cancel { task });
                    let text = if modern {
                        r#"{"resultType":"complete"}"#.to_owned()
                    } else {
                        record.view().to_json().to_string()
                    };
                    self.finish(&wire, batch, Answer::Result(&text));
                }
                StoreReply::Kept(text) => {
                    let status = serde_json::from_str::<Record>(&text)
                        .map_or(TaskStatus::Completed, |r| r.status);
                    self.answer_cancel_terminal(&task, &wire, batch, modern, status);
                }
                StoreReply::Failed(e) => self.finish_error(&wire, batch, &store_error(&e)),
                StoreReply::Found(_) => {}
            },
            Pending::Settle => {}
            Pending::Recheck { task } => match reply {
                StoreReply::Found(Some(text)) => {
                    if let Ok(mut record) = serde_json::from_str::<Record>(&text) {
                        let now_ms = self.clock_ms();
                        if record.lease_ended(now_ms) {
                            record.fail_lost(now_ms);
                            self.put_record(&record, Pending::Settle);
                        }
                        if record.status.is_terminal() {
                            self.answer_remote_waiters(&task, Ok(&record.view()));
                        }
                    }
                }
                StoreReply::Found(None) => {
                    let error = ErrorObject::invalid_params("the task expired");
                    self.answer_remote_waiters(&task, Err(&error));
                }
                // Unreachable for now: read again at the next recheck.
                _ => {}
            },
        }
    }

    fn created_stored(
        &mut self,
        task: TaskId,
        wire: &RequestId,
        batch: Option<u32>,
        created: &str,
        modern: bool,
        reply: StoreReply,
    ) {
        match reply {
            StoreReply::Failed(e) => {
                // Nobody else could answer for it: the task does not start.
                self.server_tasks.remove(task);
                self.events.push_back(Event::TaskCancelled { task });
                let error = ErrorObject::internal_error(format!(
                    "the task store failed, so the task was not started: {e}"
                ));
                self.finish_error(wire, batch, &error);
            }
            _ => {
                if let Some(t) = self.server_tasks.tasks.get_mut(&task) {
                    t.announced = true;
                    t.stored = true;
                }
                let answer = if modern {
                    Answer::ModernResult(created)
                } else {
                    Answer::Result(created)
                };
                self.finish(wire, batch, answer);
            }
        }
        self.close_if_drained();
    }

    fn write_stored(&mut self, task: TaskId, reply: StoreReply) {
        let Some(t) = self.server_tasks.tasks.get_mut(&task) else {
            return;
        };
        match reply {
            StoreReply::Stored => t.stored = true,
            StoreReply::Kept(text) => {
                // It ended elsewhere (cancelled through another process): follow the store.
                t.stored = true;
                if t.status.is_terminal() {
                    return;
                }
                let Ok(record) = serde_json::from_str::<Record>(&text) else {
                    return;
                };
                t.status = record.status;
                t.message = record.message;
                t.updated_ms = record.updated_ms;
                t.pending_input.clear();
                self.events.push_back(Event::TaskCancelled { task });
                self.task_changed_here(task);
            }
            StoreReply::Failed(_) => {
                // Written again soon: at a tenth of the lease, before its end.
                t.stored = false;
                let soon = self.now + self.lease() / 10;
                if self.shared.next_renewal.is_none_or(|at| at > soon) {
                    self.shared.next_renewal = Some(soon);
                }
            }
            StoreReply::Found(_) => {}
        }
    }

    fn answer_cancel_terminal(
        &mut self,
        task: &str,
        wire: &RequestId,
        batch: Option<u32>,
        modern: bool,
        status: TaskStatus,
    ) {
        if modern {
            self.finish(wire, batch, Answer::Result(r#"{"resultType":"complete"}"#));
        } else {
            let error =
                ErrorObject::invalid_params(format!("task {task} already ended ({status:?})"));
            self.finish_error(wire, batch, &error);
        }
    }

    /// A task method answered from another process's record, under this session's rules
    fn serve_remote(&mut self, lookup: Lookup, mut record: Record) {
        if record.principal != lookup.caller {
            // Another principal's task: exactly what an unknown id gets.
            let error = unknown_task(&lookup.task);
            return self.finish_error(&lookup.wire, lookup.batch, &error);
        }
        let now_ms = self.clock_ms();
        if record.lease_ended(now_ms) {
            record.fail_lost(now_ms);
            self.put_record(&record, Pending::Settle);
        }
        let Lookup {
            method,
            wire,
            batch,
            modern,
            task,
            responses,
            caller: _,
        } = lookup;
        let view = record.view();
        match method {
            Method::Get => {
                let text = if modern {
                    view.detailed().to_string()
                } else {
                    view.to_json().to_string()
                };
                let answer = if modern {
                    Answer::ModernResult(&text)
                } else {
                    Answer::Result(&text)
                };
                self.finish(&wire, batch, answer);
            }
            Method::Result if view.status.is_terminal() => match view.result_answer() {
                Ok(text) => self.finish(&wire, batch, Answer::Result(&text)),
                Err(error) => self.finish_error(&wire, batch, &error),
            },
            Method::Result => {
                let limit = self.limits().max_in_flight_inbound;
                if self.server_tasks.waiting() + self.shared.waiting() >= limit {
                    let error = ErrorObject::internal_error(format!(
                        "too many requests in progress (limit {limit}); retry later"
                    ));
                    self.finish_error(&wire, batch, &error);
                    return;
                }
                // Answered when the task ends: its owner's signal, or the next recheck.
                self.shared
                    .remote_waiters
                    .entry(task)
                    .or_default()
                    .push((wire, batch));
                if self.shared.next_recheck.is_none() {
                    self.shared.next_recheck = Some(self.now + self.lease() / 3);
                }
            }
            Method::Cancel if view.status.is_terminal() => {
                self.answer_cancel_terminal(&task, &wire, batch, modern, view.status);
            }
            Method::Cancel => {
                record.status = TaskStatus::Cancelled;
                record.message = Some(CANCELLED_MESSAGE.into());
                record.updated_ms = now_ms;
                record.lease_until_ms = None;
                record.input_requests.clear();
                let pending = Pending::Cancel {
                    task,
                    wire,
                    batch,
                    modern,
                    record: Box::new(record.clone()),
                };
                self.put_record(&record, pending);
            }
            Method::Update => {
                if view.status == TaskStatus::InputRequired && !responses.is_empty() {
                    self.publish(&Signal::Input {
                        task,
                        responses: responses.into_iter().collect(),
                    });
                }
                self.finish(&wire, batch, Answer::Result(r#"{"resultType":"complete"}"#));
            }
        }
    }

    fn answer_remote_waiters(&mut self, task: &str, outcome: Result<&ServerTask, &ErrorObject>) {
        let Some(waiters) = self.shared.remote_waiters.remove(task) else {
            return;
        };
        let answer = match outcome {
            Ok(view) => view.result_answer(),
            Err(e) => Err(e.clone()),
        };
        for (wire, batch) in waiters {
            match &answer {
                Ok(text) => self.finish(&wire, batch, Answer::Result(text)),
                Err(error) => self.finish_error(&wire, batch, error),
            }
        }
        if self.shared.remote_waiters.is_empty() {
            self.shared.next_recheck = None;
        }
    }

    /// A message another process (or this one) published
    pub(in crate::session) fn store_signal(&mut self, text: &str) {
        if self.shared_config().is_none() {
            return;
        }
        match Signal::decode(text) {
            Some(Signal::Cancel { task }) => {
                if let Some(&id) = self.server_tasks.by_wire.get(&task) {
                    self.cancel_task_here(id);
                }
            }
            Some(Signal::Input { task, responses }) => {
                if let Some(&id) = self.server_tasks.by_wire.get(&task) {
                    self.give_task_input(id, responses.into_iter().collect());
                }
            }
            Some(Signal::Ended { task }) if self.shared.remote_waiters.contains_key(&task) => {
                let ticket = self.issue(Pending::Recheck { task: task.clone() });
                self.shared.ops.push_back(StoreOp::Get { ticket, task });
            }
            _ => {}
        }
    }

    /// Deadlines of the store side: renewals, rechecks, replies that did not come
    pub(in crate::session) fn store_timers(&mut self) {
        while let Some(&(at, ticket)) = self.shared.deadlines.first() {
            if at > self.now {
                break;
            }
            let lease = self.lease();
            let error = StoreError(format!(
                "the task store did not answer within {} ms",
                lease.as_millis()
            ));
            self.store_reply(ticket, StoreReply::Failed(error));
        }
        if self.shared.next_renewal.is_some_and(|at| at <= self.now) {
            self.shared.next_renewal = None;
            let due: Vec<TaskId> = self
                .server_tasks
                .tasks
                .iter()
                .filter(|(_, t)| t.announced && (!t.status.is_terminal() || !t.stored))
                .map(|(id, _)| *id)
                .collect();
            let mut live = false;
            for id in due {
                let Some(record) = self.own_record(id) else {
                    continue;
                };
                live = true;
                self.put_record(&record, Pending::Write { task: id });
            }
            if live {
                self.arm_renewal();
            }
        }
        if self.shared.next_recheck.is_some_and(|at| at <= self.now) {
            self.shared.next_recheck = None;
            let tasks: Vec<String> = self.shared.remote_waiters.keys().cloned().collect();
            for task in tasks {
                let ticket = self.issue(Pending::Recheck { task: task.clone() });
                self.shared.ops.push_back(StoreOp::Get { ticket, task });
            }
            if !self.shared.remote_waiters.is_empty() {
                self.shared.next_recheck = Some(self.now + self.lease() / 3);
            }
        }
    }
}

impl crate::ServerSession {
    /// The next operation for the task store, when the server shares its tasks
    /// ([`ServerConfig::shared_tasks`](crate::ServerConfig::shared_tasks)); run them in the
    /// order they come (see [`crate::store`])
    ///
    /// Check after every input, command and timeout, as for
    /// [`poll_transmit`](crate::Session::poll_transmit).
    pub fn poll_store(&mut self) -> Option<StoreOp> {
        self.core.shared.poll()
    }

    /// The store's answer to a [`StoreOp::Put`] or [`StoreOp::Get`] this session issued
    ///
    /// A reply after the operation's deadline (one lease) is ignored: the request it was
    /// for already failed.
    pub fn handle_store_reply(&mut self, now: Instant, ticket: Ticket, reply: StoreReply) {
        self.core.tick(now);
        self.core.store_reply(ticket, reply);
    }

    /// A message the store delivered (published by any process, this one included); text
    /// that is no [`Signal`] of a task is ignored
    pub fn handle_store_signal(&mut self, now: Instant, message: &str) {
        self.core.tick(now);
        self.core.store_signal(message);
    }
}
