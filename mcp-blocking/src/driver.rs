//! What drives a byte-stream connection on threads (stdio, a child's pipes, a socket, an
//! in-memory pipe): the session behind a lock, fed on whichever thread has input (see
//! [`open`]), over the shared per-session [`Peer`] on the binding's [`threads`](crate::threads)

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError, Weak};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use mcp_sansio::Session;
use mcp_sansio_runtime::peer::Side;
use mcp_sansio_runtime::push::{Hub, Registration};

use crate::pool;
use crate::threads::{
    App, ClientOptions, Command, Dispatch, HandlerMsg, Handlers, Peer, Ready, Route, Sink, app,
    now, unix_ms,
};

/// The pieces one byte-stream connection runs with
pub(crate) struct Connection<S: Side> {
    pub(crate) session: Session<S>,
    pub(crate) dispatch: Option<Arc<dyn Dispatch>>,
    pub(crate) options: ClientOptions,
    pub(crate) ready: Option<Ready>,
    /// A server's connections: this one joins before it reads, so no push is missed
    pub(crate) hub: Option<Arc<Hub>>,
}

/// Most bytes a writer takes out of the session's queue for one `write`: all that ever sits
/// outside the core's own limit ([`mcp_sansio::Limits::max_queued_bytes`]), besides one message
const WRITE_CHUNK: usize = 256 * 1024;

/// How long a closed connection waits for a write another thread has under way (its last
/// answers) before the driver returns anyway: a peer that stopped reading cannot hold the
/// caller forever
const FINAL_WRITE: Duration = Duration::from_secs(5);

/// A byte-stream connection (stdio, a child's pipes, a socket): no thread of its own sits
/// between the bytes and the session. Whoever has something for the session takes the lock
/// and feeds it on its own thread: the reader thread its bytes, a caller its request, a
/// handler its result. The same thread then delivers what the core decided (a response to
/// its caller, a request to the worker pool) before it lets go. A W1 round trip so crosses
/// threads only where it must: to the peer (the transport), to a worker (handlers run on
/// the pool), and back to the caller.
///
/// Nobody waits for the session's lock to hand it something: a caller or a handler that
/// finds the lock taken leaves its command or message in the stream's [`Stream::delegated`]
/// queue and goes on, and the holder takes it before it lets go (the holder checks for it
/// after letting go, too, so nothing waits in the queue with nobody holding the lock). Under
/// load (many callers, many handlers) this spares one sleep and one wake-up per message.
///
/// Nobody writes under the session's lock: a peer slow to read (or one that is itself
/// blocked writing to us) must never keep our reader from feeding the session, or two such
/// peers wait for each other forever. The session's own output queue is the write queue
/// (bounded by the core: `SendError::Blocked`, `wants_read`). One thread at a time holds the
/// writer token ([`State::writing`]): it takes a chunk of the output under the lock, writes
/// it outside, and comes back for what was queued meanwhile until nothing is left; a thread
/// that finds the token taken leaves its output to the holder. A caller or a handler takes
/// the token itself (no hand-off on the fast path); the reader thread and the timers never
/// block in `write`: they leave their output to the writer thread.
///
/// The driver thread ([`Driver::run`]) only keeps the core's timers and notices the close.
struct Stream<S: Side, W> {
    state: Mutex<State<S>>,
    /// What callers and handlers left for the holder of `state`, in the order they came
    delegated: Mutex<Vec<Delegated>>,
    /// `delegated` is not empty: whoever lets go of `state` looks
    has_delegated: AtomicBool,
    /// Wakes the reader while it waits for the session to want bytes (backpressure)
    readable: Sender<()>,
    /// The session wants bytes and is open, as of the last settling: the reader reads again
    /// without taking the lock to ask
    may_read: AtomicBool,
    /// Wakes the driver thread: an earlier deadline, or the session closed
    wake: Sender<()>,
    /// The transport's writing half: only the holder of the writer token locks it, never
    /// while it holds the session's lock; `None` once the connection ended
    writer: Mutex<Option<W>>,
    /// Wakes the writer thread: output the reader thread or a timer left
    write_wake: Sender<()>,
    /// Counted in `mcp.{role}.connections.active` while the stream lives (feature `metrics`)
    _open: mcp_sansio_runtime::meter::Open,
}

