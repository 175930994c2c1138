//! Legacy `resources/subscribe` / `resources/unsubscribe` bookkeeping, per connection

use std::collections::BTreeSet;

use crate::jsonrpc::{ErrorObject, code};

/// The resource URIs one connection subscribed to (legacy era, up to 2025-11-25)
///
/// Bounded: at most [`limit`](Self::limit) URIs; one more is refused with an error to send
/// back. In the modern era a `subscriptions/listen` filter carries the URIs instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscriptions {
    uris: BTreeSet<String>,
    limit: usize,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Self::new(Self::DEFAULT_LIMIT)
    }
}

impl Subscriptions {
    /// The default limit: 1000 URIs per connection
    pub const DEFAULT_LIMIT: usize = 1000;

    /// No subscriptions, at most `limit` at a time
    pub fn new(limit: usize) -> Self {
        Self {
            uris: BTreeSet::new(),
            limit,
        }
    }

    /// The most URIs held at once
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many URIs are held
    pub fn len(&self) -> usize {
        self.uris.len()
    }

    /// Whether none are held
    pub fn is_empty(&self) -> bool {
        self.uris.is_empty()
    }

    /// Answers `resources/subscribe`; subscribing again to a held URI is a no-op
    ///
    /// # Errors
    /// -32602 `Too many subscriptions` with `data: {"limit": n}` when `uri` is new and
    /// [`limit`](Self::limit) URIs are already held; nothing changes.
    pub fn subscribe(&mut self, uri: &str) -> Result<(), ErrorObject> {
        if self.uris.contains(uri) {
            return Ok(());
        }
        if self.uris.len() >= self.limit {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Too many subscriptions (the limit is {})", self.limit),
            )
            .with_data(&serde_json::json!({"limit": self.limit})));
        }
        self.uris.insert(uri.to_owned());
        Ok(())
    }

    /// Answers `resources/unsubscribe`; whether `uri` was held (the answer is `{}` either
    /// way)
    pub fn unsubscribe(&mut self, uri: &str) -> bool {
        self.uris.remove(uri)
    }

    /// Whether `uri` itself is held
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.uris.contains(uri)
    }

    /// Whether a change of `uri` calls for `notifications/resources/updated` on this
    /// connection: `uri` is held, or is a sub-resource of a held URI (it continues a held
    /// URI after a `/`, e.g. `file:///dir/a.txt` under `file:///dir`)
    pub fn updated(&self, uri: &str) -> bool {
        if self.uris.contains(uri) {
            return true;
        }
        uri.match_indices('/').any(|(at, _)| {
            let parent = &uri[..at];
            let with_slash = &uri[..=at];
            at + 1 < uri.len() && (self.uris.contains(parent) || self.uris.contains(with_slash))
        })
    }

    /// The held URIs, sorted
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.uris.iter().map(String::as_str)
    }
}
