//! Configuration of client and server sessions

use std::time::Duration;

use serde_json::{Map, Value};

use crate::schema::Implementation;
use crate::version::ProtocolVersion;

/// Resource limits; every internal buffer of a session is bounded by one of these
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted message in bytes (64 MiB by default: a file a tool reads whole);
    /// a longer one is dropped as it arrives, never buffered whole. An answer to one of our
    /// requests fails that request with [`CallError::TooLarge`](super::CallError::TooLarge);
    /// a request is answered with an error; a message that cannot be told closes a client
    /// session waiting for answers. Every transport of the session (stdio lines, HTTP
    /// bodies and SSE events) uses this one limit.
    pub max_message_size: usize,
    /// [`Session::wants_read`](super::Session::wants_read) turns false when this many events
    /// wait in `poll_event`
    pub max_queued_events: usize,
    /// Commands fail with [`SendError::Blocked`](super::SendError::Blocked) while more than
    /// this many bytes wait in `poll_transmit`
    pub max_queued_bytes: usize,
    /// `send_request` fails with `SendError::TooManyRequests` at this many requests in flight
    pub max_in_flight_outbound: usize,
    /// `wants_read` turns false at this many unanswered requests from the peer; a peer that
    /// sends more anyway gets an error reply
    pub max_in_flight_inbound: usize,
    /// Largest accepted JSON-RPC batch (2025-03-26 sessions only)
    pub max_batch_len: usize,
    /// Most tasks a server session keeps (ended ones are evicted first when it is full)
    pub max_tasks: usize,
    /// Most open listen streams of a server session, and most resource URIs one stream (or
    /// a legacy session) subscribes to
    pub max_subscriptions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_size: 64 * 1024 * 1024,
            max_queued_events: 1024,
            max_queued_bytes: 16 * 1024 * 1024,
            max_in_flight_outbound: 1024,
            max_in_flight_inbound: 256,
            max_batch_len: 128,
            max_tasks: 1024,
            max_subscriptions: 256,
        }
    }
}

/// How a client chooses the protocol era
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraMode {
    /// Probe `server/discover`; fall back to `initialize` when the server does not answer it
    /// with a modern version (an error, an unknown result, or no answer within
    /// [`ClientConfig::discover_timeout`])
    Auto,
    /// Modern era only: `server/discover`, then per-request `_meta`; fail if the server does
    /// not speak it
    Modern,
    /// Legacy era only: `initialize` offering this version
    Legacy(ProtocolVersion),
}

/// Timeout settings of outbound requests; each request may override them
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// How long a request may wait for its answer; `None` waits forever
    pub request: Option<Duration>,
    /// Whether progress from the peer restarts the request's timeout
    pub reset_on_progress: bool,
    /// Hard cap on a request's total time, progress or not; `None` for no cap
    pub max_total: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            request: Some(Duration::from_secs(60)),
            reset_on_progress: false,
            max_total: None,
        }
    }
}

/// Configuration of a client session
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Sent as `clientInfo`
    pub info: Implementation,
    /// The client's capabilities, a JSON object such as `{"roots": {}, "sampling": {}}`
    pub capabilities: Value,
    /// How to choose the era and version
    pub era: EraMode,
    /// How long `EraMode::Auto` waits for a `server/discover` answer before falling back
    pub discover_timeout: Duration,
    /// Default timeouts of outbound requests
    pub timeouts: Timeouts,
    /// Buffer and queue limits
    pub limits: Limits,
    /// Methods outside the spec that this client handles; others get -32601
    pub extra_methods: Vec<String>,
    /// How many `input_required` rounds one request may take before it fails with
    /// [`CallError::TooManyInputRounds`](super::CallError::TooManyInputRounds)
    pub max_input_rounds: u8,
    /// Makes the ids of tasks this client runs (2025-11-25 task-augmented sampling and
    /// elicitation) unique; see [`ServerConfig::task_id_seed`]. Bindings set it at random.
    pub task_id_seed: u64,
    /// Makes those ids unguessable; see [`ServerConfig::task_id_key`]. Bindings set it at
    /// random.
    pub task_id_key: [u8; 32],
}

impl ClientConfig {
    /// A client with no capabilities, in [`EraMode::Auto`]
    pub fn new(info: Implementation) -> Self {
        Self {
            info,
            capabilities: Value::Object(Map::new()),
            era: EraMode::Auto,
            discover_timeout: Duration::from_secs(3),
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            extra_methods: Vec::new(),
            max_input_rounds: 10,
            task_id_seed: 0,
            task_id_key: [0; 32],
        }
    }
}

