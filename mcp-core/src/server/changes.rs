//! Which lists changed, and which `notifications/*/list_changed` that calls for

use serde_json::Value;

use crate::schema::has_capability;
use crate::schema::method::{
    Notification, PromptListChanged, ResourceListChanged, ToolListChanged,
};

/// Which of the catalog's lists changed (an entry added or removed)
///
/// From [`Catalog::take_changes`](super::Catalog::take_changes) (one owner) or
/// [`ListChanges::between`] two [`Revisions`] (a catalog shared by many connections).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListChanges {
    /// Tools
    pub tools: bool,
    /// Resources or resource templates
    pub resources: bool,
    /// Prompts
    pub prompts: bool,
}

impl ListChanges {
    /// Whether anything changed
    pub fn any(&self) -> bool {
        self.tools || self.resources || self.prompts
    }

    /// What changed from `old` to `new`
    pub fn between(old: Revisions, new: Revisions) -> Self {
        Self {
            tools: old.tools != new.tools,
            resources: old.resources != new.resources,
            prompts: old.prompts != new.prompts,
        }
    }

    /// The `notifications/*/list_changed` methods to send for these changes, in the order
    /// tools, resources, prompts
    ///
    /// A method is included only when its list changed **and** `server_capabilities`
    /// (as given to [`ServerConfig`](crate::ServerConfig)) declares `listChanged: true` for
    /// it. Legacy era: send each to the connection with
    /// [`Session::send_notification`](crate::Session::send_notification). Modern era (2026-07-28): there is no
    /// connection-wide channel; the same names go to the `subscriptions/listen` streams
    /// whose filter asked for them (`toolsListChanged`, ...), which is the binding's job.
    pub fn notifications(&self, server_capabilities: &Value) -> Vec<&'static str> {
        let declared = |list: &str| has_capability(server_capabilities, &[list, "listChanged"]);
        let mut out = Vec::new();
        if self.tools && declared("tools") {
            out.push(ToolListChanged::NAME);
        }
        if self.resources && declared("resources") {
            out.push(ResourceListChanged::NAME);
        }
        if self.prompts && declared("prompts") {
            out.push(PromptListChanged::NAME);
        }
        out
    }
}

/// Change counters of the catalog's lists, from
/// [`Catalog::revisions`](super::Catalog::revisions)
///
/// Each counter moves on every change of its list. A connection that shares the catalog
/// keeps the revisions it last saw and compares with [`ListChanges::between`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Revisions {
    /// Tools
    pub tools: u64,
    /// Resources and resource templates
    pub resources: u64,
    /// Prompts
    pub prompts: u64,
}
