//! The bounded pool of worker threads that runs a server's handlers
//!
//! Threads start on demand, up to the bound, and stay for the server's lifetime; a job that
//! finds every worker busy waits in the queue (the core bounds the requests in flight, so
//! the queue is bounded too).
//!
//! The queue is a `VecDeque` behind a mutex with a condition variable, not a channel: an
//! idle worker sleeps on a futex until a job comes. (A crossbeam channel's receiver spins
//! and calls `sched_yield` a few times before it sleeps; with one hand-off per request
//! that cost, on a busy machine with few cores, most of a W1 round trip.)
//!
//! Under load the opposite holds: when requests come in bursts, waking a sleeping worker
//! for each job (a futex wake and a context switch) costs more than the job. So a worker
//! that finishes a job while others are still busy (or while jobs were queueing) first
//! *searches* for a short while ([`SEARCH`]): it polls the queue, yielding its core, and
//! takes the next job without sleeping; a job that finds a searcher wakes nobody. One
//! request at a time (nobody else busy, nothing queued) never searches: the worker sleeps
//! at once, as above.
//!
//! A thread cannot be aborted, so a cancelled handler (its client went away, or cancelled)
//! may keep its worker until it notices. Such a handler *lends* its seat
//! ([`Pool::execute_cancellable`]): the bound counts only handlers whose work is still
//! wanted, so a storm of abandoned calls does not keep other clients' calls waiting. The
//! extra workers are bounded too (at most [`LENT`] times the bound), and end once idle.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::cancel::CancellationToken;

/// How long a worker searches for the next job before it sleeps (see the module's docs)
const SEARCH: Duration = Duration::from_micros(50);

/// How many workers cancelled handlers may hold beyond the bound, per seat of the bound
const LENT: usize = 3;

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    live: usize,
    /// Workers waiting for a job
    idle: usize,
    /// Workers polling for a job without sleeping (at most one)
    searching: usize,
    /// The pool is gone: workers end once the queue is empty
    closed: bool,
    /// Running handlers that were cancelled: their seats are lent to other jobs
    lent: usize,
}

#[derive(Default)]
struct Shared {
    /// The bound on workers running wanted work
    max: usize,
    queue: Mutex<Queue>,
    /// Idle workers wait here for a job
    job: Condvar,
    /// `queue.jobs.len()`, for a searching worker to poll without the lock
    queued: AtomicUsize,
}

impl Queue {
    /// Workers besides the calling one are running jobs
    fn others_busy(&self) -> bool {
        self.live > self.idle + self.searching + 1
    }

    /// How many workers may live: the bound, and the seats cancelled handlers lent
    fn bound(&self, max: usize) -> usize {
        max + self.lent.min(max * LENT)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

thread_local! {
    /// This thread holds a session's lock: wake-ups and new workers wait until it let go
    static DEFERRING: Cell<bool> = const { Cell::new(false) };
    /// What this thread will do once it let go of the lock
    static DEFERRED: RefCell<Vec<(Arc<Shared>, Start)>> = const { RefCell::new(Vec::new()) };
}

/// How a queued job gets its worker
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// An idle worker
    Wake,
    /// A new worker
    Spawn,
}

/// Holds back the wake-ups (and new workers) of jobs queued on this thread while the
/// returned guard lives (or until [`start_deferred`]): a worker woken while the queuing
/// thread still holds a session's lock would find it taken (or, woken on the same core,
/// preempt the holder). Dropping the guard, also while unwinding from a panic, starts the
/// workers held back.
pub(crate) fn defer() -> Deferring {
    DEFERRING.with(|d| d.set(true));
    Deferring(())
}

/// Holds back workers' wake-ups on this thread while it lives; see [`defer`]
pub(crate) struct Deferring(());

impl Drop for Deferring {
    fn drop(&mut self) {
        DEFERRING.with(|d| d.set(false));
        start_deferred();
    }
}

/// Wakes (or starts) the workers of the jobs queued since [`defer`] (deferring goes on)
pub(crate) fn start_deferred() {
    let deferred = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    for (shared, start) in deferred {
        start_worker(&shared, start);
    }
}

/// Wakes an idle worker or starts a new one
fn start_worker(shared: &Arc<Shared>, start: Start) {
    match start {
        Start::Wake => shared.job.notify_one(),
        Start::Spawn => {
            let worker_shared = Arc::clone(shared);
            let started = thread::Builder::new()
                .name("mcp-handler".into())
                .spawn(move || worker(&worker_shared));
            if started.is_err() {
                // The job waits for a worker that is (or will be) running, if any.
                shared.lock().live -= 1;
            }
        }
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
        let max = max.max(1);
        Self {
            shared: Arc::new(Shared {
                max,
                ..Shared::default()
            }),
            max,
        }
    }

    /// Runs `job` on a worker: an idle one, a new one while under the bound, else the next
    /// one to finish
    pub(crate) fn execute(&self, job: impl FnOnce() + Send + 'static) {
        let start = {
            let mut q = self.shared.lock();
            q.jobs.push_back(Box::new(job));
            self.shared.queued.store(q.jobs.len(), Ordering::Release);
            if q.searching >= q.jobs.len() {
                // A searching worker takes it without being woken.
                return;
            } else if q.searching + q.idle >= q.jobs.len() {
                // An idle worker not yet woken for an earlier job takes it.
                Start::Wake
            } else if q.live < q.bound(self.max) {
                q.live += 1;
                Start::Spawn
            } else {
                // The next worker to finish takes it.
                return;
            }
        };
        begin(&self.shared, start);
    }

    /// Runs `job` on a worker as [`execute`](Self::execute) does; if `token` is cancelled
    /// while it runs, its seat is lent to the jobs queued behind it until it returns
    pub(crate) fn execute_cancellable(
        &self,
        token: CancellationToken,
        job: impl FnOnce() + Send + 'static,
    ) {
        let shared = Arc::clone(&self.shared);
        self.execute(move || {
            let seat = Arc::new(Seat {
                shared,
                state: AtomicU8::new(RUNNING),
            });
            let lender = Arc::clone(&seat);
            token.on_cancel(move || lender.lend());
            job();
            token.clear_on_cancel();
            seat.give_back();
        });
    }
}

/// Wakes or starts a worker now, or once this thread let go of a session's lock
fn begin(shared: &Arc<Shared>, start: Start) {
    if DEFERRING.with(Cell::get) {
        DEFERRED.with(|d| d.borrow_mut().push((Arc::clone(shared), start)));
    } else {
        // Outside the queue's lock: the woken worker does not find it taken.
        start_worker(shared, start);
    }
}

const RUNNING: u8 = 0;
const LENDING: u8 = 1;
const RETURNED: u8 = 2;

/// The seat of a running cancellable job (its state changes under the queue's lock)
struct Seat {
    shared: Arc<Shared>,
    state: AtomicU8,
}

impl Seat {
    /// The job was cancelled while running: its seat goes to a queued job (a new worker)
    fn lend(&self) {
        let begin = {
            let mut q = self.shared.lock();
            if self.state.load(Ordering::Acquire) != RUNNING {
                return;
            }
            self.state.store(LENDING, Ordering::Release);
            q.lent += 1;
            let waiting = q.jobs.len() > q.idle + q.searching;
            if waiting && q.live < q.bound(self.shared.max) {
                q.live += 1;
                Some(Start::Spawn)
            } else {
                None
            }
        };
        if let Some(begin) = begin {
            self::begin(&self.shared, begin);
        }
    }

