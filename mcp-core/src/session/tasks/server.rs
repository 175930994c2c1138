//! Tasks, server side: a request answered with a task handle, then worked on in the
//! background; the core keeps the task table and answers the task methods itself
//!
//! Both forms of the protocol are served from one table:
//! - 2025-11-25 tasks: a `tools/call` with `params.task` (when the server declares
//!   `tasks.requests.tools.call`) may be answered with `CreateTaskResult` (`{task: ...}`);
//!   the client then uses `tasks/get`, `tasks/result` (answered once the task ends),
//!   `tasks/list` and `tasks/cancel`, and hears `notifications/tasks/status`.
//! - The 2026-07-28 extension `io.modelcontextprotocol/tasks`: a `tools/call` whose request
//!   declares the extension (when the server declares it too) may be answered with a flat
//!   `CreateTaskResult` (`resultType: "task"`); the client uses `tasks/get` (which carries the
//!   result, the error or the outstanding `inputRequests`), `tasks/update` and
//!   `tasks/cancel`.
//!
//! The application calls [`Session::start_task`] instead of answering, then
//! [`Session::update_task`] as the work goes on. The status machine is enforced:
//! `working` ⇄ `input_required` → `completed` | `failed` | `cancelled`, and a terminal status
//! never changes. Tasks expire `ttl` after creation (on the session's clock); the table is
//! bounded by [`Limits::max_tasks`](crate::session::Limits::max_tasks).
//!
//! Where the 2025-11-25 spec and the extension differ on a tool result with `isError: true`,
//! each is followed: 2025-11-25 reports such a task as `failed` ("for tool calls
//! specifically, this includes cases where the tool call result has `isError` set to
//! true"), the extension as `completed`.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::schema::{
    FitVersion, InputRequests, InputResponse, InputResponses, RELATED_TASK_META_KEY, TaskStatus,
    has_capability,
};
use crate::session::ids::InboundId;
use crate::session::ids::{InputId, TaskId};
use crate::session::inbound_table::Answers;
use crate::session::outbound_table::{OutEntry, Owner};
use crate::session::task_table::{
    CANCELLED_MESSAGE, ServerTask, TASKS_EXTENSION, TaskError, TaskIdParams, TaskOptions,
    TaskUpdate, may_see, task_wire_id,
};
use crate::session::{Answer, ClientSession, Core, Event, Principal, Role, Session, Side};
use crate::version::{Era, ProtocolVersion};

impl<R: Role> Session<R> {
    /// Moves a task on; see [`TaskUpdate`]
    ///
    /// A server's tasks are the requests its handlers turned into tasks
    /// ([`Inbound::start_task`](crate::session::Inbound::start_task)); a 2025-11-25 client's are the
    /// input requests it runs as tasks ([`start_input_task`](Session::start_input_task)).
    ///
    /// # Errors
    /// [`TaskError::UnknownTask`] (expired or never existed), [`TaskError::Terminal`] (a
    /// terminal status never changes), [`TaskError::ResultNotAnObject`].
    pub fn update_task(
        &mut self,
        now: Instant,
        task: TaskId,
        update: TaskUpdate,
    ) -> Result<(), TaskError> {
        self.core.tick(now);
        self.core.update_task(task, update)
    }

    /// A task's current status, if it is still in the table
    pub fn task_status(&self, task: TaskId) -> Option<TaskStatus> {
        self.core.server_tasks.tasks.get(&task).map(|t| t.status)
    }

    /// The id the peer knows a task by (its `taskId`), if it is still in the table
    pub fn task_wire_id(&self, task: TaskId) -> Option<&str> {
        self.core
            .server_tasks
            .tasks
            .get(&task)
            .map(|t| t.wire_id.as_str())
    }

    /// Puts `scope` in the ids of this session's tasks (`<seed>-<scope>-<n>`): an HTTP
    /// server gives each of its 2025 sessions its own, as they share one id space through a
    /// task store with its 2026 session (`<seed>-<n>`) and every other process
    pub(crate) fn scope_task_ids(&mut self, scope: u64) {
        self.core.server_tasks.scope = Some(scope);
    }
}

