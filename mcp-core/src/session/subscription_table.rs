//! The server's subscriptions: open `subscriptions/listen` streams and legacy resource
//! subscriptions

use std::collections::BTreeSet;

use super::caller::Principal;
use crate::jsonrpc::RequestId;

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
