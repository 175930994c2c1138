//! What the bindings tell [`tracing`]: the spans and events of connections, HTTP exchanges,
//! sessions and requests, in one place so every binding logs alike
//!
//! `mcp-sansio` itself logs nothing (it has no global state): it hands the kernel what there
//! is to say (the negotiated version and the peer's `clientInfo`/`serverInfo`, the JSON-RPC
//! id of a request, the counters of malformed input, the reason of an HTTP refusal), and
//! the kernel says it here. With no subscriber interested, a span is disabled and nothing
//! is formatted or stored: every field is recorded only on an enabled span, and the
//! request's target name is read from its params only then.
//!
//! # Targets, spans and fields
//!
//! Every target starts with `mcp_sansio`, so `RUST_LOG=mcp_sansio=debug` shows them all.
//!
//! | target | span | level | fields |
//! | --- | --- | --- | --- |
//! | `mcp_sansio::connection` | `mcp.child` | INFO | `program` (no arguments), `pid`: a client's child-process server, around its connection |
//! | `mcp_sansio::connection` | `mcp.connection` | INFO | `role` (`client`/`server`), `transport` (`stream`: stdio, a child process, any byte stream) |
//! | `mcp_sansio::http` | `mcp.http` | DEBUG | `method`, `mcp.method` (the `Mcp-Method` header, 2026), `status`, `duration_ms` |
//! | `mcp_sansio::session` | `mcp.session` | INFO | `role`, `session` (an HTTP server's session key, never its `Mcp-Session-Id`), `era` (`legacy`/`modern`), `version`, `peer.name`, `peer.version` |
//! | `mcp_sansio::request` | `mcp.request` | DEBUG | `side` (`server`: the peer's request, `client`: ours), `method`, `id` (the JSON-RPC id), `name` (the tool or prompt name, the resource URI), `version` (server side), `peer.name` and `peer.version` (server side, an HTTP server's 2026 requests: the client's `_meta`), `outcome`, `error.code`, `duration_ms` |
//!
//! A session span is a child of its connection span (byte streams); a request span is a
//! child of its session span, and a server handler runs inside its request span, so what
//! the application logs from a handler carries the request's fields. A session span's
//! `peer.name` and `peer.version` are the `clientInfo` of `initialize` (legacy), of the first
//! request's `_meta` (a 2026 byte stream), or the server's `serverInfo` (clients); an HTTP
//! server's 2026 requests share one stateless session, whose span names no peer: each
//! request's span names its client instead. The HTTP
//! exchange span names no path (the bindings' servers answer on any path) and no session id.
//!
//! `outcome` is one of `ok`, `error` (a JSON-RPC error: `error.code` says which), `answered`
//! (the catalog answered at once: lists, an unknown tool), `task` (the request became a
//! task), `input_required` (a 2026 handler asked for input: the client retries under a new
//! id), `cancelled`, `timed_out`, `closed` (the session ended first), `failed` (a local
//! transport failure, an answer too large or not decoding).
//!
//! # Events
//!
//! - `mcp_sansio::session`: `session ready` (INFO) once the era and the version are known;
//!   `session closed` (INFO; WARN when the handshake or the transport failed, with
//!   `reason`); `malformed message` (WARN, with the running count `invalid`) and
//!   `message dropped` (DEBUG) when the core drops peer input; `session renewed` (WARN,
//!   with `version`) when an HTTP client's server forgot the session (404, 2025 wire) and
//!   the transport started a new one (the requests the 404 refused are re-sent; resource
//!   subscriptions of the old session are gone).
//! - `mcp_sansio::request`: `request not sent` (DEBUG) when the session refused to send our
//!   request (closed, blocked, not allowed), with `method` and `error`.
//! - `mcp_sansio::request`: `request done` (DEBUG, at the end of every request span);
//!   `request failed` for an error answer: ERROR for an internal error (-32603) of our
//!   handler, DEBUG for the peer's mistakes (invalid request or params, unknown method), INFO
//!   otherwise, with `code` and `error` (the message); on the client side DEBUG for the
//!   server's error answers and WARN for timeouts and transport failures. `params` and
//!   `result` (the raw JSON) only at TRACE.
//! - `mcp_sansio::http` (feature `auth`): `unauthorized` when a protected server's gate
//!   answers 401 or 403, with `status` and the verifier's `reason` (INFO; DEBUG for a
//!   request without a token, as a client's first one is).
//! - `mcp_sansio::http`: `refused` for a complete error answer of the HTTP rules, with
//!   `status` and `reason` (DEBUG for 4xx, INFO for 429, WARN for 5xx); `response dropped`
//!   (DEBUG) when the client stopped reading; `exchange done` (DEBUG) when a response ends.
//!
//! No secret is logged at any level: no header values (`Authorization`, `Mcp-Session-Id`),
//! no tokens; argument values and result bodies only at TRACE.

