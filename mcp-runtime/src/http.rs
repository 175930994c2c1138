//! The Streamable HTTP front ends' glue: the actor state around the core's sans-IO
//! [`HttpServer`] ([`ServerFront`]) and [`ClientTransport`] ([`ClientFront`]), and the
//! conversions between the core's requests and responses and the `http` crate's types
//!
//! A binding keeps what is its runtime's: sockets, tasks or threads, channels, and the
//! loop that waits for the next input (the async bindings' loops are the kernel's:
//! [`http_client`](crate::http_client), [`http_server`](crate::http_server)). Everything it
//! does with an input once it has one lives here, once.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use mcp_sansio::auth::{AuthAction, AuthResponse};
use mcp_sansio::http::{
    ClientTransport, ExchangeId, Headers, HttpConfig, HttpRequest, HttpResponse, HttpServer,
    Output, Reply, ResponseHead, SessionIdSource, SessionKey, Source, StreamId,
    session_id_from_bytes,
};
use mcp_sansio::id_map::{IdMap, id_map, shrink};
use mcp_sansio::schema::Tool;
use mcp_sansio::session::HeaderFields;
use mcp_sansio::{ClientEvent, ClientSession, ServerConfig, ServerEvent, ServerSession};

#[cfg(feature = "auth")]
use crate::auth::OAuthOptions;
use crate::peer::HandlerMsg;
use crate::push::Push;
use crate::store::TaskStore;
use mcp_sansio::store::{StoreOp, StoreReply, Ticket};

// ---------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------

/// What a binding built without its `auth` feature has for a protected server's gate: no
/// value exists, so no server is protected (unlike `Infallible` it is not `Copy`, so the
/// same code clones either)
#[derive(Clone, Debug)]
pub enum Unprotected {}

impl Unprotected {
    /// What `Protection::rules` gives, for code written once for both (never called: no
    /// value of this type exists)
    pub fn rules(&self) -> &Arc<mcp_sansio::http::protected::ResourceServer> {
        match *self {}
    }
}

/// The gate of a protected server as the HTTP actors take it: the OAuth
/// [`Protection`](crate::auth::asynchronous::Protection) with the `auth` feature, else
/// [`Unprotected`] (no value: no server is protected)
#[cfg(feature = "auth")]
pub type Gate = crate::auth::asynchronous::Protection;
/// The gate of a protected server as the HTTP actors take it: without the `auth` feature,
/// [`Unprotected`] (no value: no server is protected)
#[cfg(not(feature = "auth"))]
pub type Gate = Unprotected;

/// `config` for a server behind `gate`: its 403 for a scoped entry names the gate's
/// metadata and required scopes
pub fn gated(mut config: HttpConfig, gate: Option<&Gate>) -> HttpConfig {
    if let Some(gate) = gate {
        config.resource_server = Some(Arc::clone(gate.rules()));
    }
    config
}

/// A protected server's admission of one request, the same whatever features the binding
/// was built with: the principal of its verified token (`None` without a gate), or the
/// answer that refuses it (401 without a valid token, 403 without the scopes)
///
/// # Errors
/// The refusal, as the response to send.
pub async fn admit(
    gate: Option<&Gate>,
    method: &str,
    path: &str,
    headers: &Fields,
) -> Result<Option<mcp_sansio::http::Principal>, HttpResponse> {
    #[cfg(feature = "auth")]
    match gate {
        Some(gate) => gate.admit(method, path, headers).await.map(Some),
        None => Ok(None),
    }
    #[cfg(not(feature = "auth"))]
    {
        let _ = (method, path, headers);
        match gate {
            Some(never) => match *never {},
            None => Ok(None),
        }
    }
}

/// A piece of an open response; the channel closing is its end
#[derive(Debug)]
pub enum Piece {
    /// The status and header fields (first)
    Head(ResponseHead),
    /// A piece of the body, to write (and flush) as it comes
    Body(Vec<u8>),
}

/// The body bytes of one open response that the actor handed to its connection and the
/// connection has not taken for writing yet, and whether the actor dropped the response
/// because they grew past [`HttpConfig::max_unwritten`] (a client that stopped reading)
///
/// The actor counts each piece it sends; the connection calls [`taken`](Self::taken) for
/// each piece it receives, and when the channel ends asks [`dropped`](Self::dropped): a
/// dropped response is not ended cleanly, its connection closes.
#[derive(Clone, Debug, Default)]
pub struct Unwritten(Arc<UnwrittenState>);

#[derive(Debug, Default)]
struct UnwrittenState {
    bytes: AtomicUsize,
    dropped: AtomicBool,
}

impl Unwritten {
    /// The connection received `piece` (to write it)
    pub fn taken(&self, piece: &Piece) {
        if let Piece::Body(data) = piece {
            self.0.bytes.fetch_sub(data.len(), Ordering::AcqRel);
        }
    }

    /// Whether the actor dropped the response: close the connection rather than end it
    pub fn dropped(&self) -> bool {
        self.0.dropped.load(Ordering::Acquire)
    }

    pub(crate) fn bytes(&self) -> usize {
        self.0.bytes.load(Ordering::Acquire)
    }

    pub(crate) fn sent(&self, n: usize) {
        self.0.bytes.fetch_add(n, Ordering::AcqRel);
    }

    pub(crate) fn drop_response(&self) {
        self.0.dropped.store(true, Ordering::Release);
    }
}

/// How an open response goes on, after what a hand-framed connection (the bindings' own
/// HTTP/1.1) gathered of it for its next write
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// More pieces will come
    More,
    /// It ended: the last chunk is in the bytes
    Ended,
    /// The server gave it up (the client stopped reading): close the connection
    Dropped,
}

/// The runtime's channels between the connections and the server actor
pub trait Channels: Sized + 'static {
    /// A request body as the HTTP stack collected it
    type Body: AsRef<[u8]>;
    /// Carries the answer to one request back to its connection
    type Reply;
    /// Sends the pieces of an open response to its connection
    type Frames;
    /// Receives the pieces of an open response on its connection
    type FramesRx;

    /// Hands `answer` to the connection; `false` when it went away
    fn reply(reply: Self::Reply, answer: Answer<Self>) -> bool;
    /// A fresh channel for an open response's pieces
    fn frames() -> (Self::Frames, Self::FramesRx);
    /// Sends a piece (a connection that went away tells the actor on its own)
    fn send(frames: &Self::Frames, piece: Piece);
}

