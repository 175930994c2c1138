//! The server's subscriptions: open `subscriptions/listen` streams and legacy resource
//! subscriptions

use std::collections::BTreeSet;

use super::caller::Principal;
use crate::jsonrpc::RequestId;

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
