//! Notifications shared by both sides: cancellation, progress, list changes

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::common::{Meta, MetaParams, ProgressToken};
use crate::RequestId;

/// Params of `notifications/cancelled`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CancelledNotificationParams {
    /// The request to cancel (required except in 2025-11-25, where tasks are cancelled with
    /// `tasks/cancel` instead)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `notifications/progress`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification
    pub progress: Number,
    /// The total, if known
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// What is happening (2025-03-26 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of the `notifications/*/list_changed` notifications and
/// `notifications/initialized`: only `_meta`
pub type ListChangedParams = MetaParams;

super::fit::same_in_every_version!(CancelledNotificationParams, ProgressNotificationParams);

/// Which list changed
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`
    Tools,
    /// `prompts/list`
    Prompts,
    /// `resources/list` (and templates)
    Resources,
}

impl ListKind {
    pub(crate) fn method(self) -> &'static str {
        match self {
            Self::Tools => "notifications/tools/list_changed",
            Self::Prompts => "notifications/prompts/list_changed",
            Self::Resources => "notifications/resources/list_changed",
        }
    }

    pub(crate) fn capability(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Prompts => "prompts",
            Self::Resources => "resources",
        }
    }
}
