//! The bounded pool of worker threads that runs a server's handlers
//!
//! Threads start on demand, up to the bound, and stay for the server's lifetime; a job that
//! finds every worker busy waits in the queue (the core bounds the requests in flight, so
//! the queue is bounded too).
//!
//! The queue is a `VecDeque` behind a mutex with a condition variable: an idle worker sleeps
//! on a futex until a job comes, and the thread that queues a job wakes one (outside the
//! queue's lock, so the woken worker does not find it taken).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    live: usize,
    /// Workers waiting for a job
    idle: usize,
    /// The pool is gone: workers end once the queue is empty
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Idle workers wait here for a job
    job: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A bounded set of worker threads fed from one queue
pub(crate) struct Pool {
    shared: Arc<Shared>,
    max: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("max", &self.max).finish()
    }
}

impl Pool {
    /// A pool of at most `max` threads (at least one)
    pub(crate) fn new(max: usize) -> Self {
        Self {
            shared: Arc::default(),
            max: max.max(1),
        }
    }

    /// Runs `job` on a worker: an idle one, a new one while under the bound, else the next
    /// one to finish
    pub(crate) fn execute(&self, job: impl FnOnce() + Send + 'static) {
        let spawn = {
            let mut q = self.shared.lock();
            q.jobs.push_back(Box::new(job));
            if q.idle >= q.jobs.len() {
                // An idle worker not yet woken for an earlier job takes it.
                false
            } else if q.live < self.max {
                q.live += 1;
                true
            } else {
                // The next worker to finish takes it.
                return;
            }
        };
        if !spawn {
            self.shared.job.notify_one();
            return;
        }
        let shared = Arc::clone(&self.shared);
        let started = thread::Builder::new()
            .name("mcp-handler".into())
            .spawn(move || worker(&shared));
        if started.is_err() {
            // The job waits for a worker that is (or will be) running, if any.
            self.shared.lock().live -= 1;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Workers end once the queue is empty.
        self.shared.lock().closed = true;
        self.shared.job.notify_all();
    }
}

fn worker(shared: &Shared) {
    let mut q = shared.lock();
    loop {
        if let Some(job) = q.jobs.pop_front() {
            drop(q);
            // A panicking handler is answered by its own catch; the worker survives anyway.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            q = shared.lock();
            continue;
        }
        if q.closed {
            q.live -= 1;
            // Whoever waits for the workers to end (a test) learns it.
            shared.job.notify_all();
            return;
        }
        q.idle += 1;
        q = shared.job.wait(q).unwrap_or_else(PoisonError::into_inner);
        q.idle -= 1;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn runs_every_job_on_at_most_max_threads_and_workers_end_with_the_pool() {
        let pool = Pool::new(2);
        let (started, starts) = mpsc::channel();
        let (done, dones) = mpsc::channel();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        for i in 0..5 {
            let (started, done, gate) = (started.clone(), done.clone(), Arc::clone(&gate));
            pool.execute(move || {
                started.send(i).unwrap();
                let (open, opened) = &*gate;
                let mut open = open.lock().unwrap();
                while !*open {
                    open = opened.wait(open).unwrap();
                }
                done.send(thread::current().id()).unwrap();
            });
        }
        // Two jobs start; the other three wait in the queue for a worker.
        starts.recv().unwrap();
        starts.recv().unwrap();
        assert_eq!(pool.shared.lock().live, 2);
        assert_eq!(pool.shared.lock().jobs.len(), 3);
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let mut threads: Vec<_> = (0..5).map(|_| dones.recv().unwrap()).collect();
        threads.sort_by_key(|id| format!("{id:?}"));
        threads.dedup();
        assert!(threads.len() <= 2);
        let shared = Arc::clone(&pool.shared);
        drop(pool);
        // The workers end once the pool is gone.
        let mut q = shared.lock();
        while q.live > 0 {
            q = shared.job.wait(q).unwrap();
        }
        assert!(q.jobs.is_empty());
    }
}
