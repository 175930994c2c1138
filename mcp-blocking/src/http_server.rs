//! Streamable HTTP serving: a thread per connection frames HTTP/1.1 (the kernel's
//! `mcp_sansio_runtime::h1`, over the blocking socket), one actor thread owns the
//! [`HttpServer`] rules and every session behind them (no lock around the core)
//!
//! Each connection thread reads a request (its body up to the core's
//! [`HttpConfig::max_body_size`]) and hands it to the actor with a channel for the answer.
//! The actor feeds [`HttpServer::handle_request`], writes what [`HttpServer::poll_output`]
//! yields to each exchange's channel, runs the application on [`HttpServer::poll_event`]
//! with the same dispatcher and [`Context`](crate::Context) as stdio, tells the core when a
//! client goes away ([`HttpServer::handle_closed`]), and sleeps until
//! [`HttpServer::poll_timeout`]. An open exchange (an event stream) is written with chunked
//! transfer coding: its head with the pieces already queued in one write, then each piece
//! (with whatever queued behind it) in one write, so each event reaches the client as soon
//! as the core emits it.
//!
//! The connection edge, by [`HttpConfig`]: every accepted socket gets `TCP_NODELAY`; at
//! most [`HttpConfig::max_connections`] are open at once (the next waits in the listener's
//! backlog); when accepting fails for lack of descriptors the accept thread pauses
//! [`HttpConfig::accept_backoff`]; each connection follows its [`ReadDeadline`] (enforced
//! with socket read timeouts toward it): a head not complete within `header_read_timeout`
//! or a body not complete within `body_read_timeout` gets 408, a kept-alive connection idle
//! for `keep_alive_timeout` closes.
//!
//! A protected server ([`crate::auth::Protection`]) checks each request on its connection
//! thread before the body is read: the Protected Resource Metadata, 401 and 403 are answered
//! there (by [`mcp_sansio::http::protected`]'s rules), and only admitted requests reach the
//! actor.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use futures_lite::future::block_on;
use futures_lite::io::AssertAsync;
use mcp_sansio::ServerConfig;
use mcp_sansio::http::{HttpConfig, HttpResponse, ReadDeadline, Source};
use mcp_sansio_runtime::h1::{self, Conn, Received};
use mcp_sansio_runtime::http::{ServerFront, Then, out_of_resources};

#[cfg(feature = "auth")]
pub(crate) use mcp_sansio_runtime::auth::blocking::Protection;
/// Without the `auth` feature no server is protected: there is no `Protection` to give
#[cfg(not(feature = "auth"))]
#[derive(Clone)]
pub(crate) enum Protection {}

#[cfg(not(feature = "auth"))]
impl Protection {
    /// What `auth`'s protection answers instead of serving the request; never called here
    fn admit_blocking(
        &self,
        _: &str,
        _: &str,
        _: &mcp_sansio_runtime::http::Fields,
    ) -> Result<mcp_sansio::http::Principal, HttpResponse> {
        match *self {}
    }

    /// The resource-server rules; never called here
    fn rules(&self) -> &Arc<mcp_sansio::http::protected::ResourceServer> {
        match *self {}
    }
}
use crate::endpoint::{Body, BodyStream, HttpEndpoint, Next};
use crate::threads::{
    self, Blocking, Chans, ClientOptions, Dispatch, HandlerMsg, Handlers, Input, Peer, Route,
    ToActor, now, recv_until, unix_ms,
};

/// What a TLS server starts its sessions from
#[cfg(feature = "tls")]
pub(crate) type Tls = Arc<rustls::ServerConfig>;
/// Without the `tls` feature no server serves HTTPS: there is no `Tls` to give
#[cfg(not(feature = "tls"))]
#[derive(Clone)]
pub(crate) enum Tls {}

/// A running HTTP server: its address, and the way to stop it
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    stop: Option<Stop>,
    accept: Option<JoinHandle<()>>,
    actor: Option<JoinHandle<()>>,
}

/// What stops the server's threads
struct Stop {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    slots: Arc<Slots>,
    inbox: Sender<Input>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop").finish_non_exhaustive()
    }
}

