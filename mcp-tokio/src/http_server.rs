//! Streamable HTTP serving: hyper owns the sockets, one actor task owns the
//! [`HttpServer`] rules and every session behind them (no lock around the core)
//!
//! Each hyper connection task reads a request (the body up to the core's
//! [`HttpConfig::max_body_size`]) and hands it to the actor with a channel for the answer.
//! The actor feeds [`HttpServer::handle_request`], writes what
//! [`HttpServer::poll_output`] yields to each exchange's channel, runs the application on
//! [`HttpServer::poll_event`] with the same dispatcher and [`Context`](crate::Context) as
//! stdio, tells the core when a client goes away ([`HttpServer::handle_closed`]), and
//! sleeps until [`HttpServer::poll_timeout`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{BuildHasher, RandomState};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use mcp_core::http::{
    ExchangeId, HttpConfig, HttpResponse, HttpServer, Output, Reply, ResponseHead, SessionIdSource,
    SessionKey, session_id_from_bytes,
};
use mcp_core::{Event, ServerConfig};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::driver::{self, ClientOptions, Dispatch, HandlerRx, Handlers, Peer};

/// A running HTTP server: its address, and the way to stop it
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl HttpServerHandle {
    /// The address the server listens on (with the port the OS chose for port 0)
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, ends every open response and session, and waits (up to a few
    /// seconds) for the connections to finish
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Waits until the server stops (it runs until [`shutdown`](Self::shutdown))
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts serving `config`'s sessions with `dispatch` at `addr`
pub(crate) async fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server_config: Arc<ServerConfig>,
    dispatch: Arc<dyn Dispatch>,
    tools: Vec<mcp_core::schema::Tool>,
    protection: Option<crate::auth::Protection>,
) -> io::Result<HttpServerHandle> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let limit = http_config.max_body_size;
    let mut http = HttpServer::new(Arc::new(http_config), server_config, driver::now());
    http.anchor_wall_clock(driver::now(), driver::unix_ms());
    for tool in &tools {
        http.set_tool(tool);
    }
    let (to_actor, from_conns) = mpsc::unbounded_channel();
    let (handlers, handler_rx) = Handlers::channel();
    let (stop_actor, actor_stop) = oneshot::channel();
    let actor = Actor {
        http,
        dispatch,
        peers: HashMap::new(),
        handlers,
        exchanges: HashMap::new(),
        ids: Ids::new(),
        options: ClientOptions::default(),
    };
    let actor = tokio::spawn(actor.run(from_conns, handler_rx, actor_stop));
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let graceful = GracefulShutdown::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let to_actor = to_actor.clone();
                    let protection = protection.clone();
                    let service = service_fn(move |req| {
                        exchange(req, to_actor.clone(), limit, protection.clone())
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        let _ = conn.await;
                    });
                }
                _ = &mut stopped => break,
            }
        }
        drop(listener);
        // The actor ends every open response first, so the connections can finish.
        let _ = stop_actor.send(());
        let _ = actor.await;
        let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    });
    Ok(HttpServerHandle {
        addr,
        stop: Some(stop),
        task,
    })
}

/// From the connection tasks to the actor
enum ToActor {
    Request {
        method: String,
        headers: Vec<(String, String)>,
        body: Bytes,
        reply: oneshot::Sender<Answer>,
    },
    /// The body was larger than the limit
    Oversize { reply: oneshot::Sender<Answer> },
    /// The client went away before the response ended
    Closed(ExchangeId),
}

/// The actor's answer to a request
enum Answer {
    Complete(HttpResponse),
    Open {
        exchange: ExchangeId,
        frames: mpsc::UnboundedReceiver<Piece>,
    },
}

/// A piece of an open response; the channel closing is its end
enum Piece {
    Head(ResponseHead),
    Body(Vec<u8>),
}

/// Session ids from the OS-seeded SipHash keys of a `RandomState`, over a counter
struct Ids {
    keys: [RandomState; 2],
    counter: u64,
}

