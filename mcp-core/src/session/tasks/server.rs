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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::schema::{
    FitVersion, InputRequests, InputResponse, InputResponses, RELATED_TASK_META_KEY, TaskStatus,
    has_capability,
};
use crate::session::inbound_table::Answers;
use crate::session::ids::{InputId, TaskId};
use crate::session::ids::InboundId;
use crate::session::outbound_table::{OutEntry, Owner};
use crate::session::{Answer, ClientSession, Core, Event, Principal, Role, Session, Side};
use crate::version::{Era, ProtocolVersion};

/// The status message of a task the client cancelled
pub(super) const CANCELLED_MESSAGE: &str = "cancelled by the client";

/// The id of the tasks extension of 2026-07-28
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How long a task lives and how often the client should poll
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskOptions {
    /// Lifetime from creation; `None` keeps the client's requested ttl (2025-11-25), else
    /// unlimited
    pub ttl: Option<Duration>,
    /// Suggested polling interval
    pub poll_interval: Option<Duration>,
}

impl TaskOptions {
    /// With a lifetime
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// With a suggested polling interval
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = Some(every);
        self
    }
}

/// A change of a task's state, from the application
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskUpdate {
    /// Still working, with an optional status message
    Working(Option<String>),
    /// The task needs input: 2026 clients read the requests from `tasks/get` and answer with
    /// `tasks/update`; 2025-11-25 clients get them as live requests. Either way the answers
    /// arrive as one [`ServerEvent::TaskInput`](crate::session::ServerEvent::TaskInput) and the task is `working` again.
    InputRequired(InputRequests),
    /// Done: the result of the original request (a `CallToolResult`)
    Completed(Box<RawValue>),
    /// Failed with a JSON-RPC error
    Failed(ErrorObject),
}

/// Errors from [`Inbound::start_task`](crate::session::Inbound::start_task) and [`Session::update_task`]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The request already ended
    #[error("the request is no longer in flight")]
    NotInFlight,
    /// The client did not ask for (2025-11-25) or allow (2026 extension) a task on this
    /// request; answer it directly, or with [`TaskError::to_error`] if the tool needs a task
    #[error("the client did not offer to run this request as a task")]
    NotOffered,
    /// No such task (it expired, or was never created)
    #[error("no such task")]
    UnknownTask,
    /// A terminal status never changes
    #[error("the task already ended ({0:?})")]
    Terminal(TaskStatus),
    /// [`Limits::max_tasks`](crate::session::Limits::max_tasks) live tasks exist
    #[error("the task table is full")]
    TableFull,
    /// The result is not a JSON object
    #[error("a task result must be a JSON object")]
    ResultNotAnObject,
    /// Only server tasks can ask for input; a client's task cannot ask the server
    #[error("a client's task cannot ask the server for input")]
    InputNotAllowed,
}

impl TaskError {
    /// The error for a request that needs a task the client did not allow: -32021 naming
    /// the tasks extension (2026) or the tasks capability
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::NotOffered => ErrorObject::new(
                jsonrpc::code::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability: the tasks extension",
            )
            .with_data(&json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})),
            other => ErrorObject::internal_error(other),
        }
    }
}

/// One task in the server's table
#[derive(Debug)]
pub(crate) struct ServerTask {
    pub(super) wire_id: String,
    /// Who created it: only requests of the same principal (or, without one, of none)
    /// reach it; the others get what an unknown id gets
    pub(super) owner: Option<Principal>,
    pub(super) modern: bool,
    pub(super) version: ProtocolVersion,
    pub(super) status: TaskStatus,
    pub(super) message: Option<String>,
    pub(super) created_ms: u64,
    pub(super) updated_ms: u64,
    pub(super) ttl: Option<Duration>,
    pub(super) poll_interval: Option<Duration>,
    pub(super) expires: Option<Instant>,
    pub(super) result: Option<Box<RawValue>>,
    pub(super) error: Option<ErrorObject>,
    /// Input still outstanding (2026: listed in `tasks/get`; 2025-11-25: live requests)
    pub(super) pending_input: InputRequests,
    pub(super) answers: Answers,
    /// 2025-11-25 `tasks/result` requests waiting for the end: (wire id, batch)
    pub(super) waiters: Vec<(RequestId, Option<u32>)>,
    /// Shared tasks: the client has its task handle (status notifications may go out)
    pub(super) announced: bool,
    /// Shared tasks: the store holds the latest record (else the next lease renewal
    /// writes it again)
    pub(super) stored: bool,
}

