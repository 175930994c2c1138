//! The knobs of the HTTP rules

use std::time::Duration;

use super::origin::HostPolicy;
use super::session_id::{InvalidNodeTag, NodeTag};

/// Limits and policies of an [`HttpServer`](super::HttpServer)
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The protection of the endpoint, when it is an OAuth protected resource: its `403
    /// insufficient_scope` challenges (for entries that
    /// [require scopes](crate::server::Catalog::require_scopes)) name its metadata and the
    /// scopes it requires of every request. A binding's protected server sets it.
    pub resource_server: Option<std::sync::Arc<super::protected::ResourceServer>>,
    /// DNS-rebinding protection
    pub hosts: HostPolicy,
    /// The largest POST body accepted; larger bodies get 413 (a binding should stop reading
    /// at this size and call [`HttpServer::reject_oversize`](super::HttpServer::reject_oversize))
    pub max_body_size: usize,
    /// 2025 wire: the most sessions at once; an `initialize` beyond it first closes the
    /// least recently used idle session (no request in progress, no response open), and
    /// gets 503 with `Retry-After` only when every session is busy
    pub max_sessions: usize,
    /// 2025 wire: a session with no open stream and no request for this long is closed
    pub idle_timeout: Duration,
    /// 2025 wire: events kept per stream for replay after `Last-Event-ID`; the oldest are
    /// dropped beyond it
    pub replay_events: usize,
    /// 2025 wire: finished POST streams kept per session for a late resumption
    pub finished_streams: usize,
    /// 2025 wire: the `retry:` delay sent with every priming event, in milliseconds
    pub retry_ms: u64,
    /// An open response that has sent nothing for this long gets an SSE comment
    /// (`: keepalive`), which clients ignore; a response still undecided between JSON and
    /// SSE opens its event stream for it, if the client accepts one. Proxies then keep the
    /// connection, and a binding that learns of a closed connection only when it writes
    /// learns it within this time (and cancels the request). `None`: never
    pub keepalive: Option<Duration>,
    /// A connection's request head (request line and header fields) must be complete this
    /// long after the connection opened, or after the first byte of a later request on a
    /// kept-alive connection; else the binding answers 408 and closes it (a client sending
    /// a byte a second holds no connection for long). See [`ReadDeadline`](super::ReadDeadline)
    pub header_read_timeout: Duration,
    /// A request's body must be complete this long after its head; else 408 and the
    /// connection closes (a chunked body that never ends)
    pub body_read_timeout: Duration,
    /// A kept-alive connection with no request in progress is closed after this long
    pub keep_alive_timeout: Duration,
    /// A response (a whole one, or one write of an open one) the client has not taken
    /// within this long is given up: the binding closes the connection (an open response
    /// then calls [`HttpServer::handle_closed`](super::HttpServer::handle_closed), which on
    /// the 2026 wire cancels the request), so a client that stops reading holds no thread,
    /// and no response bytes, past it. mcp-sansio-blocking, whose writes hold a thread,
    /// applies it (to within a second); the async bindings' writes hold no thread, and bound
    /// what a client leaves unread by [`max_unwritten`](Self::max_unwritten) instead
    pub write_timeout: Duration,
    /// The most client connections a binding's server holds open at once; a connection
    /// beyond it waits in the listener's backlog until one closes (the deadlines above free
    /// the ones hostile clients hold)
    pub max_connections: usize,
    /// How long a binding's accept loop pauses when accepting fails for lack of file
    /// descriptors (`EMFILE`, `ENFILE`) or memory, instead of retrying at full CPU
    pub accept_backoff: Duration,
    /// Both wires: the most requests in progress on the whole endpoint; a request past it
    /// gets 503 with `Retry-After`. A request is in progress from its POST until its answer
    /// is queued, the client cancels it (2026: closes the response; 2025:
    /// `notifications/cancelled`) or its session ends
    pub max_in_flight: usize,
    /// Both wires: the most requests in progress from one client address (an IPv4
    /// address, an IPv6 /64), so one client cannot take all of [`max_in_flight`](Self::max_in_flight);
    /// a request past it gets 429 with `Retry-After`. Clients behind one proxy or NAT share it
    pub max_in_flight_per_peer: usize,
    /// Both wires: the most requests in progress from one connection (HTTP/1.1 carries
    /// one at a time; this bounds pipelining and multiplexing front ends); past it, 429
    pub max_in_flight_per_connection: usize,
    /// The `Retry-After` of a 429 or 503 refusal, and of a 2026 answer "server busy"
    /// ([`SERVER_BUSY`](crate::jsonrpc::code::SERVER_BUSY), 503) (whole seconds, at least 1)
    pub retry_after: Duration,
    /// Both wires, on a protected server: the most requests in progress with the tokens of
    /// one [`Principal`](super::Principal) (subject and client id), wherever they come from
    /// (clients behind one proxy share its address, not this); past it, 429
    pub max_in_flight_per_principal: usize,
    /// The most bytes of one open response (an event stream) a binding holds for a client
    /// that does not read them: past it the binding drops the response (closes its
    /// connection) and calls [`HttpServer::handle_closed`](super::HttpServer::handle_closed),
    /// which on the 2026 wire cancels the request (a 2025 client resumes the stream with
    /// `Last-Event-ID`). One message larger than this still goes out behind what a reading
    /// client may not have taken yet ([`UNREAD_SLACK`]). See
    /// [`keeps_unwritten`](Self::keeps_unwritten)
    pub max_unwritten: usize,
    /// 2025 wire: this process's name among several behind one load balancer; every session
    /// id it issues is then `<node>.<random hex>`, so a proxy routes each session's requests
    /// to the process that holds it (see [`NodeTag`]). `None` (the default): plain random
    /// ids. Set it with [`with_node`](Self::with_node), which checks the name. The 2026 wire
    /// has no sessions and needs no routing
    pub node: Option<NodeTag>,
}

