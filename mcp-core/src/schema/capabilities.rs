//! Typed client and server capabilities, for every version
//!
//! The session engine keeps capabilities as JSON (`serde_json::Value`) so nothing a peer
//! declares is lost; these types read and build them. Convert with `TryFrom<Value>` /
//! `From<..> for Value`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An object whose content is not (yet) specified: presence is what counts
pub type CapabilityObject = Map<String, Value>;

/// `{"listChanged": bool}` capabilities (`roots`, `prompts`, `tools`)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListChangedCapability {
    /// Whether list-changed notifications are sent
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListChangedCapability {}

/// The client's `sampling` capability
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingCapability {
    /// Supports `includeContext` other than `none` (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CapabilityObject>,
    /// Supports `tools` and `toolChoice` (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<CapabilityObject>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `elicitation` capability (2025-06-18 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitationCapability {
    /// Form mode (2025-11-25 and later; an empty capability means form only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<CapabilityObject>,
    /// URL mode (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<CapabilityObject>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `tasks` capability of 2025-11-25 (both sides)
///
/// `requests` says which requests may be task-augmented: for a client
/// `{"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}`, for a server
/// `{"tools": {"call": {}}}`; it is kept as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TasksCapability {
    /// Supports `tasks/list`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<CapabilityObject>,
    /// Supports `tasks/cancel`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<CapabilityObject>,
    /// Which requests may be task-augmented
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Map<String, Value>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a client supports
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCapabilities {
    /// Non-standard capabilities
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// `roots/list` (and, in the legacy era, `listChanged` notifications)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<ListChangedCapability>,
    /// `sampling/createMessage`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// `elicitation/create` (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Tasks (2025-11-25)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions by identifier (2026-07-28 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `resources` capability
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourcesCapability {
    /// Supports subscriptions to single resources
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Sends list-changed notifications
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a server supports
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// Non-standard capabilities
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Sends log messages
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<CapabilityObject>,
    /// Argument completion (2025-03-26 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<CapabilityObject>,
    /// Prompts
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Resources
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Tools
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Tasks (2025-11-25)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions by identifier (2026-07-28 and later), e.g. the tasks extension
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map<String, Value>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

macro_rules! value_conversions {
    ($t:ty) => {
        impl TryFrom<Value> for $t {
            type Error = serde_json::Error;
            fn try_from(value: Value) -> Result<Self, Self::Error> {
                serde_json::from_value(value)
            }
        }

        impl TryFrom<&Value> for $t {
            type Error = serde_json::Error;
            fn try_from(value: &Value) -> Result<Self, Self::Error> {
                Self::deserialize(value)
            }
        }

        impl From<$t> for Value {
            fn from(caps: $t) -> Self {
                serde_json::to_value(caps).expect("capabilities serialize")
            }
        }

        impl From<&$t> for Value {
            fn from(caps: &$t) -> Self {
                serde_json::to_value(caps).expect("capabilities serialize")
            }
        }
    };
}

value_conversions!(ClientCapabilities);
value_conversions!(ServerCapabilities);
