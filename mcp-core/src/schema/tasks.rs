//! Tasks: the 2025-11-25 core tasks (`tasks/get|result|list|cancel`,
//! `notifications/tasks/status`) and the [`Task`] shape shared with the 2026 tasks extension
//! (see [`ext_tasks`](super::ext_tasks))

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::common::{Cursor, Meta, PaginatedResult, ResultType};
use super::fit::{FitVersion, fit_result};
use super::mrtr::InputRequests;
use crate::ProtocolVersion;

/// The `_meta` key that ties a message to a task (2025-11-25): `{"taskId": "..."}`
pub const RELATED_TASK_META_KEY: &str = "io.modelcontextprotocol/related-task";

/// Where a task stands
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running
    Working,
    /// Waiting for input from the requester
    InputRequired,
    /// Finished successfully
    Completed,
    /// Failed
    Failed,
    /// Cancelled
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// The value under [`RELATED_TASK_META_KEY`]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RelatedTaskMetadata {
    /// The task
    pub task_id: String,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A JSON-RPC error object as carried by a failed task (tasks extension)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskError {
    /// Error code
    pub code: i64,
    /// Message
    pub message: String,
    /// Extra information
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `Option<Option<T>>` where the outer `None` is "absent" and the inner `None` is `null`
mod nullable {
    use super::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer, T: Serialize>(
        v: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// A task: the state of a request that runs asynchronously
///
/// One type for both task flavours. 2025-11-25 names the lifetime `ttl` and the poll
/// interval `pollInterval`; the 2026 tasks extension names them `ttlMs` and
/// `pollIntervalMs` and adds the status details (`inputRequests`, `result`, `error`).
/// Set either name; [`FitVersion`] writes the one the version uses. In the lifetime fields
/// `Some(None)` is `null` (unlimited).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task's id
    pub task_id: String,
    /// Where it stands
    pub status: TaskStatus,
    /// A human-readable note on the status
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time
    pub created_at: String,
    /// ISO 8601 time of the last change
    pub last_updated_at: String,
    /// Lifetime in ms from creation, `null` = unlimited (2025-11-25 name)
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub ttl: Option<Option<u64>>,
    /// Lifetime in ms from creation, `null` = unlimited (tasks extension name)
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub ttl_ms: Option<Option<u64>>,
    /// Suggested polling interval in ms (2025-11-25 name)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Suggested polling interval in ms (tasks extension name)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the task waits for, when `input_required` (tasks extension)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The final result, when `completed` (tasks extension)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// The error, when `failed` (tasks extension)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TaskError>,
    /// `_meta` (when the task is a result or notification params)
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Task {
    /// The lifetime under either name (`None` when neither is set, `Some(None)` unlimited)
    pub fn lifetime_ms(&self) -> Option<Option<u64>> {
        self.ttl_ms.or(self.ttl)
    }
}

impl FitVersion for Task {
    /// Writes the lifetime and poll interval under the names the version uses (2025-11-25:
    /// `ttl`, `pollInterval`; later: `ttlMs`, `pollIntervalMs`), `null` when no lifetime was
    /// set; before 2026 drops the extension's status details
    fn fit_to(&mut self, version: ProtocolVersion) {
        let ttl = Some(self.lifetime_ms().unwrap_or(None));
        let poll = self.poll_interval_ms.or(self.poll_interval);
        if version >= ProtocolVersion::V2026_07_28 {
            (self.ttl, self.ttl_ms) = (None, ttl);
            (self.poll_interval, self.poll_interval_ms) = (None, poll);
            self.input_requests.fit_to(version);
        } else {
            (self.ttl, self.ttl_ms) = (ttl, None);
            (self.poll_interval, self.poll_interval_ms) = (poll, None);
            self.input_requests = None;
            self.result = None;
            self.error = None;
        }
    }
}

/// Result of a task-augmented request in 2025-11-25: `{"task": {...}}`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// The new task
    pub task: Task,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FitVersion for CreateTaskResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.task.fit_to(version);
    }
}

/// Params of `tasks/get`, `tasks/result`, `tasks/cancel`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskIdParams {
    /// The task
    pub task_id: String,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskIdParams {
    /// Params naming a task
    pub fn new(task_id: impl Into<String>) -> Self {
        Self {
            task_id: task_id.into(),
            meta: None,
            extra: Map::new(),
        }
    }
}

/// A task as a result: `tasks/get` (both flavours) and the 2025-11-25 `tasks/cancel`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetTaskResult {
    /// How to read the result (2026-07-28: `"complete"`; [`FitVersion`] fills it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task (its `meta` and `extra` are the result's)
    #[serde(flatten)]
    pub task: Task,
}

impl FitVersion for GetTaskResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_result(&mut self.result_type, version);
        self.task.fit_to(version);
    }
}

/// Result of the 2025-11-25 `tasks/cancel`: the task, now cancelled
pub type CancelTaskResult = GetTaskResult;

/// Params of `notifications/tasks/status` (2025-11-25) and `notifications/tasks`
/// (extension): the task
pub type TaskStatusNotificationParams = Task;

/// Result of `tasks/result` (2025-11-25): the original request's result, whatever its type
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetTaskPayloadResult {
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result's fields
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `tasks/list` (2025-11-25)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListTasksResult {
    /// The tasks of this page
    pub tasks: Vec<Task>,
    /// Cursor of the next page
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PaginatedResult for ListTasksResult {
    fn next_cursor(&self) -> Option<&str> {
        self.next_cursor.as_deref()
    }
}

impl FitVersion for ListTasksResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.tasks.fit_to(version);
    }
}

super::fit::same_in_every_version!(TaskIdParams, GetTaskPayloadResult);