    /// The job returned: a lent seat comes back (a worker beyond the bound ends once idle)
    fn give_back(&self) {
        let mut q = self.shared.lock();
        if self.state.swap(RETURNED, Ordering::AcqRel) == LENDING {
            q.lent -= 1;
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
    // The last job came while others were busy or queued: more are likely to follow.
    let mut busy = false;
    loop {
        if let Some(job) = q.jobs.pop_front() {
            shared.queued.store(q.jobs.len(), Ordering::Release);
            busy = !q.jobs.is_empty() || q.others_busy();
            drop(q);
            // A panicking handler is answered by its own catch; the worker survives anyway.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            q = shared.lock();
            continue;
        }
        if q.closed || q.live > q.bound(shared.max) {
            // The pool is gone, or this worker was lent a seat that came back.
            q.live -= 1;
            // Whoever waits for the workers to end (a test) learns it.
            shared.job.notify_all();
            return;
        }
        if q.searching == 0 && (busy || q.others_busy()) {
            q.searching += 1;
            drop(q);
            search(shared);
            q = shared.lock();
            q.searching -= 1;
            busy = false;
            continue;
        }
        q.idle += 1;
        q = shared.job.wait(q).unwrap_or_else(PoisonError::into_inner);
        q.idle -= 1;
    }
}

/// Polls the queue for up to [`SEARCH`], yielding the core between polls; returns as soon
/// as a job is queued (the caller takes it under the lock) or the time is up
fn search(shared: &Shared) {
    let start = Instant::now();
    let mut polls = 0u32;
    while shared.queued.load(Ordering::Acquire) == 0 {
        polls += 1;
        if polls < 16 {
            std::hint::spin_loop();
        } else {
            thread::yield_now();
            if start.elapsed() >= SEARCH {
                return;
            }
        }
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

    #[test]
    fn jobs_queued_while_deferring_start_when_the_guard_ends_even_by_a_panic() {
        let pool = Pool::new(2);
        let (tx, rx) = mpsc::channel();
        {
            let _deferring = defer();
            let tx = tx.clone();
            pool.execute(move || tx.send("deferred").unwrap());
            // No worker exists yet to run it: its start waits for the guard.
            assert!(DEFERRED.with(|d| d.borrow().len()) == 1);
            assert!(rx.try_recv().is_err());
        }
        assert_eq!(rx.recv().unwrap(), "deferred");
        // A panic while deferring (a handler's dispatch, say) still starts what it queued.
        let pool = std::panic::AssertUnwindSafe(&pool);
        let unwound = std::panic::catch_unwind(|| {
            let _deferring = defer();
            pool.execute(move || tx.send("after a panic").unwrap());
            panic!("while deferring");
        });
        assert!(unwound.is_err());
        assert!(!DEFERRING.with(Cell::get));
        assert_eq!(rx.recv().unwrap(), "after a panic");
    }
}
