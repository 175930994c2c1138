//! The server's task table: the tasks of one session, their options, statuses and wire form

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::schema::{InputRequests, RELATED_TASK_META_KEY, TaskStatus, has_capability};
use crate::session::Principal;
use crate::session::ids::TaskId;
use crate::session::inbound_table::Answers;
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

/// Errors from [`Inbound::start_task`](crate::session::Inbound::start_task) and [`Session::update_task`](super::Session::update_task)
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
