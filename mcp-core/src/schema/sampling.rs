//! Sampling: `sampling/createMessage` (the server asks the client's model)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::common::TaskMetadata;
use super::common::{Meta, Role};
use super::content::{SamplingContent, SamplingContents, TextContent};
use super::fit::FitVersion;
use super::tools::Tool;
use crate::ProtocolVersion;

/// A hint for model selection
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// A model name or a part of one (`"claude-3-5-sonnet"`, `"sonnet"`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ModelHint {
    /// A hint naming a model
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            extra: Map::new(),
        }
    }
}

/// What the server prefers in a model; priorities range from 0 to 1
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Hints, in order of preference
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<Number>,
    /// How much speed matters
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<Number>,
    /// How much capability matters
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<Number>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which MCP servers' context to include in the prompt
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// None
    None,
    /// The requesting server's
    ThisServer,
    /// Every connected server's
    AllServers,
}

/// How the model may use tools (2025-11-25 and later)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides
    Auto,
    /// The model must use a tool
    Required,
    /// The model must not use tools
    None,
}

/// Tool choice for sampling (2025-11-25 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChoice {
    /// The mode (default `auto`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolChoice {
    /// A tool choice with a mode
    pub fn new(mode: ToolChoiceMode) -> Self {
        Self {
            mode: Some(mode),
            extra: Map::new(),
        }
    }
}

/// One message of a sampling conversation
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who says it
    pub role: Role,
    /// One block, or several (2025-11-25 and later)
    pub content: SamplingContents,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SamplingMessage {
    /// A message
    pub fn new(role: Role, content: impl Into<SamplingContents>) -> Self {
        Self {
            role,
            content: content.into(),
            meta: None,
            extra: Map::new(),
        }
    }

    /// A user message with text
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingContent::text(text))
    }
}

/// Params of `sampling/createMessage`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation
    pub messages: Vec<SamplingMessage>,
    /// Model preferences
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include (soft-deprecated in 2025-11-25)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    /// The most tokens to sample
    pub max_tokens: u64,
    /// Stop sequences
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Tools the model may use (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them (2025-11-25 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task with these settings (2025-11-25 task augmentation)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CreateMessageParams {
    /// Params with a conversation and a token limit
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl FitVersion for CreateMessageParams {
    /// Fits every block and tool; before 2025-11-25, where a message holds exactly one block,
    /// a message with several blocks becomes several consecutive messages of the same role
    /// (an empty one becomes one empty text block)
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.tools.fit_to(version);
        if version >= ProtocolVersion::V2025_11_25 {
            for m in &mut self.messages {
                m.content.fit_to(version);
            }
            return;
        }
        let messages = std::mem::take(&mut self.messages);
        for m in messages {
            let SamplingMessage {
                role,
                content,
                meta,
                extra,
            } = m;
            let mut blocks = content.into_vec();
            if blocks.is_empty() {
                blocks.push(SamplingContent::Text(TextContent::new("")));
            }
            for (i, mut block) in blocks.into_iter().enumerate() {
                block.fit_to(version);
                let first = i == 0;
                self.messages.push(SamplingMessage {
                    role,
                    content: SamplingContents::One(block),
                    meta: if first { meta.clone() } else { None },
                    extra: if first { extra.clone() } else { Map::new() },
                });
            }
        }
    }
}

impl FitVersion for SamplingContents {
    /// Fits every block; before 2025-11-25 several blocks become one: their texts joined by
    /// newlines when any block is text, else the first block (an empty list becomes an empty
    /// text block)
    fn fit_to(&mut self, version: ProtocolVersion) {
        match self {
            Self::One(block) => block.fit_to(version),
            Self::Many(blocks) => {
                blocks.fit_to(version);
                if version >= ProtocolVersion::V2025_11_25 {
                    return;
                }
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter_map(|b| match b {
                        SamplingContent::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let one = if texts.is_empty() {
                    blocks
                        .drain(..)
                        .next()
                        .unwrap_or_else(|| SamplingContent::text(""))
                } else {
                    SamplingContent::text(texts.join("\n"))
                };
                *self = Self::One(one);
            }
        }
    }
}

/// Result of `sampling/createMessage` (in 2026-07-28 an input response, which has no
/// `resultType`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who said it (the assistant)
    pub role: Role,
    /// What was sampled
    pub content: SamplingContents,
    /// The model that produced it
    pub model: String,
    /// Why sampling stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"` or
    /// another string
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CreateMessageResult {
    /// An assistant message from `model`
    pub fn new(content: impl Into<SamplingContents>, model: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl FitVersion for CreateMessageResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        self.content.fit_to(version);
    }
}