/// The actor's answer to a request: every request is answered at once, whole or open
pub enum Answer<C: Channels> {
    /// The whole response
    Complete(HttpResponse),
    /// A response whose head and body come as [`Piece`]s
    Open {
        /// Which exchange (to report the client leaving)
        exchange: ExchangeId,
        /// Where its pieces come
        frames: C::FramesRx,
        /// What waits for the client (the connection reports each piece it takes)
        unwritten: Unwritten,
    },
}

/// From the connections to the server actor
pub enum ToActor<C: Channels> {
    /// A request, read whole
    Request {
        /// Where it came from: the connection's peer address, and the principal of its
        /// verified token on a protected server
        source: Source,
        /// The method
        method: String,
        /// The header fields, in order, every value as it came (the rules answer 400 for one
        /// that is not UTF-8)
        headers: Fields,
        /// The body
        body: C::Body,
        /// Where the answer goes
        reply: C::Reply,
    },
    /// The body was larger than the limit
    Oversize {
        /// Where the answer goes
        reply: C::Reply,
    },
    /// The client went away before the response ended
    Closed(ExchangeId),
    /// The server is shutting down (for a binding with one inbox for everything)
    Stop,
}

/// What runs the application for one session of an HTTP server (the binding's peer: its
/// request handlers in flight)
pub trait SessionPeer: Sized {
    /// What every peer runs the application with (the dispatcher, handlers, options)
    type App;
    /// A peer for a session that just appeared
    fn fresh() -> Self;
    /// `event` happened on its session `key`
    fn on_event(
        &mut self,
        app: &Self::App,
        session: &mut ServerSession,
        key: SessionKey,
        event: ServerEvent,
    );
    /// Its session is gone, or the server stops: stop its handlers
    fn abort_all(&mut self);
}

/// The state of an HTTP server actor: the core's rules, the open exchanges' channels, a
/// peer per session and the session id source
pub struct ServerFront<C: Channels, P: SessionPeer> {
    http: HttpServer,
    config: Arc<HttpConfig>,
    exchanges: IdMap<ExchangeId, (C::Frames, Unwritten)>,
    peers: IdMap<SessionKey, P>,
    app: P::App,
    ids: SessionIds,
    /// The open exchanges' spans, when a subscriber wants them
    traces: IdMap<ExchangeId, crate::trace::ExchangeTrace>,
    /// The task store, and where its replies go (back into the actor, tagged with the
    /// session)
    store: Option<(Arc<dyn TaskStore>, StoreSink)>,
}

/// Where a task store's reply to a session's operation goes: the actor's inbox
pub(crate) type StoreSink = Arc<dyn Fn(SessionKey, Ticket, StoreReply) + Send + Sync>;

impl<C: Channels, P: SessionPeer> std::fmt::Debug for ServerFront<C, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerFront")
            .field("open", &self.exchanges.len())
            .finish_non_exhaustive()
    }
}

impl<C: Channels, P: SessionPeer> ServerFront<C, P> {
    /// The rules for `http_config` and `server_config`, with `tools` declared, at `now`
    /// (`unix_ms` anchors the wall clock), running the application with `app`
    pub fn new(
        http_config: HttpConfig,
        server_config: Arc<ServerConfig>,
        tools: &[Tool],
        app: P::App,
        (now, unix_ms): (Instant, u64),
    ) -> Self {
        let config = Arc::new(http_config);
        let mut http = HttpServer::new(Arc::clone(&config), server_config, now);
        http.anchor_wall_clock(now, unix_ms);
        for tool in tools {
            http.set_tool(tool);
        }
        Self {
            http,
            config,
            exchanges: id_map(),
            peers: id_map(),
            app,
            ids: SessionIds::new(),
            traces: id_map(),
            store: None,
        }
    }

    /// The scopes the server's entries require, which the core checks before a session
    /// sees a request (`403 insufficient_scope`); from the server's catalog, at start and
    /// at every change ([`Push::Access`])
    pub fn set_access(&mut self, access: Option<Arc<mcp_sansio::server::Access>>) {
        self.http
            .set_required_scopes(access.map(|a| a as Arc<dyn mcp_sansio::http::RequiredScopes>));
    }

    /// Shares the sessions' tasks through `store` (the server's configuration says how:
    /// [`ServerConfig::shared_tasks`](mcp_sansio::ServerConfig::shared_tasks)); its replies
    /// go to `sink`, which hands them back to [`store_reply`](Self::store_reply)
    pub fn set_store(&mut self, store: Arc<dyn TaskStore>, sink: StoreSink) {
        self.store = Some((store, sink));
    }

    /// The store's reply to an operation of session `key`
    pub fn store_reply(
        &mut self,
        now: Instant,
        key: SessionKey,
        ticket: Ticket,
        reply: StoreReply,
    ) {
        self.http.handle_store_reply(now, key, ticket, reply);
    }

    /// Runs the sessions' store operations, in order
    fn run_store(&mut self) -> bool {
        let mut busy = false;
        while let Some((key, op)) = self.http.poll_store() {
            busy = true;
            let Some((store, sink)) = &self.store else {
                continue;
            };
            let ticket = match &op {
                StoreOp::Put { ticket, .. } | StoreOp::Get { ticket, .. } => Some(*ticket),
                _ => None,
            };
            let sink = Arc::clone(sink);
            store.run(
                op,
                Box::new(move |reply| {
                    if let Some(ticket) = ticket {
                        sink(key, ticket, reply);
                    }
                }),
            );
        }
        busy
    }

    /// The rules the 2026 fast path shares with this server (its caps, tools and scopes)
    pub fn lanes(&self) -> mcp_sansio::http::Lanes {
        self.http.lanes().clone()
    }

    /// The session `key` and its peer (made now if it had none), if the session is open
    pub fn peer(&mut self, key: SessionKey) -> Option<(&mut P, &mut ServerSession)> {
        let session = self.http.session_mut(key)?;
        Some((self.peers.entry(key).or_insert_with(P::fresh), session))
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.http.poll_timeout()
    }