use std::borrow::Cow;
use std::time::Instant;

use mcp_sansio::jsonrpc::{ErrorObject, RequestId, code};
use mcp_sansio::session::Stats;
use mcp_sansio::version::Era;
use mcp_sansio::{CallError, CloseReason, PeerInfo, ProtocolVersion};
use serde_json::value::RawValue;

use crate::meter::Meter;
use tracing::field::Empty;
use tracing::{Span, debug, error, info, trace, warn};

/// The span of one byte-stream connection (stdio, a child process, any reader and writer),
/// a child of the current span
pub fn connection(role: &'static str) -> Span {
    tracing::info_span!(
        target: "mcp_sansio::connection",
        "mcp.connection",
        role,
        transport = "stream",
    )
}

/// The span of a child-process server (`mcp.child`: its program, without its arguments, and
/// its process id), the parent of its connection's span: run the connect in it
pub fn child(program: &str, pid: Option<u32>) -> Span {
    tracing::info_span!(target: "mcp_sansio::connection", "mcp.child", program, pid)
}

/// Runs a future in a span (the bindings' connects in [`child`]'s)
pub use tracing::Instrument;

/// The span of one session, a child of the current span (its connection's); the fields
/// other than `role` come once known
pub fn session(role: &'static str) -> Span {
    tracing::info_span!(
        target: "mcp_sansio::session",
        "mcp.session",
        role,
        session = Empty,
        era = Empty,
        version = Empty,
        peer.name = Empty,
        peer.version = Empty,
    )
}

/// An era's name in the logs
pub fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern",
        _ => "legacy",
    }
}

/// What a session span knows already, so each field is recorded once
#[derive(Debug, Default)]
pub(crate) struct SessionTrace {
    /// The span names its HTTP session already
    pub(crate) keyed: bool,
    /// The session serves many clients (an HTTP server's 2026 requests): no peer of its own
    pub(crate) shared: bool,
    era_known: bool,
    stats: Stats,
}

impl SessionTrace {
    /// The handshake or the discovery finished: records the era, the version and the
    /// peer's name and version, and says so
    pub(crate) fn ready(&mut self, span: &Span, version: ProtocolVersion, peer: Option<&PeerInfo>) {
        if span.is_disabled() || self.era_known {
            return;
        }
        self.era_known = true;
        span.record("era", era_name(version.era()));
        span.record("version", version.as_str());
        if let Some(info) = peer.and_then(|p| p.info.as_ref()) {
            span.record("peer.name", info.name.as_str());
            span.record("peer.version", info.version.as_str());
        }
        info!(target: "mcp_sansio::session", parent: span, "session ready");
    }

    /// A server's request in `version`: a 2026 session has no handshake, its first request
    /// tells the era, and the client's name and version in its `_meta` (read only for an
    /// enabled span, and not for a session many clients share)
    pub(crate) fn request_version(
        &mut self,
        span: &Span,
        version: ProtocolVersion,
        params: Option<&RawValue>,
    ) {
        if self.era_known || version.era() != Era::Modern || span.is_disabled() {
            return;
        }
        let info = params
            .filter(|_| !self.shared)
            .and_then(|p| client_info(p.get()));
        if let Some(info) = &info {
            span.record("peer.name", info.name.as_ref());
            span.record("peer.version", info.version.as_ref());
        }
        self.ready(span, version, None);
    }

