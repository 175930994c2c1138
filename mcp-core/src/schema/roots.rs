//! Roots: `roots/list` and its list-changed notification

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Meta;
use super::fit::FitVersion;
use crate::ProtocolVersion;

/// A directory or file the server may work in
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI
    pub uri: String,
    /// Human-readable name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Root {
    /// A root at `uri`
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// Result of `roots/list` (in 2026-07-28 an input response, which has no `resultType`)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots
    pub roots: Vec<Root>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ListRootsResult {
    /// A result with roots
    pub fn new(roots: Vec<Root>) -> Self {
        Self {
            roots,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl FitVersion for ListRootsResult {
    fn fit_to(&mut self, _version: ProtocolVersion) {}
}
