//! `TaskStore`: where several server processes share tasks and changes (the kernel's
//! `mcp_sansio_runtime::store`: in memory, or Redis through the `redis` crate on threads of
//! its own), and the inbox an `HttpServer`'s store replies wait in
//!
//! A store answers from any thread (Redis: its own). Nothing here calls Python from those
//! threads except through `Python::try_attach` (nothing once the interpreter is gone), and only to call a wake-up function the Python
//! driver gave (`loop.call_soon_threadsafe` of its pump) or a subscriber's callback; the
//! replies themselves wait in a Rust queue that the driver drains on its loop. No lock is
//! held while attaching, so a thread waiting for the GIL never holds one the interpreter's
//! thread could wait for.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_sansio::http::SessionKey;
use mcp_sansio::store::{StoreError, StoreOp, StoreReply, Ticket};
use mcp_sansio_runtime::redis_store::RedisTaskStore;
use mcp_sansio_runtime::store::{MemoryTaskStore, Subscription, TaskStore};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Where a server shares its tasks and changes with its other processes
///
/// `TaskStore.redis(url)` (Redis need not be up yet: operations fail with the reason until
/// it is) or `TaskStore.memory()` (several servers of one process, tests).
#[pyclass(module = "mcp_sansio._core", name = "TaskStore", frozen)]
pub(crate) struct PyTaskStore {
    pub(crate) store: Arc<dyn TaskStore>,
    memory: Option<Arc<MemoryTaskStore>>,
}

#[pymethods]
impl PyTaskStore {
    /// A store in Redis at `url` (`redis://HOST:PORT`), keys and channel under `prefix:`
    /// (`mcp` unless given)
    #[staticmethod]
    #[pyo3(signature = (url, *, prefix=None))]
    fn redis(url: &str, prefix: Option<&str>) -> PyResult<Self> {
        let store = RedisTaskStore::with_prefix(url, prefix.unwrap_or("mcp"))
            .map_err(|StoreError(e)| PyValueError::new_err(e))?;
        Ok(Self {
            store,
            memory: None,
        })
    }

    /// A store in this process's memory: share one between several servers of the process
    #[staticmethod]
    fn memory() -> Self {
        let memory = MemoryTaskStore::new();
        Self {
            store: Arc::clone(&memory) as Arc<dyn TaskStore>,
            memory: Some(memory),
        }
    }

    /// What the store is (`redis://127.0.0.1:6379`, without a password; `memory`)
    #[getter]
    fn description(&self) -> String {
        self.store.describe()
    }

    /// A memory store only: fail every operation (`False`) as an unreachable store does,
    /// or serve again (`True`)
    fn set_available(&self, available: bool) -> PyResult<()> {
        let memory = self
            .memory
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("only a memory store can be made unavailable"))?;
        memory.set_available(available);
        Ok(())
    }

    /// Publishes `message` to every process's subscribers (this one's too)
    fn publish(&self, message: String) {
        self.store
            .run(StoreOp::Publish { message }, Box::new(|_| {}));
    }

    /// Calls `deliver(message)` with every message published, by any process, until the
    /// returned subscription is closed; from any thread (the store's own for Redis, the
    /// publisher's for a memory store), so `deliver` must only hand the message on
    /// (`loop.call_soon_threadsafe`)
    fn subscribe(&self, deliver: Py<PyAny>) -> PyStoreSubscription {
        let subscription = self.store.subscribe(Arc::new(move |text: &str| {
            // `try_attach`: an interpreter that ended is not started again for a message
            // (the Python side closes its subscriptions at exit).
            Python::try_attach(|py| {
                if let Err(e) = deliver.call1(py, (text,)) {
                    e.write_unraisable(py, None);
                }
            });
        }));
        PyStoreSubscription(Mutex::new(Some(subscription)))
    }

    fn __repr__(&self) -> String {
        format!("TaskStore({:?})", self.store.describe())
    }
}

/// A subscription to a store's messages (`TaskStore.subscribe`); `close()` ends it
#[pyclass(module = "mcp_sansio._core", name = "StoreSubscription", frozen)]
pub(crate) struct PyStoreSubscription(Mutex<Option<Subscription>>);