struct State<S: Side> {
    session: Session<S>,
    peer: Peer,
    /// The writer token's buffer, kept here between writes so it is not allocated per write
    out: Vec<u8>,
    /// A thread holds the writer token: it writes outside the lock and comes back for
    /// whatever was queued meanwhile
    writing: bool,
    app: App,
    handlers: Handlers,
    /// The deadline the driver thread sleeps until (`None`: no deadline)
    sleeps_until: Option<Instant>,
    /// The reader waits on `readable`
    reader_waits: bool,
    /// The driver ended: nothing reaches the session any more
    done: bool,
}

/// What a caller or a handler left for the session's lock holder
enum Delegated {
    Command(Command),
    Handler(HandlerMsg),
}

/// Whether the thread that settles the session may block in `write`
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writes {
    /// A caller, a handler, the writer thread: takes the writer token if it is free
    Itself,
    /// The reader thread, a timer: leaves the output to the writer thread
    Leave,
}

impl<S: Side> State<S> {
    /// Takes what callers and handlers left while another thread held the lock, in order
    fn take_delegated<W>(&mut self, stream: &Stream<S, W>) {
        if !stream.has_delegated.load(Ordering::SeqCst) {
            return;
        }
        let items = {
            let mut queue = stream
                .delegated
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            stream.has_delegated.store(false, Ordering::SeqCst);
            std::mem::take(&mut *queue)
        };
        if self.done {
            // Once the connection ended, a dropped command tells its caller so.
            return;
        }
        for item in items {
            match item {
                Delegated::Command(command) => self.command(command),
                Delegated::Handler(msg) => S::on_handler(&mut self.peer, &mut self.session, msg),
            }
        }
    }

    /// An application's command
    fn command(&mut self, command: Command) {
        let close = self.peer.on_command(&mut self.session, command);
        if close && self.app.dispatch.is_none() {
            self.session.close(now());
        }
    }

    /// Delivers every event of the session
    fn deliver(&mut self) {
        while let Some(event) = self.session.poll_event() {
            S::on_event(
                &mut self.peer,
                &mut self.session,
                event,
                &self.app,
                &self.handlers,
            );
        }
    }

    /// Wakes the reader if the session wants bytes again, the driver if its deadline moved
    /// closer or the session closed
    fn signal<W>(&mut self, stream: &Stream<S, W>) {
        let closed = self.session.is_closed();
        let may_read = !closed && !self.done && self.session.wants_read();
        stream.may_read.store(may_read, Ordering::Release);
        if self.reader_waits && (closed || self.session.wants_read()) {
            // One pending wake is enough: the reader checks again when it wakes.
            let _ = stream.readable.try_send(());
        }
        let deadline = self.session.poll_timeout();
        let sooner = match (deadline, self.sleeps_until) {
            (Some(d), Some(s)) => d < s,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if closed || sooner {
            // The driver re-reads the deadline when it wakes; one pending wake is enough.
            self.sleeps_until = deadline;
            let _ = stream.wake.try_send(());
        }
    }
}

/// Settles the session after an input or a command, then lets go of the lock: takes what
/// others left meanwhile, delivers every event, and writes the output if `writes` allows and
/// no other thread holds the writer token (outside the lock, in order, coming back for what
/// was queued meanwhile); else the output waits in the session's queue for the token's
/// holder or the writer thread. Once it let go, it looks for what was left meanwhile.
fn settle<'a, S: Side, W: Write>(
    stream: &'a Stream<S, W>,
    mut st: MutexGuard<'a, State<S>>,
    writes: Writes,
) {
    loop {
        let deferring = pool::defer();
        st = settle_locked(stream, st, writes);
        drop(st);
        // The workers of the jobs queued meanwhile start now that the lock is free.
        drop(deferring);
        match stream.relock_for_delegated() {
            Some(again) => st = again,
            None => return,
        }
    }
}

