//! Reading resources and subscribing to them: `resources/read`, `resources/subscribe`,
//! `resources/unsubscribe`

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{CacheScope, Meta, ResultType};
use super::content::ResourceContents;
use super::fit::{FitVersion, fit_cacheable};
use super::mrtr::InputResponses;
use crate::ProtocolVersion;

/// Params of `resources/read`, `resources/subscribe` and `resources/unsubscribe`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceParams {
    /// The resource's URI
    pub uri: String,
    /// Answers to a previous `input_required` result (2026-07-28, `resources/read` only)
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

impl ResourceParams {
    /// Params naming a resource
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            input_responses: None,
            request_state: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// Params of `resources/read`
pub type ReadResourceParams = ResourceParams;
/// Params of `resources/subscribe` (legacy era)
pub type SubscribeParams = ResourceParams;
/// Params of `resources/unsubscribe` (legacy era)
pub type UnsubscribeParams = ResourceParams;

/// Result of `resources/read`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents (one resource may have several parts)
    pub contents: Vec<ResourceContents>,
    /// How to read the result (2026-07-28; [`FitVersion`] fills it)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime in milliseconds (2026-07-28, required there; set by the caller)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache it (2026-07-28, required there; set by the caller)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ReadResourceResult {
    /// A result with contents
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self {
            contents,
            result_type: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
            extra: Map::new(),
        }
    }

    /// Sets the caching hints (required by 2026-07-28)
    #[must_use]
    pub fn with_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.ttl_ms = Some(ttl_ms);
        self.cache_scope = Some(scope);
        self
    }
}

impl FitVersion for ReadResourceResult {
    fn fit_to(&mut self, version: ProtocolVersion) {
        fit_cacheable(
            &mut self.result_type,
            &mut self.ttl_ms,
            &mut self.cache_scope,
            version,
        );
    }
}

super::fit::same_in_every_version!(ResourceParams);