    /// The core dropped peer input since the last look: says so (`stats` are the session's)
    pub(crate) fn input(&mut self, span: &Span, stats: Stats) {
        if stats == self.stats {
            return;
        }
        if stats.invalid_messages > self.stats.invalid_messages {
            warn!(
                target: "mcp_sansio::session",
                parent: span,
                invalid = stats.invalid_messages,
                "malformed message from the peer (answered with an error where JSON-RPC allows)",
            );
        }
        if stats.dropped_messages > self.stats.dropped_messages {
            debug!(
                target: "mcp_sansio::session",
                parent: span,
                dropped = stats.dropped_messages,
                "message dropped",
            );
        }
        self.stats = stats;
    }

    /// An HTTP client's server forgot the session (404) and a new one was started
    pub(crate) fn renewed(span: &Span, version: ProtocolVersion) {
        warn!(
            target: "mcp_sansio::session",
            parent: span,
            version = version.as_str(),
            "session renewed: the server forgot the session (HTTP 404), a new one was started",
        );
    }

    /// The session ended
    pub(crate) fn closed(span: &Span, reason: &CloseReason) {
        match reason {
            CloseReason::Handshake(_) | CloseReason::Transport(_) => {
                warn!(target: "mcp_sansio::session", parent: span, %reason, "session closed");
            }
            _ => info!(target: "mcp_sansio::session", parent: span, %reason, "session closed"),
        }
    }
}

/// How a request ended, for its span
#[derive(Debug)]
#[non_exhaustive]
pub enum End<'a> {
    /// Answered with a result
    Ok(&'a RawValue),
    /// Answered with a JSON-RPC error (ours on the server side, the server's on the client)
    Error(&'a ErrorObject),
    /// The catalog answered at once
    Answered,
    /// The request became a task
    Task,
    /// A 2026 handler asked for input: the core answered `input_required`
    InputRequired,
    /// Cancelled (by the peer, or by us)
    Cancelled,
    /// No answer in time
    TimedOut,
    /// The session closed first
    Closed,
    /// A local failure (transport, an answer too large or not decoding)
    Failed(&'a CallError),
}

impl<'a> End<'a> {
    /// How a client's call ended
    pub fn of_call(outcome: &'a Result<Box<RawValue>, CallError>) -> Self {
        match outcome {
            Ok(result) => Self::Ok(result),
            Err(CallError::Remote(e)) => Self::Error(e),
            Err(CallError::Cancelled) => Self::Cancelled,
            Err(CallError::TimedOut) => Self::TimedOut,
            Err(CallError::SessionClosed) => Self::Closed,
            Err(other) => Self::Failed(other),
        }
    }

    /// How a server's handler ended
    pub fn of_handler(result: &'a Result<Box<RawValue>, ErrorObject>) -> Self {
        match result {
            Ok(result) => Self::Ok(result),
            Err(e) => Self::Error(e),
        }
    }

    fn outcome(&self) -> &'static str {
        match self {
            Self::Ok(_) => "ok",
            Self::Error(_) => "error",
            Self::Answered => "answered",
            Self::Task => "task",
            Self::InputRequired => "input_required",
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::Closed => "closed",
            Self::Failed(_) => "failed",
        }
    }
}

/// Which end of a request a span is for
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SideOf {
    Server,
    Client,
}

impl SideOf {
    /// The `side` field's and label's value
    fn name(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Client => "client",
        }
    }
}

/// One request's span and when it started, and its meter; only made when the span is
/// enabled or requests are metered (feature `metrics`)
#[derive(Debug)]
pub(crate) struct RequestTrace {
    span: Span,
    start: Instant,
    side: SideOf,
    meter: Meter,
}