impl ClientSession {
    /// Whether the server offered to run this input request as a task (a 2025-11-25
    /// task-augmented `sampling/createMessage` or `elicitation/create`); see
    /// [`start_input_task`](Session::start_input_task)
    pub fn input_task_offered(&self, id: InputId) -> bool {
        match id {
            InputId::Live(inbound) => self
                .core
                .inbound
                .get(inbound)
                .is_some_and(|e| e.task_offered.is_some()),
            InputId::Retry(_) => false,
        }
    }

    /// Runs a server's input request (task-augmented `sampling/createMessage` or
    /// `elicitation/create`, 2025-11-25, surfaced as
    /// [`ClientEvent::InputRequired`](crate::session::ClientEvent::InputRequired) with
    /// [`InputId::Live`]) as a task; finish it with [`update_task`](Session::update_task)
    /// and `TaskUpdate::Completed(the sampling or elicitation result)`
    ///
    /// # Errors
    /// As [`Inbound::start_task`](crate::session::Inbound::start_task); [`TaskError::NotOffered`] also
    /// for a `Retry` id.
    pub fn start_input_task(
        &mut self,
        now: Instant,
        id: InputId,
        options: TaskOptions,
    ) -> Result<TaskId, TaskError> {
        self.core.tick(now);
        match id {
            InputId::Live(inbound) => self.core.start_task(inbound, options),
            InputId::Retry(_) => Err(TaskError::NotOffered),
        }
    }
}

impl Core {
    pub(in crate::session) fn start_task(
        &mut self,
        inbound: InboundId,
        options: TaskOptions,
    ) -> Result<TaskId, TaskError> {
        let Some(entry) = self.inbound.get_mut(inbound) else {
            return Err(TaskError::NotInFlight);
        };
        let Some(requested_ttl) = entry.task_offered else {
            return Err(TaskError::NotOffered);
        };
        let modern = entry.version.era() == Era::Modern;
        let version = entry.version;
        if self.server_tasks.tasks.len() >= self.limits().max_tasks {
            self.evict_one_terminal_task();
            if self.server_tasks.tasks.len() >= self.limits().max_tasks {
                return Err(TaskError::TableFull);
            }
        }
        let entry = self.inbound.remove(inbound).expect("looked up above");
        self.inbound_ended(inbound, &entry);
        let ttl = options.ttl.or(requested_ttl.map(Duration::from_millis));
        let now_ms = self.clock_ms();
        let seq = self.server_tasks.next;
        self.server_tasks.next += 1;
        let id = TaskId(seq);
        let (seed, key) = match &self.role {
            Side::Server(s) => (s.task_id_seed, &s.task_id_key),
            Side::Client(c) => (c.task_id_seed, &c.task_id_key),
        };
        let wire_id = task_wire_id(key, seed, self.server_tasks.scope, seq);
        let owner = entry.caller.as_ref().and_then(|c| c.principal.clone());
        let expires = ttl.map(|t| self.now + t);
        let task = ServerTask {
            wire_id: wire_id.clone(),
            owner,
            modern,
            version,
            status: TaskStatus::Working,
            message: None,
            created_ms: now_ms,
            updated_ms: now_ms,
            ttl,
            poll_interval: options.poll_interval,
            expires,
            result: None,
            error: None,
            pending_input: InputRequests::new(),
            answers: Answers::new(),
            waiters: Vec::new(),
            announced: true,
            stored: false,
        };
        let created = if modern {
            let mut v = task.to_json();
            v["resultType"] = json!("task");
            v
        } else {
            json!({ "task": task.to_json() })
        };
        if let Some(at) = expires {
            self.server_tasks.expiries.insert((at, id));
        }
        self.server_tasks.by_wire.insert(wire_id, id);
        self.server_tasks.tasks.insert(id, task);
        let created = created.to_string();
        if self.shared_config().is_some() {
            // The handle goes out once the store holds the task (any process may be asked).
            self.shared_create(id, entry.wire_id, entry.batch, created, modern);
            return Ok(id);
        }
        let answer = if modern {
            Answer::ModernResult(&created)
        } else {
            Answer::Result(&created)
        };
        self.answer(Some(&entry.wire_id), entry.batch, answer);
        if let Some(b) = entry.batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
        // After the peer's EOF, the last answered request closes the session.
        self.close_if_drained();
        Ok(id)
    }

