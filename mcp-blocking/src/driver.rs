//! The driver thread that owns one `Session`: it waits on one channel (bytes from the reader
//! thread, the application's commands, the handlers' messages) with the core's next deadline,
//! feeds the core, drains its outputs and writes. No lock around the core.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use mcp_core::http::SessionKey;
use mcp_core::jsonrpc::ErrorObject;
use mcp_core::schema::method::SetLevel;
use mcp_core::schema::{
    InputRequests, InputResponse, InputResponses, LoggingMessageNotificationParams,
};
use mcp_core::server::LogFilter;
use mcp_core::{
    AskError, Asked, CallError, Event, InboundId, InputId, OutboundId, Progress, RequestOptions,
    Responder, SendError, Session, TaskError, TaskId, TaskOptions, TaskUpdate,
};
use serde_json::value::RawValue;

use crate::cancel::CancellationToken;

/// What an outbound request's caller waits for
pub(crate) type Outcome = Result<Box<RawValue>, CallError>;

/// Commands from the application's handles to the driver
pub(crate) enum Command {
    Request {
        method: String,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        token: u64,
        reply: Sender<Result<Outcome, SendError>>,
        progress: Option<mpsc::Sender<Progress>>,
        task_status: Option<mpsc::Sender<TaskStatusUpdate>>,
    },
    /// Cancel the request if it is still in flight
    Cancel {
        token: u64,
    },
    Notify {
        method: String,
        params: Option<Box<RawValue>>,
        reply: Sender<Result<(), SendError>>,
    },
    Close,
}

/// Messages from server handler threads (and client input handlers) to the driver
pub(crate) enum HandlerMsg {
    Done {
        responder: Responder,
        result: Result<Box<RawValue>, ErrorObject>,
    },
    Progress {
        id: InboundId,
        progress: Progress,
    },
    /// A handler logs; `filter` is the request's own (2026), else the connection's applies
    Log {
        id: InboundId,
        filter: Option<LogFilter>,
        params: LoggingMessageNotificationParams,
    },
    /// A handler turns its request into a task and keeps working
    StartTask {
        id: InboundId,
        options: TaskOptions,
        reply: Sender<Result<TaskId, TaskError>>,
    },
    /// The client application answered (or refused) an input request
    Answered {
        id: InputId,
        result: Result<InputResponses, ErrorObject>,
    },
    /// A handler asks the client for input
    Ask {
        id: InboundId,
        requests: InputRequests,
        reply: Sender<Result<InputResponses, AskFailure>>,
    },
}

/// Everything a driver thread waits for, on one channel
pub(crate) enum Input {
    /// Bytes from the reader thread
    Bytes(Vec<u8>),
    /// The reader reached the end of its stream (or failed)
    Eof,
    Command(Command),
    Handler(SessionKey, HandlerMsg),
    /// HTTP server: from the connection threads
    Http(crate::http_server::ToActor),
    /// HTTP client: from the request threads
    Net(crate::http_client::FromNet),
}

/// Why a handler's input request got no answers
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskFailure {
    /// The core refused the ask (undeclared capability, wrong method, ...); answer the
    /// request with [`AskError::to_error`]
    #[error(transparent)]
    Ask(#[from] AskError),
    /// The client's answer to one input request was an error, or it timed out
    #[error("input `{key}` failed: {error}")]
    Failed {
        /// The input key
        key: String,
        /// Why
        error: CallError,
    },
    /// An answer did not decode as an input response
    #[error("input `{key}` is not a valid response: {reason}")]
    Invalid {
        /// The input key
        key: String,
        /// Why
        reason: String,
    },
    /// The request was cancelled, or this run of the handler ended: on a 2026 request the
    /// core answered `input_required` and the client's retry runs the handler again. Return
    /// (any error); the answer is dropped.
    #[error("the request was cancelled, or answered with input_required")]
    Cancelled,
    /// The connection closed
    #[error("the connection closed")]
    Closed,
    /// The request runs as a task and the task could not ask (it ended, or cannot ask)
    #[error(transparent)]
    Task(#[from] TaskError),
}

impl AskFailure {
    /// The JSON-RPC error to answer the request with
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::Ask(e) => e.to_error(),
            other => ErrorObject::internal_error(other),
        }
    }
}

