//! The 2026 fast path: a stateless request served on the thread or task that read it
//!
//! An endpoint gives each POST without an `Mcp-Session-Id` to its [`Workers`] first. They
//! lend a [`Worker`] from a pool (a core [`Lane`]: a server session of its own, with the
//! endpoint's shared rules and caps; the session's [`Peer`]; a handler channel), and let the
//! core decide ([`Workers::begin`]). What the core sends [`Elsewhere`](Begun::Elsewhere) (the
//! 2025 wire, `tasks/*`, listen streams, a call that may become a task) goes to the actor
//! as before. The rest runs right there: the caller waits on the worker's channel for the
//! handler's messages and steps the worker ([`Workers::step`]) until its response is whole
//! or its event stream opens, with no hop to the server's actor and back.
//!
//! The waiting is the binding's: the async bindings await (the crate's `LaneSet`, below),
//! the blocking binding blocks its connection thread. Everything else, the rules, the
//! counting, the traces and giving a request up, is here once.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use futures_lite::FutureExt;
use mcp_sansio::http::{
    HttpConfig, HttpResponse, Lane, LaneOutput, Lanes, ResponseHead, SessionKey, Source, Taken,
};
use mcp_sansio::schema::Tool;

use crate::alarm::Timer;
use crate::chan;
use crate::http::{Fields, Piece, Unwritten};
use crate::meter::Open;
use crate::peer::{App, HandlerMsg, HandlerRx, Handlers, Peer, Plumbing};
use crate::push::{Hub, Push, Registration};
use crate::runtime::Runtime;
use crate::server::ServerCore;
use crate::trace::ExchangeTrace;

/// Idle workers kept for the next requests, per shard (more are made when more run at
/// once, and dropped when they come back to a full pool)
const POOL: usize = 64;

/// The handler messages a worker takes in at most before its bytes go to the connection
/// (a handler that sends faster than they are taken does not hold the writing back)
pub const BATCH: usize = 64;

/// Pools, each taken by the threads assigned to it: threads that serve requests at once
/// rarely wait for each other's lock
const SHARDS: usize = 8;

thread_local! {
    /// This thread's shard
    static SHARD: usize = NEXT_SHARD.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SHARDS;
}

static NEXT_SHARD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A pool of idle workers
type Pool<P, Rx> = Mutex<Vec<Box<Worker<P, Rx>>>>;

/// The fast path of one endpoint: the shared rules and pools of idle workers
///
/// `P` is the binding's plumbing; `Rx` the receiving end of a worker's handler channel,
/// made with its [`Handlers`] by the `channel` function given to [`new`](Self::new).
pub struct Workers<P: Plumbing, Rx> {
    lanes: Lanes,
    app: App<P>,
    /// The count of the one session the 2026 requests share (opened by the first request
    /// the fast path or the actor serves)
    stateless: Arc<OnceLock<Open>>,
    channel: fn() -> (Handlers<P>, Rx),
    /// Idle workers (boxed: a worker, a session and a peer, moves in and out of futures)
    pools: [Pool<P, Rx>; SHARDS],
    /// Tool and scope changes reach the rules as the server makes them (not after the
    /// actor's next turn), so a request right after `add_tool` sees the tool's mirrors
    _registration: Registration,
}

impl<P: Plumbing, Rx> std::fmt::Debug for Workers<P, Rx> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers").finish_non_exhaustive()
    }
}

/// One request at a time: the core's lane, the peer running its handlers, their channel
pub struct Worker<P: Plumbing, Rx> {
    lane: Lane,
    peer: Peer<P>,
    handlers: Handlers<P>,
    /// Where the handlers' messages for this worker come
    pub rx: Rx,
    /// The request's span, when a subscriber wants it
    trace: Option<ExchangeTrace>,
}

impl<P: Plumbing, Rx> std::fmt::Debug for Worker<P, Rx> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").finish_non_exhaustive()
    }
}

/// What the core made of a request ([`Workers::begin`])
#[derive(Debug)]
pub enum Begun<P: Plumbing, Rx> {
    /// Answered at once (refused, or a notification's 202)
    Whole(HttpResponse),
    /// Not the fast path's: the request's source and fields, for the actor
    Elsewhere(Source, Fields),
    /// Its handler runs: step the worker as its messages come
    Run(Box<Worker<P, Rx>>),
}

/// Where a running request stands ([`Workers::step`])
#[derive(Debug)]
pub enum Step {
    /// Its whole response (the worker went back to its pool)
    Whole(HttpResponse),
    /// Its event stream opened: the head, the first bytes, and whether they are all of it
    Stream(ResponseHead, Vec<u8>, bool),
    /// Waiting for the handler: take its next message, or the worker's deadline
    Wait,
}

