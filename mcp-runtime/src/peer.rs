//! The per-`Session` glue every binding's actor runs: the application's calls in flight, the
//! server's handler runs, and the messages between them and the actor
//!
//! Generic over the binding's [`Plumbing`]: how a reply or a report is sent, how a handler
//! run is stopped, the clock. What the application does with what the peer sends (start a
//! handler, take a notification, answer an input request) comes as plain closures, an
//! [`App`]. Every decision stays in `mcp-sansio`; this only maps commands, events and handler
//! messages onto `Session` calls and reply channels.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_sansio::http::SessionKey;
use mcp_sansio::id_map::{IdMap, id_map};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    InputRequests, InputResponses, LoggingLevel, LoggingMessageNotificationParams,
};
use mcp_sansio::server::{AskFailure, AskReply, Effects, LogFilter, Runs};
use mcp_sansio::session::{Role, role};
use mcp_sansio::{
    CallError, ClientEvent, ClientSession, InboundId, InboundNotification, InboundRequest, InputId,
    OutboundId, PeerInfo, Progress, RequestOptions, Responder, SendError, ServerEvent,
    ServerSession, Session, TaskError, TaskId, TaskOptions,
};
use serde_json::value::RawValue;

use crate::chan;
use crate::push::Push;
use crate::runtime::Runtime;
use crate::trace::{End, RequestTrace, SessionTrace};

/// What an outbound request's caller waits for
pub type Outcome = Result<Box<RawValue>, CallError>;

/// How a binding's tasks or threads reach each other, as a [`Peer`] needs it: its reply and
/// report channels, how a handler run stops, its clock
///
/// Every async [`Runtime`] has it (its runs, the kernel's channels, the application's
/// channels); the blocking binding implements it for its threads.
pub trait Plumbing: Sized + Send + Sync + 'static {
    /// A running server handler; [`stop`](Self::stop) ends it
    type Run: Send + 'static;
    /// The sending half of a one-reply channel
    type Reply<T: Send + 'static>: Send + 'static;
    /// The sending half of a stream of reports to the application (progress, task status)
    type Stream<T: Send + 'static>: Clone + Send + Sync + 'static;
    /// The sending half of the actor's channel for handler messages
    type HandlerTx: Clone + Send + Sync + 'static;

    /// The core's clock
    fn now() -> Instant;
    /// Sends a reply; a caller that went away is no error
    fn reply<T: Send + 'static>(tx: Self::Reply<T>, value: T);
    /// Sends a report without waiting; a receiver that went away is no error
    fn report<T: Send + 'static>(tx: &Self::Stream<T>, value: T);
    /// Stops a handler run
    fn stop(run: Self::Run);
    /// Sends a handler message to the actor; `false` once it is gone
    fn send_handler(tx: &Self::HandlerTx, key: SessionKey, msg: HandlerMsg<Self>) -> bool;
}

/// An async runtime's plumbing: its handler runs, the kernel's channels for replies and
/// handler messages, its own channels for the application's reports
impl<R: Runtime> Plumbing for R {
    type Run = R::Run;
    type Reply<T: Send + 'static> = chan::OneSender<T>;
    type Stream<T: Send + 'static> = R::Sender<T>;
    type HandlerTx = chan::QueueSender<(SessionKey, HandlerMsg<R>)>;

    fn now() -> Instant {
        R::now()
    }
    fn reply<T: Send + 'static>(tx: chan::OneSender<T>, value: T) {
        let _ = tx.send(value);
    }
    fn report<T: Send + 'static>(tx: &R::Sender<T>, value: T) {
        let _ = R::send(tx, value);
    }
    fn stop(run: R::Run) {
        R::stop(run);
    }
    fn send_handler(tx: &Self::HandlerTx, key: SessionKey, msg: HandlerMsg<R>) -> bool {
        tx.unbounded_send((key, msg)).is_ok()
    }
}

/// Starts a handler run for an inbound request, or answers it at once (then `None`)
pub type Dispatch<R> = Box<
    dyn Fn(&mut ServerSession, InboundRequest, &Handlers<R>) -> Option<<R as Plumbing>::Run>
        + Send
        + Sync,
