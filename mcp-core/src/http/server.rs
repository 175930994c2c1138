//! The server side: sessions by `Mcp-Session-Id` (2025 wire), one shared session for the
//! stateless 2026 wire, and which outgoing message goes on which open HTTP response

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use crate::id_map::{IdMap, id_map, shrink};

use super::classify::{self, Classified, Wire};
use super::config::HttpConfig;
use super::headers::{Accepts, Headers, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use super::lane::{Lanes, Rules};
use super::load::{self, SharedLoad};
use super::protected::{RequiredScopes, ResourceServer};
use super::response::{HttpResponse, ResponseHead, error_code, is_request, modern_error_status};
use super::session_id::{SessionIdSource, is_valid_session_id};
use super::source::{Principal, Source, Ticket};
use super::stream::{EventStream, STANDALONE, event_id, parse_event_id};
use super::{ExchangeId, SessionKey};
use crate::codec::sse::{encode_comment, encode_event};
use crate::jsonrpc::{self, ErrorObject, Message, RequestId};
use crate::schema::{Tool, meta};
use crate::session::{ListKind, Relation, SendError, ServerConfig, ServerEvent, ServerSession};
use crate::version::{Era, ProtocolVersion};

/// What [`HttpServer::handle_request`] decided
#[derive(Debug)]
#[non_exhaustive]
pub enum Reply {
    /// Write this response and finish the exchange
    Complete(HttpResponse),
    /// The response stays open: its head, body pieces and end come from
    /// [`HttpServer::poll_output`]; tell [`HttpServer::handle_closed`] if the client goes away
    Open(ExchangeId),
}

/// A piece of an open response, from [`HttpServer::poll_output`]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Output {
    /// Send the status and headers; always the first output of an exchange
    Head {
        /// The response
        exchange: ExchangeId,
        /// Status and headers
        head: ResponseHead,
    },
    /// Append body bytes (a JSON body, or whole SSE events)
    Body {
        /// The response
        exchange: ExchangeId,
        /// The bytes
        data: Vec<u8>,
    },
    /// Finish the response; the exchange id is retired
    End {
        /// The response
        exchange: ExchangeId,
    },
}

/// How an open exchange writes
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No head yet; the first message decides: the answer alone goes as JSON, anything else
    /// opens SSE (if `sse` allows it)
    Deferred { sse: bool },
    /// An event stream is open
    Sse,
}

#[derive(Debug)]
struct Exchange {
    session: SessionKey,
    stream: u64,
    mode: Mode,
    /// When it last sent something (or opened): the keepalive counts from here
    quiet_since: Instant,
}

impl Exchange {
    /// When it is due a keepalive comment, if it can carry one
    fn keepalive_due(&self, keepalive: Option<std::time::Duration>) -> Option<Instant> {
        keepalive
            .filter(|_| self.can_sse())
            .map(|k| self.quiet_since + k)
    }

    /// Whether it is, or may become, an event stream (a JSON-only response never is)
    fn can_sse(&self) -> bool {
        matches!(self.mode, Mode::Sse | Mode::Deferred { sse: true })
    }
}

/// A request in progress: its stream, and what the in-flight caps count it under
#[derive(Debug, Clone)]
struct InFlight {
    stream: u64,
    ticket: Ticket,
}

/// One session with its streams
#[derive(Debug)]
struct Conn {
    session: ServerSession,
    wire: Wire,
    /// 2025 wire: the `Mcp-Session-Id`
    session_id: Option<String>,
    /// 2025 wire: who created the session (with authorization); only they may use it
    principal: Option<Principal>,
    streams: IdMap<u64, EventStream>,
    /// Requests in progress (by the id the session knows) -> their stream
    by_request: HashMap<RequestId, InFlight>,
    /// Finished 2025 POST streams, oldest first, kept for late resumption
    finished: VecDeque<u64>,
    next_stream: u64,
    next_internal: i64,
    last_activity: Instant,
    /// When it was last used, in [`HttpServer::touches`] (orders the idle sessions)
    touched: u64,
    /// Its place in [`HttpServer::idle`] while it is there
    lru: Option<u64>,
    /// Its place in [`HttpServer::timers`]: when it is next due, as of its last flush
    timer: Option<Instant>,
}

impl Conn {
    fn new(session: ServerSession, wire: Wire, session_id: Option<String>, now: Instant) -> Self {
        Self {
            session,
            wire,
            session_id,
            principal: None,
            streams: id_map(),
            by_request: HashMap::new(),
            finished: VecDeque::new(),
            next_stream: STANDALONE + 1,
            next_internal: 1,
            last_activity: now,
            touched: 0,
            lru: None,
            timer: None,
        }
    }