/// The server's task table
#[derive(Debug, Default)]
pub(crate) struct ServerTasks {
    pub(super) next: u64,
    /// Set on each 2025 session of an HTTP server that shares its tasks: part of the task
    /// ids, so ids of different sessions of one process differ in the shared store
    pub(super) scope: Option<u64>,
    pub(super) tasks: BTreeMap<TaskId, ServerTask>,
    pub(super) by_wire: HashMap<String, TaskId>,
    pub(super) expiries: BTreeSet<(Instant, TaskId)>,
}

impl ServerTasks {
    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        self.expiries.first().map(|(at, _)| *at)
    }

    /// `tasks/result` requests waiting for their task's end, over all tasks
    pub(super) fn waiting(&self) -> usize {
        self.tasks.values().map(|t| t.waiters.len()).sum()
    }

    /// Drops a waiting `tasks/result` the peer cancelled; `true` if it was one
    pub(crate) fn cancel_waiter(&mut self, wire: &RequestId) -> bool {
        for task in self.tasks.values_mut() {
            if let Some(i) = task.waiters.iter().position(|(w, _)| w == wire) {
                task.waiters.remove(i);
                return true;
            }
        }
        false
    }

    pub(super) fn remove(&mut self, id: TaskId) -> Option<ServerTask> {
        let task = self.tasks.remove(&id)?;
        self.by_wire.remove(&task.wire_id);
        if let Some(at) = task.expires {
            self.expiries.remove(&(at, id));
        }
        Some(task)
    }
}

/// The wire id of task `seq` of a session with `scope` in a process seeded `seed`: 128 bits
/// of HMAC-SHA256 under `key`, in hex, so that nobody without the key can tell another
/// task's id from its own
#[doc(hidden)]
pub fn task_wire_id(key: &[u8; 32], seed: u64, scope: Option<u64>, seq: u64) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key).expect("any key length");
    mac.update(b"task");
    mac.update(&seed.to_be_bytes());
    match scope {
        Some(scope) => {
            mac.update(&[1]);
            mac.update(&scope.to_be_bytes());
        }
        None => mac.update(&[0]),
    }
    mac.update(&seq.to_be_bytes());
    crate::session::caller::hex(&mac.finalize().into_bytes()[..16])
}

/// Whether a request from `caller` may see a task created by `owner`: the same principal,
/// or neither has one
pub(super) fn may_see(owner: Option<&Principal>, caller: Option<&Principal>) -> bool {
    owner == caller
}

/// `taskId` params of the task methods
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaskIdParams {
    pub(super) task_id: String,
    #[serde(default)]
    pub(super) input_responses: Option<Answers>,
}

/// Whether the client allows a task for this request; `Some(requested ttl)` when it does
///
/// A server runs `tools/call` as a task; a client (2025-11-25) runs the server's
/// `sampling/createMessage` and `elicitation/create` as tasks. `own_caps` are the receiver's
/// capabilities, `request_caps` the sender's.
pub(crate) fn task_offered(
    method: &str,
    version: ProtocolVersion,
    own_caps: &Value,
    request_caps: &Value,
    legacy_task_param: Option<&TaskParam>,
) -> Option<Option<u64>> {
    let (path, _) = task_capability(method)?;
    if version.era() == Era::Modern {
        let server = has_capability(own_caps, &["extensions", TASKS_EXTENSION]);
        let client = has_capability(request_caps, &["extensions", TASKS_EXTENSION]);
        return (method == "tools/call" && server && client).then_some(None);
    }
    let declared = has_capability(own_caps, path);
    match legacy_task_param {
        Some(p) if declared && version >= ProtocolVersion::V2025_11_25 => Some(p.ttl),
        _ => None,
    }
}

