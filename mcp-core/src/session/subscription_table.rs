//! The server's subscriptions: open `subscriptions/listen` streams and legacy resource
//! subscriptions

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value;

use super::caller::Principal;
use crate::jsonrpc::RequestId;
use crate::schema::{ListKind, has_capability};

/// A `subscriptions/listen` filter (the request's `notifications` member) as the core reads
/// it: the server opens a listener with it, and a client that emulates `listen` on a legacy
/// connection sorts what that connection receives by it
///
/// ```
/// use mcp_sansio::ListKind;
/// use mcp_sansio::session::ListenFilter;
/// use serde_json::json;
///
/// let filter: ListenFilter = serde_json::from_value(json!({
///     "toolsListChanged": true,
///     "promptsListChanged": true,
///     "resourceSubscriptions": ["file:///dir"],
/// }))?;
/// // A legacy server that declares `listChanged` for tools only sends tool changes
/// let caps = json!({"tools": {"listChanged": true}, "prompts": {}});
/// assert_eq!(filter.legacy_granted(&caps), [ListKind::Tools]);
/// assert!(filter.wants_notification("notifications/tools/list_changed", None));
/// assert!(!filter.wants_notification("notifications/resources/list_changed", None));
/// let updated = json!({"uri": "file:///dir/a.txt"});
/// assert!(filter.wants_notification("notifications/resources/updated", Some(&updated)));
/// let elsewhere = json!({"uri": "file:///dirt"});
/// assert!(!filter.wants_notification("notifications/resources/updated", Some(&elsewhere)));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListenFilter {
    /// `notifications/tools/list_changed`
    #[serde(default)]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`
    #[serde(default)]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`
    #[serde(default)]
    pub resources_list_changed: bool,
    /// The resources whose `notifications/resources/updated` it wants (each covers the URIs
    /// under it: [`subscription_covers`])
    #[serde(default)]
    pub resource_subscriptions: Vec<String>,
    /// The tasks whose status notifications it wants
    #[serde(default)]
    pub task_ids: Vec<String>,
}

impl ListenFilter {
    /// Whether it asks for the changes of `kind`
    pub fn wants_list(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools_list_changed,
            ListKind::Prompts => self.prompts_list_changed,
            ListKind::Resources => self.resources_list_changed,
        }
    }

    /// On a legacy connection, where a server sends its list changes to every client: the
    /// lists it asks for that the server's `capabilities` declare `listChanged` for (the
    /// changes such a connection will see)
    pub fn legacy_granted(&self, capabilities: &Value) -> Vec<ListKind> {
        [ListKind::Tools, ListKind::Prompts, ListKind::Resources]
            .into_iter()
            .filter(|&kind| {
                self.wants_list(kind)
                    && has_capability(capabilities, &[kind.capability(), "listChanged"])
            })
            .collect()
    }

    /// Whether a notification a legacy connection received belongs to this filter: a
    /// `notifications/<list>/list_changed` it asks for, or a
    /// `notifications/resources/updated` of a URI one of its resource subscriptions covers
    pub fn wants_notification(&self, method: &str, params: Option<&Value>) -> bool {
        if method == "notifications/resources/updated" {
            let uri = params
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or("");
            return self
                .resource_subscriptions
                .iter()
                .any(|s| subscription_covers(s, uri));
        }
        [ListKind::Tools, ListKind::Prompts, ListKind::Resources]
            .into_iter()
            .any(|kind| kind.method() == method && self.wants_list(kind))
    }
}

/// Whether a subscription to the resource `subscribed` covers a change of `uri`: the same
/// URI, or one under it (`file:///dir` covers `file:///dir/a.txt`, `file:///dir/` covers
/// `file:///dir/a.txt`, neither covers `file:///dirt`)
///
/// The rule [`ServerSession::notify_resource_updated`](crate::session::ServerSession::notify_resource_updated) sends by, for legacy
/// `resources/subscribe` and 2026 listen streams alike; a client that sorts the
/// `notifications/resources/updated` of one connection among its own subscribers uses it too.
///
/// ```
/// use mcp_sansio::session::subscription_covers;
///
/// assert!(subscription_covers("file:///dir", "file:///dir"));
/// assert!(subscription_covers("file:///dir", "file:///dir/a.txt"));
/// assert!(subscription_covers("file:///dir/", "file:///dir/a.txt"));
/// assert!(!subscription_covers("file:///dir", "file:///dirt"));
/// assert!(!subscription_covers("file:///dir/a.txt", "file:///dir"));
/// ```
pub fn subscription_covers(subscribed: &str, uri: &str) -> bool {
    uri == subscribed
        || uri
            .strip_prefix(subscribed)
            .is_some_and(|rest| rest.starts_with('/') || subscribed.ends_with('/'))
}

/// One open `subscriptions/listen` stream
#[derive(Debug)]
pub(crate) struct Listener {
    pub(super) id: RequestId,
    pub(super) lists: [bool; 3],
    pub(super) resources: BTreeSet<String>,
    pub(super) tasks: BTreeSet<String>,
    /// Who listens: only their own tasks' notifications reach them
    pub(super) principal: Option<Principal>,
}

/// The server's subscription bookkeeping
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    pub(super) listeners: Vec<Listener>,
    /// Legacy `resources/subscribe`
    pub(super) legacy_resources: BTreeSet<String>,
}

impl Subscriptions {
    pub(crate) fn is_listener(&self, id: &RequestId) -> bool {
        self.listeners.iter().any(|l| l.id == *id)
    }

    /// Ends a stream the client cancelled; `true` if it was one
    pub(crate) fn cancel(&mut self, id: &RequestId) -> bool {
        let before = self.listeners.len();
        self.listeners.retain(|l| l.id != *id);
        before != self.listeners.len()
    }
}
