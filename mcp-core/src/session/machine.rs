//! The public state machine: [`Session`] (a [`ClientSession`] or a [`ServerSession`]), its
//! getters, inputs, commands and outputs

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

use serde_json::value::RawValue;

use super::engine::{Core, Side, Stats};
use super::phase::Phase;
use super::{
    CallError, Caller, CancelError, ClientConfig, CloseReason, EraMode, Event, InboundId,
    OutboundId, PeerInfo, RequestOptions, RespondError, Responder, Role, SendError, ServerConfig,
    Transmit, outbound_table, role,
};
use crate::codec::{FrameError, LineCodec};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::version::ProtocolVersion;

/// Protocol state for one MCP connection: a [`ClientSession`] or a [`ServerSession`]
///
/// `Session` performs no I/O and never reads a clock. Its methods are of four kinds:
/// - getters taking `&self`: [`version`](Self::version), [`peer`](Self::peer),
///   [`wants_read`](Self::wants_read), [`is_closed`](Self::is_closed), [`stats`](Self::stats);
/// - inputs: [`handle_bytes`](Self::handle_bytes), [`handle_message`](Self::handle_message),
///   [`handle_eof`](Self::handle_eof), [`handle_timeout`](Self::handle_timeout);
/// - commands: [`send_request`](Self::send_request),
///   [`send_notification`](Self::send_notification), [`respond`](Self::respond),
///   [`respond_error`](Self::respond_error), [`cancel`](Self::cancel), [`close`](Self::close),
///   and the role's own: a client's [`provide_input`](Self::provide_input), a server's
///   [`inbound`](Self::inbound) (progress, asking for input, tasks, notifications for one
///   request) and change notifications;
/// - outputs: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event)
///   (a [`ClientEvent`](super::ClientEvent) or a [`ServerEvent`](super::ServerEvent)), [`poll_timeout`](Self::poll_timeout).
///
/// Typed commands come first; each has a raw-JSON escape hatch named `*_raw`.
///
/// After every input or command, drain `poll_transmit` and `poll_event` until both return
/// `None`, then read `poll_timeout`. Inputs never fail: what the peer did becomes events,
/// automatic error replies, or a `Closed` event. Commands fail only for local misuse, and
/// leave the session unchanged when they do.
pub struct Session<R: Role> {
    pub(super) codec: LineCodec,
    pub(super) core: Core,
    pub(super) role: PhantomData<R>,
}

/// The client end of a connection: it starts the handshake (or discovery), sends requests and
/// answers the server's input requests
pub type ClientSession = Session<role::Client>;

/// The server end of a connection: it answers requests (both eras at once), asks for input on
/// their behalf, runs tasks and tells subscribers of changes
pub type ServerSession = Session<role::Server>;

// Both ends move between threads and survive a panic in the code that drives them.
const _: () = {
    const fn assert_send_sync_unwind_safe<T: Send + Sync + std::panic::UnwindSafe>() {}
    assert_send_sync_unwind_safe::<ClientSession>();
    assert_send_sync_unwind_safe::<ServerSession>();
};

impl<R: Role> std::fmt::Debug for Session<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("codec", &self.codec)
            .field("core", &self.core)
            .finish()
    }
}

impl ClientSession {
    /// A client session; it starts the handshake (or discovery) at once
    ///
    /// Drain [`poll_transmit`](Self::poll_transmit): the first message (`initialize` or
    /// `server/discover`) is already queued. [`ClientEvent::Ready`](super::ClientEvent::Ready) follows once the server
    /// answered; application requests fail with [`SendError::NotReady`] before it.
    pub fn new(config: Arc<ClientConfig>, now: Instant) -> Self {
        let caps = serde_json::to_string(&config.capabilities).expect("a Value serializes");
        let info = serde_json::to_string(&config.info).expect("Implementation serializes");
        let era = config.era;
        let mut core = Core::new(Side::Client(config), now, caps, info);
        match era {
            EraMode::Legacy(v) => core.start_initialize(v),
            EraMode::Auto | EraMode::Modern => core.start_discover(ProtocolVersion::LATEST, 0),
        }
        Self::with_core(core)
    }