impl<P: Plumbing, Rx> Workers<P, Rx> {
    /// The fast path of a server, sharing `lanes` (from the actor's core server, so the caps
    /// count both paths) and `stateless` (the actor's count of the shared session); `app`
    /// runs the handlers, `hub` is the server's (its tool and scope changes), `tools` reads
    /// the server's tools and scopes as they are, after joining the hub
    pub fn new(
        lanes: Lanes,
        stateless: Arc<OnceLock<Open>>,
        app: App<P>,
        hub: &Arc<Hub>,
        tools: impl FnOnce() -> (Vec<Tool>, Option<Arc<mcp_sansio::server::Access>>),
        channel: fn() -> (Handlers<P>, Rx),
    ) -> Self {
        let link = lanes.clone();
        // Registered before the tools are read, so no change is missed.
        let registration = hub.register(move |push| {
            match push {
                Push::ToolSet(tool) => link.set_tool(&tool),
                Push::ToolRemoved(name) => link.remove_tool(&name),
                Push::Access(access) => link.set_required_scopes(
                    access.map(|a| a as Arc<dyn mcp_sansio::http::RequiredScopes>),
                ),
                _ => {}
            }
            true
        });
        let (tools, access) = tools();
        for tool in tools {
            lanes.set_tool(&tool);
        }
        lanes.set_required_scopes(access.map(|a| a as Arc<dyn mcp_sansio::http::RequiredScopes>));
        Self {
            lanes,
            app,
            stateless,
            channel,
            pools: std::array::from_fn(|_| Mutex::new(Vec::new())),
            _registration: registration,
        }
    }

    /// The HTTP rules' settings
    pub fn config(&self) -> &HttpConfig {
        self.lanes.config()
    }

    /// The pool of this thread's shard
    fn pool(&self) -> &Pool<P, Rx> {
        let shard = SHARD.try_with(|s| *s).unwrap_or(0);
        &self.pools[shard]
    }

    fn take(&self) -> Box<Worker<P, Rx>> {
        let spare = self
            .pool()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        spare.unwrap_or_else(|| {
            let (handlers, rx) = (self.channel)();
            let mut peer = Peer::uncounted();
            peer.http_session(SessionKey::STATELESS);
            Box::new(Worker {
                lane: self.lanes.lane(P::now()),
                peer,
                handlers,
                rx,
                trace: None,
            })
        })
    }

    /// A worker whose request ended goes back to its pool (one whose handler may still
    /// answer serves nobody else)
    pub fn put(&self, mut worker: Box<Worker<P, Rx>>) {
        if let Some(trace) = worker.trace.take() {
            trace.end();
        }
        if worker.lane.is_open() || worker.lane.in_flight() > 0 {
            return;
        }
        let mut pool = self.pool().lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < POOL {
            pool.push(worker);
        }
    }

    /// Lets the core look at a request (`method`, its header fields, its whole `body`,
    /// `source`): answered at once, the actor's, or run here
    pub fn begin(
        &self,
        source: Source,
        method: &str,
        headers: Fields,
        body: &[u8],
    ) -> Begun<P, Rx> {
        let mut worker = self.take();
        let now = P::now();
        let source = crate::http::with_fields(source, &headers);
        let taken = worker
            .lane
            .handle_request(now, &source, method, &headers, body);
        if matches!(taken, Taken::Elsewhere) {
            self.put(worker);
            return Begun::Elsewhere(source, headers);
        }
        crate::meter::received("http", body.len());
        let trace = ExchangeTrace::new(method, &headers);
        match taken {
            Taken::Complete(response) => {
                self.put(worker);
                crate::http::metered(&response);
                if let Some(trace) = trace {
                    trace.complete(&response);
                }
                Begun::Whole(response)
            }
            _ => {
                self.stateless.get_or_init(|| Open::session("server"));
                worker.trace = trace;
                Begun::Run(worker)
            }
        }
    }

    /// Hands what the session has for the application to it, and says where the request
    /// stands: whole (the worker goes back to its pool), its event stream open, or waiting
    pub fn step(&self, worker: &mut Option<Box<Worker<P, Rx>>>) -> Step {
        let Some(w) = worker.as_mut() else {
            return Step::Wait;
        };
        w.pump(&self.app);
        let mut head = None;
        let mut body = Vec::new();
        let mut ended = false;
        while let Some(output) = w.lane.poll_output() {
            match output {
                LaneOutput::Head(h) => head = Some(h),
                LaneOutput::Body(data) => body.extend_from_slice(&data),
                LaneOutput::Complete(response) => {
                    crate::http::metered(&response);
                    if let Some(trace) = w.trace.take() {
                        trace.complete(&response);
                    }
                    if let Some(w) = worker.take() {
                        self.put(w);
                    }
                    return Step::Whole(response);
                }
                LaneOutput::End => ended = true,
                _ => {}
            }
        }
        match head {
            Some(head) => {
                if let Some(trace) = &w.trace {
                    trace.status(head.status);
                }
                Step::Stream(head, body, ended)
            }
            None => Step::Wait,
        }
    }

