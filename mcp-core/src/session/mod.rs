//! The session engine: one MCP connection, client side or server side, as a pure state machine
//!
//! See [`Session`] for the API and the crate docs for the run loop.

mod batch;
mod config;
mod error;
mod event;
mod gating;
mod ids;
mod inbound;
mod input;
mod lifecycle;
mod outbound;
mod seal;
mod subscriptions;
mod task_follow;
mod tasks;
mod transmit;
mod typed;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use config::{ClientConfig, EraMode, Limits, RequestOptions, ServerConfig, Timeouts};
pub use error::{CancelError, ProgressError, RespondError, SendError};
pub use event::{CallError, CloseReason, Event, InboundNotification, InboundRequest, Progress};
pub use ids::{InboundId, OutboundId, Responder};
pub use input::{AskError, Asked, InputError, InputId};
pub use lifecycle::PeerInfo;
pub use subscriptions::ListKind;
pub use tasks::{TASKS_EXTENSION, TaskError, TaskId, TaskOptions, TaskUpdate};
pub use transmit::Transmit;
pub use typed::Pending;

use self::batch::Batches;
use self::gating::{Capability, Gate};
use self::inbound::{InEntry, InboundTable};
use self::lifecycle::Phase;
use self::outbound::{OutEntry, OutboundTable, Owner};
use self::transmit::TransmitQueue;
use crate::codec::{FrameError, LineCodec};
use crate::jsonrpc::{self, Decoded, ErrorId, ErrorObject, Invalid, Message, RequestId};
use crate::raw::{self, Patch};
use crate::schema::{has_capability, meta};
use crate::version::{Era, ProtocolVersion};

/// Which end of the connection a session is
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Side {
    /// The MCP client (the host application's side)
    Client,
    /// The MCP server (the side offering tools, resources and prompts)
    Server,
}

/// Counters of peer input the session dropped; for diagnostics and tests
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Responses whose id matched no request in flight (late answers to cancelled or
    /// timed-out requests land here)
    pub unknown_responses: u64,
    /// Messages that were not valid JSON-RPC (each answered with an error where JSON-RPC
    /// allows)
    pub invalid_messages: u64,
    /// Valid messages dropped: requests the era forbids, progress for unknown or finished
    /// requests, non-increasing progress, notifications past the overload limit
    pub dropped_messages: u64,
}

/// Protocol state for one MCP connection, client side or server side
///
/// `Session` performs no I/O and never reads a clock. It has four kinds of methods:
/// - getters taking `&self`: [`side`](Self::side), [`version`](Self::version),
///   [`peer`](Self::peer), [`wants_read`](Self::wants_read), [`is_closed`](Self::is_closed),
///   [`stats`](Self::stats);
/// - inputs: [`handle_bytes`](Self::handle_bytes), [`handle_message`](Self::handle_message),
///   [`handle_eof`](Self::handle_eof), [`handle_timeout`](Self::handle_timeout);
/// - commands: [`send_request`](Self::send_request),
///   [`send_notification`](Self::send_notification), [`respond`](Self::respond),
///   [`respond_error`](Self::respond_error), [`report_progress`](Self::report_progress),
///   [`cancel`](Self::cancel), [`close`](Self::close);
/// - outputs: [`poll_transmit`](Self::poll_transmit), [`poll_event`](Self::poll_event),
///   [`poll_timeout`](Self::poll_timeout).
///
/// After every input or command, drain `poll_transmit` and `poll_event` until both return
/// `None`, then read `poll_timeout`. Inputs never fail: what the peer did becomes events,
/// automatic error replies, or [`Event::Closed`]. Commands fail only for local misuse, and
/// leave the session unchanged when they do.
#[derive(Debug)]
pub struct Session {
    codec: LineCodec,
    core: Core,
}

/// Everything but the input framing, so a frame borrowed from the codec can be handled
#[derive(Debug)]
struct Core {
    role: Role,
    phase: Phase,
    peer: Option<PeerInfo>,
    limits: Limits,
    now: Instant,
    out: TransmitQueue,
    events: VecDeque<Event>,
    outbound: OutboundTable,
    inbound: InboundTable,
    batches: Batches,
    stats: Stats,
    /// A command returned `SendError::Blocked`; emit `Event::Unblocked` once drained
    blocked: bool,
    /// Complete frames wait in the codec because the application is behind
    backlog: bool,
    /// The peer closed its side; we close once every inbound request is answered
    eof: bool,
    /// Our capabilities, as sent
    own_caps: Arc<Value>,
    /// Pre-serialized JSON reused on every message
    own_caps_json: Box<str>,
    own_info_json: Box<str>,
    /// The capabilities text of the last modern request and its parsed value
    last_modern_caps: Option<(Box<str>, Arc<Value>)>,
    /// When the session was created, and the wall-clock anchor if one was given
    created: Instant,
    wall_anchor: Option<(Instant, u64)>,
    /// The server's task table
    server_tasks: tasks::ServerTasks,
    /// Client: the tasks behind our calls, task id -> the call's app id
    followed: std::collections::HashMap<String, u64>,
    /// Server: listen streams and legacy resource subscriptions
    subscriptions: subscriptions::Subscriptions,
}

#[derive(Debug)]
enum Role {
    Client(Arc<ClientConfig>),
    Server(Arc<ServerConfig>),
}

impl Session {
    /// A client session; it starts the handshake (or discovery) at once
    ///
    /// Drain [`poll_transmit`](Self::poll_transmit): the first message (`initialize` or
    /// `server/discover`) is already queued. [`Event::Ready`] follows once the server
    /// answered; application requests fail with [`SendError::NotReady`] before it.
    pub fn client(config: Arc<ClientConfig>, now: Instant) -> Self {
        let limits = config.limits.clone();
        let caps = config.capabilities.clone();
        let info = serde_json::to_string(&config.info).expect("Implementation serializes");
        let era = config.era;
        let mut core = Core::new(Role::Client(config), limits, now, caps, info);
        match era {
            EraMode::Legacy(v) => core.start_initialize(v),
            EraMode::Auto | EraMode::Modern => core.start_discover(ProtocolVersion::LATEST, 0),
        }
        Self::with_core(core)
    }