/// Lets go of the lock without settling, unless something was left meanwhile
fn unlock<S: Side, W: Write>(stream: &Stream<S, W>, st: MutexGuard<'_, State<S>>, writes: Writes) {
    drop(st);
    if let Some(st) = stream.relock_for_delegated() {
        settle(stream, st, writes);
    }
}

/// [`settle`] under the lock (it lets go only while it writes)
fn settle_locked<'a, S: Side, W: Write>(
    stream: &'a Stream<S, W>,
    mut st: MutexGuard<'a, State<S>>,
    writes: Writes,
) -> MutexGuard<'a, State<S>> {
    loop {
        st.take_delegated(stream);
        st.deliver();
        st.signal(stream);
        if st.writing || st.session.queued_bytes() == 0 {
            break;
        }
        if writes == Writes::Leave {
            // One pending wake is enough: the writer thread drains until nothing is left.
            let _ = stream.write_wake.try_send(());
            break;
        }
        st.writing = true;
        let mut out = std::mem::take(&mut st.out);
        while out.len() < WRITE_CHUNK && st.session.poll_transmit(&mut out).is_some() {}
        drop(st);
        // Handlers start while this thread writes.
        pool::start_deferred();
        let written = {
            let mut writer = stream.writer.lock().unwrap_or_else(PoisonError::into_inner);
            let written = match writer.as_mut() {
                Some(w) => w.write_all(&out).and_then(|()| w.flush()),
                None => Err(std::io::ErrorKind::NotConnected.into()),
            };
            if written.is_err() {
                // Later output has nowhere to go either.
                *writer = None;
            } else {
                mcp_sansio_runtime::meter::sent("stream", out.len());
            }
            written
        };
        out.clear();
        st = stream.lock();
        st.out = out;
        st.writing = false;
        if let Err(e) = written {
            st.session
                .handle_transport_error(now(), format!("writing to the connection failed: {e}"));
        }
    }
    if st.done && !st.writing && st.session.queued_bytes() == 0 {
        // The connection ended and its last bytes are out: the peer sees the end. No token
        // holder has the writer locked now.
        let writer = stream
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut writer) = writer {
            let _ = writer.flush();
        }
    }
    st
}

impl<S: Side, W> Stream<S, W> {
    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock, unless another thread holds it
    fn try_lock(&self) -> Option<MutexGuard<'_, State<S>>> {
        match self.state.try_lock() {
            Ok(st) => Some(st),
            Err(TryLockError::Poisoned(st)) => Some(st.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// After letting go of the lock: the lock again if something was left meanwhile and no
    /// other thread holds it (a thread that does takes it before it lets go)
    fn relock_for_delegated(&self) -> Option<MutexGuard<'_, State<S>>> {
        // With the fence in `delegate`: either we see what was left, or the thread that
        // left it sees the lock free and takes it itself.
        fence(Ordering::SeqCst);
        if !self.has_delegated.load(Ordering::SeqCst) {
            return None;
        }
        self.try_lock()
    }

    /// Leaves `item` for the lock's holder; the lock if it turned out free after all (the
    /// caller then takes the queue itself)
    fn delegate(&self, item: Delegated) -> Option<MutexGuard<'_, State<S>>> {
        self.delegated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(item);
        self.has_delegated.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.try_lock()
    }
}

impl<S: Side, W: Write + Send> Stream<S, W> {
    /// Takes `item` to the session: at once on this thread if the lock is free, else through
    /// the holder; `Err` once the connection is gone
    fn enter(&self, item: Delegated) -> Result<(), ()> {
        let st = match self.try_lock() {
            Some(mut st) => {
                if st.done {
                    unlock(self, st, Writes::Itself);
                    return Err(());
                }
                // What others left came first.
                st.take_delegated(self);
                match item {
                    Delegated::Command(command) => st.command(command),
                    Delegated::Handler(msg) => {
                        let State { session, peer, .. } = &mut *st;
                        S::on_handler(peer, session, msg);
                    }
                }
                st
            }
            // The holder takes it (or drops it, and so tells a caller, if the connection
            // ended); if the lock turned out free, settling takes it here.
            None => match self.delegate(item) {
                Some(st) => st,
                None => return Ok(()),
            },
        };
        settle(self, st, Writes::Itself);
        Ok(())
    }
}