    /// The application's request that travels under the wire id `wire` (a retry of a
    /// multi-round-trip call travels under a new one)
    pub(crate) fn request_of_wire(&self, wire: u64) -> Option<OutboundId> {
        self.core.outbound.app_of(outbound_table::WireId(wire))
    }

    /// Whether the application's request `id` is still in flight
    pub(crate) fn has_request(&self, id: OutboundId) -> bool {
        self.core.outbound.has_call(id)
    }

    /// The largest message this session reads ([`Limits::max_message_size`])
    pub(crate) fn max_message_size(&self) -> usize {
        self.core.limits().max_message_size
    }

    /// Ends our request `id` with `error` instead of an answer (the HTTP transport could
    /// not carry it, or dropped an answer too large to read); `false` when it is not in
    /// flight
    pub(crate) fn fail_request(&mut self, now: Instant, id: &RequestId, error: CallError) -> bool {
        self.core.tick(now);
        self.core.fail_outbound(id, error)
    }

    /// The HTTP transport started a new session after a 404: tells the application
    /// ([`ClientEvent::SessionRenewed`])
    pub(crate) fn session_renewed(&mut self, now: Instant, version: ProtocolVersion) {
        self.core.tick(now);
        if !self.is_closed() {
            self.core
                .events
                .push_back(Event::SessionRenewed { version });
        }
    }
}

impl ServerSession {
    /// A server session; it waits for the client's first message
    ///
    /// One server session serves both eras: a legacy client's `initialize` and a modern
    /// client's per-request `_meta` both work.
    pub fn new(config: Arc<ServerConfig>, now: Instant) -> Self {
        let caps = serde_json::to_string(&config.capabilities).expect("a Value serializes");
        let info = serde_json::to_string(&config.info).expect("Implementation serializes");
        let core = Core::new(Side::Server(config), now, caps, info);
        Self::with_core(core)
    }
}

impl<R: Role> Session<R> {
    pub(super) fn with_core(core: Core) -> Self {
        Self {
            codec: LineCodec::new(core.limits().max_message_size),
            core,
            role: PhantomData,
        }
    }

    // --- getters -------------------------------------------------------------------------