impl RequestTrace {
    /// The span of the peer's request (`id`: its JSON-RPC id), a child of `session`;
    /// `None` when no subscriber wants it
    pub(crate) fn server(
        session: &Span,
        method: &str,
        id: Option<&RequestId>,
        version: ProtocolVersion,
        params: Option<&RawValue>,
    ) -> Option<Self> {
        let span = tracing::debug_span!(
            target: "mcp_sansio::request",
            parent: session,
            "mcp.request",
            side = "server",
            method,
            id = Empty,
            name = Empty,
            version = version.as_str(),
            peer.name = Empty,
            peer.version = Empty,
            outcome = Empty,
            error.code = Empty,
            duration_ms = Empty,
        );
        if span.is_disabled() && !Meter::ON {
            return None;
        }
        if let Some(id) = id {
            span.record("id", tracing::field::display(id));
        }
        // The caller's trace context in the request's `_meta` (SEP-414)
        #[cfg(feature = "otel")]
        crate::otel::continue_trace(&span, params);
        Some(Self::started(span, method, params, SideOf::Server))
    }

    /// The span of our request, a child of `session`, before it is sent (its id comes with
    /// [`sent`](Self::sent)); `None` when no subscriber wants it
    pub(crate) fn client(session: &Span, method: &str, params: Option<&RawValue>) -> Option<Self> {
        let span = tracing::debug_span!(
            target: "mcp_sansio::request",
            parent: session,
            "mcp.request",
            side = "client",
            method,
            id = Empty,
            name = Empty,
            outcome = Empty,
            error.code = Empty,
            duration_ms = Empty,
        );
        if span.is_disabled() && !Meter::ON {
            return None;
        }
        Some(Self::started(span, method, params, SideOf::Client))
    }

    fn started(span: Span, method: &str, params: Option<&RawValue>, side: SideOf) -> Self {
        let name = target_name(method, params);
        if let Some(name) = &name {
            span.record("name", name.as_ref());
        }
        if let Some(params) = params {
            trace!(target: "mcp_sansio::request", parent: &span, params = params.get(), "params");
        }
        // A tool or prompt name is a metric's label, a resource URI is not (unbounded).
        let label = name
            .as_deref()
            .filter(|_| matches!(method, "tools/call" | "prompts/get"));
        let meter = Meter::start(side.name(), method, label);
        Self {
            span,
            start: Instant::now(),
            side,
            meter,
        }
    }

    /// A 2026 request on a session many clients share (an HTTP server's stateless one):
    /// its span names the client from the request's `_meta`
    pub(crate) fn client_from_meta(&self, params: Option<&RawValue>) {
        if self.span.is_disabled() {
            return;
        }
        if let Some(info) = params.and_then(|p| client_info(p.get())) {
            self.span.record("peer.name", info.name.as_ref());
            self.span.record("peer.version", info.version.as_ref());
        }
    }

    /// Our request went out with JSON-RPC id `id`
    pub(crate) fn sent(&self, id: u64) {
        self.span.record("id", id);
    }

    /// The span, to run a handler in
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The request ended: records its outcome and duration and says how it went
    pub(crate) fn end(mut self, end: &End<'_>) {
        if self.side == SideOf::Server && matches!(end, End::Answered) {
            // The catalog answered (an unknown tool among others): the name is the peer's.
            self.meter.unnamed();
        }
        let code = match end {
            End::Error(e) => Some(e.code),
            _ => None,
        };
        self.meter.end(end.outcome(), code);
        let span = &self.span;
        if span.is_disabled() {
            return;
        }
        let duration_ms = millis(self.start);
        span.record("outcome", end.outcome());
        span.record("duration_ms", duration_ms);
        match end {
            End::Ok(result) => {
                trace!(target: "mcp_sansio::request", parent: span, result = result.get(), "result");
            }
            End::Error(e) => {
                span.record("error.code", e.code);
                self.failed(e);
            }
            End::TimedOut => {
                warn!(target: "mcp_sansio::request", parent: span, "request timed out");
            }
            End::Failed(why) => {
                warn!(target: "mcp_sansio::request", parent: span, error = %why, "request failed");
            }
            _ => {}
        }
        // The outcome and the duration are the span's fields.
        debug!(target: "mcp_sansio::request", parent: span, "request done");
    }