    /// When it is next due: its session's deadline, or its idle timeout
    fn deadline(&self, config: &HttpConfig) -> Option<Instant> {
        match (self.session.poll_timeout(), self.idle_deadline(config)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether it has work in flight: a request in progress (its handler runs, or waits
    /// for input) or a response open (a client is reading a stream); such a session is
    /// never evicted for a new one
    fn busy(&self) -> bool {
        !self.by_request.is_empty() || self.attached()
    }

    fn attached(&self) -> bool {
        self.streams.values().any(|s| s.attached.is_some())
    }

    fn idle_deadline(&self, config: &HttpConfig) -> Option<Instant> {
        (self.wire == Wire::Stateful && !self.attached())
            .then(|| self.last_activity + config.idle_timeout)
    }
}

/// The Streamable HTTP server rules for both wires, as state: no sockets, no clock
///
/// One `HttpServer` serves one MCP endpoint. The binding feeds it every HTTP request
/// ([`handle_request`](Self::handle_request)) and every early disconnect
/// ([`handle_closed`](Self::handle_closed)), runs the application against the sessions
/// ([`poll_event`](Self::poll_event), [`session_mut`](Self::session_mut)), writes what
/// [`poll_output`](Self::poll_output) yields, and calls
/// [`handle_timeout`](Self::handle_timeout) at [`poll_timeout`](Self::poll_timeout).
///
/// - **2025 wire** (stateful): `initialize` creates a [`ServerSession`](crate::ServerSession) under a fresh
///   `Mcp-Session-Id` from the binding's [`SessionIdSource`] (behind `<node>.` with
///   [`HttpConfig::node`], for a proxy's sticky routing); later POSTs, GETs and DELETEs
///   name it (unknown ids get 404). A POSTed request opens an SSE stream (a priming event
///   with id and `retry:` first) that carries what its handler sends (progress, logs sent
///   with [`Inbound::send_notification`](crate::session::Inbound::send_notification), input requests) and then its answer, after
///   which the stream ends. Everything else goes on the standalone GET stream, or waits
///   (bounded) until one opens. Event ids are `<stream>-<seq>`; a GET with `Last-Event-ID`
///   replays the rest of that stream. Closing a response is not a cancellation here.
///   Idle sessions are closed after [`HttpConfig::idle_timeout`]; at
///   [`HttpConfig::max_sessions`] a new client's `initialize` closes the least recently used
///   idle one (no request in progress, no response open) and is refused (503) only when
///   every session is busy. A session belongs to the [`Principal`] that created it: another
///   principal's requests for it get 404.
/// - **2026 wire** (stateless): every POST is one request, validated against its headers
///   (the order is in FIXTURES §2.1.2), served by **one long-lived server session** shared
///   by all 2026 requests ([`SessionKey::STATELESS`]): modern requests are self-contained,
///   and tasks and listen streams live in that session's tables. The HTTP layer gives each
///   request an internal id (clients' ids may collide) and restores the client's id on the
///   way out. The answer goes as a JSON body when it is the first message (status by error
///   code: -32601 is 404, request errors 400), else as SSE after the progress and log
///   notifications; server requests never go on it. A client closing the response early
///   cancels the request (the session sees `notifications/cancelled`).
///
/// On both wires the requests in progress are capped per connection, per client address
/// (the [`Source`] of each request) and in all ([`HttpConfig::max_in_flight`] and the fields
/// beside it): past a source's cap a request gets 429, past the endpoint's 503, both with
/// `Retry-After`, before any session sees it.
#[derive(Debug)]
pub struct HttpServer {
    config: Arc<HttpConfig>,
    server_config: Arc<ServerConfig>,
    conns: IdMap<SessionKey, Conn>,
    by_session_id: HashMap<String, SessionKey>,
    next_key: u64,
    exchanges: IdMap<ExchangeId, Exchange>,
    next_exchange: u64,
    outputs: VecDeque<Output>,
    events: VecDeque<(SessionKey, ServerEvent)>,
    store_ops: VecDeque<(SessionKey, crate::store::StoreOp)>,
    dirty: BTreeSet<SessionKey>,
    now: Instant,
    buf: Vec<u8>,
    /// The wall-clock anchor given to every session (task timestamps, sealed-state expiry)
    wall_anchor: Option<(Instant, u64)>,
    /// Requests in progress, per connection, client address and in all
    load: SharedLoad,
    /// The idle 2025 sessions, least recently used first: `(touched, key)`
    idle: BTreeSet<(u64, SessionKey)>,
    /// Counts uses of sessions (their `touched`)
    touches: u64,
    /// Every session's next deadline as of its last flush, soonest first (the touched
    /// ones are read live), so a timer is found without a look at every session
    timers: BTreeSet<(Instant, SessionKey)>,
    /// No open response is due a keepalive before this plus [`HttpConfig::keepalive`] (the
    /// oldest quiet time when last counted; responses opened or written since only came
    /// later, so it stays a bound until the next timeout counts again)
    keepalive_floor: Option<Instant>,
    /// The rules the server shares with its lanes: the tools' header mirrors, the scopes
    /// particular tools, resources and prompts need (checked before a session sees a
    /// request for one) and the protection that words the 403, and the in-flight counters
    lanes: Lanes,
}

impl HttpServer {
    /// A server for `server_config`'s sessions under the HTTP rules of `config`
    pub fn new(config: Arc<HttpConfig>, server_config: Arc<ServerConfig>, now: Instant) -> Self {
        let modern_versions: Vec<&'static str> = server_config
            .versions
            .iter()
            .filter(|v| v.era() == Era::Modern)
            .map(|v| v.as_str())
            .collect();
        // The shared 2026 session is bounded by the HTTP caps (which answer 429 and 503),
        // not by the per-session one (which answers inside a 200).
        let mut shared = (*server_config).clone();
        let limits = &mut shared.limits;
        limits.max_in_flight_inbound = limits.max_in_flight_inbound.max(config.max_in_flight);
        let shared = Arc::new(shared);
        let stateless = ServerSession::new(Arc::clone(&shared), now);
        let load = SharedLoad::default();
        let rules = Rules {
            resource_server: config.resource_server.clone(),
            ..Rules::default()
        };
        let lanes = Lanes::new(
            Arc::clone(&config),
            shared,
            modern_versions,
            load.clone(),
            rules,
        );
        let mut conns = id_map();
        conns.insert(
            SessionKey::STATELESS,
            Conn::new(stateless, Wire::Stateless, None, now),
        );
        let mut server = Self {
            config,
            server_config,
            conns,
            by_session_id: HashMap::new(),
            next_key: 1,
            exchanges: id_map(),
            next_exchange: 1,
            outputs: VecDeque::new(),
            events: VecDeque::new(),
            store_ops: VecDeque::new(),
            dirty: BTreeSet::new(),
            now,
            buf: Vec::new(),
            wall_anchor: None,
            load,
            idle: BTreeSet::new(),
            touches: 0,
            timers: BTreeSet::new(),
            keepalive_floor: None,
            lanes,
        };
        server.refresh_timer(SessionKey::STATELESS);
        server
    }

    /// The scopes that requests for particular tools, resources and prompts need (the
    /// server catalog's [`Catalog::access`](crate::server::Catalog::access)); `None`: none
    ///
    /// A request for such an entry from a principal without them is answered `403` with
    /// `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."` (naming the
    /// scopes the [`ResourceServer`] requires of every request too, and its metadata, when
    /// [`set_resource_server`](Self::set_resource_server) gave one) before any session sees
    /// it: the authorization spec's step-up challenge.
    pub fn set_required_scopes(&mut self, scopes: Option<Arc<dyn RequiredScopes>>) {
        self.lanes.set_required_scopes(scopes);
    }

    /// The protection of this endpoint, which words the `403` of
    /// [`set_required_scopes`](Self::set_required_scopes)
    pub fn set_resource_server(&mut self, rules: Option<Arc<ResourceServer>>) {
        self.lanes.set_resource_server(rules);
    }

    /// The 2026 fast path's shared rules: [`Lane`](super::Lane)s made from it count in this
    /// server's in-flight caps and follow its tools and scopes (a change made through either
    /// holds for both)
    pub fn lanes(&self) -> &Lanes {
        &self.lanes
    }

    /// The `403` for a request whose principal lacks the scopes of the entry it names
    fn scope_denied(&self, source: &Source, request: &jsonrpc::Request) -> Option<HttpResponse> {
        self.lanes.rules().scope_denied(source, request)
    }

    /// Anchors the wall clock of every session, present and future: `now` is `unix_ms`
    /// milliseconds after the Unix epoch (see
    /// [`Session::anchor_wall_clock`](crate::Session::anchor_wall_clock))
    pub fn anchor_wall_clock(&mut self, now: Instant, unix_ms: u64) {
        self.wall_anchor = Some((now, unix_ms));
        self.lanes.anchor_wall_clock(now, unix_ms);
        for conn in self.conns.values_mut() {
            conn.session.anchor_wall_clock(now, unix_ms);
        }
    }

    // --- getters -------------------------------------------------------------------------

    /// The HTTP configuration
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// The number of 2025 sessions
    pub fn session_count(&self) -> usize {
        self.conns.len() - 1
    }

    /// The session behind a key, for the application to answer requests on; marks it for
    /// draining, so its output is routed at the next [`poll_output`](Self::poll_output)
    ///
    /// `None` once the session was deleted or evicted.
    pub fn session_mut(&mut self, key: SessionKey) -> Option<&mut ServerSession> {
        let conn = self.conns.get_mut(&key)?;
        self.dirty.insert(key);
        Some(&mut conn.session)
    }

    /// Requests in progress on both wires (see [`HttpConfig::max_in_flight`])
    pub fn in_flight(&self) -> usize {
        self.load.lock().total()
    }

    /// The key of a 2025 session by its `Mcp-Session-Id`
    pub fn session_key(&self, session_id: &str) -> Option<SessionKey> {
        self.by_session_id.get(session_id).copied()
    }

    // --- configuration commands ----------------------------------------------------------

    /// Records the `Mcp-Param-*` headers a tool's calls must carry (its `x-mcp-header`
    /// annotations), for the 2026 validation; call it for every tool the server offers
    ///
    /// A tool whose annotations are invalid mirrors nothing (clients do not call it).
    pub fn set_tool(&mut self, tool: &Tool) {
        self.lanes.set_tool(tool);
    }

    /// Forgets a tool's header mirrors (the tool was removed)
    pub fn remove_tool(&mut self, name: &str) {
        self.lanes.remove_tool(name);
    }

    // --- inputs --------------------------------------------------------------------------

    /// The response for a POST whose body the binding stopped reading at
    /// [`HttpConfig::max_body_size`]: 413 with a JSON-RPC error
    pub fn reject_oversize(&self) -> HttpResponse {
        classify::oversize(self.config.max_body_size)
    }

    /// Serves one HTTP request: `source` says where it came from (its connection's peer
    /// address and, on a protected server, the principal of its verified token), `method`
    /// is the HTTP method, `body` the whole body (empty for GET and DELETE)
    ///
    /// Returns a complete response (rejections, 202, DELETE, 429 and 503 past the in-flight
    /// caps) or an open exchange whose output comes from [`poll_output`](Self::poll_output).
    /// `ids` is asked for a session id only when a 2025 `initialize` creates a session; the
    /// session is then bound to `source.principal`, and a request for it from another
    /// principal gets 404 like an unknown session.
    pub fn handle_request(
        &mut self,
        now: Instant,
        source: &Source,
        method: &str,
        headers: &(impl Headers + ?Sized),
        body: &[u8],
        ids: &mut dyn SessionIdSource,
    ) -> Reply {
        self.tick(now);
        let classified = match classify::classify(&self.config, method, headers, body) {
            Ok(c) => c,
            Err(response) => return Reply::Complete(response),
        };
        let reply = match classified {
            Classified::Get => self.get(source, headers),
            Classified::Delete => self.delete(source, headers),
            Classified::Post {
                wire: Wire::Stateless,
                message,
                accepts,
            } => self.post_stateless(source, headers, message, accepts, body),
            Classified::Post {
                wire: Wire::Stateful,
                message,
                accepts,
            } => self.post_stateful(source, headers, message, accepts, body, ids),
        };
        self.flush();
        reply
    }

    /// The client closed an open response before its end
    ///
    /// 2025 wire: the stream's messages keep being buffered for a resumption with
    /// `Last-Event-ID`. 2026 wire: the request is cancelled (the session emits
    /// [`ServerEvent::Cancelled`], or ends the listen stream).
    pub fn handle_closed(&mut self, now: Instant, exchange: ExchangeId) {
        self.tick(now);
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        self.detach(&ex, exchange);
        self.flush();
    }

    /// Ends an open response from the server side (the 2025 polling pattern: the client
    /// reconnects with `Last-Event-ID` after the `retry:` delay and gets the rest)
    ///
    /// On the 2026 wire there is no resumption: this cancels the request like
    /// [`handle_closed`](Self::handle_closed). Emits [`Output::End`].
    pub fn disconnect(&mut self, now: Instant, exchange: ExchangeId) {
        self.tick(now);
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        if matches!(ex.mode, Mode::Deferred { .. }) {
            // The head was never sent: send an empty event stream so the end is well-formed.
            self.outputs.push_back(Output::Head {
                exchange,
                head: self.sse_head(ex.session),
            });
        }
        self.outputs.push_back(Output::End { exchange });
        self.detach(&ex, exchange);
        self.flush();
    }

    /// Fires session timers and closes idle 2025 sessions
    ///
    /// Looks at every session (their number is bounded by [`HttpConfig::max_sessions`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tick(now);
        // The sessions due: the indexed ones whose time came, and the touched ones.
        let mut due: Vec<SessionKey> = self
            .timers
            .iter()
            .take_while(|(at, _)| *at <= self.now)
            .map(|(_, key)| *key)
            .collect();
        due.extend(self.dirty.iter().copied());
        due.sort_unstable();
        due.dedup();
        let mut idle = Vec::new();
        for key in due {
            let Some(conn) = self.conns.get_mut(&key) else {
                continue;
            };
            if conn.session.poll_timeout().is_some_and(|t| t <= self.now) {
                conn.session.handle_timeout(self.now);
                self.dirty.insert(key);
            }
            if conn
                .idle_deadline(&self.config)
                .is_some_and(|t| t <= self.now)
            {
                idle.push(key);
            }
            // Flushed below, or ended: either way its timer is read again.
            self.dirty.insert(key);
        }
        for key in idle {
            self.end_session(key);
        }
        self.flush();
        self.keepalives();
    }

    /// An SSE comment on every open response that has been quiet for
    /// [`HttpConfig::keepalive`] (opening the event stream of one still undecided)
    fn keepalives(&mut self) {
        let keepalive = self.config.keepalive;
        let now = self.now;
        let due: Vec<(ExchangeId, SessionKey, Mode)> = self
            .exchanges
            .iter()
            .filter(|(_, ex)| ex.keepalive_due(keepalive).is_some_and(|t| t <= now))
            .map(|(id, ex)| (*id, ex.session, ex.mode))
            .collect();
        for (exchange, key, mode) in due {
            if mode != Mode::Sse {
                let head = self.sse_head(key);
                self.outputs.push_back(Output::Head { exchange, head });
            }
            let mut data = Vec::new();
            encode_comment(&mut data, "keepalive");
            self.outputs.push_back(Output::Body { exchange, data });
            if let Some(ex) = self.exchanges.get_mut(&exchange) {
                ex.mode = Mode::Sse;
                ex.quiet_since = now;
            }
        }
        // Counted again exactly: the oldest quiet time of the responses still open.
        self.keepalive_floor = self
            .exchanges
            .values()
            .filter(|ex| ex.can_sse())
            .map(|ex| ex.quiet_since)
            .min();
    }

    /// Tells every session that a list changed (see
    /// [`ServerSession::notify_list_changed`](crate::Session::notify_list_changed)): legacy sessions get it on their standalone GET
    /// stream, 2026 listen streams that asked for it on theirs
    ///
    /// # Errors
    /// [`SendError::NotAllowed`] when the server did not declare `listChanged` for this list.
    pub fn notify_list_changed(&mut self, kind: ListKind) -> Result<(), SendError> {
        let keys: Vec<SessionKey> = self.conns.keys().copied().collect();
        for key in keys {
            let Some(conn) = self.conns.get_mut(&key) else {
                continue;
            };
            match conn.session.notify_list_changed(kind) {
                Ok(()) => {
                    self.dirty.insert(key);
                }
                Err(SendError::Closed) => {}
                Err(e) => return Err(e),
            }
        }
        self.flush();
        Ok(())
    }

    /// Tells every session's subscribers that a resource changed (see
    /// [`ServerSession::notify_resource_updated`](crate::Session::notify_resource_updated)); returns how many notifications were queued
    pub fn notify_resource_updated(&mut self, uri: &str) -> usize {
        let mut sent = 0;
        let keys: Vec<SessionKey> = self.conns.keys().copied().collect();
        for key in keys {
            let Some(conn) = self.conns.get_mut(&key) else {
                continue;
            };
            if let Ok(n) = conn.session.notify_resource_updated(uri)
                && n > 0
            {
                sent += n;
                self.dirty.insert(key);
            }
        }
        self.flush();
        sent
    }

    // --- outputs -------------------------------------------------------------------------

    /// The next piece of an open response, or `None` when there is nothing to write
    ///
    /// Drains the sessions touched since the last call first, routing each message to its
    /// stream.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.flush();
        let output = self.outputs.pop_front();
        if output.is_none() && self.outputs.capacity() > 1024 {
            self.outputs.shrink_to(64);
        }
        if let Some(Output::Head { exchange, .. } | Output::Body { exchange, .. }) = &output
            && let Some(ex) = self.exchanges.get_mut(exchange)
        {
            ex.quiet_since = self.now;
        }
        output
    }

    /// The next event of any session, with the session it came from
    ///
    /// Answer requests through [`session_mut`](Self::session_mut) with that key.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<(SessionKey, ServerEvent)> {
        self.flush();
        let event = self.events.pop_front();
        if event.is_none() && self.events.capacity() > 1024 {
            self.events.shrink_to(64);
        }
        event
    }

