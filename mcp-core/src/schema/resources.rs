//! Resources: `resources/list`, `resources/templates/list`, `resources/read`,
//! `resources/subscribe`, `resources/unsubscribe` and their notifications

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Annotations, CacheScope, Icon, Meta, ResultType};
use super::content::ResourceContents;
use super::fit::{FitVersion, fit_cacheable};
use super::mrtr::InputResponses;
use crate::ProtocolVersion;

/// A resource the server can read (also the body of a `resource_link` content block)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// The URI
    pub uri: String,
    /// Programmatic name
    pub name: String,
    /// Human-readable name (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size in bytes, before any encoding
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
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

impl Resource {
    /// A resource with a URI and a name
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
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

    /// Sets the MIME type
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A family of resources described by a URI template (RFC 6570)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template
    pub uri_template: String,
    /// Programmatic name
    pub name: String,
    /// Human-readable name (2025-06-18 and later)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Hints for the client
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
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

impl ResourceTemplate {
    /// A template with a URI template and a name
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

macro_rules! list_result {
    ($(#[$doc:meta])* $name:ident, $field:ident, $wire:literal, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[non_exhaustive]
        pub struct $name {
            #[doc = concat!("The `", $wire, "` of this page")]
            #[serde(rename = $wire)]
            pub $field: Vec<$item>,
            /// Cursor of the next page; absent on the last page
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub next_cursor: Option<$crate::schema::Cursor>,
            /// How to read the result (2026-07-28; [`FitVersion`] fills it)
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<$crate::schema::ResultType>,
            /// Cache lifetime in milliseconds (2026-07-28, required there; set by the caller)
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ttl_ms: Option<u64>,
            /// Who may cache it (2026-07-28, required there; set by the caller)
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cache_scope: Option<$crate::schema::CacheScope>,
            /// `_meta`
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<$crate::schema::Meta>,
            /// Every other field, kept as sent
            #[serde(flatten)]
            pub extra: ::serde_json::Map<String, ::serde_json::Value>,
        }

        impl $name {
            #[doc = concat!("A page of `", $wire, "`")]
            pub fn new($field: Vec<$item>) -> Self {
                Self {
                    $field,
                    next_cursor: None,
                    result_type: None,
                    ttl_ms: None,
                    cache_scope: None,
                    meta: None,
                    extra: ::serde_json::Map::new(),
                }
            }

            /// Sets the caching hints (required by 2026-07-28)
            #[must_use]
            pub fn with_cache(mut self, ttl_ms: u64, scope: $crate::schema::CacheScope) -> Self {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(scope);
                self
            }
        }

        impl $crate::schema::PaginatedResult for $name {
            fn next_cursor(&self) -> Option<&str> {
                self.next_cursor.as_deref()
            }
        }

        impl $crate::schema::FitVersion for $name {
            fn fit_to(&mut self, version: $crate::ProtocolVersion) {
                $crate::schema::fit::fit_cacheable(&mut self.result_type, &mut self.ttl_ms, &mut self.cache_scope, version);
                self.$field.fit_to(version);
            }
        }
    };
}
pub(crate) use list_result;

impl FitVersion for Resource {
    fn fit_to(&mut self, _version: ProtocolVersion) {}
}

impl FitVersion for ResourceTemplate {
    fn fit_to(&mut self, _version: ProtocolVersion) {}
}

list_result!(
    /// Result of `resources/list`
    ListResourcesResult, resources, "resources", Resource
);
list_result!(
    /// Result of `resources/templates/list`
    ListResourceTemplatesResult, resource_templates, "resourceTemplates", ResourceTemplate
);

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

/// Params of `notifications/resources/updated`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceUpdatedNotificationParams {
    /// The URI of the resource that changed (may be a sub-resource of the subscribed one)
    pub uri: String,
    /// `_meta`
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Every other field, kept as sent
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
