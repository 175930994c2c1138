//! Tasks, client side: a task-backed call looks like one slow call
//!
//! When the server answers a request with a task handle (2025-11-25 `{task}` after the
//! client asked with [`RequestOptions::as_task`](crate::session::RequestOptions::as_task); 2026
//! `resultType: "task"` whenever the client declares the tasks extension), the core keeps
//! the request open, polls `tasks/get` at the server's suggested interval (or reads status
//! notifications), emits [`Event::TaskStatus`] on every change, fetches the result
//! (`tasks/result` in 2025-11-25; inline in 2026) and ends with the single
//! [`Event::Response`]. Input the task needs surfaces as [`Event::InputRequired`] (2026;
//! answered with `tasks/update`); cancelling the call sends `tasks/cancel`. Status news about
//! a task that already ended is ignored.

use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::ErrorObject;
use crate::schema::{InputRequests, InputResponses, TaskStatus};
use crate::session::ids::InputId;
use crate::session::outbound_table::{FollowedTask, OutEntry, Owner, TaskOp, WireId};
use crate::session::phase::Phase;
use crate::session::{CallError, CancelError, Core, Event, OutboundId};
use crate::version::Era;

/// Polling interval when the server suggests none
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest interval a client polls a task at, whatever the server suggests: a server
/// cannot make a client poll more than 100 times a second
const MIN_POLL: Duration = Duration::from_millis(10);

/// What the client reads of a task object (either form)
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskView {
    task_id: String,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    #[serde(default)]
    poll_interval: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<ErrorObject>,
    #[serde(default)]
    input_requests: Option<InputRequests>,
    #[serde(default)]
    result_type: Option<String>,
}

/// A 2025-11-25 `CreateTaskResult`
#[derive(Deserialize)]
struct Created {
    task: TaskView,
}

impl TaskView {
    fn poll_interval(&self) -> Duration {
        self.poll_interval_ms
            .or(self.poll_interval)
            .filter(|ms| *ms > 0)
            .map_or(DEFAULT_POLL, |ms| Duration::from_millis(ms).max(MIN_POLL))
    }
}

impl Core {
    fn modern_client(&self) -> bool {
        self.role.is_client() && self.phase.version().is_some_and(|v| v.era() == Era::Modern)
    }

    /// A result that may be a task handle; `None` when it was one (and the call goes on)
    pub(in crate::session) fn client_task_created(
        &mut self,
        wire: WireId,
        mut entry: OutEntry,
        result: &RawValue,
    ) -> Option<(OutEntry, Result<Box<RawValue>, CallError>)> {
        let modern = self.modern_client();
        let Some(call) = entry.app_mut() else {
            return Some((entry, Ok(result.to_owned())));
        };
        let view = if modern {
            serde_json::from_str::<TaskView>(result.get())
                .ok()
                .filter(|v| v.result_type.as_deref() == Some("task"))
        } else if call.task_requested {
            serde_json::from_str::<Created>(result.get())
                .ok()
                .map(|c| c.task)
        } else {
            None
        };
        let Some(view) = view else {
            return Some((entry, Ok(result.to_owned())));
        };
        let app = call.id;
        self.followed.insert(view.task_id.clone(), app);
        call.task = Some(Box::new(FollowedTask {
            task_id: view.task_id.clone(),
            status: view.status,
            poll_interval: view.poll_interval(),
            result_asked: false,
        }));
        self.events.push_back(Event::TaskStatus {
            id: app,
            status: view.status,
            message: view.status_message.clone(),
        });
        self.outbound.restore(wire, entry);
        self.apply_task_view(app, view, false);
        None
    }