    /// The next operation for the task store, with the session that waits for its reply
    /// (see [`crate::store`]; only when the server shares its tasks); run them in order
    #[must_use]
    pub fn poll_store(&mut self) -> Option<(SessionKey, crate::store::StoreOp)> {
        self.flush();
        self.store_ops.pop_front()
    }

    /// The store's reply to an operation of session `key`
    /// ([`ServerSession::handle_store_reply`](crate::ServerSession::handle_store_reply));
    /// ignored when that session is gone
    pub fn handle_store_reply(
        &mut self,
        now: Instant,
        key: SessionKey,
        ticket: crate::store::Ticket,
        reply: crate::store::StoreReply,
    ) {
        self.tick(now);
        if let Some(conn) = self.conns.get_mut(&key) {
            conn.session.handle_store_reply(self.now, ticket, reply);
            self.dirty.insert(key);
        }
        self.flush();
    }

    /// A message the store delivered, for every session
    /// ([`ServerSession::handle_store_signal`](crate::ServerSession::handle_store_signal))
    pub fn handle_store_signal(&mut self, now: Instant, message: &str) {
        self.tick(now);
        for (key, conn) in &mut self.conns {
            conn.session.handle_store_signal(self.now, message);
            self.dirty.insert(*key);
        }
        self.flush();
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next run
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let sessions = self.next_session_timer();
        let keepalive = self
            .config
            .keepalive
            .and_then(|k| self.keepalive_floor.map(|at| at + k));
        let next = match (sessions, keepalive) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        #[cfg(debug_assertions)]
        self.check_timers(sessions, next);
        next
    }

