//! What drives a `Session` on threads: the shared per-session [`Peer`] (what the application
//! and the handlers asked for, mapped onto the core's calls, in `mcp-sansio-shared`) on plain
//! threads ([`Blocking`]), the one channel every actor waits on ([`Input`], [`recv_until`]),
//! and the actor of a byte-stream connection ([`open`], [`Driver::run`]).

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Instant;

use mcp_sansio::http::SessionKey;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{InboundNotification, InputId, Session};
use mcp_sansio_shared::peer;

use crate::cancel::CancellationToken;

pub use mcp_sansio_shared::peer::TaskStatusUpdate;
pub(crate) use mcp_sansio_shared::peer::{Outcome, unix_ms};

/// Plain threads as the shared glue (`mcp-sansio-shared`) sees them: a handler run is its
/// cancellation token, replies and reports go through `std` channels, handler messages to the
/// actor's [`Route`], and a client's input handler runs on a thread
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blocking;

/// Commands from the application's handles to the driver
pub(crate) type Command = peer::Command<Blocking>;
/// Messages from server handler threads (and client input handlers) to the driver
pub(crate) type HandlerMsg = peer::HandlerMsg<Blocking>;
/// Where handler threads send their messages, tagged with their session
pub(crate) type Handlers = peer::Handlers<Blocking>;
/// The per-`Session` state of a driver: stdio and HTTP drivers handle events alike through it
pub(crate) type Peer = peer::Peer<Blocking>;
/// Who waits for a client's handshake
pub(crate) type Ready = peer::Ready<Blocking>;

/// What the server side does with inbound requests (the server's dispatcher, as an object)
pub(crate) trait Dispatch: peer::Dispatch<Blocking> {}
impl<T: peer::Dispatch<Blocking>> Dispatch for T {}

impl peer::Runtime for Blocking {
    type Run = CancellationToken;
    type Reply<T: Send + 'static> = mpsc::Sender<T>;
    type Stream<T: Send + 'static> = mpsc::Sender<T>;
    type HandlerTx = Route;
    type Options = ClientOptions;
    type Dispatch = dyn Dispatch;

    fn now() -> Instant {
        now()
    }
    fn reply<T: Send + 'static>(tx: mpsc::Sender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn report<T: Send + 'static>(tx: &mpsc::Sender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn stop(run: CancellationToken) {
        run.cancel();
    }
    fn send_handler(tx: &Route, key: SessionKey, msg: HandlerMsg) -> bool {
        tx.0.send(Input::Handler(key, msg)).is_ok()
    }
    fn notification(options: &ClientOptions, notification: InboundNotification) {
        if let Some(tx) = &options.notifications {
            let _ = tx.send(notification);
        }
    }
    fn input(
        options: &ClientOptions,
        id: InputId,
        requests: InputRequests,
        handlers: &Handlers,
    ) -> Result<(), ErrorObject> {
        let Some(handler) = &options.input else {
            return Err(peer::no_input_handler());
        };
        // The application may take its time (a user answering): its own thread
        let handler = Arc::clone(handler);
        let messages = handlers.clone();
        thread::Builder::new()
            .name("mcp-input".into())
            .spawn(move || {
                let result = handler(requests);
                let _ = messages.send(HandlerMsg::Answered { id, result });
            })
            .map(|_| ())
            .map_err(|_| ErrorObject::internal_error("no thread for the input handler"))
    }
}

pub use mcp_sansio::server::AskFailure;

/// The client application's answer to the server's input requests (elicitation, sampling,
/// roots); it runs on a thread of its own, so it may block (on a user, say)
pub type InputHandler =
    Arc<dyn Fn(InputRequests) -> Result<InputResponses, ErrorObject> + Send + Sync>;

/// What a client connection does with what the server sends besides responses
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Answers the server's input requests (elicitation, sampling, roots) in both eras;
    /// without it they are refused
    pub input: Option<InputHandler>,
    /// Receives the server's notifications (log messages, list changes, resource updates,
    /// subscription traffic); without it they are dropped
    pub notifications: Option<mpsc::Sender<InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<mpsc::Sender<String>>,
    /// HTTP only: authorize with OAuth when the server challenges (401, or 403
    /// `insufficient_scope`)
    #[cfg(feature = "auth")]
    pub auth: Option<crate::auth::OAuthOptions>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("ClientOptions");
        f.field("input", &self.input.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("stderr", &self.stderr.is_some());
        #[cfg(feature = "auth")]
        f.field("auth", &self.auth.is_some());
        f.finish()
    }
}

