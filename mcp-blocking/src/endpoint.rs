//! A server's Streamable HTTP endpoint, for any HTTP stack: hand it a request whose body was
//! read, write the [`Response`] it gives (whole, or a [`BodyStream`] of pieces to write and
//! flush as they come; dropping the stream tells the server the client went away)
//!
//! [`Server::http_endpoint`](crate::Server::http_endpoint) makes one;
//! [`Server::serve_http`](crate::Server::serve_http) drives the same entry point with the
//! binding's own HTTP/1.1, a thread per connection. The `endpoint-tiny-http` example serves
//! it with tiny_http.
//!
//! ```no_run
//! use mcp_sansio::http::{HttpConfig, Source};
//! use mcp_sansio_blocking::endpoint::Body;
//! # fn run(server: mcp_sansio_blocking::Server) {
//! let endpoint = server.http_endpoint(HttpConfig::default()).expect("a thread for its actor");
//! // In the HTTP stack's request handler, with the request's method, fields and body:
//! # let (method, fields, body) = (String::new(), Vec::new(), Vec::new());
//! let response = endpoint.handle(Source::unknown(), method, fields, body);
//! match response.body {
//!     Body::Whole(bytes) => { /* write status, headers and bytes */ }
//!     Body::Stream(pieces) => {
//!         for piece in pieces {
//!             // write and flush each piece; an Err: close the connection
//! #           let _ = piece;
//!         }
//!     }
//!     _ => {}
//! }
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use mcp_sansio::http::Source;
pub use mcp_sansio_runtime::endpoint::{Dropped, Next};
use mcp_sansio_runtime::endpoint::{Got, OpenBody};
pub use mcp_sansio_runtime::http::Fields;
use mcp_sansio_runtime::http::Piece;

use crate::lane::{self, Lanes, Served};
use crate::threads::{Answer, Input, TICK, ToActor};

/// A server's Streamable HTTP endpoint (both wires), from
/// [`Server::http_endpoint`](crate::Server::http_endpoint); clones drive the same sessions
///
/// Its actor thread runs until [`shutdown`](Self::shutdown), or until the last clone is
/// dropped.
#[derive(Clone, Debug)]
pub struct HttpEndpoint {
    inbox: Sender<Input>,
    body_limit: usize,
    /// The 2026 fast path: a stateless request runs on the calling thread
    lanes: Arc<Lanes>,
    /// Set once the server stops (the actor's loop ended, or is about to)
    stopped: Arc<AtomicBool>,
    _stop: Arc<StopOnDrop>,
}

/// Stops the actor when the last clone of its endpoint goes
#[derive(Debug)]
struct StopOnDrop(Sender<Input>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(Input::Http(ToActor::Stop));
    }
}

impl HttpEndpoint {
    pub(crate) fn new(
        inbox: Sender<Input>,
        body_limit: usize,
        lanes: Arc<Lanes>,
        stopped: Arc<AtomicBool>,
    ) -> Self {
        Self {
            _stop: Arc::new(StopOnDrop(inbox.clone())),
            inbox,
            body_limit,
            lanes,
            stopped,
        }
    }

    /// A sender to the actor's inbox (the binding's own server stops it with this)
    pub(crate) fn inbox(&self) -> Sender<Input> {
        self.inbox.clone()
    }

    /// The largest request body it takes ([`HttpConfig::max_body_size`]); a larger one
    /// gets [`oversize`](Self::oversize)
    ///
    /// [`HttpConfig::max_body_size`]: mcp_sansio::http::HttpConfig::max_body_size
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// Answers a request: `method`, its header fields (every field, in order), its whole
    /// `body`, and its `source` (the peer's address, and the principal of a verified token);
    /// blocks until the response head is known (a 2026 request answered as JSON waits for
    /// its handler)
    ///
    /// A server that stopped answers 503.
    pub fn handle(
        &self,
        source: Source,
        method: String,
        headers: impl Into<Fields>,
        body: Vec<u8>,
    ) -> Response {
        self.handle_until(source, method, headers, body, || false)
            .unwrap_or_else(|| Response::status(503))
    }

    /// [`handle`](Self::handle), asking `gone` every quarter second while the head is not
    /// known: once it says the client went away, the server is told and `None` returned
    pub fn handle_until(
        &self,
        source: Source,
        method: String,
        headers: impl Into<Fields>,
        body: Vec<u8>,
        mut gone: impl FnMut() -> bool,
    ) -> Option<Response> {
        if self.stopped.load(Ordering::Acquire) {
            // Shut down (or shutting down): as the actor answers.
            return Some(Response::status(503));
        }
        let (mut source, mut headers) = (source, headers.into());
        // A 2026 request (no session id) runs right here when the core takes it.
        let has_session = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id"));
        if method == "POST" && !has_session {
            match lane::serve(&self.lanes, source, &method, headers, &body, &mut gone) {
                Served::Whole(response) => return Some(Response::whole(response)),
                Served::Stream(head, lane) => {
                    let body = BodyStream {
                        frames: lane.frames,
                        open: OpenBody::lane(lane.unwritten),
                        tell: Tell::Lane(lane.gone),
                    };
                    return Some(Response::stream(head, body));
                }
                Served::Gone => return None,
                Served::Elsewhere(s, h) => (source, headers) = (s, h),
            }
        }
        let (reply, answer) = crossbeam_channel::bounded(1);
        let msg = ToActor::Request {
            source,
            method,
            headers,
            body,
            reply,
        };
        self.answer(msg, answer, gone)
    }