    /// An error answer, at the level its code deserves
    fn failed(&self, e: &ErrorObject) {
        let span = &self.span;
        let message = e.message.as_str();
        match (self.side, e.code) {
            (SideOf::Server, code::INTERNAL_ERROR) => error!(
                target: "mcp_sansio::request", parent: span,
                code = e.code, error = message, "request failed",
            ),
            (
                SideOf::Server,
                code::INVALID_REQUEST | code::INVALID_PARAMS | code::METHOD_NOT_FOUND,
            )
            | (SideOf::Client, _) => debug!(
                target: "mcp_sansio::request", parent: span,
                code = e.code, error = message, "request failed",
            ),
            (SideOf::Server, _) => info!(
                target: "mcp_sansio::request", parent: span,
                code = e.code, error = message, "request failed",
            ),
        }
    }
}

/// A client's name and version, as a 2026 request's `_meta` gives them
#[derive(serde::Deserialize)]
struct ClientInfo<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
}

/// The `clientInfo` in the `_meta` of a 2026 request's params
fn client_info(params: &str) -> Option<ClientInfo<'_>> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "_meta")]
        meta: Option<Meta<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, rename = "io.modelcontextprotocol/clientInfo")]
        info: Option<ClientInfo<'a>>,
    }
    let params: Params<'_> = serde_json::from_str(params).ok()?;
    params.meta?.info
}

/// Milliseconds since `start`, to the microsecond (`0.305`, not `0.30518500000000004`)
fn millis(start: Instant) -> f64 {
    #[allow(clippy::cast_precision_loss)] // exact below 2^53 microseconds (285 years)
    let micros = start.elapsed().as_micros() as f64;
    micros / 1000.0
}

/// The tool or prompt name, or the resource URI, a request is about (read only for an
/// enabled span or a metered request)
fn target_name<'a>(method: &str, params: Option<&'a RawValue>) -> Option<Cow<'a, str>> {
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow, default)]
        name: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        uri: Option<Cow<'a, str>>,
    }
    let by_uri = match method {
        "tools/call" | "prompts/get" => false,
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => true,
        _ => return None,
    };
    let named: Named<'a> = serde_json::from_str(params?.get()).ok()?;
    if by_uri { named.uri } else { named.name }
}

#[cfg(feature = "http")]
/// The span of one HTTP exchange of a server, as the actor sees it
fn http_exchange(method: &str) -> Span {
    tracing::debug_span!(
        target: "mcp_sansio::http",
        "mcp.http",
        method,
        mcp.method = Empty,
        status = Empty,
        duration_ms = Empty,
    )
}

#[cfg(feature = "http")]
/// One open HTTP exchange's span and when it started
#[derive(Debug)]
pub(crate) struct ExchangeTrace {
    span: Span,
    start: Instant,
}

#[cfg(feature = "http")]
impl ExchangeTrace {
    /// An exchange of HTTP method `method` whose request has `headers` (only its
    /// `Mcp-Method` is read, and only when the span is enabled); `None` when no subscriber
    /// wants it
    pub(crate) fn new<H: mcp_sansio::http::Headers + ?Sized>(
        method: &str,
        headers: &H,
    ) -> Option<Self> {
        let span = http_exchange(method);
        if span.is_disabled() {
            return None;
        }
        if let Some(mcp_method) = headers.get("mcp-method") {
            span.record("mcp.method", mcp_method);
        }
        Some(Self {
            span,
            start: Instant::now(),
        })
    }

    /// The actor dropped its response: the client stopped reading
    pub(crate) fn dropped(&self) {
        debug!(
            target: "mcp_sansio::http",
            parent: &self.span,
            "response dropped: the client stopped reading",
        );
    }