/// Configuration of a server session
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Sent as `serverInfo`
    pub info: Implementation,
    /// The server's capabilities, a JSON object such as `{"tools": {}}`
    pub capabilities: Value,
    /// Guidance for the model, sent in `initialize` and `server/discover` results
    pub instructions: Option<String>,
    /// Versions this server accepts (both eras); by default every version
    pub versions: Vec<ProtocolVersion>,
    /// Default timeouts of outbound requests (legacy-era requests to the client)
    pub timeouts: Timeouts,
    /// Buffer and queue limits
    pub limits: Limits,
    /// Methods outside the spec that this server handles; others get -32601
    pub extra_methods: Vec<String>,
    /// The key that seals multi-round-trip `requestState` (HMAC-SHA256); modern input asks
    /// need one. Use 32 random bytes per deployment.
    ///
    /// The Rust bindings' `ServerBuilder::build` (and mcp-python) draw a random key when this
    /// is `None`, so one server process needs no setting. Several server processes behind one
    /// endpoint (replicas behind a load balancer, a restart while clients retry) must share
    /// one key, set here: a client's retry may reach another process, which can only open a
    /// `requestState` sealed with its own key. The core itself never makes one up (it has no
    /// randomness): driving a [`ServerSession`](crate::ServerSession) by hand, set it.
    pub state_key: Option<[u8; 32]>,
    /// How long a sealed `requestState` stays valid
    pub state_ttl: Duration,
    /// Makes task ids unique across processes (which share one id space through a task
    /// store): it is part of what each id is derived from, with the session's scope and a
    /// counter. Bindings set it from a random source.
    pub task_id_seed: u64,
    /// Makes task ids unguessable, as the spec requires: each id is 128 bits of
    /// HMAC-SHA256 under this key (of the seed, the session's scope and a counter), so
    /// nobody without the key can predict another task's id from its own. The Rust
    /// bindings' `ServerBuilder::build` (and mcp-python) draw 32 random bytes when it is
    /// left at zero; the core has no randomness: driving a session by hand, set it.
    pub task_id_key: [u8; 32],
    /// Share tasks with other server processes through a store (see [`crate::store`]);
    /// `None` keeps them in this session's table only
    pub shared_tasks: Option<crate::store::SharedTasks>,
}

impl ServerConfig {
    /// A server with no capabilities that accepts every version
    pub fn new(info: Implementation) -> Self {
        Self {
            info,
            capabilities: Value::Object(Map::new()),
            instructions: None,
            versions: ProtocolVersion::ALL.to_vec(),
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            extra_methods: Vec::new(),
            state_key: None,
            state_ttl: Duration::from_secs(600),
            task_id_seed: 0,
            task_id_key: [0; 32],
            shared_tasks: None,
        }
    }
}

/// Options of one outbound request
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Overrides [`Timeouts::request`]: `Some(None)` waits forever
    pub timeout: Option<Option<Duration>>,
    /// Overrides [`Timeouts::reset_on_progress`]
    pub reset_on_progress: Option<bool>,
    /// Overrides [`Timeouts::max_total`]
    pub max_total: Option<Option<Duration>>,
    /// Ask the peer for progress: the core mints a `progressToken` and emits
    /// `Progress` event
    pub progress: bool,
    /// Ask for the request to run as a task (2025-11-25 `params.task`, with this lifetime);
    /// see [`as_task`](Self::as_task)
    pub task: Option<Option<Duration>>,
}

impl RequestOptions {
    /// Wait at most `timeout` for the answer
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Wait for the answer without a timeout
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Ask for progress notifications
    pub fn with_progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Restart the timeout whenever progress arrives (implies [`with_progress`](Self::with_progress))
    pub fn reset_on_progress(mut self) -> Self {
        self.progress = true;
        self.reset_on_progress = Some(true);
        self
    }

    /// Run the request as a task if the server can (2025-11-25 `tools/call` with
    /// `params.task`; `ttl` is the requested lifetime). The call still ends in one
    /// `Response` event: the core follows the task. In 2026 the
    /// server decides by itself, for clients that declare the tasks extension.
    pub fn as_task(mut self, ttl: Option<Duration>) -> Self {
        self.task = Some(ttl);
        self
    }

    /// Fail the request after `cap` in total, progress or not
    pub fn max_total(mut self, cap: Duration) -> Self {
        self.max_total = Some(Some(cap));
        self
    }
}