    /// The soonest deadline of any session: the flushed ones from the index, the touched
    /// ones read live
    fn next_session_timer(&self) -> Option<Instant> {
        let live = self
            .dirty
            .iter()
            .filter_map(|key| self.conns.get(key)?.deadline(&self.config))
            .min();
        let indexed = self
            .timers
            .iter()
            .find(|(_, key)| !self.dirty.contains(key))
            .map(|(at, _)| *at);
        match (live, indexed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Debug builds, with few sessions: the indexed timers agree with a look at every
    /// session, and no keepalive is due before `next`
    #[cfg(debug_assertions)]
    fn check_timers(&self, sessions: Option<Instant>, next: Option<Instant>) {
        if self.conns.len() + self.exchanges.len() > 64 {
            return;
        }
        let every = self
            .conns
            .values()
            .filter_map(|c| c.deadline(&self.config))
            .min();
        debug_assert_eq!(sessions, every, "the indexed session timers");
        let keepalive = self
            .exchanges
            .values()
            .filter_map(|ex| ex.keepalive_due(self.config.keepalive))
            .min();
        if let Some(due) = keepalive {
            debug_assert!(
                next.is_some_and(|next| next <= due),
                "a keepalive due at {due:?} is not missed ({next:?})"
            );
        }
    }

    /// Puts a session's next deadline in [`timers`](Self::timers) (after its flush)
    fn refresh_timer(&mut self, key: SessionKey) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        let want = conn.deadline(&self.config);
        if conn.timer != want {
            if let Some(at) = conn.timer.take() {
                self.timers.remove(&(at, key));
            }
            if let Some(at) = want {
                self.timers.insert((at, key));
            }
            conn.timer = want;
        }
    }

    // --- requests ------------------------------------------------------------------------

    fn post_stateless(
        &mut self,
        source: &Source,
        headers: &(impl Headers + ?Sized),
        message: Message,
        accepts: Accepts,
        body: &[u8],
    ) -> Reply {
        let Message::Request(mut request) = message else {
            // A 2026 client has nothing to notify or answer: cancellation is closing the
            // response, and servers send it no requests.
            return Reply::Complete(HttpResponse::empty(202));
        };
        let (ticket, parsed) =
            match self
                .lanes
                .admit(&self.lanes.rules(), source, headers, &request)
            {
                Ok(admitted) => admitted,
                Err(response) => return Reply::Complete(response),
            };
        let key = SessionKey::STATELESS;
        let conn = self
            .conns
            .get_mut(&key)
            .expect("the stateless session always exists");
        let internal = RequestId::Number(conn.next_internal);
        conn.next_internal += 1;
        let no = conn.next_stream;
        conn.next_stream += 1;
        let mut stream = EventStream::new(usize::MAX);
        stream.client_id = Some(request.id.clone());
        stream.internal_id = Some(internal.clone());
        conn.streams.insert(no, stream);
        conn.by_request
            .insert(internal.clone(), InFlight { stream: no, ticket });
        let exchange = self.open_exchange(key, no, Mode::Deferred { sse: accepts.sse });
        // The shared session sees the request under an id of its own (clients' ids clash).
        request.id = internal;
        let conn = self.conns.get_mut(&key).expect("checked above");
        conn.session
            .handle_request_as(self.now, body, request, parsed, source.caller(None));
        self.dirty.insert(key);
        Reply::Open(exchange)
    }

    fn post_stateful(
        &mut self,
        source: &Source,
        headers: &(impl Headers + ?Sized),
        message: Message,
        accepts: Accepts,
        body: &[u8],
        ids: &mut dyn SessionIdSource,
    ) -> Reply {
        let id = match &message {
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let ticket = source.ticket();
        let key = match headers.get(MCP_SESSION_ID) {
            Some(sid) => match self.existing(sid, source, headers, id.as_ref()) {
                Ok(key) => key,
                Err(response) => return Reply::Complete(response),
            },
            None => match &message {
                Message::Request(r) if r.method == "initialize" => {
                    if let Err(response) =
                        self.load
                            .lock()
                            .admit(&self.config, &ticket, None, id.as_ref())
                    {
                        return Reply::Complete(response);
                    }
                    match self.create(ids, source.principal.clone()) {
                        Ok(key) => key,
                        Err(response) => return Reply::Complete(response.with_id(id.as_ref())),
                    }
                }
                _ => {
                    let error = ErrorObject::invalid_request(format!(
                        "missing {MCP_SESSION_ID}: send initialize first"
                    ));
                    return Reply::Complete(HttpResponse::json_error(400, id.as_ref(), &error));
                }
            },
        };
        if let Message::Request(request) = &message
            && let Some(response) = self.scope_denied(source, request)
        {
            let sid = self.conns[&key].session_id.clone().unwrap_or_default();
            return Reply::Complete(response.with_header(MCP_SESSION_ID, sid));
        }
        let sid = self.conns[&key].session_id.clone().unwrap_or_default();
        let Some(id) = id else {
            let cancelled = match &message {
                Message::Notification(n) if n.method == "notifications/cancelled" => {
                    cancelled_request(n.params.as_deref())
                }
                _ => None,
            };
            let conn = self.conns.get_mut(&key).expect("looked up above");
            conn.session
                .handle_message_as(self.now, body, source.caller(Some(&sid)));
            self.dirty.insert(key);
            if let Some(request) = cancelled {
                self.cancel_stateful(key, &request);
            }
            return Reply::Complete(HttpResponse::empty(202).with_header(MCP_SESSION_ID, sid));
        };
        let limit = self.config.replay_events;
        let conn = self.conns.get_mut(&key).expect("looked up above");
        if conn.by_request.contains_key(&id) {
            let error = ErrorObject::invalid_request(format!(
                "request id {id} is already in use by a request in progress"
            ));
            return Reply::Complete(HttpResponse::json_error(400, Some(&id), &error));
        }
        let session_load = (
            conn.by_request.len(),
            self.server_config.limits.max_in_flight_inbound,
        );
        if let Err(response) =
            self.load
                .lock()
                .take(&self.config, &ticket, Some(session_load), Some(&id))
        {
            return Reply::Complete(response);
        }
        let no = conn.next_stream;
        conn.next_stream += 1;
        conn.streams.insert(no, EventStream::new(limit));
        conn.by_request.insert(id, InFlight { stream: no, ticket });
        let mode = if accepts.sse {
            Mode::Sse
        } else {
            Mode::Deferred { sse: false }
        };
        let exchange = self.open_exchange(key, no, mode);
        if mode == Mode::Sse {
            self.open_sse(exchange, key, no, 0);
        }
        let conn = self.conns.get_mut(&key).expect("looked up above");
        conn.session
            .handle_message_as(self.now, body, source.caller(Some(&sid)));
        self.dirty.insert(key);
        Reply::Open(exchange)
    }

    fn get(&mut self, source: &Source, headers: &(impl Headers + ?Sized)) -> Reply {
        let Some(sid) = headers.get(MCP_SESSION_ID) else {
            return Reply::Complete(no_session("GET"));
        };
        let key = match self.existing(sid, source, headers, None) {
            Ok(key) => key,
            Err(response) => return Reply::Complete(response),
        };
        if !Accepts::of(headers).sse {
            let error = ErrorObject::invalid_request("GET needs Accept: text/event-stream");
            return Reply::Complete(HttpResponse::json_error(406, None, &error));
        }
        let resume = headers
            .get(LAST_EVENT_ID)
            .and_then(parse_event_id)
            .filter(|(no, _)| self.conns[&key].streams.contains_key(no));
        let (no, from) = match resume {
            Some((no, seq)) => {
                // A resumption replaces whatever response carried the stream before.
                if let Some(old) = self.conns[&key].streams[&no].attached
                    && let Some(ex) = self.exchanges.remove(&old)
                {
                    if matches!(ex.mode, Mode::Deferred { .. }) {
                        self.outputs.push_back(Output::Head {
                            exchange: old,
                            head: self.sse_head(key),
                        });
                    }
                    self.outputs.push_back(Output::End { exchange: old });
                }
                (no, seq)
            }
            None => {
                let limit = self.config.replay_events;
                let conn = self.conns.get_mut(&key).expect("looked up above");
                let stream = conn
                    .streams
                    .entry(STANDALONE)
                    .or_insert_with(|| EventStream::new(limit));
                if stream.attached.is_some() {
                    let error = ErrorObject::invalid_request(
                        "the session already has a standalone GET stream open",
                    );
                    return Reply::Complete(HttpResponse::json_error(409, None, &error));
                }
                (STANDALONE, stream.delivered)
            }
        };
        let exchange = self.open_exchange(key, no, Mode::Sse);
        let conn = self.conns.get_mut(&key).expect("looked up above");
        let stream = conn.streams.get_mut(&no).expect("found or created above");
        stream.delivered = from.min(stream.last_seq());
        self.open_sse(exchange, key, no, from);
        self.deliver(exchange);
        Reply::Open(exchange)
    }

    fn delete(&mut self, source: &Source, headers: &(impl Headers + ?Sized)) -> Reply {
        let Some(sid) = headers.get(MCP_SESSION_ID) else {
            return Reply::Complete(no_session("DELETE"));
        };
        let key = match self.existing(sid, source, headers, None) {
            Ok(key) => key,
            Err(response) => return Reply::Complete(response),
        };
        self.end_session(key);
        Reply::Complete(HttpResponse::empty(200))
    }

    /// A session named by `Mcp-Session-Id`, checked against the principal that created it
    /// (another principal's request gets the same 404 as an unknown id: the session is not
    /// theirs, and its existence is not revealed) and the version header
    fn existing(
        &mut self,
        sid: &str,
        source: &Source,
        headers: &(impl Headers + ?Sized),
        id: Option<&RequestId>,
    ) -> Result<SessionKey, HttpResponse> {
        let key = self
            .by_session_id
            .get(sid.trim())
            .copied()
            .filter(|key| self.conns[key].principal == source.principal);
        let Some(key) = key else {
            let error = ErrorObject::invalid_request("Session not found");
            return Err(HttpResponse::json_error(404, id, &error));
        };
        if let Some(v) = headers.get(MCP_PROTOCOL_VERSION) {
            let supported = ProtocolVersion::parse(v.trim())
                .is_some_and(|p| self.server_config.versions.contains(&p));
            if !supported {
                let error = ErrorObject::invalid_request(format!(
                    "unsupported {MCP_PROTOCOL_VERSION}: {v}"
                ));
                return Err(HttpResponse::json_error(400, id, &error));
            }
        }
        self.touch(key);
        Ok(key)
    }

    /// The session was used now: it moves to the back of the idle order
    fn touch(&mut self, key: SessionKey) {
        self.touches += 1;
        if let Some(conn) = self.conns.get_mut(&key) {
            conn.last_activity = self.now;
            conn.touched = self.touches;
            self.dirty.insert(key);
        }
    }

    /// Puts a 2025 session in the idle order, or takes it out, by whether it is busy
    fn refresh_idle(&mut self, key: SessionKey) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        if conn.wire != Wire::Stateful {
            return;
        }
        if conn.by_request.is_empty() && conn.by_request.capacity() > 0 {
            // An idle session keeps no table for requests (a few hundred bytes each).
            conn.by_request = HashMap::new();
        }
        let want = (!conn.busy()).then_some(conn.touched);
        if conn.lru != want {
            if let Some(at) = conn.lru.take() {
                self.idle.remove(&(at, key));
            }
            if let Some(at) = want {
                self.idle.insert((at, key));
            }
            conn.lru = want;
        }
    }

    /// 2025: the client cancelled a request (`notifications/cancelled`): it is no longer in
    /// progress, and its response ends (no answer follows)
    fn cancel_stateful(&mut self, key: SessionKey, request: &RequestId) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        let Some(in_flight) = conn.by_request.remove(request) else {
            return;
        };
        self.load.lock().release(&in_flight.ticket);
        let Some(stream) = conn.streams.get_mut(&in_flight.stream) else {
            return;
        };
        stream.finished = true;
        let Some(exchange) = stream.attached else {
            return;
        };
        if self
            .exchanges
            .get(&exchange)
            .is_some_and(|ex| matches!(ex.mode, Mode::Deferred { .. }))
        {
            // Nothing was sent: an empty answer.
            let mut head = self.sse_head(key);
            head.status = 204;
            head.headers.retain(|(n, _)| *n == MCP_SESSION_ID);
            self.outputs.push_back(Output::Head { exchange, head });
            if let Some(ex) = self.exchanges.get_mut(&exchange) {
                ex.mode = Mode::Sse;
            }
        }
        self.deliver(exchange);
    }

