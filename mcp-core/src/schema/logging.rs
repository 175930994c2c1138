//! Logging: `logging/setLevel` and `notifications/message`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{LoggingLevel, Meta};

/// Params of `logging/setLevel` (legacy era; modern requests carry the level in `_meta`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetLevelParams {
    /// The least severe level the client wants
    pub level: LoggingLevel,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SetLevelParams {
    /// Params setting a level
    pub fn new(level: LoggingLevel) -> Self {
        Self {
            level,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// Params of `notifications/message`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoggingMessageNotificationParams {
    /// Severity
    pub level: LoggingLevel,
    /// Which logger
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The payload: any JSON value
    pub data: Value,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl LoggingMessageNotificationParams {
    /// A log message
    pub fn new(level: LoggingLevel, data: impl Into<Value>) -> Self {
        Self {
            level,
            logger: None,
            data: data.into(),
            meta: None,
            extra: Map::new(),
        }
    }
}

super::fit::same_in_every_version!(SetLevelParams, LoggingMessageNotificationParams);
