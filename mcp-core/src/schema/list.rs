//! One page of a list result: the shape every `*/list` result shares

/// A paginated, cacheable list result type: `$name { $field: Vec<$item>, nextCursor, .. }`
/// with its constructor, [`PaginatedResult`](super::PaginatedResult) and
/// [`FitVersion`](super::FitVersion)
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
