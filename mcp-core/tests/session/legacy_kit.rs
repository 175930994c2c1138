//! Helpers shared by the legacy-era behaviour tests (`session_legacy_*.rs`)
#![allow(dead_code, unreachable_pub)]

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::common::{origin, raw};
use mcp_sansio::schema::{InputRequest, InputRequests};
use mcp_sansio::session::InputId;
use mcp_sansio::session::role::{Client, Server};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, ClientConfig, ClientEvent, CloseReason, EraMode, ErrorObject, InboundId,
    InboundRequest, OutboundId, ProtocolVersion, RequestOptions, ServerConfig, ServerEvent,
};

/// What the helpers below read from either end's events
pub trait KitEvent: std::fmt::Debug + Sized {
    /// The request, or the event back
    fn into_request(self) -> Result<InboundRequest, Self>;
    /// The response's id and outcome, or the event back
    fn into_response(self) -> Result<(OutboundId, Result<Box<RawValue>, CallError>), Self>;
    /// The reason of a `Closed` event
    fn close_reason(&self) -> Option<&CloseReason>;
}

impl KitEvent for ClientEvent {
    fn into_request(self) -> Result<InboundRequest, Self> {
        match self {
            Self::Request(r) => Ok(r),
            other => Err(other),
        }
    }

    fn into_response(self) -> Result<(OutboundId, Result<Box<RawValue>, CallError>), Self> {
        match self {
            Self::Response { id, outcome } => Ok((id, outcome)),
            other => Err(other),
        }
    }

    fn close_reason(&self) -> Option<&CloseReason> {
        match self {
            Self::Closed { reason } => Some(reason),
            _ => None,
        }
    }
}

impl KitEvent for ServerEvent {
    fn into_request(self) -> Result<InboundRequest, Self> {
        match self {
            Self::Request(r) => Ok(r),
            other => Err(other),
        }
    }

    fn into_response(self) -> Result<(OutboundId, Result<Box<RawValue>, CallError>), Self> {
        match self {
            Self::Response { id, outcome } => Ok((id, outcome)),
            other => Err(other),
        }
    }

    fn close_reason(&self) -> Option<&CloseReason> {
        match self {
            Self::Closed { reason } => Some(reason),
            _ => None,
        }
    }
}

/// Every legacy-era version, oldest first
pub const LEGACY: [ProtocolVersion; 4] = [
    ProtocolVersion::V2024_11_05,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
];

/// Parses one JSON text (a transcript line or a transmit)
pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A legacy pair after the handshake, with both sides' `Ready` events checked and taken
pub fn ready(version: ProtocolVersion) -> Pair {
    ready_with(
        Pair::client_config(EraMode::Legacy(version)),
        Pair::server_config(),
    )
}

/// A pair from these configurations after the handshake; `Ready` checked and taken
pub fn ready_with(client: ClientConfig, server: ServerConfig) -> Pair {
    let mut pair = Pair::new(origin(), client, server);
    pair.drive();
    let c = pair.client_events();
    assert!(matches!(c.as_slice(), [ClientEvent::Ready { .. }]), "{c:?}");
    let s = pair.server_events();
    assert!(matches!(s.as_slice(), [ServerEvent::Ready { .. }]), "{s:?}");
    pair
}

/// Client sends `method`; the server's `ServerEvent::Request` for it is returned
pub fn client_call(
    pair: &mut Pair,
    method: &str,
    params: Value,
    options: RequestOptions,
) -> (OutboundId, InboundRequest) {
    let id = pair
        .client
        .send_request_raw(pair.now, method, Some(raw(params)), options)
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    pair.drive();
    let request = only_request(pair.server_events());
    assert_eq!(request.method, method);
    (id, request)
}

/// Server sends `method`; the client's `ClientEvent::Request` for it is returned
pub fn server_call(
    pair: &mut Pair,
    method: &str,
    params: Value,
    options: RequestOptions,
) -> (OutboundId, InboundRequest) {
    let id = pair
        .server
        .send_request_raw(pair.now, method, Some(raw(params)), options)
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    pair.drive();
    let request = only_request(pair.client_events());
    assert_eq!(request.method, method);
    (id, request)
}

