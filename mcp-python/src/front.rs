//! The `HttpFront` class: the HTTP/1.1 front end of the asyncio server's `serve_http`, in
//! Rust: hyper on a tokio current-thread runtime on a thread of its own
//!
//! The front end owns the listening sockets and the connections: it accepts (at most
//! `max_connections` at once), sets `TCP_NODELAY`, parses each request and reads its body
//! (up to `max_body_size`), and watches each connection's read deadline (with
//! mcp-sansio-tokio's `edge`, as its own server does: a late head or body gets 408 and the
//! connection closes; an idle kept-alive one closes). Every whole
//! request waits in a queue the asyncio loop drains (`take`): the first request into an
//! empty queue writes one byte to a socket the loop watches (`wake_fd`), so a burst of
//! requests costs the loop one wakeup. Python answers each with `respond` (a whole
//! response) or `send` (the pieces of an open one: head, body, end); a response whose
//! reader falls `max_unwritten` bytes behind is cut (`send` returns `False`). A client
//! that leaves before its response ended is reported by a `("gone", id)` event. The Rust
//! thread never takes the GIL: every crossing is the queue, the wakeup byte, and the
//! channels Python's calls feed.
//!
//! Every MCP rule stays with the `HttpServer` rules the asyncio endpoint drives; this is
//! only HTTP bytes and sockets.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};
use std::thread::JoinHandle;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use mcp_sansio::http::HttpConfig;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::http::PyHttpServer;
use mcp_sansio_tokio::edge::{Done, Watch, Watched, late, late_writer};

/// The largest request head a connection may send (as the h11 front end's)
const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a request may have (hyper's default is 100)
const MAX_FIELDS: usize = 1024;

/// What the Rust thread hands the asyncio loop
enum Event {
    /// A whole request (its body read, or `oversize`)
    Request {
        id: u64,
        method: String,
        path: String,
        headers: Vec<(String, Bytes)>,
        body: Bytes,
        peer: SocketAddr,
        oversize: bool,
    },
    /// The client of request `id` left before its response ended
    Gone(u64),
    /// A connection opened (+1) or closed (-1), when the loop counts them
    Connection(i8),
}

/// A piece of an open response, from Python to its connection
enum Chunk {
    Data(Bytes),
    End,
    /// Drop the connection (the reader fell behind, or the endpoint closed)
    Cut,
}

/// Where Python's answer to request `id` goes
enum Slot {
    /// No head yet: the connection's task waits for the response
    Waiting(oneshot::Sender<Response<FrontBody>>),
    /// Head sent: the body's pieces
    Open {
        tx: mpsc::UnboundedSender<Chunk>,
        unwritten: Arc<AtomicUsize>,
    },
}

/// What the Rust thread and the Python calls share
struct Shared {
    events: Mutex<Vec<Event>>,
    slots: Mutex<HashMap<u64, Slot>>,
    next: AtomicU64,
    /// The write end of the wakeup socket (non-blocking)
    wake: UnixStream,
    max_unwritten: usize,
    count_connections: bool,
}

/// A lock that a panic elsewhere cannot make unusable (nothing here is left half-changed)
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    fn push(&self, event: Event) {
        let was_empty = {
            let mut events = lock(&self.events);
            let was_empty = events.is_empty();
            events.push(event);
            was_empty
        };
        if was_empty {
            // One byte per batch: the loop drains the whole queue on each wakeup. A full
            // socket (WouldBlock) already holds a wakeup.
            let _ = (&self.wake).write(&[1]);
        }
    }

    /// Request `id`'s client is gone (its task ended before the response did)
    fn gone(&self, id: u64) {
        if lock(&self.slots).remove(&id).is_some() {
            self.push(Event::Gone(id));
        }
    }
}

/// The body of a response: whole, or the pieces Python sends
enum FrontBody {
    /// The bytes, and the guard that marks the connection idle once they are written
    Whole {
        data: Option<Bytes>,
        _guard: Done,
    },
    Stream(Stream),
}

struct Stream {
    rx: mpsc::UnboundedReceiver<Chunk>,
    unwritten: Arc<AtomicUsize>,
    shared: Arc<Shared>,
    id: u64,
    /// Ended or cut: dropping it reports nothing
    done: bool,
    /// Marks the connection idle again when the response is gone
    guard: Done,
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.done {
            self.shared.gone(self.id);
        }
    }
}

