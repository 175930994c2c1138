//! What a session tells the application: events, outcomes and close reasons

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use super::ids::InputId;
use super::ids::TaskId;
use super::ids::{InboundId, OutboundId, Responder};
use crate::jsonrpc::{ErrorObject, RequestId};
use crate::schema::{InputRequests, InputResponses, TaskStatus};
use crate::version::ProtocolVersion;

/// Something the application should know or act on, from [`Session::poll_event`](super::Session::poll_event)
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// The session is ready for application requests
    ///
    /// Client: the handshake (legacy) or discovery (modern) finished; read the server with
    /// [`Session::peer`](super::Session::peer). Server: a legacy client sent
    /// `notifications/initialized`. A modern server session has no such moment and never
    /// emits it.
    Ready {
        /// The version in use
        version: ProtocolVersion,
    },
    /// The peer sent a request; answer it with [`Session::respond`](super::Session::respond)
    Request(InboundRequest),
    /// The peer sent a notification the core does not consume itself
    Notification(InboundNotification),
    /// A request we sent reached its final outcome; exactly once per [`OutboundId`]
    Response {
        /// The request
        id: OutboundId,
        /// Its result, or why there is none
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// The peer reported progress on a request we sent with progress enabled
    Progress {
        /// The request
        id: OutboundId,
        /// What the peer reported
        progress: Progress,
    },
    /// The peer cancelled a request it sent us; its [`Responder`] is now inert and the
    /// handler should stop
    Cancelled {
        /// The request the peer gave up on
        id: InboundId,
        /// The peer's reason, if it gave one
        reason: Option<String>,
    },
    /// The peer needs input before a request can finish: answer with
    /// [`Session::provide_input`](super::Session::provide_input) (or refuse with
    /// [`Session::refuse_input`](super::Session::refuse_input))
    ///
    /// Client side, in both eras: `Retry` for a request of ours that got `input_required`
    /// (modern), `Live` for a server's `elicitation/create`, `sampling/createMessage` or
    /// `roots/list` (legacy).
    InputRequired {
        /// What needs the input
        id: InputId,
        /// The input requests, by the server's keys
        requests: InputRequests,
    },
    /// Server side, legacy era: the client answered an input request a handler made with
    /// [`Session::ask_input`](super::Session::ask_input)
    InputAnswered {
        /// The request whose handler asked
        request: InboundId,
        /// The key the handler chose
        key: String,
        /// The client's result (an elicitation, sampling or roots result), or why there is
        /// none
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// Client side: the task behind one of our calls changed status (informational; the
    /// call still ends in one [`Event::Response`])
    TaskStatus {
        /// The call
        id: OutboundId,
        /// Its task's new status
        status: TaskStatus,
        /// The server's status message, if any
        message: Option<String>,
    },
    /// Server side: the input a task asked for with
    /// [`TaskUpdate::InputRequired`](super::TaskUpdate::InputRequired) arrived (through
    /// `tasks/update` in 2026, through live requests in 2025-11-25); the task is `working`
    /// again
    TaskInput {
        /// The task
        task: TaskId,
        /// Every answer, by the keys the task used
        responses: InputResponses,
    },
    /// Server side: the client cancelled a task (`tasks/cancel`); it is already `cancelled`,
    /// stop working on it
    TaskCancelled {
        /// The task
        task: TaskId,
    },
    /// Commands may send again after [`SendError::Blocked`](super::SendError::Blocked)
    Unblocked,
    /// Client side, 2025 wire over HTTP: the server forgot the session (HTTP 404) and the
    /// transport started a new one (see [`ClientEvent::SessionRenewed`](super::ClientEvent::SessionRenewed))
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

/// A request from the peer
#[derive(Debug)]
#[non_exhaustive]
pub struct InboundRequest {
    /// The obligation to answer it, consumed by [`Session::respond`](super::Session::respond)
    pub responder: Responder,
    /// The method name, e.g. `tools/call`
    pub method: String,
    /// The raw params, as sent
    pub params: Option<Box<RawValue>>,
    /// The protocol version of this request (negotiated, or from its `_meta` in the modern era)
    pub version: ProtocolVersion,
    /// The peer's capabilities for this request (a client's may differ per modern request)
    pub peer_capabilities: Arc<Value>,
    /// Whether the peer asked for progress notifications
    pub wants_progress: bool,
    /// Whether the client allows answering with a task
    /// ([`Inbound::start_task`](super::Inbound::start_task))
    pub task_offered: bool,
    /// Who sent it: the verified principal, the HTTP headers, the 2025 session id; `None`
    /// when the binding said nothing (a byte stream without [`Session::set_caller`](super::Session::set_caller))
    pub caller: Option<Arc<super::Caller>>,
    /// `_meta`'s `io.modelcontextprotocol/logLevel` as the request came (`None` when absent
    /// or not a level name), for [`LogFilter::for_request`](crate::server::LogFilter::for_request)
    pub(crate) log_level: Option<crate::schema::LoggingLevel>,
    /// A 2026 `tools/call`'s name and arguments in `params`, where the HTTP rules' one pass
    /// over them found them (the route reads them there instead of the whole params again)
    pub(crate) call: Option<super::params::CallSpans>,
}

impl InboundRequest {
    /// The verified principal of the request's access token, if any
    pub fn principal(&self) -> Option<&super::Principal> {
        self.caller.as_ref()?.principal.as_ref()
    }
}

impl InboundRequest {
    /// Decodes the params as `T` (absent params decode from `{}`)
    ///
    /// # Errors
    /// The params do not match `T`; answer with
    /// [`ErrorObject::invalid_params`](crate::jsonrpc::ErrorObject::invalid_params).
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.params.as_deref().map_or("{}", RawValue::get))
    }
}

