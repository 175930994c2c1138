//! The Streamable HTTP endpoint of one server: the one entry point every HTTP stack drives,
//! the bindings' own servers included
//!
//! An [`Endpoint`] takes a request whose body was read (method, header fields, body bytes,
//! where it came from) and answers a [`Response`]: its status, its header fields and a
//! [`Body`] that is either whole or a stream of pieces (SSE events, or a JSON body that is
//! written when the handler is done). Dropping a [`BodyStream`] before its end tells the
//! server the client went away (on the 2026 wire that cancels the request, on the 2025 wire
//! the stream may be resumed). Behind it runs the actor of
//! [`http_server`](crate::http_server): the core's `HttpServer` rules and every session, fed
//! by every clone of the endpoint.
//!
//! The endpoint answers every request it is given, whatever its path: mounting it under a
//! path is the routing of the stack in front. It reads no socket and owns no timer of the
//! request's: the stack in front reads the body (up to [`Endpoint::body_limit`], else it
//! answers with [`Endpoint::oversize`]) within its own deadlines.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use mcp_sansio::http::{ExchangeId, HttpConfig, HttpResponse, ResponseHead, Source};

use crate::chan::{self, Receiver, Sender};
use crate::http::{Fields, Piece, Then, Unwritten};
use crate::http_server::{Actor, Answer, ToActor};
use crate::lane::{FastPath, LaneBody, LaneSet, Served};
use crate::runtime::Runtime;
use crate::server::ServerCore;

/// The Streamable HTTP endpoint of one server (both wires: 2025 sessions and 2026 stateless
/// requests); clones drive the same sessions
///
/// `B` is a request body as the stack in front collected it (`Vec<u8>`, `bytes::Bytes`).
pub struct Endpoint<B: AsRef<[u8]> + Send + 'static> {
    to_actor: Sender<ToActor<B>>,
    stop: Sender<()>,
    body_limit: usize,
    /// The 2026 fast path: a stateless request runs on the caller's task
    fast: Arc<dyn FastPath>,
}

impl<B: AsRef<[u8]> + Send + 'static> Clone for Endpoint<B> {
    fn clone(&self) -> Self {
        Self {
            to_actor: self.to_actor.clone(),
            stop: self.stop.clone(),
            body_limit: self.body_limit,
            fast: Arc::clone(&self.fast),
        }
    }
}

impl<B: AsRef<[u8]> + Send + 'static> std::fmt::Debug for Endpoint<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("body_limit", &self.body_limit)
            .finish_non_exhaustive()
    }
}

/// An endpoint and the actor behind it, which the binding runs on a task of its own
pub(crate) type Started<B> = (
    Endpoint<B>,
    Pin<Box<dyn Future<Output = ()> + Send + 'static>>,
);

impl<B: AsRef<[u8]> + Send + 'static> Endpoint<B> {
    /// The endpoint serving `server`'s sessions under the HTTP rules of `config`, and the
    /// actor to run (it ends after [`shutdown`](Self::shutdown), or once every clone of the
    /// endpoint and every open body is gone)
    pub fn new<R: Runtime>(config: HttpConfig, server: &ServerCore<R>) -> Started<B> {
        let Actor {
            to_actor,
            stop,
            body_limit,
            lanes,
            stateless,
            run,
        } = Actor::new(config, server);
        let endpoint = Self {
            to_actor,
            stop,
            body_limit,
            fast: Arc::new(LaneSet::new(lanes, stateless, server)),
        };
        (endpoint, run)
    }

    /// The largest request body the endpoint takes ([`HttpConfig::max_body_size`]); a
    /// larger one gets [`oversize`](Self::oversize)
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// Answers a request: `method`, its header fields (every field, in order), its whole
    /// `body`, and its `source` (the peer's address, and the principal of a verified token)
    ///
    /// A server that is shutting down answers 503.
    pub async fn handle(
        &self,
        mut source: Source,
        method: String,
        headers: impl Into<Fields>,
        body: B,
    ) -> Response<BodyStream<B>> {
        let mut headers = headers.into();
        if self.stop.is_closed() || !self.stop.is_empty() {
            // Shut down (or shutting down): as the actor answers.
            return Response::status(503);
        }
        // A 2026 request (no session id) runs right here when the core takes it.
        let has_session = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id"));
        if method == "POST" && !has_session {
            match self
                .fast
                .serve(source, &method, headers, body.as_ref())
                .await
            {
                Served::Whole(response) => return Response::whole(response),
                Served::Stream(head, body) => return Self::lane_stream(head, body),
                Served::Elsewhere(s, h) => (source, headers) = (s, h),
            }
        }
        let (reply, answer) = chan::oneshot();
        let msg = ToActor::Request {
            source,
            method,
            headers,
            body,
            reply,
        };
        if self.to_actor.try_send(msg).is_err() {
            return Response::status(503);
        }
        self.answer(answer).await
    }

    /// The event stream of a request the fast path serves
    fn lane_stream(head: ResponseHead, lane: LaneBody) -> Response<BodyStream<B>> {
        let body = BodyStream {
            frames: Box::pin(lane.frames),
            open: OpenBody::lane(lane.unwritten),
            tell: Tell::Lane(lane.gone),
        };
        Response::stream(head, body)
    }

    /// Answers a request whose body was over [`body_limit`](Self::body_limit) (413, with
    /// the JSON-RPC error a client can read)
    pub async fn oversize(&self) -> Response<BodyStream<B>> {
        let (reply, answer) = chan::oneshot();
        if self.to_actor.try_send(ToActor::Oversize { reply }).is_err() {
            return Response::status(503);
        }
        self.answer(answer).await
    }

    /// Stops the server behind the endpoint: every open response ends and every session
    /// closes; later requests are answered 503 (a stack's graceful shutdown can finish once
    /// its open responses ended)
    pub fn shutdown(&self) {
        let _ = self.stop.try_send(());
    }

    async fn answer(&self, answer: chan::OneReceiver<Answer<B>>) -> Response<BodyStream<B>> {
        let Some(answer) = chan::reply(answer).await else {
            return Response::status(503);
        };
        match answer {
            Answer::Complete(response) => Response::whole(response),
            Answer::Open {
                exchange,
                frames,
                unwritten,
            } => {
                let mut body = BodyStream {
                    frames: Box::pin(frames),
                    open: OpenBody::new(exchange, unwritten),
                    tell: Tell::Actor(self.to_actor.clone()),
                };
                loop {
                    let got = body.frames.recv().await.map_or(Got::Closed, Got::Piece);
                    if let Some(head) = body.open.head(got) {
                        return Response::stream(head, body);
                    }
                    if body.open.ended() {
                        return Response::status(503);
                    }
                }
            }
        }
    }
}