impl<S: Side, W: Write + Send> Sink for Stream<S, W> {
    fn handler(&self, msg: HandlerMsg) -> Result<(), ()> {
        self.enter(Delegated::Handler(msg))
    }

    fn command(&self, command: Command) -> Result<(), ()> {
        self.enter(Delegated::Command(command))
    }
}

/// Runs a byte-stream connection's timers until it closes; see [`open`]
pub(crate) struct Driver<S: Side, W> {
    stream: Arc<Stream<S, W>>,
    woken: Receiver<()>,
    /// In the server's hub until the connection ends
    registration: Option<Registration>,
}

/// Opens a byte-stream connection: a reader thread starts reading `reader`, a writer thread
/// waits to write what the reader and the timers leave; the returned [`Route`] takes the
/// application's commands to the session from any thread; [`Driver::run`] must run (on a
/// thread of its own) for the core's timers to fire and the connection to end
pub(crate) fn open<S: Side, R, W>(
    conn: Connection<S>,
    reader: R,
    writer: W,
) -> (Route, Driver<S, W>)
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let Connection {
        mut session,
        dispatch,
        options,
        ready,
        hub,
    } = conn;
    session.anchor_wall_clock(now(), unix_ms());
    // The connection's span (a child of the caller's) is the session span's parent.
    let role = if ready.is_some() { "client" } else { "server" };
    let span = mcp_sansio_runtime::trace::connection(role);
    let peer = span.in_scope(|| Peer::new(ready));
    let (wake, woken) = crossbeam_channel::bounded(1);
    let (write_wake, write_woken) = crossbeam_channel::bounded(1);
    let (readable, reader_woken) = crossbeam_channel::bounded(1);
    let stream = Arc::new_cyclic(|me: &Weak<Stream<S, W>>| {
        let sink: Weak<dyn Sink> = me.clone();
        Stream {
            state: Mutex::new(State {
                session,
                peer,
                out: Vec::with_capacity(64 * 1024),
                writing: false,
                app: app(dispatch, &options),
                handlers: Handlers::new(Route::direct(sink)),
                sleeps_until: None,
                reader_waits: false,
                done: false,
            }),
            delegated: Mutex::new(Vec::new()),
            has_delegated: AtomicBool::new(false),
            readable,
            may_read: AtomicBool::new(false),
            wake,
            writer: Mutex::new(Some(writer)),
            write_wake,
            _open: mcp_sansio_runtime::meter::Open::connection(role, "stream"),
        }
    });
    let weak = Arc::downgrade(&stream);
    let _ = thread::Builder::new()
        .name("mcp-writer".into())
        .spawn(move || write(&write_woken, &weak));
    let me: Weak<Stream<S, W>> = Arc::downgrade(&stream);
    let sink: Weak<dyn Sink> = me;
    let route = Route::direct(sink);
    // What the server pushes enters the session as a handler message.
    let registration = hub.map(|hub| {
        let pushes = Handlers::new(route.clone());
        hub.register(move |push| pushes.send(HandlerMsg::Push(push)).is_ok())
    });
    // The client's first bytes (its handshake) go out now.
    settle(&stream, stream.lock(), Writes::Itself);
    let weak = Arc::downgrade(&stream);
    let _ = thread::Builder::new()
        .name("mcp-reader".into())
        .spawn(move || read(reader, &reader_woken, &weak));
    let driver = Driver {
        stream,
        woken,
        registration,
    };
    (route, driver)
}

/// The writer thread: writes what the reader thread and the timers left, until the
/// connection is gone
fn write<S: Side, W: Write + Send>(woken: &Receiver<()>, stream: &Weak<Stream<S, W>>) {
    // The sender lives in the stream: the wait ends when the stream does.
    while woken.recv().is_ok() {
        let Some(stream) = stream.upgrade() else {
            return;
        };
        settle(&stream, stream.lock(), Writes::Itself);
    }
}