/// A response dropped by the front end (the reader fell behind, or the endpoint closed)
#[derive(Debug)]
struct Cut;

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("response cut")
    }
}

impl std::error::Error for Cut {}

impl Body for FrontBody {
    type Data = Bytes;
    type Error = Cut;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Cut>>> {
        match self.get_mut() {
            Self::Whole { data, .. } => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            Self::Stream(s) => {
                if s.done {
                    return Poll::Ready(None);
                }
                match s.rx.poll_recv(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Some(Chunk::Data(d))) => {
                        s.unwritten.fetch_sub(d.len(), Ordering::Relaxed);
                        Poll::Ready(Some(Ok(Frame::data(d))))
                    }
                    Poll::Ready(Some(Chunk::End)) => {
                        s.done = true;
                        Poll::Ready(None)
                    }
                    Poll::Ready(Some(Chunk::Cut) | None) => {
                        s.done = true;
                        Poll::Ready(Some(Err(Cut)))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Whole { data, .. } => data.is_none(),
            Self::Stream(s) => s.done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Whole { data, .. } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
            Self::Stream(_) => SizeHint::default(),
        }
    }
}

/// A response with a whole body
fn whole(
    status: u16,
    headers: &[(String, String)],
    body: Bytes,
    close: bool,
) -> Response<FrontBody> {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    if close {
        builder = builder.header("connection", "close");
    }
    builder
        .body(FrontBody::Whole {
            data: Some(body),
            _guard: Done::default(),
        })
        .unwrap_or_else(|_| plain(500, false))
}

/// A response with no body
fn plain(status: u16, close: bool) -> Response<FrontBody> {
    let mut response = Response::new(FrontBody::Whole {
        data: None,
        _guard: Done::default(),
    });
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    if close {
        response.headers_mut().insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
    }
    response
}

/// The asyncio server's HTTP/1.1 front end in Rust (see the module's documentation)
#[pyclass(module = "mcp_sansio._core", name = "HttpFront")]
pub(crate) struct PyHttpFront {
    shared: Arc<Shared>,
    /// The read end of the wakeup socket (the loop watches its descriptor)
    wake_read: UnixStream,
    port: u16,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

#[pymethods]
impl PyHttpFront {
    /// Binds `addresses` (`(ip, port)` pairs, every one of a host's addresses: the first's
    /// port for the rest when it is 0) and starts serving on a thread of its own, under the
    /// connection edge of `rules` (an `HttpServer`). `count_connections`: report each
    /// connection's opening and closing as events.
    #[new]
    #[pyo3(signature = (rules, addresses, *, count_connections=false))]
    fn new(
        rules: PyRef<'_, PyHttpServer>,
        addresses: Vec<(String, u16)>,
        count_connections: bool,
    ) -> PyResult<Self> {
        let edge = rules.edge();
        drop(rules);
        if addresses.is_empty() {
            return Err(PyValueError::new_err("no address to listen on"));
        }
        let mut listeners = Vec::new();
        let mut port = 0;
        for (host, wanted) in addresses {
            let ip: IpAddr = host
                .split('%')
                .next()
                .unwrap_or_default()
                .parse()
                .map_err(|_| PyValueError::new_err(format!("not an IP address: {host:?}")))?;
            let wanted = if listeners.is_empty() { wanted } else { port };
            let listener =
                bind(SocketAddr::new(ip, wanted)).map_err(|e| PyOSError::new_err(e.to_string()))?;
            if listeners.is_empty() {
                port = listener.local_addr()?.port();
            }
            listeners.push(listener);
        }
        let (wake_read, wake) = UnixStream::pair()?;
        wake_read.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            events: Mutex::new(Vec::new()),
            slots: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            wake,
            max_unwritten: edge.max_unwritten,
            count_connections,
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop, stopped) = oneshot::channel();
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("mcp-http-front".into())
                .spawn(move || {
                    runtime.block_on(serve(listeners, shared, Arc::new(edge), stopped));
                    // Dropping the runtime drops every connection's task.
                    drop(runtime);
                })?
        };
        Ok(Self {
            shared,
            wake_read,
            port,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The port the listeners are bound to
    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// The descriptor the loop watches: readable when events wait (read it empty, then
    /// `take`)
    #[getter]
    fn wake_fd(&self) -> i32 {
        self.wake_read.as_raw_fd()
    }

    /// Reads the wakeup socket empty and returns the waiting events, in order:
    /// `("request", id, method, path, headers, body, peer, oversize)` (headers: `(name,
    /// value bytes)`, names lowercase; peer: `(ip, port)`), `("gone", id)`,
    /// `("connection", +1 | -1)`
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut buf = [0u8; 256];
        // Non-blocking: what is there (one byte per batch), then WouldBlock.
        while let Ok(n) = io::Read::read(&mut &self.wake_read, &mut buf) {
            if n < buf.len() {
                break;
            }
        }
        let events = std::mem::take(&mut *lock(&self.shared.events));
        let list = PyList::empty(py);
        for event in events {
            let item = match event {
                Event::Request {
                    id,
                    method,
                    path,
                    headers,
                    body,
                    peer,
                    oversize,
                } => {
                    let fields = PyList::empty(py);
                    for (name, value) in headers {
                        fields.append((name, PyBytes::new(py, &value)))?;
                    }
                    (
                        "request",
                        id,
                        method,
                        path,
                        fields,
                        PyBytes::new(py, &body),
                        (peer.ip().to_string(), peer.port()),
                        oversize,
                    )
                        .into_pyobject(py)?
                        .into_any()
                }
                Event::Gone(id) => ("gone", id).into_pyobject(py)?.into_any(),
                Event::Connection(delta) => ("connection", delta).into_pyobject(py)?.into_any(),
            };
            list.append(item)?;
        }
        Ok(list)
    }

    /// Answers request `id` with a whole response (`close`: the connection closes after
    /// it); `False` when its client is gone
    #[pyo3(signature = (id, status, headers, body, close=false))]
    fn respond(
        &self,
        id: u64,
        status: u16,
        headers: Vec<(String, String)>,
        body: &[u8],
        close: bool,
    ) -> bool {
        let slot = lock(&self.shared.slots).remove(&id);
        match slot {
            Some(Slot::Waiting(tx)) => tx
                .send(whole(status, &headers, Bytes::copy_from_slice(body), close))
                .is_ok(),
            Some(Slot::Open { tx, .. }) => {
                let _ = tx.send(Chunk::Cut);
                false
            }
            None => false,
        }
    }

    /// Sends pieces of request `id`'s open response: `("head", status, headers)`, `("body",
    /// data)`, `("end",)`; `False` when the response was dropped (its client is gone, or
    /// it fell `max_unwritten` bytes behind: what waits unwritten plus these may not pass
    /// it, but pieces behind nothing always go)
    fn send(&self, id: u64, pieces: &Bound<'_, PyList>) -> PyResult<bool> {
        let shared = &self.shared;
        let mut slots = lock(&shared.slots);
        let mut total = 0;
        let mut parsed = Vec::with_capacity(pieces.len());
        for piece in pieces.iter() {
            let piece = piece.cast_into::<PyTuple>()?;
            let kind = piece.get_item(0)?;
            let kind = kind.extract::<&str>()?;
            match kind {
                "head" => {
                    let status: u16 = piece.get_item(1)?.extract()?;
                    let headers: Vec<(String, String)> = piece.get_item(2)?.extract()?;
                    parsed.push(Piece::Head(status, headers));
                }
                "body" => {
                    let data: Vec<u8> = piece.get_item(1)?.extract()?;
                    total += data.len();
                    parsed.push(Piece::Data(Bytes::from(data)));
                }
                "end" => parsed.push(Piece::End),
                other => return Err(PyValueError::new_err(format!("unknown piece {other:?}"))),
            }
        }
        // A whole response in one pass (a head, its body, its end: a JSON answer) goes as a
        // whole body, with its length and no channel.
        if let (Some(Piece::Head(..)), Some(Piece::End)) = (parsed.first(), parsed.last())
            && matches!(slots.get(&id), Some(Slot::Waiting(_)))
        {
            let Some(Slot::Waiting(waiting)) = slots.remove(&id) else {
                return Ok(false);
            };
            drop(slots);
            let mut body = Vec::with_capacity(total);
            let mut head = None;
            for piece in parsed {
                match piece {
                    Piece::Head(status, headers) => head = Some((status, headers)),
                    Piece::Data(data) => body.extend_from_slice(&data),
                    Piece::End => {}
                }
            }
            let (status, headers) = head.unwrap_or_default();
            return Ok(waiting
                .send(whole(status, &headers, Bytes::from(body), false))
                .is_ok());
        }
        for piece in parsed {
            match piece {
                Piece::Head(status, headers) => {
                    let Some(Slot::Waiting(waiting)) = slots.remove(&id) else {
                        return Ok(false);
                    };
                    let (tx, rx) = mpsc::unbounded_channel();
                    let unwritten = Arc::new(AtomicUsize::new(0));
                    let mut builder = Response::builder().status(status);
                    for (name, value) in &headers {
                        builder = builder.header(name.as_str(), value.as_str());
                    }
                    let done = Done::default();
                    let response = builder
                        .body(FrontBody::Stream(Stream {
                            rx,
                            unwritten: Arc::clone(&unwritten),
                            shared: Arc::clone(shared),
                            id,
                            done: false,
                            guard: done,
                        }))
                        .map_err(|e| PyValueError::new_err(e.to_string()))?;
                    if let Err(mut response) = waiting.send(response) {
                        // Its client is gone (and reported): dropping the stream here, under
                        // the slots' lock, must not report it again.
                        if let FrontBody::Stream(stream) = response.body_mut() {
                            stream.done = true;
                        }
                        return Ok(false);
                    }
                    slots.insert(id, Slot::Open { tx, unwritten });
                }
                Piece::Data(data) => {
                    let Some(Slot::Open { tx, unwritten }) = slots.get(&id) else {
                        return Ok(false);
                    };
                    if total > 0 {
                        // The core's rule (`HttpConfig::keeps_unwritten`), once per pass.
                        let waiting = unwritten.load(Ordering::Relaxed);
                        if waiting > 0 && waiting + total > shared.max_unwritten {
                            let _ = tx.send(Chunk::Cut);
                            slots.remove(&id);
                            return Ok(false);
                        }
                        total = 0;
                    }
                    unwritten.fetch_add(data.len(), Ordering::Relaxed);
                    if tx.send(Chunk::Data(data)).is_err() {
                        slots.remove(&id);
                        return Ok(false);
                    }
                }
                Piece::End => {
                    if let Some(Slot::Open { tx, .. }) = slots.remove(&id) {
                        let _ = tx.send(Chunk::End);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Ends request `id`'s response now (the endpoint is closing): its connection closes
    fn finish(&self, id: u64) {
        match lock(&self.shared.slots).remove(&id) {
            Some(Slot::Open { tx, .. }) => {
                let _ = tx.send(Chunk::Cut);
            }
            // Dropping the sender ends the waiting task: the connection closes.
            Some(Slot::Waiting(_)) | None => {}
        }
    }

    /// Stops listening, drops every connection and joins the front end's thread
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let joined = py.detach(|| thread.join());
            if joined.is_err() {
                return Err(PyRuntimeError::new_err(
                    "the HTTP front end's thread panicked",
                ));
            }
        }
        lock(&self.shared.slots).clear();
        Ok(())
    }

    /// Whether the front end's thread still runs
    #[getter]
    fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for PyHttpFront {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // The thread ends on its own; nothing waits for it here (no GIL games in a drop).
    }
}

/// One piece of `send`, converted before the slots are touched
enum Piece {
    Head(u16, Vec<(String, String)>),
    Data(Bytes),
    End,
}

/// A listener as `serve_http` binds one: `SO_REUSEADDR`, IPv6 only on an IPv6 address,
/// the Rust servers' backlog (`LISTEN_BACKLOG`), non-blocking
fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let domain = socket2::Domain::for_address(addr);
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(mcp_sansio_runtime::http::LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Whether accepting failed for lack of descriptors or memory
fn out_of_resources(error: &io::Error) -> bool {
    const ENOBUFS: i32 = if cfg!(target_os = "linux") { 105 } else { 55 };
    matches!(error.raw_os_error(), Some(24 | 23 | 12)) || error.raw_os_error() == Some(ENOBUFS)
}

/// The front end's thread: the accept loops until `stopped`
async fn serve(
    listeners: Vec<std::net::TcpListener>,
    shared: Arc<Shared>,
    edge: Arc<HttpConfig>,
    stopped: oneshot::Receiver<()>,
) {
    let slots = Arc::new(Semaphore::new(edge.max_connections.max(1)));
    let mut accepts = tokio::task::JoinSet::new();
    for listener in listeners {
        let Ok(listener) = TcpListener::from_std(listener) else {
            continue;
        };
        accepts.spawn(accept(
            listener,
            Arc::clone(&shared),
            Arc::clone(&edge),
            Arc::clone(&slots),
        ));
    }
    // Until `close` (or the handle is dropped: the sender goes with it).
    let _ = stopped.await;
    accepts.abort_all();
}

async fn accept(
    listener: TcpListener,
    shared: Arc<Shared>,
    edge: Arc<HttpConfig>,
    slots: Arc<Semaphore>,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // A free connection slot first: beyond the cap, clients wait in the backlog.
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        // Reap finished connections (their tasks' results are nothing).
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) if out_of_resources(&e) => {
                // Out of descriptors: wait for connections to close (the read deadlines
                // close the ones that hold them) instead of spinning.
                tokio::time::sleep(edge.accept_backoff).await;
                continue;
            }
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        let edge = Arc::clone(&edge);
        connections.spawn(async move {
            if shared.count_connections {
                shared.push(Event::Connection(1));
            }
            connection(stream, peer, Arc::clone(&shared), edge).await;
            if shared.count_connections {
                shared.push(Event::Connection(-1));
            }
            drop(slot);
        });
    }
}

/// Serves one connection until it closes or its read deadline passes
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    edge: Arc<HttpConfig>,
) {
    let watch = Arc::new(Watch::new(Instant::now()));
    // The late answer of an expired deadline goes out through a second descriptor of the
    // socket, so hyper owns the stream itself.
    let late_writer = late_writer(&stream);
    let service = {
        let watch = Arc::clone(&watch);
        let edge = Arc::clone(&edge);
        service_fn(move |req| {
            exchange(
                req,
                peer,
                Arc::clone(&shared),
                Arc::clone(&edge),
                Arc::clone(&watch),
            )
        })
    };
    let io = Watched::new(stream, Arc::clone(&watch));
    let conn = hyper::server::conn::http1::Builder::new()
        // A head past 64 KiB, or of more than `MAX_FIELDS` fields, gets 431.
        .max_buf_size(MAX_HEAD)
        .max_headers(MAX_FIELDS)
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = conn => {}
        expiry = watch.expired(&edge) => {
            if let Some(status) = expiry.status() {
                // Nothing else is being written in the head phase (the descriptor is
                // non-blocking, as the stream's).
                if let Some(mut writer) = late_writer.as_ref() {
                    let _ = writer.write(&late(status));
                }
            }
        }
    }
}

/// Drops the request's slot and reports it gone unless disarmed (the answer arrived)
struct Pending {
    shared: Arc<Shared>,
    id: u64,
    armed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.armed {
            self.shared.gone(self.id);
        }
    }
}

/// One request: its body read, handed to the loop, answered by Python
async fn exchange(
    req: Request<Incoming>,
    peer: SocketAddr,
    shared: Arc<Shared>,
    edge: Arc<HttpConfig>,
    watch: Arc<Watch>,
) -> Result<Response<FrontBody>, Cut> {
    watch.update(|d| d.head_read(Instant::now()));
    let done = Done::new(&watch);
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let headers: Vec<(String, Bytes)> = req
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                Bytes::copy_from_slice(value.as_bytes()),
            )
        })
        .collect();
    let read = tokio::time::timeout(
        edge.body_read_timeout,
        Limited::new(req.into_body(), edge.max_body_size).collect(),
    )
    .await;
    let (body, oversize) = match read {
        Ok(Ok(body)) => (body.to_bytes(), false),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => (Bytes::new(), true),
        // The client broke off the body: nobody reads the answer.
        Ok(Err(_)) => return Ok(with_done(plain(400, true), done)),
        // The body did not arrive in time: 408, and the connection closes.
        Err(_) => return Ok(with_done(plain(408, true), done)),
    };
    watch.update(|d| d.body_read(Instant::now()));
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    lock(&shared.slots).insert(id, Slot::Waiting(tx));
    let mut pending = Pending {
        shared: Arc::clone(&shared),
        id,
        armed: true,
    };
    shared.push(Event::Request {
        id,
        method,
        path,
        headers,
        body,
        peer,
        oversize,
    });
    let Ok(response) = rx.await else {
        // The endpoint closed before answering: close the connection.
        pending.armed = false;
        return Err(Cut);
    };
    pending.armed = false;
    Ok(with_done(response, done))
}

/// `response`, marking the connection idle once its body is gone
fn with_done(response: Response<FrontBody>, done: Done) -> Response<FrontBody> {
    response.map(|body| match body {
        FrontBody::Stream(mut s) => {
            s.guard = done;
            FrontBody::Stream(s)
        }
        FrontBody::Whole { data, .. } => FrontBody::Whole { data, _guard: done },
    })
}