    /// A new 2025 session for an `initialize`, bound to `principal`; at
    /// [`HttpConfig::max_sessions`] the least recently used idle session is closed for it
    fn create(
        &mut self,
        ids: &mut dyn SessionIdSource,
        principal: Option<Principal>,
    ) -> Result<SessionKey, HttpResponse> {
        if self.session_count() >= self.config.max_sessions {
            // The idle order is up to date once every touched session is drained.
            self.flush();
        }
        while self.session_count() >= self.config.max_sessions {
            let Some((_, oldest)) = self.idle.pop_first() else {
                let error =
                    ErrorObject::internal_error("too many sessions, all of them busy; retry later");
                return Err(load::refusal(&self.config, 503, None, &error));
            };
            if let Some(conn) = self.conns.get_mut(&oldest) {
                conn.lru = None;
            }
            self.end_session(oldest);
        }
        let node = self.config.node.as_ref();
        let sid = (0..3)
            .map(|_| ids.next_session_id())
            .map(|id| match node {
                Some(node) => node.tag(&id),
                None => id,
            })
            .find(|s| is_valid_session_id(s) && !self.by_session_id.contains_key(s));
        let Some(sid) = sid else {
            let error = ErrorObject::internal_error("no valid session id could be made");
            return Err(HttpResponse::json_error(500, None, &error));
        };
        let key = SessionKey(self.next_key);
        self.next_key += 1;
        let mut session = ServerSession::new(Arc::clone(&self.server_config), self.now);
        if let Some((at, unix_ms)) = self.wall_anchor {
            session.anchor_wall_clock(at, unix_ms);
        }
        // Its task ids must differ from the 2026 session's and the other 2025 ones'.
        session.scope_task_ids(key.0);
        self.by_session_id.insert(sid.clone(), key);
        let mut conn = Conn::new(session, Wire::Stateful, Some(sid), self.now);
        conn.principal = principal;
        self.conns.insert(key, conn);
        self.touch(key);
        Ok(key)
    }

