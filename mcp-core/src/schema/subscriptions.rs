//! Subscriptions (2026-07-28): `subscriptions/listen` and
//! `notifications/subscriptions/acknowledged`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType};
use super::fit::{FitVersion, fit_result};
use crate::ProtocolVersion;

/// Which notifications a listener wants (or the server agreed to send)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (tasks extension)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `subscriptions/listen`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenParams {
    /// What to listen for
    pub notifications: SubscriptionFilter,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SubscriptionsListenParams {
    /// Params listening for `notifications`
    pub fn new(notifications: SubscriptionFilter) -> Self {
        Self {
            notifications,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// Result of `subscriptions/listen`, sent when the server ends the subscription
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionsListenResult {
    /// How to read the result ([`FitVersion`] fills it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`, which must hold the subscription id
    #[serde(rename = "_meta")]
    pub meta: Meta,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FitVersion for SubscriptionsListenResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_result(&mut self.result_type, version);
    }
}

/// Params of `notifications/subscriptions/acknowledged`
pub type SubscriptionsAcknowledgedParams = SubscriptionsListenParams;

super::fit::same_in_every_version!(SubscriptionsListenParams);