/// The reader thread: reads a chunk while the session wants bytes, and feeds it to the
/// session itself; a peer that sends faster than the session takes is held back by the
/// transport. It never writes, so it never waits for the peer to read.
fn read<R: Read, S: Side, W: Write + Send>(
    mut reader: R,
    woken: &Receiver<()>,
    stream: &Weak<Stream<S, W>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        loop {
            let Some(stream) = stream.upgrade() else {
                return;
            };
            if stream.may_read.load(Ordering::Acquire) {
                break;
            }
            let mut st = stream.lock();
            st.reader_waits = false;
            if st.done || st.session.is_closed() {
                unlock(&stream, st, Writes::Leave);
                return;
            }
            if st.session.wants_read() {
                unlock(&stream, st, Writes::Leave);
                break;
            }
            st.reader_waits = true;
            unlock(&stream, st, Writes::Leave);
            drop(stream);
            // The sender lives in the stream: the wait ends when the stream does.
            if woken.recv().is_err() {
                return;
            }
        }
        let read = reader.read(&mut buf);
        let Some(stream) = stream.upgrade() else {
            return;
        };
        let mut st = stream.lock();
        if st.done {
            unlock(&stream, st, Writes::Leave);
            return;
        }
        match &read {
            Ok(n) if *n > 0 => {
                mcp_sansio_runtime::meter::received("stream", *n);
                let st = &mut *st;
                st.session.handle_bytes(now(), &buf[..*n]);
                st.peer.took_input(&st.session);
            }
            Ok(_) => st.session.handle_eof(now()),
            Err(e) => st
                .session
                .handle_transport_error(now(), format!("reading from the connection failed: {e}")),
        }
        settle(&stream, st, Writes::Leave);
        if !matches!(read, Ok(n) if n > 0) {
            return;
        }
    }
}

impl<S: Side, W: Write + Send> Driver<S, W> {
    /// Fires the core's timers until the session closes, then stops every handler still
    /// running, drops what waits for the session, writes what the session still had to
    /// send (unless a writer is at it, which then does) and closes the writer
    pub(crate) fn run(self) {
        let Self {
            stream,
            woken,
            registration,
        } = self;
        loop {
            let deadline = {
                let mut st = stream.lock();
                if st.session.is_closed() {
                    unlock(&stream, st, Writes::Leave);
                    break;
                }
                let deadline = st.session.poll_timeout();
                st.sleeps_until = deadline;
                unlock(&stream, st, Writes::Leave);
                deadline
            };
            let timed_out = match deadline {
                Some(d) => woken.recv_deadline(d).is_err(),
                None => woken.recv().is_err(),
            };
            if timed_out {
                let mut st = stream.lock();
                if st.session.poll_timeout().is_some_and(|d| d <= now()) {
                    st.session.handle_timeout(now());
                    // A peer that does not read must not keep the timers from firing.
                    settle(&stream, st, Writes::Leave);
                } else {
                    unlock(&stream, st, Writes::Leave);
                }
            }
        }
        drop(registration);
        let mut st = stream.lock();
        st.done = true;
        st.peer.abort_all();
        // Callers still waiting learn that the connection is closed.
        st.peer.forget_calls();
        let _ = stream.readable.try_send(());
        // Settling drops what callers and handlers left: its callers learn it too.
        settle(&stream, st, Writes::Itself);
        // Another thread may still be writing the last answers. The caller returns (and a
        // stdio server's process exits) only once they are out, or once the peer has not
        // read them for `FINAL_WRITE`.
        let until = now() + FINAL_WRITE;
        loop {
            let st = stream.lock();
            if !st.writing {
                if st.session.queued_bytes() == 0 {
                    break;
                }
                settle(&stream, st, Writes::Itself);
                continue;
            }
            drop(st);
            if now() >= until {
                break;
            }
            thread::sleep(Duration::from_millis(1));
        }
    }
}
