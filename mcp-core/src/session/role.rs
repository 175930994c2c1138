//! The two ends of a connection as types: [`Client`] and [`Server`], and the events each sees
//!
//! [`Session`](super::Session) is generic over its role, so what only one end may do is a
//! method of that end's type alone ([`ClientSession`](super::ClientSession),
//! [`ServerSession`](super::ServerSession)), and each end drains its own event enum. A role
//! mismatch is a compile error, never a panic.

use serde_json::value::RawValue;

use super::event::{CallError, CloseReason, Event, InboundNotification, InboundRequest, Progress};
use super::ids::InputId;
use super::ids::TaskId;
use super::ids::{InboundId, OutboundId};
use crate::schema::{InputRequests, InputResponses, TaskStatus};
use crate::version::ProtocolVersion;

mod sealed {
    pub trait Sealed {}
}

/// A session's role: [`Client`] or [`Server`]; sealed
pub trait Role: sealed::Sealed + Send + Sync + std::panic::UnwindSafe + 'static {
    /// What [`Session::poll_event`](super::Session::poll_event) yields on this end
    type Event: std::fmt::Debug + Send;
    #[doc(hidden)]
    fn event(event: Event) -> Option<Self::Event>;
}

/// The MCP client's end (the host application's side)
#[derive(Debug)]
pub enum Client {}

/// The MCP server's end (the side offering tools, resources and prompts)
#[derive(Debug)]
pub enum Server {}

impl sealed::Sealed for Client {}
impl sealed::Sealed for Server {}

impl Role for Client {
    type Event = ClientEvent;

    fn event(event: Event) -> Option<ClientEvent> {
        Some(match event {
            Event::Ready { version } => ClientEvent::Ready { version },
            Event::Request(r) => ClientEvent::Request(r),
            Event::Notification(n) => ClientEvent::Notification(n),
            Event::Response { id, outcome } => ClientEvent::Response { id, outcome },
            Event::Progress { id, progress } => ClientEvent::Progress { id, progress },
            Event::Cancelled { id, reason } => ClientEvent::Cancelled { id, reason },
            Event::InputRequired { id, requests } => ClientEvent::InputRequired { id, requests },
            Event::TaskStatus {
                id,
                status,
                message,
            } => ClientEvent::TaskStatus {
                id,
                status,
                message,
            },
            Event::TaskCancelled { task } => ClientEvent::TaskCancelled { task },
            Event::Unblocked => ClientEvent::Unblocked,
            Event::SessionRenewed { version } => ClientEvent::SessionRenewed { version },
            Event::Closed { reason } => ClientEvent::Closed { reason },
            // Only a server's handlers ask for input, and only its tasks wait for input.
            Event::InputAnswered { .. } | Event::TaskInput { .. } => return None,
        })
    }
}

impl Role for Server {
    type Event = ServerEvent;

    fn event(event: Event) -> Option<ServerEvent> {
        Some(match event {
            Event::Ready { version } => ServerEvent::Ready { version },
            Event::Request(r) => ServerEvent::Request(r),
            Event::Notification(n) => ServerEvent::Notification(n),
            Event::Response { id, outcome } => ServerEvent::Response { id, outcome },
            Event::Progress { id, progress } => ServerEvent::Progress { id, progress },
            Event::Cancelled { id, reason } => ServerEvent::Cancelled { id, reason },
            Event::InputAnswered {
                request,
                key,
                outcome,
            } => ServerEvent::InputAnswered {
                request,
                key,
                outcome,
            },
            Event::TaskInput { task, responses } => ServerEvent::TaskInput { task, responses },
            Event::TaskStatus {
                id,
                status,
                message,
            } => ServerEvent::TaskStatus {
                id,
                status,
                message,
            },
            Event::TaskCancelled { task } => ServerEvent::TaskCancelled { task },
            Event::Unblocked => ServerEvent::Unblocked,
            Event::Closed { reason } => ServerEvent::Closed { reason },
            // Only a client is asked for input, and only a client's HTTP transport renews
            // its session.
            Event::InputRequired { .. } | Event::SessionRenewed { .. } => return None,
        })
    }
}

