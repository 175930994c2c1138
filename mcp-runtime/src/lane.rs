//! The async bindings' 2026 fast path: a stateless request served on the task that read it
//!
//! The [`Endpoint`](crate::endpoint::Endpoint) gives each POST without an `Mcp-Session-Id`
//! to a [`LaneSet`] first. It takes a [`Worker`] from its pool (a core
//! [`Lane`]: a server session of its own, with the endpoint's shared rules and caps; the
//! session's [`Peer`]; a handler channel), lets the core decide, and runs the handler right
//! there: the connection's task awaits the handler's answer and writes it, with no hop to
//! the server's actor and back. What the core sends [`Elsewhere`](Taken::Elsewhere) (the
//! 2025 wire, `tasks/*`, listen streams, a call that may become a task) goes to the actor as
//! before. A response that turns into an event stream (progress or logs before the
//! answer) goes on on a task of its own, fed to the body through a channel as the actor's.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures_lite::FutureExt;
use mcp_sansio::http::{
    HttpResponse, Lane, LaneOutput, Lanes, ResponseHead, SessionKey, Source, Taken,
};

use crate::alarm::Timer;
use crate::chan;
use crate::http::{Fields, Piece, Unwritten};
use crate::peer::{App, HandlerRx, Handlers, Peer};
use crate::push::{Push, Registration};
use crate::runtime::Runtime;
use crate::server::ServerCore;

/// Idle workers kept for the next requests, per shard (more are made when more run at
/// once, and dropped when they come back to a full pool)
const POOL: usize = 64;

/// Pools, each taken by the threads assigned to it: threads that serve requests at once
/// rarely wait for each other's lock
const SHARDS: usize = 8;

thread_local! {
    /// This thread's shard
    static SHARD: usize = NEXT_SHARD.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % SHARDS;
}

static NEXT_SHARD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A pool of idle workers
type Pool<R> = Mutex<Vec<Box<Worker<R>>>>;

/// The fast path of one endpoint: the shared rules and a pool of workers
pub(crate) struct LaneSet<R: Runtime> {
    lanes: Lanes,
    app: App<R>,
    /// The count of the one session the 2026 requests share (opened by the first request
    /// the fast path or the actor serves)
    stateless: Arc<std::sync::OnceLock<crate::meter::Open>>,
    /// Idle workers (boxed: a worker, a session and a peer, moves in and out of futures)
    pools: [Pool<R>; SHARDS],
    /// Tool and scope changes reach the rules as the server makes them (not after the
    /// actor's next turn), so a request right after `add_tool` sees the tool's mirrors
    _registration: Registration,
}

/// One request at a time: the core's lane, the peer running its handlers, their channel
struct Worker<R: Runtime> {
    lane: Lane,
    peer: Peer<R>,
    handlers: Handlers<R>,
    rx: HandlerRx<R>,
}

/// What the fast path made of a request
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