    fn evict_one_terminal_task(&mut self) {
        let oldest_terminal = self
            .server_tasks
            .tasks
            .iter()
            .find(|(_, t)| t.status.is_terminal() && t.waiters.is_empty())
            .map(|(id, _)| *id);
        if let Some(id) = oldest_terminal {
            self.server_tasks.remove(id);
        }
    }

    pub(in crate::session) fn update_task(
        &mut self,
        id: TaskId,
        update: TaskUpdate,
    ) -> Result<(), TaskError> {
        let now_ms = self.clock_ms();
        let Some(task) = self.server_tasks.tasks.get_mut(&id) else {
            return Err(TaskError::UnknownTask);
        };
        if task.status.is_terminal() {
            return Err(TaskError::Terminal(task.status));
        }
        match &update {
            TaskUpdate::Completed(result) if !crate::raw::is_object(result.get()) => {
                return Err(TaskError::ResultNotAnObject);
            }
            // A client's task (2025-11-25 sampling or elicitation) cannot ask the server
            // for input: servers answer no such requests.
            TaskUpdate::InputRequired(_) if self.role.is_client() => {
                return Err(TaskError::InputNotAllowed);
            }
            _ => {}
        }
        task.updated_ms = now_ms;
        match update {
            TaskUpdate::Working(message) => {
                task.status = TaskStatus::Working;
                task.message = message;
                // Input no longer needed: forget it, and withdraw 2025-11-25 live requests.
                task.pending_input.clear();
                task.answers.clear();
                self.withdraw_task_input(id);
            }
            TaskUpdate::InputRequired(mut requests) => {
                requests.fit_to(task.version);
                task.status = TaskStatus::InputRequired;
                task.answers.clear();
                if task.modern {
                    task.pending_input = requests;
                } else {
                    task.pending_input = requests.clone();
                    // A new round replaces the live requests of the last one.
                    self.withdraw_task_input(id);
                    self.ask_task_input_live(id, requests);
                }
            }
            TaskUpdate::Completed(result) => {
                // 2025-11-25: a tool result with isError is a failed task.
                let is_error = !task.modern && tool_result_is_error(&result);
                task.status = if is_error {
                    TaskStatus::Failed
                } else {
                    TaskStatus::Completed
                };
                task.result = Some(result);
                task.pending_input.clear();
            }
            TaskUpdate::Failed(error) => {
                task.status = TaskStatus::Failed;
                task.error = Some(error);
                task.pending_input.clear();
            }
        }
        self.task_changed(id);
        Ok(())
    }

    /// After any status change: tell the client (2025-11-25), answer waiting
    /// `tasks/result` requests once terminal, and write the shared record
    pub(super) fn task_changed(&mut self, id: TaskId) {
        self.task_changed_here(id);
        if self.shared_config().is_some() {
            self.shared_put(id);
        }
    }

    /// [`task_changed`](Self::task_changed) without the store
    pub(super) fn task_changed_here(&mut self, id: TaskId) {
        let Some(task) = self.server_tasks.tasks.get_mut(&id) else {
            return;
        };
        let terminal = task.status.is_terminal();
        let waiters = if terminal {
            std::mem::take(&mut task.waiters)
        } else {
            Vec::new()
        };
        let notify = (!task.modern && task.announced).then(|| task.to_json().to_string());
        let listeners = task.modern.then(|| {
            (
                task.wire_id.clone(),
                task.owner.clone(),
                task.detailed().to_string(),
            )
        });
        if terminal {
            self.withdraw_task_input(id);
        }
        if let Some(params) = notify {
            let params = RawValue::from_string(params).expect("valid JSON");
            if !matches!(self.phase, crate::session::phase::Phase::Closed) {
                let out = self.out.start();
                jsonrpc::write_notification(out, "notifications/tasks/status", Some(&params));
                self.out.finish();
            }
        }
        for (wire, batch) in waiters {
            self.answer_task_result(id, &wire, batch);
        }
        if let Some((task_id, owner, detailed)) = listeners {
            self.notify_task_listeners(&task_id, owner.as_ref(), &detailed);
        }
    }