    /// A server session; it waits for the client's first message
    ///
    /// One server session serves both eras: a legacy client's `initialize` and a modern
    /// client's per-request `_meta` both work.
    pub fn server(config: Arc<ServerConfig>, now: Instant) -> Self {
        let limits = config.limits.clone();
        let caps = config.capabilities.clone();
        let info = serde_json::to_string(&config.info).expect("Implementation serializes");
        let core = Core::new(Role::Server(config), limits, now, caps, info);
        Self::with_core(core)
    }

    fn with_core(core: Core) -> Self {
        Self {
            codec: LineCodec::new(core.limits.max_message_size),
            core,
        }
    }

    // --- getters -------------------------------------------------------------------------

    /// Which end this session is
    pub fn side(&self) -> Side {
        match self.core.role {
            Role::Client(_) => Side::Client,
            Role::Server(_) => Side::Server,
        }
    }

    /// The negotiated version: after the legacy handshake, or after a client's discovery
    ///
    /// `None` before that, and on a server that serves modern requests (each names its own
    /// version in [`InboundRequest::version`]).
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.core.phase.version()
    }

    /// What the peer declared about itself, once known (see [`Event::Ready`])
    pub fn peer(&self) -> Option<&PeerInfo> {
        self.core.peer.as_ref()
    }

    /// Whether the caller should read more input
    ///
    /// False while too many events wait in `poll_event`, too many inbound requests are
    /// unanswered, too many bytes wait in `poll_transmit`, complete messages wait
    /// unprocessed, or the session is closed. Stop reading
    /// the transport until it turns true again; the pipe then pushes back on the peer.
    pub fn wants_read(&self) -> bool {
        self.core.accepts_input() && !self.core.backlog && !self.core.eof
    }

    /// Whether [`Event::Closed`] has been emitted (or is queued)
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

    // --- inputs --------------------------------------------------------------------------

    /// Feeds bytes read from a byte-stream transport (stdio): newline-delimited JSON
    ///
    /// Any chunking works. Complete messages are processed at once unless the application is
    /// behind (see [`wants_read`](Self::wants_read)); the rest waits, bounded by
    /// [`Limits::max_message_size`].
    pub fn handle_bytes(&mut self, now: Instant, data: &[u8]) {
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        self.codec.push(data);
        // A caller that ignores `wants_read` cannot grow the buffer without bound: past one
        // maximum message of backlog, frames are processed anyway and the overload rules
        // (error replies, dropped notifications) keep the queues bounded.
        let force = self.codec.buffered() > self.core.limits.max_message_size;
        self.pump(force);
    }

    /// Feeds one complete message from a message-framed transport (an HTTP body, an SSE
    /// `data` payload)
    pub fn handle_message(&mut self, now: Instant, message: &[u8]) {
        self.core.tick(now);
        if self.core.eof || self.is_closed() {
            return;
        }
        if message.len() > self.core.limits.max_message_size {
            let limit = self.core.limits.max_message_size;
            self.core.frame_error(&FrameError::TooLong { limit });
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
    /// sent may still be answered; [`Event::Closed`] follows once the last is answered (at
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
        self.core.fire_timers();
    }

    // --- commands ------------------------------------------------------------------------

    /// Sends a request; its outcome arrives as exactly one [`Event::Response`] with the
    /// returned id
    ///
    /// `params` must be a JSON object. On a modern session the core adds the `_meta` keys the
    /// era requires (protocol version, client capabilities and info); with
    /// [`RequestOptions::with_progress`] it adds a `progressToken`.
    ///
    /// # Errors
    /// [`SendError`] for local misuse: not ready, closed, a method this side may not send in
    /// this era, a capability the peer did not declare, or a full queue.
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        self.core.tick(now);
        self.core.send_request(method, params, options)
    }

    /// Sends a notification
    ///
    /// # Errors
    /// [`SendError`] when closed, blocked, before a client's handshake, for notifications the
    /// core sends itself (`initialized`, `cancelled`, `progress`), or params that are not an
    /// object.
    pub fn send_notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.core.send_notification(method, params)
    }

    /// Answers an inbound request with a result
    ///
    /// Consumes the [`Responder`]. If the peer cancelled the request or the session closed,
    /// nothing is sent and this returns `Ok`. On a modern server the core adds
    /// `resultType: "complete"` when absent and the server's info in `_meta`.
    ///
    /// # Errors
    /// [`RespondError::ResultNotAnObject`]: the peer was sent an internal error instead.
    pub fn respond(&mut self, responder: Responder, result: &RawValue) -> Result<(), RespondError> {
        let r = self.core.respond(responder, Ok(result));
        self.pump(false);
        r
    }

    /// Answers an inbound request with a JSON-RPC error
    ///
    /// Consumes the [`Responder`]; a no-op if the peer cancelled or the session closed.
    pub fn respond_error(&mut self, responder: Responder, error: &ErrorObject) {
        let _ = self.core.respond(responder, Err(error));
        self.pump(false);
    }

    /// Reports progress on an inbound request whose sender asked for it
    ///
    /// A no-op returning `Ok` if the request already ended.
    ///
    /// # Errors
    /// [`ProgressError::NotRequested`] if the peer gave no progress token;
    /// [`ProgressError::NotIncreasing`] if `progress` does not exceed the last value sent;
    /// [`ProgressError::NotFinite`] if `progress` or `total` is NaN or infinite.
    pub fn report_progress(
        &mut self,
        responder: &Responder,
        progress: &Progress,
    ) -> Result<(), ProgressError> {
        self.core.report_progress(responder.id, progress)
    }

    /// Reports progress on an inbound request by its id, for bindings whose handler holds the
    /// [`Responder`] elsewhere; the same rules as [`report_progress`](Self::report_progress)
    ///
    /// # Errors
    /// As [`report_progress`](Self::report_progress).
    pub fn report_progress_to(
        &mut self,
        id: InboundId,
        progress: &Progress,
    ) -> Result<(), ProgressError> {
        self.core.report_progress(id, progress)
    }

    /// Cancels a request we sent
    ///
    /// Sends `notifications/cancelled` and emits its [`Event::Response`] with
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
    /// request is dropped, then [`Event::Closed`] is emitted. Bytes already queued stay
    /// available from `poll_transmit`.
    pub fn close(&mut self, now: Instant) {
        self.core.tick(now);
        self.core.close(CloseReason::Local);
    }

    // --- outputs -------------------------------------------------------------------------

    /// Appends the next outbound message (JSON followed by `\n`) to `buf`
    ///
    /// `None` when nothing is queued.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let t = self.core.out.pop_into(buf)?;
        if self.core.blocked && self.core.out.len() <= self.core.limits.max_queued_bytes / 2 {
            self.core.blocked = false;
            self.core.events.push_back(Event::Unblocked);
        }
        if self.core.backlog && self.core.accepts_input() {
            self.pump(false);
        }
        Some(t)
    }

    /// The next event, or `None` when drained
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        let event = self.core.events.pop_front()?;
        if self.core.backlog && self.core.accepts_input() {
            self.pump(false);
        }
        Some(event)
    }

    /// The instant at which [`handle_timeout`](Self::handle_timeout) should next be called
    ///
    /// `None` when no timer is armed. Re-read it after every input and command.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let requests = self.core.outbound.next_deadline();
        let tasks = self.core.server_tasks.next_expiry();
        requests.into_iter().chain(tasks).min()
    }

    /// Processes complete frames waiting in the codec while the application keeps up
    fn pump(&mut self, force: bool) {
        loop {
            if !force && !self.core.accepts_input() {
                self.core.backlog = true;
                return;
            }
            if self.is_closed() {
                return;
            }
            match self.codec.next_frame() {
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

/// `_meta` keys read from request params
#[derive(Deserialize, Default)]
struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<RequestId>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<String>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<Box<RawValue>>,
}

/// What the core reads from request params: `_meta`, and a modern retry's input
#[derive(Deserialize, Default)]
struct ParamsWithMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<input::Answers>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
    /// 2025-11-25 task augmentation
    #[serde(default)]
    task: Option<tasks::TaskParam>,
}

/// How an inbound request reaches the application
struct Delivery {
    version: ProtocolVersion,
    peer_caps: Arc<Value>,
    progress_token: Option<RequestId>,
    batch: Option<u32>,
    /// A modern request to a server
    modern: bool,
    answers: Option<Box<input::Answers>>,
    task_param: Option<tasks::TaskParam>,
}

/// An answer on its way out: a result (patched on modern servers) or an error
enum Answer<'a> {
    Result(&'a str),
    /// A result to a modern request: gets `resultType` and the server's info when absent
    ModernResult(&'a str),
    /// A modern result of a cacheable method: also gets caching hints when absent
    CacheableResult(&'a str),
    Error(&'a ErrorObject),
}

/// Methods whose modern results are `CacheableResult`s
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

impl Core {
    fn new(role: Role, limits: Limits, now: Instant, caps: Value, info_json: String) -> Self {
        let caps_json = serde_json::to_string(&caps).expect("a Value serializes");
        Self {
            role,
            phase: Phase::Fresh,
            peer: None,
            limits,
            now,
            out: TransmitQueue::default(),
            events: VecDeque::new(),
            outbound: OutboundTable::default(),
            inbound: InboundTable::default(),
            batches: Batches::default(),
            stats: Stats::default(),
            blocked: false,
            backlog: false,
            eof: false,
            own_caps: Arc::new(caps),
            own_caps_json: caps_json.into(),
            own_info_json: info_json.into(),
            last_modern_caps: None,
            created: now,
            wall_anchor: None,
            server_tasks: tasks::ServerTasks::default(),
            followed: std::collections::HashMap::new(),
            subscriptions: subscriptions::Subscriptions::default(),
        }
    }

    /// The capabilities of a modern request; a client sends the same text on every request,
    /// so the last one parsed is reused rather than parsed again
    fn modern_caps(&mut self, caps: &RawValue) -> Arc<Value> {
        if let Some((text, parsed)) = &self.last_modern_caps
            && **text == *caps.get()
        {
            return Arc::clone(parsed);
        }
        let parsed: Arc<Value> = Arc::new(
            serde_json::from_str(caps.get()).expect("already parsed as JSON by the envelope"),
        );
        self.last_modern_caps = Some((caps.get().into(), Arc::clone(&parsed)));
        parsed
    }

    /// Time never goes backwards
    fn tick(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }

    /// Room for more peer input: events drained, requests answered, and our output written
    /// (a peer that floods us without reading our answers stops being read)
    fn accepts_input(&self) -> bool {
        !matches!(self.phase, Phase::Closed)
            && self.events.len() < self.limits.max_queued_events
            && self.inbound.len() < self.limits.max_in_flight_inbound
            && self.out.len() <= self.limits.max_queued_bytes
    }

    /// Past the soft limits, because the caller ignored `wants_read`
    fn overloaded(&self) -> bool {
        self.events.len() >= self.limits.max_queued_events.saturating_mul(2)
            || self.inbound.len() >= self.limits.max_in_flight_inbound + self.limits.max_batch_len
    }

    fn extra_methods(&self) -> &[String] {
        match &self.role {
            Role::Client(c) => &c.extra_methods,
            Role::Server(s) => &s.extra_methods,
        }
    }

    /// How to write the id of an error whose request id is unknown
    fn unknown_error_id(&self) -> ErrorId<'static> {
        match self.phase.version() {
            Some(v) if !v.omits_unknown_error_id() => ErrorId::Null,
            _ => ErrorId::Omitted,
        }
    }

    // --- input ---------------------------------------------------------------------------

    fn frame_error(&mut self, e: &FrameError) {
        self.stats.invalid_messages += 1;
        let error = match e {
            FrameError::TooLong { limit } => ErrorObject::invalid_request(format!(
                "the message is larger than the limit of {limit} bytes"
            )),
            FrameError::InvalidUtf8 => ErrorObject::parse_error("the message is not valid UTF-8"),
        };
        self.answer(None, None, Answer::Error(&error));
    }

    fn handle_frame(&mut self, frame: &str) {
        match jsonrpc::decode(frame) {
            Decoded::Single(Ok(message)) => self.handle_msg(message, None),
            Decoded::Single(Err(invalid)) => self.handle_invalid(invalid, None),
            Decoded::Batch(items) => self.handle_batch(items),
        }
    }

    fn handle_invalid(&mut self, invalid: Invalid, batch: Option<u32>) {
        self.stats.invalid_messages += 1;
        if invalid.answerable {
            self.answer(invalid.id.as_ref(), batch, Answer::Error(&invalid.error));
        }
    }

    fn handle_batch(&mut self, items: Vec<Result<Message, Invalid>>) {
        let allowed = self
            .phase
            .version()
            .is_some_and(ProtocolVersion::allows_batches);
        if !allowed {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(
                "JSON-RPC batches are only allowed on sessions using protocol version 2025-03-26",
            );
            self.answer(None, None, Answer::Error(&error));
            return;
        }
        if items.len() > self.limits.max_batch_len {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(format!(
                "the batch has {} messages; the limit is {}",
                items.len(),
                self.limits.max_batch_len
            ));
            self.answer(None, None, Answer::Error(&error));
            return;
        }
        let batch = self.batches.open();
        for item in items {
            match item {
                Ok(message) => self.handle_msg(message, Some(batch)),
                Err(invalid) => self.handle_invalid(invalid, Some(batch)),
            }
        }
        self.batches.close(batch);
        self.flush_batch(batch);
    }

    fn handle_msg(&mut self, message: Message, batch: Option<u32>) {
        match message {
            Message::Request(r) => self.handle_request(r, batch),
            Message::Notification(n) => self.handle_notification(n),
            Message::Response(r) => self.handle_response(r),
        }
    }

    fn handle_request(&mut self, request: jsonrpc::Request, batch: Option<u32>) {
        if self.inbound.contains_wire(&request.id) || self.subscriptions.is_listener(&request.id) {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in progress",
                request.id
            ));
            self.answer(Some(&request.id), batch, Answer::Error(&error));
            return;
        }
        let params = request.params.as_deref().map(RawValue::get);
        let parsed = match params.map(serde_json::from_str::<ParamsWithMeta>) {
            None => ParamsWithMeta::default(),
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                let error = ErrorObject::invalid_params(format!("invalid _meta: {e}"));
                self.answer(Some(&request.id), batch, Answer::Error(&error));
                return;
            }
        };
        match self.role {
            Role::Server(_) => self.server_request(request, parsed, batch),
            Role::Client(_) => {
                let meta = parsed.meta.unwrap_or_default();
                self.client_request(request, &meta, parsed.task, batch);
            }
        }
    }

    fn server_request(
        &mut self,
        request: jsonrpc::Request,
        parsed: ParamsWithMeta,
        batch: Option<u32>,
    ) {
        let meta = parsed.meta.unwrap_or_default();
        let id = &request.id;
        match self.phase {
            Phase::Initialized { version } | Phase::Ready { version } => {
                if request.method == "initialize" {
                    let error = ErrorObject::invalid_request("the session is already initialized");
                    return self.answer(Some(id), batch, Answer::Error(&error));
                }
                if request.method == "ping" {
                    return self.answer(Some(id), batch, Answer::Result("{}"));
                }
                let peer_caps = self.peer.as_ref().map_or_else(
                    || Arc::new(Value::Object(serde_json::Map::new())),
                    |p| Arc::clone(&p.capabilities),
                );
                let delivery = Delivery {
                    version,
                    peer_caps,
                    progress_token: meta.progress_token,
                    batch,
                    modern: false,
                    answers: None,
                    task_param: parsed.task,
                };
                self.gate_and_deliver(request, delivery);
            }
            Phase::Fresh => {
                // A request naming a protocol version in `_meta` is modern, whatever its
                // method: a modern `initialize` is a removed method, not a handshake.
                if request.method == "initialize" && meta.version.is_none() {
                    return self.server_initialize(request, batch);
                }
                let Some(requested) = meta.version else {
                    if request.method == "ping" {
                        return self.answer(Some(id), batch, Answer::Result("{}"));
                    }
                    let error = ErrorObject::invalid_params(format!(
                        "missing _meta[\"{}\"]: send `initialize` first (protocol versions up to \
                         2025-11-25) or name the protocol version in every request (2026-07-28 \
                         and later)",
                        meta::PROTOCOL_VERSION
                    ));
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let Some(caps) = meta.capabilities.filter(|c| raw::is_object(c.get())) else {
                    let error = ErrorObject::invalid_params(format!(
                        "missing _meta[\"{}\"]: every request must declare the client's \
                         capabilities (an object, {{}} for none)",
                        meta::CLIENT_CAPABILITIES
                    ));
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let modern = self
                    .server_config()
                    .versions
                    .iter()
                    .copied()
                    .find(|v| v.era() == Era::Modern && v.as_str() == requested);
                let Some(version) = modern else {
                    let error = self.unsupported_version_error(&requested);
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let caps = self.modern_caps(&caps);
                if request.method == "server/discover" {
                    return self.server_discover(&request.id, batch);
                }
                let answers = match input::mrtr_method(&request.method) {
                    Some(method) => self.retry_answers(
                        method,
                        parsed.input_responses,
                        parsed.request_state.as_deref(),
                    ),
                    None => Ok(None),
                };
                let answers = match answers {
                    Ok(a) => a,
                    Err(error) => return self.answer(Some(id), batch, Answer::Error(&error)),
                };
                let delivery = Delivery {
                    version,
                    peer_caps: caps,
                    progress_token: meta.progress_token,
                    batch,
                    modern: true,
                    answers,
                    task_param: None,
                };
                self.gate_and_deliver(request, delivery);
            }
            _ => {}
        }
    }

    fn client_request(
        &mut self,
        request: jsonrpc::Request,
        meta: &RequestMeta,
        task_param: Option<tasks::TaskParam>,
        batch: Option<u32>,
    ) {
        match self.phase {
            Phase::Ready { version } if version.era() == Era::Legacy => {
                if request.method == "ping" {
                    return self.answer(Some(&request.id), batch, Answer::Result("{}"));
                }
                let peer_caps = self.peer.as_ref().map_or_else(
                    || Arc::new(Value::Object(serde_json::Map::new())),
                    |p| Arc::clone(&p.capabilities),
                );
                let delivery = Delivery {
                    version,
                    peer_caps,
                    progress_token: meta.progress_token.clone(),
                    batch,
                    modern: false,
                    answers: None,
                    task_param,
                };
                self.gate_and_deliver(request, delivery);
            }
            Phase::Ready { .. } => {
                // Servers send no requests in the modern era, and clients send no responses.
                self.stats.dropped_messages += 1;
            }
            Phase::Closed => {}
            _ if request.method == "ping" => {
                self.answer(Some(&request.id), batch, Answer::Result("{}"));
            }
            _ => {
                let error = ErrorObject::invalid_request(
                    "the client has not finished initializing; only ping is allowed before that",
                );
                self.answer(Some(&request.id), batch, Answer::Error(&error));
            }
        }
    }

    /// Checks that the method is known and its capability declared, then hands the request
    /// to the application
    fn gate_and_deliver(&mut self, request: jsonrpc::Request, delivery: Delivery) {
        let Delivery {
            version,
            peer_caps,
            progress_token,
            batch,
            modern,
            answers,
            task_param,
        } = delivery;
        let gate = match self.role {
            Role::Server(_) => gating::client_request(&request.method, version),
            Role::Client(_) => gating::server_request(&request.method, version),
        };
        let refusal = match gate {
            Gate::Known(Some(Capability { path, name }))
                if !has_capability(&self.own_caps, path) =>
            {
                Some(format!(
                    "Method not found: {} (the {} capability was not declared)",
                    request.method, name
                ))
            }
            Gate::Known(_) => None,
            Gate::NotInEra => Some(format!(
                "Method not found: {} is not part of protocol version {version}",
                request.method
            )),
            Gate::Unknown if self.extra_methods().contains(&request.method) => None,
            Gate::Unknown => Some(format!("Method not found: {}", request.method)),
        };
        if let Some(message) = refusal {
            let error = ErrorObject::new(jsonrpc::code::METHOD_NOT_FOUND, message);
            return self.answer(Some(&request.id), batch, Answer::Error(&error));
        }
        // Task methods are served by whichever side runs tasks (a 2025-11-25 client runs
        // task-augmented sampling and elicitation); subscriptions only by servers.
        if self.serve_task_method(&request, version, &peer_caps, batch)
            || !self.role.is_client()
                && self.serve_subscription(&request, version.era(), &peer_caps, batch)
        {
            return;
        }
        if self.overloaded() {
            let error = ErrorObject::internal_error(format!(
                "too many requests in progress (limit {}); retry later",
                self.limits.max_in_flight_inbound
            ));
            return self.answer(Some(&request.id), batch, Answer::Error(&error));
        }
        let wants_progress = progress_token.is_some();
        let live_input = self.role.is_client()
            && matches!(
                request.method.as_str(),
                "elicitation/create" | "sampling/createMessage" | "roots/list"
            );
        let task_offered = tasks::task_offered(
            &request.method,
            version,
            &self.own_caps,
            &peer_caps,
            task_param.as_ref(),
        );
        let id = self.inbound.insert(InEntry {
            wire_id: request.id,
            progress_token,
            last_progress: None,
            batch,
            modern,
            version,
            peer_caps: modern.then(|| Arc::clone(&peer_caps)),
            mrtr_method: input::mrtr_method(&request.method).filter(|_| modern),
            answers,
            asks: 0,
            task_offered,
            live_input,
            cacheable: modern && cacheable(&request.method),
        });
        if let Some(b) = batch {
            self.batches.add_pending(b);
        }
        if live_input {
            return self.client_live_input(id, &request.method, request.params.as_deref());
        }
        self.events.push_back(Event::Request(InboundRequest {
            responder: Responder { id },
            method: request.method,
            params: request.params,
            version,
            peer_capabilities: peer_caps,
            wants_progress,
            task_offered: task_offered.is_some(),
        }));
    }

    fn handle_notification(&mut self, n: jsonrpc::Notification) {
        match n.method.as_str() {
            "notifications/cancelled" => self.peer_cancelled(n.params.as_deref()),
            "notifications/progress" => self.peer_progress(n.params.as_deref()),
            "notifications/tasks/status" | "notifications/tasks"
                if self.task_notified(n.params.as_deref()) => {}
            "notifications/initialized" => {
                if let (Role::Server(_), Phase::Initialized { version }) = (&self.role, self.phase)
                {
                    self.phase = Phase::Ready { version };
                    self.events.push_back(Event::Ready { version });
                }
            }
            _ if self.overloaded() => self.stats.dropped_messages += 1,
            _ => self
                .events
                .push_back(Event::Notification(InboundNotification {
                    method: n.method,
                    params: n.params,
                })),
        }
    }

    fn peer_cancelled(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cancelled {
            request_id: RequestId,
            #[serde(default)]
            reason: Option<String>,
        }
        let Some(Ok(c)) = params.map(|p| serde_json::from_str::<Cancelled>(p.get())) else {
            self.stats.invalid_messages += 1;
            return;
        };
        // A cancellation for a request that already ended is the normal race: ignore it.
        let Some(id) = self.inbound.by_wire(&c.request_id) else {
            // It may end a listen stream or a waiting `tasks/result` instead.
            if !self.subscriptions.cancel(&c.request_id) {
                self.server_tasks.cancel_waiter(&c.request_id);
            }
            return;
        };
        let entry = self.inbound.remove(id).expect("found by wire id");
        self.inbound_ended(id, &entry);
        if let Some(b) = entry.batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
        self.events.push_back(Event::Cancelled {
            id,
            reason: c.reason,
        });
        self.close_if_drained();
    }

    fn peer_progress(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            progress_token: RequestId,
            progress: f64,
            #[serde(default)]
            total: Option<f64>,
            #[serde(default)]
            message: Option<String>,
        }
        let Some(Ok(p)) = params.map(|p| serde_json::from_str::<P>(p.get())) else {
            self.stats.invalid_messages += 1;
            return;
        };
        let RequestId::Number(n) = p.progress_token else {
            self.stats.dropped_messages += 1;
            return;
        };
        let now = self.now;
        // Tokens are application ids; a retried request travels under a newer wire id.
        let wire = u64::try_from(n).map(|n| self.outbound.wire_of(n));
        let Some(entry) = wire.ok().and_then(|w| self.outbound.get_mut(w)) else {
            self.stats.dropped_messages += 1;
            return;
        };
        if !entry.progress || entry.last_progress.is_some_and(|last| p.progress <= last) {
            self.stats.dropped_messages += 1;
            return;
        }
        entry.last_progress = Some(p.progress);
        let owner = entry.owner;
        let app_id = entry.app_id;
        let reset = entry
            .reset_on_progress
            .then(|| entry.timeout.map(|t| now + t))
            .flatten()
            .map(|d| entry.cap.map_or(d, |cap| d.min(cap)));
        if let (Some(deadline), Ok(wire)) = (reset, wire) {
            self.outbound.set_deadline(wire, Some(deadline));
        }
        if owner == Owner::App {
            self.events.push_back(Event::Progress {
                id: OutboundId(app_id),
                progress: Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                },
            });
        }
    }

    fn handle_response(&mut self, response: jsonrpc::Response) {
        let entry = match &response.id {
            Some(RequestId::Number(n)) => u64::try_from(*n)
                .ok()
                .and_then(|n| self.outbound.remove(n).map(|e| (n, e))),
            _ => None,
        };
        let Some((wire, entry)) = entry else {
            self.stats.unknown_responses += 1;
            return;
        };
        let outcome = response.outcome.map_err(CallError::Remote);
        match entry.owner {
            Owner::App => {
                let modern = self.phase.version().is_some_and(|v| v.era() == Era::Modern);
                let client = self.role.is_client();
                let (entry, outcome) = match outcome {
                    // Cheap test first: only a result that mentions the word is parsed.
                    Ok(raw) if modern && client && raw.get().contains("input_required") => {
                        match self.client_input_required(wire, entry, &raw) {
                            None => return,
                            Some(back) => back,
                        }
                    }
                    other => (entry, other),
                };
                let (entry, outcome) = match outcome {
                    Ok(raw)
                        if entry.task_requested
                            || client && modern && raw.get().contains("\"task\"") =>
                    {
                        match self.client_task_created(wire, entry, &raw) {
                            None => return,
                            Some(back) => back,
                        }
                    }
                    other => (entry, other),
                };
                self.events.push_back(Event::Response {
                    id: OutboundId(entry.app_id),
                    outcome,
                });
            }
            Owner::Input(inbound) => self.input_answered(inbound, &entry, outcome),
            Owner::TaskInput(task) => self.task_input_answered(task, &entry, outcome),
            Owner::Task(app, op) => self.task_op_answered(app, op, outcome),
            Owner::Initialize => self.client_initialize_answered(outcome),
            Owner::Discover => self.client_discover_answered(outcome),
        }
        self.close_if_drained();
    }

    // --- output --------------------------------------------------------------------------

    /// Queues an answer to a request (or to an invalid message, when `id` is unknown)
    fn answer(&mut self, id: Option<&RequestId>, batch: Option<u32>, answer: Answer<'_>) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        let error_id = id.map_or_else(|| self.unknown_error_id(), ErrorId::Known);
        let out = match batch {
            Some(b) => self.batches.next_entry(b),
            None => self.out.start(),
        };
        match answer {
            Answer::Result(result) => {
                let id = id.expect("results answer a known request");
                write_result_envelope(out, id, |out| out.extend_from_slice(result.as_bytes()));
            }
            Answer::ModernResult(result) | Answer::CacheableResult(result) => {
                let id = id.expect("results answer a known request");
                let info = &self.own_info_json;
                // The conservative default hints: stale at once, never shared across
                // authorization contexts. A handler (or the catalog) that knows better sets its
                // own, which are kept.
                let members: &[(&str, &[u8])] = match answer {
                    Answer::CacheableResult(_) => &[
                        ("resultType", b"\"complete\""),
                        ("ttlMs", b"0"),
                        ("cacheScope", b"\"private\""),
                    ],
                    _ => &[("resultType", b"\"complete\"")],
                };
                write_result_envelope(out, id, |out| {
                    raw::write_patched(
                        out,
                        Some(result),
                        &Patch {
                            members,
                            meta: &[(meta::SERVER_INFO, info.as_bytes())],
                            meta_wins: false,
                        },
                    );
                });
            }
            Answer::Error(error) => jsonrpc::write_error(out, error_id, error),
        }
        if batch.is_none() {
            self.out.finish();
        }
    }

    fn flush_batch(&mut self, batch: u32) {
        if let Some(bytes) = self.batches.take_if_done(batch)
            && !bytes.is_empty()
            && !matches!(self.phase, Phase::Closed)
        {
            let out = self.out.start();
            out.push(b'[');
            out.extend_from_slice(&bytes);
            out.push(b']');
            self.out.finish();
        }
    }

    /// Writes a request; `token` is the progress token (the application id) when progress
    /// was asked for, `members` are top-level params added for a retry
    fn write_request(
        &mut self,
        wire: u64,
        method: &str,
        params: Option<&RawValue>,
        token: Option<u64>,
        members: &[(&str, &[u8])],
    ) {
        let id = RequestId::Number(i64::try_from(wire).expect("ids stay far below i64::MAX"));
        let progress = token.is_some();
        let token = token.map_or(String::new(), |t| t.to_string());
        let modern = self
            .phase
            .version()
            .filter(|v| v.era() == Era::Modern && self.role.is_client());
        let version_json = modern.map_or(String::new(), |v| format!("\"{}\"", v.as_str()));
        let entries: [(&str, &[u8]); 4] = [
            (meta::PROGRESS_TOKEN, token.as_bytes()),
            (meta::PROTOCOL_VERSION, version_json.as_bytes()),
            (meta::CLIENT_CAPABILITIES, self.own_caps_json.as_bytes()),
            (meta::CLIENT_INFO, self.own_info_json.as_bytes()),
        ];
        // A modern client names its version, capabilities and info on every request; any
        // request that asks for progress carries the core-minted token.
        let meta = match (modern.is_some(), progress) {
            (true, true) => &entries[..],
            (true, false) => &entries[1..],
            (false, true) => &entries[..1],
            (false, false) => &[],
        };
        let out = self.out.start();
        if meta.is_empty() && members.is_empty() {
            jsonrpc::write_request(out, &id, method, params);
        } else {
            write_request_envelope(out, &id, method, |out| {
                let patch = Patch {
                    members,
                    meta,
                    meta_wins: true,
                };
                raw::write_patched(out, params.map(RawValue::get), &patch);
            });
        }
        self.out.finish();
    }

    fn write_notification(&mut self, method: &str, params: Option<&RawValue>) {
        let out = self.out.start();
        jsonrpc::write_notification(out, method, params);
        self.out.finish();
    }

    fn write_cancelled(&mut self, wire: u64, reason: &str) {
        let params = serde_json::json!({ "requestId": wire, "reason": reason }).to_string();
        let params = RawValue::from_string(params).expect("valid JSON");
        self.write_notification("notifications/cancelled", Some(&params));
    }

    // --- commands ------------------------------------------------------------------------

    fn check_can_send(&mut self) -> Result<(), SendError> {
        if matches!(self.phase, Phase::Closed) || self.eof {
            return Err(SendError::Closed);
        }
        if self.out.len() > self.limits.max_queued_bytes {
            self.blocked = true;
            return Err(SendError::Blocked);
        }
        Ok(())
    }

    fn send_request(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        self.check_can_send()?;
        let version = match self.phase {
            Phase::Ready { version } => version,
            // Pings may cross the legacy handshake: a client's before the initialize result,
            // a server's before `notifications/initialized`.
            Phase::Initializing | Phase::Initialized { .. } if method == "ping" => {
                return self.send_app_request(method, params, options);
            }
            _ => return Err(SendError::NotReady),
        };
        let gate = match self.role {
            Role::Client(_) => gating::client_request(method, version),
            Role::Server(_) => gating::server_request(method, version),
        };
        match gate {
            _ if method == "initialize" => {
                return Err(SendError::NotAllowed {
                    method: method.to_owned(),
                    reason: "the session sends initialize itself",
                });
            }
            Gate::NotInEra => {
                return Err(SendError::NotAllowed {
                    method: method.to_owned(),
                    reason: "this side may not send it in this protocol version",
                });
            }
            Gate::Known(Some(Capability { path, name })) => {
                self.require_peer_capability(method, path, name)?;
            }
            _ => {}
        }
        self.send_app_request(method, params, options)
    }

    /// `SendError::MissingCapability` unless the peer declared the capability at `path`
    fn require_peer_capability(
        &self,
        method: &str,
        path: &[&str],
        name: &'static str,
    ) -> Result<(), SendError> {
        let declared = self
            .peer
            .as_ref()
            .is_some_and(|p| has_capability(&p.capabilities, path));
        if declared {
            Ok(())
        } else {
            Err(SendError::MissingCapability {
                method: method.to_owned(),
                capability: name,
            })
        }
    }

    /// Registers and writes an application request that passed the lifecycle and gating checks
    fn send_app_request(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        if params.as_deref().is_some_and(|p| !raw::is_object(p.get())) {
            return Err(SendError::ParamsNotAnObject);
        }
        let legacy = self.phase.version().is_some_and(|v| v.era() == Era::Legacy);
        let task_param = match (options.task, tasks::task_capability(method)) {
            (Some(ttl), Some((path, name))) if legacy => {
                self.require_peer_capability(method, path, name)?;
                let ttl = ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
                Some(serde_json::json!({ "ttl": ttl }).to_string())
            }
            _ => None,
        };
        let params = match &task_param {
            Some(task) => {
                let mut out = Vec::new();
                let patch = Patch {
                    members: &[("task", task.as_bytes())],
                    meta: &[],
                    meta_wins: false,
                };
                raw::write_patched(&mut out, params.as_deref().map(RawValue::get), &patch);
                let text = String::from_utf8(out).expect("JSON is UTF-8");
                Some(RawValue::from_string(text).expect("valid JSON"))
            }
            None => params,
        };
        if self.outbound.app_len() >= self.limits.max_in_flight_outbound {
            return Err(SendError::TooManyRequests);
        }
        let defaults = self.role.timeouts();
        let timeout = options.timeout.unwrap_or(defaults.request);
        let cap = options
            .max_total
            .unwrap_or(defaults.max_total)
            .map(|d| self.now + d);
        let deadline = timeout
            .map(|t| self.now + t)
            .map(|d| cap.map_or(d, |c| d.min(c)))
            .or(cap);
        let mut entry = OutEntry::new(Owner::App, method, params);
        entry.task_requested = task_param.is_some();
        entry.progress = options.progress;
        entry.timeout = timeout;
        entry.reset_on_progress = options
            .reset_on_progress
            .unwrap_or(defaults.reset_on_progress);
        entry.cap = cap;
        entry.deadline = deadline;
        let wire = self.outbound.insert(entry);
        self.transmit_outbound(wire, &[]);
        Ok(OutboundId(wire))
    }

    /// Writes the request stored under `wire`
    fn transmit_outbound(&mut self, wire: u64, members: &[(&str, &[u8])]) {
        let entry = self.outbound.get_mut(wire).expect("just inserted");
        let method = std::mem::take(&mut entry.method);
        let params = entry.params.take();
        let token = entry.progress.then_some(entry.app_id);
        self.write_request(wire, &method, params.as_deref(), token, members);
        let entry = self.outbound.get_mut(wire).expect("still there");
        entry.method = method;
        entry.params = params;
    }

    fn send_notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.check_can_send()?;
        if gating::core_owned_notification(method) {
            return Err(SendError::NotAllowed {
                method: method.to_owned(),
                reason: "the session sends it itself",
            });
        }
        if self.role.is_client() && !matches!(self.phase, Phase::Ready { .. }) {
            return Err(SendError::NotReady);
        }
        if params.is_some_and(|p| !raw::is_object(p.get())) {
            return Err(SendError::ParamsNotAnObject);
        }
        self.write_notification(method, params);
        Ok(())
    }

    fn respond(
        &mut self,
        responder: Responder,
        answer: Result<&RawValue, &ErrorObject>,
    ) -> Result<(), RespondError> {
        let Some(entry) = self.inbound.remove(responder.id) else {
            return Ok(());
        };
        self.inbound_ended(responder.id, &entry);
        let mut result = Ok(());
        let internal;
        let answer = match answer {
            Ok(r) if !raw::is_object(r.get()) => {
                internal = ErrorObject::internal_error("the server produced an invalid result");
                result = Err(RespondError::ResultNotAnObject);
                Answer::Error(&internal)
            }
            Ok(r) if entry.modern && entry.cacheable => Answer::CacheableResult(r.get()),
            Ok(r) if entry.modern => Answer::ModernResult(r.get()),
            Ok(r) => Answer::Result(r.get()),
            Err(e) => Answer::Error(e),
        };
        self.answer(Some(&entry.wire_id), entry.batch, answer);
        if let Some(b) = entry.batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
        self.close_if_drained();
        result
    }

    fn report_progress(&mut self, id: InboundId, progress: &Progress) -> Result<(), ProgressError> {
        let Some(entry) = self.inbound.get_mut(id) else {
            return Ok(());
        };
        let Some(token) = &entry.progress_token else {
            return Err(ProgressError::NotRequested);
        };
        if !progress.progress.is_finite() || progress.total.is_some_and(|t| !t.is_finite()) {
            return Err(ProgressError::NotFinite);
        }
        if let Some(last) = entry.last_progress
            && progress.progress <= last
        {
            return Err(ProgressError::NotIncreasing {
                last,
                given: progress.progress,
            });
        }
        entry.last_progress = Some(progress.progress);
        let mut params =
            serde_json::json!({ "progressToken": token, "progress": progress.progress });
        if let Some(total) = progress.total {
            params["total"] = total.into();
        }
        if let Some(message) = &progress.message {
            params["message"] = message.clone().into();
        }
        let params = serde_json::value::to_raw_value(&params).expect("a Value serializes");
        if !matches!(self.phase, Phase::Closed) {
            self.write_notification("notifications/progress", Some(&params));
        }
        Ok(())
    }

    fn cancel(&mut self, id: OutboundId, reason: Option<&str>) -> Result<(), CancelError> {
        let wire = self.outbound.wire_of(id.0);
        let on_the_wire = match self.outbound.get_mut(wire) {
            Some(e) if e.owner == Owner::App => !e.awaiting_input && e.task.is_none(),
            _ => return Err(CancelError::NotInFlight),
        };
        let entry = self.outbound.remove(wire).expect("looked up above");
        // A task-backed call is cancelled with tasks/cancel.
        if !matches!(self.phase, Phase::Closed) && !self.eof {
            self.cancel_followed_task(&entry);
        }
        // A request waiting for our input has no request in flight at the peer.
        if on_the_wire && !matches!(self.phase, Phase::Closed) && !self.eof {
            self.write_cancelled(wire, reason.unwrap_or("cancelled by the application"));
        }
        self.events.push_back(Event::Response {
            id,
            outcome: Err(CallError::Cancelled),
        });
        Ok(())
    }

    // --- timers and shutdown -------------------------------------------------------------

    fn fire_timers(&mut self) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        self.expire_tasks();
        while let Some(wire) = self.outbound.expired(self.now) {
            let entry = self.outbound.remove(wire).expect("listed in deadlines");
            match entry.owner {
                Owner::App if entry.task.is_some() && entry.cap.is_none_or(|c| self.now < c) => {
                    self.poll_task(wire, entry);
                }
                Owner::App if entry.task.is_some() => {
                    self.cancel_followed_task(&entry);
                    self.events.push_back(Event::Response {
                        id: OutboundId(entry.app_id),
                        outcome: Err(CallError::TimedOut),
                    });
                }
                Owner::Task(app, op) => {
                    self.write_cancelled(wire, "the request timed out");
                    self.task_op_answered(app, op, Err(CallError::TimedOut));
                }
                Owner::App => {
                    self.write_cancelled(wire, "the request timed out");
                    self.events.push_back(Event::Response {
                        id: OutboundId(entry.app_id),
                        outcome: Err(CallError::TimedOut),
                    });
                }
                Owner::Input(inbound) => {
                    self.write_cancelled(wire, "the request timed out");
                    self.input_answered(inbound, &entry, Err(CallError::TimedOut));
                }
                Owner::TaskInput(_) => {
                    // The task stays input_required; its handler may fail it.
                    self.write_cancelled(wire, "the request timed out");
                }
                Owner::Initialize => {
                    self.close(CloseReason::Handshake(
                        "the server did not answer initialize in time".into(),
                    ));
                }
                Owner::Discover => {
                    self.client_discover_failed("the server did not answer server/discover in time")
                }
            }
        }
    }

    fn peer_eof(&mut self) {
        self.eof = true;
        for (_, entry) in self.outbound.drain() {
            match entry.owner {
                Owner::App => self.events.push_back(Event::Response {
                    id: OutboundId(entry.app_id),
                    outcome: Err(CallError::SessionClosed),
                }),
                // The handler that asked may still answer its request: tell it no input comes.
                Owner::Input(inbound) => {
                    self.input_answered(inbound, &entry, Err(CallError::SessionClosed));
                }
                Owner::TaskInput(_) | Owner::Task(..) | Owner::Initialize | Owner::Discover => {}
            }
        }
        if !matches!(
            self.phase,
            Phase::Ready { .. } | Phase::Initialized { .. } | Phase::Fresh
        ) && self.role.is_client()
        {
            self.close(CloseReason::Handshake(
                "the server closed the connection during the handshake".into(),
            ));
            return;
        }
        self.close_if_drained();
    }

    pub(super) fn close_if_drained(&mut self) {
        if self.eof && self.inbound.len() == 0 {
            self.close(CloseReason::PeerClosed);
        }
    }

    fn close(&mut self, reason: CloseReason) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        for (_, entry) in self.outbound.drain() {
            if entry.owner == Owner::App {
                self.events.push_back(Event::Response {
                    id: OutboundId(entry.app_id),
                    outcome: Err(CallError::SessionClosed),
                });
            }
        }
        self.inbound.clear();
        self.batches.clear();
        self.subscriptions = subscriptions::Subscriptions::default();
        self.followed.clear();
        self.phase = Phase::Closed;
        self.backlog = false;
        // Commands fail with `Closed` from now on; `Unblocked` would follow `Closed`.
        self.blocked = false;
        self.events.push_back(Event::Closed { reason });
    }
}

impl Role {
    fn is_client(&self) -> bool {
        matches!(self, Self::Client(_))
    }

    fn timeouts(&self) -> Timeouts {
        match self {
            Self::Client(c) => c.timeouts,
            Self::Server(s) => s.timeouts,
        }
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<written by f>}`
fn write_result_envelope(out: &mut Vec<u8>, id: &RequestId, f: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    serde_json::to_writer(&mut *out, id).expect("writing to a Vec cannot fail");
    out.extend_from_slice(b",\"result\":");
    f(out);
    out.push(b'}');
}

/// `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<written by f>}`
fn write_request_envelope(
    out: &mut Vec<u8>,
    id: &RequestId,
    method: &str,
    f: impl FnOnce(&mut Vec<u8>),
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    serde_json::to_writer(&mut *out, id).expect("writing to a Vec cannot fail");
    out.extend_from_slice(b",\"method\":");
    raw::write_json_str(out, method);
    out.extend_from_slice(b",\"params\":");
    f(out);
    out.push(b'}');
}
