//! The bounded pool of worker threads that runs a server's handlers
//!
//! Threads start on demand, up to the bound (`workers`), and stay for the server's
//! lifetime; a job that finds every worker busy waits in the queue.
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
//!
//! Handlers that block for long (a call that sleeps, waits on a slow service or on the
//! user) must not keep quick calls waiting behind them either, nor wait without bound
//! themselves: a job that waited [`Limits::start_within`] in the queue gets a thread of its
//! own, beyond the bound. A *watchman* thread, started the first time a job has to wait,
//! keeps that promise: it sleeps until the oldest waiting job is due and starts a worker for
//! every job due. (Only jobs that found no worker are stamped with the time: one request at
//! a time, or a burst that the workers at hand absorb, never reads the clock nor wakes the
//! watchman; while jobs keep queueing it ticks once per `start_within`, unasked.) The
//! threads beyond the bound end once idle. All threads together are capped
//! ([`Limits::max_threads`]): a job that would need a thread past the cap is refused at once
//! ([`Pool::execute_cancellable`] runs it with [`Turn::Refused`] on the calling thread, and
//! the server answers its request "busy", 503 with `Retry-After` on the 2026 wire), never
//! queued to wait behind a full house. So with the default 16 workers and 1024 threads, 400
//! calls each holding a 5 s handler all run at once, and a quick call next to them starts
//! within `start_within`.
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::cancel::{CancellationToken, OnCancel};

/// How long a worker searches for the next job before it sleeps (see the module's docs)
const SEARCH: Duration = Duration::from_micros(50);

/// How many workers cancelled handlers may hold beyond the bound, per seat of the bound
const LENT: usize = 3;

/// The pool's bounds (see the module's docs)
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Workers running wanted work at once (the bound)
    pub(crate) workers: usize,
    /// Threads at most, whatever their handlers do; a job past it is refused
    pub(crate) max_threads: usize,
    /// How long a job waits for a worker before it gets a thread of its own
    pub(crate) start_within: Duration,
}

/// Whether a job runs on a worker, or was refused (the pool is full) and runs at once on the
/// thread that gave it, to answer so
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// On a worker: do the work
    Run,
    /// On the caller's thread: every thread the cap allows is busy; refuse the work
    Refused,
}

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
    /// When each job that found no worker was queued, oldest first (no more than `jobs`)
    waiting: VecDeque<Instant>,
    /// The watchman's state
    watchman: Watchman,
}

/// The thread that starts a worker for each job that waited too long
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Watchman {
    /// Not started yet
    #[default]
    Absent,
    /// Awake, or sleeping until a deadline: it sees a job queued meanwhile by itself
    Ticking,
    /// Sleeping until woken: a job that waits wakes it
    Asleep,
}

#[derive(Default)]
struct Shared {
    /// The bound on workers running wanted work
    max: usize,
    /// The cap on threads
    cap: usize,
    /// How long a job waits before it gets a thread of its own
    start_within: Duration,
    queue: Mutex<Queue>,
    /// Idle workers wait here for a job
    job: Condvar,
    /// The watchman waits here
    watch: Condvar,
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