/// The endpoint's answer to one request; `S` is the body stream of the binding (an async
/// [`BodyStream`] here, an iterator in the blocking binding)
#[derive(Debug)]
#[non_exhaustive]
pub struct Response<S> {
    /// The status code
    pub status: u16,
    /// The header fields, `Content-Type` included (the framing ones, `Content-Length` or
    /// `Transfer-Encoding`, are the stack's)
    pub headers: Vec<(&'static str, String)>,
    /// The body
    pub body: Body<S>,
}

impl<S> Response<S> {
    /// A whole response of the core's
    pub fn whole(response: HttpResponse) -> Self {
        Self {
            status: response.status,
            headers: response.headers,
            body: Body::Whole(response.body),
        }
    }

    /// An empty response with `status` (503 when the server is gone)
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Whole(Vec::new()),
        }
    }

    /// An open response: its head, and the stream of its body
    pub fn stream(head: ResponseHead, body: S) -> Self {
        Self {
            status: head.status,
            headers: head.headers,
            body: Body::Stream(body),
        }
    }
}

/// A response's body
#[derive(Debug)]
#[non_exhaustive]
pub enum Body<S> {
    /// All of it (send it with its `Content-Length`)
    Whole(Vec<u8>),
    /// Pieces as they come (write and flush each one; chunked on HTTP/1.1)
    Stream(S),
}

/// Gathers the pieces queued now (`try_next`, until it is empty) into `out` as HTTP/1.1
/// chunks, the last chunk too when the body ended: what a hand-framed connection writes next
pub fn gather(mut try_next: impl FnMut() -> Next, out: &mut Vec<u8>) -> Then {
    loop {
        match try_next() {
            Next::Piece(data) => crate::h1::push_chunk(out, &data),
            Next::Empty => return Then::More,
            Next::End => {
                out.extend_from_slice(crate::h1::LAST_CHUNK);
                return Then::Ended;
            }
            Next::Dropped => return Then::Dropped,
        }
    }
}

/// The body of an open response: pieces as the server writes them, until it ends it
///
/// Dropped before its end (the client went away), it tells the server. A [`Dropped`] error
/// means the server gave the response up because its client stopped reading: close the
/// connection rather than end the body cleanly.
pub struct BodyStream<B: AsRef<[u8]> + Send + 'static> {
    frames: Pin<Box<Receiver<Piece>>>,
    open: OpenBody,
    tell: Tell<B>,
}

/// Whom a body dropped before its end tells
enum Tell<B: AsRef<[u8]> + Send + 'static> {
    /// The actor, of the exchange
    Actor(Sender<ToActor<B>>),
    /// The fast path's task (dropping the sender is the message)
    Lane(#[allow(dead_code)] chan::OneSender<()>),
}

impl<B: AsRef<[u8]> + Send + 'static> std::fmt::Debug for BodyStream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyStream")
            .field("open", &self.open)
            .finish_non_exhaustive()
    }
}

/// The server gave an open response up: its client stopped reading (more than
/// [`HttpConfig::max_unwritten`] waited for it); close the connection
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the client stopped reading the response")]
pub struct Dropped;

/// What [`BodyStream::try_next`] found
#[derive(Debug)]
pub enum Next {
    /// A piece to write
    Piece(Vec<u8>),
    /// Nothing is queued now
    Empty,
    /// The body ended cleanly
    End,
    /// The server gave the response up ([`Dropped`])
    Dropped,
}