#[pymethods]
impl PyStoreSubscription {
    /// Ends the delivery (a message being delivered may still arrive)
    fn close(&self, py: Python<'_>) {
        let taken = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Unsubscribing takes the store's lock, which a delivering thread holds only
        // without the GIL: let go of it meanwhile.
        py.detach(move || drop(taken));
    }
}

/// A store's reply to an operation of a session
type Arrived = (SessionKey, Ticket, StoreReply);

/// The replies of a store to one `HttpServer`'s operations, waiting for the driver
pub(crate) struct Inbox {
    /// The replies, and whether the driver was woken since it last took them
    queue: Mutex<(VecDeque<Arrived>, bool)>,
    /// Called (with the GIL) when a reply arrives and the driver was not woken yet
    wake: Py<PyAny>,
}

impl Inbox {
    pub(crate) fn new(wake: Py<PyAny>) -> Arc<Self> {
        Arc::new(Self {
            queue: Mutex::new((VecDeque::new(), false)),
            wake,
        })
    }

    /// A reply: queued, and the driver woken (from any thread)
    fn push(&self, key: SessionKey, ticket: Ticket, reply: StoreReply) {
        let wake = {
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.0.push_back((key, ticket, reply));
            !std::mem::replace(&mut queue.1, true)
        };
        if wake {
            Python::try_attach(|py| {
                if let Err(e) = self.wake.call0(py) {
                    e.write_unraisable(py, None);
                }
            });
        }
    }

    /// Every reply waiting
    fn take(&self) -> VecDeque<Arrived> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.1 = false;
        std::mem::take(&mut queue.0)
    }
}

/// An `HttpServer`'s store and inbox
pub(crate) struct Attached {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) inbox: Arc<Inbox>,
}

impl Attached {
    /// Runs the operation `op` of session `key`; its reply goes to the inbox
    pub(crate) fn run(&self, key: SessionKey, op: StoreOp) {
        let ticket = match &op {
            StoreOp::Put { ticket, .. } | StoreOp::Get { ticket, .. } => Some(*ticket),
            _ => None,
        };
        let inbox = Arc::clone(&self.inbox);
        self.store.run(
            op,
            Box::new(move |reply| {
                if let Some(ticket) = ticket {
                    inbox.push(key, ticket, reply);
                }
            }),
        );
    }

    /// The replies waiting
    pub(crate) fn replies(&self) -> VecDeque<Arrived> {
        self.inbox.take()
    }
}

/// What a store message says, for the driver: `("list_changed", origin, list)`,
/// `("resource_updated", origin, uri)`, `("task", None, None)` for a task signal (the
/// `HttpServer` sessions take it with `handle_store_signal`), or `None` for text that is
/// not a signal
#[pyfunction]
pub(crate) fn decode_signal(text: &str) -> Option<(&'static str, Option<String>, Option<String>)> {
    use mcp_sansio::session::ListKind;
    use mcp_sansio::store::Signal;
    Some(match Signal::decode(text)? {
        Signal::ListChanged { origin, kind } => {
            let list = match kind {
                ListKind::Tools => "tools",
                ListKind::Resources => "resources",
                _ => "prompts",
            };
            ("list_changed", Some(origin), Some(list.to_owned()))
        }
        Signal::ResourceUpdated { origin, uri } => ("resource_updated", Some(origin), Some(uri)),
        _ => ("task", None, None),
    })
}

/// The message telling the other processes that list `list` (`tools`, `prompts`,
/// `resources`) changed on process `origin`
#[pyfunction]
pub(crate) fn list_changed_signal(origin: String, list: &str) -> PyResult<String> {
    use mcp_sansio::session::ListKind;
    use mcp_sansio::store::Signal;
    let kind = match list {
        "tools" => ListKind::Tools,
        "resources" => ListKind::Resources,
        "prompts" => ListKind::Prompts,
        _ => return Err(PyValueError::new_err(format!("unknown list {list:?}"))),
    };
    Ok(Signal::ListChanged { origin, kind }.encode())
}

/// The message telling the other processes that resource `uri` changed on process `origin`
#[pyfunction]
pub(crate) fn resource_updated_signal(origin: String, uri: String) -> String {
    mcp_sansio::store::Signal::ResourceUpdated { origin, uri }.encode()
}