    /// Its response's status
    pub(crate) fn status(&self, status: u16) {
        self.span.record("status", status);
    }

    /// A complete response: its status, and why the rules refused, if they did
    pub(crate) fn complete(self, response: &mcp_sansio::http::HttpResponse) {
        self.status(response.status);
        if response.status >= 400 {
            refused(&self.span, response);
        }
        self.end();
    }

    /// The response ended (or the client went away)
    pub(crate) fn end(self) {
        self.span.record("duration_ms", millis(self.start));
        debug!(target: "mcp_sansio::http", parent: &self.span, "exchange done");
    }
}

/// A protected server's gate answered instead of the MCP server (`why`: the verifier's
/// reason for an invalid token): a refusal is logged with its status and reason, never the
/// token (DEBUG when the request had no token, as a client's first request does; INFO when
/// the token was refused or lacks scopes); the answer is handed back. The reason is the
/// verifier's own words: a verifier must not quote the token in them.
#[cfg(feature = "auth")]
pub fn unauthorized(
    answer: mcp_sansio::http::HttpResponse,
    why: Option<&str>,
) -> mcp_sansio::http::HttpResponse {
    let status = answer.status;
    if status < 400 {
        return answer;
    }
    crate::meter::refused(crate::meter::reason_of(
        status,
        crate::meter::insufficient_scope(&answer),
    ));
    match why {
        Some(why) => info!(target: "mcp_sansio::http", status, reason = why, "unauthorized"),
        None if status == 403 => info!(target: "mcp_sansio::http", status, "unauthorized"),
        None => debug!(target: "mcp_sansio::http", status, "unauthorized: no token"),
    }
    answer
}

