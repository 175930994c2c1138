//! Where a server shares its tasks and changes with other processes: the [`TaskStore`]
//! interface, a store in memory ([`MemoryTaskStore`]) and, with the `redis` feature, Redis
//! ([`RedisTaskStore`](crate::redis_store::RedisTaskStore))
//!
//! The rules are `mcp-sansio`'s ([`mcp_sansio::store`]): the sessions say what to write,
//! read and publish; a store runs it. Runtime-neutral: a store answers through a callback
//! from any thread, so one implementation serves the async bindings' actors and the
//! blocking binding's threads alike.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_sansio::store::{MemoryStore, StoreError, StoreOp, StoreReply};

/// Gets a store's reply to one [`StoreOp::Put`] or [`StoreOp::Get`]
pub type Done = Box<dyn FnOnce(StoreReply) + Send>;

/// Gets every message published to the store (by any process, this one included)
pub type Deliver = Arc<dyn Fn(&str) + Send + Sync>;

/// A store of shared tasks and a channel between server processes
///
/// A server with a store ([`ServerBuilder::task_store`](crate::server::ServerBuilder::task_store))
/// runs its sessions' operations on it and hears what every process publishes.
pub trait TaskStore: Send + Sync + 'static {
    /// Runs `op`, after every operation run before it (the sessions' order matters: a
    /// record is written before the signal that tells others to read it)
    ///
    /// `Put` and `Get` call `done` exactly once, from any thread, with the reply (a
    /// [`StoreReply::Failed`] saying why when the store cannot be reached); `Publish` drops
    /// it.
    fn run(&self, op: StoreOp, done: Done);

    /// Delivers every published message to `deliver` until the returned value is dropped
    fn subscribe(&self, deliver: Deliver) -> Subscription;

    /// What the store is, for logs and errors (`redis://127.0.0.1:6379`, `memory`)
    fn describe(&self) -> String;
}

/// A subscription to a store's messages: dropping it ends the delivery
pub struct Subscription(#[allow(dead_code)] Box<dyn Send + Sync>);

impl Subscription {
    /// A subscription that ends by dropping `guard`
    pub fn new(guard: impl Send + Sync + 'static) -> Self {
        Self(Box::new(guard))
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subscription")
    }
}

/// Milliseconds since the Unix epoch, from the system clock
fn unix_ms() -> u64 {
    crate::peer::unix_ms()
}

/// Tasks shared by the servers of one process, in memory: the embedded store, and what
/// tests of several "processes" use
///
/// Its semantics are the reference every store follows ([`MemoryStore`]). Messages are
/// delivered at once, on the thread that published them.
/// [`set_available(false)`](Self::set_available) makes it fail every operation, as a store
/// that cannot be reached does.
#[derive(Default)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    store: MemoryStore,
    subscribers: BTreeMap<u64, Deliver>,
    next: u64,
    unavailable: bool,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("MemoryTaskStore")
            .field("records", &inner.store.len())
            .field("subscribers", &inner.subscribers.len())
            .finish()
    }
}

impl MemoryTaskStore {
    /// An empty store
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the store fail (`false`) or serve (`true`) every operation from now on
    pub fn set_available(&self, available: bool) {
        self.lock().unavailable = !available;
    }

    /// How many task records it holds
    pub fn len(&self) -> usize {
        self.lock().store.len()
    }

