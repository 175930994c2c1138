//! Tools: definitions, `tools/list` and `tools/call`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Icon, Meta, ResultType};
use super::content::{ContentBlock, TextContent};
use super::fit::{FitVersion, fit_result};
use super::mrtr::InputResponses;
use super::resources::list_result;
use super::tasks::TaskMetadata;
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

/// Params of `tools/call`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolParams {
    /// The tool's name
    pub name: String,
    /// The arguments
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Run as a task with these settings (2025-11-25 task augmentation)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Answers to a previous `input_required` result (2026-07-28)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state from a previous `input_required` result (2026-07-28)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolParams {
    /// A call with no arguments
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: None,
            task: None,
            input_responses: None,
            request_state: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Sets the arguments
    #[must_use]
    pub fn with_arguments(mut self, arguments: Map<String, Value>) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

/// Result of `tools/call`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured result blocks
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured result (2025-06-18 and later; any JSON value in 2026-07-28, an object
    /// before)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed (errors the model should see go here, not in JSON-RPC errors)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// How to read the result (2026-07-28; [`FitVersion`] fills it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// A successful result with these blocks
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            structured_content: None,
            is_error: None,
            result_type: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// A successful result with one text block
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block
    pub fn error(text: impl Into<String>) -> Self {
        let mut result = Self::text(text);
        result.is_error = Some(true);
        result
    }

    /// A successful structured result, with its JSON text as the text block (as the spec
    /// recommends for clients that read only `content`)
    pub fn structured(value: Value) -> Self {
        let mut result = Self::text(value.to_string());
        result.structured_content = Some(value);
        result
    }

    /// Whether the tool reported an error
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

impl FitVersion for CallToolResult {
    /// Fits every block; in 2025-06-18 and 2025-11-25, where `structuredContent` must be an
    /// object, a non-object value is removed and, unless a text block exists, becomes one
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_result(&mut self.result_type, version);
        self.content.fit_to(version);
        let object_only = matches!(
            version,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25
        );
        if object_only
            && self
                .structured_content
                .as_ref()
                .is_some_and(|v| !v.is_object())
        {
            let value = self.structured_content.take().expect("checked above");
            if !self.content.iter().any(|c| c.as_text().is_some()) {
                self.content
                    .push(ContentBlock::Text(TextContent::new(value.to_string())));
            }
        }
    }
}