    /// 2025-11-25 `tasks/result` for a terminal task: the original result, or its error
    fn answer_task_result(&mut self, id: TaskId, wire: &RequestId, batch: Option<u32>) {
        let Some(task) = self.server_tasks.tasks.get(&id) else {
            return;
        };
        match task.result_answer() {
            Ok(text) => self.answer(Some(wire), batch, Answer::Result(&text)),
            Err(error) => self.answer(Some(wire), batch, Answer::Error(&error)),
        }
    }

    /// 2025-11-25: the input a task needs goes to the client as live requests
    fn ask_task_input_live(&mut self, id: TaskId, requests: InputRequests) {
        // Nobody reads a closed session; the task stays input_required until its handler
        // moves it on (as when a live request times out).
        if matches!(self.phase, crate::session::phase::Phase::Closed) || self.eof {
            return;
        }
        let timeout = self.role.timeouts().request;
        let related = self
            .server_tasks
            .tasks
            .get(&id)
            .map(|t| json!({ "taskId": t.wire_id }).to_string())
            .unwrap_or_default();
        for (key, request) in requests {
            let method = request.method();
            let params = match serde_json::to_value(&request) {
                Ok(Value::Object(mut m)) => m.remove("params"),
                _ => None,
            };
            let mut params = params.unwrap_or_else(|| json!({}));
            if let Some(obj) = params.as_object_mut() {
                let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(
                        RELATED_TASK_META_KEY.into(),
                        serde_json::from_str(&related).unwrap_or(Value::Null),
                    );
                }
            }
            let params = serde_json::value::to_raw_value(&params).expect("a Value");
            let owner = Owner::TaskInput {
                task: id,
                key: key.into(),
            };
            let entry = OutEntry::with_timeout(owner, method, Some(params), self.now, timeout);
            let wire = self.outbound.insert(entry);
            self.transmit_outbound(wire, &[]);
        }
    }

    /// Withdraws the live input requests of a task that ended or no longer needs them
    fn withdraw_task_input(&mut self, id: TaskId) {
        for wire in self.outbound.task_inputs_of(id) {
            self.outbound.remove(wire);
            self.write_cancelled(wire, "the task this input was for has ended");
        }
    }

    /// 2025-11-25: the answer to a task's live input request
    pub(in crate::session) fn task_input_answered(
        &mut self,
        id: TaskId,
        entry: &OutEntry,
        outcome: Result<Box<RawValue>, crate::session::CallError>,
    ) {
        let key = entry.input_key().to_owned();
        let Some(task) = self.server_tasks.tasks.get_mut(&id) else {
            self.stats.dropped_messages += 1;
            return;
        };
        match outcome {
            Ok(raw) if is_input_response(&raw) && task.pending_input.remove(&key).is_some() => {
                task.answers.insert(key, raw);
            }
            _ => {
                // A failed input request leaves the task waiting; the handler may fail it.
                self.stats.dropped_messages += 1;
                return;
            }
        }
        self.task_input_complete(id);
    }

    /// Once no input is outstanding: back to `working`, and the answers go to the app
    fn task_input_complete(&mut self, id: TaskId) {
        let now_ms = self.clock_ms();
        let Some(task) = self.server_tasks.tasks.get_mut(&id) else {
            return;
        };
        if !task.pending_input.is_empty() || task.status != TaskStatus::InputRequired {
            return;
        }
        let answers = std::mem::take(&mut task.answers);
        task.status = TaskStatus::Working;
        task.updated_ms = now_ms;
        let responses: InputResponses = answers
            .iter()
            .filter_map(|(k, v)| {
                serde_json::from_str::<InputResponse>(v.get())
                    .ok()
                    .map(|r| (k.clone(), r))
            })
            .collect();
        self.events.push_back(Event::TaskInput {
            task: id,
            responses,
        });
        self.task_changed(id);
    }

    /// The task methods, answered from the table; `true` when the request was one of them
    pub(in crate::session) fn serve_task_method(
        &mut self,
        request: &jsonrpc::Request,
        version: ProtocolVersion,
        request_caps: &Value,
        batch: Option<u32>,
    ) -> bool {
        let method = request.method.as_str();
        if !matches!(
            method,
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" | "tasks/update"
        ) {
            return false;
        }
        let id = &request.id;
        let modern = version.era() == Era::Modern;
        if modern && !has_capability(self.own_caps(), &["extensions", TASKS_EXTENSION]) {
            let error = ErrorObject::method_not_found(method);
            self.answer(Some(id), batch, Answer::Error(&error));
            return true;
        }
        if modern && !has_capability(request_caps, &["extensions", TASKS_EXTENSION]) {
            let error = TaskError::NotOffered.to_error();
            self.answer(Some(id), batch, Answer::Error(&error));
            return true;
        }
        let params = request.params.as_deref().map_or("{}", RawValue::get);
        if method == "tasks/list" {
            let caller = crate::session::caller::principal_of(self.caller.as_ref()).cloned();
            self.serve_task_list(id, params, batch, caller.as_ref());
            return true;
        }
        let params = match serde_json::from_str::<TaskIdParams>(params) {
            Ok(p) => p,
            Err(e) => {
                let error = ErrorObject::invalid_params(format!("invalid {method} params: {e}"));
                self.answer(Some(id), batch, Answer::Error(&error));
                return true;
            }
        };
        let caller = crate::session::caller::principal_of(self.caller.as_ref()).cloned();
        let local = self.server_tasks.by_wire.get(&params.task_id).copied();
        // Another principal's task is answered exactly as an unknown id is.
        let seen = local
            .filter(|seq| may_see(self.server_tasks.tasks[seq].owner.as_ref(), caller.as_ref()));
        let Some(seq) = seen else {
            if self.shared_config().is_some() {
                // Another process may run it: its record says. Another principal's task
                // here is looked up too (and refused by its record), so that it takes
                // the time an unknown id takes and nobody learns where it runs.
                self.shared_lookup(method, id.clone(), batch, modern, params, caller);
                return true;
            }
            let error = ErrorObject::invalid_params(format!("unknown task: {}", params.task_id))
                .with_data(&json!({ "taskId": params.task_id }));
            self.answer(Some(id), batch, Answer::Error(&error));
            return true;
        };
        let ack = r#"{"resultType":"complete"}"#;
        match method {
            "tasks/get" => {
                let task = &self.server_tasks.tasks[&seq];
                if modern {
                    let text = task.detailed().to_string();
                    self.answer(Some(id), batch, Answer::ModernResult(&text));
                } else {
                    let text = task.to_json().to_string();
                    self.answer(Some(id), batch, Answer::Result(&text));
                }
            }
            "tasks/result" => {
                let task = self.server_tasks.tasks.get_mut(&seq).expect("indexed");
                if task.status.is_terminal() {
                    self.answer_task_result(seq, id, batch);
                } else if self.server_tasks.waiting() + self.shared.waiting()
                    >= self.limits().max_in_flight_inbound
                {
                    // Waiting requests are requests in progress: bounded like the others.
                    let error = ErrorObject::internal_error(format!(
                        "too many requests in progress (limit {}); retry later",
                        self.limits().max_in_flight_inbound
                    ));
                    self.answer(Some(id), batch, Answer::Error(&error));
                } else {
                    // Answered when the task ends.
                    let task = self.server_tasks.tasks.get_mut(&seq).expect("indexed");
                    task.waiters.push((id.clone(), batch));
                    if let Some(b) = batch {
                        self.batches.add_pending(b);
                    }
                }
            }
            "tasks/cancel" => {
                let task = self.server_tasks.tasks.get_mut(&seq).expect("indexed");
                if task.status.is_terminal() {
                    if modern {
                        self.answer(Some(id), batch, Answer::Result(ack));
                    } else {
                        let error = ErrorObject::invalid_params(format!(
                            "task {} already ended ({:?})",
                            task.wire_id, task.status
                        ));
                        self.answer(Some(id), batch, Answer::Error(&error));
                    }
                    return true;
                }
                self.cancel_task_here(seq);
                let text = if modern {
                    ack.to_owned()
                } else {
                    self.server_tasks.tasks[&seq].to_json().to_string()
                };
                // The 2026 ack is exactly `{"resultType":"complete"}`.
                self.answer(Some(id), batch, Answer::Result(&text));
            }
            "tasks/update" => {
                self.answer(Some(id), batch, Answer::Result(ack));
                self.give_task_input(seq, params.input_responses.unwrap_or_default());
            }
            _ => unreachable!("matched above"),
        }
        true
    }

    /// Cancels a task this session runs (`tasks/cancel` here or through another process)
    pub(super) fn cancel_task_here(&mut self, seq: TaskId) {
        let now_ms = self.clock_ms();
        let Some(task) = self.server_tasks.tasks.get_mut(&seq) else {
            return;
        };
        if task.status.is_terminal() {
            return;
        }
        task.status = TaskStatus::Cancelled;
        task.message = Some(CANCELLED_MESSAGE.into());
        task.updated_ms = now_ms;
        task.pending_input.clear();
        self.events.push_back(Event::TaskCancelled { task: seq });
        self.task_changed(seq);
    }

    /// Answers to a task's input requests (`tasks/update` here or through another process)
    pub(super) fn give_task_input(&mut self, seq: TaskId, answers: Answers) {
        let Some(task) = self.server_tasks.tasks.get_mut(&seq) else {
            return;
        };
        if task.status == TaskStatus::InputRequired {
            for (key, value) in answers {
                // Unknown keys are ignored; the ack is the same. An answer that is
                // no input response leaves its key pending (still listed by
                // tasks/get) instead of vanishing from the Event::TaskInput.
                if is_input_response(&value) && task.pending_input.remove(&key).is_some() {
                    task.answers.insert(key, value);
                }
            }
        }
        self.task_input_complete(seq);
    }

    /// `tasks/list`: the caller's tasks only
    fn serve_task_list(
        &mut self,
        id: &RequestId,
        params: &str,
        batch: Option<u32>,
        caller: Option<&Principal>,
    ) {
        const PAGE: usize = 100;
        let after = serde_json::from_str::<Value>(params)
            .ok()
            .and_then(|p| p.get("cursor").and_then(Value::as_str).map(str::to_owned));
        let start = match after.as_deref().map(str::parse::<u64>) {
            None => 0,
            Some(Ok(n)) => n + 1,
            Some(Err(_)) => {
                let error = ErrorObject::invalid_params("invalid cursor");
                return self.answer(Some(id), batch, Answer::Error(&error));
            }
        };
        let page: Vec<(&TaskId, &ServerTask)> = self
            .server_tasks
            .tasks
            .range(TaskId(start)..)
            .filter(|(_, t)| may_see(t.owner.as_ref(), caller))
            .take(PAGE + 1)
            .collect();
        let more = page.len() > PAGE;
        let tasks: Vec<Value> = page.iter().take(PAGE).map(|(_, t)| t.to_json()).collect();
        let mut result = json!({ "tasks": tasks });
        if more {
            result["nextCursor"] = json!(page[PAGE - 1].0.0.to_string());
        }
        let text = result.to_string();
        self.answer(Some(id), batch, Answer::Result(&text));
    }

    /// Drops tasks whose lifetime ended
    pub(in crate::session) fn expire_tasks(&mut self) {
        while let Some(&(at, id)) = self.server_tasks.expiries.first() {
            if at > self.now {
                break;
            }
            self.server_tasks.expiries.pop_first();
            if let Some(task) = self.server_tasks.tasks.get(&id) {
                for (wire, batch) in task.waiters.clone() {
                    let error = ErrorObject::invalid_params("the task expired");
                    self.answer(Some(&wire), batch, Answer::Error(&error));
                }
            }
            self.withdraw_task_input(id);
            self.server_tasks.remove(id);
        }
    }
}

fn tool_result_is_error(result: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct R {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    serde_json::from_str::<R>(result.get()).is_ok_and(|r| r.is_error)
}

/// Whether an answer decodes as an input response (and so can reach [`ServerEvent::TaskInput`](crate::session::ServerEvent::TaskInput))
fn is_input_response(answer: &RawValue) -> bool {
    serde_json::from_str::<InputResponse>(answer.get()).is_ok()
}