    /// Whether it holds no record
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskStore for MemoryTaskStore {
    fn run(&self, op: StoreOp, done: Done) {
        let (reply, messages, subscribers) = {
            let mut inner = self.lock();
            if inner.unavailable {
                let failed =
                    StoreReply::Failed(StoreError("the memory store is unavailable".into()));
                let reply = match op {
                    StoreOp::Publish { .. } => None,
                    _ => Some(failed),
                };
                (reply, Vec::new(), Vec::new())
            } else {
                let reply = inner.store.apply(unix_ms(), op).map(|(_, reply)| reply);
                let messages = inner.store.take_published();
                let subscribers: Vec<Deliver> = if messages.is_empty() {
                    Vec::new()
                } else {
                    inner.subscribers.values().cloned().collect()
                };
                (reply, messages, subscribers)
            }
        };
        if let Some(reply) = reply {
            done(reply);
        }
        for message in &messages {
            for deliver in &subscribers {
                deliver(message);
            }
        }
    }

    fn subscribe(&self, deliver: Deliver) -> Subscription {
        let id = {
            let mut inner = self.lock();
            inner.next += 1;
            let id = inner.next;
            inner.subscribers.insert(id, deliver);
            id
        };
        struct Unsubscribe(std::sync::Weak<Mutex<Inner>>, u64);
        impl Drop for Unsubscribe {
            fn drop(&mut self) {
                if let Some(inner) = self.0.upgrade() {
                    inner
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .subscribers
                        .remove(&self.1);
                }
            }
        }
        Subscription::new(Unsubscribe(Arc::downgrade(&self.inner), id))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A real session's first `Put` (a 2026 task started on a sharing server): tickets are
    /// the session's, the store only carries them back
    fn issued_put() -> StoreOp {
        use mcp_sansio::store::SharedTasks;
        use mcp_sansio::{Implementation, ServerConfig, ServerEvent, ServerSession};
        let ext = "io.modelcontextprotocol/tasks";
        let mut config = ServerConfig::new(Implementation::new("t", "1"));
        config.shared_tasks = Some(SharedTasks::new("a"));
        config.capabilities = serde_json::json!({"extensions": {ext: {}}, "tools": {}});
        let now = std::time::Instant::now();
        let mut session = ServerSession::new(Arc::new(config), now);
        // Records carry Unix times: a sharing session's clock is anchored.
        session.anchor_wall_clock(now, unix_ms());
        let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "x", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {ext: {}}}}}});
        session.handle_bytes(now, format!("{request}\n").as_bytes());
        while let Some(event) = session.poll_event() {
            if let ServerEvent::Request(r) = event {
                session
                    .inbound(r.responder.id())
                    .start_task(now, mcp_sansio::session::TaskOptions::default())
                    .unwrap();
            }
        }
        session.poll_store().expect("the task's first record")
    }

    fn run(store: &MemoryTaskStore, op: StoreOp) -> StoreReply {
        let (tx, rx) = mpsc::channel();
        store.run(op, Box::new(move |r| tx.send(r).unwrap()));
        rx.recv().unwrap()
    }

    #[test]
    fn stores_publishes_to_subscribers_until_they_drop_and_fails_when_unavailable() {
        let store = MemoryTaskStore::new();
        let put = issued_put();
        let StoreOp::Put { ticket, task, .. } = &put else {
            panic!("{put:?}")
        };
        let get = StoreOp::Get {
            ticket: *ticket,
            task: task.clone(),
        };
        assert_eq!(run(&store, put.clone()), StoreReply::Stored);
        assert!(matches!(
            run(&store, get.clone()),
            StoreReply::Found(Some(_))
        ));
        assert_eq!(store.len(), 1);

        let (tx, rx) = mpsc::channel::<String>();
        let tx = Mutex::new(tx);
        let sub = store.subscribe(Arc::new(move |m| {
            tx.lock().unwrap().send(m.into()).unwrap()
        }));
        store.run(
            StoreOp::Publish {
                message: "one".into(),
            },
            Box::new(|_| {}),
        );
        assert_eq!(rx.try_recv().unwrap(), "one");
        drop(sub);
        store.run(
            StoreOp::Publish {
                message: "two".into(),
            },
            Box::new(|_| {}),
        );
        assert!(rx.try_recv().is_err());

        store.set_available(false);
        assert!(matches!(run(&store, get.clone()), StoreReply::Failed(_)));
        store.set_available(true);
        assert!(
            matches!(run(&store, get), StoreReply::Found(Some(_))),
            "nothing lost"
        );
    }
}
