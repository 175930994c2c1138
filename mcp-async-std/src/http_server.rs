//! Streamable HTTP serving: a task per connection frames HTTP/1.1 ([`crate::h1`]), one
//! actor task (the kernel's, `mcp_sansio_shared::http_server`) owns the [`HttpServer`] rules
//! and every session behind them (no lock around the core)
//!
//! Each connection task reads a request (the body up to the core's
//! [`HttpConfig::max_body_size`]) and hands it to the actor with a channel for the answer.
//! The actor feeds [`HttpServer::handle_request`], writes what
//! [`HttpServer::poll_output`] yields to each exchange's channel, runs the application on
//! [`HttpServer::poll_event`] with the same dispatcher and [`Context`](crate::Context) as
//! stdio, tells the core when a client goes away ([`HttpServer::handle_closed`]), and
//! sleeps until [`HttpServer::poll_timeout`].

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use async_channel::{Receiver, Sender};
use async_net::{TcpListener, TcpStream};
use futures_lite::FutureExt;
use mcp_sansio::http::{ExchangeId, HttpConfig, HttpResponse, Principal, Source};
use mcp_sansio_shared::chan;
use mcp_sansio_shared::http::Piece;
use mcp_sansio_shared::http_server::Actor;
use mcp_sansio_shared::server::ServerCore;
use smol::Task;

#[cfg(feature = "auth")]
pub(crate) use crate::auth::Protection;
/// Without the `auth` feature no server is protected: there is no `Protection` to give
#[cfg(not(feature = "auth"))]
pub(crate) type Protection = mcp_sansio_shared::http::Unprotected;
use crate::h1::{self, Body, Conn, Framing, ReadError};
use crate::runtime::AsyncStd;

/// How long shutdown waits for open connections to finish
const GRACE: Duration = Duration::from_secs(5);
/// How long a kept-alive connection may wait for its next request
const IDLE: Duration = Duration::from_secs(60);
/// How long a request's head and body may take to arrive once it starts
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long writing one piece of a response may take (a client that stopped reading)
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a protected server's token verifier may take (then 503)
#[cfg(feature = "auth")]
const VERIFY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a protected server answers instead of serving the request (the metadata, or a
/// refusal of a missing or bad token) as `Err`; else the principal of the request's
/// verified token (`None` on a server without protection)
#[cfg(feature = "auth")]
async fn denied(
    protection: Option<&Protection>,
    method: &str,
    path: &str,
    headers: &[(String, String)],
) -> Result<Option<Principal>, HttpResponse> {
    let Some(protection) = protection else {
        return Ok(None);
    };
    let check = protection.admit(method, path, headers);
    match h1::within(VERIFY_TIMEOUT, check).await {
        Some(verdict) => verdict.map(Some),
        None => Err(HttpResponse::empty(503)),
    }
}

/// Without the `auth` feature no server is protected
#[cfg(not(feature = "auth"))]
async fn denied(
    protection: Option<&Protection>,
    _: &str,
    _: &str,
    _: &[(String, String)],
) -> Result<Option<Principal>, HttpResponse> {
    match protection {
        Some(never) => match *never {},
        None => Ok(None),
    }
}

/// A running HTTP server: its address, and the way to stop it
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    stop: Option<Sender<()>>,
    task: Option<Task<()>>,
}