/// Server sends a live input request (`roots/list`, `sampling/createMessage` or
/// `elicitation/create`); the client's `ClientEvent::InputRequired` for it is checked and its
/// id and typed request returned
pub fn server_ask(
    pair: &mut Pair,
    method: &str,
    params: Value,
    options: RequestOptions,
) -> (OutboundId, InboundId, InputRequest) {
    let id = pair
        .server
        .send_request_raw(pair.now, method, Some(raw(params)), options)
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    pair.drive();
    let (inbound, request) = only_live_input(pair.client_events(), method);
    (id, inbound, request)
}

/// The single event, which must be a legacy `InputRequired`: its live id and its requests
pub fn only_input(events: Vec<ClientEvent>) -> (InboundId, InputRequests) {
    match <[ClientEvent; 1]>::try_from(events) {
        Ok(
            [
                ClientEvent::InputRequired {
                    id: InputId::Live(id),
                    requests,
                },
            ],
        ) => (id, requests),
        Ok([other]) => panic!("expected live InputRequired, got {other:?}"),
        Err(events) => panic!("expected one InputRequired, got {events:?}"),
    }
}

/// The single event, which must be a legacy `InputRequired` holding exactly one request,
/// keyed by `method` and of that method; its live id and the request
pub fn only_live_input(events: Vec<ClientEvent>, method: &str) -> (InboundId, InputRequest) {
    let (id, mut requests) = only_input(events);
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        [method],
        "keyed by the method"
    );
    let request = requests.remove(method).expect("checked");
    assert_eq!(request.method(), method);
    (id, request)
}

/// The single event, which must be a request
pub fn only_request<E: KitEvent>(events: Vec<E>) -> InboundRequest {
    match <[E; 1]>::try_from(events) {
        Ok([event]) => match event.into_request() {
            Ok(r) => r,
            Err(other) => panic!("expected a request, got {other:?}"),
        },
        Err(events) => panic!("expected one request, got {events:?}"),
    }
}

/// The single event, which must be the response to `id`; its outcome
pub fn only_response<E: KitEvent>(events: Vec<E>, id: OutboundId) -> Result<Value, CallError> {
    match <[E; 1]>::try_from(events) {
        Ok([event]) => match event.into_response() {
            Ok((got, outcome)) => {
                assert_eq!(got, id, "response to the wrong request");
                outcome.map(|r| parse(r.get()))
            }
            Err(other) => panic!("expected a response, got {other:?}"),
        },
        Err(events) => panic!("expected one response, got {events:?}"),
    }
}

/// The JSON-RPC error of a remote failure
pub fn remote(outcome: Result<Value, CallError>) -> ErrorObject {
    match outcome {
        Err(CallError::Remote(e)) => e,
        other => panic!("expected a remote error, got {other:?}"),
    }
}

/// One session fed hand-written JSON lines, as if from a misbehaving peer (the test kit's
/// [`Wire`]); `Raw::server`/`Raw::client` take the kit's [`origin`] as their clock
pub use mcp_sansio::testing::Wire as Raw;

/// A server after a raw handshake in `version` (initialize id `"init"`), client
/// capabilities `caps`; the outputs and `Ready` are checked and taken
pub fn server_ready(config: ServerConfig, version: ProtocolVersion, caps: Value) -> Raw<Server> {
    let mut s = Raw::server(config, origin());
    s.feed(&json!({
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {
            "protocolVersion": version.as_str(),
            "capabilities": caps,
            "clientInfo": {"name": "raw-client", "version": "0"}
        }
    }));
    let out = s.out();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], "init");
    assert_eq!(out[0]["result"]["protocolVersion"], version.as_str());
    s.feed(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let events = s.events();
    assert!(
        matches!(events.as_slice(), [ServerEvent::Ready { version: v }] if *v == version),
        "{events:?}"
    );
    s
}

/// A client after a raw handshake: its initialize is answered with `version` and the
/// server capabilities `caps`; the outputs and `Ready` are checked and taken
pub fn client_ready(config: ClientConfig, version: ProtocolVersion, caps: Value) -> Raw<Client> {
    let mut c = Raw::client(config, origin());
    let out = c.out();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "initialize");
    c.feed(&json!({
        "jsonrpc": "2.0", "id": out[0]["id"], "result": {
            "protocolVersion": version.as_str(),
            "capabilities": caps,
            "serverInfo": {"name": "raw-server", "version": "0"}
        }
    }));
    let out = c.out();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "notifications/initialized");
    let events = c.events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::Ready { version: v }] if *v == version),
        "{events:?}"
    );
    c
}
