//! Tools: definitions, `tools/list` and `tools/call`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Icon, Meta};
use super::fit::FitVersion;
use super::list::list_result;
use crate::ProtocolVersion;

/// Hints about a tool's behaviour; untrusted unless the server is
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Human-readable name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling again with the same arguments has no further effect
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of entities (the web, ...)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Whether a tool may run as a task (2025-11-25)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never as a task (the default)
    Forbidden,
    /// The client chooses
    Optional,
    /// Only as a task
    Required,
}

/// How a tool runs (2025-11-25 `execution`)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether the tool may run as a task
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool the server offers
///
/// `input_schema` and `output_schema` are kept verbatim, so every JSON Schema keyword
/// survives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Programmatic name
    pub name: String,
    /// Human-readable name (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root has `"type": "object"`
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent` (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints (2025-03-26 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Task support (2025-11-25)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tool {
    /// A tool with a name and an input schema (`"type": "object"` is added if missing)
    pub fn new(name: impl Into<String>, mut input_schema: Map<String, Value>) -> Self {
        input_schema
            .entry("type")
            .or_insert_with(|| Value::from("object"));
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            icons: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Sets the description
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the output schema
    #[must_use]
    pub fn with_output_schema(mut self, schema: Map<String, Value>) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the task support
    #[must_use]
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.execution
            .get_or_insert_with(Default::default)
            .task_support = Some(support);
        self
    }
}

impl FitVersion for Tool {
    /// Adds `"type": "object"` to the input schema when missing (every version requires it);
    /// in 2025-06-18 and 2025-11-25, whose output schemas must be `"type": "object"` too,
    /// drops an output schema of another type
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.input_schema
            .entry("type")
            .or_insert_with(|| Value::from("object"));
        let object_only = matches!(
            version,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25
        );
        if object_only
            && self
                .output_schema
                .as_ref()
                .is_some_and(|s| s.get("type") != Some(&Value::from("object")))
        {
            self.output_schema = None;
        }
    }
}

list_result!(
    /// Result of `tools/list`
    ListToolsResult, tools, "tools", Tool
);
