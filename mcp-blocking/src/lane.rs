//! The 2026 fast path on plain threads: a stateless request served on the connection's
//! thread
//!
//! The [`HttpEndpoint`](crate::HttpEndpoint) gives each POST without an `Mcp-Session-Id`
//! to the runtime layer's [`Workers`] first. What the core takes runs on the calling thread:
//! it blocks on its worker's channel for the handler's messages (asking every
//! [`TICK`](crate::threads::TICK) whether the client went away) until the response is
//! whole or its event stream opens, with no hop to the actor thread and back. An event
//! stream (progress or logs before the answer) goes on on a thread of its own, which feeds
//! the body through a channel as the actor does, within the same `max_unwritten` bound.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use mcp_sansio::http::{HttpResponse, ResponseHead, Source};
use mcp_sansio_runtime::http::{Fields, Piece, Unwritten};
use mcp_sansio_runtime::lane::{BATCH, Begun, Step, Worker, Workers};

use crate::threads::{Blocking, Handlers, Input, Route, TICK, now};

/// A worker's handler channel: its own inbox
type Rx = Receiver<Input>;

/// The fast path of one endpoint
pub(crate) type Lanes = Workers<Blocking, Rx>;

/// A worker's handler channel
pub(crate) fn channel() -> (Handlers, Rx) {
    let (tx, rx) = crossbeam_channel::unbounded();
    (Handlers::new(Route::inbox(tx)), rx)
}

/// What the fast path made of a request
pub(crate) enum Served {
    /// The whole response
    Whole(HttpResponse),
    /// An event stream: its head, and its body
    Stream(ResponseHead, LaneBody),
    /// Not the fast path's: the request's source and fields, for the actor
    Elsewhere(Source, Fields),
    /// The client went away before the head (the request was cancelled)
    Gone,
}

/// Serves a request on the calling thread if the core takes it; `gone` is asked every
/// [`TICK`] while the head is not known
pub(crate) fn serve(
    lanes: &Arc<Lanes>,
    source: Source,
    method: &str,
    headers: Fields,
    body: &[u8],
    mut gone: impl FnMut() -> bool,
) -> Served {
    let worker = match lanes.begin(source, method, headers, body) {
        Begun::Elsewhere(source, fields) => return Served::Elsewhere(source, fields),
        Begun::Whole(response) => return Served::Whole(response),
        Begun::Run(worker) => worker,
    };
    let mut held = Some(worker);
    loop {
        match lanes.step(&mut held) {
            Step::Whole(response) => return Served::Whole(response),
            Step::Stream(head, first, ended) => {
                let worker = held.take().expect("held until the end");
                return match stream(lanes, worker, first, ended) {
                    Some(body) => Served::Stream(head, body),
                    None => Served::Whole(HttpResponse::empty(503)),
                };
            }
            _ => {}
        }
        let w = held.as_mut().expect("held until the end");
        let tick = Instant::now() + TICK;
        match take(w, Some(w.deadline().map_or(tick, |d| d.min(tick)))) {
            Taken::Message => {}
            Taken::Nothing if Instant::now() >= tick && gone() => {
                w.cancel();
                return Served::Gone;
            }
            Taken::Nothing => {}
            Taken::Closed => {
                // Nothing will answer.
                w.cancel();
                return Served::Whole(HttpResponse::empty(503));
            }
        }
    }
}

/// What a wait on a worker's channel gave
enum Taken {
    /// Messages, taken in
    Message,
    /// The wait's end came first (the worker's deadline handled if it passed)
    Nothing,
    /// The channel closed
    Closed,
}

/// Waits for the worker's next handler message until `until` (`None`: without end) and
/// takes it in with what else is queued; handles the worker's deadline once it passed
fn take(w: &mut Worker<Blocking, Rx>, until: Option<Instant>) -> Taken {
    let received = match until {
        Some(until) => w.rx.recv_deadline(until),
        None => w.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(input) => {
            on_input(w, input);
            take_queued(w);
            Taken::Message
        }
        Err(RecvTimeoutError::Timeout) => {
            if w.deadline().is_some_and(|d| d <= now()) {
                w.on_timeout();
            }
            Taken::Nothing
        }
        Err(RecvTimeoutError::Disconnected) => Taken::Closed,
    }
}

/// Takes in what else is queued before writing, up to [`BATCH`] messages (a handler that
/// sends faster than they are taken does not hold the writing back)
fn take_queued(w: &mut Worker<Blocking, Rx>) {
    for _ in 1..BATCH {
        let Ok(input) = w.rx.try_recv() else {
            return;
        };
        on_input(w, input);
    }
}

fn on_input(w: &mut Worker<Blocking, Rx>, input: Input) {
    if let Input::Handler(_, msg) = input {
        w.on_handler(msg);
    }
}

/// What a lane's event stream body gets: its pieces, what waits for the client, and a way
/// to say the client left
pub(crate) struct LaneBody {
    /// The pieces
    pub(crate) frames: Receiver<Piece>,
    /// What waits for the client (the connection reports each piece it takes)
    pub(crate) unwritten: Unwritten,
    /// Dropped (the body with it) before the end: the client left
    pub(crate) gone: Sender<()>,
}

/// The event stream of a request whose progress or logs came before its answer: fed on a
/// thread of its own; `None` when no thread could be had (the request is then cancelled)
fn stream(
    lanes: &Arc<Lanes>,
    mut worker: Box<Worker<Blocking, Rx>>,
    first: Vec<u8>,
    ended: bool,
) -> Option<LaneBody> {
    let (tx, frames) = crossbeam_channel::unbounded();
    let (gone, left) = crossbeam_channel::bounded::<()>(0);
    let unwritten = Unwritten::default();
    let mut queued = VecDeque::new();
    if !first.is_empty() {
        queued.push_back(first);
    }
    let waiting = unwritten.clone();
    let send = move |piece: Piece| {
        let _ = tx.send(piece);
    };
    let body = LaneBody {
        frames,
        unwritten,
        gone,
    };
    if ended {
        // All of it is here: the channel closes after it.
        lanes.send_queued(&mut queued, &waiting, send);
        lanes.put(worker);
        return Some(body);
    }
    let set = Arc::clone(lanes);
    // The worker goes to the thread once it runs (kept here if no thread can be had).
    let (hand, handed) = crossbeam_channel::bounded::<Box<Worker<Blocking, Rx>>>(1);
    let spawned = std::thread::Builder::new()
        .name("mcp-http-stream".into())
        .spawn(move || {
            let Ok(mut worker) = handed.recv() else {
                return;
            };
            loop {
                let ended = set.stream_step(&mut worker, &mut queued);
                if !set.send_queued(&mut queued, &waiting, &send) {
                    set.give_up(&mut worker, true);
                    break;
                }
                if ended {
                    break;
                }
                let wait = worker
                    .deadline()
                    .map_or(TICK, |d| d.saturating_duration_since(Instant::now()));
                let got = crossbeam_channel::select! {
                    recv(worker.rx) -> input => input.ok(),
                    recv(left) -> _ => None,
                    default(wait) => {
                        if worker.deadline().is_some_and(|d| d <= now()) {
                            worker.on_timeout();
                        }
                        continue;
                    }
                };
                let Some(input) = got else {
                    // The client went away (or nothing will answer): cancel the request.
                    set.give_up(&mut worker, false);
                    break;
                };
                on_input(&mut worker, input);
                take_queued(&mut worker);
            }
            set.put(worker);
        });
    if spawned.is_err() {
        worker.cancel();
        return None;
    }
    let _ = hand.send(worker);
    Some(body)
}
