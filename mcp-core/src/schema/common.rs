//! Building blocks shared by many messages: `_meta`, cursors, roles, annotations, icons,
//! logging levels, result types and the empty result

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use crate::RequestId;

/// A `_meta` object: reserved keys (see [`meta`](super::meta)) plus anything the sender adds
pub type Meta = Map<String, Value>;

/// An opaque pagination cursor
pub type Cursor = String;

/// A progress token: a string or an integer, like a request id
pub type ProgressToken = RequestId;

/// Who a message or content is for: the user or the assistant (model)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The human user
    User,
    /// The model
    Assistant,
}

/// Hints for the client about how to use or show an object
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the object is meant for
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Number>,
    /// When the object was last modified, as an ISO 8601 string (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The theme an icon is designed for
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// For a light background
    Light,
    /// For a dark background
    Dark,
}

/// An icon a client can show (2025-11-25 and later)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// URL or `data:` URI of the image
    pub src: String,
    /// MIME type, when the source does not say
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon suits
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Icon {
    /// An icon at `src`
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
            extra: Map::new(),
        }
    }
}

/// A list of icons, as carried by the `icons` field of tools, prompts, resources and
/// implementations
pub type Icons = Vec<Icon>;

/// Severity of a log message (RFC 5424 levels); ordered from `Debug` (least) to `Emergency`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LoggingLevel {
    /// Debugging detail
    Debug,
    /// Informational
    Info,
    /// Normal but significant
    Notice,
    /// Warning
    Warning,
    /// Error
    Error,
    /// Critical condition
    Critical,
    /// Action must be taken immediately
    Alert,
    /// The system is unusable
    Emergency,
}

/// How to read a result (2026-07-28 `resultType`); absent means [`ResultType::Complete`]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ResultType {
    /// `"complete"`: the result of the request itself
    #[default]
    Complete,
    /// `"input_required"`: the server needs input first (see
    /// [`InputRequiredResult`](super::InputRequiredResult))
    InputRequired,
    /// `"task"`: the server runs the request as a task (tasks extension)
    Task,
    /// Any other value, kept as sent
    Other(String),
}

impl ResultType {
    /// The wire string
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Task => "task",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for ResultType {
    fn from(s: &str) -> Self {
        match s {
            "complete" => Self::Complete,
            "input_required" => Self::InputRequired,
            "task" => Self::Task,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ResultType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = ResultType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a result type string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ResultType, E> {
                Ok(ResultType::from(v))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// Who may reuse a cached result (2026-07-28 `cacheScope`)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum CacheScope {
    /// No user-specific data: any cache may share it
    Public,
    /// Reusable only within the same authorization context
    Private,
}

/// A result with no content of its own (`ping`, `resources/subscribe`, `logging/setLevel`,
/// ext-tasks `tasks/update` and `tasks/cancel`, ...)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// How to read the result (2026-07-28)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of every paginated list request (`tools/list`, `resources/list`, ...)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PaginatedParams {
    /// Where to continue, from a previous result's `nextCursor`
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PaginatedParams {
    /// The first page
    pub fn new() -> Self {
        Self::default()
    }

    /// The page at `cursor`
    pub fn at(cursor: impl Into<Cursor>) -> Self {
        Self {
            cursor: Some(cursor.into()),
            ..Self::default()
        }
    }
}

/// Results that come in pages
pub trait PaginatedResult {
    /// The cursor of the next page; `None` on the last page
    fn next_cursor(&self) -> Option<&str>;
}

/// Params of a request that carries nothing but `_meta` (`ping`, `server/discover`,
/// `roots/list`, ...)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetaParams {
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MetaParams {
    /// Empty params
    pub fn new() -> Self {
        Self::default()
    }
}

/// Task augmentation of a request (2025-11-25 `task` param): run it as a task
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskMetadata {
    /// Requested time to live in milliseconds
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskMetadata {
    /// Run as a task that lives `ttl_ms` milliseconds
    pub fn with_ttl(ttl_ms: u64) -> Self {
        Self {
            ttl: Some(ttl_ms),
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logging_levels_are_ordered() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
    }

    #[test]
    fn result_type_keeps_unknown_values() {
        let t: ResultType = serde_json::from_str("\"later\"").unwrap();
        assert_eq!(t, ResultType::Other("later".into()));
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"later\"");
        let t: ResultType = serde_json::from_str("\"input_required\"").unwrap();
        assert_eq!(t, ResultType::InputRequired);
    }
}