    /// The negotiated version: after the legacy handshake, or after a client's discovery
    ///
    /// `None` before that, and on a server that serves modern requests (each names its own
    /// version in [`InboundRequest::version`](super::InboundRequest::version)).
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.core.phase.version()
    }

    /// What the peer declared about itself, once known (see `Ready` event)
    pub fn peer(&self) -> Option<&PeerInfo> {
        self.core.peer.as_deref()
    }

    /// [`peer`](Self::peer), shared: what a handler's request context keeps without copying
    pub fn peer_shared(&self) -> Option<Arc<PeerInfo>> {
        self.core.peer.clone()
    }

    /// The JSON-RPC id the peer gave inbound request `id`, while the request awaits our
    /// answer (`None` once answered, cancelled or unknown)
    ///
    /// For the binding's diagnostics (a request's log line names the id the peer sees); the
    /// session matches answers by [`InboundId`] and never needs it.
    pub fn inbound_wire_id(&self, id: InboundId) -> Option<&RequestId> {
        self.core.inbound.get(id).map(|entry| &entry.wire_id)
    }

    /// Whether the caller should read more input
    ///
    /// False while too many events wait in `poll_event`, too many inbound requests are
    /// unanswered, too many bytes wait in `poll_transmit`, complete messages wait
    /// unprocessed, or the session is closed. Stop reading
    /// the transport until it turns true again; the pipe then pushes back on the peer.
    /// Messages that waited are processed by [`handle_timeout`](Self::handle_timeout) once
    /// [`poll_timeout`](Self::poll_timeout) says they can be: the `poll_*` methods only
    /// drain.
    pub fn wants_read(&self) -> bool {
        self.core.accepts_input() && !self.core.backlog && !self.core.eof
    }

    /// Whether a `Closed` event has been emitted (or is queued)
    pub fn is_closed(&self) -> bool {
        matches!(self.core.phase, Phase::Closed)
    }

    /// Counters of dropped peer input
    pub fn stats(&self) -> Stats {
        self.core.stats
    }

    /// Requests we sent that await an answer (application requests only)
    pub fn outbound_in_flight(&self) -> usize {
        self.core.outbound.app_len()
    }

    /// Requests from the peer that await our answer
    pub fn inbound_in_flight(&self) -> usize {
        self.core.inbound.len()
    }

    /// Events waiting in [`poll_event`](Self::poll_event) (for diagnostics and tests of the
    /// limits)
    pub fn queued_events(&self) -> usize {
        self.core.events.len()
    }

    /// Bytes waiting in [`poll_transmit`](Self::poll_transmit) (for diagnostics and tests of
    /// the limits)
    pub fn queued_bytes(&self) -> usize {
        self.core.out.len()
    }

    /// Releases the spare capacity of the session's buffers and tables
    ///
    /// Buffers keep their largest size so a busy session does not allocate per message; a
    /// binding holding many idle sessions (an HTTP server) may call this when one goes idle.
    /// Changes nothing observable.
    pub fn shrink_to_fit(&mut self) {
        self.codec.shrink_to_fit();
        self.core.out.shrink_to_fit();
        self.core.events.shrink_to_fit();
        self.core.outbound.shrink_to_fit();
        self.core.inbound.shrink_to_fit();
        self.core.followed.shrink_to_fit();
    }

    // --- inputs --------------------------------------------------------------------------

    /// Feeds bytes read from a byte-stream transport (stdio): newline-delimited JSON
    ///
    /// Any chunking works. Complete messages are processed at once unless the application is
    /// behind (see [`wants_read`](Self::wants_read)); the rest waits, bounded by
    /// [`Limits::max_message_size`](super::Limits::max_message_size).
    pub fn handle_bytes(&mut self, now: Instant, data: &[u8]) {
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        self.codec.push(data);
        // A caller that ignores `wants_read` cannot grow the buffer without bound: past one
        // maximum message of backlog, frames are processed anyway and the overload rules
        // (error replies, dropped notifications) keep the queues bounded.
        let force = self.codec.buffered() > self.core.limits().max_message_size;
        self.pump(force);
    }

    /// Who sends the messages of this connection from now on: their requests carry it
    /// ([`InboundRequest::caller`](super::InboundRequest::caller)) and what outlives them is bound to its principal
    ///
    /// For a byte-stream connection whose user the application authenticated itself; an
    /// HTTP server gives each message its own ([`handle_message_as`](Self::handle_message_as)).
    pub fn set_caller(&mut self, caller: Option<Arc<Caller>>) {
        self.core.caller = caller;
    }

    /// The caller of this connection, as [`set_caller`](Self::set_caller) left it
    pub fn caller(&self) -> Option<&Arc<Caller>> {
        self.core.caller.as_ref()
    }

    /// [`handle_message`](Self::handle_message) for a message from `caller` (the HTTP
    /// request it came in: its principal, headers, session); the connection's own caller
    /// is kept for the messages after it
    pub fn handle_message_as(&mut self, now: Instant, message: &[u8], caller: Option<Arc<Caller>>) {
        let own = std::mem::replace(&mut self.core.caller, caller);
        self.handle_message(now, message);
        self.core.caller = own;
    }

    /// [`handle_message_as`](Self::handle_message_as) for a request the HTTP rules decoded
    /// already from `body` (its only message): the session takes it without parsing the
    /// body again, nor its params when the rules read them (`parsed`)
    pub(crate) fn handle_request_as(
        &mut self,
        now: Instant,
        body: &[u8],
        request: crate::jsonrpc::Request,
        parsed: Option<super::ParamsWithMeta>,
        caller: Option<Arc<Caller>>,
    ) {
        if body.len() > self.core.limits().max_message_size {
            // Refused as the bytes would be.
            self.handle_message_as(now, body, caller);
            return;
        }
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        let own = std::mem::replace(&mut self.core.caller, caller);
        self.core.handle_request(request, parsed, None);
        self.core.caller = own;
    }

    /// Feeds one complete message from a message-framed transport (an HTTP body, an SSE
    /// `data` payload)
    pub fn handle_message(&mut self, now: Instant, message: &[u8]) {
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        if message.len() > self.core.limits().max_message_size {
            let limit = self.core.limits().max_message_size;
            self.core
                .frame_error(&crate::codec::too_long_told(limit, message));
            return;
        }
        match std::str::from_utf8(message) {
            Ok(text) => self.core.handle_frame(text),
            Err(_) => self.core.frame_error(&FrameError::InvalidUtf8),
        }
    }

    /// The peer closed its sending side (EOF on stdin, stream closed)
    ///
    /// Requests we sent fail with [`CallError::SessionClosed`] at once. Requests the peer
    /// sent may still be answered; a `Closed` event follows once the last is answered (at
    /// once if none is pending).
    pub fn handle_eof(&mut self, now: Instant) {
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        self.pump(true);
        while let Some(frame) = self.codec.finish() {
            match frame {
                Ok(text) => self.core.handle_frame(text),
                Err(e) => self.core.frame_error(&e),
            }
        }
        self.core.backlog = false;
        self.core.peer_eof();
    }

    /// Fires every timer due at or before `now`
    ///
    /// Safe to call early or more than once. A timed-out request sends
    /// `notifications/cancelled` to the peer and ends with [`CallError::TimedOut`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.core.tick(now);
        // Complete messages that waited while the application was behind are processed now
        // that it caught up: `poll_timeout` said so by being due at once.
        if self.core.backlog {
            self.pump(false);
        }
        self.core.fire_timers();
    }

    // --- commands ------------------------------------------------------------------------

    /// Sends a request by method name with raw JSON params (the escape hatch of
    /// [`send_request`](Self::send_request), for methods the schema does not type); its
    /// outcome arrives as exactly one `Response` event with the returned id
    ///
    /// `params` must be a JSON object. On a modern session the core adds the `_meta` keys the
    /// era requires (protocol version, client capabilities and info); with
    /// [`RequestOptions::with_progress`] it adds a `progressToken`.
    ///
    /// # Errors
    /// [`SendError`] for local misuse: not ready, closed, a method this side may not send in
    /// this era, a capability the peer did not declare, or a full queue.
    pub fn send_request_raw(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        self.core.tick(now);
        self.core.send_request(method, params, options)
    }

    /// Sends a notification by method name with raw JSON params (the escape hatch of
    /// [`send_notification`](Self::send_notification))
    ///
    /// # Errors
    /// [`SendError`] when closed, blocked, before a client's handshake, for notifications the
    /// core sends itself (`initialized`, `cancelled`, `progress`), or params that are not an
    /// object.
    pub fn send_notification_raw(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.core.send_notification(method, params)
    }

    /// Answers an inbound request with a raw JSON result (the escape hatch of
    /// [`respond`](Self::respond))
    ///
    /// Consumes the [`Responder`]. If the peer cancelled the request or the session closed,
    /// nothing is sent and this returns `Ok`. On a modern server the core adds
    /// `resultType: "complete"` when absent and the server's info in `_meta`.
    ///
    /// # Errors
    /// [`RespondError::ResultNotAnObject`] (with the responder handed back) when `result` is
    /// not a JSON object; nothing was sent.
    pub fn respond_raw(
        &mut self,
        responder: Responder,
        result: &RawValue,
    ) -> Result<(), RespondError> {
        self.core.respond(responder, Ok(result))
    }

    /// Answers an inbound request with a JSON-RPC error
    ///
    /// Consumes the [`Responder`]; a no-op if the peer cancelled or the session closed.
    pub fn respond_error(&mut self, responder: Responder, error: &ErrorObject) {
        let _ = self.core.respond(responder, Err(error));
    }

    /// Cancels a request we sent
    ///
    /// Sends `notifications/cancelled` and emits its `Response` event with
    /// [`CallError::Cancelled`]; a late answer from the peer is dropped.
    ///
    /// # Errors
    /// [`CancelError::NotInFlight`] if the request already ended.
    pub fn cancel(
        &mut self,
        now: Instant,
        id: OutboundId,
        reason: Option<&str>,
    ) -> Result<(), CancelError> {
        self.core.tick(now);
        self.core.cancel(id, reason)
    }

    /// Closes the session now
    ///
    /// Every request we sent fails with [`CallError::SessionClosed`], every unanswered inbound
    /// request is dropped, then a `Closed` event is emitted. Bytes already queued stay
    /// available from `poll_transmit`.
    pub fn close(&mut self, now: Instant) {
        self.core.tick(now);
        self.core.close(CloseReason::Local);
    }

    /// The transport failed locally (a write error, a stream that broke): the session
    /// closes with [`CloseReason::Transport`] saying `why` (name the target and the cause:
    /// "could not write to the server `npx`: Broken pipe (os error 32)"); requests in
    /// flight end with [`CallError::SessionClosed`]
    pub fn handle_transport_error(&mut self, now: Instant, why: impl Into<String>) {
        self.core.tick(now);
        self.core.close(CloseReason::Transport(why.into()));
    }

    // --- outputs -------------------------------------------------------------------------

    /// Appends the next outbound message (JSON followed by `\n`) to `buf`
    ///
    /// `None` when nothing is queued.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let t = self.core.out.pop_into(buf)?;
        if self.core.blocked && self.core.out.len() <= self.core.limits().max_queued_bytes / 2 {
            self.core.blocked = false;
            self.core.events.push_back(Event::Unblocked);
        }
        Some(t)
    }

    /// The next event (a [`ClientEvent`](super::ClientEvent) or a [`ServerEvent`](super::ServerEvent)), or `None` when drained
    #[must_use]
    pub fn poll_event(&mut self) -> Option<R::Event> {
        loop {
            let event = self.core.events.pop_front()?;
            if let Some(event) = R::event(event) {
                return Some(event);
            }
        }
    }

    /// The instant at which [`handle_timeout`](Self::handle_timeout) should next be called
    ///
    /// `None` when no timer is armed. Re-read it after every input and command, and after
    /// draining the outputs: when complete messages waited while the application was behind
    /// (see [`wants_read`](Self::wants_read)) and it has caught up, it is due at once (the
    /// last instant the session was given), and `handle_timeout` processes them.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        // Messages that waited while the application was behind are due at once when it
        // caught up: `handle_timeout` processes them with the caller's clock.
        if self.core.backlog && self.core.accepts_input() {
            return Some(self.core.now);
        }
        let requests = self.core.outbound.next_deadline();
        let tasks = self.core.server_tasks.next_expiry();
        let store = self.core.shared.next_deadline();
        requests.into_iter().chain(tasks).chain(store).min()
    }

    /// Processes complete frames waiting in the codec while the application keeps up
    pub(super) fn pump(&mut self, force: bool) {
        loop {
            if !force && !self.core.accepts_input() {
                self.core.backlog = true;
                return;
            }
            if self.is_closed() {
                return;
            }
            // Forced (the caller ignores `wants_read`) while our output is not being written
            // either: every frame could add a reply, so frames are dropped unread instead.
            let flooded = force && self.core.out.len() > self.core.limits().max_queued_bytes;
            match self.codec.next_frame() {
                Some(_) if flooded => self.core.stats.dropped_messages += 1,
                Some(Ok(text)) => self.core.handle_frame(text),
                Some(Err(e)) => self.core.frame_error(&e),
                None => {
                    self.core.backlog = false;
                    return;
                }
            }
        }
    }
}
