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

use std::convert::Infallible;
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
use mcp_sansio::ServerConfig;
use mcp_sansio::http::{ExchangeId, HttpConfig, HttpResponse};
use mcp_sansio_shared::http::{Channels, Piece, ServerFront, header_list, response};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::driver::{self, ClientOptions, Dispatch, HandlerRx, Handlers, Peer};

#[cfg(feature = "auth")]
pub(crate) use crate::auth::Protection;
/// Without the `auth` feature no server is protected: there is no `Protection` to give
#[cfg(not(feature = "auth"))]
pub(crate) type Protection = mcp_sansio_shared::http::Unprotected;

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
    tools: Vec<mcp_sansio::schema::Tool>,
    protection: Option<Protection>,
) -> io::Result<HttpServerHandle> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let limit = http_config.max_body_size;
    let (to_actor, from_conns) = mpsc::unbounded_channel();
    let (handlers, handler_rx) = Handlers::channel();
    let (stop_actor, actor_stop) = oneshot::channel();
    let app = App {
        dispatch,
        handlers,
        options: ClientOptions::default(),
    };
    let clock = (driver::now(), driver::unix_ms());
    let actor = Actor {
        front: ServerFront::new(http_config, server_config, &tools, app, clock),
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

/// The actor's channels: tokio's
struct Chans;

impl Channels for Chans {
    type Body = Bytes;
    type Reply = oneshot::Sender<Answer>;
    type Frames = mpsc::UnboundedSender<Piece>;
    type FramesRx = mpsc::UnboundedReceiver<Piece>;

    fn reply(reply: Self::Reply, answer: Answer) -> bool {
        reply.send(answer).is_ok()
    }

    fn frames() -> (Self::Frames, Self::FramesRx) {
        mpsc::unbounded_channel()
    }

    fn send(frames: &Self::Frames, piece: Piece) {
        let _ = frames.send(piece);
    }
}

type ToActor = mcp_sansio_shared::http::ToActor<Chans>;
type Answer = mcp_sansio_shared::http::Answer<Chans>;

type App = mcp_sansio_shared::http::PeerApp<driver::Tokio>;

struct Actor {
    front: ServerFront<Chans, Peer>,
}

impl Actor {
    async fn run(
        mut self,
        mut conns: mpsc::UnboundedReceiver<ToActor>,
        mut handler_rx: HandlerRx,
        mut stop: oneshot::Receiver<()>,
    ) {
        let mut timer = driver::Timer::new();
        loop {
            self.front.pump();
            let deadline = self.front.poll_timeout();
            let armed = timer.arm(deadline);
            tokio::select! {
                msg = conns.recv() => match msg {
                    Some(msg) => self.front.on_conn(driver::now(), msg),
                    None => break,
                },
                Some((key, msg)) = handler_rx.recv() => {
                    if let Some((peer, session)) = self.front.peer(key) {
                        peer.on_handler(session, msg);
                    }
                }
                due = timer.wait(deadline), if armed => {
                    if due {
                        self.front.handle_timeout(driver::now());
                    }
                }
                _ = &mut stop => break,
            }
        }
        // Shutting down: every open response ends (its channel closes), handlers stop.
        self.front.end_all();
    }
}

/// One HTTP exchange on a connection task
async fn exchange(
    req: Request<Incoming>,
    to_actor: mpsc::UnboundedSender<ToActor>,
    limit: usize,
    #[cfg_attr(not(feature = "auth"), allow(unused_variables))] protection: Option<Protection>,
) -> Result<Response<ResponseBody>, Infallible> {
    let method = req.method().as_str().to_owned();
    let headers = header_list(req.headers());
    #[cfg(feature = "auth")]
    if let Some(protection) = protection
        && let Some(denial) = protection.admit(&method, req.uri().path(), &headers).await
    {
        return Ok(whole(denial));
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
        Answer::Complete(response) => Ok(whole(response)),
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
            let body = ResponseBody::Stream(stream);
            Ok(response(head.status, &head.headers, body).unwrap_or_else(|_| plain(500)))
        }
    }
}

/// A whole response
fn whole(answer: HttpResponse) -> Response<ResponseBody> {
    let body = ResponseBody::Full(Some(Bytes::from(answer.body)));
    response(answer.status, &answer.headers, body).unwrap_or_else(|_| plain(500))
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
