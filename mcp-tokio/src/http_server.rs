//! Streamable HTTP serving: hyper owns the sockets, one actor task (the kernel's,
//! `mcp_sansio_runtime::http_server`) owns the [`HttpServer`] rules and every session behind
//! them (no lock around the core)
//!
//! Each hyper connection task reads a request (the body up to the core's
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
//! [`HttpConfig::accept_backoff`]; each connection's [`ReadDeadline`] (header read, body
//! read, idle keep-alive) is watched by its task: a head that is late gets 408, a body that
//! is late gets 408, an idle connection is closed.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use mcp_sansio::http::{HttpConfig, Source};
use mcp_sansio_runtime::http::out_of_resources;
use mcp_sansio_runtime::server::ServerCore;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinHandle;

use crate::edge::{Done, Watch, Watched, late, late_writer};
use crate::endpoint::{HttpBody, HttpEndpoint};
use crate::runtime::Tokio;

use mcp_sansio_runtime::http::Gate as Protection;

/// What a TLS server accepts its connections with
#[cfg(feature = "tls")]
pub(crate) type Tls = tokio_rustls::TlsAcceptor;
/// Without the `tls` feature no server serves HTTPS: there is no `Tls` to give
#[cfg(not(feature = "tls"))]
pub(crate) type Tls = mcp_sansio_runtime::io::NoTls;

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
    tls: Option<Tls>,
) -> io::Result<HttpServerHandle> {
    let listener = mcp_sansio_runtime::http::listener(addr)?;
    listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    let http_config = mcp_sansio_runtime::http::gated(http_config, protection.as_ref());
    let edge = Arc::new(http_config.clone());
    let (endpoint, actor) = HttpEndpoint::start(server, http_config);
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(edge.max_connections.max(1)));
        loop {
            // A free connection slot first: beyond the cap, clients wait in the backlog.
            let slot = tokio::select! {
                slot = Arc::clone(&slots).acquire_owned() => slot.expect("never closed"),
                _ = &mut stopped => break,
            };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = &mut stopped => break,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) if out_of_resources(&e) => {
                    // Out of descriptors: wait for connections to close (the read deadlines
                    // close the ones that hold them) instead of spinning.
                    tokio::select! {
                        () = tokio::time::sleep(edge.accept_backoff) => continue,
                        _ = &mut stopped => break,
                    }
                }
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            let watch = Arc::new(Watch::new(Instant::now()));
            let endpoint = endpoint.clone();
            let protection = protection.clone();
            let service = {
                let watch = Arc::clone(&watch);
                service_fn(move |req| {
                    let ctx = Exchange {
                        source: Source::from_peer(peer),
                        endpoint: endpoint.clone(),
                        protection: protection.clone(),
                        watch: Arc::clone(&watch),
                    };
                    exchange(req, ctx)
                })
            };
            let watcher = graceful.watcher();
            let edge = Arc::clone(&edge);
            #[cfg(feature = "tls")]
            if let Some(tls) = &tls {
                let tls = tls.clone();
                let open = mcp_sansio_runtime::meter::Open::connection("server", "http");
                tokio::spawn(async move {
                    serve_tls(tls, stream, watch, service, watcher, edge, slot).await;
                    drop(open);
                });
                continue;
            }
            #[cfg(not(feature = "tls"))]
            if let Some(tls) = &tls {
                match *tls {}
            }
            // The late answer of an expired deadline goes out through a second descriptor of
            // the socket, so hyper owns the stream itself (tokio's own reads then skip the
            // zeroing of hyper's buffer and the extra read a short read leaves).
            let late_writer = late_writer(&stream);
            let io = Watched::new(stream, Arc::clone(&watch)).without_shutdown();
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(io), service);
            let open = mcp_sansio_runtime::meter::Open::connection("server", "http");
            tokio::spawn(async move {
                let _open = open;
                tokio::select! {
                    _ = watcher.watch(conn) => {}
                    expiry = watch.expired(&edge) => {
                        if let Some(status) = expiry.status() {
                            mcp_sansio_runtime::meter::refused(mcp_sansio_runtime::meter::http_reason(status));
                            // Nothing else is being written in the head phase (the
                            // descriptor is non-blocking, as the stream's).
                            if let Some(mut writer) = late_writer.as_ref() {
                                let _ = io::Write::write(&mut writer, &late(status));
                            }
                        }
                    }
                }
                drop(slot);
            });
        }
        drop(listener);
        // The actor ends every open response first, so the connections can finish.
        endpoint.shutdown();
        drop(endpoint);
        let _ = actor.await;
        let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    });
    Ok(HttpServerHandle {
        addr,
        stop: Some(stop),
        task,
    })
}

/// Serves one HTTPS connection: the TLS handshake, then HTTP over it, holding `slot`
///
/// The handshake is part of the first request's head: it must be done by the connection's
/// header read deadline, or the connection closes. A deadline that passes later closes the
/// connection too (without the 408 a plain connection gets: hyper owns the TLS session's
/// writes).
#[cfg(feature = "tls")]
async fn serve_tls<S>(
    tls: Tls,
    stream: tokio::net::TcpStream,
    watch: Arc<Watch>,
    service: S,
    watcher: hyper_util::server::graceful::Watcher,
    edge: Arc<HttpConfig>,
    slot: tokio::sync::OwnedSemaphorePermit,
) where
    S: hyper::service::HttpService<Incoming, ResBody = HttpBody> + Send + 'static,
    S::Future: Send,
{
    let session = tokio::select! {
        session = tls.accept(stream) => session.ok(),
        _ = watch.expired(&edge) => None,
    };
    if let Some(session) = session {
        let io = Watched::new(session, Arc::clone(&watch));
        let conn =
            hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), service);
        tokio::select! {
            _ = watcher.watch(conn) => {}
            _ = watch.expired(&edge) => {}
        }
    }
    drop(slot);
}

/// What each exchange of a connection needs
struct Exchange {
    /// Where the request comes from (the principal is added once its token is verified)
    source: Source,
    endpoint: HttpEndpoint,
    protection: Option<Protection>,
    watch: Arc<Watch>,
}

/// One HTTP exchange on a connection task: the gate of a protected server, then the
/// endpoint
async fn exchange(req: Request<Incoming>, ctx: Exchange) -> Result<Response<HttpBody>, Infallible> {
    let Exchange {
        mut source,
        endpoint,
        protection,
        watch,
    } = ctx;
    watch.update(|d| d.head_read(Instant::now()));
    let done = Done::new(&watch);
    if protection.is_some() {
        let headers = mcp_sansio_runtime::http::request_fields(req.headers());
        let (method, path) = (req.method().as_str(), req.uri().path());
        match mcp_sansio_runtime::http::admit(protection.as_ref(), method, path, &headers).await {
            Ok(principal) => source = source.with_principal(principal),
            Err(denial) => return Ok(whole(denial).map(|b| b.with_guard(done))),
        }
    }
    let response = endpoint.respond(req, source).await;
    // The whole body was read once the endpoint answers.
    watch.update(|d| d.body_read(Instant::now()));
    Ok(response.map(|b| b.with_guard(done)))
}

/// A whole response (a protected server's gate answered)
fn whole(answer: mcp_sansio::http::HttpResponse) -> Response<HttpBody> {
    mcp_sansio_runtime::http::response(answer.status, answer.headers, HttpBody::whole(answer.body))
        .unwrap_or_else(|_| crate::endpoint::plain(500))
}