    /// Whether one more job fits under the cap on threads: the threads busy, and one for
    /// each job already queued, leave room for it
    fn has_room(&self, cap: usize) -> bool {
        // A worker idle or searching beyond the jobs queued takes it: no new thread.
        if self.idle + self.searching > self.jobs.len() {
            return true;
        }
        // Every other queued job has its thread already counted in `live` (started or woken
        // for it), but those that found none (`waiting`), each of which may get one.
        self.live + self.waiting.len() < cap
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
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
    let mut deferred = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
    if deferred.is_empty() {
        return;
    }
    for (shared, start) in deferred.drain(..) {
        start_worker(&shared, start);
    }
    // The list keeps its room for the next deferral (none is made per handler call), unless
    // starting a worker deferred more meanwhile.
    DEFERRED.with(|d| {
        if let Ok(mut d) = d.try_borrow_mut()
            && d.is_empty()
        {
            *d = deferred;
        }
    });
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
    /// A pool of `max` workers (at least one) and at most [`DEFAULT_MAX_THREADS`] threads
    #[cfg(test)]
    pub(crate) fn new(max: usize) -> Self {
        Self::with_limits(Limits {
            workers: max,
            max_threads: DEFAULT_MAX_THREADS,
            start_within: DEFAULT_START_WITHIN,
        })
    }

    /// A pool of `limits.workers` workers (at least one), and at most `limits.max_threads`
    /// threads (at least the workers)
    pub(crate) fn with_limits(limits: Limits) -> Self {
        let max = limits.workers.max(1);
        Self {
            shared: Arc::new(Shared {
                max,
                cap: limits.max_threads.max(max),
                start_within: limits.start_within,
                ..Shared::default()
            }),
            max,
        }
    }

    /// Runs `job` on a worker: an idle one, a new one while under the bound, else the next
    /// one to finish, or a thread of its own once it waited [`Limits::start_within`]
    #[cfg(test)]
    pub(crate) fn execute(&self, job: impl FnOnce() + Send + 'static) {
        let start = self.queue(self.shared.lock(), Box::new(job));
        if let Some(start) = start {
            begin(&self.shared, start);
        }
    }

    /// Queues `job` under the lock; how it gets its worker, if one has to be woken or started
    fn queue(&self, mut q: MutexGuard<'_, Queue>, job: Job) -> Option<Start> {
        q.jobs.push_back(job);
        self.shared.queued.store(q.jobs.len(), Ordering::Release);
        if q.searching >= q.jobs.len() {
            // A searching worker takes it without being woken.
            None
        } else if q.searching + q.idle >= q.jobs.len() {
            // An idle worker not yet woken for an earlier job takes it.
            Some(Start::Wake)
        } else if q.live < q.bound(self.max) {
            q.live += 1;
            Some(Start::Spawn)
        } else {
            // The next worker to finish takes it, or the watchman starts one for it.
            q.waiting.push_back(Instant::now());
            match q.watchman {
                Watchman::Ticking => {}
                Watchman::Asleep => {
                    q.watchman = Watchman::Ticking;
                    drop(q);
                    self.shared.watch.notify_one();
                }
                Watchman::Absent => {
                    q.watchman = Watchman::Ticking;
                    drop(q);
                    let shared = Arc::clone(&self.shared);
                    let started = thread::Builder::new()
                        .name("mcp-handler-watch".into())
                        .spawn(move || watchman(&shared));
                    if started.is_err() {
                        // The job waits for the next worker to finish; a later one tries
                        // again.
                        self.shared.lock().watchman = Watchman::Absent;
                    }
                }
            }
            None
        }
    }

    /// Runs `job` with [`Turn::Run`] on a worker as [`execute`](Self::execute) does (if
    /// `token` is cancelled while it runs, its seat is lent to the jobs queued behind it
    /// until it returns); or, when every thread the cap allows is taken, at once on this
    /// thread with [`Turn::Refused`]
    pub(crate) fn execute_cancellable(
        &self,
        token: CancellationToken,
        job: impl FnOnce(Turn) + Send + 'static,
    ) {
        let shared = Arc::clone(&self.shared);
        let start = {
            let q = self.shared.lock();
            if !q.has_room(self.shared.cap) {
                drop(q);
                job(Turn::Refused);
                return;
            }
            self.queue(
                q,
                Box::new(move || {
                    let seat = Arc::new(Seat {
                        shared,
                        state: AtomicU8::new(RUNNING),
                    });
                    token.on_cancel(Arc::clone(&seat) as Arc<dyn OnCancel>);
                    job(Turn::Run);
                    token.clear_on_cancel();
                    seat.give_back();
                }),
            )
        };
        if let Some(start) = start {
            begin(&self.shared, start);
        }
    }
}

/// How many threads a pool may have unless its server says otherwise
pub(crate) const DEFAULT_MAX_THREADS: usize = 1024;
/// How long a job may wait for a worker unless its server says otherwise
pub(crate) const DEFAULT_START_WITHIN: Duration = Duration::from_millis(100);

/// Starts a worker for each job that waited [`Limits::start_within`] (up to the cap), then
/// sleeps until the next is due; ticks while jobs keep queueing, sleeps until woken once
/// none came for a whole tick; ends with the pool
fn watchman(shared: &Arc<Shared>) {
    let patience = shared.start_within;
    let mut q = shared.lock();
    let mut quiet = false;
    loop {
        if q.closed {
            q.watchman = Watchman::Absent;
            return;
        }
        let now = Instant::now();
        let due = q
            .waiting
            .iter()
            .take_while(|&&at| now.saturating_duration_since(at) >= patience)
            .count();
        let starts = due.min(shared.cap.saturating_sub(q.live));
        if starts > 0 {
            q.waiting.drain(..starts);
            q.live += starts;
            drop(q);
            for _ in 0..starts {
                start_worker(shared, Start::Spawn);
            }
            q = shared.lock();
            quiet = false;
            continue;
        }
        let next = if due > 0 {
            // At the cap: the next worker to finish takes the job; look again later.
            Some(now + patience)
        } else if let Some(&oldest) = q.waiting.front() {
            quiet = false;
            Some(oldest + patience)
        } else if !quiet {
            // Jobs may keep queueing: one more tick before sleeping until woken.
            quiet = true;
            Some(now + patience)
        } else {
            None
        };
        match next {
            Some(at) => {
                let wait = at.saturating_duration_since(Instant::now());
                q = shared
                    .watch
                    .wait_timeout(q, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            None => {
                q.watchman = Watchman::Asleep;
                q = shared.watch.wait(q).unwrap_or_else(PoisonError::into_inner);
                quiet = false;
            }
        }
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

/// A cancelled job's seat is lent
impl OnCancel for Seat {
    fn cancelled(&self) {
        self.lend();
    }
}

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
        // Workers end once the queue is empty, the watchman at once.
        self.shared.lock().closed = true;
        self.shared.job.notify_all();
        self.shared.watch.notify_all();
    }
}

fn worker(shared: &Shared) {
    let mut q = shared.lock();
    // The last job came while others were busy or queued: more are likely to follow.
    let mut busy = false;
    loop {
        if let Some(job) = q.jobs.pop_front() {
            shared.queued.store(q.jobs.len(), Ordering::Release);
            if q.waiting.len() > q.jobs.len() {
                // The oldest job that waited got its worker.
                q.waiting.pop_front();
            }
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
        // Jobs never wait long enough to get threads of their own here.
        let pool = Pool::with_limits(Limits {
            workers: 2,
            max_threads: 8,
            start_within: Duration::from_secs(3600),
        });
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

    /// A gate jobs wait on until it opens
    type Gate = Arc<(Mutex<bool>, Condvar)>;

    fn wait(gate: &Gate) {
        let (open, opened) = &**gate;
        let mut open = open.lock().unwrap();
        while !*open {
            open = opened.wait(open).unwrap();
        }
    }

    fn open(gate: &Gate) {
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }

    fn pool(workers: usize, max_threads: usize) -> Pool {
        Pool::with_limits(Limits {
            workers,
            max_threads,
            start_within: Duration::from_millis(20),
        })
    }

    /// Waits until the pool has no more than `live` workers
    fn until_at_most(pool: &Pool, live: usize) {
        let mut q = pool.shared.lock();
        while q.live > live {
            q = pool.shared.job.wait(q).unwrap();
        }
    }

    #[test]
    fn one_job_at_a_time_never_needs_the_watchman() {
        let pool = pool(2, 8);
        let (tx, rx) = mpsc::channel();
        for i in 0..50 {
            let tx = tx.clone();
            pool.execute(move || tx.send(i).unwrap());
            assert_eq!(rx.recv().unwrap(), i);
            // One at a time: the next comes once the worker is back waiting.
            loop {
                let q = pool.shared.lock();
                if q.idle + q.searching == q.live {
                    break;
                }
                drop(q);
                thread::yield_now();
            }
        }
        assert_eq!(pool.shared.lock().watchman, Watchman::Absent);
        assert!(pool.shared.lock().waiting.is_empty());
    }

    #[test]
    fn a_job_behind_busy_workers_gets_a_thread_of_its_own_and_it_ends_once_idle() {
        let pool = pool(1, 8);
        let gate: Gate = Arc::default();
        let (started, starts) = mpsc::channel();
        for _ in 0..3 {
            let (gate, started) = (Arc::clone(&gate), started.clone());
            pool.execute(move || {
                started.send(()).unwrap();
                wait(&gate);
            });
        }
        // One worker, three jobs that block: all three run at once all the same (each
        // waited start_within, then got a thread), while none has returned.
        for _ in 0..3 {
            starts.recv().unwrap();
        }
        assert_eq!(pool.shared.lock().live, 3);
        let (tx, rx) = mpsc::channel();
        pool.execute(move || tx.send("quick").unwrap());
        assert_eq!(rx.recv().unwrap(), "quick");
        open(&gate);
        // The threads beyond the bound end once idle.
        until_at_most(&pool, 1);
    }

    #[test]
    fn a_job_queued_before_its_new_worker_started_is_counted_once() {
        // Cap 2, one worker: two jobs given back to back both run, even when the first is
        // still queued for the worker just started for it (held back here, as a session's
        // lock holder does); the thread started for a job is not counted again for it.
        let pool = pool(1, 2);
        let gate: Gate = Arc::default();
        let (turns, turned) = mpsc::channel();
        let deferring = defer();
        for _ in 0..2 {
            let (gate, turns) = (Arc::clone(&gate), turns.clone());
            pool.execute_cancellable(CancellationToken::new(), move |turn| {
                turns.send(turn).unwrap();
                if turn == Turn::Run {
                    wait(&gate);
                }
            });
        }
        assert_eq!(turned.try_recv(), Err(mpsc::TryRecvError::Empty));
        drop(deferring);
        assert_eq!(turned.recv().unwrap(), Turn::Run);
        assert_eq!(turned.recv().unwrap(), Turn::Run);
        open(&gate);
        until_at_most(&pool, 1);
    }

    #[test]
    fn past_the_cap_a_job_is_refused_at_once_on_the_callers_thread() {
        let pool = pool(1, 2);
        let gate: Gate = Arc::default();
        let (started, starts) = mpsc::channel();
        let (turns, turned) = mpsc::channel();
        let caller = thread::current().id();
        let submit = |pool: &Pool| {
            let (gate, started, turns) = (Arc::clone(&gate), started.clone(), turns.clone());
            pool.execute_cancellable(CancellationToken::new(), move |turn| {
                turns.send((turn, thread::current().id())).unwrap();
                if turn == Turn::Run {
                    started.send(()).unwrap();
                    wait(&gate);
                }
            });
        };
        for _ in 0..2 {
            submit(&pool);
            starts.recv().unwrap();
            let (turn, on) = turned.recv().unwrap();
            assert_eq!(turn, Turn::Run);
            assert_ne!(on, caller);
        }
        // Two threads (the cap) are busy: the third is refused before `execute` returns.
        submit(&pool);
        assert_eq!(turned.try_recv(), Ok((Turn::Refused, caller)));
        assert_eq!(pool.shared.lock().live, 2);
        assert!(pool.shared.lock().jobs.is_empty());
        open(&gate);
        // Room again once a handler returned.
        until_at_most(&pool, 1);
        let (tx, rx) = mpsc::channel();
        pool.execute_cancellable(CancellationToken::new(), move |turn| tx.send(turn).unwrap());
        assert_eq!(rx.recv().unwrap(), Turn::Run);
    }
}