    /// Closes a 2025 session: its open responses end, its last events are kept for
    /// [`poll_event`](Self::poll_event)
    fn end_session(&mut self, key: SessionKey) {
        self.drain(key);
        let Some(mut conn) = self.conns.remove(&key) else {
            return;
        };
        if let Some(sid) = &conn.session_id {
            self.by_session_id.remove(sid);
        }
        if let Some(at) = conn.lru.take() {
            self.idle.remove(&(at, key));
        }
        if let Some(at) = conn.timer.take() {
            self.timers.remove(&(at, key));
        }
        for in_flight in conn.by_request.values() {
            self.load.lock().release(&in_flight.ticket);
        }
        self.dirty.remove(&key);
        for stream in conn.streams.values() {
            if let Some(exchange) = stream.attached
                && let Some(ex) = self.exchanges.remove(&exchange)
            {
                if matches!(ex.mode, Mode::Deferred { .. }) {
                    // Nothing was sent yet: say why the answer will not come.
                    let error = ErrorObject::invalid_request("Session not found");
                    let response = HttpResponse::json_error(404, stream.client_id.as_ref(), &error);
                    self.outputs.push_back(Output::Head {
                        exchange,
                        head: ResponseHead {
                            status: response.status,
                            headers: response.headers,
                        },
                    });
                    self.outputs.push_back(Output::Body {
                        exchange,
                        data: response.body,
                    });
                }
                self.outputs.push_back(Output::End { exchange });
            }
        }
        conn.session.close(self.now);
        while let Some(event) = conn.session.poll_event() {
            self.events.push_back((key, event));
        }
    }