/// A notification from the peer
#[derive(Debug)]
#[non_exhaustive]
pub struct InboundNotification {
    /// The method name, e.g. `notifications/tools/list_changed`
    pub method: String,
    /// The raw params, as sent
    pub params: Option<Box<RawValue>>,
}

impl InboundNotification {
    /// The `subscriptions/listen` request this notification was delivered on (2026-07-28:
    /// its `_meta["io.modelcontextprotocol/subscriptionId"]`), or `None` for one sent to the
    /// whole connection
    ///
    /// A client routes a listen stream's notifications by it: the id is the listen
    /// request's JSON-RPC id, as [`OutboundId::wire_id`] gives it.
    pub fn subscription_id(&self) -> Option<RequestId> {
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
            id: Option<RequestId>,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            #[serde(rename = "_meta")]
            meta: Option<Meta>,
        }
        let params: Params = serde_json::from_str(self.params.as_deref()?.get()).ok()?;
        params.meta?.id
    }
}

/// A progress report
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; strictly increasing over one request
    pub progress: f64,
    /// The total, if known
    pub total: Option<f64>,
    /// A human-readable message
    pub message: Option<String>,
}

impl Progress {
    /// A progress value without total or message
    pub fn new(progress: f64) -> Self {
        Self {
            progress,
            total: None,
            message: None,
        }
    }

    /// With a known total
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// With a message
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Why an outbound request has no result
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with a JSON-RPC error
    #[error("the peer answered with an error: {0}")]
    Remote(ErrorObject),
    /// No answer came in time; `notifications/cancelled` was sent to the peer
    #[error("the request timed out")]
    TimedOut,
    /// We cancelled the request; `notifications/cancelled` was sent to the peer
    #[error("the request was cancelled")]
    Cancelled,
    /// The session closed before an answer came
    #[error("the session closed before the request was answered")]
    SessionClosed,
    /// The peer's result does not match the method's result type (from
    /// [`Pending::decode`](super::Pending::decode))
    #[error("{0}")]
    InvalidResult(String),
    /// The server kept asking for input past
    /// [`ClientConfig::max_input_rounds`](super::ClientConfig::max_input_rounds)
    #[error("the server asked for input more than {limit} times")]
    TooManyInputRounds {
        /// The limit
        limit: u8,
    },
    /// The request could not be carried to the peer or its answer back: a local transport
    /// failure (connection refused, TLS, proxy, a broken stream), never a peer's answer; the
    /// text names the target and the cause
    #[error("{0}")]
    Transport(String),
    /// The answer is larger than [`Limits::max_message_size`](super::Limits::max_message_size)
    /// and was dropped unread
    #[error("{}", too_large("answer", *.size, *.limit))]
    TooLarge {
        /// The answer's size in bytes, when known (a line's length, a `Content-Length`)
        size: Option<u64>,
        /// The limit in bytes
        limit: usize,
    },
}

/// "the answer is 20971520 bytes, over the message limit of 8388608 bytes"
pub(crate) fn too_large(what: &str, size: Option<u64>, limit: usize) -> String {
    match size {
        Some(size) => format!(
            "the {what} is {size} bytes, over the message limit of {limit} bytes \
             (Limits::max_message_size)"
        ),
        None => format!(
            "the {what} is over the message limit of {limit} bytes (Limits::max_message_size)"
        ),
    }
}

/// Why a session closed
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer closed its side of the transport
    PeerClosed,
    /// The application called [`Session::close`](super::Session::close)
    Local,
    /// The handshake or discovery failed; the text says why
    Handshake(String),
    /// The transport failed locally (the server could not be reached, a message too large
    /// to read was dropped); the text names the target and the cause
    Transport(String),
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PeerClosed => f.write_str("the peer closed the connection"),
            Self::Local => f.write_str("closed locally"),
            Self::Handshake(why) => write!(f, "handshake failed: {why}"),
            Self::Transport(why) => f.write_str(why),
        }
    }
}