/// What a [`ClientSession`](super::ClientSession) tells the application, from
/// [`poll_event`](super::Session::poll_event)
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientEvent {
    /// The handshake (legacy) or discovery (modern) finished: application requests may go
    /// out; read the server with [`peer`](super::Session::peer)
    Ready {
        /// The version in use
        version: ProtocolVersion,
    },
    /// A request of the server's that the core does not answer itself (a method the client
    /// listed in [`ClientConfig::extra_methods`](super::ClientConfig::extra_methods)); answer
    /// it with [`respond`](super::Session::respond)
    Request(InboundRequest),
    /// A notification of the server's that the core does not consume itself (log messages,
    /// list changes, resource updates, subscription traffic)
    Notification(InboundNotification),
    /// A request we sent reached its final outcome; exactly once per [`OutboundId`]
    Response {
        /// The request
        id: OutboundId,
        /// Its result, or why there is none
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// The server reported progress on a request we sent with progress enabled
    Progress {
        /// The request
        id: OutboundId,
        /// What the server reported
        progress: Progress,
    },
    /// The server cancelled a request it sent us; its [`Responder`](super::Responder) is now
    /// inert
    Cancelled {
        /// The request the server gave up on
        id: InboundId,
        /// The server's reason, if it gave one
        reason: Option<String>,
    },
    /// The server needs input before a request can finish, in either era: `Retry` for a
    /// request of ours that got `input_required` (modern), `Live` for a server's
    /// `elicitation/create`, `sampling/createMessage` or `roots/list` (legacy); answer with
    /// [`provide_input`](super::Session::provide_input) or refuse with
    /// [`refuse_input`](super::Session::refuse_input)
    InputRequired {
        /// What needs the input
        id: InputId,
        /// The input requests, by the server's keys
        requests: InputRequests,
    },
    /// The task behind one of our calls changed status (informational; the call still ends
    /// in one [`ClientEvent::Response`])
    TaskStatus {
        /// The call
        id: OutboundId,
        /// Its task's new status
        status: TaskStatus,
        /// The server's status message, if any
        message: Option<String>,
    },
    /// The server cancelled a task this client runs for it (a task-augmented input request,
    /// 2025-11-25); it is already `cancelled`
    TaskCancelled {
        /// The task
        task: TaskId,
    },
    /// Commands may send again after [`SendError::Blocked`](super::SendError::Blocked)
    Unblocked,
    /// The server forgot the session (HTTP 404 on the 2025 wire) and the HTTP transport
    /// ([`ClientTransport`](crate::http::ClientTransport)) started a new one: a new
    /// `initialize` (same client info and capabilities, this version) was answered
    ///
    /// Requests whose POST got the 404 were re-sent on the new session; what lived on the
    /// old one is gone: resource subscriptions (`resources/subscribe` again if needed), and
    /// state the server kept for it. The standalone GET stream is re-opened by the
    /// transport.
    SessionRenewed {
        /// The version the new session uses (the one negotiated before)
        version: ProtocolVersion,
    },
    /// The session ended; always the last event (pending requests failed just before it)
    Closed {
        /// Why it ended
        reason: CloseReason,
    },
}

/// What a [`ServerSession`](super::ServerSession) tells the application, from
/// [`poll_event`](super::Session::poll_event)
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A legacy client sent `notifications/initialized`; a modern server session has no such
    /// moment and never emits it
    Ready {
        /// The version in use
        version: ProtocolVersion,
    },
    /// The client sent a request; answer it with [`respond`](super::Session::respond), act
    /// on it meanwhile through [`inbound`](super::Session::inbound)
    Request(InboundRequest),
    /// A notification of the client's that the core does not consume itself
    Notification(InboundNotification),
    /// A request we sent reached its final outcome; exactly once per [`OutboundId`]
    Response {
        /// The request
        id: OutboundId,
        /// Its result, or why there is none
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// The client reported progress on a request we sent with progress enabled
    Progress {
        /// The request
        id: OutboundId,
        /// What the client reported
        progress: Progress,
    },
    /// The client cancelled a request; its [`Responder`](super::Responder) is now inert and
    /// the handler should stop
    Cancelled {
        /// The request the client gave up on
        id: InboundId,
        /// The client's reason, if it gave one
        reason: Option<String>,
    },
    /// Legacy era: the client answered an input request a handler made with
    /// [`Inbound::ask_input`](super::Inbound::ask_input)
    InputAnswered {
        /// The request whose handler asked
        request: InboundId,
        /// The key the handler chose
        key: String,
        /// The client's result (an elicitation, sampling or roots result), or why there is
        /// none
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// The input a task asked for with
    /// [`TaskUpdate::InputRequired`](super::TaskUpdate::InputRequired) arrived (through
    /// `tasks/update` in 2026, through live requests in 2025-11-25); the task is `working`
    /// again
    TaskInput {
        /// The task
        task: TaskId,
        /// Every answer, by the keys the task used
        responses: InputResponses,
    },
    /// The client cancelled a task (`tasks/cancel`); it is already `cancelled`, stop working
    /// on it
    TaskCancelled {
        /// The task
        task: TaskId,
    },
    /// 2025-11-25: the client runs an input request of ours (task-augmented sampling or
    /// elicitation) as a task, and that task changed status (informational; the request still
    /// ends in one [`ServerEvent::Response`])
    TaskStatus {
        /// Our input request
        id: OutboundId,
        /// Its task's new status
        status: TaskStatus,
        /// The client's status message, if any
        message: Option<String>,
    },
    /// Commands may send again after [`SendError::Blocked`](super::SendError::Blocked)
    Unblocked,
    /// The session ended; always the last event (pending requests failed just before it)
    Closed {
        /// Why it ended
        reason: CloseReason,
    },
}