impl<R: Runtime> LaneSet<R> {
    /// The fast path of `server`, sharing `lanes` (from the actor's core server, so the caps
    /// count both paths)
    pub(crate) fn new(
        lanes: Lanes,
        stateless: Arc<std::sync::OnceLock<crate::meter::Open>>,
        server: &ServerCore<R>,
    ) -> Arc<Self> {
        let link = lanes.clone();
        // Registered before the tools are read, so no change is missed.
        let registration = server.live().hub().register(move |push| {
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
        for tool in server.live().tools() {
            lanes.set_tool(&tool);
        }
        lanes.set_required_scopes(
            server
                .live()
                .access()
                .map(|a| a as Arc<dyn mcp_sansio::http::RequiredScopes>),
        );
        Arc::new(Self {
            lanes,
            app: server.app(),
            stateless,
            pools: std::array::from_fn(|_| Mutex::new(Vec::new())),
            _registration: registration,
        })
    }

    /// The pool of this thread's shard
    fn pool(&self) -> &Pool<R> {
        let shard = SHARD.try_with(|s| *s).unwrap_or(0);
        &self.pools[shard]
    }

    fn take(&self) -> Box<Worker<R>> {
        let spare = self
            .pool()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        spare.unwrap_or_else(|| {
            let (handlers, rx) = Handlers::<R>::channel();
            let mut peer = Peer::uncounted();
            peer.http_session(SessionKey::STATELESS);
            Box::new(Worker {
                lane: self.lanes.lane(R::now()),
                peer,
                handlers,
                rx,
            })
        })
    }

    /// A worker whose request ended cleanly goes back to the pool
    fn put(&self, worker: Box<Worker<R>>) {
        if worker.lane.is_open() || worker.lane.in_flight() > 0 {
            // A handler may still answer: this worker serves nobody else.
            return;
        }
        let mut pool = self.pool().lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < POOL {
            pool.push(worker);
        }
    }

    /// Serves a request on the caller's task if the core takes it
    pub(crate) async fn serve(
        self: &Arc<Self>,
        source: Source,
        method: &str,
        headers: Fields,
        body: &[u8],
    ) -> Served {
        let mut worker = self.take();
        let now = R::now();
        let (source, fields) = crate::http::with_fields(source, headers);
        let taken = match &fields {
            Ok(()) => worker.lane.handle_request(
                now,
                &source,
                method,
                source.headers.as_deref().unwrap_or_default(),
                body,
            ),
            Err(raw) => worker
                .lane
                .handle_request(now, &source, method, raw.as_slice(), body),
        };
        let trace = match &taken {
            Taken::Elsewhere => None,
            _ => crate::trace::ExchangeTrace::new(
                method,
                source.headers.as_deref().unwrap_or_default(),
            ),
        };
        if !matches!(taken, Taken::Elsewhere) {
            crate::meter::received("http", body.len());
        }
        match taken {
            Taken::Elsewhere => {
                self.put(worker);
                let (source, fields) = crate::http::without_fields(source, fields);
                Served::Elsewhere(source, fields)
            }
            Taken::Complete(response) => {
                self.put(worker);
                crate::http::metered(&response);
                if let Some(trace) = trace {
                    trace.complete(&response);
                }
                Served::Whole(response)
            }
            _ => {
                self.stateless
                    .get_or_init(|| crate::meter::Open::session("server"));
                self.run(worker, trace).await
            }
        }
    }

    /// Runs the request's handler until its response is whole, or its event stream opens
    async fn run(
        self: &Arc<Self>,
        worker: Box<Worker<R>>,
        trace: Option<crate::trace::ExchangeTrace>,
    ) -> Served {
        // Dropped before the answer (the client went away): the request is cancelled.
        let mut guard = Cancel::<R> {
            worker: Some(worker),
        };
        let mut timer = Timer::<R>::default();
        let mut head: Option<ResponseHead> = None;
        let mut body = Vec::new();
        let mut ended = false;
        loop {
            let w = guard.worker.as_mut().expect("held until the end");
            w.pump(&self.app);
            while let Some(output) = w.lane.poll_output() {
                match output {
                    LaneOutput::Head(h) => head = Some(h),
                    LaneOutput::Body(data) => body.extend_from_slice(&data),
                    LaneOutput::Complete(response) => {
                        crate::http::metered(&response);
                        if let Some(trace) = trace {
                            trace.complete(&response);
                        }
                        let worker = guard.worker.take().expect("held until the end");
                        self.put(worker);
                        return Served::Whole(response);
                    }
                    LaneOutput::End => ended = true,
                    _ => {}
                }
            }
            if let Some(h) = head.take() {
                // An event stream: the rest goes on on a task of its own.
                let worker = guard.worker.take().expect("held until the end");
                return self.stream(worker, h, body, ended, trace);
            }
            let w = guard.worker.as_mut().expect("held until the end");
            if !wait(w, &mut timer).await {
                // The handler channel closed: nothing will answer.
                let response = HttpResponse::empty(503);
                return Served::Whole(response);
            }
        }
    }

    /// The event stream of a request whose progress or logs came before its answer
    fn stream(
        self: &Arc<Self>,
        mut worker: Box<Worker<R>>,
        head: ResponseHead,
        first: Vec<u8>,
        ended: bool,
        trace: Option<crate::trace::ExchangeTrace>,
    ) -> Served {
        let (tx, frames) = async_channel::unbounded();
        let (gone, mut left) = chan::oneshot::<()>();
        let unwritten = Unwritten::default();
        if let Some(trace) = &trace {
            trace.status(head.status);
        }
        let mut queued = std::collections::VecDeque::new();
        if !first.is_empty() {
            queued.push_back(first);
        }
        let set = Arc::clone(self);
        let waiting = unwritten.clone();
        if ended {
            // All of it is here: the channel closes after it.
            for data in queued.drain(..) {
                crate::meter::sent("http", data.len());
                waiting.sent(data.len());
                let _ = tx.try_send(Piece::Body(data));
            }
            if let Some(trace) = trace {
                trace.end();
            }
            set.put(worker);
            return Served::Stream(
                head,
                LaneBody {
                    frames,
                    unwritten,
                    gone,
                },
            );
        }
        R::spawn(async move {
            let mut timer = Timer::<R>::default();
            loop {
                worker.pump(&set.app);
                let mut ended = false;
                while let Some(output) = worker.lane.poll_output() {
                    match output {
                        LaneOutput::Body(data) => queued.push_back(data),
                        LaneOutput::End => ended = true,
                        _ => {}
                    }
                }
                let mut dropped = false;
                for data in queued.drain(..) {
                    if set
                        .lanes
                        .config()
                        .keeps_unwritten(waiting.bytes(), data.len())
                    {
                        crate::meter::sent("http", data.len());
                        waiting.sent(data.len());
                        let _ = tx.try_send(Piece::Body(data));
                    } else {
                        // The client stopped reading: drop the response rather than hold
                        // without bound (that cancels the request).
                        waiting.drop_response();
                        dropped = true;
                        break;
                    }
                }
                if dropped {
                    worker.lane.handle_closed(R::now());
                    worker.pump(&set.app);
                    if let Some(trace) = &trace {
                        trace.dropped();
                    }
                    worker.peer.abort_all();
                    break;
                }
                if ended {
                    break;
                }
                let closed = async {
                    let _ = (&mut left).await;
                    false
                };
                let more = wait(&mut worker, &mut timer).or(closed).await;
                if !more {
                    // The client went away (or nothing will answer): cancel the request.
                    worker.lane.handle_closed(R::now());
                    worker.pump(&set.app);
                    if let Some(trace) = &trace {
                        trace.dropped();
                    }
                    worker.peer.abort_all();
                    break;
                }
            }
            if let Some(trace) = trace {
                trace.end();
            }
            set.put(worker);
        });
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

impl<R: Runtime> Worker<R> {
    /// Hands the session's events to the application
    fn pump(&mut self, app: &App<R>) {
        while let Some(event) = self.lane.poll_event() {
            let session = self.lane.session_mut();
            self.peer
                .on_server_event(session, event, app, &self.handlers);
        }
    }
}

/// Waits for a handler's message or the lane's deadline and takes it in; `false` when the
/// handler channel closed
async fn wait<R: Runtime>(w: &mut Worker<R>, timer: &mut Timer<R>) -> bool {
    let deadline = w.lane.poll_timeout();
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
            let session = w.lane.session_mut();
            w.peer.on_server_handler(session, msg);
            // Take what else is queued before writing.
            while let Ok((_, msg)) = w.rx.try_recv() {
                let session = w.lane.session_mut();
                w.peer.on_server_handler(session, msg);
            }
            true
        }
        Some(None) => false,
        None => {
            w.lane.handle_timeout(R::now());
            true
        }
    }
}

/// Cancels the request of a worker dropped before its answer (the connection's task
/// stopped waiting: the client went away)
struct Cancel<R: Runtime> {
    worker: Option<Box<Worker<R>>>,
}

impl<R: Runtime> Drop for Cancel<R> {
    fn drop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.lane.handle_closed(R::now());
            w.peer.abort_all();
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
