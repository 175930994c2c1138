//! Helpers for behaviour tests that play the peer by hand: the test kit's `Wire` (one real
//! `Session` fed JSON lines) and the messages and checks those tests share
#![allow(dead_code, unreachable_pub)]

use serde_json::{Value, json};

use mcp_sansio::schema::InputRequests;
use mcp_sansio::session::InputId;
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientConfig, ClientEvent, EraMode, InboundId, InboundRequest, Limits, ServerConfig,
    ServerEvent,
};

/// The modern protocol version string
pub const MODERN: &str = "2026-07-28";

/// A session driven by hand on a fake clock (the test kit's [`Wire`])
pub use mcp_sansio::testing::Wire as Raw;

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
