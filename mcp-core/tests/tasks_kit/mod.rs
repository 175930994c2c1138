//! Shared setup of the task tests: both forms of tasks (2025-11-25 capability, 2026
//! extension) on a `Pair`, and readers of the transcript
#![allow(dead_code, unreachable_pub)]

use mcp_sansio::testing::Side;
use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use mcp_sansio::schema::{InputRequest, InputRequests};
use mcp_sansio::session::TASKS_EXTENSION;
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientConfig, ClientEvent, EraMode, InboundRequest, OutboundId, ProtocolVersion,
    RequestOptions, ServerConfig, ServerEvent,
};

/// The server's task id seed (task ids derive from it: [`task_id`])
pub const SEED: u64 = 0xabc;
/// The server's wall clock at the pair's origin (2023-11-14T22:13:20Z)
pub const ANCHOR_MS: u64 = 1_700_000_000_000;

/// The two forms of tasks
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// 2026-07-28 with the `io.modelcontextprotocol/tasks` extension
    Modern,
    /// 2025-11-25 with the `tasks` capability and `params.task`
    Legacy,
}

impl Form {
    pub const BOTH: [Self; 2] = [Self::Modern, Self::Legacy];
}

/// The wire id of the first task of the pair's server
pub fn task0() -> String {
    task_id(0)
}

/// The wire id of task `n` of the pair's server (key zero, the 2026 session's scope)
pub fn task_id(n: u64) -> String {
    mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, n)
}

/// A client that can follow tasks in `form`
pub fn client_config(form: Form) -> ClientConfig {
    match form {
        Form::Modern => {
            let mut c = Pair::client_config(EraMode::Modern);
            c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
            c
        }
        Form::Legacy => Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
    }
}

/// A server that offers tasks for tools/call in `form`
pub fn server_config(form: Form) -> ServerConfig {
    let mut s = Pair::server_config();
    s.task_id_seed = SEED;
    match form {
        Form::Modern => s.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} }),
        Form::Legacy => {
            s.capabilities["tasks"] =
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        }
    }
    s
}

/// A ready pair of the two configurations, events drained, the server's wall clock anchored
pub fn pair_with(_form: Form, client: ClientConfig, server: ServerConfig) -> Pair {
    let mut pair = Pair::new(super::common::origin(), client, server);
    pair.server.anchor_wall_clock(pair.now, ANCHOR_MS);
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::Ready { .. }]),
        "{events:?}"
    );
    pair.server_events();
    pair.take_transcript();
    pair
}

/// A ready pair for `form`
pub fn pair(form: Form) -> Pair {
    pair_with(form, client_config(form), server_config(form))
}

/// A `tools/call` of `name` that may become a task (2025-11-25: asked with `as_task`)
pub fn call_tool(pair: &mut Pair, form: Form, name: &str) -> OutboundId {
    let options = match form {
        Form::Modern => RequestOptions::default(),
        Form::Legacy => RequestOptions::default().as_task(Some(Duration::from_secs(60))),
    };
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(super::common::raw(json!({"name": name, "arguments": {}}))),
            options,
        )
        .unwrap();
    pair.drive();
    id
}

/// The one request the server application got
pub fn offered_request(pair: &mut Pair) -> InboundRequest {
    pair.drive();
    let mut events = pair.server_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop().unwrap() {
        ServerEvent::Request(r) => r,
        other => panic!("expected a request, got {other:?}"),
    }
}

/// A `CallToolResult` with one text item
pub fn tool_result(text: &str) -> Box<RawValue> {
    super::common::raw(json!({"content": [{"type": "text", "text": text}]}))
}

/// An elicitation input request asking for one string field
pub fn elicit(field: &str) -> InputRequest {
    serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": format!("Your {field}?"),
        "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}},
                            "required": [field]}
    }}))
    .unwrap()
}

/// Two elicitation keys, `name` and `color`
pub fn two_keys() -> InputRequests {
    let mut m = BTreeMap::new();
    m.insert("name".to_owned(), elicit("name"));
    m.insert("color".to_owned(), elicit("color"));
    m
}

/// How many requests or notifications of `method` `side` sent in `transcript`
pub fn count_method(transcript: &[(Side, String)], side: Side, method: &str) -> usize {
    transcript
        .iter()
        .filter(|(s, l)| {
            *s == side && serde_json::from_str::<Value>(l).unwrap()["method"] == method
        })
        .count()
}

/// The server's answer to the request with wire id `id`, if sent
pub fn response_to(pair: &Pair, id: &Value) -> Option<Value> {
    pair.sent_by(Side::Server)
        .into_iter()
        .find(|m| &m["id"] == id && m.get("method").is_none())
}

/// The last `method` request `side` sent
pub fn last_request(pair: &Pair, side: Side, method: &str) -> Option<Value> {
    pair.sent_by(side)
        .into_iter()
        .rev()
        .find(|m| m["method"] == method)
}

/// A task started with a 60 s ttl and a 250 ms poll interval, events drained and the
/// transcript kept; returns the pair, the client's call and the server's task
pub fn started(form: Form) -> (Pair, OutboundId, mcp_sansio::session::TaskId) {
    let mut pair = pair(form);
    let call = call_tool(&mut pair, form, "slow");
    let request = offered_request(&mut pair);
    assert!(request.task_offered, "{form:?}: the client offered a task");
    let task = pair
        .server
        .inbound(request.responder.id())
        .start_task(
            pair.now,
            mcp_sansio::session::TaskOptions::default()
                .ttl(Duration::from_secs(60))
                .poll_interval(Duration::from_millis(250)),
        )
        .unwrap();
    pair.drive();
    (pair, call, task)
}

/// `_meta` of a hand-written 2026 request declaring the tasks extension
pub fn ext_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": { TASKS_EXTENSION: {} }},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-client", "version": "0.1.0"},
    })
}

/// A hand-written task request from a peer: 2026 requests declare the extension in `_meta`
pub fn task_request(form: Form, id: &str, method: &str, mut params: Value) -> Value {
    if form == Form::Modern {
        params["_meta"] = ext_meta();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Feeds one JSON message to `to` as the other side would have sent it, then drives
pub fn inject_json(pair: &mut Pair, to: Side, v: &Value) {
    pair.inject(to, format!("{v}\n").as_bytes());
}

/// A result without its `_meta` (where a 2026 server puts its serverInfo)
pub fn without_meta(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("_meta");
    }
    v
}

/// An accepted elicitation answer with one field
pub fn accept(field: &str, value: &str) -> mcp_sansio::schema::InputResponse {
    serde_json::from_value(json!({"action": "accept", "content": {field: value}})).unwrap()
}