/// A handler waiting for live (legacy) answers
struct Waiting {
    missing: usize,
    answers: InputResponses,
    reply: Sender<Result<InputResponses, AskFailure>>,
}

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
    pub notifications: Option<mpsc::Sender<mcp_core::InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<mpsc::Sender<String>>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("input", &self.input.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("stderr", &self.stderr.is_some())
            .finish()
    }
}

impl ClientOptions {
    /// With an input handler
    pub fn input(mut self, handler: InputHandler) -> Self {
        self.input = Some(handler);
        self
    }

    /// Captures a child server's stderr, line by line
    pub fn stderr(mut self, sender: mpsc::Sender<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(mut self, sender: mpsc::Sender<mcp_core::InboundNotification>) -> Self {
        self.notifications = Some(sender);
        self
    }
}

/// What the server side does with inbound requests: start a handler on the worker pool, or
/// answer at once
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// Handles one request; returns the handler's cancellation token if it started one
    fn dispatch(
        &self,
        session: &mut Session,
        request: mcp_core::InboundRequest,
        handlers: &Handlers,
    ) -> Option<CancellationToken>;
}

/// Milliseconds since the Unix epoch, for the core's wall-clock anchor (task timestamps)
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The core's clock
pub(crate) fn now() -> Instant {
    Instant::now()
}

/// Waits for the next input until `deadline`; `None` when the deadline passed first
pub(crate) fn recv_until(
    inbox: &Receiver<Input>,
    deadline: Option<Instant>,
) -> Result<Option<Input>, ()> {
    let received = match deadline {
        Some(d) => inbox.recv_deadline(d),
        None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(input) => Ok(Some(input)),
        Err(RecvTimeoutError::Timeout) => Ok(None),
        Err(RecvTimeoutError::Disconnected) => Err(()),
    }
}

struct Pending {
    reply: Sender<Result<Outcome, SendError>>,
    progress: Option<mpsc::Sender<Progress>>,
    task_status: Option<mpsc::Sender<TaskStatusUpdate>>,
}

/// A change of the task behind a task-backed call
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskStatusUpdate {
    /// The task's new status
    pub status: mcp_core::schema::TaskStatus,
    /// The server's status message, if any
    pub message: Option<String>,
}

/// Where handler threads send their messages: the driver's inbox, each message tagged with
/// the session it is for (stdio connections have one session, [`SessionKey::STATELESS`])
#[derive(Clone, Debug)]
pub(crate) struct Handlers {
    tx: Sender<Input>,
    key: SessionKey,
}

impl Handlers {
    /// Senders into `tx` tagged with [`SessionKey::STATELESS`]
    pub(crate) fn new(tx: Sender<Input>) -> Self {
        Self {
            tx,
            key: SessionKey::STATELESS,
        }
    }

    /// The same inbox, tagged with another session
    pub(crate) fn for_session(&self, key: SessionKey) -> Self {
        Self {
            tx: self.tx.clone(),
            key,
        }
    }

    /// Sends a message to the driver; `Err` once it is gone
    pub(crate) fn send(&self, msg: HandlerMsg) -> Result<(), ()> {
        self.tx.send(Input::Handler(self.key, msg)).map_err(|_| ())
    }
}

/// Who waits for a client's handshake
pub(crate) type Ready = Sender<Result<mcp_core::PeerInfo, String>>;

/// The per-`Session` state of a driver: the application's calls in flight, the handlers
/// running, and what they wait for. Stdio and HTTP drivers handle events alike through it.
pub(crate) struct Peer {
    pending: HashMap<OutboundId, Pending>,
    tokens: HashMap<u64, OutboundId>,
    running: HashMap<InboundId, CancellationToken>,
    waiting: HashMap<InboundId, Waiting>,
    /// Requests whose handler turned them into tasks: the result completes the task
    tasks: HashMap<InboundId, TaskId>,
    /// Task handlers waiting for the input their task asked for
    task_asks: HashMap<TaskId, Sender<Result<InputResponses, AskFailure>>>,
    /// `notifications/message` for legacy connections, set by `logging/setLevel`
    log_filter: LogFilter,
    ready: Option<Ready>,
}

impl Peer {
    pub(crate) fn new(ready: Option<Ready>) -> Self {
        Self {
            pending: HashMap::new(),
            tokens: HashMap::new(),
            running: HashMap::new(),
            waiting: HashMap::new(),
            tasks: HashMap::new(),
            task_asks: HashMap::new(),
            log_filter: LogFilter::legacy(),
            ready,
        }
    }