    /// Brings a followed task up to date from a `tasks/get` answer or a status notification
    fn apply_task_view(&mut self, app: OutboundId, view: TaskView, announce: bool) {
        let now = self.now;
        let modern = self.modern_client();
        let Some(task) = self.outbound.call_mut(app).and_then(|c| c.task.as_mut()) else {
            return;
        };
        let changed = task.status != view.status;
        task.status = view.status;
        task.poll_interval = view.poll_interval();
        let poll_at = now + task.poll_interval;
        let task_id = task.task_id.clone();
        let result_asked = task.result_asked;
        if view.status.is_terminal() && !modern {
            task.result_asked = true;
        }
        // Past the overload limit a status change is not announced (the call still ends once).
        if announce && changed && !self.overloaded() {
            self.events.push_back(Event::TaskStatus {
                id: app,
                status: view.status,
                message: view.status_message.clone(),
            });
        }
        match view.status {
            TaskStatus::Working => {
                // Any prompt of an earlier round is over; a new round will be announced.
                if let Some(call) = self.outbound.call_mut(app) {
                    call.awaiting_input = false;
                }
                self.schedule_poll(app, Some(poll_at));
            }
            TaskStatus::InputRequired => match view.input_requests {
                Some(requests) if modern && !requests.is_empty() => {
                    let already = self
                        .outbound
                        .call_mut(app)
                        .is_some_and(|c| std::mem::replace(&mut c.awaiting_input, true));
                    // Keep polling while the user answers: the task may be cancelled, fail,
                    // or stop needing the input meanwhile.
                    self.schedule_poll(app, Some(poll_at));
                    // The application is already answering these (a status notification
                    // repeating them): one prompt is enough.
                    if !already {
                        self.events.push_back(Event::InputRequired {
                            id: InputId::Retry(app),
                            requests,
                        });
                    }
                }
                // 2025-11-25: the server asks through live requests; keep polling.
                _ => self.schedule_poll(app, Some(poll_at)),
            },
            TaskStatus::Completed | TaskStatus::Failed if !modern => {
                self.schedule_poll(app, None);
                if !result_asked {
                    self.send_task_op(app, TaskOp::Result, &task_id, None);
                }
            }
            TaskStatus::Completed => {
                let outcome = view.result.ok_or_else(|| {
                    CallError::InvalidResult("a completed task carried no result".into())
                });
                self.finish_task(app, outcome);
            }
            TaskStatus::Failed => {
                let error = view
                    .error
                    .unwrap_or_else(|| ErrorObject::internal_error("the task failed"));
                self.finish_task(app, Err(CallError::Remote(error)));
            }
            _ => self.finish_task(app, Err(CallError::Cancelled)),
        }
    }