    /// Answers a request whose body was over [`body_limit`](Self::body_limit) (413, with
    /// the JSON-RPC error a client can read)
    pub fn oversize(&self) -> Response {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.answer(ToActor::Oversize { reply }, answer, || false)
            .unwrap_or_else(|| Response::status(503))
    }

    /// Stops the server behind the endpoint: every open response ends and every session
    /// closes; later requests are answered 503
    pub fn shutdown(&self) {
        self.stopped.store(true, Ordering::Release);
        let _ = self.inbox.send(Input::Http(ToActor::Stop));
    }

    fn answer(
        &self,
        msg: ToActor,
        answer: Receiver<Answer>,
        mut gone: impl FnMut() -> bool,
    ) -> Option<Response> {
        if self.inbox.send(Input::Http(msg)).is_err() {
            return Some(Response::status(503));
        }
        let Ok(answer) = answer.recv() else {
            return Some(Response::status(503));
        };
        match answer {
            Answer::Complete(response) => Some(Response::whole(response)),
            Answer::Open {
                exchange,
                frames,
                unwritten,
            } => {
                let mut body = BodyStream {
                    frames,
                    open: OpenBody::new(exchange, unwritten),
                    tell: Tell::Actor(self.inbox.clone()),
                };
                // Dropping `body` tells the server the client went away.
                loop {
                    let got = got(body.frames.recv_timeout(TICK));
                    let waited = matches!(got, Got::Nothing);
                    if let Some(head) = body.open.head(got) {
                        return Some(Response::stream(head, body));
                    }
                    if body.open.ended() {
                        return Some(Response::status(503));
                    }
                    if waited && gone() {
                        return None;
                    }
                }
            }
        }
    }
}

/// The endpoint's answer to one request
pub type Response = mcp_sansio_runtime::endpoint::Response<BodyStream>;
/// A response's body: whole, or a stream of pieces ([`BodyStream`], an iterator)
pub type Body = mcp_sansio_runtime::endpoint::Body<BodyStream>;

/// The body of an open response: pieces as the server writes them, until it ends it (an
/// iterator that blocks for the next piece)
///
/// Dropped before its end (the client went away), it tells the server. A [`Dropped`] error
/// means the server gave the response up because its client stopped reading: close the
/// connection rather than end the body cleanly.
#[derive(Debug)]
pub struct BodyStream {
    frames: Receiver<Piece>,
    open: OpenBody,
    tell: Tell,
}

/// Whom a body dropped before its end tells
#[derive(Debug)]
enum Tell {
    /// The actor, of the exchange
    Actor(Sender<Input>),
    /// The fast path's stream thread (dropping the sender is the message)
    Lane(#[allow(dead_code)] Sender<()>),
}

/// What a wait on an open body's channel gave
fn got(received: Result<Piece, RecvTimeoutError>) -> Got {
    match received {
        Ok(piece) => Got::Piece(piece),
        Err(RecvTimeoutError::Timeout) => Got::Nothing,
        Err(RecvTimeoutError::Disconnected) => Got::Closed,
    }
}

impl BodyStream {
    /// The next piece, waiting at most `wait` (then [`Next::Empty`])
    pub fn next_timeout(&mut self, wait: Duration) -> Next {
        loop {
            if let Some(next) = self.open.next(got(self.frames.recv_timeout(wait))) {
                return next;
            }
        }
    }

    /// The next piece if one is queued now (to gather what is queued into one write)
    pub fn try_next(&mut self) -> Next {
        loop {
            let got = match self.frames.try_recv() {
                Ok(piece) => Got::Piece(piece),
                Err(TryRecvError::Empty) => Got::Nothing,
                Err(TryRecvError::Disconnected) => Got::Closed,
            };
            if let Some(next) = self.open.next(got) {
                return next;
            }
        }
    }
}

impl Iterator for BodyStream {
    type Item = Result<Vec<u8>, Dropped>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.open.ended() {
            return None;
        }
        loop {
            let got = self.frames.recv().map_or(Got::Closed, Got::Piece);
            if let Some(next) = self.open.next(got) {
                return next.item();
            }
        }
    }
}

impl Drop for BodyStream {
    fn drop(&mut self) {
        if let (Some(exchange), Tell::Actor(inbox)) = (self.open.abandoned(), &self.tell) {
            let _ = inbox.send(Input::Http(ToActor::Closed(exchange)));
        }
    }
}