    /// Stops one handler run: its token is cancelled and its waits end
    fn stop(&mut self, id: InboundId) {
        if let Some(w) = self.waiting.remove(&id) {
            let _ = w.reply.send(Err(AskFailure::Cancelled));
        }
        if let Some(token) = self.running.remove(&id) {
            token.cancel();
        }
    }

    /// Handles one event of the session
    pub(crate) fn on_event(
        &mut self,
        session: &mut Session,
        event: Event,
        dispatch: Option<&Arc<dyn Dispatch>>,
        options: &ClientOptions,
        handlers: &Handlers,
    ) {
        match event {
            Event::Ready { .. } => {
                if let (Some(tx), Some(peer)) = (self.ready.take(), session.peer()) {
                    let _ = tx.send(Ok(peer.clone()));
                }
            }
            Event::Response { id, outcome } => {
                if let Some(p) = self.pending.remove(&id) {
                    let _ = p.reply.send(Ok(outcome));
                }
                self.tokens.retain(|_, v| *v != id);
            }
            Event::Progress { id, progress } => {
                if let Some(tx) = self.pending.get(&id).and_then(|p| p.progress.as_ref()) {
                    let _ = tx.send(progress);
                }
            }
            Event::TaskStatus {
                id,
                status,
                message,
            } => {
                if let Some(tx) = self.pending.get(&id).and_then(|p| p.task_status.as_ref()) {
                    let _ = tx.send(TaskStatusUpdate { status, message });
                }
            }
            Event::Request(request) if request.is::<SetLevel>() && dispatch.is_some() => {
                match request.params::<SetLevel>() {
                    Ok(p) => {
                        self.log_filter.set_level(p.level);
                        let empty = RawValue::from_string("{}".into()).expect("valid");
                        let _ = session.respond(request.responder, &empty);
                    }
                    Err(e) => session.respond_error(request.responder, &e),
                }
            }
            Event::Request(request) => {
                let id = request.responder.id();
                match dispatch {
                    Some(d) => {
                        if let Some(token) = d.dispatch(session, request, handlers) {
                            self.running.insert(id, token);
                        }
                    }
                    None => {
                        let error = ErrorObject::method_not_found(&request.method);
                        session.respond_error(request.responder, &error);
                    }
                }
            }
            Event::TaskInput { task, responses } => {
                if let Some(reply) = self.task_asks.remove(&task) {
                    let _ = reply.send(Ok(responses));
                }
            }
            Event::TaskCancelled { task } => {
                if let Some(reply) = self.task_asks.remove(&task) {
                    let _ = reply.send(Err(AskFailure::Cancelled));
                }
                let inbound = self
                    .tasks
                    .iter()
                    .find(|(_, t)| **t == task)
                    .map(|(i, _)| *i);
                if let Some(id) = inbound {
                    self.tasks.remove(&id);
                    self.stop(id);
                }
            }
            Event::Cancelled { id, .. } => self.stop(id),
            Event::Notification(n) => {
                if let Some(tx) = &options.notifications {
                    let _ = tx.send(n);
                }
            }
            Event::InputRequired { id, requests } => match &options.input {
                Some(handler) => {
                    // The application may take its time (a user answering): its own thread
                    let handler = Arc::clone(handler);
                    let messages = handlers.clone();
                    let spawned =
                        thread::Builder::new()
                            .name("mcp-input".into())
                            .spawn(move || {
                                let result = handler(requests);
                                let _ = messages.send(HandlerMsg::Answered { id, result });
                            });
                    if spawned.is_err() {
                        let error = ErrorObject::internal_error("no thread for the input handler");
                        let _ = session.refuse_input(now(), id, &error);
                    }
                }
                None => {
                    let error =
                        ErrorObject::method_not_found("input (this client has no input handler)");
                    let _ = session.refuse_input(now(), id, &error);
                }
            },
            Event::InputAnswered {
                request,
                key,
                outcome,
            } => {
                let Some(mut w) = self.waiting.remove(&request) else {
                    return;
                };
                let parsed = outcome
                    .map_err(|error| AskFailure::Failed {
                        key: key.clone(),
                        error,
                    })
                    .and_then(|raw| {
                        serde_json::from_str::<InputResponse>(raw.get()).map_err(|e| {
                            AskFailure::Invalid {
                                key: key.clone(),
                                reason: e.to_string(),
                            }
                        })
                    });
                match parsed {
                    Ok(response) => {
                        w.answers.insert(key, response);
                        w.missing -= 1;
                        if w.missing == 0 {
                            let _ = w.reply.send(Ok(w.answers));
                        } else {
                            self.waiting.insert(request, w);
                        }
                    }
                    Err(failure) => {
                        let _ = w.reply.send(Err(failure));
                    }
                }
            }
            Event::Closed { reason } => {
                if let Some(tx) = self.ready.take() {
                    let _ = tx.send(Err(reason.to_string()));
                }
            }
            _ => {}
        }
    }

