//! The bounded pool of worker threads that runs a server's handlers
//!
//! Threads start on demand, up to the bound, and stay for the server's lifetime; a job that
//! finds every worker busy waits in the queue (the core bounds the requests in flight, so
//! the queue is bounded too).

use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crossbeam_channel::{Receiver, Sender};

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Debug, Default)]
struct Counts {
    live: usize,
    /// Workers waiting for a job and not yet promised one
    idle: usize,
}

/// A bounded set of worker threads fed from one queue
pub(crate) struct Pool {
    tx: Sender<Job>,
    rx: Receiver<Job>,
    max: usize,
    counts: Arc<Mutex<Counts>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("max", &self.max).finish()
    }
}

impl Pool {
    /// A pool of at most `max` threads (at least one)
    pub(crate) fn new(max: usize) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        Self {
            tx,
            rx,
            max: max.max(1),
            counts: Arc::default(),
        }
    }

    /// Runs `job` on a worker: an idle one, a new one while under the bound, else the next
    /// one to finish
    pub(crate) fn execute(&self, job: impl FnOnce() + Send + 'static) {
        let spawn = {
            let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
            if c.idle > 0 {
                c.idle -= 1;
                false
            } else if c.live < self.max {
                c.live += 1;
                true
            } else {
                false
            }
        };
        if spawn {
            let rx = self.rx.clone();
            let counts = Arc::clone(&self.counts);
            let started = thread::Builder::new()
                .name("mcp-handler".into())
                .spawn(move || worker(&rx, &counts));
            if started.is_err() {
                self.counts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .live -= 1;
            }
        }
        // The receiver lives in `self`, so the queue is open.
        let _ = self.tx.send(Box::new(job));
    }
}

fn worker(rx: &Receiver<Job>, counts: &Mutex<Counts>) {
    // The job that made this worker start is the first one it takes.
    while let Ok(job) = rx.recv() {
        // A panicking handler is answered by its own catch; the worker survives anyway.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        counts.lock().unwrap_or_else(PoisonError::into_inner).idle += 1;
    }
}