impl<B: AsRef<[u8]> + Send + 'static> BodyStream<B> {
    /// The next piece, once it comes; `None` at the end
    ///
    /// # Errors
    /// [`Dropped`]: close the connection.
    pub async fn next(&mut self) -> Option<Result<Vec<u8>, Dropped>> {
        std::future::poll_fn(|cx| self.poll_piece(cx)).await
    }

    /// [`next`](Self::next) as a poll (for a body type's `poll_frame`)
    pub fn poll_piece(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Vec<u8>, Dropped>>> {
        loop {
            let got = match chan::poll_recv(self.frames.as_mut(), cx) {
                Poll::Ready(received) => received.map_or(Got::Closed, Got::Piece),
                Poll::Pending => return Poll::Pending,
            };
            if let Some(next) = self.open.next(got) {
                return Poll::Ready(next.item());
            }
        }
    }

    /// The next piece if one is queued now (to gather what is queued into one write)
    pub fn try_next(&mut self) -> Next {
        loop {
            let got = match self.frames.try_recv() {
                Ok(piece) => Got::Piece(piece),
                Err(async_channel::TryRecvError::Empty) => Got::Nothing,
                Err(async_channel::TryRecvError::Closed) => Got::Closed,
            };
            if let Some(next) = self.open.next(got) {
                return next;
            }
        }
    }
}

/// What an open body's channel gave its reader
#[derive(Debug)]
pub enum Got {
    /// A piece
    Piece(Piece),
    /// Nothing yet (nothing queued, or the wait timed out)
    Nothing,
    /// The channel closed: the body ended, or the server gave it up
    Closed,
}

/// The sans-IO side of an open response's body, whatever channel brings its pieces (the
/// async [`BodyStream`]; the blocking binding's iterator): what the channel gave means for
/// the writer ([`head`](Self::head), then [`next`](Self::next)), and whether dropping the
/// body must tell the server ([`abandoned`](Self::abandoned))
#[derive(Debug)]
pub struct OpenBody {
    unwritten: Unwritten,
    exchange: Option<ExchangeId>,
    ended: bool,
}

impl OpenBody {
    /// The body of `exchange`, whose pieces count in `unwritten`
    pub fn new(exchange: ExchangeId, unwritten: Unwritten) -> Self {
        Self {
            unwritten,
            exchange: Some(exchange),
            ended: false,
        }
    }

    /// The body of a request the fast path serves (its task hears of the client leaving
    /// on its own)
    pub fn lane(unwritten: Unwritten) -> Self {
        Self {
            unwritten,
            exchange: None,
            ended: false,
        }
    }

    /// Before the response starts (its head always comes first): the head once it came;
    /// `None` for anything else, and the body [`ended`](Self::ended) once the channel
    /// closed (answer 503 then)
    pub fn head(&mut self, got: Got) -> Option<ResponseHead> {
        match got {
            Got::Piece(Piece::Head(head)) => Some(head),
            Got::Piece(piece) => {
                self.unwritten.taken(&piece);
                None
            }
            Got::Nothing => None,
            Got::Closed => {
                self.ended = true;
                None
            }
        }
    }

    /// What the writer gets for what the channel gave; `None`: receive again
    pub fn next(&mut self, got: Got) -> Option<Next> {
        match got {
            Got::Piece(piece) => {
                self.unwritten.taken(&piece);
                match piece {
                    Piece::Body(data) => Some(Next::Piece(data)),
                    Piece::Head(_) => None,
                }
            }
            Got::Nothing => Some(Next::Empty),
            Got::Closed => {
                self.ended = true;
                Some(if self.unwritten.dropped() {
                    Next::Dropped
                } else {
                    Next::End
                })
            }
        }
    }

    /// The channel closed: nothing more comes
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Dropped before its end (the client went away): the exchange to tell the server about
    pub fn abandoned(&self) -> Option<ExchangeId> {
        self.exchange.filter(|_| !self.ended)
    }
}

impl Next {
    /// As a stream's item: a piece, the end (`None`), or [`Dropped`] (a reader that waits
    /// for the next piece never gets `Empty`)
    pub fn item(self) -> Option<Result<Vec<u8>, Dropped>> {
        match self {
            Self::Piece(data) => Some(Ok(data)),
            Self::Dropped => Some(Err(Dropped)),
            Self::Empty | Self::End => None,
        }
    }
}

impl<B: AsRef<[u8]> + Send + 'static> futures_lite::Stream for BodyStream<B> {
    type Item = Result<Vec<u8>, Dropped>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_piece(cx)
    }
}

impl<B: AsRef<[u8]> + Send + 'static> Drop for BodyStream<B> {
    fn drop(&mut self) {
        if let (Some(exchange), Tell::Actor(to_actor)) = (self.open.abandoned(), &self.tell) {
            let _ = to_actor.try_send(ToActor::Closed(exchange));
        }
    }
}
