//! The actor that owns one `Session`: it reads, feeds the core, drains its outputs, writes,
//! and sleeps until the core's next deadline. No lock around the core.

use std::collections::HashMap;
use std::sync::Arc;

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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

/// What an outbound request's caller waits for
pub(crate) type Outcome = Result<Box<RawValue>, CallError>;

/// Commands from the application's handles to the actor
pub(crate) enum Command {
    Request {
        method: String,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        token: u64,
        reply: oneshot::Sender<Result<Outcome, SendError>>,
        progress: Option<mpsc::UnboundedSender<Progress>>,
        task_status: Option<mpsc::UnboundedSender<TaskStatusUpdate>>,
    },
    /// The caller dropped its future: cancel the request if it is still in flight
    Cancel {
        token: u64,
    },
    Notify {
        method: String,
        params: Option<Box<RawValue>>,
        reply: oneshot::Sender<Result<(), SendError>>,
    },
    Close,
}

/// Messages from server handler tasks to the actor
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
        reply: oneshot::Sender<Result<TaskId, TaskError>>,
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
        reply: oneshot::Sender<Result<InputResponses, AskFailure>>,
    },
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
    /// The connection closed
    #[error("the connection closed")]
    Closed,
    /// The request runs as a task and the task could not ask (it ended, or cannot ask)
    #[error(transparent)]
    Task(#[from] TaskError),
}

/// A handler waiting for live (legacy) answers
struct Waiting {
    missing: usize,
    answers: InputResponses,
    reply: oneshot::Sender<Result<InputResponses, AskFailure>>,
}

/// The client application's answer to the server's input requests
pub type InputHandler = Arc<
    dyn Fn(
            InputRequests,
        )
            -> std::pin::Pin<Box<dyn Future<Output = Result<InputResponses, ErrorObject>> + Send>>
        + Send
        + Sync,
>;

/// What a client connection does with what the server sends besides responses
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Answers the server's input requests (elicitation, sampling, roots) in both eras;
    /// without it they are refused
    pub input: Option<InputHandler>,
    /// Receives the server's notifications (log messages, list changes, resource updates,
    /// subscription traffic); without it they are dropped
    pub notifications: Option<mpsc::UnboundedSender<mcp_core::InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<mpsc::UnboundedSender<String>>,
    /// HTTP only: authorize with OAuth when the server challenges (401, or 403
    /// `insufficient_scope`)
    pub auth: Option<crate::auth::OAuthOptions>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("input", &self.input.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("stderr", &self.stderr.is_some())
            .field("auth", &self.auth.is_some())
            .finish()
    }
}

impl ClientOptions {
    /// With an input handler
    pub fn input(mut self, handler: InputHandler) -> Self {
        self.input = Some(handler);
        self
    }

    /// Authorizes HTTP connections with OAuth
    pub fn auth(mut self, auth: crate::auth::OAuthOptions) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Captures a child server's stderr, line by line
    pub fn stderr(mut self, sender: mpsc::UnboundedSender<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(
        mut self,
        sender: mpsc::UnboundedSender<mcp_core::InboundNotification>,
    ) -> Self {
        self.notifications = Some(sender);
        self
    }
}

/// What the server side does with inbound requests: start a handler (spawned by the
/// dispatcher), or answer at once
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// Handles one request; returns the handler task's abort handle if it spawned one
    fn dispatch(
        &self,
        session: &mut Session,
        request: mcp_core::InboundRequest,
        handlers: &Handlers,
    ) -> Option<AbortHandle>;
}

/// Milliseconds since the Unix epoch, for the core's wall-clock anchor (task timestamps)
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The core's clock as tokio sees it, so paused-time tests drive protocol timeouts
pub(crate) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

struct Pending {
    reply: oneshot::Sender<Result<Outcome, SendError>>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
    task_status: Option<mpsc::UnboundedSender<TaskStatusUpdate>>,
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

/// Where handler tasks send their messages: one channel for the actor, each message tagged
/// with the session it is for (stdio connections have one session,
/// [`SessionKey::STATELESS`])
#[derive(Clone, Debug)]
pub(crate) struct Handlers {
    tx: mpsc::UnboundedSender<(SessionKey, HandlerMsg)>,
    key: SessionKey,
}

/// The actor's end of [`Handlers`]
pub(crate) type HandlerRx = mpsc::UnboundedReceiver<(SessionKey, HandlerMsg)>;

impl Handlers {
    /// A channel whose senders are tagged with [`SessionKey::STATELESS`]
    pub(crate) fn channel() -> (Self, HandlerRx) {
        let (tx, rx) = mpsc::unbounded_channel();
        let this = Self {
            tx,
            key: SessionKey::STATELESS,
        };
        (this, rx)
    }