/// The receiver capability (2025-11-25) that allows running `method` as a task: its path
/// and its dotted name
pub(crate) fn task_capability(method: &str) -> Option<(&'static [&'static str], &'static str)> {
    Some(match method {
        "tools/call" => (
            &["tasks", "requests", "tools", "call"],
            "tasks.requests.tools.call",
        ),
        "sampling/createMessage" => (
            &["tasks", "requests", "sampling", "createMessage"],
            "tasks.requests.sampling.createMessage",
        ),
        "elicitation/create" => (
            &["tasks", "requests", "elicitation", "create"],
            "tasks.requests.elicitation.create",
        ),
        _ => return None,
    })
}

/// The 2025-11-25 `task` request param
#[derive(Debug, Deserialize, Default)]
pub(crate) struct TaskParam {
    #[serde(default)]
    ttl: Option<u64>,
}

/// Formats Unix milliseconds as an ISO 8601 UTC timestamp
pub(crate) fn iso8601(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        unix_ms % 1000
    )
}

pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl ServerTask {
    /// What 2025-11-25 `tasks/result` answers for this terminal task: the original result
    /// (tied to the task in `_meta`), or its error
    pub(super) fn result_answer(&self) -> Result<String, ErrorObject> {
        let related = json!({ "taskId": self.wire_id }).to_string();
        if let Some(result) = &self.result {
            let mut out = Vec::new();
            crate::raw::write_patched(
                &mut out,
                Some(result.get()),
                &crate::raw::Patch {
                    members: &[],
                    meta: &[(RELATED_TASK_META_KEY, related.as_bytes())],
                    meta_wins: false,
                },
            );
            Ok(String::from_utf8(out).expect("JSON is UTF-8"))
        } else {
            Err(self.error.clone().unwrap_or_else(|| {
                ErrorObject::internal_error(
                    format!("the task was {:?}", self.status).to_lowercase(),
                )
            }))
        }
    }

    /// The task object of either form, without the result-specific members
    pub(super) fn to_json(&self) -> Value {
        let mut v = json!({
            "taskId": self.wire_id,
            "status": self.status,
            "createdAt": iso8601(self.created_ms),
            "lastUpdatedAt": iso8601(self.updated_ms),
        });
        let ttl = self.ttl.map(millis);
        let poll = self.poll_interval.map(millis);
        if self.modern {
            v["ttlMs"] = json!(ttl);
            if let Some(p) = poll {
                v["pollIntervalMs"] = json!(p);
            }
        } else {
            v["ttl"] = json!(ttl);
            if let Some(p) = poll {
                v["pollInterval"] = json!(p);
            }
        }
        if let Some(m) = &self.message {
            v["statusMessage"] = json!(m);
        }
        v
    }

    /// The 2026 `DetailedTask` form of `tasks/get` and `notifications/tasks`
    pub(super) fn detailed(&self) -> Value {
        let mut v = self.to_json();
        match self.status {
            TaskStatus::Completed => {
                if let Some(r) = &self.result {
                    v["result"] = serde_json::from_str(r.get()).unwrap_or(Value::Null);
                }
            }
            TaskStatus::Failed => {
                if let Some(e) = &self.error {
                    v["error"] = error_json(e);
                }
            }
            TaskStatus::InputRequired => {
                v["inputRequests"] = serde_json::to_value(&self.pending_input).unwrap_or_default();
            }
            _ => {}
        }
        v
    }
}

pub(super) fn error_json(e: &ErrorObject) -> Value {
    let mut v = json!({"code": e.code, "message": e.message});
    if let Some(d) = &e.data {
        v["data"] = serde_json::from_str(d.get()).unwrap_or(Value::Null);
    }
    v
}

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
            if !matches!(self.phase, crate::session::lifecycle::Phase::Closed) {
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
        if matches!(self.phase, crate::session::lifecycle::Phase::Closed) || self.eof {
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
