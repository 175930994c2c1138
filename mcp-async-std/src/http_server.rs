//! Streamable HTTP serving: a task per connection frames HTTP/1.1 ([`crate::h1`]), one
//! actor task (the kernel's, `mcp_sansio_runtime::http_server`) owns the [`HttpServer`] rules
//! and every session behind them (no lock around the core)
//!
//! Each connection task reads a request (the body up to the core's
//! [`HttpConfig::max_body_size`]) and hands it to the actor with a channel for the answer.
//! The actor feeds [`HttpServer::handle_request`], writes what
//! [`HttpServer::poll_output`] yields to each exchange's channel, runs the application on
//! [`HttpServer::poll_event`] with the same dispatcher and [`Context`](crate::Context) as
//! stdio, tells the core when a client goes away ([`HttpServer::handle_closed`]), and
//! sleeps until [`HttpServer::poll_timeout`].
//!
//! The connection edge, by [`HttpConfig`]: every accepted socket gets `TCP_NODELAY`; at most
//! [`HttpConfig::max_connections`] are open at once (the next waits in the listener's
//! backlog); when accepting fails for lack of descriptors the loop pauses
//! [`HttpConfig::accept_backoff`]; each connection follows its [`ReadDeadline`]: a head
//! not complete within `header_read_timeout` or a body not complete within
//! `body_read_timeout` gets 408, a kept-alive connection idle for `keep_alive_timeout`
//! closes. A response's head goes out with the body pieces already queued, in one write.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_channel::{Receiver, Sender};
use async_net::{TcpListener, TcpStream};
use futures_lite::FutureExt;
use mcp_sansio::http::{HttpConfig, HttpResponse, Principal, ReadDeadline, Source};
use mcp_sansio_runtime::endpoint::{self, Body, BodyStream};
use mcp_sansio_runtime::http::{Fields, Then, out_of_resources};
use mcp_sansio_runtime::server::ServerCore;
use smol::Task;

use crate::h1::{self, Conn, Received};
use crate::runtime::AsyncStd;
use mcp_sansio_runtime::http::Gate as Protection;

/// How long shutdown waits for open connections to finish
const GRACE: Duration = Duration::from_secs(5);
/// How long writing one piece of a response may take (a client that stopped reading)
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a protected server's token verifier may take (then 503)
const VERIFY_TIMEOUT: Duration = Duration::from_secs(30);

/// The gate of a protected server, within the verifier's time: the principal of the
/// request's verified token (`None` on a server without protection), or the refusal
async fn denied(
    protection: Option<&Protection>,
    method: &str,
    path: &str,
    headers: &Fields,
) -> Result<Option<Principal>, HttpResponse> {
    if protection.is_none() {
        return Ok(None);
    }
    let check = mcp_sansio_runtime::http::admit(protection, method, path, headers);
    match h1::within(VERIFY_TIMEOUT, check).await {
        Some(verdict) => verdict,
        None => Err(HttpResponse::empty(503)),
    }
}

/// What a TLS server accepts its connections with
#[cfg(feature = "tls")]
pub(crate) type Tls = futures_rustls::TlsAcceptor;
/// Without the `tls` feature no server serves HTTPS: there is no `Tls` to give
#[cfg(not(feature = "tls"))]
pub(crate) type Tls = mcp_sansio_runtime::io::NoTls;

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
    /// A connection slot is free (`false`: the slots are gone, the server stops)
    Slot(bool),
    Conn(io::Result<(TcpStream, SocketAddr)>),
    Stop,
}