impl ClientOptions {
    /// With an input handler
    pub fn input(mut self, handler: InputHandler) -> Self {
        self.input = Some(handler);
        self
    }

    /// Authorizes HTTP connections with OAuth
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: crate::auth::OAuthOptions) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Captures a child server's stderr, line by line
    pub fn stderr(mut self, sender: mpsc::Sender<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(mut self, sender: mpsc::Sender<InboundNotification>) -> Self {
        self.notifications = Some(sender);
        self
    }
}

/// The core's clock
pub(crate) fn now() -> Instant {
    Instant::now()
}


/// Everything an actor waits for, on one channel: its application's commands, its handlers'
/// messages, and its transport's news
pub(crate) enum Input {
    Command(Command),
    Handler(SessionKey, HandlerMsg),
    /// Byte streams: a chunk the reader thread read (its first `len` bytes; 0 is the end)
    Read { buf: Vec<u8>, len: usize },
    /// Byte streams: the writer thread gave a buffer back while the actor waited for one, or
    /// (`ok == false`) the transport refused a write
    Written { ok: bool },
    /// HTTP server: from the connection threads
    #[cfg(feature = "http")]
    Http(crate::http_server::ToActor),
    /// HTTP client: from the request threads
    #[cfg(feature = "http")]
    Net(crate::http_client::FromNet),
}

/// Waits for the next input until `deadline`; `Ok(None)` when the deadline passed first,
/// `Err` once nobody can send any more
pub(crate) fn recv_until(
    inbox: &Receiver<Input>,
    deadline: Option<Instant>,
) -> Result<Option<Input>, ()> {
    let received = match deadline {
        Some(d) => inbox.recv_timeout(d.saturating_duration_since(now())),
        None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(input) => Ok(Some(input)),
        Err(RecvTimeoutError::Timeout) => Ok(None),
        Err(RecvTimeoutError::Disconnected) => Err(()),
    }
}

/// Where the application's handles and the handlers send to an actor: its inbox
#[derive(Clone)]
pub(crate) struct Route(mpsc::Sender<Input>);

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route").finish_non_exhaustive()
    }
}

impl Route {
    /// To an actor's inbox
    pub(crate) fn inbox(tx: mpsc::Sender<Input>) -> Self {
        Self(tx)
    }

    /// Sends an application's command to the actor; `Err` (and the command dropped) once
    /// it is gone
    pub(crate) fn command(&self, command: Command) -> Result<(), ()> {
        self.0.send(Input::Command(command)).map_err(|_| ())
    }
}

/// The pieces one byte-stream connection runs with
pub(crate) struct Connection {
    pub(crate) session: Session,
    pub(crate) dispatch: Option<Arc<dyn Dispatch>>,
    pub(crate) options: ClientOptions,
    pub(crate) ready: Option<Ready>,
}

/// Bytes the reader thread reads at once
const READ_CHUNK: usize = 64 * 1024;

/// Most bytes the actor takes out of the session's queue for one `write`
const WRITE_CHUNK: usize = 256 * 1024;

/// Buffers each way between the actor and its reader and writer threads: with two, the
/// reader reads the next chunk while the actor feeds the last one, and the actor fills the
/// next write while the writer writes the last one. All that ever sits outside the core's
/// own limits ([`mcp_sansio::Limits::max_queued_bytes`]) is these buffers.
const BUFFERS: usize = 2;

/// Most inputs the actor takes from its inbox before it settles the session (delivers the
/// events, hands the output to the writer)
const BATCH: usize = 64;

/// The actor of a byte-stream connection (stdio, a child's pipes, a socket): the one thread
/// that owns the `Session`. See [`open`].
pub(crate) struct Driver {
    session: Session,
    peer: Peer,
    dispatch: Option<Arc<dyn Dispatch>>,
    options: ClientOptions,
    /// The actor's own inbox, as handlers see it
    handlers: Handlers,
    inbox: Receiver<Input>,
    /// Chunks read and not fed yet: the session did not want them when they came
    unfed: VecDeque<(Vec<u8>, usize)>,
    /// Empty read buffers the actor holds until the session wants bytes
    read_spare: Vec<Vec<u8>>,
    /// Gives the reader thread its buffers back
    to_reader: mpsc::Sender<Vec<u8>>,
    /// The end of the input was fed
    eof: bool,
    /// What the writer thread writes; `None` once the connection is done with it
    to_writer: Option<mpsc::Sender<Vec<u8>>>,
    /// Empty write buffers the writer thread gave back
    write_spare: Receiver<Vec<u8>>,
    /// The actor waits for an empty write buffer: the writer wakes it when it gives one back
    wants_buffer: Arc<AtomicBool>,
    writer: Option<JoinHandle<()>>,
}

