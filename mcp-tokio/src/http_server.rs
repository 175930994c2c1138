//! Streamable HTTP serving: hyper owns the sockets, one actor task (the kernel's,
//! `mcp_sansio_shared::http_server`) owns the [`HttpServer`] rules and every session behind
//! them (no lock around the core)
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
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use mcp_sansio::http::{ExchangeId, HttpConfig, HttpResponse, Source};
use mcp_sansio_shared::chan::{self, Receiver, Sender};
use mcp_sansio_shared::http::{Piece, header_list, response};
use mcp_sansio_shared::http_server::Actor;
use mcp_sansio_shared::server::ServerCore;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::runtime::Tokio;

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

/// Starts serving `server`'s sessions at `addr`
pub(crate) async fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server: &ServerCore<Tokio>,
    protection: Option<Protection>,
) -> io::Result<HttpServerHandle> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let Actor {
        to_actor,
        stop: stop_actor,
        body_limit: limit,
        run,
    } = Actor::new(http_config, server);
    let actor = tokio::spawn(run);
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let graceful = GracefulShutdown::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, peer)) = accepted else { continue };
                    let to_actor = to_actor.clone();
                    let protection = protection.clone();
                    let service = service_fn(move |req| {
                        let source = Source::from_peer(peer);
                        exchange(req, source, to_actor.clone(), limit, protection.clone())
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
        let _ = stop_actor.try_send(());
        let _ = actor.await;
        let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    });
    Ok(HttpServerHandle {
        addr,
        stop: Some(stop),
        task,
    })
}

type ToActor = mcp_sansio_shared::http_server::ToActor<Bytes>;
type Answer = mcp_sansio_shared::http_server::Answer<Bytes>;

/// One HTTP exchange on a connection task
async fn exchange(
    req: Request<Incoming>,
    #[cfg_attr(not(feature = "auth"), allow(unused_mut))] mut source: Source,
    to_actor: Sender<ToActor>,
    limit: usize,
    #[cfg_attr(not(feature = "auth"), allow(unused_variables))] protection: Option<Protection>,
) -> Result<Response<ResponseBody>, Infallible> {
    let method = req.method().as_str().to_owned();
    let headers = header_list(req.headers());
    #[cfg(feature = "auth")]
    if let Some(protection) = protection {
        match protection.admit(&method, req.uri().path(), &headers).await {
            Ok(principal) => source = source.with_principal(Some(principal)),
            Err(denial) => return Ok(whole(denial)),
        }
    }
    let (reply, answer) = chan::oneshot();
    let msg = match Limited::new(req.into_body(), limit).collect().await {
        Ok(body) => ToActor::Request {
            source,
            method,
            headers,
            body: body.to_bytes(),
            reply,
        },
        Err(e) if e.is::<http_body_util::LengthLimitError>() => ToActor::Oversize { reply },
        // The client broke off the body: nobody reads the answer.
        Err(_) => return Ok(plain(400)),
    };
    if to_actor.try_send(msg).is_err() {
        return Ok(plain(503));
    }
    let Some(answer) = chan::reply(answer).await else {
        return Ok(plain(503));
    };
    match answer {
        Answer::Complete(response) => Ok(whole(response)),
        Answer::Open { exchange, frames } => {
            let mut stream = Streaming {
                frames: Box::pin(frames),
                to_actor,
                exchange,
                ended: false,
            };
            let Ok(Piece::Head(head)) = stream.frames.recv().await else {
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
    frames: Pin<Box<Receiver<Piece>>>,
    to_actor: Sender<ToActor>,
    exchange: ExchangeId,
    ended: bool,
}

impl Drop for Streaming {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.to_actor.try_send(ToActor::Closed(self.exchange));
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
                match chan::poll_recv(stream.frames.as_mut(), cx) {
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
