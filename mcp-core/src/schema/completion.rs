//! Argument autocompletion: `completion/complete`

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Meta, ResultType};
use super::fit::{FitVersion, fit_result};
use crate::ProtocolVersion;

/// The most completion values one result may carry
pub const MAX_COMPLETION_VALUES: usize = 100;

/// A reference to a prompt (`type: "ref/prompt"`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptReference {
    /// The prompt's name
    pub name: String,
    /// Human-readable name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A reference to a resource template (`type: "ref/resource"`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceTemplateReference {
    /// The URI or URI template
    pub uri: String,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What is being completed
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `"ref/prompt"`
    #[serde(rename = "ref/prompt")]
    Prompt(PromptReference),
    /// `"ref/resource"`
    #[serde(rename = "ref/resource")]
    Resource(ResourceTemplateReference),
}

impl Reference {
    /// A prompt reference
    pub fn prompt(name: impl Into<String>) -> Self {
        Self::Prompt(PromptReference {
            name: name.into(),
            title: None,
            extra: Map::new(),
        })
    }

    /// A resource template reference
    pub fn resource(uri: impl Into<String>) -> Self {
        Self::Resource(ResourceTemplateReference {
            uri: uri.into(),
            extra: Map::new(),
        })
    }
}

/// The argument being completed
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteArgument {
    /// The argument's name
    pub name: String,
    /// What the user typed so far
    pub value: String,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Values of other arguments, for context (2025-06-18 and later)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteContext {
    /// Arguments already resolved
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `completion/complete`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteParams {
    /// What is being completed
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument
    pub argument: CompleteArgument,
    /// Other arguments' values
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CompleteParams {
    /// Params completing `argument` (typed so far: `value`) of `reference`
    pub fn new(
        reference: Reference,
        argument: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        Self {
            reference,
            argument: CompleteArgument {
                name: argument.into(),
                value: value.into(),
                extra: Map::new(),
            },
            context: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// The completion values
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// Up to [`MAX_COMPLETION_VALUES`] suggestions
    pub values: Vec<String>,
    /// How many suggestions exist in all
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `completion/complete`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// The values
    pub completion: Completion,
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

impl CompleteResult {
    /// A result with these values
    pub fn new(values: Vec<String>) -> Self {
        Self {
            completion: Completion {
                values,
                ..Completion::default()
            },
            result_type: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl FitVersion for CompleteResult {
    /// Keeps at most [`MAX_COMPLETION_VALUES`] values (setting `hasMore`), as every version
    /// requires
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_result(&mut self.result_type, version);
        let c = &mut self.completion;
        if c.values.len() > MAX_COMPLETION_VALUES {
            c.total.get_or_insert(c.values.len() as u64);
            c.values.truncate(MAX_COMPLETION_VALUES);
            c.has_more = Some(true);
        }
    }
}

super::fit::same_in_every_version!(CompleteParams);