/// The bytes of an open response a client that reads may not have taken yet, whatever
/// follows them (see [`HttpConfig::keeps_unwritten`])
pub const UNREAD_SLACK: usize = 16 * 1024;

impl HttpConfig {
    /// This config with [`node`](Self::node) set to `name`, or why `name` cannot be one:
    /// 1 to 32 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`
    ///
    /// ```
    /// use mcp_sansio::http::HttpConfig;
    ///
    /// let config = HttpConfig::default().with_node("a").unwrap();
    /// assert_eq!(config.node.as_ref().map(|n| n.as_str()), Some("a"));
    /// assert!(HttpConfig::default().with_node("a.b").is_err());
    /// ```
    pub fn with_node(mut self, name: &str) -> Result<Self, InvalidNodeTag> {
        self.node = Some(NodeTag::new(name)?);
        Ok(self)
    }

    /// Whether a binding holding `unwritten` bytes of an open response for a client that
    /// has not read them yet may queue `piece` more bytes behind them, or must drop the
    /// response ([`max_unwritten`](Self::max_unwritten))
    ///
    /// A piece fits behind what a client that reads may simply not have taken yet: up to
    /// [`UNREAD_SLACK`] bytes (the head and priming event of an event stream, a few progress
    /// notifications). A client is judged by what it leaves unread beyond that, so a
    /// handler that answers big at once is not taken for a client that stopped reading;
    /// one response holds at most `max_unwritten`, or the slack and one message.
    ///
    /// ```
    /// use mcp_sansio::http::HttpConfig;
    ///
    /// let config = HttpConfig::default(); // max_unwritten: 1 MiB
    /// assert!(config.keeps_unwritten(0, 20_000_000)); // behind nothing
    /// assert!(config.keeps_unwritten(40, 20_000_000)); // behind a priming event
    /// assert!(config.keeps_unwritten(500_000, 500_000));
    /// assert!(!config.keeps_unwritten(500_000, 600_000)); // a client that stopped reading
    /// ```
    pub fn keeps_unwritten(&self, unwritten: usize, piece: usize) -> bool {
        unwritten <= UNREAD_SLACK.min(self.max_unwritten)
            || unwritten.saturating_add(piece) <= self.max_unwritten
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            resource_server: None,
            hosts: HostPolicy::default(),
            max_body_size: 4 * 1024 * 1024,
            max_sessions: 1024,
            idle_timeout: Duration::from_secs(30 * 60),
            replay_events: 256,
            finished_streams: 16,
            retry_ms: 1000,
            keepalive: Some(Duration::from_secs(15)),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            keep_alive_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
            max_connections: 1024,
            accept_backoff: Duration::from_millis(100),
            max_in_flight: 4096,
            max_in_flight_per_peer: 1024,
            max_in_flight_per_connection: 128,
            retry_after: Duration::from_secs(1),
            max_in_flight_per_principal: 1024,
            max_unwritten: 1024 * 1024,
            node: None,
        }
    }
}