    /// Handles one command of the application's handles; `true` when it asks to close
    pub(crate) fn on_command(&mut self, session: &mut Session, command: Command) -> bool {
        match command {
            Command::Request {
                method,
                params,
                options,
                token,
                reply,
                progress,
                task_status,
            } => match session.send_request(now(), &method, params, options) {
                Ok(id) => {
                    self.tokens.insert(token, id);
                    self.pending.insert(
                        id,
                        Pending {
                            reply,
                            progress,
                            task_status,
                        },
                    );
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                }
            },
            Command::Cancel { token } => {
                if let Some(id) = self.tokens.remove(&token) {
                    // The session answers the call with `Cancelled`.
                    let _ = session.cancel(now(), id, Some("cancelled by the caller"));
                }
            }
            Command::Notify {
                method,
                params,
                reply,
            } => {
                let _ = reply.send(session.send_notification(&method, params.as_deref()));
            }
            Command::Close => return true,
        }
        false
    }

    /// Handles one message of a handler thread (server) or input handler (client)
    pub(crate) fn on_handler(&mut self, session: &mut Session, msg: HandlerMsg) {
        match msg {
            HandlerMsg::Done { responder, result } => {
                // A run that was stopped (cancelled, or superseded by input_required) has
                // nothing more to say.
                if self.running.remove(&responder.id()).is_none() {
                    return;
                }
                if let Some(task) = self.tasks.remove(&responder.id()) {
                    let update = match result {
                        Ok(raw) => TaskUpdate::Completed(raw),
                        Err(error) => TaskUpdate::Failed(error),
                    };
                    let _ = session.update_task(now(), task, update);
                    return;
                }
                match result {
                    Ok(raw) => {
                        let _ = session.respond(responder, &raw);
                    }
                    Err(error) => session.respond_error(responder, &error),
                }
            }
            HandlerMsg::Progress { id, progress } => {
                let _ = session.report_progress_to(id, &progress);
            }
            HandlerMsg::Log { id, filter, params } => {
                if filter.unwrap_or(self.log_filter).allows(params.level)
                    && let Ok(raw) = serde_json::value::to_raw_value(&params)
                {
                    const METHOD: &str = "notifications/message";
                    // Tied to the request (Streamable HTTP sends it on the request's own
                    // stream) unless the request became a task and was answered already.
                    let _ = if self.tasks.contains_key(&id) {
                        session.send_notification(METHOD, Some(&raw))
                    } else {
                        session.send_notification_for(id, METHOD, Some(&raw))
                    };
                }
            }
            HandlerMsg::StartTask { id, options, reply } => {
                let started = session.start_task_to(now(), id, options);
                if let Ok(task) = started {
                    self.tasks.insert(id, task);
                }
                let _ = reply.send(started);
            }
            HandlerMsg::Answered { id, result } => {
                let _ = match result {
                    Ok(responses) => session.provide_input(now(), id, responses).map(|_| ()),
                    Err(error) => session.refuse_input(now(), id, &error),
                };
            }
            // A task asks through its status: `input_required` with the requests (2026:
            // `tasks/get` shows them and `tasks/update` answers; 2025-11-25: live requests).
            HandlerMsg::Ask {
                id,
                requests,
                reply,
            } if self.tasks.contains_key(&id) => {
                let task = self.tasks[&id];
                match session.update_task(now(), task, TaskUpdate::InputRequired(requests)) {
                    Ok(()) => {
                        self.task_asks.insert(task, reply);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(AskFailure::Task(e)));
                    }
                }
            }
            HandlerMsg::Ask {
                id,
                requests,
                reply,
            } => {
                let count = requests.len();
                match session.ask_input_to(now(), id, requests) {
                    Ok(Asked::Answered(answers)) => {
                        let _ = reply.send(Ok(answers));
                    }
                    Ok(Asked::Sent) => {
                        self.waiting.insert(
                            id,
                            Waiting {
                                missing: count,
                                answers: InputResponses::new(),
                                reply,
                            },
                        );
                    }
                    // The request was answered with input_required; the client's retry
                    // runs the handler again, so this run stops here.
                    Ok(_) => {
                        let _ = reply.send(Err(AskFailure::Cancelled));
                        self.stop(id);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(AskFailure::Ask(e)));
                    }
                }
            }
        }
    }

    /// Stops every handler still running (the session is gone)
    pub(crate) fn abort_all(&mut self) {
        for (_, w) in self.waiting.drain() {
            let _ = w.reply.send(Err(AskFailure::Closed));
        }
        for (_, reply) in self.task_asks.drain() {
            let _ = reply.send(Err(AskFailure::Closed));
        }
        for (_, token) in self.running.drain() {
            token.cancel();
        }
        self.tasks.clear();
    }
}