    /// Sets when the followed task is polled next (`None`: not now), within its cap
    fn schedule_poll(&mut self, app: OutboundId, at: Option<std::time::Instant>) {
        let wire = self.outbound.wire_of(app);
        let Some(call) = self.outbound.call_mut(app) else {
            return;
        };
        let deadline = match (at, call.cap) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        };
        self.outbound.set_deadline(wire, deadline);
    }

    /// Ends a task-backed call with its one outcome
    fn finish_task(&mut self, app: OutboundId, outcome: Result<Box<RawValue>, CallError>) {
        let wire = self.outbound.wire_of(app);
        let Some(entry) = self.outbound.remove(wire) else {
            return;
        };
        if let Some(task) = entry.app().and_then(|c| c.task.as_ref()) {
            self.followed.remove(&task.task_id);
        }
        self.events.push_back(Event::Response { id: app, outcome });
    }

    /// Sends a core-owned task request (`tasks/get`, `tasks/result`, `tasks/update`,
    /// `tasks/cancel`) for a followed task
    pub(in crate::session) fn send_task_op(
        &mut self,
        app: OutboundId,
        op: TaskOp,
        task_id: &str,
        extra: Option<Value>,
    ) {
        let method = match op {
            TaskOp::Get => "tasks/get",
            TaskOp::Result => "tasks/result",
            TaskOp::Update => "tasks/update",
            TaskOp::Cancel => "tasks/cancel",
        };
        let mut params = json!({ "taskId": task_id });
        if let Some(Value::Object(extra)) = extra {
            params.as_object_mut().expect("an object").extend(extra);
        }
        let params = serde_json::value::to_raw_value(&params).expect("a Value serializes");
        let timeout = self.role.timeouts().request;
        let owner = Owner::Task { call: app, op };
        let entry = OutEntry::with_timeout(owner, method, Some(params), self.now, timeout);
        let wire = self.outbound.insert(entry);
        self.transmit_outbound(wire, &[]);
    }

    /// A followed task's poll time came: ask `tasks/get`
    pub(in crate::session) fn poll_task(&mut self, wire: WireId, entry: OutEntry) {
        let Some(call) = entry.app() else {
            return;
        };
        let app = call.id;
        let task_id = call
            .task
            .as_ref()
            .map(|t| t.task_id.clone())
            .unwrap_or_default();
        self.outbound.restore(wire, entry);
        self.schedule_poll(app, None);
        self.send_task_op(app, TaskOp::Get, &task_id, None);
    }

    /// The answer to a core-owned task request
    pub(in crate::session) fn task_op_answered(
        &mut self,
        app: OutboundId,
        op: TaskOp,
        outcome: Result<Box<RawValue>, CallError>,
    ) {
        let followed = self.outbound.call_mut(app).is_some();
        if !followed || matches!(op, TaskOp::Cancel | TaskOp::Update) {
            // The call already ended, or the answer is a plain acknowledgement.
            return;
        }
        match (op, outcome) {
            (TaskOp::Get, Ok(raw)) => match serde_json::from_str::<TaskView>(raw.get()) {
                Ok(view) => self.apply_task_view(app, view, true),
                Err(e) => self.finish_task(
                    app,
                    Err(CallError::InvalidResult(format!(
                        "invalid tasks/get result: {e}"
                    ))),
                ),
            },
            (TaskOp::Result, outcome) => self.finish_task(app, outcome),
            (_, Err(e)) => self.finish_task(app, Err(e)),
            _ => {}
        }
    }

    /// A status notification (`notifications/tasks/status` in 2025-11-25,
    /// `notifications/tasks` in 2026) about a task we follow; `true` if it was one
    pub(in crate::session) fn task_notified(&mut self, params: Option<&RawValue>) -> bool {
        let Some(view) = params.and_then(|p| serde_json::from_str::<TaskView>(p.get()).ok()) else {
            return false;
        };
        let Some(&app) = self.followed.get(&view.task_id) else {
            // News about a task that ended (or that we never followed) changes nothing.
            self.stats.dropped_messages += 1;
            return true;
        };
        self.apply_task_view(app, view, true);
        true
    }

    /// `provide_input` for a task waiting in `input_required` (2026): `tasks/update`
    pub(in crate::session) fn provide_task_input(
        &mut self,
        app: OutboundId,
        responses: &InputResponses,
    ) -> bool {
        let now = self.now;
        let Some(call) = self.outbound.call_mut(app) else {
            return false;
        };
        let Some(task) = call.task.as_ref() else {
            return false;
        };
        let task_id = task.task_id.clone();
        let poll_at = now + task.poll_interval;
        call.awaiting_input = false;
        let responses = serde_json::to_value(responses).expect("responses serialize");
        self.send_task_op(
            app,
            TaskOp::Update,
            &task_id,
            Some(json!({ "inputResponses": responses })),
        );
        self.schedule_poll(app, Some(poll_at));
        true
    }

    /// `cancel` of a task-backed call: `tasks/cancel`
    pub(in crate::session) fn cancel_followed_task(&mut self, entry: &OutEntry) {
        let Some(call) = entry.app() else {
            return;
        };
        if let Some(task) = &call.task {
            self.followed.remove(&task.task_id);
            let task_id = task.task_id.clone();
            self.send_task_op(call.id, TaskOp::Cancel, &task_id, None);
        }
    }

    /// The application cancels a call: a task-backed one with `tasks/cancel`, one on the wire
    /// with `notifications/cancelled`; the call ends with [`CallError::Cancelled`]
    pub(in crate::session) fn cancel(
        &mut self,
        id: OutboundId,
        reason: Option<&str>,
    ) -> Result<(), CancelError> {
        let wire = self.outbound.wire_of(id);
        let on_the_wire = match self.outbound.call_mut(id) {
            Some(call) => call.on_the_wire(),
            None => return Err(CancelError::NotInFlight),
        };
        let entry = self.outbound.remove(wire).expect("looked up above");
        // A task-backed call is cancelled with tasks/cancel.
        if !matches!(self.phase, Phase::Closed) && !self.eof {
            self.cancel_followed_task(&entry);
        }
        // A request waiting for our input has no request in flight at the peer.
        if on_the_wire && !matches!(self.phase, Phase::Closed) && !self.eof {
            self.write_cancelled(wire, reason.unwrap_or("cancelled by the application"));
        }
        self.events.push_back(Event::Response {
            id,
            outcome: Err(CallError::Cancelled),
        });
        Ok(())
    }
}