impl Stop {
    fn signal(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.slots.wake();
        // Wakes the accept thread blocked in `accept`; it sees `stopping` and returns.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        let _ = self.inbox.send(Input::Http(ToActor::Stop));
    }
}

impl HttpServerHandle {
    /// The address the server listens on (with the port the OS chose for port 0)
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, ends every open response and session, and waits for the server's
    /// threads to finish
    pub fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.signal();
        }
        self.join();
    }

    /// Blocks the calling thread while the server runs; nothing stops it then, so this is
    /// for a `main` that serves until the process is interrupted or killed
    pub fn wait(mut self) {
        self.join();
    }

    fn join(&mut self) {
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        if let Some(t) = self.actor.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.signal();
        }
    }
}

/// Starts serving `config`'s sessions with `dispatch` at `addr`
pub(crate) fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server_config: Arc<ServerConfig>,
    dispatch: Arc<dyn Dispatch>,
    pushes: Pushes<'_>,
    protection: Option<Protection>,
    tls: Option<Tls>,
) -> io::Result<HttpServerHandle> {
    let listener = mcp_sansio_runtime::http::listener(addr)?;
    let addr = listener.local_addr()?;
    let mut http_config = http_config;
    // A protected server's 403 for a scoped entry names its metadata and required scopes.
    if let Some(protection) = &protection {
        http_config.resource_server = Some(Arc::clone(protection.rules()));
    }
    let edge = Arc::new(http_config.clone());
    let (endpoint, actor) = start(http_config, server_config, dispatch, pushes)?;
    let tx = endpoint.inbox();
    let stopping = Arc::new(AtomicBool::new(false));
    let slots = Arc::new(Slots::new(edge.max_connections.max(1)));
    let accept = {
        let stopping = Arc::clone(&stopping);
        let slots = Arc::clone(&slots);
        thread::Builder::new()
            .name("mcp-http-accept".into())
            .spawn(move || {
                loop {
                    // A free connection slot first: beyond the cap, clients wait in the
                    // listener's backlog.
                    if !slots.acquire(&stopping) {
                        return;
                    }
                    let accepted = listener.accept();
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    let (stream, peer) = match accepted {
                        Ok(accepted) => accepted,
                        Err(e) => {
                            slots.release();
                            if out_of_resources(&e) {
                                // Out of descriptors: wait for connections to close (the
                                // read deadlines close the ones that hold them).
                                thread::sleep(edge.accept_backoff);
                            }
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let endpoint = endpoint.clone();
                    let protection = protection.clone();
                    let tls = tls.clone();
                    let edge = Arc::clone(&edge);
                    let stopping = Arc::clone(&stopping);
                    let slot = Slot(Arc::clone(&slots));
                    let open = mcp_sansio_runtime::meter::Open::connection("server", "http");
                    let spawned =
                        thread::Builder::new()
                            .name("mcp-http-conn".into())
                            .spawn(move || {
                                let _slot = slot;
                                let _open = open;
                                let source = Source::from_peer(peer);
                                let edge = Edge {
                                    config: &edge,
                                    stopping,
                                    protection,
                                    tls,
                                };
                                connection(stream, &source, &endpoint, edge);
                            });
                    if spawned.is_err() {
                        // No thread for it: the connection (and its slot) are dropped.
                    }
                }
            })?
    };
    Ok(HttpServerHandle {
        addr,
        stop: Some(Stop {
            addr,
            stopping,
            slots,
            inbox: tx,
        }),
        accept: Some(accept),
        actor: Some(actor),
    })
}

/// Starts the actor thread serving `server_config`'s sessions with `dispatch` under
/// `http_config`, in the server's hub; returns its endpoint and the thread
pub(crate) fn start(
    http_config: HttpConfig,
    server_config: Arc<ServerConfig>,
    dispatch: Arc<dyn Dispatch>,
    (hub, read_tools, store): Pushes<'_>,
) -> io::Result<(HttpEndpoint, JoinHandle<()>)> {
    let limit = http_config.max_body_size;
    let (tx, inbox) = crossbeam_channel::unbounded();
    // The session the 2026 requests share, counted from the first one either path serves
    let stateless = Arc::new(std::sync::OnceLock::new());
    let app = App {
        app: threads::app(Some(Arc::clone(&dispatch)), &ClientOptions::default()),
        handlers: Handlers::new(Route::inbox(tx.clone())),
        stateless: Arc::clone(&stateless),
    };
    // In the server's hub before the tools are read, so no tool change is missed.
    let pushes = Handlers::new(Route::inbox(tx.clone()));
    let registration = hub.register(move |push| pushes.send(HandlerMsg::Push(push)).is_ok());
    let (tools, access) = read_tools();
    let clock = (now(), unix_ms());
    let mut front = ServerFront::new(http_config, server_config, &tools, app, clock);
    front.set_access(access);
    front.share_through(store, Handlers::new(Route::inbox(tx.clone())));
    let lanes = Arc::new(crate::lane::Lanes::new(
        front.lanes(),
        stateless,
        threads::app(Some(dispatch), &ClientOptions::default()),
        hub,
        read_tools,
        crate::lane::channel,
    ));
    let stopped = Arc::new(AtomicBool::new(false));
    let actor = Actor {
        front,
        stopped: Arc::clone(&stopped),
        _registration: registration,
    };
    let actor = thread::Builder::new()
        .name("mcp-http-actor".into())
        .spawn(move || actor.run(&inbox))?;
    Ok((HttpEndpoint::new(tx, limit, lanes, stopped), actor))
}

/// The open connections, at most `max`
struct Slots {
    open: Mutex<usize>,
    freed: Condvar,
    max: usize,
}

impl Slots {
    fn new(max: usize) -> Self {
        Self {
            open: Mutex::new(0),
            freed: Condvar::new(),
            max,
        }
    }

    /// Waits for a free slot and takes it; `false` when the server stops
    fn acquire(&self, stopping: &AtomicBool) -> bool {
        let mut open = self.open.lock().expect("never poisoned");
        while *open >= self.max && !stopping.load(Ordering::SeqCst) {
            open = self.freed.wait(open).expect("never poisoned");
        }
        *open += 1;
        !stopping.load(Ordering::SeqCst)
    }

    fn release(&self) {
        let mut open = self.open.lock().expect("never poisoned");
        *open = open.saturating_sub(1);
        self.freed.notify_one();
    }

    fn wake(&self) {
        let _open = self.open.lock().expect("never poisoned");
        self.freed.notify_all();
    }
}

/// A connection's slot, given back when its thread ends
struct Slot(Arc<Slots>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// What every session's [`Peer`] runs the application with
type App = mcp_sansio_runtime::http::PeerApp<Blocking>;

/// The server's hub, which the actor joins, and the server's tools as they are then
pub(crate) type Pushes<'a> = (
    &'a Arc<mcp_sansio_runtime::push::Hub>,
    &'a dyn Fn() -> (
        Vec<mcp_sansio::schema::Tool>,
        Option<Arc<mcp_sansio::server::Access>>,
    ),
    Option<&'a Arc<dyn mcp_sansio_runtime::store::TaskStore>>,
);

struct Actor {
    front: ServerFront<Chans, Peer>,
    /// Set when it stops: the fast path answers 503 from then on
    stopped: Arc<AtomicBool>,
    /// In the server's hub while the actor runs
    _registration: mcp_sansio_runtime::push::Registration,
}

impl Actor {
    fn run(mut self, inbox: &Receiver<Input>) {
        loop {
            self.front.pump(now());
            let Ok(input) = recv_until(inbox, self.front.poll_timeout()) else {
                break;
            };
            match input {
                None => self.front.handle_timeout(now()),
                Some(Input::Http(ToActor::Stop)) => {
                    self.stopped.store(true, Ordering::Release);
                    break;
                }
                Some(Input::Http(msg)) => self.front.on_conn(now(), msg),
                Some(Input::Handler(key, msg)) => self.front.on_handler(key, msg),
                Some(_) => {}
            }
        }
        // Shutting down: every open response ends (its channel closes), handlers stop.
        self.stopped.store(true, Ordering::Release);
        self.front.end_all();
    }
}

/// A whole response body up to this size goes out in one write with its head; a larger
/// one is written after its head, not copied behind it
const COPY_BELOW: usize = 64 * 1024;
/// How far past its deadline a write may go (the socket's send timeout is set again only when
/// the time left moved by more than this)
const WRITE_SLACK: Duration = Duration::from_secs(1);
/// How often a blocked read looks at the server stopping (and an open response at the
/// client leaving)
const TICK: Duration = threads::TICK;

/// A connection's socket as the framing reads it: each read waits no longer than the
/// current deadline (then fails with `TimedOut`), nor past the server stopping
struct Socket {
    stream: TcpStream,
    deadline: Option<Instant>,
    /// How long the client may take to take what is written ([`HttpConfig::write_timeout`])
    write_timeout: Duration,
    /// When the write in progress must be done
    write_deadline: Option<Instant>,
    /// The socket's send timeout as last set (`SO_SNDTIMEO`), so a write sets it again only
    /// when the time left has moved by more than [`WRITE_SLACK`] (not one syscall per write)
    send_timeout: Option<Duration>,
    stopping: Arc<AtomicBool>,
    /// A look at what arrived: reads wait a moment at most, then fail with `WouldBlock`
    #[cfg(feature = "tls")]
    glance: bool,
}

/// How long a glance at a TLS connection waits for its bytes
#[cfg(feature = "tls")]
const GLANCE: Duration = Duration::from_millis(1);

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return Err(io::Error::other("the server stops"));
            }
            let wait = match self.deadline {
                Some(at) => {
                    let left = at.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    left.min(TICK)
                }
                None => TICK,
            };
            #[cfg(feature = "tls")]
            let wait = if self.glance { GLANCE } else { wait };
            self.stream.set_read_timeout(Some(wait))?;
            match self.stream.read(buf) {
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    #[cfg(feature = "tls")]
                    if self.glance {
                        return Err(io::ErrorKind::WouldBlock.into());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

impl Write for Socket {
    /// Waits no longer than the write's deadline: a client that does not read gets the
    /// connection closed (the write fails with `TimedOut`), not a thread held for it
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let left = match self.write_deadline {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => self.write_timeout,
        };
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let stale = self
            .send_timeout
            .is_none_or(|set| set.abs_diff(left) > WRITE_SLACK);
        if stale {
            self.stream.set_write_timeout(Some(left))?;
            self.send_timeout = Some(left);
        }
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// A connection as the framing reads it: the socket, or a TLS session over it (whose
/// handshake runs in the first read, under the first head's deadline)
enum Io {
    Plain(Socket),
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, Socket>>),
}

impl Io {
    fn socket(&mut self) -> &mut Socket {
        match self {
            Self::Plain(socket) => socket,
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.get_mut(),
        }
    }
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(socket) => socket.read(buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(socket) => socket.write(buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(socket) => socket.flush(),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.flush(),
        }
    }
}

type Connection = Conn<AssertAsync<Io>>;

fn set_deadline(conn: &mut Connection, deadline: Option<Instant>) {
    conn.io_mut().get_mut().socket().deadline = deadline;
}

/// Writes `bytes` (one write, flushed) within the write deadline; whether they went out
fn send(conn: &mut Connection, bytes: &[u8]) -> bool {
    start_write(conn);
    block_on(conn.send(bytes)).is_ok()
}

/// Starts the clock of a response (or of one write of an open one): the client has
/// [`HttpConfig::write_timeout`] to take it
fn start_write(conn: &mut Connection) {
    let socket = conn.io_mut().get_mut().socket();
    socket.write_deadline = Some(Instant::now() + socket.write_timeout);
}

/// What every connection of a server is served with
struct Edge<'a> {
    config: &'a HttpConfig,
    stopping: Arc<AtomicBool>,
    protection: Option<Protection>,
    tls: Option<Tls>,
}

/// Serves the requests of one connection, one after the other, until it closes
fn connection(stream: TcpStream, source: &Source, endpoint: &HttpEndpoint, edge: Edge<'_>) {
    let limit = endpoint.body_limit();
    let Edge {
        config: edge,
        stopping,
        protection,
        tls,
    } = edge;
    let socket = Socket {
        stream,
        deadline: None,
        write_timeout: edge.write_timeout,
        write_deadline: None,
        send_timeout: None,
        stopping,
        #[cfg(feature = "tls")]
        glance: false,
    };
    let io = match tls {
        None => Io::Plain(socket),
        #[cfg(feature = "tls")]
        Some(config) => match rustls::ServerConnection::new(config) {
            Ok(session) => Io::Tls(Box::new(rustls::StreamOwned::new(session, socket))),
            Err(_) => return,
        },
        #[cfg(not(feature = "tls"))]
        Some(never) => match never {},
    };
    let mut conn = Conn::new(AssertAsync::new(io));
    let mut clock = ReadDeadline::accepted(Instant::now());
    loop {
        if !conn.has_buffered() {
            // Waiting for a request: the deadline (the first head's, or the idle one) or
            // the server stopping close the connection.
            set_deadline(&mut conn, clock.deadline(edge));
            match block_on(conn.fill()) {
                Ok(n) if n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    if let Some(status) = clock.expiry().status() {
                        mcp_sansio_runtime::meter::refused(mcp_sansio_runtime::meter::http_reason(
                            status,
                        ));
                        send(&mut conn, &h1::simple_response(status));
                    }
                    return;
                }
                _ => return,
            }
        }
        clock.head_started(Instant::now());
        let received = block_on(h1::receive(
            &mut conn,
            limit,
            &mut clock,
            edge,
            set_deadline,
        ));
        let (response, keep_alive, head_only) = match received {
            Received::Request {
                method,
                path,
                headers,
                body,
                keep_alive,
            } => {
                // A protected server answers the metadata and refuses bad tokens itself.
                let admitted = protection
                    .as_ref()
                    .map(|p| p.admit_blocking(&method, &path, &headers))
                    .transpose();
                let principal = match admitted {
                    Ok(principal) => principal,
                    Err(response) => {
                        if !send_whole(&mut conn, &response, !keep_alive) || !keep_alive {
                            return;
                        }
                        clock.response_written(Instant::now());
                        continue;
                    }
                };
                let head_only = method == "HEAD";
                let source = source.clone().with_principal(principal);
                // A response not decided yet (2026: JSON or an event stream) waits for its
                // head; a client leaving meanwhile is noticed as while streaming.
                let Some(response) =
                    endpoint.handle_until(source, method, headers, body, || gone(&mut conn))
                else {
                    return;
                };
                (response, keep_alive, head_only)
            }
            Received::Oversize => (endpoint.oversize(), false, false),
            Received::Late => {
                mcp_sansio_runtime::meter::refused("deadline");
                send(&mut conn, &h1::simple_response(408));
                return;
            }
            Received::Bad(status) => {
                mcp_sansio_runtime::meter::refused(mcp_sansio_runtime::meter::http_reason(status));
                send(&mut conn, &h1::simple_response(status));
                return;
            }
            Received::Gone => return,
        };
        // The endpoint answers every request at once: whole, or as an open response.
        let reusable = match response.body {
            Body::Whole(data) => {
                let (status, headers) = (response.status, &response.headers);
                send_bytes(&mut conn, status, headers, &data, !keep_alive)
            }
            Body::Stream(body) => write_open(
                &mut conn,
                (response.status, &response.headers),
                body,
                !keep_alive,
                head_only,
            ),
            _ => false,
        };
        if !reusable || !keep_alive {
            return;
        }
        clock.response_written(Instant::now());
    }
}

