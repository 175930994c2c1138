//! The client side of Streamable HTTP as one sans-IO machine: [`ClientTransport`]

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use crate::id_map::{IdMap, id_map};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::client::{HttpClient, ResponseKind};
use super::extra_headers::{ExtraHeaders, HeaderError, is_secret};
use super::headers::{Headers, MCP_METHOD, MCP_SESSION_ID};
use crate::auth::{AuthAction, AuthError, AuthEvent, AuthResponse, OAuthClient, Secret, Verdict};
use crate::codec::FrameError;
use crate::codec::sse::SseDecoder;
use crate::jsonrpc::RequestId;
use crate::schema::ListToolsResult;
use crate::session::{CallError, ClientSession, OutboundId};
use crate::version::ProtocolVersion;

/// How long POSTs wait for the head of the standalone GET stream (2025 wire) before going out
/// anyway
const GET_HEAD_WAIT: Duration = Duration::from_secs(2);

/// Why the session closes when the server ended it (HTTP 404) and no new one is started
const SESSION_ENDED: &str = "the server ended the session (HTTP 404)";

/// Why a re-sent request fails when the new session got a 404 too
const ENDED_AGAIN: &str = "the server ended the session (HTTP 404) again after it was \
    re-established; the request was re-sent once and is not re-sent again";

/// Why a request fails whose answer was under way when the server forgot the session
const LOST_WHILE_ANSWERING: &str = "the server ended the session (HTTP 404) while answering; \
    the request may have run, so it is not re-sent";

/// Names one HTTP request the binding performs for a [`ClientTransport`]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(u64);

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream#{}", self.0)
    }
}

/// The HTTP method of a [`HttpRequest`]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// The standalone stream, or a resumption with `Last-Event-ID`
    Get,
    /// One JSON-RPC message
    Post,
    /// The end of a 2025-wire session
    Delete,
}

impl HttpMethod {
    /// The method's name as HTTP spells it
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Delete => "DELETE",
        }
    }
}