>;

/// What a connection's application does with what its peer sends besides responses:
/// plain closures, made once per connection
pub struct App<R: Plumbing> {
    /// A server's dispatcher; without one, requests are refused (method not found)
    pub dispatch: Option<Dispatch<R>>,
    /// Takes a notification of the peer (or drops it)
    pub notification: Box<dyn Fn(InboundNotification) + Send + Sync>,
    /// Starts the application's input handler, whose answer comes back as
    /// [`HandlerMsg::Answered`] through the handlers' channel; `Err` refuses the input at
    /// once (no input handler, say)
    #[allow(clippy::type_complexity)]
    pub input:
        Box<dyn Fn(InputId, InputRequests, &Handlers<R>) -> Result<(), ErrorObject> + Send + Sync>,
}

impl<R: Plumbing> std::fmt::Debug for App<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("dispatch", &self.dispatch.is_some())
            .finish_non_exhaustive()
    }
}

impl<R: Plumbing> App<R> {
    /// A server's: `dispatch` starts its handlers; notifications are dropped and input
    /// requests refused
    pub fn server(dispatch: Dispatch<R>) -> Self {
        Self {
            dispatch: Some(dispatch),
            notification: Box::new(drop),
            input: Box::new(|_, _, _| Err(no_input_handler())),
        }
    }
}

/// Commands from the application's handles to the actor
pub enum Command<R: Plumbing> {
    /// Send a request
    Request {
        /// The method
        method: String,
        /// Its params
        params: Option<Box<RawValue>>,
        /// Its options
        options: RequestOptions,
        /// The caller's token, to cancel it by
        token: u64,
        /// Where the outcome goes
        reply: R::Reply<Result<Outcome, SendError>>,
        /// Where progress reports go
        progress: Option<R::Stream<Progress>>,
        /// Where the status of a task behind the call goes
        task_status: Option<R::Stream<TaskStatusUpdate>>,
        /// HTTP only: headers for the POSTs that carry this request (checked by the handle)
        headers: Vec<(String, String)>,
        /// The caller's trace context where the request was made (feature `otel`; empty
        /// without it): the parent of the request's span, carried in its `_meta`
        parent: crate::otel::Parent,
    },
    /// The caller gave up: cancel the request if it is still in flight
    Cancel {
        /// The caller's token
        token: u64,
    },
    /// Send a notification
    Notify {
        /// The method
        method: String,
        /// Its params
        params: Option<Box<RawValue>>,
        /// Whether it went out
        reply: R::Reply<Result<(), SendError>>,
    },
    /// Close the connection
    Close,
}

/// How many reports (progress, log messages) of one handler run may wait for its connection;
/// past it a report is dropped (a handler reporting faster than the connection carries its
/// reports cannot grow the server without bound; its result is never dropped)
pub const MAX_WAITING_REPORTS: usize = 256;

/// What every clone of one handler run's `Context` counts together: its reports waiting
/// for the actor ([`Reports`]) and the keys of its questions (`elicit::Keys`); one
/// allocation per run for both
#[derive(Debug, Default)]
pub(crate) struct RunCounters {
    /// Reports waiting for the actor
    pub(crate) waiting: AtomicUsize,
    /// The next question's number
    pub(crate) keys: std::sync::atomic::AtomicU32,
}

/// The reports of one handler run (every clone of its `Context`) that wait for the actor
#[derive(Clone, Debug, Default)]
pub struct Reports(Arc<RunCounters>);

impl Reports {
    /// A run's reports, counted in `counters` (shared with the keys of its questions)
    pub(crate) fn of(counters: Arc<RunCounters>) -> Self {
        Self(counters)
    }

    /// A place for one more report, unless [`MAX_WAITING_REPORTS`] wait already
    pub fn admit(&self) -> Option<Waiting> {
        if self.0.waiting.fetch_add(1, Ordering::AcqRel) >= MAX_WAITING_REPORTS {
            self.0.waiting.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Waiting(Arc::clone(&self.0)))
    }