/// Reads `reader` on a thread of its own, one chunk per credit: the driver hands out a
/// credit only while the session [`wants_read`](Session::wants_read), so a peer that sends
/// faster than the session takes is held back by the transport
pub(crate) fn spawn_reader<R: Read + Send + 'static>(
    mut reader: R,
    inbox: Sender<Input>,
) -> Sender<()> {
    let (credit, credits) = crossbeam_channel::bounded::<()>(1);
    let _ = thread::Builder::new()
        .name("mcp-reader".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while credits.recv().is_ok() {
                let input = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => Input::Eof,
                    Ok(n) => Input::Bytes(buf[..n].to_vec()),
                };
                let eof = matches!(input, Input::Eof);
                if inbox.send(input).is_err() || eof {
                    return;
                }
            }
        });
    credit
}

/// The pieces one connection's driver runs with
pub(crate) struct Connection {
    pub(crate) session: Session,
    pub(crate) inbox: Receiver<Input>,
    pub(crate) handlers: Handlers,
    pub(crate) dispatch: Option<Arc<dyn Dispatch>>,
    pub(crate) options: ClientOptions,
    pub(crate) ready: Option<Ready>,
}

/// Runs one connection until it closes (on the calling thread)
pub(crate) fn run<R, W>(conn: Connection, reader: R, mut writer: W)
where
    R: Read + Send + 'static,
    W: Write,
{
    let Connection {
        mut session,
        inbox,
        handlers,
        dispatch,
        options,
        ready,
    } = conn;
    session.anchor_wall_clock(now(), unix_ms());
    let mut peer = Peer::new(ready);
    let credit = spawn_reader(reader, handlers.tx.clone());
    // The reader may read once: it has a credit and is not reading
    let mut credit_out = credit.send(()).is_ok();
    let mut reading = true;
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        // Drain: write everything, then deliver every event.
        loop {
            while session.poll_transmit(&mut out).is_some() {}
            if !out.is_empty() {
                if writer.write_all(&out).is_err() || writer.flush().is_err() {
                    session.close(now());
                }
                out.clear();
            }
            let Some(event) = session.poll_event() else {
                break;
            };
            peer.on_event(&mut session, event, dispatch.as_ref(), &options, &handlers);
        }
        if session.is_closed() {
            break;
        }
        if reading && !credit_out && session.wants_read() {
            credit_out = credit.send(()).is_ok();
        }
        let Ok(input) = recv_until(&inbox, session.poll_timeout()) else {
            break;
        };
        match input {
            None => session.handle_timeout(now()),
            Some(Input::Bytes(bytes)) => {
                credit_out = false;
                session.handle_bytes(now(), &bytes);
            }
            Some(Input::Eof) => {
                reading = false;
                session.handle_eof(now());
            }
            Some(Input::Command(command)) => {
                if peer.on_command(&mut session, command) && dispatch.is_none() {
                    session.close(now());
                }
            }
            Some(Input::Handler(_, msg)) => peer.on_handler(&mut session, msg),
            Some(Input::Http(_) | Input::Net(_)) => {}
        }
    }
    peer.abort_all();
    let _ = writer.flush();
}