impl HttpServerHandle {
    /// The address the server listens on (with the port the OS chose for port 0)
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, ends every open response and session, and waits (up to a few
    /// seconds) for the connections to finish
    pub async fn shutdown(mut self) {
        self.stop.take();
        if let Some(task) = self.task.take() {
            task.await;
        }
    }

    /// Waits until the server stops (it runs until [`shutdown`](Self::shutdown))
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            task.await;
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        // Closing the stop channel stops the server; it winds down in the background.
        self.stop.take();
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

/// What woke the accept loop
enum Accepted {
    Conn(io::Result<(TcpStream, SocketAddr)>),
    Stop,
}

/// Starts serving `server`'s sessions at `addr`
pub(crate) async fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server: &ServerCore<AsyncStd>,
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
    let actor = smol::spawn(run);
    // `stop` closing (the handle's sender dropped) stops the accept loop and, through
    // `draining`, asks every connection to finish; `alive` closes when the last has.
    let (stop, stopped) = async_channel::bounded::<()>(1);
    let (alive, all_done) = async_channel::bounded::<()>(1);
    let task = smol::spawn(async move {
        loop {
            let accepted = async { Accepted::Conn(listener.accept().await) }
                .or(async {
                    let _ = stopped.recv().await;
                    Accepted::Stop
                })
                .await;
            let (stream, peer) = match accepted {
                Accepted::Conn(Ok(accepted)) => accepted,
                Accepted::Conn(Err(_)) => continue,
                Accepted::Stop => break,
            };
            let to_actor = to_actor.clone();
            let draining = stopped.clone();
            let alive = alive.clone();
            let protection = protection.clone();
            smol::spawn(async move {
                connection(stream, peer, to_actor, limit, draining, protection).await;
                drop(alive);
            })
            .detach();
        }
        drop(listener);
        drop(alive);
        // The actor ends every open response first, so the connections can finish.
        let _ = stop_actor.try_send(());
        actor.await;
        let _ = all_done
            .recv()
            .or(async {
                async_io::Timer::after(GRACE).await;
                Ok(())
            })
            .await;
    });
    Ok(HttpServerHandle {
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}

type ToActor = mcp_sansio_shared::http_server::ToActor<Vec<u8>>;
type Answer = mcp_sansio_shared::http_server::Answer<Vec<u8>>;

/// A request read off a connection
enum Received {
    Request {
        method: String,
        /// The path of the request target (without the query)
        path: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        keep_alive: bool,
    },
    /// The body is larger than the limit (the connection closes after the answer)
    Oversize,
    /// Not a request we can read: answer this status and close
    Bad(u16),
    /// The client went away
    Gone,
}

/// Reads one request: its head, and its body up to `limit`
async fn receive(conn: &mut Conn<TcpStream>, limit: usize) -> Received {
    let head = match conn.read_request().await {
        Ok(Some(head)) => head,
        Ok(None) | Err(ReadError::Io(_)) => return Received::Gone,
        Err(ReadError::HeadTooLarge) => return Received::Bad(431),
        Err(ReadError::Malformed(_)) => return Received::Bad(400),
    };
    let Ok(framing) = h1::request_framing(&head.headers) else {
        return Received::Bad(400);
    };
    if let Framing::Length(n) = framing
        && n > limit as u64
    {
        return Received::Oversize;
    }
    let continue_expected =
        h1::header(&head.headers, "expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
    if continue_expected
        && framing != Framing::Length(0)
        && conn.send(b"HTTP/1.1 100 Continue\r\n\r\n").await.is_err()
    {
        return Received::Gone;
    }
    let mut body = Body::new(framing);
    match conn.body_to_end(&mut body, limit).await {
        Ok(Some(body)) => Received::Request {
            keep_alive: h1::keep_alive(head.http11, &head.headers),
            path: head.target.split('?').next().unwrap_or_default().to_owned(),
            method: head.method,
            headers: head.headers,
            body,
        },
        Ok(None) => Received::Oversize,
        Err(ReadError::Io(_)) => Received::Gone,
        Err(_) => Received::Bad(400),
    }
}

/// What woke a connection waiting for its next request
enum Idle {
    Read(io::Result<usize>),
    Stop,
}

/// Serves the requests of one connection, one after the other, until it closes
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    to_actor: Sender<ToActor>,
    limit: usize,
    draining: Receiver<()>,
    protection: Option<Protection>,
) {
    let mut conn = Conn::new(stream);
    loop {
        if !conn.has_buffered() {
            // Idle between requests: shutdown or the idle timeout close the connection.
            let woke = async { Idle::Read(conn.fill().await) }
                .or(async {
                    let _ = draining.recv().await;
                    Idle::Stop
                })
                .or(async {
                    async_io::Timer::after(IDLE).await;
                    Idle::Stop
                })
                .await;
            if !matches!(woke, Idle::Read(Ok(n)) if n > 0) {
                return;
            }
        }
        let Some(received) = h1::within(READ_TIMEOUT, receive(&mut conn, limit)).await else {
            let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(408))).await;
            return;
        };
        let (reply, answer) = chan::oneshot();
        let (msg, keep_alive) = match received {
            Received::Request {
                method,
                path,
                headers,
                body,
                keep_alive,
            } => {
                // A protected server answers the metadata and refuses bad tokens itself.
                let principal = match denied(protection.as_ref(), &method, &path, &headers).await {
                    Ok(principal) => principal,
                    Err(response) => {
                        if !send_whole(&mut conn, &response, !keep_alive).await || !keep_alive {
                            return;
                        }
                        continue;
                    }
                };
                let msg = ToActor::Request {
                    source: Source::from_peer(peer).with_principal(principal),
                    method,
                    headers,
                    body,
                    reply,
                };
                (msg, keep_alive)
            }
            Received::Oversize => (ToActor::Oversize { reply }, false),
            Received::Bad(status) => {
                let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(status))).await;
                return;
            }
            Received::Gone => return,
        };
        if to_actor.try_send(msg).is_err() {
            let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(503))).await;
            return;
        }
        // The core answers every request at once: whole, or as an open exchange.
        let Some(answer) = chan::reply(answer).await else {
            let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(503))).await;
            return;
        };
        let reusable = match answer {
            Answer::Complete(response) => send_whole(&mut conn, &response, !keep_alive).await,
            Answer::Open { exchange, frames } => {
                let mut open = OpenExchange {
                    to_actor: to_actor.clone(),
                    exchange,
                    ended: false,
                };
                open.stream(&mut conn, &frames, !keep_alive).await
            }
        };
        if !reusable || !keep_alive {
            return;
        }
    }
}