    /// The same channel, tagged with another session
    pub(crate) fn for_session(&self, key: SessionKey) -> Self {
        Self {
            tx: self.tx.clone(),
            key,
        }
    }

    /// Sends a message to the actor; `Err` once it is gone
    pub(crate) fn send(&self, msg: HandlerMsg) -> Result<(), ()> {
        self.tx.send((self.key, msg)).map_err(|_| ())
    }
}

/// Who waits for a client's handshake
pub(crate) type Ready = oneshot::Sender<Result<mcp_core::PeerInfo, String>>;

/// The per-`Session` state of an actor: the application's calls in flight, the handlers
/// running, and what they wait for. Every transport's actor drives its sessions through
/// this, so stdio and HTTP handle events alike.
pub(crate) struct Peer {
    pending: HashMap<OutboundId, Pending>,
    tokens: HashMap<u64, OutboundId>,
    running: HashMap<InboundId, AbortHandle>,
    waiting: HashMap<InboundId, Waiting>,
    /// Requests whose handler turned them into tasks: the result completes the task
    tasks: HashMap<InboundId, TaskId>,
    /// Task handlers waiting for the input their task asked for
    task_asks: HashMap<TaskId, oneshot::Sender<Result<InputResponses, AskFailure>>>,
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
                        if let Some(handle) = d.dispatch(session, request, handlers) {
                            self.running.insert(id, handle);
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
                self.task_asks.remove(&task);
                let inbound = self
                    .tasks
                    .iter()
                    .find(|(_, t)| **t == task)
                    .map(|(i, _)| *i);
                if let Some(id) = inbound {
                    self.tasks.remove(&id);
                    self.waiting.remove(&id);
                    if let Some(handle) = self.running.remove(&id) {
                        handle.abort();
                    }
                }
            }
            Event::Cancelled { id, .. } => {
                self.waiting.remove(&id);
                if let Some(handle) = self.running.remove(&id) {
                    handle.abort();
                }
            }
            Event::Notification(n) => {
                if let Some(tx) = &options.notifications {
                    let _ = tx.send(n);
                }
            }
            Event::InputRequired { id, requests } => match &options.input {
                Some(handler) => {
                    let future = handler(requests);
                    let messages = handlers.clone();
                    tokio::spawn(async move {
                        let result = future.await;
                        let _ = messages.send(HandlerMsg::Answered { id, result });
                    });
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
            // Input, tasks and subscriptions are served through the core's own APIs by
            // later versions of this binding; nothing else needs the actor.
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
                    // The session answers the call with `Cancelled` (to nobody when the
                    // caller dropped its future).
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

    /// Handles one message of a handler task (server) or input handler (client)
    pub(crate) fn on_handler(&mut self, session: &mut Session, msg: HandlerMsg) {
        match msg {
            HandlerMsg::Done { responder, result } => {
                self.running.remove(&responder.id());
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
                        if let Some(handle) = self.running.remove(&id) {
                            handle.abort();
                        }
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
        for (_, handle) in self.running.drain() {
            handle.abort();
        }
        self.waiting.clear();
        self.tasks.clear();
    }
}

/// Runs one connection until it closes
pub(crate) async fn run<R, W>(
    mut session: Session,
    mut reader: R,
    mut writer: W,
    mut commands: mpsc::Receiver<Command>,
    dispatch: Option<Arc<dyn Dispatch>>,
    options: ClientOptions,
    ready: Option<Ready>,
) where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    session.anchor_wall_clock(now(), unix_ms());
    let mut peer = Peer::new(ready);
    let (handlers, mut handler_rx) = Handlers::channel();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    let mut commands_open = true;
    let mut reading = true;
    loop {
        // Drain: write everything, then deliver every event.
        loop {
            while session.poll_transmit(&mut out).is_some() {}
            if !out.is_empty() {
                if writer.write_all(&out).await.is_err() || writer.flush().await.is_err() {
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
        let deadline = session.poll_timeout().map(Instant::from_std);
        let want_read = reading && session.wants_read();
        tokio::select! {
            read = reader.read(&mut buf), if want_read => match read {
                Ok(0) | Err(_) => {
                    reading = false;
                    session.handle_eof(now());
                }
                Ok(n) => session.handle_bytes(now(), &buf[..n]),
            },
            command = commands.recv(), if commands_open => {
                let close = match command {
                    Some(command) => peer.on_command(&mut session, command),
                    None => true,
                };
                if close {
                    commands_open = false;
                    if dispatch.is_none() {
                        session.close(now());
                    }
                }
            }
            msg = handler_rx.recv() => {
                if let Some((_, msg)) = msg {
                    peer.on_handler(&mut session, msg);
                }
            }
            () = sleep_until(deadline) => session.handle_timeout(now()),
        }
    }
    peer.abort_all();
    let _ = writer.shutdown().await;
}

pub(crate) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
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
