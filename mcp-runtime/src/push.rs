//! Pushing changes: the hub of a server's live connections, and what a server pushes to them
//!
//! Every connection a `Server` serves (each byte-stream connection's actor, each HTTP
//! server's actor with all its sessions) registers a [`Link`] in the server's [`Hub`] when it
//! starts; the [`Registration`] it keeps removes the link when the connection ends. The
//! server's handle broadcasts a [`Push`] to every link, and each actor hands it to its
//! sessions: which session sends what (a legacy subscriber of the URI, a 2026 listen stream
//! that asked for it, nobody when `listChanged` is not declared) is `mcp-sansio`'s rule
//! ([`ServerSession::notify_resource_updated`](mcp_sansio::ServerSession::notify_resource_updated),
//! `HttpServer::notify_list_changed`, ...).
//!
//! Runtime-neutral: a link is a closure that sends without waiting (an async actor's
//! unbounded inbox, a blocking connection's handler route), so the hub serves the async
//! bindings' tasks and the blocking binding's threads alike.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use mcp_sansio::ListKind;
use mcp_sansio::schema::Tool;

/// A change a server pushes to its connections
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Push {
    /// A list changed: `notifications/<kind>/list_changed` where the core allows it
    ListChanged(ListKind),
    /// A resource changed: `notifications/resources/updated` to its subscribers
    ResourceUpdated(String),
    /// A tool was added (HTTP: the core's header-mirror cache learns it; nothing is sent)
    ToolSet(Box<Tool>),
    /// A tool was removed (HTTP: the core's header-mirror cache forgets it)
    ToolRemoved(String),
    /// The scopes the catalog's entries require changed (HTTP: the core checks them before
    /// a session sees a request; `None`: no entry requires any)
    Access(Option<Arc<mcp_sansio::server::Access>>),
    /// A message from the server's task store (a task's cancellation, input or end,
    /// published by any process): for the HTTP sessions, whose tasks are shared
    Signal(Arc<str>),
}

/// How a connection's actor receives pushes: sends without waiting; `false` once the
/// connection is gone (its link is then dropped)
pub type Link = Arc<dyn Fn(Push) -> bool + Send + Sync>;

/// The live connections of one server
#[derive(Default)]
pub struct Hub {
    links: Mutex<Links>,
}

#[derive(Default)]
struct Links {
    next: u64,
    by_id: BTreeMap<u64, Link>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("connections", &self.connections())
            .finish()
    }
}

impl Hub {
    /// A hub with no connections
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds a connection's link; it stays until the returned [`Registration`] is dropped
    /// (keep it for as long as the connection runs)
    pub fn register(
        self: &Arc<Self>,
        link: impl Fn(Push) -> bool + Send + Sync + 'static,
    ) -> Registration {
        let mut links = self.lock();
        links.next += 1;
        let id = links.next;
        links.by_id.insert(id, Arc::new(link));
        Registration {
            hub: Arc::downgrade(self),
            id,
        }
    }

    /// Sends `push` to every live connection
    ///
    /// The links are called outside the hub's lock (a blocking connection may do its
    /// session's work on the calling thread), so a connection starting or ending meanwhile
    /// never waits for a broadcast.
    pub fn broadcast(&self, push: &Push) {
        let links: Vec<(u64, Link)> = self
            .lock()
            .by_id
            .iter()
            .map(|(id, link)| (*id, Arc::clone(link)))
            .collect();
        let gone: Vec<u64> = links
            .into_iter()
            .filter(|(_, link)| !link(push.clone()))
            .map(|(id, _)| id)
            .collect();
        if !gone.is_empty() {
            let mut links = self.lock();
            for id in gone {
                links.by_id.remove(&id);
            }
        }
    }

    /// How many connections are registered
    pub fn connections(&self) -> usize {
        self.lock().by_id.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Links> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A connection's place in a [`Hub`]; dropping it removes the connection
#[derive(Debug)]
pub struct Registration {
    hub: Weak<Hub>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            hub.lock().by_id.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_broadcast_reaches_the_registered_links_until_they_end() {
        let hub = Hub::new();
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = |seen: &Arc<AtomicUsize>| {
            let seen = Arc::clone(seen);
            move |_push: Push| {
                seen.fetch_add(1, Ordering::SeqCst);
                true
            }
        };
        let first = hub.register(counter(&seen));
        let second = hub.register(counter(&seen));
        let gone = hub.register(|_| false);
        assert_eq!(hub.connections(), 3);
        hub.broadcast(&Push::ResourceUpdated("a://b".into()));
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(
            hub.connections(),
            2,
            "a link whose connection is gone is dropped"
        );
        drop(gone);
        drop(first);
        hub.broadcast(&Push::ListChanged(ListKind::Tools));
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        drop(second);
        assert_eq!(hub.connections(), 0);
    }
}