impl Ids {
    fn new() -> Self {
        Self {
            keys: [RandomState::new(), RandomState::new()],
            counter: 0,
        }
    }
}

impl SessionIdSource for Ids {
    fn next_session_id(&mut self) -> String {
        self.counter += 1;
        let hi = self.keys[0].hash_one(self.counter);
        let lo = self.keys[1].hash_one(self.counter);
        session_id_from_bytes(((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes())
    }
}

struct Actor {
    http: HttpServer,
    dispatch: Arc<dyn Dispatch>,
    peers: HashMap<SessionKey, Peer>,
    handlers: Handlers,
    exchanges: HashMap<ExchangeId, mpsc::UnboundedSender<Piece>>,
    ids: Ids,
    options: ClientOptions,
}

impl Actor {
    async fn run(
        mut self,
        mut conns: mpsc::UnboundedReceiver<ToActor>,
        mut handler_rx: HandlerRx,
        mut stop: oneshot::Receiver<()>,
    ) {
        loop {
            self.pump();
            let deadline = self.http.poll_timeout().map(Instant::from_std);
            tokio::select! {
                msg = conns.recv() => match msg {
                    Some(msg) => self.on_conn(msg),
                    None => break,
                },
                Some((key, msg)) = handler_rx.recv() => {
                    if let Some(session) = self.http.session_mut(key) {
                        let peer = self.peers.entry(key).or_insert_with(|| Peer::new(None));
                        peer.on_handler(session, msg);
                    }
                }
                () = driver::sleep_until(deadline) => self.http.handle_timeout(driver::now()),
                _ = &mut stop => break,
            }
        }
        // Shutting down: every open response ends (its channel closes), handlers stop.
        self.exchanges.clear();
        for peer in self.peers.values_mut() {
            peer.abort_all();
        }
    }

    fn on_conn(&mut self, msg: ToActor) {
        match msg {
            ToActor::Request {
                method,
                headers,
                body,
                reply,
            } => {
                let reply_to = reply;
                let reply = self.http.handle_request(
                    driver::now(),
                    &method,
                    &headers,
                    &body,
                    &mut self.ids,
                );
                match reply {
                    Reply::Complete(response) => {
                        let _ = reply_to.send(Answer::Complete(response));
                    }
                    Reply::Open(exchange) => {
                        let (tx, frames) = mpsc::unbounded_channel();
                        if reply_to.send(Answer::Open { exchange, frames }).is_ok() {
                            self.exchanges.insert(exchange, tx);
                        } else {
                            self.http.handle_closed(driver::now(), exchange);
                        }
                    }
                    _ => {}
                }
            }
            ToActor::Oversize { reply } => {
                let _ = reply.send(Answer::Complete(self.http.reject_oversize()));
            }
            ToActor::Closed(exchange) => {
                self.exchanges.remove(&exchange);
                self.http.handle_closed(driver::now(), exchange);
            }
        }
    }

    /// Runs the application and writes the responses until both are quiet
    fn pump(&mut self) {
        loop {
            let mut busy = false;
            while let Some((key, event)) = self.http.poll_event() {
                busy = true;
                let closed = matches!(event, Event::Closed { .. });
                if let Some(session) = self.http.session_mut(key) {
                    let peer = self.peers.entry(key).or_insert_with(|| Peer::new(None));
                    let handlers = self.handlers.for_session(key);
                    peer.on_event(
                        session,
                        event,
                        Some(&self.dispatch),
                        &self.options,
                        &handlers,
                    );
                }
                if closed && let Some(mut peer) = self.peers.remove(&key) {
                    peer.abort_all();
                }
            }
            while let Some(output) = self.http.poll_output() {
                busy = true;
                match output {
                    Output::Head { exchange, head } => {
                        if let Some(tx) = self.exchanges.get(&exchange) {
                            let _ = tx.send(Piece::Head(head));
                        }
                    }
                    Output::Body { exchange, data } => {
                        if let Some(tx) = self.exchanges.get(&exchange) {
                            let _ = tx.send(Piece::Body(data));
                        }
                    }
                    Output::End { exchange } => {
                        self.exchanges.remove(&exchange);
                    }
                    _ => {}
                }
            }
            if !busy {
                return;
            }
        }
    }
}

/// One HTTP exchange on a connection task
async fn exchange(
    req: Request<Incoming>,
    to_actor: mpsc::UnboundedSender<ToActor>,
    limit: usize,
    protection: Option<crate::auth::Protection>,
) -> Result<Response<ResponseBody>, Infallible> {
    let method = req.method().as_str().to_owned();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    if let Some(protection) = protection
        && let Some((status, fields, body)) =
            protection.check(&method, req.uri().path(), &headers).await
    {
        let mut builder = Response::builder().status(status);
        for (name, value) in &fields {
            builder = builder.header(name, value);
        }
        let body = ResponseBody::Full(Some(Bytes::from(body)));
        return Ok(builder.body(body).unwrap_or_else(|_| plain(500)));
    }
    let (reply, answer) = oneshot::channel();
    let msg = match Limited::new(req.into_body(), limit).collect().await {
        Ok(body) => ToActor::Request {
            method,
            headers,
            body: body.to_bytes(),
            reply,
        },
        Err(e) if e.is::<http_body_util::LengthLimitError>() => ToActor::Oversize { reply },
        // The client broke off the body: nobody reads the answer.
        Err(_) => return Ok(plain(400)),
    };
    if to_actor.send(msg).is_err() {
        return Ok(plain(503));
    }
    let Ok(answer) = answer.await else {
        return Ok(plain(503));
    };
    match answer {
        Answer::Complete(response) => {
            let mut builder = Response::builder().status(response.status);
            for (name, value) in &response.headers {
                builder = builder.header(*name, value.as_str());
            }
            let body = ResponseBody::Full(Some(Bytes::from(response.body)));
            Ok(builder.body(body).unwrap_or_else(|_| plain(500)))
        }
        Answer::Open { exchange, frames } => {
            let mut stream = Streaming {
                frames,
                to_actor,
                exchange,
                ended: false,
            };
            let Some(Piece::Head(head)) = stream.frames.recv().await else {
                stream.ended = true;
                return Ok(plain(503));
            };
            let mut builder = Response::builder().status(head.status);
            for (name, value) in &head.headers {
                builder = builder.header(*name, value.as_str());
            }
            Ok(builder
                .body(ResponseBody::Stream(stream))
                .unwrap_or_else(|_| plain(500)))
        }
    }
}

fn plain(status: u16) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::Full(None));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response
}

/// A response body: whole, or the pieces of an open exchange
enum ResponseBody {
    Full(Option<Bytes>),
    Stream(Streaming),
}

/// The body of an open exchange; dropped before its end, it tells the actor the client went
/// away
struct Streaming {
    frames: mpsc::UnboundedReceiver<Piece>,
    to_actor: mpsc::UnboundedSender<ToActor>,
    exchange: ExchangeId,
    ended: bool,
}

impl Drop for Streaming {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.to_actor.send(ToActor::Closed(self.exchange));
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Full(body) => Poll::Ready(body.take().map(|b| Ok(Frame::data(b)))),
            Self::Stream(stream) => loop {
                match stream.frames.poll_recv(cx) {
                    Poll::Ready(Some(Piece::Body(data))) => {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(data)))));
                    }
                    Poll::Ready(Some(Piece::Head(_))) => {}
                    Poll::Ready(None) => {
                        stream.ended = true;
                        return Poll::Ready(None);
                    }
                    Poll::Pending => return Poll::Pending,
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Self::Full(body) => {
                hyper::body::SizeHint::with_exact(body.as_ref().map_or(0, |b| b.len() as u64))
            }
            Self::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}
