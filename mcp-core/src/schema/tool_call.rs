//! Calling a tool: `tools/call`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType, TaskMetadata};
use super::content::{ContentBlock, TextContent};
use super::fit::{FitVersion, fit_result};
use super::mrtr::InputResponses;
use crate::ProtocolVersion;

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

impl FitVersion for CallToolParams {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.input_responses.fit_to(version);
    }
}