/// Starts serving `server`'s sessions at `addr`
pub(crate) async fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server: &ServerCore<AsyncStd>,
    protection: Option<Protection>,
    tls: Option<Tls>,
) -> io::Result<HttpServerHandle> {
    let listener = TcpListener::try_from(mcp_sansio_runtime::http::listener(addr)?)?;
    let addr = listener.local_addr()?;
    let http_config = mcp_sansio_runtime::http::gated(http_config, protection.as_ref());
    let edge = Arc::new(http_config.clone());
    let (endpoint, run) = HttpEndpoint::new(http_config, server);
    let actor = smol::spawn(run);
    // `stop` closing (the handle's sender dropped) stops the accept loop and, through
    // `draining`, asks every connection to finish; `alive` closes when the last has.
    let (stop, stopped) = async_channel::bounded::<()>(1);
    let (alive, all_done) = async_channel::bounded::<()>(1);
    // One token per open connection: beyond `max_connections`, clients wait in the backlog.
    let (slots, freed) = async_channel::bounded::<()>(edge.max_connections.max(1));
    let task = smol::spawn(async move {
        loop {
            let slot = async { Accepted::Slot(slots.send(()).await.is_ok()) }
                .or(async {
                    let _ = stopped.recv().await;
                    Accepted::Stop
                })
                .await;
            if !matches!(slot, Accepted::Slot(true)) {
                break;
            }
            let accepted = async { Accepted::Conn(listener.accept().await) }
                .or(async {
                    let _ = stopped.recv().await;
                    Accepted::Stop
                })
                .await;
            let (stream, peer) = match accepted {
                Accepted::Conn(Ok(accepted)) => accepted,
                Accepted::Conn(Err(e)) => {
                    let _ = freed.try_recv();
                    if out_of_resources(&e) {
                        // Out of descriptors: wait for connections to close (the read
                        // deadlines close the ones that hold them) instead of spinning.
                        let _ = stopped
                            .recv()
                            .or(async {
                                async_io::Timer::after(edge.accept_backoff).await;
                                Ok(())
                            })
                            .await;
                    }
                    continue;
                }
                Accepted::Slot(_) | Accepted::Stop => break,
            };
            let _ = stream.set_nodelay(true);
            let endpoint = endpoint.clone();
            let draining = stopped.clone();
            let alive = alive.clone();
            let protection = protection.clone();
            let edge = Arc::clone(&edge);
            let freed = freed.clone();
            let tls = tls.clone();
            let peer = Peer {
                addr: peer,
                accepted: Instant::now(),
            };
            let open = mcp_sansio_runtime::meter::Open::connection("server", "http");
            smol::spawn(async move {
                let _open = open;
                match tls {
                    None => {
                        connection(stream, peer, &endpoint, &edge, draining, protection).await;
                    }
                    // The handshake is part of the first request's head: it must be done
                    // within the header read timeout (from the accept), holding its
                    // connection slot.
                    #[cfg(feature = "tls")]
                    Some(tls) => {
                        let handshake = h1::within(edge.header_read_timeout, tls.accept(stream));
                        if let Some(Ok(session)) = handshake.await {
                            connection(session, peer, &endpoint, &edge, draining, protection).await;
                        }
                    }
                    #[cfg(not(feature = "tls"))]
                    Some(never) => match never {},
                }
                let _ = freed.try_recv();
                drop(alive);
            })
            .detach();
        }
        drop(listener);
        drop(alive);
        // The actor ends every open response first, so the connections can finish.
        endpoint.shutdown();
        drop(endpoint);
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

use crate::endpoint::HttpEndpoint;

/// A connection's socket (TCP, or a TLS session over it) whose reads fail with `TimedOut`
/// once its deadline passes (the deadlines the shared request reader sets)
struct Timed<S> {
    stream: S,
    deadline: Option<Instant>,
    timer: Option<async_io::Timer>,
}

impl<S> Timed<S> {
    fn new(stream: S) -> Self {
        Self {
            stream,
            deadline: None,
            timer: None,
        }
    }
}

fn set_deadline<S: Io>(conn: &mut Conn<Timed<S>>, deadline: Option<Instant>) {
    let io = conn.io_mut();
    if io.deadline != deadline {
        io.deadline = deadline;
        io.timer = deadline.map(async_io::Timer::at);
    }
}

/// What a connection runs over: TCP, or a TLS session over it
trait Io: futures_lite::AsyncRead + futures_lite::AsyncWrite + Unpin + Send {}

impl<S: futures_lite::AsyncRead + futures_lite::AsyncWrite + Unpin + Send> Io for S {}

impl<S: Io> futures_lite::AsyncRead for Timed<S> {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let std::task::Poll::Ready(read) =
            std::pin::Pin::new(&mut this.stream).poll_read(cx, buf)
        {
            return std::task::Poll::Ready(read);
        }
        if let Some(timer) = &mut this.timer
            && std::pin::Pin::new(timer).poll(cx).is_ready()
        {
            return std::task::Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
        }
        std::task::Poll::Pending
    }
}

impl<S: Io> futures_lite::AsyncWrite for Timed<S> {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_close(cx)
    }
}

/// What woke a connection waiting for its next request
enum Idle {
    Read(io::Result<usize>),
    Stop,
    /// Its deadline passed (the first head's, or the idle one)
    Late,
}

/// Where a connection comes from, and when it was accepted
#[derive(Clone, Copy)]
struct Peer {
    addr: SocketAddr,
    accepted: Instant,
}

/// Serves the requests of one connection, one after the other, until it closes
async fn connection<S: Io>(
    stream: S,
    peer: Peer,
    endpoint: &HttpEndpoint,
    edge: &HttpConfig,
    draining: Receiver<()>,
    protection: Option<Protection>,
) {
    let mut conn = Conn::new(Timed::new(stream));
    // The first head is due `header_read_timeout` after the accept, a TLS handshake included.
    let mut clock = ReadDeadline::accepted(peer.accepted);
    let peer = peer.addr;
    loop {
        if !conn.has_buffered() {
            // Waiting for a request: shutdown or the deadline (the first head's, or the
            // idle one) close the connection.
            let deadline = clock.deadline(edge).unwrap_or_else(Instant::now);
            let woke = async { Idle::Read(conn.fill().await) }
                .or(async {
                    let _ = draining.recv().await;
                    Idle::Stop
                })
                .or(async {
                    async_io::Timer::at(deadline).await;
                    Idle::Late
                })
                .await;
            match woke {
                Idle::Read(Ok(n)) if n > 0 => {}
                Idle::Late => {
                    if let Some(status) = clock.expiry().status() {
                        mcp_sansio_runtime::meter::refused(mcp_sansio_runtime::meter::http_reason(
                            status,
                        ));
                        let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(status))).await;
                    }
                    return;
                }
                _ => return,
            }
        }
        clock.head_started(Instant::now());
        let limit = endpoint.body_limit();
        let received = h1::receive(&mut conn, limit, &mut clock, edge, set_deadline).await;
        let (response, keep_alive) = match received {
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
                        clock.response_written(Instant::now());
                        continue;
                    }
                };
                let source = Source::from_peer(peer).with_principal(principal);
                // A response not decided yet (2026: JSON or an event stream) waits for its
                // head; a client leaving meanwhile drops it, which tells the server.
                let answer = async { Some(endpoint.handle(source, method, headers, body).await) }
                    .or(async {
                        closed(&mut conn).await;
                        None
                    });
                match answer.await {
                    Some(response) => (response, keep_alive),
                    None => return,
                }
            }
            Received::Oversize => (endpoint.oversize().await, false),
            Received::Late => {
                mcp_sansio_runtime::meter::refused("deadline");
                let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(408))).await;
                return;
            }
            Received::Bad(status) => {
                mcp_sansio_runtime::meter::refused(mcp_sansio_runtime::meter::http_reason(status));
                let _ = h1::within(WRITE_TIMEOUT, conn.send(&simple(status))).await;
                return;
            }
            Received::Gone => return,
        };
        // The endpoint answers every request at once: whole, or as an open response.
        let reusable = match response.body {
            Body::Whole(data) => {
                let (status, headers) = (response.status, &response.headers);
                send(&mut conn, status, headers, &data, !keep_alive).await
            }
            Body::Stream(body) => {
                write_open(
                    &mut conn,
                    response.status,
                    &response.headers,
                    body,
                    !keep_alive,
                )
                .await
            }
            _ => false,
        };
        if !reusable || !keep_alive {
            return;
        }
        clock.response_written(Instant::now());
    }
}

