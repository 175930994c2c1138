//! What the binding suite's tests share and what needs no runtime: the fixtures' JSON (tool
//! schemas, arguments, the elicitation a handler asks, the answer a client gives), raw HTTP
//! over `std::net`, and the OAuth pieces (tokens, the protected resource's checks, a small
//! authorization server). Plain functions on plain threads, so the blocking binding's tests
//! use them as they are and the async suite runs the blocking ones off its runtime

#![allow(dead_code)] // each binding's test crates use the parts they need

pub(crate) mod capture;
#[cfg(feature = "tls")]
pub(crate) mod certs;
#[cfg(feature = "http")]
pub(crate) mod hostile;
#[cfg(feature = "http")]
pub(crate) mod innocent;
#[cfg(feature = "auth")]
pub(crate) mod oauth;
#[cfg(feature = "http")]
pub(crate) mod raw_http;
#[cfg(feature = "http")]
pub(crate) mod shares;
#[cfg(feature = "http")]
pub(crate) mod tinyproxy;

use mcp_sansio::schema::{CallToolResult, InputRequest, InputRequests, InputResponse};
use mcp_sansio::{EraMode, InboundNotification, ProtocolVersion};
use serde_json::{Map, Value, json};

/// The legacy version the tests pin
pub(crate) const LEGACY: EraMode = EraMode::Legacy(ProtocolVersion::V2025_11_25);

/// Every era mode a client can ask for, and the version it ends up speaking
pub(crate) const ERAS: [(EraMode, ProtocolVersion); 4] = [
    (EraMode::Auto, ProtocolVersion::V2026_07_28),
    (EraMode::Modern, ProtocolVersion::V2026_07_28),
    (LEGACY, ProtocolVersion::V2025_11_25),
    (
        EraMode::Legacy(ProtocolVersion::V2024_11_05),
        ProtocolVersion::V2024_11_05,
    ),
];

/// A JSON object from a `json!` literal
pub(crate) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// The `echo` tool's input schema: one required string, `text`
pub(crate) fn echo_schema() -> Map<String, Value> {
    object(
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    )
}

/// `{"text": text}`, the `echo` tool's arguments
pub(crate) fn text(text: &str) -> Map<String, Value> {
    object(json!({ "text": text }))
}

/// What the `greet` handlers ask: an elicitation of a `name`
pub(crate) fn name_request() -> InputRequests {
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"message": "Your name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}
    }))
    .unwrap();
    let mut requests = InputRequests::new();
    requests.insert("name".into(), request);
    requests
}

/// The `greet` handlers' result for the answers they got: `Hello, <name>!`
pub(crate) fn greeting(answers: &mcp_sansio::schema::InputResponses) -> CallToolResult {
    let Some(InputResponse::Elicit(answer)) = answers.get("name") else {
        return CallToolResult::error("no name");
    };
    let v = serde_json::to_value(answer).unwrap();
    CallToolResult::text(format!(
        "Hello, {}!",
        v["content"]["name"].as_str().unwrap_or("?")
    ))
}

/// The client's answer to every input request: accept, with the name Ada
pub(crate) fn answer_ada(requests: &InputRequests) -> mcp_sansio::schema::InputResponses {
    requests
        .keys()
        .map(|k| {
            let r: InputResponse =
                serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                    .unwrap();
            (k.clone(), r)
        })
        .collect()
}

/// The levels of `notifications/message` notifications, in order (any other notification
/// fails the test)
pub(crate) fn log_levels(
    notifications: impl IntoIterator<Item = InboundNotification>,
) -> Vec<String> {
    notifications
        .into_iter()
        .map(|n| {
            assert_eq!(n.method, "notifications/message");
            let params: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
            params["level"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// A JSON-RPC error body's code (the body must be one)
pub(crate) fn error_code(body: &[u8]) -> i64 {
    let v: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("a JSON body: {}", String::from_utf8_lossy(body)));
    assert_eq!(v["jsonrpc"], "2.0");
    v["error"]["code"].as_i64().expect("a JSON-RPC error")
}