/// Writes a whole response in one write; `true` when it went out
fn send_whole(conn: &mut Connection, response: &HttpResponse, close: bool) -> bool {
    send_bytes(
        conn,
        response.status,
        &response.headers,
        &response.body,
        close,
    )
}

/// Writes a whole response of `status`, `headers` and `body` in one write; `true` when it
/// went out
fn send_bytes(
    conn: &mut Connection,
    status: u16,
    headers: &[(&'static str, String)],
    body: &[u8],
    close: bool,
) -> bool {
    let bytes = match h1::response_head(status, headers, Some(body.len()), close) {
        Ok(mut bytes) if body.len() < COPY_BELOW => {
            bytes.extend_from_slice(body);
            bytes
        }
        Ok(head) => {
            // A large body is not copied: its head, then the body, both by the deadline.
            start_write(conn);
            let io = conn.io_mut().get_mut();
            return io.write_all(&head).is_ok() && io.write_all(body).is_ok() && io.flush().is_ok();
        }
        Err(_) => h1::simple_response(500),
    };
    send(conn, &bytes)
}

/// Takes the pieces already queued (the end too) as chunks; `None` when a write failed
fn queued(conn: &mut Connection, body: &mut BodyStream, out: &mut Vec<u8>) -> Option<Then> {
    loop {
        match body.try_next() {
            Next::Piece(data) => {
                if !chunk(conn, out, &data) {
                    return None;
                }
            }
            Next::Empty => return Some(Then::More),
            Next::End => {
                out.extend_from_slice(h1::LAST_CHUNK);
                return Some(Then::Ended);
            }
            Next::Dropped => return Some(Then::Dropped),
        }
    }
}

/// Adds `data` to `out` as a chunk; a large one is not copied: what `out` holds and the
/// chunk go out at once (its line end stays in `out`); `false` when a write failed
fn chunk(conn: &mut Connection, out: &mut Vec<u8>, data: &[u8]) -> bool {
    if data.len() < COPY_BELOW {
        h1::push_chunk(out, data);
        return true;
    }
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    let sent = send(conn, out) && {
        let io = conn.io_mut().get_mut();
        io.write_all(data).is_ok()
    };
    out.clear();
    out.extend_from_slice(b"\r\n");
    sent
}

/// Whether the client closed the connection, looking without waiting
///
/// A TLS connection is read through its session (a client may end it with a `close_notify`
/// before closing, which a peek at the socket would take for data); what a client
/// pipelines meanwhile stays buffered for the next request.
fn gone(conn: &mut Connection) -> bool {
    match conn.io_mut().get_mut() {
        Io::Plain(socket) => peeks_closed(&socket.stream),
        #[cfg(feature = "tls")]
        Io::Tls(_) => {
            if conn.buffered() >= h1::MAX_HEAD {
                // A client pipelining this much waits for the response first.
                return false;
            }
            conn.io_mut().get_mut().socket().glance = true;
            let read = block_on(conn.fill());
            conn.io_mut().get_mut().socket().glance = false;
            match read {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != io::ErrorKind::WouldBlock,
            }
        }
    }
}

/// Whether the client closed the socket (a peek that does not wait)
fn peeks_closed(watch: &TcpStream) -> bool {
    if watch.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let closed = match watch.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    };
    let _ = watch.set_nonblocking(false);
    closed
}

/// Writes an open response: the head with the pieces already queued, then each piece with
/// what queued behind it, one write each, until the server ends it; `true` when it ended
/// cleanly (returning early drops `body`, which tells the server the client went away)
fn write_open(
    conn: &mut Connection,
    (status, headers): (u16, &[(&'static str, String)]),
    mut body: BodyStream,
    close: bool,
    head_only: bool,
) -> bool {
    let Ok(mut out) = h1::response_head(status, headers, None, close) else {
        return false;
    };
    if head_only {
        return send(conn, &out);
    }
    let Some(mut then) = queued(conn, &mut body, &mut out) else {
        return false;
    };
    loop {
        if then == Then::Dropped {
            return false;
        }
        if !out.is_empty() {
            if !send(conn, &out) {
                return false;
            }
            out.clear();
        }
        if then == Then::Ended {
            return true;
        }
        then = match body.next_timeout(TICK) {
            Next::Piece(data) => {
                if !chunk(conn, &mut out, &data) {
                    return false;
                }
                match queued(conn, &mut body, &mut out) {
                    Some(then) => then,
                    None => return false,
                }
            }
            Next::End => {
                out.extend_from_slice(h1::LAST_CHUNK);
                Then::Ended
            }
            Next::Dropped => Then::Dropped,
            Next::Empty => {
                if gone(conn) {
                    return false;
                }
                Then::More
            }
        };
    }
}