    /// A change the server pushed, for every session: the core decides which sessions send
    /// what (legacy sessions on their GET stream, 2026 listen streams that asked), and keeps
    /// its tools' header mirrors
    pub fn push(&mut self, now: Instant, push: &Push) {
        match push {
            Push::Signal(message) => self.http.handle_store_signal(now, message),
            Push::ListChanged(kind) => {
                let _ = self.http.notify_list_changed(*kind);
            }
            Push::ResourceUpdated(uri) => {
                let _ = self.http.notify_resource_updated(uri);
            }
            Push::ToolSet(tool) => self.http.set_tool(tool),
            Push::Access(access) => self.set_access(access.clone()),
            Push::ToolRemoved(name) => self.http.remove_tool(name),
        }
    }

    /// A deadline passed
    pub fn handle_timeout(&mut self, now: Instant) {
        self.http.handle_timeout(now);
    }

    /// Feeds a message from a connection to the rules
    pub fn on_conn(&mut self, now: Instant, msg: ToActor<C>) {
        match msg {
            ToActor::Request {
                source,
                method,
                headers,
                body,
                reply,
            } => {
                let trace = crate::trace::ExchangeTrace::new(&method, &headers);
                crate::meter::received("http", body.as_ref().len());
                // The handlers read the request's fields: the one buffer shared, not copied,
                // when every value is text (else the core answers 400 for the one that is not).
                let source = with_fields(source, &headers);
                let answer = self.http.handle_request(
                    now,
                    &source,
                    &method,
                    &headers,
                    body.as_ref(),
                    &mut self.ids,
                );
                match answer {
                    Reply::Complete(response) => {
                        metered(&response);
                        if let Some(trace) = trace {
                            trace.complete(&response);
                        }
                        C::reply(reply, Answer::Complete(response));
                    }
                    Reply::Open(exchange) => {
                        let (tx, frames) = C::frames();
                        let unwritten = Unwritten::default();
                        let answer = Answer::Open {
                            exchange,
                            frames,
                            unwritten: unwritten.clone(),
                        };
                        if C::reply(reply, answer) {
                            self.exchanges.insert(exchange, (tx, unwritten));
                            if let Some(trace) = trace {
                                self.traces.insert(exchange, trace);
                            }
                        } else {
                            self.http.handle_closed(now, exchange);
                        }
                    }
                    _ => {}
                }
            }
            ToActor::Oversize { reply } => {
                let response = self.http.reject_oversize();
                metered(&response);
                let no_headers: &[(&str, &[u8])] = &[];
                if let Some(trace) = crate::trace::ExchangeTrace::new("POST", no_headers) {
                    trace.complete(&response);
                }
                C::reply(reply, Answer::Complete(response));
            }
            ToActor::Closed(exchange) => {
                self.end_trace(exchange);
                self.exchanges.remove(&exchange);
                shrink(&mut self.exchanges);
                self.http.handle_closed(now, exchange);
            }
            ToActor::Stop => {}
        }
    }

    /// Runs the application and writes the responses until both are quiet; `now` is when
    /// (a response dropped for a client that stopped reading tells the rules at `now`)
    pub fn pump(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            while let Some((key, event)) = self.http.poll_event() {
                busy = true;
                let closed = matches!(event, ServerEvent::Closed { .. });
                if let Some(session) = self.http.session_mut(key) {
                    let peer = self.peers.entry(key).or_insert_with(P::fresh);
                    peer.on_event(&self.app, session, key, event);
                }
                if closed && let Some(mut peer) = self.peers.remove(&key) {
                    peer.abort_all();
                }
            }
            while let Some(output) = self.http.poll_output() {
                busy = true;
                match output {
                    Output::Head { exchange, head } => {
                        if let Some(trace) = self.traces.get(&exchange) {
                            trace.status(head.status);
                        }
                        if let Some((tx, _)) = self.exchanges.get(&exchange) {
                            C::send(tx, Piece::Head(head));
                        }
                    }
                    Output::Body { exchange, data } => {
                        let Some((tx, unwritten)) = self.exchanges.get(&exchange) else {
                            continue;
                        };
                        if self.config.keeps_unwritten(unwritten.bytes(), data.len()) {
                            crate::meter::sent("http", data.len());
                            unwritten.sent(data.len());
                            C::send(tx, Piece::Body(data));
                        } else {
                            // The client stopped reading: drop the response rather than
                            // hold without bound (2026: that cancels the request).
                            unwritten.drop_response();
                            if let Some(trace) = self.traces.get(&exchange) {
                                trace.dropped();
                            }
                            self.end_trace(exchange);
                            self.exchanges.remove(&exchange);
                            self.http.handle_closed(now, exchange);
                        }
                    }
                    Output::End { exchange } => {
                        self.end_trace(exchange);
                        self.exchanges.remove(&exchange);
                        shrink(&mut self.exchanges);
                    }
                    _ => {}
                }
            }
            busy |= self.run_store();
            if !busy {
                return;
            }
        }
    }

    /// An exchange ended: its span says so
    fn end_trace(&mut self, exchange: ExchangeId) {
        if let Some(trace) = self.traces.remove(&exchange) {
            trace.end();
        }
        shrink(&mut self.traces);
    }

    /// Shutting down: every open response ends (its channel closes), handlers stop
    pub fn end_all(&mut self) {
        self.exchanges.clear();
        for (_, trace) in self.traces.drain() {
            trace.end();
        }
        for peer in self.peers.values_mut() {
            peer.abort_all();
        }
    }
}

impl<C: Channels, R: crate::peer::Plumbing> ServerFront<C, crate::peer::Peer<R>> {
    /// Shares the sessions' tasks through the server's `store`, if it has one; the replies
    /// come back through `handlers` as [`HandlerMsg::Store`]
    pub fn share_through(
        &mut self,
        store: Option<&Arc<dyn TaskStore>>,
        handlers: crate::peer::Handlers<R>,
    ) {
        if let Some(store) = store {
            self.set_store(
                Arc::clone(store),
                Arc::new(move |key, ticket, reply| {
                    let _ = handlers
                        .for_session(key)
                        .send(HandlerMsg::Store { ticket, reply });
                }),
            );
        }
    }