/// Opens a byte-stream connection: a reader thread reads `reader` and a writer thread writes
/// `writer`, each talking to the actor only through channels, so neither the peer's reading
/// nor its writing ever stops the actor; the returned [`Route`] takes the application's
/// commands to it from any thread. [`Driver::run`] is the actor: it must run (on a thread
/// of its own) for anything to happen.
pub(crate) fn open<R, W>(conn: Connection, reader: R, writer: W) -> (Route, Driver)
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let Connection {
        mut session,
        dispatch,
        options,
        ready,
    } = conn;
    session.anchor_wall_clock(now(), unix_ms());
    let (tx, inbox) = mpsc::channel();
    let (to_reader, reader_spare) = mpsc::channel();
    let (to_writer, writer_full) = mpsc::channel();
    let (writer_spare, write_spare) = mpsc::channel();
    let wants_buffer = Arc::new(AtomicBool::new(false));
    for _ in 0..BUFFERS {
        let _ = writer_spare.send(Vec::with_capacity(64 * 1024));
    }
    let read_spare = (0..BUFFERS).map(|_| vec![0; READ_CHUNK]).collect();
    let input = tx.clone();
    let _ = thread::Builder::new()
        .name("mcp-reader".into())
        .spawn(move || read(reader, &reader_spare, &input));
    let (input, wants) = (tx.clone(), Arc::clone(&wants_buffer));
    let writer = thread::Builder::new()
        .name("mcp-writer".into())
        .spawn(move || write(writer, &writer_full, &writer_spare, &input, &wants))
        .ok();
    if writer.is_none() {
        session.close(now());
    }
    let route = Route(tx);
    let driver = Driver {
        session,
        peer: Peer::new(ready),
        dispatch,
        options,
        handlers: Handlers::new(route.clone()),
        inbox,
        unfed: VecDeque::new(),
        read_spare,
        to_reader,
        eof: false,
        to_writer: Some(to_writer),
        write_spare,
        wants_buffer,
        writer,
    };
    (route, driver)
}

/// The reader thread: reads into each buffer the actor hands it (it hands them while the
/// session wants bytes, so a peer that sends faster than the session takes is held back by
/// the transport) and sends what it read, until the end of the input or of the actor
fn read<R: Read>(mut reader: R, spare: &Receiver<Vec<u8>>, actor: &mpsc::Sender<Input>) {
    while let Ok(mut buf) = spare.recv() {
        let len = loop {
            match reader.read(&mut buf) {
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                read => break read.unwrap_or(0),
            }
        };
        if actor.send(Input::Read { buf, len }).is_err() || len == 0 {
            return;
        }
    }
}

/// The writer thread: writes each buffer the actor sends and gives it back, until the actor
/// is done; then the transport closes (the peer sees the end)
fn write<W: Write>(
    mut writer: W,
    full: &Receiver<Vec<u8>>,
    spare: &mpsc::Sender<Vec<u8>>,
    actor: &mpsc::Sender<Input>,
    wants_buffer: &AtomicBool,
) {
    while let Ok(mut buf) = full.recv() {
        if writer.write_all(&buf).is_err() || writer.flush().is_err() {
            let _ = actor.send(Input::Written { ok: false });
            return;
        }
        buf.clear();
        let _ = spare.send(buf);
        // With the fence in `Driver::transmit`: either the actor sees this buffer, or this
        // sees that it waits for one.
        fence(Ordering::SeqCst);
        if wants_buffer.swap(false, Ordering::SeqCst) {
            let _ = actor.send(Input::Written { ok: true });
        }
    }
}

