//! The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28 and later)
//!
//! Tasks left the core protocol in 2026-07-28. A server that runs a request as a task
//! answers with a [`CreateTaskResult`] (`resultType: "task"`); the client polls with
//! `tasks/get` ([`TaskIdParams`](super::TaskIdParams) →
//! [`GetTaskResult`](super::GetTaskResult), shared with 2025-11-25), answers input with
//! `tasks/update`, cancels with `tasks/cancel` (an [`EmptyResult`](super::EmptyResult)),
//! and may listen for `notifications/tasks` (params: [`Task`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType};
use super::fit::FitVersion;
use super::mrtr::InputResponses;
use super::tasks::Task;
use crate::ProtocolVersion;

/// The extension's identifier, as used in `capabilities.extensions`
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// A request accepted as a task: the task itself, flat, with `resultType: "task"`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateTaskResult {
    /// `"task"` ([`FitVersion`] sets it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task (its `meta` and `extra` are the result's)
    #[serde(flatten)]
    pub task: Task,
}

impl FitVersion for CreateTaskResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.result_type = Some(ResultType::Task);
        self.task.fit_to(version);
    }
}

/// Params of `tasks/update`: answers to a task's outstanding input requests
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UpdateTaskParams {
    /// The task
    pub task_id: String,
    /// Answers, by input request key
    pub input_responses: InputResponses,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FitVersion for UpdateTaskParams {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.input_responses.fit_to(version);
    }
}