/// Writes a whole response; `true` when it went out
async fn send_whole(conn: &mut Conn<TcpStream>, response: &HttpResponse, close: bool) -> bool {
    let length = Some(response.body.len());
    let bytes = match head(response.status, &response.headers, length, close) {
        Ok(mut bytes) => {
            bytes.extend_from_slice(&response.body);
            bytes
        }
        Err(_) => simple(500),
    };
    matches!(
        h1::within(WRITE_TIMEOUT, conn.send(&bytes)).await,
        Some(Ok(()))
    )
}

/// What a streaming connection waits for
enum Next {
    Piece(Piece),
    /// The actor ended the response
    End,
    /// The client closed the connection
    Gone,
}

/// The next piece of an open response, watching the connection for the client leaving
async fn next(conn: &mut Conn<TcpStream>, frames: &Receiver<Piece>) -> Next {
    async { frames.recv().await.map_or(Next::End, Next::Piece) }
        .or(async {
            loop {
                if conn.buffered() >= h1::MAX_HEAD {
                    // A client pipelining this much waits for the response first.
                    std::future::pending::<()>().await;
                }
                match conn.fill().await {
                    Ok(0) | Err(_) => return Next::Gone,
                    Ok(_) => {}
                }
            }
        })
        .await
}

/// An open exchange on its connection; dropped before its end, it tells the actor the
/// client went away
struct OpenExchange {
    to_actor: Sender<ToActor>,
    exchange: ExchangeId,
    ended: bool,
}

impl OpenExchange {
    /// Writes the head and every piece (chunked, flushed per piece) until the actor ends
    /// the response; `true` when it ended cleanly
    async fn stream(
        &mut self,
        conn: &mut Conn<TcpStream>,
        frames: &Receiver<Piece>,
        close: bool,
    ) -> bool {
        let head = loop {
            match next(conn, frames).await {
                Next::Piece(Piece::Head(head)) => break head,
                Next::Piece(Piece::Body(_)) => {}
                Next::End => {
                    self.ended = true;
                    let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(503))).await;
                    return false;
                }
                Next::Gone => return false,
            }
        };
        let Ok(bytes) = self::head(head.status, &head.headers, None, close) else {
            return false;
        };
        if !matches!(
            h1::within(WRITE_TIMEOUT, conn.send(&bytes)).await,
            Some(Ok(()))
        ) {
            return false;
        }
        loop {
            match next(conn, frames).await {
                Next::Piece(Piece::Body(data)) => {
                    let sent = h1::within(WRITE_TIMEOUT, conn.send_chunk(&data)).await;
                    if !matches!(sent, Some(Ok(()))) {
                        return false;
                    }
                }
                Next::Piece(Piece::Head(_)) => {}
                Next::End => {
                    self.ended = true;
                    let sent = h1::within(WRITE_TIMEOUT, conn.send_last_chunk()).await;
                    return matches!(sent, Some(Ok(())));
                }
                Next::Gone => return false,
            }
        }
    }
}

impl Drop for OpenExchange {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.to_actor.try_send(ToActor::Closed(self.exchange));
        }
    }
}

/// A response head: the core's fields, then the framing (`Content-Length` for a whole
/// body, chunked for an open one) and `Connection: close` when the connection ends
fn head(
    status: u16,
    headers: &[(&'static str, String)],
    length: Option<usize>,
    close: bool,
) -> Result<Vec<u8>, String> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", h1::reason(status));
    for (name, value) in headers {
        let framing = ["content-length", "transfer-encoding", "connection"];
        if !framing.iter().any(|f| name.eq_ignore_ascii_case(f)) {
            h1::push_field(&mut head, name, value)?;
        }
    }
    match length {
        Some(n) => h1::push_field(&mut head, "Content-Length", &n.to_string())?,
        None => h1::push_field(&mut head, "Transfer-Encoding", "chunked")?,
    }
    if close {
        h1::push_field(&mut head, "Connection", "close")?;
    }
    head.push_str("\r\n");
    Ok(head.into_bytes())
}

/// An empty response that closes the connection
fn simple(status: u16) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        h1::reason(status)
    )
    .into_bytes()
}