    /// A handler's message: to its session's peer, or, for a change the server pushed, to
    /// every session ([`push`](Self::push))
    pub fn on_handler(&mut self, key: SessionKey, msg: HandlerMsg<R>) {
        if let HandlerMsg::Push(push) = msg {
            self.push(R::now(), &push);
        } else if let HandlerMsg::Store { ticket, reply } = msg {
            self.store_reply(R::now(), key, ticket, reply);
        } else if let Some((peer, session)) = self.peer(key) {
            peer.on_server_handler(session, msg);
        }
    }
}

/// A complete response counts its body among the bytes sent, and a refusal among the
/// refusals (feature `metrics`)
pub(crate) fn metered(response: &HttpResponse) {
    if crate::meter::Meter::ON {
        crate::meter::sent("http", response.body.len());
        if response.status >= 400 {
            crate::meter::refused(crate::meter::reason_of(
                response.status,
                crate::meter::insufficient_scope(response),
            ));
        }
    }
}

/// Session ids from the OS-seeded SipHash keys of a `RandomState`, over a counter
struct SessionIds {
    keys: [RandomState; 2],
    counter: u64,
}

impl SessionIds {
    fn new() -> Self {
        Self {
            keys: [RandomState::new(), RandomState::new()],
            counter: 0,
        }
    }
}