impl Driver {
    /// Runs the connection until its session closes: waits for the next input (or the
    /// core's next deadline), takes whatever else came meanwhile, then settles the session.
    /// At the end, stops every handler still running, lets every waiting caller know, writes
    /// what the session still had to send and closes the writer.
    pub(crate) fn run(mut self) {
        self.settle();
        while !self.session.is_closed() {
            match recv_until(&self.inbox, self.session.poll_timeout()) {
                Ok(Some(input)) => self.handle(input),
                Ok(None) => {
                    if self.session.poll_timeout().is_some_and(|d| d <= now()) {
                        self.session.handle_timeout(now());
                    }
                }
                // Never while the actor holds a sender itself (its `handlers`)
                Err(()) => break,
            }
            for _ in 1..BATCH {
                match self.inbox.try_recv() {
                    Ok(input) => self.handle(input),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
            self.settle();
        }
        self.peer.abort_all();
        // Callers still waiting learn that the connection is closed.
        self.peer = Peer::new(None);
        self.finish_writing();
    }

    /// Takes one input
    fn handle(&mut self, input: Input) {
        match input {
            Input::Command(command) => {
                let close = self.peer.on_command(&mut self.session, command);
                if close && self.dispatch.is_none() {
                    self.session.close(now());
                }
            }
            Input::Handler(_, msg) => self.peer.on_handler(&mut self.session, msg),
            Input::Read { buf, len } => self.unfed.push_back((buf, len)),
            Input::Written { ok } => {
                if !ok {
                    self.to_writer = None;
                    self.session.close(now());
                }
            }
            #[cfg(feature = "http")]
            Input::Http(_) | Input::Net(_) => {}
        }
    }

    /// After inputs: feeds what was read while the session wants it, delivers every event,
    /// hands the output to the writer, and gives the reader its buffers while the session
    /// wants more, until nothing moves
    fn settle(&mut self) {
        loop {
            let fed = self.feed();
            let mut delivered = false;
            while let Some(event) = self.session.poll_event() {
                delivered = true;
                self.peer.on_event(
                    &mut self.session,
                    event,
                    self.dispatch.as_ref(),
                    &self.options,
                    &self.handlers,
                );
            }
            let sent = self.transmit();
            if !(fed || delivered || sent) {
                break;
            }
        }
        if !self.eof && self.session.wants_read() {
            for buf in self.read_spare.drain(..) {
                let _ = self.to_reader.send(buf);
            }
        }
    }

    /// Feeds the chunks read while the session wants bytes; `true` if it fed any
    fn feed(&mut self) -> bool {
        let mut fed = false;
        while !self.session.is_closed() && self.session.wants_read() {
            let Some((buf, len)) = self.unfed.pop_front() else {
                break;
            };
            if len == 0 {
                self.eof = true;
                self.session.handle_eof(now());
            } else {
                self.session.handle_bytes(now(), &buf[..len]);
            }
            self.read_spare.push(buf);
            fed = true;
        }
        fed
    }

    /// Hands the session's output to the writer thread if it has a buffer free; `true` if
    /// it handed some
    fn transmit(&mut self) -> bool {
        if self.session.queued_bytes() == 0 {
            return false;
        }
        let Some(to_writer) = &self.to_writer else {
            // Nowhere to write: the connection is closing.
            let mut dropped = Vec::new();
            while self.session.poll_transmit(&mut dropped).is_some() {
                dropped.clear();
            }
            return false;
        };
        let mut out = match self.write_spare.try_recv() {
            Ok(out) => out,
            Err(_) => {
                self.wants_buffer.store(true, Ordering::SeqCst);
                // With the fence in `write`: either this sees the buffer given back
                // meanwhile, or the writer sees the flag and wakes the actor.
                fence(Ordering::SeqCst);
                match self.write_spare.try_recv() {
                    Ok(out) => {
                        self.wants_buffer.store(false, Ordering::SeqCst);
                        out
                    }
                    Err(_) => return false,
                }
            }
        };
        while out.len() < WRITE_CHUNK && self.session.poll_transmit(&mut out).is_some() {}
        if to_writer.send(out).is_err() {
            self.to_writer = None;
            self.session.close(now());
        }
        true
    }

    /// The session closed: hands the writer the rest of its output (waiting for the writer's
    /// buffers now), then closes the writer and waits until it wrote everything
    fn finish_writing(&mut self) {
        while self.session.queued_bytes() > 0 {
            let Some(to_writer) = &self.to_writer else {
                break;
            };
            let Ok(mut out) = self.write_spare.recv() else {
                break;
            };
            while out.len() < WRITE_CHUNK && self.session.poll_transmit(&mut out).is_some() {}
            if to_writer.send(out).is_err() {
                break;
            }
        }
        self.to_writer = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}
