//! A hand-written peer for behaviour tests: one real `Session` fed JSON lines through
//! `handle_bytes`, its output read back from `poll_transmit` as JSON
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_sansio::schema::InputRequests;
use mcp_sansio::session::InputId;
use mcp_sansio::session::Role;
use mcp_sansio::session::role::{Client, Server};
use mcp_sansio::testing::{Pair, drain_events};
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, InboundId, InboundRequest, Limits,
    ServerConfig, ServerEvent, ServerSession, Session,
};

/// The modern protocol version string
pub const MODERN: &str = "2026-07-28";

/// A session driven by hand on a fake clock
pub struct Raw<R: Role> {
    pub s: Session<R>,
    pub now: Instant,
}

impl Raw<Server> {
    pub fn server(config: ServerConfig, now: Instant) -> Self {
        Self {
            s: ServerSession::new(Arc::new(config), now),
            now,
        }
    }
}

impl Raw<Client> {
    pub fn client(config: ClientConfig, now: Instant) -> Self {
        Self {
            s: ClientSession::new(Arc::new(config), now),
            now,
        }
    }
}

impl<R: Role> Raw<R> {
    /// Feeds one line (a `\n` is appended)
    pub fn feed(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.s.handle_bytes(self.now, &bytes);
    }

    /// Feeds one JSON value as a line
    pub fn feed_json(&mut self, v: &Value) {
        self.feed(&v.to_string());
    }

    /// Feeds raw bytes as they are
    pub fn feed_bytes(&mut self, bytes: &[u8]) {
        self.s.handle_bytes(self.now, bytes);
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.s.handle_timeout(self.now);
    }

    /// Every queued outbound message as text (each checked to be one line ending in `\n`)
    pub fn out_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut buf = Vec::new();
        while let Some(t) = self.s.poll_transmit(&mut buf) {
            assert_eq!(t.len, buf.len(), "Transmit::len counts the appended bytes");
            assert_eq!(buf.last(), Some(&b'\n'), "every frame ends in a newline");
            let text = std::str::from_utf8(&buf[..buf.len() - 1]).expect("output is UTF-8");
            assert!(!text.contains('\n'), "one message per line: {text}");
            lines.push(text.to_owned());
            buf.clear();
        }
        lines
    }

    /// Every queued outbound message, parsed
    pub fn out(&mut self) -> Vec<Value> {
        self.out_lines()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Exactly one queued outbound message
    pub fn one_out(&mut self) -> Value {
        let mut out = self.out();
        assert_eq!(out.len(), 1, "expected one message, got {out:#?}");
        out.pop().unwrap()
    }

    /// Every queued event
    pub fn events(&mut self) -> Vec<R::Event> {
        drain_events(&mut self.s)
    }
}

/// The three `_meta` keys of a modern request
pub fn meta_with(version: &str, caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-client", "version": "0.1.0"},
    })
}

/// A modern request line: `params` (an object) gets the three `_meta` keys
pub fn modern_request(id: Value, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta_with(MODERN, json!({}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A request with exactly these params
pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The legacy `initialize` request
pub fn initialize(id: Value, version: &str, caps: Value) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": caps,
            "clientInfo": {"name": "raw-client", "version": "0.1.0"},
        }),
    )
}

/// Asserts `v` is a JSON-RPC error with `code` answering `id`; returns the error object
pub fn assert_error(v: &Value, id: &Value, code: i64) -> Value {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert_eq!(&v["id"], id, "the error must echo the request id: {v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    assert!(v.get("result").is_none(), "{v}");
    v["error"].clone()
}

/// Asserts `v` is an error with `code` and no known id (null or omitted)
pub fn assert_error_no_id(v: &Value, code: i64) {
    assert_eq!(v["jsonrpc"], "2.0", "{v}");
    assert!(v.get("id").is_none_or(Value::is_null), "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
}

/// The `Pair` server configuration with other limits
pub fn server_config_with(limits: Limits) -> ServerConfig {
    let mut c = Pair::server_config();
    c.limits = limits;
    c
}

/// The `Pair` client configuration with other limits
pub fn client_config_with(era: EraMode, limits: Limits) -> ClientConfig {
    let mut c = Pair::client_config(era);
    c.limits = limits;
    c
}

/// Either end's event, for the helpers that read both
pub trait AnyEvent: std::fmt::Debug + Sized {
    /// The request, or the event back
    fn into_request(self) -> Result<InboundRequest, Self>;
}

impl AnyEvent for ClientEvent {
    fn into_request(self) -> Result<InboundRequest, Self> {
        match self {
            Self::Request(r) => Ok(r),
            other => Err(other),
        }
    }
}

impl AnyEvent for ServerEvent {
    fn into_request(self) -> Result<InboundRequest, Self> {
        match self {
            Self::Request(r) => Ok(r),
            other => Err(other),
        }
    }
}

/// A request event's method, or panic
pub fn request_of<E: AnyEvent>(e: E) -> InboundRequest {
    match e.into_request() {
        Ok(r) => r,
        Err(other) => panic!("expected a request, got {other:?}"),
    }
}

/// A legacy live input request event (a server's `roots/list`, `sampling/createMessage` or
/// `elicitation/create`): its id and requests, or panic
pub fn live_input_of(e: ClientEvent) -> (InboundId, InputRequests) {
    match e {
        ClientEvent::InputRequired {
            id: InputId::Live(id),
            requests,
        } => (id, requests),
        other => panic!("expected a live InputRequired, got {other:?}"),
    }
}