impl SessionIdSource for SessionIds {
    fn next_session_id(&mut self) -> String {
        self.counter += 1;
        let hi = self.keys[0].hash_one(self.counter);
        let lo = self.keys[1].hash_one(self.counter);
        session_id_from_bytes(((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes())
    }
}

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

/// From the request tasks (or threads) to the client actor
#[derive(Debug)]
pub enum FromNet<D> {
    /// A response's status and header fields
    Head {
        /// Whose
        stream: StreamId,
        /// The status
        status: u16,
        /// The header fields, in order
        headers: Vec<(String, String)>,
    },
    /// A piece of a response body
    Chunk {
        /// Whose
        stream: StreamId,
        /// The bytes
        data: D,
    },
    /// A response body ended
    End {
        /// Whose
        stream: StreamId,
    },
    /// A request failed before or while its response came
    Failed {
        /// Whose
        stream: StreamId,
        /// Why
        error: String,
    },
    /// The response to an authorization request
    Auth(AuthResponse),
    /// Where the user agent ended up (or why it could not)
    Redirect(Result<String, String>),
}

/// How a binding performs the HTTP requests a [`ClientTransport`] plans
pub trait Requests {
    /// One request in flight
    type Task;
    /// Starts `planned`; its response comes back as [`FromNet`] messages
    ///
    /// # Errors
    /// Why it could not start (reported to the transport as a failure).
    fn start(&mut self, planned: HttpRequest) -> Result<Self::Task, String>;
    /// Starts one step of the authorization flow; its outcome comes back as
    /// [`FromNet::Auth`] or [`FromNet::Redirect`]
    ///
    /// # Errors
    /// Why it could not start (reported to the flow as a user agent error).
    fn start_auth(&mut self, action: AuthAction) -> Result<(), String>;
    /// The transport gave up on the request: close its response
    fn abort(&mut self, task: Self::Task);
    /// The request reported its end or failure (it may still be winding down)
    fn finished(&mut self, task: Self::Task) {
        drop(task);
    }
}

/// The state of an HTTP client actor: the session, its transport, and the requests in
/// flight
pub struct ClientFront<R: Requests> {
    /// The client session
    pub session: ClientSession,
    /// The core's plan for carrying it over HTTP
    pub transport: ClientTransport,
    /// How requests are performed
    pub requests: R,
    tasks: IdMap<StreamId, R::Task>,
    clock: fn() -> Instant,
}

impl<R: Requests> std::fmt::Debug for ClientFront<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFront")
            .field("in_flight", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

/// The transport for the server at `url`, with OAuth when `auth` asks for it, and the user
/// agent to follow the authorization step with; a client that cannot be set up runs
/// without OAuth (and says so on stderr, naming `binding`)
#[cfg(feature = "auth")]
pub fn client_transport<U: Clone>(
    auth: Option<&OAuthOptions<U>>,
    url: &str,
    binding: &str,
) -> (ClientTransport, Option<U>) {
    let transport = ClientTransport::new();
    let Some(auth) = auth else {
        return (transport, None);
    };
    match auth.client(url) {
        Ok(client) => (transport.with_auth(client), Some(auth.user_agent.clone())),
        Err(e) => {
            eprintln!("{binding}: OAuth is off: {e}");
            (transport, None)
        }
    }
}

impl<R: Requests> ClientFront<R> {
    /// Carries `session` over `transport` with `requests`; `clock` is the binding's now
    pub fn new(
        session: ClientSession,
        transport: ClientTransport,
        requests: R,
        clock: fn() -> Instant,
    ) -> Self {
        Self {
            session,
            transport,
            requests,
            tasks: id_map(),
            clock,
        }
    }

    /// The earliest deadline of the session and the transport
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.session.poll_timeout(), self.transport.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// A deadline passed
    pub fn handle_timeout(&mut self) {
        let now = (self.clock)();
        if self.session.poll_timeout().is_some_and(|t| t <= now) {
            self.session.handle_timeout(now);
        }
        self.transport.handle_timeout(now);
    }

    /// [`pump`](Self::pump) for a connection's [`Peer`](crate::peer::Peer): the requests'
    /// own headers go to the transport first (before the pull that takes their requests),
    /// then every event to the peer (what every binding's HTTP client actor does)
    pub fn pump_peer<P: crate::peer::Plumbing>(
        &mut self,
        peer: &mut crate::peer::Peer<P>,
        app: &crate::peer::App<P>,
        handlers: &crate::peer::Handlers<P>,
    ) {
        for (id, headers) in peer.take_request_headers() {
            let _ = self.transport.request_headers(id, headers);
        }
        self.pump(|session, event| peer.on_client_event(session, event, app, handlers));
    }

    /// Moves what the session transmits into HTTP requests and delivers its events to
    /// `on_event` until both are quiet
    pub fn pump(&mut self, mut on_event: impl FnMut(&mut ClientSession, ClientEvent)) {
        loop {
            self.transport.pull(&mut self.session);
            self.perform_aborts();
            while let Some(request) = self.transport.poll_request() {
                let stream = request.stream;
                match self.requests.start(request) {
                    Ok(task) => {
                        self.tasks.insert(stream, task);
                    }
                    Err(error) => {
                        let now = (self.clock)();
                        self.transport
                            .handle_failed(now, stream, &error, &mut self.session);
                    }
                }
            }
            while let Some(action) = self.transport.poll_auth_action() {
                if let Err(why) = self.requests.start_auth(action) {
                    let now = (self.clock)();
                    self.transport
                        .handle_auth_error(now, &why, &mut self.session);
                }
            }
            let mut busy = false;
            while let Some(event) = self.session.poll_event() {
                busy = true;
                on_event(&mut self.session, event);
            }
            if !busy {
                return;
            }
        }
    }

    /// Closes the responses the transport gave up on
    fn perform_aborts(&mut self) {
        while let Some(stream) = self.transport.poll_abort() {
            if let Some(task) = self.tasks.remove(&stream) {
                self.requests.abort(task);
            }
        }
    }

    /// Reports what came back; messages of requests no longer in flight (aborted
    /// meanwhile) are dropped
    pub fn on_net<D: AsRef<[u8]>>(&mut self, msg: FromNet<D>) {
        let now = (self.clock)();
        let session = &mut self.session;
        match msg {
            FromNet::Head {
                stream,
                status,
                headers,
            } if self.tasks.contains_key(&stream) => {
                self.transport
                    .handle_head(now, stream, status, &headers, session);
            }
            FromNet::Chunk { stream, data } if self.tasks.contains_key(&stream) => {
                self.transport
                    .handle_body(now, stream, data.as_ref(), session);
            }
            FromNet::End { stream } => {
                if let Some(task) = self.tasks.remove(&stream) {
                    self.requests.finished(task);
                    self.transport.handle_end(now, stream, session);
                }
            }
            FromNet::Failed { stream, error } => {
                if let Some(task) = self.tasks.remove(&stream) {
                    self.requests.finished(task);
                    self.transport.handle_failed(now, stream, &error, session);
                }
            }
            FromNet::Auth(response) => {
                self.transport.handle_auth_response(now, response, session);
            }
            FromNet::Redirect(Ok(url)) => self.transport.handle_auth_redirect(now, &url, session),
            FromNet::Redirect(Err(e)) => self.transport.handle_auth_error(now, &e, session),
            // From a request that was aborted meanwhile
            _ => {}
        }
    }

    /// Starts ending the session: the DELETE to send (2025 wire) before
    /// [`closed`](Self::closed), if any
    pub fn close(&mut self) -> Option<HttpRequest> {
        let delete = self.transport.close();
        self.perform_aborts();
        delete
    }

    /// Ends the session (after [`close`](Self::close) and its DELETE)
    pub fn closed(&mut self) {
        let now = (self.clock)();
        self.session.close(now);
    }

    /// The actor ends: every request still in flight is aborted
    pub fn abort_all(&mut self) {
        for (_, task) in self.tasks.drain() {
            self.requests.abort(task);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The `http` crate's types
// ---------------------------------------------------------------------------------------

/// How many connections may wait in a server's listen backlog (the kernel caps it at its
/// `somaxconn`)
///
/// std's and mio's `TcpListener::bind` listen with 128: a burst of connections (issue 34's
/// clients that leave open 900 at once) that outruns the accept loop by more than that has
/// its SYNs dropped, and each of those clients, the innocent ones too, connects a second
/// later (TCP's first retransmission).
pub const LISTEN_BACKLOG: i32 = 4096;

/// A server's listener on `addr`: `SO_REUSEADDR` (as std's, on Unix), a backlog of
/// [`LISTEN_BACKLOG`], blocking (make it non-blocking for a reactor)
///
/// # Errors
/// What creating, binding or listening on the socket returned.
pub fn listener(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let domain = socket2::Domain::for_address(addr);
    let socket = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// Whether an accept error means the process or the system is out of file descriptors or
/// memory (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`): the accept loop then pauses for
/// [`HttpConfig::accept_backoff`](mcp_sansio::http::HttpConfig::accept_backoff) instead of
/// retrying at full CPU; any other error is one connection's, and the loop goes on at once
pub fn out_of_resources(error: &std::io::Error) -> bool {
    // Linux, the BSDs and macOS agree on EMFILE (24), ENFILE (23) and ENOMEM (12); ENOBUFS
    // is 105 on Linux and 55 elsewhere.
    const ENOBUFS: i32 = if cfg!(target_os = "linux") { 105 } else { 55 };
    matches!(error.raw_os_error(), Some(24 | 23 | 12)) || error.raw_os_error() == Some(ENOBUFS)
}

/// A request's header fields as a server passes them to the rules: every field, in order,
/// its value as it came (the rules refuse a value that is not UTF-8, and two `Host` fields)
///
/// When every value is text (any request the rules take) the fields are kept as one
/// [`HeaderFields`] buffer, which the request's handlers then read without a copy
/// ([`Caller::headers`](mcp_sansio::session::Caller::headers)); else as the bytes that came.
/// Build one with `collect()` from `(name, value)` pairs, `From` a list of them, or
/// [`request_fields`] from a header map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields(FieldsRepr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum FieldsRepr {
    Text(HeaderFields),
    Bytes(Vec<(String, Vec<u8>)>),
}

impl Fields {
    /// The fields as text, when every value is
    pub fn text(&self) -> Option<&HeaderFields> {
        match &self.0 {
            FieldsRepr::Text(text) => Some(text),
            FieldsRepr::Bytes(_) => None,
        }
    }

    /// Every field `(name, value)`, in order
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        let (text, bytes) = match &self.0 {
            FieldsRepr::Text(text) => (Some(text.iter()), None),
            FieldsRepr::Bytes(bytes) => (None, Some(bytes.iter())),
        };
        let text = text.into_iter().flatten().map(|(n, v)| (n, v.as_bytes()));
        let bytes = bytes
            .into_iter()
            .flatten()
            .map(|(n, v)| (n.as_str(), v.as_slice()));
        text.chain(bytes)
    }

    /// How many fields there are
    pub fn len(&self) -> usize {
        match &self.0 {
            FieldsRepr::Text(text) => text.len(),
            FieldsRepr::Bytes(bytes) => bytes.len(),
        }
    }

    /// Whether there are none
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fields `(name, value)` of an HTTP library's head, which `pairs` lists (once, or
    /// twice when a value is not text): one text buffer when every value is text, else the
    /// bytes as they came
    pub fn from_pairs<'a, I>(pairs: impl Fn() -> I) -> Self
    where
        I: Iterator<Item = (&'a str, &'a [u8])>,
    {
        match HeaderFields::from_utf8(pairs()) {
            Some(text) => Self(FieldsRepr::Text(text)),
            None => pairs().map(|(n, v)| (n, v.to_vec())).collect(),
        }
    }
}

impl Default for Fields {
    fn default() -> Self {
        Self(FieldsRepr::Text(HeaderFields::new()))
    }
}

impl From<Vec<(String, Vec<u8>)>> for Fields {
    fn from(fields: Vec<(String, Vec<u8>)>) -> Self {
        match HeaderFields::from_utf8(fields.iter().map(|(n, v)| (n, v))) {
            Some(text) => Self(FieldsRepr::Text(text)),
            None => Self(FieldsRepr::Bytes(fields)),
        }
    }
}

impl From<HeaderFields> for Fields {
    fn from(fields: HeaderFields) -> Self {
        Self(FieldsRepr::Text(fields))
    }
}

impl<N: Into<String>, V: Into<Vec<u8>>> FromIterator<(N, V)> for Fields {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(fields: I) -> Self {
        let fields: Vec<(String, Vec<u8>)> = fields
            .into_iter()
            .map(|(n, v)| (n.into(), v.into()))
            .collect();
        fields.into()
    }
}

impl Headers for Fields {
    fn values<'a>(&'a self, name: &str) -> Vec<&'a str> {
        match &self.0 {
            FieldsRepr::Text(text) => Headers::values(text, name),
            FieldsRepr::Bytes(bytes) => bytes.values(name),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        match &self.0 {
            FieldsRepr::Text(text) => Headers::get(text, name),
            FieldsRepr::Bytes(bytes) => Headers::get(bytes, name),
        }
    }

    fn count(&self, name: &str) -> usize {
        match &self.0 {
            FieldsRepr::Text(text) => text.count(name),
            FieldsRepr::Bytes(bytes) => bytes.count(name),
        }
    }

    fn undecodable(&self) -> Option<&str> {
        match &self.0 {
            FieldsRepr::Text(_) => None,
            FieldsRepr::Bytes(bytes) => bytes.undecodable(),
        }
    }

    fn for_each_value(&self, name: &str, f: &mut dyn FnMut(&str)) {
        match &self.0 {
            FieldsRepr::Text(text) => text.for_each_value(name, f),
            FieldsRepr::Bytes(bytes) => bytes.for_each_value(name, f),
        }
    }
}

/// `source` with the request's header fields for its handlers, when every value is text
/// and the source has none yet (a clone of the one buffer, not a copy)
pub(crate) fn with_fields(source: Source, fields: &Fields) -> Source {
    match fields.text() {
        Some(text) if source.headers.is_none() => source.with_headers(text.clone()),
        _ => source,
    }
}

/// A request's header fields, all of them, as the server rules take them: one text buffer
/// when every value is text (three allocations, whatever the count of fields)
pub fn request_fields(headers: &::http::HeaderMap) -> Fields {
    Fields::from_pairs(|| headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())))
}

/// The header fields whose values are text, as the core takes them (a response's, on the
/// client side)
pub fn header_list(headers: &::http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect()
}

/// A request to `uri` with `method`, `headers` (moved into it, not copied) and `body`
///
/// # Errors
/// A method, URI or header field the `http` crate does not accept.
pub fn request<U, B>(
    method: &str,
    uri: U,
    headers: Vec<(String, String)>,
    body: B,
) -> Result<::http::Request<B>, ::http::Error>
where
    ::http::Uri: TryFrom<U>,
    <::http::Uri as TryFrom<U>>::Error: Into<::http::Error>,
{
    let mut builder = ::http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder.body(body)
}

/// A response head with `status` and `headers` (the core's, or a gate's)
///
/// Each value's text becomes its header value without a copy; names the core writes are
/// the `http` crate's constants.
///
/// # Errors
/// A status or header field the `http` crate does not accept.
pub fn response<B>(
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: B,
) -> Result<::http::Response<B>, ::http::Error> {
    let mut response = ::http::Response::new(body);
    *response.status_mut() = ::http::StatusCode::from_u16(status)?;
    let fields = response.headers_mut();
    fields.reserve(headers.len());
    for (name, value) in headers {
        fields.append(header_name(name)?, ::http::HeaderValue::try_from(value)?);
    }
    Ok(response)
}

/// A header name the core writes: the `http` crate's constant for the common ones
fn header_name(name: &'static str) -> Result<::http::HeaderName, ::http::Error> {
    use ::http::header;
    Ok(match name {
        "Content-Type" => header::CONTENT_TYPE,
        "Cache-Control" => header::CACHE_CONTROL,
        "Retry-After" => header::RETRY_AFTER,
        "WWW-Authenticate" => header::WWW_AUTHENTICATE,
        "Allow" => header::ALLOW,
        "Mcp-Session-Id" => ::http::HeaderName::from_static("mcp-session-id"),
        _ => ::http::HeaderName::try_from(name)?,
    })
}

/// What every session's [`Peer`](crate::peer::Peer) of an HTTP server runs the application
/// with
pub struct PeerApp<R: crate::peer::Plumbing> {
    /// The server's dispatcher (notifications of the client are dropped, input requests
    /// refused)
    pub app: crate::peer::App<R>,
    /// The actor's handler channel (each session's peer tags it with its key)
    pub handlers: crate::peer::Handlers<R>,
    /// The count of the one session the 2026 requests share, in
    /// `mcp.server.sessions.active`: held here, not by its peer, since the endpoint's fast
    /// path serves that session too (whichever serves a 2026 request first opens it)
    pub stateless: Arc<std::sync::OnceLock<crate::meter::Open>>,
}

impl<R: crate::peer::Plumbing> SessionPeer for crate::peer::Peer<R> {
    type App = PeerApp<R>;

    fn fresh() -> Self {
        Self::new(None)
    }

    fn on_event(
        &mut self,
        app: &PeerApp<R>,
        session: &mut ServerSession,
        key: SessionKey,
        event: ServerEvent,
    ) {
        self.http_session(key);
        if key == SessionKey::STATELESS {
            self.uncount();
            app.stateless
                .get_or_init(|| crate::meter::Open::session("server"));
        }
        let handlers = app.handlers.for_session(key);
        self.on_server_event(session, event, &app.app, &handlers);
    }

    fn abort_all(&mut self) {
        Self::abort_all(self);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::mpsc;

    use mcp_sansio::Implementation;
    use serde_json::Value;

    use super::*;

    #[test]
    fn a_response_carries_its_status_and_every_field_in_order() {
        let headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Mcp-Session-Id", "s1".to_owned()),
            ("X-Custom", "a".to_owned()),
            ("WWW-Authenticate", "Bearer".to_owned()),
            ("X-Custom", "b".to_owned()),
            ("Retry-After", "1".to_owned()),
        ];
        let r = response(503, headers.clone(), ()).unwrap();
        assert_eq!(r.status(), 503);
        let got: Vec<(String, String)> = r
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        // `http` keeps the values of one name together, in the order they were given.
        let mut want: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
            .collect();
        want.swap(3, 4);
        assert_eq!(got, want);
        assert!(response(200, vec![("Bad Name", String::new())], ()).is_err());
        assert!(response(200, vec![("X-A", "a\nb".to_owned())], ()).is_err());
        assert!(response(1000, Vec::new(), ()).is_err());
    }

    #[test]
    fn fields_become_text_only_when_every_value_is_text_and_come_back_as_they_came() {
        let pairs = |values: &[&[u8]]| -> Vec<(String, Vec<u8>)> {
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("X-{i}"), v.to_vec()))
                .collect()
        };
        let back = |fields: &Fields| -> Vec<(String, Vec<u8>)> {
            fields
                .iter()
                .map(|(n, v)| (n.to_owned(), v.to_vec()))
                .collect()
        };
        let text = pairs(&[b"a", b"", "\u{e9}t\u{e9}".as_bytes()]);
        let fields = Fields::from(text.clone());
        assert_eq!(back(&fields), text);
        assert_eq!(fields.len(), 3);
        let source = with_fields(Source::unknown(), &fields);
        let headers = source.headers.clone().unwrap();
        assert_eq!(headers.iter().nth(2), Some(("X-2", "\u{e9}t\u{e9}")));
        assert_eq!(Some(&headers), fields.text());
        assert_eq!(Headers::undecodable(&fields), None);
        // A source that has fields keeps them.
        let own = Source::unknown().with_headers([("Own", "1")]);
        assert_eq!(with_fields(own.clone(), &fields), own);
        // A value that is not UTF-8, first, in the middle or last: the fields as they came.
        for at in 0..3 {
            let mut values: Vec<&[u8]> = vec![b"a", b"b", b"c"];
            values[at] = b"\xff\xfe";
            let raw = pairs(&values);
            let fields: Fields = raw.clone().into_iter().collect();
            assert!(fields.text().is_none());
            assert!(with_fields(Source::unknown(), &fields).headers.is_none());
            assert_eq!(back(&fields), raw);
            assert_eq!(Headers::undecodable(&fields), Some(raw[at].0.as_str()));
            assert_eq!(Headers::get(&fields, "x-1"), (at != 1).then_some("b"));
            assert_eq!(Headers::count(&fields, "X-1"), 1);
        }
    }