    // --- routing -------------------------------------------------------------------------

    fn open_exchange(&mut self, session: SessionKey, stream: u64, mode: Mode) -> ExchangeId {
        let id = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        self.exchanges.insert(
            id,
            Exchange {
                session,
                stream,
                mode,
                quiet_since: self.now,
            },
        );
        if matches!(mode, Mode::Sse | Mode::Deferred { sse: true }) {
            // Later than every response open before it: the floor holds (or starts here).
            self.keepalive_floor.get_or_insert(self.now);
        }
        self.dirty.insert(session);
        let conn = self
            .conns
            .get_mut(&session)
            .expect("the exchange's session");
        if let Some(s) = conn.streams.get_mut(&stream) {
            s.attached = Some(id);
        }
        id
    }

    fn sse_head(&self, key: SessionKey) -> ResponseHead {
        let mut headers = vec![
            ("Content-Type", "text/event-stream".to_owned()),
            ("Cache-Control", "no-cache".to_owned()),
        ];
        if let Some(sid) = self.conns.get(&key).and_then(|c| c.session_id.clone()) {
            headers.push((MCP_SESSION_ID, sid));
        }
        ResponseHead {
            status: 200,
            headers,
        }
    }

    /// The SSE head and, on the 2025 wire, the priming event (an id to resume from, empty
    /// data, and the `retry:` delay)
    fn open_sse(&mut self, exchange: ExchangeId, key: SessionKey, no: u64, from: u64) {
        self.outputs.push_back(Output::Head {
            exchange,
            head: self.sse_head(key),
        });
        if self.conns[&key].wire == Wire::Stateful {
            let mut data = Vec::new();
            let id = event_id(no, from);
            encode_event(&mut data, None, Some(&id), "", Some(self.config.retry_ms));
            self.outputs.push_back(Output::Body { exchange, data });
        }
    }

    /// Drains every touched session
    fn flush(&mut self) {
        while let Some(key) = self.dirty.pop_first() {
            self.drain(key);
            self.refresh_idle(key);
            self.refresh_timer(key);
        }
        // Memory goes back after a burst of 2026 requests.
        shrink(&mut self.exchanges);
        if let Some(conn) = self.conns.get_mut(&SessionKey::STATELESS) {
            shrink(&mut conn.streams);
            shrink(&mut conn.by_request);
        }
    }

    /// Routes a session's transmits to streams and collects its events
    fn drain(&mut self, key: SessionKey) {
        loop {
            let Some(conn) = self.conns.get_mut(&key) else {
                return;
            };
            self.buf.clear();
            let Some(t) = conn.session.poll_transmit(&mut self.buf) else {
                break;
            };
            let mut message = std::mem::take(&mut self.buf);
            if message.last() == Some(&b'\n') {
                message.pop();
            }
            self.route(key, t.relation, message);
        }
        let conn = self.conns.get_mut(&key).expect("checked in the loop");
        while let Some(event) = conn.session.poll_event() {
            self.events.push_back((key, event));
        }
        while let Some(op) = conn.session.poll_store() {
            self.store_ops.push_back((key, op));
        }
    }

    fn route(&mut self, key: SessionKey, relation: Relation, message: Vec<u8>) {
        let conn = self
            .conns
            .get_mut(&key)
            .expect("routing for a live session");
        let (no, answer) = match relation {
            Relation::Answer(id) => match conn.by_request.remove(&id) {
                Some(in_flight) => {
                    self.load.lock().release(&in_flight.ticket);
                    (Some(in_flight.stream), true)
                }
                None => (None, false),
            },
            Relation::During(id) => (conn.by_request.get(&id).map(|f| f.stream), false),
            _ => (None, false),
        };
        match (no, conn.wire) {
            (Some(no), _) => self.push(key, no, message, answer),
            // Nowhere to go on the 2026 wire: list changes travel on listen streams.
            (None, Wire::Stateless) => {}
            (None, Wire::Stateful) => self.push(key, STANDALONE, message, false),
        }
    }

    /// Queues a message on a stream and writes it if a response carries the stream
    fn push(&mut self, key: SessionKey, no: u64, message: Vec<u8>, answer: bool) {
        let limit = self.config.replay_events;
        let conn = self.conns.get_mut(&key).expect("pushing to a live session");
        let Some(stream) = (if no == STANDALONE {
            Some(
                conn.streams
                    .entry(STANDALONE)
                    .or_insert_with(|| EventStream::new(limit)),
            )
        } else {
            conn.streams.get_mut(&no)
        }) else {
            return;
        };
        let message = match (&stream.client_id, &stream.internal_id) {
            (Some(client), Some(internal)) => {
                if !answer && is_request(&message) {
                    // 2026: never a server request on a response stream.
                    return;
                }
                restore_id(message, internal, client, answer)
            }
            _ => message,
        };
        stream.push(message);
        if answer {
            stream.finished = true;
        }
        if let Some(exchange) = stream.attached {
            self.deliver(exchange);
        }
    }