/// One HTTP request to perform against the MCP endpoint (its `Debug` hides the values of
/// `Authorization` and `DPoP`)
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// Report the response under this id
    pub stream: StreamId,
    /// The method
    pub method: HttpMethod,
    /// The header fields, in order
    pub headers: Vec<(String, String)>,
    /// The body (empty for GET and DELETE)
    pub body: Vec<u8>,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let secret = is_secret(n);
                (n.as_str(), if secret { "***" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("stream", &self.stream)
            .field("method", &self.method)
            .field("headers", &headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

/// One request or response stream in flight
#[derive(Debug)]
struct Stream {
    /// The JSON-RPC id of the request whose answer this stream carries
    awaits: Option<Value>,
    kind: Option<ResponseKind>,
    decoder: SseDecoder,
    json: Vec<u8>,
    /// The awaited answer arrived (or nothing is awaited)
    complete: bool,
    /// Later POSTs wait for this one's head (2025 wire)
    blocking: bool,
    /// With authorization: the request as planned (without `Authorization`) to resend
    /// after a challenge, and the `Authorization` it carried
    replay: Option<Replay>,
    /// The response's `Content-Length`, if it said one
    length: Option<u64>,
    /// The HTTP method
    method: HttpMethod,
    /// The session id the request carried (2025 wire)
    sid: Option<String>,
    /// A request's POST on a session, until its head: the message (and the application's
    /// headers) to re-send on a new session if the server answers 404
    resend: Option<Outgoing>,
    /// It is already a re-send after a 404
    retried: bool,
    /// A JSON response with an error status (401 and 403 fail at their head): the status
    /// the request failed with, should its body hold no JSON-RPC answer
    refused: Option<u16>,
}

/// A message the session wrote, waiting to be POSTed
#[derive(Debug, Clone)]
struct Outgoing {
    message: Vec<u8>,
    /// The application's headers for the request it carries
    extra: Option<ExtraHeaders>,
    /// It is a re-send after a 404
    retried: bool,
}

/// A new session being started after a 404 (2025 wire)
#[derive(Debug)]
struct Renewal {
    /// The JSON-RPC id of the transport's own `initialize`
    id: Value,
    /// The version asked for (the one negotiated before)
    version: ProtocolVersion,
    /// The requests whose POSTs got the 404, to re-send on the new session, in order
    held: Vec<Outgoing>,
}

/// A request kept for resending under a fresh token
#[derive(Debug)]
struct Replay {
    method: HttpMethod,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The `Authorization` value it carried
    sent: Option<Secret>,
    /// It is already a resend with the DPoP nonce the server asked for
    nonce_retried: bool,
}

/// A challenged request waiting for the authorization flow
#[derive(Debug)]
struct Parked {
    replay: Replay,
    awaits: Option<Value>,
    blocking: bool,
}

/// The parts of a message the transport looks at
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CancelParams {
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
}

/// The whole client side of Streamable HTTP as one sans-IO machine: which HTTP requests to
/// make, and what each response means for the [`ClientSession`](crate::ClientSession)
///
/// [`ClientTransport`] sits between a client `Session` and the binding's HTTP library. The
/// binding's loop is:
///
/// 1. after anything happened, [`pull`](Self::pull) what the session transmits;
/// 2. perform every [`poll_request`](Self::poll_request) (each names a
///    [`StreamId`]) and abort every [`poll_abort`](Self::poll_abort);
/// 3. report each response back by its `StreamId`:
///    [`handle_head`](Self::handle_head), then
///    [`handle_body`](Self::handle_body) for each chunk, then
///    [`handle_end`](Self::handle_end), or
///    [`handle_failed`](Self::handle_failed) when the request failed;
/// 4. wake at [`poll_timeout`](Self::poll_timeout) and call
///    [`handle_timeout`](Self::handle_timeout);
/// 5. to end, perform the DELETE [`close`](Self::close) returns (briefly), then
///    close the session.
///
/// The decisions made here, so no binding makes them:
/// - On the 2025 wire a POST waits until the one before it has its response head, so the
///   server sees messages in order (the `initialize` answer carries the session id the
///   next POST needs).
/// - On the 2026 wire a request is cancelled by closing its response: the session's
///   `notifications/cancelled` becomes an abort of that request's stream.
/// - A request whose answer cannot come (HTTP failure, an unexpected status, a JSON body or
///   event stream that ended without it and cannot be resumed) gets a JSON-RPC error answer
///   in its place (-32603), so it ends exactly once.
/// - An event stream that ends early is resumed with `Last-Event-ID` after the server's
///   `retry:` delay.
/// - A 404 on a request that carried the session id (2025 wire) means the server ended the
///   session (it restarted, or expired it): the transport starts a new one, as the spec
///   requires. It forgets the session id, POSTs the `initialize` the session sent first
///   again (same client info and capabilities, the negotiated version, its own JSON-RPC id),
///   without a session id, and holds every later message until it is answered. Then it
///   POSTs `notifications/initialized`, re-sends the requests whose POSTs got the 404 (the
///   server never processed them), in order, then the held messages, re-opens the
///   standalone GET stream, and the session emits
///   [`ClientEvent::SessionRenewed`](crate::ClientEvent::SessionRenewed). What lived on the
///   old session is gone: resource subscriptions, and answers under way (a request whose
///   answer stream had started, or was being resumed, fails: it may have run, so it is not
///   re-sent; notifications and answers to the server's requests that got the 404 are
///   dropped). Bounded: a request is re-sent once (a second 404 fails it with a transport
///   error saying so); one new session per 404 burst (later 404s of the old session only
///   hold their requests), and none again until the new session has answered a request or
///   the GET stream, else the session closes as below. If the new `initialize` fails (an
///   HTTP error, a JSON-RPC error, another version), the held requests fail and the
///   session closes with "the server ended the session (HTTP 404)" and why.
/// - Once the 2025 handshake is done, the standalone GET stream is opened (405 is fine).
/// - The `Mcp-Param-*` mirrors of each tool are learned from `tools/list` answers.
/// - With an [`OAuthClient`] ([`with_auth`](Self::with_auth)): every request carries its
///   `Authorization`; a 401 or a 403 `insufficient_scope` parks the request while the
///   client authorizes (its requests come from
///   [`poll_auth_action`](Self::poll_auth_action); report them with
///   [`handle_auth_response`](Self::handle_auth_response),
///   [`handle_auth_redirect`](Self::handle_auth_redirect) or
///   [`handle_auth_error`](Self::handle_auth_error)), then resends it with the new token,
///   or fails it with the authorization error. Nothing else is sent meanwhile. A
///   DPoP-bound token goes with a fresh `DPoP` proof on every request; a 401
///   `use_dpop_nonce` resends the request once at once with the server's new nonce.
#[derive(Debug)]
pub struct ClientTransport {
    http: HttpClient,
    max_message: usize,
    streams: IdMap<StreamId, Stream>,
    next_stream: u64,
    /// Messages the session wrote, not yet POSTed
    /// Messages the session wrote, not yet POSTed, with the application's headers for
    /// the request each carries
    outbox: VecDeque<Outgoing>,
    requests: VecDeque<HttpRequest>,
    aborts: VecDeque<StreamId>,
    /// Reconnections armed: `Last-Event-ID` -> the request the stream still owes
    resumes: HashMap<String, Option<Value>>,
    /// Ids of `tools/list` requests in flight (their answers teach header mirrors)
    tools_lists: HashSet<String>,
    get_opened: bool,
    /// The standalone GET stream later POSTs wait for, and when they stop waiting
    get_wait: Option<(StreamId, Option<Instant>)>,
    closed: bool,
    auth: Option<OAuthClient>,
    parked: Vec<Parked>,
    /// The application's headers on every request
    extra: ExtraHeaders,
    /// The application's headers for the POSTs of one request (its retries too), while it
    /// is in flight
    per_request: IdMap<OutboundId, ExtraHeaders>,
    /// The session's `initialize` and `notifications/initialized` (2025 wire), to start a
    /// new session after a 404
    handshake: (Option<Vec<u8>>, Option<Vec<u8>>),
    /// A new session being started
    renewal: Option<Renewal>,
    /// A 404 on the current session may start a new one (not again before a renewed
    /// session answered something)
    renewable: bool,
    /// How many new sessions were started
    renewals: u64,
}

impl Default for ClientTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientTransport {
    /// A transport with nothing sent yet
    ///
    /// One JSON body or SSE event from the server may be as large as the session's
    /// [`Limits::max_message_size`](crate::Limits::max_message_size) (read at each
    /// [`pull`](Self::pull)); a larger one fails the request it answers at once with
    /// [`CallError::TooLarge`] (unread, when its `Content-Length` says so).
    pub fn new() -> Self {
        Self {
            http: HttpClient::new(),
            max_message: crate::Limits::default().max_message_size,
            streams: id_map(),
            next_stream: 1,
            outbox: VecDeque::new(),
            requests: VecDeque::new(),
            aborts: VecDeque::new(),
            resumes: HashMap::new(),
            tools_lists: HashSet::new(),
            get_opened: false,
            get_wait: None,
            closed: false,
            auth: None,
            parked: Vec::new(),
            extra: ExtraHeaders::default(),
            per_request: id_map(),
            handshake: (None, None),
            renewal: None,
            renewable: true,
            renewals: 0,
        }
    }

    /// Adds `headers` to every request the transport plans: an `X-API-Key` or a static
    /// `Authorization: Bearer` key a server issued, a tenant or trace header
    ///
    /// With OAuth ([`with_auth`](Self::with_auth)) the flow's token replaces a static
    /// `Authorization`.
    ///
    /// # Errors
    /// [`HeaderError`] for a name that is not a token, a value with a control character, or a
    /// header the transport sets itself (`Content-Type`, `Accept`, `Mcp-Session-Id`, ...).
    pub fn with_headers<I, N, V>(mut self, headers: I) -> Result<Self, HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        self.extra = ExtraHeaders::new(headers)?;
        Ok(self)
    }

    /// Adds `headers` to the POST that carries the request `id` (as
    /// [`with_headers`](Self::with_headers) does for every request); call it before the
    /// [`pull`](Self::pull) that takes the request
    ///
    /// # Errors
    /// [`HeaderError`] as for [`with_headers`](Self::with_headers); nothing is kept then.
    pub fn request_headers<I, N, V>(
        &mut self,
        id: OutboundId,
        headers: I,
    ) -> Result<(), HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        let headers = ExtraHeaders::new(headers)?;
        if !headers.is_empty() && !self.closed {
            self.per_request.insert(id, headers);
        }
        Ok(())
    }

    /// Authorizes with `auth`: every request carries its `Authorization`; a 401 (or a 403
    /// `insufficient_scope`) parks the request while the flow runs (drive it with
    /// [`poll_auth_action`](Self::poll_auth_action) and the `handle_auth_*` methods), then
    /// resends it with the new token, or fails it with the authorization error
    pub fn with_auth(mut self, auth: OAuthClient) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The OAuth client, if any
    pub fn auth(&self) -> Option<&OAuthClient> {
        self.auth.as_ref()
    }

    /// The next step of a running authorization flow
    #[must_use]
    pub fn poll_auth_action(&mut self) -> Option<AuthAction> {
        self.auth.as_mut()?.poll_action()
    }

    /// The response to an [`AuthAction::Fetch`]
    pub fn handle_auth_response(
        &mut self,
        now: Instant,
        response: AuthResponse,
        session: &mut ClientSession,
    ) {
        if let Some(auth) = self.auth.as_mut() {
            auth.handle_response(now, response);
        }
        self.after_auth(now, session);
    }

    /// Where the user agent of an [`AuthAction::Authorize`] was redirected to
    pub fn handle_auth_redirect(&mut self, now: Instant, url: &str, session: &mut ClientSession) {
        if let Some(auth) = self.auth.as_mut() {
            auth.handle_redirect(now, url);
        }
        self.after_auth(now, session);
    }

    /// The user agent of an [`AuthAction::Authorize`] failed
    pub fn handle_auth_error(&mut self, now: Instant, reason: &str, session: &mut ClientSession) {
        if let Some(auth) = self.auth.as_mut() {
            auth.handle_user_agent_error(reason);
        }
        self.after_auth(now, session);
    }

    /// Resends the parked requests once no flow runs (or fails them if it failed)
    fn after_auth(&mut self, now: Instant, session: &mut ClientSession) {
        let Some(auth) = self.auth.as_mut() else {
            return;
        };
        let mut failed = None;
        while let Some(event) = auth.poll_event() {
            if let AuthEvent::Failed(error) = event {
                failed = Some(error);
            }
        }
        if !auth.is_busy() {
            for parked in std::mem::take(&mut self.parked) {
                match &failed {
                    Some(error) => {
                        let why = format!("authorization failed: {error}");
                        self.fail(now, parked.awaits, &why, session);
                    }
                    None => {
                        let Replay {
                            method,
                            headers,
                            body,
                            ..
                        } = parked.replay;
                        self.start(method, headers, body, parked.awaits, parked.blocking);
                    }
                }
            }
        }
        self.pull_at(now, session);
    }

    /// Reads a response status for the authorization client: `true` when the request was
    /// parked (or failed) and its response must be ignored
    fn challenge(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        headers: &(impl Headers + ?Sized),
        session: &mut ClientSession,
    ) -> bool {
        let (Some(auth), Some(entry)) = (self.auth.as_mut(), self.streams.get(&stream)) else {
            return false;
        };
        if let Some(nonce) = headers.values("dpop-nonce").last() {
            auth.handle_dpop_nonce(nonce);
        }
        let sent = entry
            .replay
            .as_ref()
            .and_then(|r| r.sent.as_ref())
            .map(Secret::expose);
        let verdict =
            auth.handle_mcp_response(now, status, headers.values("www-authenticate"), sent);
        match verdict {
            Verdict::RetryWithNonce => {
                let entry = self.streams.remove(&stream).expect("looked up above");
                self.aborts.push_back(stream);
                match entry.replay {
                    Some(replay) if !replay.nonce_retried => {
                        let Replay {
                            method,
                            headers,
                            body,
                            ..
                        } = replay;
                        let id = self.start(method, headers, body, entry.awaits, entry.blocking);
                        if let Some(r) = self.streams.get_mut(&id).and_then(|s| s.replay.as_mut()) {
                            r.nonce_retried = true;
                        }
                    }
                    _ => {
                        let awaits = if entry.complete { None } else { entry.awaits };
                        let error = AuthError::DpopNonce(
                            "the resource server refused the DPoP nonce it supplied",
                        );
                        self.fail(
                            now,
                            awaits,
                            &format!("authorization failed: {error}"),
                            session,
                        );
                    }
                }
                self.pull_at(now, session);
                true
            }
            Verdict::Retry => {
                let entry = self.streams.remove(&stream).expect("looked up above");
                self.aborts.push_back(stream);
                if let Some(replay) = entry.replay {
                    self.parked.push(Parked {
                        replay,
                        awaits: entry.awaits,
                        blocking: entry.blocking,
                    });
                }
                self.after_auth(now, session);
                true
            }
            Verdict::Fail(error) => {
                let entry = self.streams.remove(&stream).expect("looked up above");
                self.aborts.push_back(stream);
                let awaits = if entry.complete { None } else { entry.awaits };
                self.fail(
                    now,
                    awaits,
                    &format!("authorization failed: {error}"),
                    session,
                );
                self.pull_at(now, session);
                true
            }
            _ => false,
        }
    }

    /// How many HTTP requests are in flight
    pub fn streams_in_flight(&self) -> usize {
        self.streams.len()
    }

    /// Takes what the session transmits and plans the HTTP requests that carry it; call
    /// after every change to the session (a command, or any `handle_*` here)
    pub fn pull(&mut self, session: &mut ClientSession) {
        if self.closed {
            return;
        }
        self.max_message = session.max_message_size();
        let mut buf = Vec::new();
        while let Some(t) = session.poll_transmit(&mut buf) {
            let start = buf.len() - t.len;
            let mut message = buf.split_off(start);
            if message.last() == Some(&b'\n') {
                message.pop();
            }
            let extra = if self.per_request.is_empty() {
                None
            } else {
                serde_json::from_slice::<Peek<'_>>(&message)
                    .ok()
                    .filter(|peek| peek.method.is_some())
                    .and_then(|peek| peek.id.as_ref().and_then(Value::as_u64))
                    .and_then(|wire| session.request_of_wire(wire))
                    .and_then(|id| self.per_request.get(&id).cloned())
            };
            self.outbox.push_back(Outgoing {
                message,
                extra,
                retried: false,
            });
        }
        // Requests that ended need their headers no more.
        self.per_request.retain(|id, _| session.has_request(*id));
        let version = session.version();
        if let Some(version) = version
            && self.http.version() != Some(version)
        {
            // Sent as `MCP-Protocol-Version` from `notifications/initialized` on.
            self.http.set_version(version);
        }
        self.send_outbox();
        if version.is_some()
            && !self.get_opened
            && self.renewal.is_none()
            && self.http.session_id().is_some()
            && !session.is_closed()
        {
            // The 2025 handshake is done: the standalone stream for the server's own
            // messages (405 is fine).
            // Later POSTs wait for its head (at most GET_HEAD_WAIT), so the server has it
            // before anything it may answer there.
            self.get_opened = true;
            let headers = self.http.get_headers(None);
            let stream = self.start(HttpMethod::Get, headers, Vec::new(), None, true);
            self.get_wait = Some((stream, None));
        }
    }

    /// [`pull`](Self::pull), then starts the wait for the GET stream's head if it just opened
    fn pull_at(&mut self, now: Instant, session: &mut ClientSession) {
        self.pull(session);
        if let Some((_, deadline @ None)) = &mut self.get_wait {
            *deadline = Some(now + GET_HEAD_WAIT);
        }
    }

    /// When POSTs stop waiting for the standalone GET stream's head
    fn get_deadline(&self) -> Option<Instant> {
        let (stream, deadline) = self.get_wait?;
        self.streams.get(&stream).filter(|s| s.blocking)?;
        deadline
    }

    /// The next HTTP request to perform
    pub fn poll_request(&mut self) -> Option<HttpRequest> {
        self.requests.pop_front()
    }

    /// The next request to abort (drop its connection; report nothing more for it)
    pub fn poll_abort(&mut self) -> Option<StreamId> {
        self.aborts.pop_front()
    }

    /// The next reconnection due, if any
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        let refresh = self.auth.as_ref().and_then(OAuthClient::poll_timeout);
        [self.http.poll_timeout(), refresh, self.get_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Plans the reconnections due at `now`, and a token refresh when one is due
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(auth) = self.auth.as_mut() {
            auth.refresh_if_due(now);
        }
        if self.get_deadline().is_some_and(|d| d <= now)
            && let Some((stream, _)) = self.get_wait.take()
        {
            // The server holds the GET stream's head back: stop waiting for it.
            if let Some(entry) = self.streams.get_mut(&stream) {
                entry.blocking = false;
            }
            self.send_outbox();
        }
        while let Some(last) = self.http.poll_reconnect(now) {
            let awaits = self.resumes.remove(&last).flatten();
            let headers = self.http.get_headers(Some(&last));
            self.start(HttpMethod::Get, headers, Vec::new(), awaits, false);
        }
    }

    /// A response's status and header fields arrived
    pub fn handle_head(
        &mut self,
        now: Instant,
        stream: StreamId,
        status: u16,
        headers: &(impl Headers + ?Sized),
        session: &mut ClientSession,
    ) {
        if self.challenge(now, stream, status, headers, session) {
            return;
        }
        let Some(entry) = self.streams.get_mut(&stream) else {
            return;
        };
        if matches!(status, 401 | 403) {
            // Authorization the client cannot give (none configured, or the flow declined):
            // one sentence with the status and the server's challenge, not the body (an
            // OAuth error document, no JSON-RPC answer).
            let awaits = if entry.complete {
                None
            } else {
                entry.awaits.take()
            };
            let challenge = headers.values("www-authenticate").join(", ");
            let challenge = if challenge.is_empty() {
                String::new()
            } else {
                format!(" with WWW-Authenticate: {challenge}")
            };
            let hint = if self.auth.is_none() {
                "; this client has no authorization configured"
            } else {
                ""
            };
            self.drop_stream(stream);
            let message = format!("the server answered HTTP {status}{challenge}{hint}");
            self.fail(now, awaits, &message, session);
            self.pull_at(now, session);
            return;
        }
        if status == 404
            && let Some(sid) = entry.sid.clone()
        {
            self.session_lost(now, stream, &sid, session);
            self.pull_at(now, session);
            return;
        }
        let carried = entry.sid.is_some();
        let kind = self.http.response_to(status, headers, carried);
        let Some(entry) = self.streams.get_mut(&stream) else {
            return;
        };
        entry.resend = None;
        if (200..300).contains(&status)
            && carried
            && entry.sid.as_deref() == self.http.session_id()
            && (entry.method == HttpMethod::Get || entry.awaits.is_some())
        {
            // The session answers: a later 404 may start a new one again.
            self.renewable = true;
        }
        entry.kind = Some(kind);
        entry.blocking = false;
        if !(200..300).contains(&status) && matches!(kind, ResponseKind::Json) {
            entry.refused = Some(status);
        }
        entry.length = headers
            .get("content-length")
            .and_then(|l| l.trim().parse::<u64>().ok());
        match kind {
            ResponseKind::Json if entry.length.is_some_and(|l| l > self.max_message as u64) => {
                // Too large to read: fail at once, without reading it.
                let awaits = entry.awaits.take();
                let size = entry.length;
                self.drop_stream(stream);
                let limit = self.max_message;
                self.fail_with(now, awaits, CallError::TooLarge { size, limit }, session);
            }
            ResponseKind::Json | ResponseKind::EventStream => {}
            ResponseKind::SessionExpired => {
                // Not reached: a 404 on a session is handled above.
                let awaits = entry.awaits.take();
                self.fail(now, awaits, SESSION_ENDED, session);
                self.shut(session, now, SESSION_ENDED);
            }
            ResponseKind::Failed { status } => {
                let awaits = entry.awaits.take();
                entry.complete = true;
                self.fail(
                    now,
                    awaits,
                    &format!("the server answered HTTP {status}"),
                    session,
                );
            }
            // Accepted, NotAllowed and whatever comes later: nothing to read
            _ => entry.complete = true,
        }
        self.pull_at(now, session);
    }

    /// A piece of a response's body arrived
    pub fn handle_body(
        &mut self,
        now: Instant,
        stream: StreamId,
        data: &[u8],
        session: &mut ClientSession,
    ) {
        let Some(entry) = self.streams.get_mut(&stream) else {
            return;
        };
        match entry.kind {
            Some(ResponseKind::Json) => {
                if entry.json.len() + data.len() > self.max_message {
                    let awaits = entry.awaits.take();
                    let size = entry.length;
                    self.drop_stream(stream);
                    let limit = self.max_message;
                    self.fail_with(now, awaits, CallError::TooLarge { size, limit }, session);
                } else {
                    entry.json.extend_from_slice(data);
                }
            }
            Some(ResponseKind::EventStream) => {
                entry.decoder.push(data);
                let mut messages = Vec::new();
                let mut broken = false;
                let mut oversized = false;
                while let Some(event) = entry.decoder.next_event() {
                    match event {
                        Ok(event) if !event.data.is_empty() => messages.push(event.data),
                        Ok(_) => {}
                        Err(FrameError::TooLong { .. }) => oversized = true,
                        Err(_) => broken = true,
                    }
                }
                for message in messages {
                    self.deliver(now, stream, message.as_bytes(), session);
                }
                if (broken || oversized)
                    && let Some(entry) = self.streams.get_mut(&stream)
                {
                    let awaits = if entry.complete {
                        None
                    } else {
                        entry.awaits.take()
                    };
                    // The event skipped was this stream's answer (or one it owed): the
                    // request fails now rather than at its timeout.
                    self.drop_stream(stream);
                    let error = if oversized {
                        CallError::TooLarge {
                            size: None,
                            limit: self.max_message,
                        }
                    } else {
                        CallError::Transport("the event stream is not valid UTF-8".into())
                    };
                    self.fail_with(now, awaits, error, session);
                }
            }
            _ => {}
        }
        self.pull_at(now, session);
    }

    /// A response's body ended
    pub fn handle_end(&mut self, now: Instant, stream: StreamId, session: &mut ClientSession) {
        let Some(mut entry) = self.streams.remove(&stream) else {
            return;
        };
        match entry.kind {
            Some(ResponseKind::Json) => {
                let json = std::mem::take(&mut entry.json);
                self.streams.insert(stream, entry);
                self.deliver(now, stream, &json, session);
                if let Some(entry) = self.streams.remove(&stream)
                    && !entry.complete
                {
                    let why = entry.refused.map_or_else(
                        || "the response held no answer".to_owned(),
                        |status| format!("the server answered HTTP {status}"),
                    );
                    self.fail(now, entry.awaits, &why, session);
                }
            }
            Some(ResponseKind::EventStream) => {
                entry.decoder.finish();
                if entry.sid.is_some() && entry.sid.as_deref() != self.http.session_id() {
                    // Its session is gone: nothing to resume it on.
                    if !entry.complete {
                        self.fail(now, entry.awaits, LOST_WHILE_ANSWERING, session);
                    }
                } else if !session.is_closed() {
                    let resume = self.http.stream_ended(now, &entry.decoder, entry.complete);
                    if resume.is_some() {
                        if let Some(last) = entry.decoder.last_event_id() {
                            self.resumes.insert(last.to_owned(), entry.awaits);
                        }
                    } else if !entry.complete {
                        self.fail(
                            now,
                            entry.awaits,
                            "the event stream ended without an answer",
                            session,
                        );
                    }
                }
            }
            _ => {
                if !entry.complete {
                    self.fail(now, entry.awaits, "the response held no answer", session);
                }
            }
        }
        self.pull_at(now, session);
    }

    /// The request failed before or while its response arrived (connection refused, reset,
    /// timed out): the request it carried gets an error answer
    pub fn handle_failed(
        &mut self,
        now: Instant,
        stream: StreamId,
        error: &str,
        session: &mut ClientSession,
    ) {
        if let Some(entry) = self.streams.remove(&stream) {
            let awaits = if entry.complete { None } else { entry.awaits };
            self.fail(now, awaits, error, session);
        }
        self.pull_at(now, session);
    }

    /// Ends the transport: every request in flight is aborted (see
    /// [`poll_abort`](Self::poll_abort)), and on the 2025 wire the DELETE that ends the
    /// session is returned, to perform with a short time limit. Then close the session.
    pub fn close(&mut self) -> Option<HttpRequest> {
        if self.closed {
            return None;
        }
        self.closed = true;
        let mut ids: Vec<StreamId> = self.streams.keys().copied().collect();
        ids.sort();
        self.aborts.extend(ids);
        self.streams.clear();
        self.outbox.clear();
        self.requests.clear();
        self.renewal = None;
        let mut headers = self.http.delete_headers()?;
        if let Some(auth) = self.auth.as_mut() {
            if let Some(value) = auth.authorization() {
                headers.push(("Authorization".into(), value));
            }
            if let Some(proof) = auth.dpop_proof("DELETE") {
                headers.push(("DPoP".into(), proof));
            }
        }
        self.extra.append_to(&mut headers, self.auth.is_some());
        self.per_request.clear();
        let stream = self.next_id();
        Some(HttpRequest {
            stream,
            method: HttpMethod::Delete,
            headers,
            body: Vec::new(),
        })
    }

    /// Ends the transport and the session: every request in flight fails with `why`
    fn shut(&mut self, session: &mut ClientSession, now: Instant, why: &str) {
        self.http.forget_session();
        if let Some(renewal) = self.renewal.take() {
            for held in renewal.held {
                let awaits = awaited(&held.message);
                self.fail(now, awaits, why, session);
            }
        }
        let mut ids: Vec<StreamId> = self.streams.keys().copied().collect();
        ids.sort();
        for id in ids {
            if let Some(entry) = self.streams.remove(&id) {
                self.aborts.push_back(id);
                let awaits = if entry.complete { None } else { entry.awaits };
                self.fail(now, awaits, why, session);
            }
        }
        for (_, awaits) in std::mem::take(&mut self.resumes) {
            self.fail(now, awaits, why, session);
        }
        self.outbox.clear();
        self.closed = true;
        session.close(now);
    }

    /// The request of `stream`, which carried the session id `sid`, got 404: the server
    /// ended that session
    ///
    /// If it is the current one, a new session is started (or, when that is not allowed,
    /// the session closes). The request is held for re-sending on the new session (once),
    /// or fails.
    fn session_lost(
        &mut self,
        now: Instant,
        stream: StreamId,
        sid: &str,
        session: &mut ClientSession,
    ) {
        let Some(entry) = self.streams.remove(&stream) else {
            return;
        };
        self.aborts.push_back(stream);
        let current = self.http.session_id() == Some(sid);
        let pending = if entry.complete { None } else { entry.awaits };
        // The request to re-send on the new session this 404 starts
        let mut held = None;
        match entry.resend {
            Some(_) if entry.retried => self.fail(now, pending, ENDED_AGAIN, session),
            Some(outgoing) if pending.is_some() => match self.renewal.as_mut() {
                Some(renewal) => renewal.held.push(outgoing),
                None if current => held = Some(outgoing),
                // A late 404 of a session already replaced: re-send it now.
                None => self.outbox.push_front(Outgoing {
                    retried: true,
                    ..outgoing
                }),
            },
            // Its answer was under way (a resumption), or nothing was awaited.
            _ => self.fail(now, pending, LOST_WHILE_ANSWERING, session),
        }
        if !current {
            // An old session, already replaced (or being replaced).
            return;
        }
        match (self.renewable, session.version(), self.handshake.0.clone()) {
            (true, Some(version), Some(initialize)) if !session.is_closed() => {
                self.renew(now, version, &initialize, held, sid, session);
            }
            _ => {
                if let Some(held) = held {
                    self.fail(now, awaited(&held.message), SESSION_ENDED, session);
                }
                self.shut(session, now, SESSION_ENDED);
            }
        }
    }

    /// Starts a new session in place of `old`: the session's `initialize` again, for
    /// `version`, under the transport's own id, without a session id
    fn renew(
        &mut self,
        now: Instant,
        version: ProtocolVersion,
        initialize: &[u8],
        held: Option<Outgoing>,
        old: &str,
        session: &mut ClientSession,
    ) {
        self.http.forget_session();
        self.renewable = false;
        self.renewals += 1;
        // Answers being resumed were under way on the old session.
        for (_, awaits) in std::mem::take(&mut self.resumes) {
            self.fail(now, awaits, LOST_WHILE_ANSWERING, session);
        }
        // The old session's GET streams (the standalone one, resumptions) are gone.
        let mut gets: Vec<StreamId> = self
            .streams
            .iter()
            .filter(|(_, s)| s.method == HttpMethod::Get && s.sid.as_deref() == Some(old))
            .map(|(id, _)| *id)
            .collect();
        gets.sort();
        for id in gets {
            if let Some(entry) = self.streams.remove(&id) {
                self.aborts.push_back(id);
                let awaits = if entry.complete { None } else { entry.awaits };
                self.fail(now, awaits, LOST_WHILE_ANSWERING, session);
            }
        }
        self.get_opened = false;
        self.get_wait = None;
        let id = Value::String(format!("mcp-sansio-renew-{}", self.renewals));
        let message = serde_json::from_slice::<Value>(initialize)
            .ok()
            .and_then(|mut value| {
                let object = value.as_object_mut()?;
                object.insert("id".into(), id.clone());
                let params = object.get_mut("params")?.as_object_mut()?;
                params.insert("protocolVersion".into(), version.as_str().into());
                serde_json::to_vec(&value).ok()
            });
        let Some(message) = message else {
            if let Some(held) = held {
                self.fail(now, awaited(&held.message), SESSION_ENDED, session);
            }
            self.shut(session, now, SESSION_ENDED);
            return;
        };
        self.renewal = Some(Renewal {
            id: id.clone(),
            version,
            held: held.into_iter().collect(),
        });
        let headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        self.start(HttpMethod::Post, headers, message, Some(id), true);
    }

    /// The new session's `initialize` was answered (`result`, or an error when `None`)
    fn renewed(
        &mut self,
        now: Instant,
        message: &[u8],
        result: Option<&RawValue>,
        session: &mut ClientSession,
    ) {
        let Some(renewal) = self.renewal.take() else {
            return;
        };
        let refused = match result {
            None => {
                let error = serde_json::from_slice::<Value>(message)
                    .ok()
                    .and_then(|v| Some(v.get("error")?.get("message")?.as_str()?.to_owned()))
                    .unwrap_or_else(|| "an error".to_owned());
                Some(format!("the server refused a new session: {error}"))
            }
            Some(result) => {
                let offered = serde_json::from_str::<Value>(result.get())
                    .ok()
                    .and_then(|v| Some(v.get("protocolVersion")?.as_str()?.to_owned()));
                match offered {
                    Some(v) if v == renewal.version.as_str() => None,
                    other => Some(format!(
                        "the new session offered version {}, not {}",
                        other.as_deref().unwrap_or("none"),
                        renewal.version.as_str()
                    )),
                }
            }
        };
        self.renewal = Some(renewal);
        if let Some(why) = refused {
            self.renewal_failed(now, &why, session);
            return;
        }
        let renewal = self.renewal.take().expect("put back above");
        // In order: `notifications/initialized`, the re-sent requests, then what the
        // session wrote meanwhile.
        for held in renewal.held.into_iter().rev() {
            self.outbox.push_front(Outgoing {
                retried: true,
                ..held
            });
        }
        if let Some(initialized) = self.handshake.1.clone() {
            self.outbox.push_front(Outgoing {
                message: initialized,
                extra: None,
                retried: false,
            });
        }
        session.session_renewed(now, renewal.version);
    }

    /// Starting a new session failed: the held requests fail and the session closes
    fn renewal_failed(&mut self, now: Instant, why: &str, session: &mut ClientSession) {
        let why = format!("{SESSION_ENDED}, and a new one could not be started: {why}");
        self.shut(session, now, &why);
    }

    fn next_id(&mut self) -> StreamId {
        let id = StreamId(self.next_stream);
        self.next_stream += 1;
        id
    }

    fn drop_stream(&mut self, stream: StreamId) {
        if self.streams.remove(&stream).is_some() {
            self.aborts.push_back(stream);
        }
    }

    /// POSTs the queued messages in order; on the 2025 wire each waits for the head of the
    /// one before
    fn send_outbox(&mut self) {
        let authorizing =
            !self.parked.is_empty() || self.auth.as_ref().is_some_and(OAuthClient::is_busy);
        while !authorizing && self.renewal.is_none() && !self.streams.values().any(|s| s.blocking) {
            let Some(Outgoing {
                message,
                extra,
                retried,
            }) = self.outbox.pop_front()
            else {
                return;
            };
            let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&message) else {
                continue;
            };
            if peek.method == Some("notifications/cancelled") && self.http.session_id().is_none() {
                // The 2026 wire cancels by closing the request's response.
                let target = peek
                    .params
                    .and_then(|p| serde_json::from_str::<CancelParams>(p.get()).ok())
                    .and_then(|p| p.request_id);
                let found = self
                    .streams
                    .iter()
                    .find(|(_, s)| s.awaits.is_some() && s.awaits == target)
                    .map(|(no, _)| *no);
                if let Some(no) = found {
                    self.drop_stream(no);
                }
                continue;
            }
            let awaits = peek.method.and(peek.id.clone());
            if peek.method == Some("tools/list")
                && let Some(id) = &peek.id
            {
                self.tools_lists.insert(id.to_string());
            }
            let mut headers = self.http.post_headers(&message);
            let blocking = !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(MCP_METHOD));
            if blocking && !retried {
                // The 2025 handshake, kept to start a new session after a 404
                match peek.method {
                    Some("initialize") => self.handshake.0 = Some(message.clone()),
                    Some("notifications/initialized") => self.handshake.1 = Some(message.clone()),
                    _ => {}
                }
            }
            let on_session = self.http.session_id().is_some();
            let resend = (on_session && awaits.is_some()).then(|| Outgoing {
                message: message.clone(),
                extra: extra.clone(),
                retried,
            });
            if let Some(extra) = extra {
                extra.append_to(&mut headers, self.auth.is_some());
            }
            let stream = self.start(HttpMethod::Post, headers, message, awaits, blocking);
            if let Some(entry) = self.streams.get_mut(&stream) {
                entry.resend = resend;
                entry.retried = retried;
            }
        }
    }

    fn start(
        &mut self,
        method: HttpMethod,
        mut headers: Vec<(String, String)>,
        mut body: Vec<u8>,
        awaits: Option<Value>,
        blocking: bool,
    ) -> StreamId {
        let stream = self.next_id();
        let replay = self.auth.as_mut().map(|auth| {
            let sent = auth.authorization();
            let replay = Replay {
                method,
                headers: headers.clone(),
                body: std::mem::take(&mut body),
                sent: sent.clone().map(Secret::new),
                nonce_retried: false,
            };
            if let Some(value) = sent {
                headers.push(("Authorization".into(), value));
            }
            if let Some(proof) = auth.dpop_proof(method.as_str()) {
                headers.push(("DPoP".into(), proof));
            }
            body.clone_from(&replay.body);
            replay
        });
        // After the replay's copy: a resent request gets them afresh.
        self.extra.append_to(&mut headers, self.auth.is_some());
        let sid = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(MCP_SESSION_ID))
            .map(|(_, v)| v.clone());
        self.streams.insert(
            stream,
            Stream {
                complete: awaits.is_none() && method == HttpMethod::Post,
                awaits,
                kind: None,
                decoder: SseDecoder::new(self.max_message),
                json: Vec::new(),
                blocking,
                replay,
                length: None,
                method,
                sid,
                resend: None,
                retried: false,
                refused: None,
            },
        );
        self.requests.push_back(HttpRequest {
            stream,
            method,
            headers,
            body,
        });
        stream
    }

    /// Feeds one message to the session; notes the answer its stream was waiting for
    fn deliver(
        &mut self,
        now: Instant,
        stream: StreamId,
        message: &[u8],
        session: &mut ClientSession,
    ) {
        if let Ok(peek) = serde_json::from_slice::<Peek<'_>>(message)
            && peek.method.is_none()
            && let Some(id) = &peek.id
        {
            if let Some(entry) = self.streams.get_mut(&stream)
                && entry.awaits.as_ref() == Some(id)
            {
                entry.complete = true;
            }
            if self.renewal.as_ref().is_some_and(|r| &r.id == id) {
                // The new session's `initialize` answer is the transport's own.
                self.renewed(now, message, peek.result, session);
                return;
            }
            if !self.tools_lists.is_empty()
                && self.tools_lists.remove(&id.to_string())
                && let Some(result) = peek.result
                && let Ok(mut list) = serde_json::from_str::<ListToolsResult>(result.get())
            {
                let _ = self.http.observe_tools(&mut list);
            }
        }
        session.handle_message(now, message);
    }

    /// A request's answer will not come: the session gets an error answer in its place
    /// Fails the request `awaits` with a transport error saying `why` (never dressed as an
    /// answer of the server)
    fn fail(
        &mut self,
        now: Instant,
        awaits: Option<Value>,
        why: &str,
        session: &mut ClientSession,
    ) {
        self.fail_with(now, awaits, CallError::Transport(why.to_owned()), session);
    }

    /// Fails the request `awaits` with `error`
    fn fail_with(
        &mut self,
        now: Instant,
        awaits: Option<Value>,
        error: CallError,
        session: &mut ClientSession,
    ) {
        let Some(id) = awaits else { return };
        if self.renewal.as_ref().is_some_and(|r| r.id == id) {
            self.renewal_failed(now, &error.to_string(), session);
            return;
        }
        self.tools_lists.remove(&id.to_string());
        if let Ok(id) = serde_json::from_value::<RequestId>(id) {
            session.fail_request(now, &id, error);
        }
    }
}

/// The id of the request `message` carries, if it is one
fn awaited(message: &[u8]) -> Option<Value> {
    let peek = serde_json::from_slice::<Peek<'_>>(message).ok()?;
    peek.method.and(peek.id)
}