    #[test]
    fn a_header_map_becomes_one_text_buffer_or_the_bytes_as_they_came() {
        let mut map = ::http::HeaderMap::new();
        map.append("host", "a".parse().unwrap());
        map.append("x-v", "1".parse().unwrap());
        map.append("x-v", "2".parse().unwrap());
        let fields = request_fields(&map);
        let text = fields.text().expect("every value is text");
        assert_eq!(
            text.iter().collect::<Vec<_>>(),
            [("host", "a"), ("x-v", "1"), ("x-v", "2")]
        );
        assert_eq!(Headers::values(&fields, "X-V"), ["1", "2"]);
        map.append("x-bin", ::http::HeaderValue::from_bytes(b"\xe9").unwrap());
        let fields = request_fields(&map);
        assert!(fields.text().is_none());
        assert_eq!(fields.len(), 4);
        assert_eq!(Headers::undecodable(&fields), Some("x-bin"));
        assert_eq!(Headers::values(&fields, "x-v"), ["1", "2"]);
    }

    /// std's channels
    struct Std;

    impl Channels for Std {
        type Body = Vec<u8>;
        type Reply = mpsc::Sender<Answer<Self>>;
        type Frames = mpsc::Sender<Piece>;
        type FramesRx = mpsc::Receiver<Piece>;