    /// An open event stream's next bytes, queued on `queued`; `true` once it ended
    pub fn stream_step(&self, worker: &mut Worker<P, Rx>, queued: &mut VecDeque<Vec<u8>>) -> bool {
        worker.pump(&self.app);
        let mut ended = false;
        while let Some(output) = worker.lane.poll_output() {
            match output {
                LaneOutput::Body(data) => queued.push_back(data),
                LaneOutput::End => ended = true,
                _ => {}
            }
        }
        ended
    }

    /// Hands an open stream's `queued` bytes to its connection (`send`) while what waits for
    /// the client (`unwritten`) stays within [`HttpConfig::max_unwritten`]; `false` when
    /// the client stopped reading and the response was dropped (give the request up)
    pub fn send_queued(
        &self,
        queued: &mut VecDeque<Vec<u8>>,
        unwritten: &Unwritten,
        send: impl Fn(Piece),
    ) -> bool {
        for data in queued.drain(..) {
            if !self.config().keeps_unwritten(unwritten.bytes(), data.len()) {
                // The client stopped reading: drop the response rather than hold without
                // bound (that cancels the request).
                unwritten.drop_response();
                return false;
            }
            crate::meter::sent("http", data.len());
            unwritten.sent(data.len());
            send(Piece::Body(data));
        }
        true
    }

    /// The client went away, stopped reading (`dropped`), or nothing will answer: the
    /// request is cancelled and its handler stopped
    pub fn give_up(&self, worker: &mut Worker<P, Rx>, dropped: bool) {
        worker.lane.handle_closed(P::now());
        worker.pump(&self.app);
        if dropped && let Some(trace) = &worker.trace {
            trace.dropped();
        }
        worker.peer.abort_all();
    }
}

impl<P: Plumbing, Rx> Worker<P, Rx> {
    /// Hands the session's events to the application
    fn pump(&mut self, app: &App<P>) {
        while let Some(event) = self.lane.poll_event() {
            let session = self.lane.session_mut();
            self.peer
                .on_server_event(session, event, app, &self.handlers);
        }
    }

    /// When [`on_timeout`](Self::on_timeout) is due
    pub fn deadline(&self) -> Option<Instant> {
        self.lane.poll_timeout()
    }

    /// A handler's message
    pub fn on_handler(&mut self, msg: HandlerMsg<P>) {
        let session = self.lane.session_mut();
        self.peer.on_server_handler(session, msg);
    }

    /// The [`deadline`](Self::deadline) passed
    pub fn on_timeout(&mut self) {
        self.lane.handle_timeout(P::now());
    }

    /// Dropped before its answer (the caller stopped waiting: the client went away): the
    /// request is cancelled
    pub fn cancel(&mut self) {
        self.lane.handle_closed(P::now());
        self.peer.abort_all();
    }
}

/// What the async fast path made of a request
pub(crate) enum Served {
    /// The whole response
    Whole(HttpResponse),
    /// An event stream: its head, and its body
    Stream(ResponseHead, LaneBody),
    /// Not the fast path's: the request's source and fields, for the actor
    Elsewhere(Source, Fields),
}

/// What a lane's event stream body gets: its pieces, what waits for the client, and a way
/// to say the client left
pub(crate) struct LaneBody {
    /// The pieces
    pub(crate) frames: chan::Receiver<Piece>,
    /// What waits for the client (the connection reports each piece it takes)
    pub(crate) unwritten: Unwritten,
    /// Dropped (the body with it) before the end: the client left
    pub(crate) gone: chan::OneSender<()>,
}

/// The async bindings' workers: a handler's answer is awaited on the connection's task
pub(crate) struct LaneSet<R: Runtime>(Workers<R, HandlerRx<R>>);

impl<R: Runtime> LaneSet<R> {
    /// The fast path of `server`, sharing `lanes` (from the actor's core server, so the caps
    /// count both paths)
    pub(crate) fn new(
        lanes: Lanes,
        stateless: Arc<OnceLock<Open>>,
        server: &ServerCore<R>,
    ) -> Arc<Self> {
        let live = server.live();
        Arc::new(Self(Workers::new(
            lanes,
            stateless,
            server.app(),
            live.hub(),
            || (live.tools(), live.access()),
            Handlers::<R>::channel,
        )))
    }