    /// The message reporting `progress` for the run of request `id`: none when the request
    /// did not ask for progress, or [`MAX_WAITING_REPORTS`] of the run's reports wait
    pub fn progress<R: Plumbing>(
        &self,
        id: InboundId,
        wants_progress: bool,
        progress: Progress,
    ) -> Option<HandlerMsg<R>> {
        if !wants_progress {
            return None;
        }
        Some(HandlerMsg::Progress {
            id,
            progress,
            waiting: self.admit()?,
        })
    }

    /// The message logging `data` at `level` for the run of request `id` (`filter`: the
    /// request's own, on the 2026 wire): none when [`MAX_WAITING_REPORTS`] of the run's
    /// reports wait
    pub fn log<R: Plumbing>(
        &self,
        id: InboundId,
        filter: Option<LogFilter>,
        level: LoggingLevel,
        data: serde_json::Value,
    ) -> Option<HandlerMsg<R>> {
        Some(HandlerMsg::Log {
            id,
            filter,
            params: LoggingMessageNotificationParams::new(level, data),
            waiting: self.admit()?,
        })
    }
}

/// One report on its way to the actor; it stops counting once dropped (handled, or lost
/// with the connection)
#[derive(Debug)]
pub struct Waiting(Arc<RunCounters>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A task a handler's request became (`Context::run_as_task`): the session's handle for
/// it, and the id the client knows it by (which it polls with `tasks/get`); displays as
/// the latter
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartedTask {
    /// The session's handle
    pub id: TaskId,
    /// The `taskId` the client sees: 128 unguessable bits, in hex
    pub task_id: String,
}

impl std::fmt::Display for StartedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.task_id)
    }
}

/// Messages from server handlers (and client input handlers) to the actor
pub enum HandlerMsg<R: Plumbing> {
    /// A handler finished
    Done {
        /// Its request's responder
        responder: Responder,
        /// Its result
        result: Result<Box<RawValue>, ErrorObject>,
        /// The catalog's own answer (a list, an unknown tool) that went through the
        /// middleware chain: its span and meter end as `answered`
        answered: bool,
    },
    /// A handler reports progress
    Progress {
        /// Its request
        id: InboundId,
        /// The report
        progress: Progress,
        /// Its place among the run's waiting reports
        waiting: Waiting,
    },
    /// A handler logs; `filter` is the request's own (2026), else the connection's applies
    Log {
        /// Its request
        id: InboundId,
        /// The request's own log filter
        filter: Option<LogFilter>,
        /// The message
        params: LoggingMessageNotificationParams,
        /// Its place among the run's waiting reports
        waiting: Waiting,
    },
    /// The task store's reply to an operation of the session (HTTP servers with a store)
    Store {
        /// The operation
        ticket: mcp_sansio::store::Ticket,
        /// The reply
        reply: mcp_sansio::store::StoreReply,
    },
    /// A handler turns its request into a task and keeps working
    StartTask {
        /// Its request
        id: InboundId,
        /// The task's options
        options: TaskOptions,
        /// Where the task's ids go
        reply: R::Reply<Result<StartedTask, TaskError>>,
    },
    /// The client application answered (or refused) an input request
    Answered {
        /// The input request
        id: InputId,
        /// The answers, or the refusal
        result: Result<InputResponses, ErrorObject>,
    },
    /// A handler asks the client for input
    Ask {
        /// Its request
        id: InboundId,
        /// What it asks
        requests: InputRequests,
        /// Where the answers go
        reply: R::Reply<Result<InputResponses, AskFailure>>,
    },
    /// The server's handle pushes a change to every connection (see [`push`](crate::push))
    Push(Push),
}

/// Who waits for a client's handshake
pub type Ready<R> = <R as Plumbing>::Reply<Result<PeerInfo, mcp_sansio::CloseReason>>;

/// A change of the task behind a task-backed call
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskStatusUpdate {
    /// The task's new status
    pub status: mcp_sansio::schema::TaskStatus,
    /// The server's status message, if any
    pub message: Option<String>,
}