        fn reply(reply: Self::Reply, answer: Answer<Self>) -> bool {
            reply.send(answer).is_ok()
        }

        fn frames() -> (Self::Frames, Self::FramesRx) {
            mpsc::channel()
        }

        fn send(frames: &Self::Frames, piece: Piece) {
            let _ = frames.send(piece);
        }
    }

    thread_local! {
        static ABORTED: Cell<usize> = const { Cell::new(0) };
    }

    /// Counts what it sees; the app is the number of events
    struct Counter;

    impl SessionPeer for Counter {
        type App = Cell<usize>;

        fn fresh() -> Self {
            Self
        }

        fn on_event(
            &mut self,
            app: &Cell<usize>,
            _: &mut ServerSession,
            _: SessionKey,
            _: ServerEvent,
        ) {
            app.set(app.get() + 1);
        }

        fn abort_all(&mut self) {
            ABORTED.with(|a| a.set(a.get() + 1));
        }
    }

    fn front() -> ServerFront<Std, Counter> {
        let config = Arc::new(ServerConfig::new(Implementation::new("t", "1")));
        #[allow(clippy::disallowed_methods)] // any instant will do
        let now = Instant::now();
        ServerFront::new(HttpConfig::default(), config, &[], Cell::new(0), (now, 0))
    }