/// Writes a whole response; `true` when it went out
async fn send_whole<S: Io>(
    conn: &mut Conn<Timed<S>>,
    response: &HttpResponse,
    close: bool,
) -> bool {
    send(
        conn,
        response.status,
        &response.headers,
        &response.body,
        close,
    )
    .await
}

/// Writes a whole response of `status`, `headers` and `body`; `true` when it went out
async fn send<S: Io>(
    conn: &mut Conn<Timed<S>>,
    status: u16,
    headers: &[(&'static str, String)],
    body: &[u8],
    close: bool,
) -> bool {
    let bytes = match head(status, headers, Some(body.len()), close) {
        Ok(mut bytes) => {
            bytes.extend_from_slice(body);
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
enum Wait {
    Piece(Vec<u8>),
    /// The server ended the response
    End,
    /// The server gave the response up (its client stopped reading)
    Dropped,
    /// The client closed the connection
    Gone,
}

/// The next piece of an open response, watching the connection for the client leaving
async fn next<S: Io>(conn: &mut Conn<Timed<S>>, body: &mut BodyStream<Vec<u8>>) -> Wait {
    async {
        match body.next().await {
            Some(Ok(data)) => Wait::Piece(data),
            None => Wait::End,
            Some(Err(_)) => Wait::Dropped,
        }
    }
    .or(async {
        closed(conn).await;
        Wait::Gone
    })
    .await
}

/// Returns once the client closed the connection (what it pipelines meanwhile stays
/// buffered for the next request)
async fn closed<S: Io>(conn: &mut Conn<Timed<S>>) {
    loop {
        if conn.buffered() >= h1::MAX_HEAD {
            // A client pipelining this much waits for the response first.
            std::future::pending::<()>().await;
        }
        match conn.fill().await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Writes an open response: the head, then every piece (chunked, flushed per wake-up) until
/// the server ends it; `true` when it ended cleanly. Returning early drops `body`, which
/// tells the server the client went away.
async fn write_open<S: Io>(
    conn: &mut Conn<Timed<S>>,
    status: u16,
    headers: &[(&'static str, String)],
    mut body: BodyStream<Vec<u8>>,
    close: bool,
) -> bool {
    let Ok(mut out) = head(status, headers, None, close) else {
        return false;
    };
    // The head goes out with the pieces already queued behind it, in one write; then each
    // wake-up writes (and flushes) what is queued at once.
    let mut then = queued(&mut body, &mut out);
    loop {
        if then == Then::Dropped {
            return false;
        }
        if !out.is_empty() {
            let sent = h1::within(WRITE_TIMEOUT, conn.send(&out)).await;
            if !matches!(sent, Some(Ok(()))) {
                return false;
            }
            out.clear();
        }
        if then == Then::Ended {
            return true;
        }
        then = match next(conn, &mut body).await {
            Wait::Piece(data) => {
                h1::push_chunk(&mut out, &data);
                queued(&mut body, &mut out)
            }
            Wait::End => {
                out.extend_from_slice(h1::LAST_CHUNK);
                Then::Ended
            }
            Wait::Dropped => Then::Dropped,
            Wait::Gone => return false,
        };
    }
}

/// Takes the pieces already queued (the end too) as chunks
fn queued(body: &mut BodyStream<Vec<u8>>, out: &mut Vec<u8>) -> Then {
    endpoint::gather(|| body.try_next(), out)
}

/// A response head: the core's fields, then the framing (`Content-Length` for a whole
/// body, chunked for an open one) and `Connection: close` when the connection ends
fn head(
    status: u16,
    headers: &[(&'static str, String)],
    length: Option<usize>,
    close: bool,
) -> Result<Vec<u8>, String> {
    h1::response_head(status, headers, length, close)
}

/// An empty response that closes the connection
fn simple(status: u16) -> Vec<u8> {
    h1::simple_response(status)
}