    /// Writes what the exchange's stream has not delivered yet
    fn deliver(&mut self, exchange: ExchangeId) {
        let Some(ex) = self.exchanges.get(&exchange) else {
            return;
        };
        let (key, no, mut mode) = (ex.session, ex.stream, ex.mode);
        let conn = self.conns.get_mut(&key).expect("an exchange's session");
        let wire = conn.wire;
        let Some(stream) = conn.streams.get_mut(&no) else {
            return;
        };
        let pending = stream.undelivered();
        let last = stream.last_seq();
        let finished = stream.finished;
        let mut diverted = Vec::new();
        let mut out = Vec::new();
        for (seq, message) in pending {
            stream.delivered = seq;
            if let Mode::Deferred { sse } = mode {
                if finished && seq == last {
                    // The answer alone: a JSON body.
                    let status = match wire {
                        Wire::Stateless => error_code(&message).map_or(200, modern_error_status),
                        Wire::Stateful => 200,
                    };
                    let mut headers = vec![("Content-Type", "application/json".to_owned())];
                    if let Some(sid) = &conn.session_id {
                        headers.push((MCP_SESSION_ID, sid.clone()));
                    }
                    if status == 503 {
                        // The server could not start the work: when to try again.
                        headers.push(("Retry-After", load::retry_after(&self.config)));
                    }
                    out.push(Output::Head {
                        exchange,
                        head: ResponseHead { status, headers },
                    });
                    out.push(Output::Body {
                        exchange,
                        data: message,
                    });
                    break;
                }
                if !sse {
                    // A JSON-only response cannot carry it: 2025 sends it on the GET stream.
                    if wire == Wire::Stateful {
                        diverted.push(message);
                    }
                    continue;
                }
                mode = Mode::Sse;
                let mut headers = vec![
                    ("Content-Type", "text/event-stream".to_owned()),
                    ("Cache-Control", "no-cache".to_owned()),
                ];
                if let Some(sid) = &conn.session_id {
                    headers.push((MCP_SESSION_ID, sid.clone()));
                }
                out.push(Output::Head {
                    exchange,
                    head: ResponseHead {
                        status: 200,
                        headers,
                    },
                });
            }
            let text = String::from_utf8(message).expect("the session writes UTF-8 JSON");
            let id = (wire == Wire::Stateful).then(|| event_id(no, seq));
            let mut data = Vec::new();
            encode_event(&mut data, None, id.as_deref(), &text, None);
            out.push(Output::Body { exchange, data });
        }
        let done = stream.done();
        if wire == Wire::Stateless {
            // Never resumed: keep nothing written (listen streams run for long).
            stream.forget_delivered();
        }
        self.outputs.extend(out);
        if let Some(ex) = self.exchanges.get_mut(&exchange) {
            ex.mode = mode;
        }
        if done {
            self.outputs.push_back(Output::End { exchange });
            let ex = self.exchanges.remove(&exchange).expect("looked up above");
            self.finish_stream(&ex);
        }
        for message in diverted {
            self.push(key, STANDALONE, message, false);
        }
    }

    /// A stream's response ended with everything delivered
    fn finish_stream(&mut self, ex: &Exchange) {
        let keep = self.config.finished_streams;
        self.touch(ex.session);
        let Some(conn) = self.conns.get_mut(&ex.session) else {
            return;
        };
        if let Some(s) = conn.streams.get_mut(&ex.stream) {
            s.attached = None;
        }
        if conn.wire == Wire::Stateless {
            conn.streams.remove(&ex.stream);
            return;
        }
        if !conn.finished.contains(&ex.stream) {
            conn.finished.push_back(ex.stream);
        }
        while conn.finished.len() > keep {
            if let Some(old) = conn.finished.pop_front() {
                conn.streams.remove(&old);
            }
        }
    }

    /// An exchange went away before its stream ended
    fn detach(&mut self, ex: &Exchange, exchange: ExchangeId) {
        let now = self.now;
        self.touch(ex.session);
        let Some(conn) = self.conns.get_mut(&ex.session) else {
            return;
        };
        let Some(stream) = conn.streams.get_mut(&ex.stream) else {
            return;
        };
        if stream.attached == Some(exchange) {
            stream.attached = None;
        }
        if conn.wire == Wire::Stateful {
            return;
        }
        // 2026: the client gave up on the request.
        let stream = conn.streams.remove(&ex.stream).expect("looked up above");
        if stream.finished {
            return;
        }
        if let Some(internal) = stream.internal_id {
            if let Some(in_flight) = conn.by_request.remove(&internal) {
                self.load.lock().release(&in_flight.ticket);
            }
            let params = serde_json::json!({
                "requestId": internal,
                "reason": "the client closed the response stream",
            });
            let message = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": params,
            })
            .to_string();
            conn.session.handle_message(now, message.as_bytes());
            self.dirty.insert(ex.session);
        }
    }

    fn tick(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }
}

impl HttpResponse {
    /// Echoes the request id in an error body that had none
    fn with_id(self, id: Option<&RequestId>) -> Self {
        let Some(id) = id else { return self };
        let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&self.body) else {
            return self;
        };
        value["id"] = serde_json::to_value(id).expect("an id serializes");
        Self {
            body: value.to_string().into_bytes(),
            ..self
        }
    }
}

fn no_session(method: &str) -> HttpResponse {
    let error = ErrorObject::invalid_request(format!(
        "{method} needs an {MCP_SESSION_ID}; this endpoint has no stateless {method}"
    ));
    HttpResponse::json_error(405, None, &error).with_header("Allow", "POST")
}

/// The request a `notifications/cancelled` names
fn cancelled_request(params: Option<&serde_json::value::RawValue>) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    let c: Cancelled = serde_json::from_str(params?.get()).ok()?;
    Some(c.request_id)
}

/// Puts the client's id back into a 2026 message: the answer's `id`, or a listen stream's
/// subscription id
fn restore_id(message: Vec<u8>, internal: &RequestId, client: &RequestId, answer: bool) -> Vec<u8> {
    let internal_json = serde_json::to_string(internal).expect("an id serializes");
    let client_json = serde_json::to_string(client).expect("an id serializes");
    let (from, to) = if answer {
        (
            format!(r#"{{"jsonrpc":"2.0","id":{internal_json},"#),
            format!(r#"{{"jsonrpc":"2.0","id":{client_json},"#),
        )
    } else {
        (
            format!(r#""{}":{internal_json}"#, meta::SUBSCRIPTION_ID),
            format!(r#""{}":{client_json}"#, meta::SUBSCRIPTION_ID),
        )
    };
    let mut message = message;
    // The subscription id may appear in the result's `_meta` as well as the params. The scan
    // moves past each replacement: `to` may contain `from` (the same id, or `1` in `12`).
    let mut start = 0;
    while let Some(at) = find(&message[start..], from.as_bytes()).map(|at| start + at) {
        message.splice(at..at + from.len(), to.bytes());
        if answer {
            break;
        }
        start = at + to.len();
    }
    if answer && find(&message, to.as_bytes()) != Some(0) {
        // Not in the expected shape: fall back to a full rewrite.
        if let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&message) {
            value["id"] = serde_json::to_value(client).expect("an id serializes");
            return value.to_string().into_bytes();
        }
    }
    message
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