/// Where handlers send their messages: one channel for the actor, each message tagged with
/// the session it is for (stdio connections have one session, [`SessionKey::STATELESS`])
pub struct Handlers<R: Plumbing> {
    tx: R::HandlerTx,
    key: SessionKey,
}

impl<R: Plumbing> Clone for Handlers<R> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            key: self.key,
        }
    }
}

impl<R: Plumbing> std::fmt::Debug for Handlers<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl<R: Plumbing> Handlers<R> {
    /// Senders into `tx` tagged with [`SessionKey::STATELESS`]
    pub fn new(tx: R::HandlerTx) -> Self {
        Self {
            tx,
            key: SessionKey::STATELESS,
        }
    }

    /// The same channel, tagged with another session
    #[must_use]
    pub fn for_session(&self, key: SessionKey) -> Self {
        Self {
            tx: self.tx.clone(),
            key,
        }
    }

    /// Sends a message to the actor
    ///
    /// # Errors
    /// `Err` once the actor is gone.
    #[allow(clippy::result_unit_err)]
    pub fn send(&self, msg: HandlerMsg<R>) -> Result<(), ()> {
        if R::send_handler(&self.tx, self.key, msg) {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// An async actor's end of its [`Handlers`] channel
pub(crate) type HandlerRx<R> = chan::QueueReceiver<(SessionKey, HandlerMsg<R>)>;

impl<R: Runtime> Handlers<R> {
    /// A channel whose senders are tagged with [`SessionKey::STATELESS`]
    pub fn channel() -> (Self, HandlerRx<R>) {
        let (tx, rx) = chan::queue();
        (Self::new(tx), rx)
    }
}

struct Pending<R: Plumbing> {
    reply: R::Reply<Result<Outcome, SendError>>,
    progress: Option<R::Stream<Progress>>,
    task_status: Option<R::Stream<TaskStatusUpdate>>,
    /// Its span, when a subscriber wants it
    trace: Option<RequestTrace>,
}

/// What a handler waiting in `ask` gets its answers through
type AskWaiter<R> = <R as Plumbing>::Reply<AskReply>;

/// A request's own HTTP headers
pub(crate) type RequestHeaders = (OutboundId, Vec<(String, String)>);

/// The per-`Session` state of an actor: the application's calls in flight, the handlers
/// running, and what they wait for. Every transport's actor drives its sessions through
/// this, so stdio and HTTP handle events alike.
pub struct Peer<R: Plumbing> {
    pending: IdMap<OutboundId, Pending<R>>,
    tokens: IdMap<u64, OutboundId>,
    /// The server's handler runs: the core takes every decision around them, this only
    /// spawns, delivers and stops
    runs: Runs<R::Run, AskWaiter<R>>,
    ready: Option<Ready<R>>,
    /// Requests' own HTTP headers, for the HTTP actor to hand its transport; `None` on a
    /// byte stream, which has no headers to carry
    request_headers: Option<Vec<RequestHeaders>>,
    /// The session's span (`mcp.session`, see [`trace`](crate::trace)) and what it knows
    span: tracing::Span,
    seen: SessionTrace,
    /// The spans of the peer's requests in flight, when a subscriber wants them (or the
    /// requests are metered)
    traces: IdMap<InboundId, RequestTrace>,
    /// Counted in `mcp.{role}.sessions.active` while the peer lives (feature `metrics`)
    _open: crate::meter::Open,
}

impl<R: Plumbing> Peer<R> {
    /// A peer; `ready` hears of the handshake (clients)
    ///
    /// Its session's span (`mcp.session`) is a child of the current span: the connection's.
    pub fn new(ready: Option<Ready<R>>) -> Self {
        let role = if ready.is_some() { "client" } else { "server" };
        Self::with_span(ready, crate::trace::session(role))
    }

    /// A server peer that is not counted among the open sessions: one of the 2026 fast
    /// path's, which all serve the one stateless session the metrics count
    #[cfg(feature = "http")]
    pub(crate) fn uncounted() -> Self {
        Self::with_parts(
            None,
            crate::trace::session("server"),
            crate::meter::Open::default(),
        )
    }

    /// Counted among the open sessions no more (its session is counted elsewhere)
    #[cfg(feature = "http")]
    pub(crate) fn uncount(&mut self) {
        self._open = crate::meter::Open::default();
    }

    fn with_span(ready: Option<Ready<R>>, span: tracing::Span) -> Self {
        let role = if ready.is_some() { "client" } else { "server" };
        Self::with_parts(ready, span, crate::meter::Open::session(role))
    }

    fn with_parts(ready: Option<Ready<R>>, span: tracing::Span, open: crate::meter::Open) -> Self {
        Self {
            _open: open,
            pending: id_map(),
            tokens: id_map(),
            runs: Runs::new(),
            ready,
            request_headers: None,
            span,
            seen: SessionTrace::default(),
            traces: id_map(),
        }
    }

    /// The session's span (`mcp.session`)
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// An HTTP server's session: its span names the session by `key`
    pub fn http_session(&mut self, key: SessionKey) {
        if !self.seen.keyed {
            self.seen.keyed = true;
            self.seen.shared = key == SessionKey::STATELESS;
            self.span.record("session", tracing::field::display(key));
        }
    }

    /// After the session took peer input: says what input it dropped (malformed messages)
    pub fn took_input<S: Role>(&mut self, session: &Session<S>) {
        self.seen.input(&self.span, session.stats());
    }

    /// The connection ended: every caller still waiting learns it (their replies drop),
    /// the session's span stays
    pub fn forget_calls(&mut self) {
        let span = std::mem::replace(&mut self.span, tracing::Span::none());
        // The session is still open: it keeps its count (under its own role).
        let open = std::mem::take(&mut self._open);
        *self = Self::with_parts(None, span, open);
    }

    /// The peer's request `id` ended as `end`
    fn end_request(&mut self, id: InboundId, end: &End<'_>) {
        if let Some(trace) = self.traces.remove(&id) {
            trace.end(end);
        }
    }

    /// A peer over HTTP: requests may carry headers of their own
    /// ([`take_request_headers`](Self::take_request_headers))
    #[must_use]
    pub fn over_http(mut self) -> Self {
        self.request_headers = Some(Vec::new());
        self
    }

    /// The headers of the requests sent since the last call, by request, for
    /// `ClientTransport::request_headers` before the next pull
    pub fn take_request_headers(&mut self) -> Vec<RequestHeaders> {
        self.request_headers
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Does what the core decided: wakes the waiting handlers, stops the runs
    fn apply(effects: Effects<R::Run, AskWaiter<R>>) {
        for (waiter, reply) in effects.replies {
            R::reply(waiter, reply);
        }
        for run in effects.stop {
            R::stop(run);
        }
    }

    /// A request of ours ended: its caller gets the outcome
    fn response(&mut self, id: OutboundId, outcome: Outcome) {
        if let Some(p) = self.pending.remove(&id) {
            if let Some(trace) = p.trace {
                trace.end(&End::of_call(&outcome));
            }
            R::reply(p.reply, Ok(outcome));
        }
        self.tokens.retain(|_, v| *v != id);
    }

    fn progress(&self, id: OutboundId, progress: Progress) {
        if let Some(tx) = self.pending.get(&id).and_then(|p| p.progress.as_ref()) {
            R::report(tx, progress);
        }
    }

    fn task_status(
        &self,
        id: OutboundId,
        status: mcp_sansio::schema::TaskStatus,
        message: Option<String>,
    ) {
        if let Some(tx) = self.pending.get(&id).and_then(|p| p.task_status.as_ref()) {
            R::report(tx, TaskStatusUpdate { status, message });
        }
    }

    fn closed(&mut self, reason: &mcp_sansio::CloseReason) {
        SessionTrace::closed(&self.span, reason);
        for (_, trace) in self.traces.drain() {
            trace.end(&End::Closed);
        }
        if let Some(tx) = self.ready.take() {
            R::reply(tx, Err(reason.clone()));
        }
    }

    /// Handles one event of a client session
    pub fn on_client_event(
        &mut self,
        session: &mut ClientSession,
        event: ClientEvent,
        app: &App<R>,
        handlers: &Handlers<R>,
    ) {
        match event {
            ClientEvent::Ready { version } => {
                self.seen.ready(&self.span, version, session.peer());
                if let (Some(tx), Some(peer)) = (self.ready.take(), session.peer()) {
                    R::reply(tx, Ok(peer.clone()));
                }
            }
            ClientEvent::Response { id, outcome } => self.response(id, outcome),
            ClientEvent::Progress { id, progress } => self.progress(id, progress),
            ClientEvent::TaskStatus {
                id,
                status,
                message,
            } => self.task_status(id, status, message),
            // A client serves no requests of its own.
            ClientEvent::Request(request) => {
                let error = ErrorObject::method_not_found(&request.method);
                session.respond_error(request.responder, &error);
            }
            ClientEvent::Notification(n) => (app.notification)(n),
            ClientEvent::InputRequired { id, requests } => {
                if let Err(error) = (app.input)(id, requests, handlers) {
                    let _ = session.refuse_input(R::now(), id, &error);
                }
            }
            ClientEvent::Closed { reason } => self.closed(&reason),
            ClientEvent::SessionRenewed { version } => SessionTrace::renewed(&self.span, version),
            _ => {}
        }
    }

    /// Handles one event of a server session
    pub fn on_server_event(
        &mut self,
        session: &mut ServerSession,
        event: ServerEvent,
        app: &App<R>,
        handlers: &Handlers<R>,
    ) {
        match event {
            ServerEvent::Response { id, outcome } => self.response(id, outcome),
            ServerEvent::Progress { id, progress } => self.progress(id, progress),
            ServerEvent::TaskStatus {
                id,
                status,
                message,
            } => self.task_status(id, status, message),
            ServerEvent::Ready { version } => {
                self.seen.ready(&self.span, version, session.peer());
            }
            ServerEvent::Request(request) => match &app.dispatch {
                Some(dispatch) => {
                    let id = request.responder.id();
                    self.seen.request_version(
                        &self.span,
                        request.version,
                        request.params.as_deref(),
                    );
                    let trace = RequestTrace::server(
                        &self.span,
                        &request.method,
                        session.inbound_wire_id(id),
                        request.version,
                        request.params.as_deref(),
                    );
                    if let Some(trace) = &trace
                        && self.seen.shared
                    {
                        trace.client_from_meta(request.params.as_deref());
                    }
                    let Some(request) = self.runs.handle_request(session, request) else {
                        if let Some(trace) = trace {
                            trace.end(&End::Answered);
                        }
                        return;
                    };
                    // The handler runs inside the request's span (its own logs carry it).
                    let run = {
                        let _entered = trace.as_ref().map(|t| t.span().enter());
                        dispatch(session, request, handlers)
                    };
                    match (run, trace) {
                        (Some(run), trace) => {
                            self.runs.started(id, run);
                            if let Some(trace) = trace {
                                self.keep_trace(session, id, trace);
                            }
                        }
                        (None, Some(trace)) => trace.end(&End::Answered),
                        (None, None) => {}
                    }
                }
                None => {
                    let error = ErrorObject::method_not_found(&request.method);
                    session.respond_error(request.responder, &error);
                }
            },
            ServerEvent::Notification(n) => (app.notification)(n),
            ServerEvent::Closed { reason } => self.closed(&reason),
            // Cancellations and input answers concern the handler runs.
            other => {
                if let ServerEvent::Cancelled { id, .. } = &other {
                    self.end_request(*id, &End::Cancelled);
                }
                if let Ok(effects) = self.runs.handle_event(other) {
                    Self::apply(effects);
                }
            }
        }
    }

    /// Handles one command of the application's handles; `true` when it asks to close
    pub fn on_command<S: Role>(&mut self, session: &mut Session<S>, command: Command<R>) -> bool {
        match command {
            Command::Request {
                method,
                params,
                options,
                token,
                reply,
                progress,
                task_status,
                headers,
                parent,
            } => {
                if !headers.is_empty() && self.request_headers.is_none() {
                    let refused = SendError::NotAllowed {
                        method,
                        reason: "request headers need an HTTP connection",
                    };
                    R::reply(reply, Err(refused));
                    return false;
                }
                let trace = RequestTrace::client(&self.span, &method, params.as_deref());
                #[cfg(feature = "otel")]
                let params =
                    crate::otel::outbound(trace.as_ref().map(RequestTrace::span), parent, params);
                #[cfg(not(feature = "otel"))]
                let _ = parent;
                match session.send_request_raw(R::now(), &method, params, options) {
                    Ok(id) => {
                        if let Some(trace) = &trace {
                            trace.sent(id.wire_id());
                        }
                        if !headers.is_empty()
                            && let Some(list) = self.request_headers.as_mut()
                        {
                            list.push((id, headers));
                        }
                        self.tokens.insert(token, id);
                        self.pending.insert(
                            id,
                            Pending {
                                reply,
                                progress,
                                task_status,
                                trace,
                            },
                        );
                    }
                    Err(e) => {
                        tracing::debug!(
                            target: "mcp_sansio::request",
                            parent: &self.span,
                            %method,
                            error = %e,
                            "request not sent",
                        );
                        R::reply(reply, Err(e));
                    }
                }
            }
            Command::Cancel { token } => {
                if let Some(id) = self.tokens.remove(&token) {
                    // The session answers the call with `Cancelled` (to nobody when the
                    // caller gave up waiting).
                    let _ = session.cancel(R::now(), id, Some("cancelled by the caller"));
                }
            }
            Command::Notify {
                method,
                params,
                reply,
            } => R::reply(
                reply,
                session.send_notification_raw(&method, params.as_deref()),
            ),
            Command::Close => return true,
        }
        false
    }

    /// Handles one message of a server's handler
    pub fn on_server_handler(&mut self, session: &mut ServerSession, msg: HandlerMsg<R>) {
        match msg {
            HandlerMsg::Done {
                responder,
                result,
                answered,
            } => {
                let end = if answered {
                    End::Answered
                } else {
                    End::of_handler(&result)
                };
                self.end_request(responder.id(), &end);
                self.runs.finish(session, R::now(), responder, result);
            }
            HandlerMsg::Progress { id, progress, .. } => {
                let _ = session.inbound(id).report_progress(&progress);
            }
            HandlerMsg::Log {
                id, filter, params, ..
            } => {
                // A handler's log is best effort: held back or refused, it goes nowhere.
                let _ = self.runs.log(session, id, filter, &params);
            }
            HandlerMsg::StartTask { id, options, reply } => {
                let started = self
                    .runs
                    .start_task(session, R::now(), id, options)
                    .map(|task| StartedTask {
                        task_id: session.task_wire_id(task).unwrap_or_default().to_owned(),
                        id: task,
                    });
                if started.is_ok() {
                    self.end_request(id, &End::Task);
                }
                R::reply(reply, started);
            }
            HandlerMsg::Ask {
                id,
                requests,
                reply,
            } => {
                Self::apply(self.runs.ask(session, R::now(), id, requests, reply));
                // A 2026 request is answered `input_required` at once; the retry is another.
                if session.inbound_wire_id(id).is_none() {
                    self.end_request(id, &End::InputRequired);
                }
            }
            // Only a client's input handler answers input requests.
            HandlerMsg::Answered { .. } | HandlerMsg::Store { .. } => {}
            HandlerMsg::Push(push) => push_to(session, &push),
        }
    }

    /// Handles one message of a client's input handler
    pub fn on_client_handler(&mut self, session: &mut ClientSession, msg: HandlerMsg<R>) {
        if let HandlerMsg::Answered { id, result } = msg {
            let _ = match result {
                Ok(responses) => session.provide_input(R::now(), id, responses).map(|_| ()),
                Err(error) => session.refuse_input(R::now(), id, &error),
            };
        }
    }

    /// Stops every handler still running (the session is gone)
    pub fn abort_all(&mut self) {
        Self::apply(self.runs.close());
        for (_, trace) in self.traces.drain() {
            trace.end(&End::Closed);
        }
    }

    /// Keeps the span of a request whose handler runs; spans of requests that ended
    /// unseen (a run stopped before it answered) go once they outnumber the ones in flight
    fn keep_trace(&mut self, session: &ServerSession, id: InboundId, trace: RequestTrace) {
        if self.traces.len() > 2 * session.inbound_in_flight() + 64 {
            self.traces
                .retain(|id, _| session.inbound_wire_id(*id).is_some());
        }
        self.traces.insert(id, trace);
    }
}

/// Hands a change the server pushes to one session: the core decides whether and what it
/// sends (a closed session, a list without `listChanged`, a URI nobody subscribed to: nothing)
pub(crate) fn push_to(session: &mut ServerSession, push: &Push) {
    match push {
        Push::ListChanged(kind) => {
            let _ = session.notify_list_changed(*kind);
        }
        Push::ResourceUpdated(uri) => {
            let _ = session.notify_resource_updated(uri);
        }
        // A byte stream has no header mirrors to keep, nor shared tasks.
        Push::ToolSet(_) | Push::ToolRemoved(_) | Push::Signal(_) | Push::Access(_) => {}
    }
}

/// The refusal of an input request when the client has no input handler
pub fn no_input_handler() -> ErrorObject {
    ErrorObject::method_not_found("input (this client has no input handler)")
}

/// Milliseconds since the Unix epoch, for the core's wall-clock anchor (task timestamps)
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A session's role as an actor drives it: which of [`Peer`]'s event and handler methods
/// apply, so one run loop serves clients and servers
pub trait Side: Role + Sized {
    /// Hands one event of the session to `peer`
    fn on_event<R: Plumbing>(
        peer: &mut Peer<R>,
        session: &mut Session<Self>,
        event: Self::Event,
        app: &App<R>,
        handlers: &Handlers<R>,
    );
    /// Hands one handler message to `peer`
    fn on_handler<R: Plumbing>(peer: &mut Peer<R>, session: &mut Session<Self>, msg: HandlerMsg<R>);
}

impl Side for role::Client {
    fn on_event<R: Plumbing>(
        peer: &mut Peer<R>,
        session: &mut ClientSession,
        event: ClientEvent,
        app: &App<R>,
        handlers: &Handlers<R>,
    ) {
        peer.on_client_event(session, event, app, handlers);
    }
    fn on_handler<R: Plumbing>(
        peer: &mut Peer<R>,
        session: &mut ClientSession,
        msg: HandlerMsg<R>,
    ) {
        peer.on_client_handler(session, msg);
    }
}

impl Side for role::Server {
    fn on_event<R: Plumbing>(
        peer: &mut Peer<R>,
        session: &mut ServerSession,
        event: ServerEvent,
        app: &App<R>,
        handlers: &Handlers<R>,
    ) {
        peer.on_server_event(session, event, app, handlers);
    }
    fn on_handler<R: Plumbing>(
        peer: &mut Peer<R>,
        session: &mut ServerSession,
        msg: HandlerMsg<R>,
    ) {
        peer.on_server_handler(session, msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_has_at_most_max_waiting_reports_and_a_handled_one_frees_its_place() {
        let reports = Reports::default();
        let clone = reports.clone();
        let mut waiting: Vec<Waiting> = (0..MAX_WAITING_REPORTS)
            .map(|i| {
                // Every clone of the run's context counts against the same bound.
                let r = if i % 2 == 0 { &reports } else { &clone };
                r.admit().expect("room for it")
            })
            .collect();
        assert!(reports.admit().is_none(), "the bound is reached");
        assert!(clone.admit().is_none());
        waiting.pop();
        assert!(
            reports.admit().is_some(),
            "a handled report frees its place"
        );
        drop(waiting);
        let again: Vec<_> = (0..MAX_WAITING_REPORTS)
            .map(|_| reports.admit().expect("all free again"))
            .collect();
        assert_eq!(again.len(), MAX_WAITING_REPORTS);
    }
}