    /// Serves a request on the caller's task if the core takes it
    pub(crate) async fn serve(
        self: &Arc<Self>,
        source: Source,
        method: &str,
        headers: Fields,
        body: &[u8],
    ) -> Served {
        match self.0.begin(source, method, headers, body) {
            Begun::Elsewhere(source, fields) => Served::Elsewhere(source, fields),
            Begun::Whole(response) => Served::Whole(response),
            Begun::Run(worker) => self.run(worker).await,
        }
    }

    /// Runs the request's handler until its response is whole, or its event stream opens
    async fn run(self: &Arc<Self>, worker: Box<Worker<R, HandlerRx<R>>>) -> Served {
        // Dropped before the answer (the client went away): the request is cancelled.
        let mut guard = Cancel {
            worker: Some(worker),
        };
        let mut timer = Timer::<R>::default();
        loop {
            match self.0.step(&mut guard.worker) {
                Step::Whole(response) => return Served::Whole(response),
                Step::Stream(head, first, ended) => {
                    let worker = guard.worker.take().expect("held until the end");
                    return self.stream(worker, head, first, ended);
                }
                Step::Wait => {}
            }
            let w = guard.worker.as_mut().expect("held until the end");
            if !wait(w, &mut timer).await {
                // The handler channel closed: nothing will answer.
                return Served::Whole(HttpResponse::empty(503));
            }
        }
    }

    /// The event stream of a request whose progress or logs came before its answer
    fn stream(
        self: &Arc<Self>,
        mut worker: Box<Worker<R, HandlerRx<R>>>,
        head: ResponseHead,
        first: Vec<u8>,
        ended: bool,
    ) -> Served {
        let (tx, frames) = async_channel::unbounded();
        let (gone, mut left) = chan::oneshot::<()>();
        let unwritten = Unwritten::default();
        let mut queued = VecDeque::new();
        if !first.is_empty() {
            queued.push_back(first);
        }
        let waiting = unwritten.clone();
        let send = move |piece: Piece| {
            let _ = tx.try_send(piece);
        };
        if ended {
            // All of it is here: the channel closes after it.
            self.0.send_queued(&mut queued, &waiting, send);
            self.0.put(worker);
        } else {
            let set = Arc::clone(self);
            R::spawn(async move {
                let mut timer = Timer::<R>::default();
                loop {
                    let ended = set.0.stream_step(&mut worker, &mut queued);
                    if !set.0.send_queued(&mut queued, &waiting, &send) {
                        set.0.give_up(&mut worker, true);
                        break;
                    }
                    if ended {
                        break;
                    }
                    let closed = async {
                        let _ = (&mut left).await;
                        false
                    };
                    if !wait(&mut worker, &mut timer).or(closed).await {
                        // The client went away (or nothing will answer): cancel the request.
                        set.0.give_up(&mut worker, false);
                        break;
                    }
                }
                set.0.put(worker);
            });
        }
        Served::Stream(
            head,
            LaneBody {
                frames,
                unwritten,
                gone,
            },
        )
    }
}

/// Waits for a handler's message or the worker's deadline and takes it in; `false` when
/// the handler channel closed
async fn wait<R: Runtime>(w: &mut Worker<R, HandlerRx<R>>, timer: &mut Timer<R>) -> bool {
    let deadline = w.deadline();
    let armed = timer.arm(deadline);
    let msg = async { Some(chan::next(&mut w.rx).await) }
        .or(async {
            if armed {
                timer.wait(deadline).await;
                None
            } else {
                std::future::pending().await
            }
        })
        .await;
    match msg {
        Some(Some((_, msg))) => {
            w.on_handler(msg);
            // Take what else is queued before writing, up to a batch.
            for _ in 1..BATCH {
                let Ok((_, msg)) = w.rx.try_recv() else {
                    break;
                };
                w.on_handler(msg);
            }
            true
        }
        Some(None) => false,
        None => {
            w.on_timeout();
            true
        }
    }
}

/// Cancels the request of a worker dropped before its answer (the connection's task
/// stopped waiting: the client went away)
struct Cancel<R: Runtime> {
    worker: Option<Box<Worker<R, HandlerRx<R>>>>,
}

impl<R: Runtime> Drop for Cancel<R> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.as_mut() {
            w.cancel();
        }
    }
}

/// The fast path as the endpoint holds it, whatever the runtime
pub(crate) trait FastPath: Send + Sync {
    /// [`LaneSet::serve`]
    fn serve<'a>(
        &'a self,
        source: Source,
        method: &'a str,
        headers: Fields,
        body: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = Served> + Send + 'a>>;
}

impl<R: Runtime> FastPath for Arc<LaneSet<R>> {
    fn serve<'a>(
        &'a self,
        source: Source,
        method: &'a str,
        headers: Fields,
        body: &'a [u8],
    ) -> Pin<Box<dyn Future<Output = Served> + Send + 'a>> {
        Box::pin(LaneSet::serve(self, source, method, headers, body))
    }
}