#[cfg(feature = "http")]
/// The HTTP rules refused a request: the status and the body's reason
fn refused(span: &Span, response: &mcp_sansio::http::HttpResponse) {
    let status = response.status;
    // The reason is read from the body only when someone listens.
    let reason = || response.error_message().unwrap_or_default();
    if status >= 500 {
        if tracing::enabled!(target: "mcp_sansio::http", tracing::Level::WARN) {
            warn!(target: "mcp_sansio::http", parent: span, status, reason = reason(), "refused");
        }
    } else if status == 429 {
        if tracing::enabled!(target: "mcp_sansio::http", tracing::Level::INFO) {
            info!(target: "mcp_sansio::http", parent: span, status, reason = reason(), "refused");
        }
    } else if tracing::enabled!(target: "mcp_sansio::http", tracing::Level::DEBUG) {
        debug!(target: "mcp_sansio::http", parent: span, status, reason = reason(), "refused");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata, Subscriber};

    use super::*;

    /// Keeps every event's level and message; every callsite is enabled up to `max`
    struct Events {
        max: Level,
        seen: Arc<Mutex<Vec<(Level, String)>>>,
    }

    struct Message(String);

    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl Subscriber for Events {
        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            *metadata.level() <= self.max
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            let level = *event.metadata().level();
            self.seen.lock().unwrap().push((level, message.0));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    /// Runs `f` with a subscriber interested up to `max`; the events it saw
    fn events(max: Level, f: impl FnOnce()) -> Vec<(Level, String)> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = Events {
            max,
            seen: Arc::clone(&seen),
        };
        tracing::subscriber::with_default(subscriber, f);
        let seen = seen.lock().unwrap();
        seen.clone()
    }

    #[test]
    fn malformed_input_is_a_warning_once_per_new_message() {
        let seen = events(Level::TRACE, || {
            let span = session("server");
            let mut trace = SessionTrace::default();
            let mut stats = Stats::default();
            trace.input(&span, stats);
            stats.invalid_messages = 1;
            trace.input(&span, stats);
            trace.input(&span, stats);
            stats.dropped_messages = 1;
            trace.input(&span, stats);
        });
        let levels: Vec<Level> = seen.iter().map(|(level, _)| *level).collect();
        assert_eq!(levels, [Level::WARN, Level::DEBUG], "{seen:?}");
        assert!(seen[0].1.starts_with("malformed message"), "{seen:?}");
    }

    #[test]
    fn a_request_span_exists_only_for_an_interested_subscriber() {
        let params = raw(r#"{"name":"echo","arguments":{"text":"hi"}}"#);
        let version = ProtocolVersion::V2025_11_25;
        let made = |max| {
            let mut made = false;
            events(max, || {
                let span = session("server");
                made = RequestTrace::server(&span, "tools/call", None, version, Some(&params))
                    .is_some();
            });
            made
        };
        // Metered requests (feature `metrics`) keep their trace for the meter, span or not.
        assert_eq!(made(Level::INFO), Meter::ON, "nothing kept below DEBUG");
        assert!(made(Level::DEBUG));
        // And with no subscriber at all
        let span = session("server");
        let kept = RequestTrace::client(&span, "tools/call", Some(&params)).is_some();
        assert_eq!(kept, Meter::ON);
    }

    #[test]
    fn an_error_answer_is_logged_at_the_level_its_code_deserves() {
        let span = || session("server");
        let version = ProtocolVersion::V2025_11_25;
        for (error, level) in [
            (ErrorObject::internal_error("broke"), Level::ERROR),
            (ErrorObject::invalid_params("bad"), Level::DEBUG),
            (ErrorObject::new(-32042, "other"), Level::INFO),
        ] {
            let seen = events(Level::TRACE, || {
                let trace = RequestTrace::server(&span(), "tools/call", None, version, None);
                trace.expect("enabled").end(&End::Error(&error));
            });
            let failed: Vec<_> = seen.iter().filter(|(_, m)| m == "request failed").collect();
            assert_eq!(failed.len(), 1, "{seen:?}");
            assert_eq!(failed[0].0, level, "{error:?}");
        }
        // A client hears the server's errors at DEBUG.
        let seen = events(Level::TRACE, || {
            let trace = RequestTrace::client(&span(), "tools/call", None).expect("enabled");
            trace.end(&End::Error(&ErrorObject::internal_error("broke")));
        });
        assert!(
            seen.contains(&(Level::DEBUG, "request failed".to_owned())),
            "{seen:?}"
        );
    }

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("json")
    }

    #[test]
    fn a_2026_request_names_its_client_in_its_meta() {
        let params = r#"{"name":"x","_meta":{"io.modelcontextprotocol/clientInfo":
            {"name":"c","version":"1.2","title":"C"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
        let info = client_info(params).expect("a client info");
        assert_eq!((info.name.as_ref(), info.version.as_ref()), ("c", "1.2"));
        assert!(client_info(r#"{"name":"x"}"#).is_none());
        assert!(client_info(r#"{"_meta":{}}"#).is_none());
        assert!(client_info("[]").is_none());
    }

    #[test]
    fn the_target_name_is_the_tool_or_prompt_name_or_the_resource_uri() {
        let call = raw(r#"{"name":"echo","arguments":{"text":"secret"}}"#);
        assert_eq!(
            target_name("tools/call", Some(&call)).as_deref(),
            Some("echo")
        );
        assert_eq!(
            target_name("prompts/get", Some(&call)).as_deref(),
            Some("echo")
        );
        let read = raw(r#"{"uri":"file:///a%20b","name":"x"}"#);
        assert_eq!(
            target_name("resources/read", Some(&read)).as_deref(),
            Some("file:///a%20b")
        );
        assert_eq!(target_name("tools/list", Some(&call)), None);
        assert_eq!(target_name("tools/call", None), None);
        assert_eq!(target_name("tools/call", Some(&raw("[1]"))), None);
        let escaped = raw(r#"{"name":"a\"b"}"#);
        assert_eq!(
            target_name("tools/call", Some(&escaped)).as_deref(),
            Some("a\"b")
        );
    }
}