    fn request(
        method: &str,
        sid: Option<&str>,
        body: &str,
    ) -> (ToActor<Std>, mpsc::Receiver<Answer<Std>>) {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("Host".to_owned(), "127.0.0.1:3000".to_owned()),
        ];
        if let Some(sid) = sid {
            headers.push(("Mcp-Session-Id".to_owned(), sid.to_owned()));
            headers.push(("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned()));
        }
        let (reply, answer) = mpsc::channel();
        let msg = ToActor::Request {
            source: Source::unknown(),
            method: method.to_owned(),
            headers: headers
                .into_iter()
                .map(|(n, v)| (n, v.into_bytes()))
                .collect(),
            body: body.as_bytes().to_vec(),
            reply,
        };
        (msg, answer)
    }

    #[test]
    fn answers_streams_and_ends_exchanges_and_peers() {
        let mut front = front();
        #[allow(clippy::disallowed_methods)]
        let now = Instant::now();
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        let (msg, answer) = request("POST", None, init);
        front.on_conn(now, msg);
        front.pump(now);
        let Ok(Answer::Open { frames, .. }) = answer.try_recv() else {
            panic!("initialize opens an exchange");
        };
        // The head, the body, and the end (the channel closes)
        let pieces: Vec<Piece> = frames.try_iter().collect();
        assert!(matches!(
            frames.try_recv(),
            Err(mpsc::TryRecvError::Disconnected)
        ));
        let Some(Piece::Head(head)) = pieces.first() else {
            panic!("the head first: {pieces:?}");
        };
        assert_eq!(head.status, 200);
        let sid = head
            .header("Mcp-Session-Id")
            .expect("a session id")
            .to_owned();
        assert!(pieces[1..].iter().all(|p| matches!(p, Piece::Body(_))) && pieces.len() > 1);

        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (msg, answer) = request("POST", Some(&sid), note);
        front.on_conn(now, msg);
        front.pump(now);
        assert!(matches!(answer.try_recv(), Ok(Answer::Complete(r)) if r.status == 202));
        assert!(front.app.get() > 0, "the session's events reached its peer");

        let (reply, answer) = mpsc::channel();
        front.on_conn(now, ToActor::Oversize { reply });
        assert!(matches!(answer.try_recv(), Ok(Answer::Complete(r)) if r.status == 413));

        // DELETE ends the session: its peer is aborted
        let before = ABORTED.with(Cell::get);
        let (msg, answer) = request("DELETE", Some(&sid), "");
        front.on_conn(now, msg);
        front.pump(now);
        assert!(matches!(answer.try_recv(), Ok(Answer::Complete(r)) if r.status == 200));
        assert_eq!(ABORTED.with(Cell::get), before + 1);
        assert!(front.peers.is_empty());
    }

    #[test]
    fn session_ids_are_distinct_tokens() {
        let mut ids = SessionIds::new();
        let a = ids.next_session_id();
        let b = ids.next_session_id();
        assert_ne!(a, b);
        assert!(a.bytes().all(|c| (0x21..=0x7E).contains(&c)) && a.len() >= 16);
    }

    /// Records what the client front asks of it
    #[derive(Default)]
    struct Fake {
        started: Vec<HttpRequest>,
        aborted: Vec<u32>,
        finished: Vec<u32>,
        next: u32,
    }

    impl Requests for Fake {
        type Task = u32;

        fn start(&mut self, planned: HttpRequest) -> Result<u32, String> {
            self.started.push(planned);
            self.next += 1;
            Ok(self.next)
        }

        fn start_auth(&mut self, _: AuthAction) -> Result<(), String> {
            Ok(())
        }

        fn abort(&mut self, task: u32) {
            self.aborted.push(task);
        }

        fn finished(&mut self, task: u32) {
            self.finished.push(task);
        }
    }

    #[test]
    fn the_client_front_starts_reports_and_drops_stale_messages() {
        use mcp_sansio::{ClientConfig, EraMode, ProtocolVersion};
        #[allow(clippy::disallowed_methods)] // any instant will do
        fn now() -> Instant {
            Instant::now()
        }
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
        let session = ClientSession::new(Arc::new(config), now());
        let mut front = ClientFront::new(session, ClientTransport::new(), Fake::default(), now);
        front.pump(|_, _| {});
        assert_eq!(front.requests.started.len(), 1, "initialize goes out first");
        let init = front.requests.started[0].clone();
        let body: Value = serde_json::from_slice(&init.body).unwrap();
        assert_eq!(body["method"], "initialize");
        let result = serde_json::json!({"jsonrpc": "2.0", "id": body["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"}}});
        let headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Mcp-Session-Id".to_owned(), "sid-1".to_owned()),
        ];
        let stream = init.stream;
        front.on_net(FromNet::<Vec<u8>>::Head {
            stream,
            status: 200,
            headers,
        });
        front.on_net(FromNet::Chunk {
            stream,
            data: result.to_string().into_bytes(),
        });
        front.on_net(FromNet::<Vec<u8>>::End { stream });
        assert_eq!(front.requests.finished, [1]);
        let mut events = 0;
        front.pump(|_, _| events += 1);
        assert!(events > 0, "the session reports its handshake");
        let started = front.requests.started.len();
        assert!(started > 1, "notifications/initialized goes out");
        // Late messages for a request no longer in flight change nothing
        front.on_net(FromNet::Chunk {
            stream,
            data: b"garbage".to_vec(),
        });
        front.on_net(FromNet::<Vec<u8>>::End { stream });
        front.on_net(FromNet::<Vec<u8>>::Failed {
            stream,
            error: "late".into(),
        });
        assert_eq!(front.requests.finished, [1]);
        // The end: what is still in flight is aborted
        front.abort_all();
        assert_eq!(front.requests.aborted.len(), started - 1);
    }
}
