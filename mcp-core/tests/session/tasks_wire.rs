//! The wire rules of tasks on a raw server session fed hand-written JSON lines (the rules
//! the official conformance suite checks for the 2026 extension, FIXTURES §2.4.4, and the
//! 2025-11-25 shapes)

use crate::common;
use crate::tasks_kit;
use crate::wire;

use std::time::Duration;

use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::schema::TaskStatus;
use mcp_sansio::session::role::Server;
use mcp_sansio::session::{TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::{InboundRequest, Responder, ServerEvent};
use tasks_kit::{ANCHOR_MS, Form, SEED, ext_meta, server_config, tool_result, two_keys};
use wire::{Raw, assert_error, meta_with};

const MODERN: &str = "2026-07-28";

fn modern_server() -> Raw<Server> {
    let mut s = Raw::server(server_config(Form::Modern), origin());
    s.session.anchor_wall_clock(s.now, ANCHOR_MS);
    s
}

/// A 2026 request; `ext` declares the tasks extension in this request's `_meta`
fn req(id: &str, method: &str, mut params: Value, ext: bool) -> Value {
    params["_meta"] = if ext {
        ext_meta()
    } else {
        meta_with(MODERN, json!({}))
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Feeds one request and returns the one answer
fn ask(s: &mut Raw<Server>, id: &str, method: &str, params: Value, ext: bool) -> Value {
    s.feed(&req(id, method, params, ext));
    s.one_out()
}

fn the_request(s: &mut Raw<Server>) -> InboundRequest {
    let mut events = s.events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop().unwrap() {
        ServerEvent::Request(r) => r,
        other => panic!("{other:?}"),
    }
}

/// A task created from a 2026 tools/call; returns its CreateTaskResult message
fn create(s: &mut Raw<Server>, options: TaskOptions) -> (TaskId, Value, Responder) {
    s.feed(&req(
        "call",
        "tools/call",
        json!({"name": "slow_compute"}),
        true,
    ));
    let request = the_request(s);
    assert!(request.task_offered);
    let task = s
        .session
        .inbound(request.responder.id())
        .start_task(s.now, options)
        .unwrap();
    (task, s.one_out(), request.responder)
}

fn task_id() -> String {
    mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, 0)
}

/// Asserts `v` contains no `requestState` at any depth
fn no_request_state(v: &Value) {
    match v {
        Value::Object(m) => {
            assert!(!m.contains_key("requestState"), "{v}");
            m.values().for_each(no_request_state);
        }
        Value::Array(a) => a.iter().for_each(no_request_state),
        _ => {}
    }
}

/// The result of an ack, which must be exactly `{"resultType":"complete"}` (FIXTURES 2.4.4)
fn ack_of(v: &Value) -> Value {
    v["result"].clone()
}

#[test]
fn task_methods_without_the_extension_are_missing_capability() {
    let mut s = modern_server();
    for (i, method) in ["tasks/get", "tasks/update", "tasks/cancel"]
        .into_iter()
        .enumerate()
    {
        let id = format!("gate-{i}");
        let answer = ask(&mut s, &id, method, json!({"taskId": "gate-test"}), false);
        let error = assert_error(&answer, &json!(id), -32021);
        assert_eq!(
            error["data"]["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
            json!({}),
            "{method}: {answer}"
        );
    }
}

#[test]
fn tasks_result_and_tasks_list_are_method_not_found_in_2026() {
    let mut s = modern_server();
    let (_, _, _) = create(&mut s, TaskOptions::default());
    for ext in [true, false] {
        let answer = ask(
            &mut s,
            "r",
            "tasks/result",
            json!({"taskId": task_id()}),
            ext,
        );
        assert_error(&answer, &json!("r"), -32601);
        let answer = ask(&mut s, "l", "tasks/list", json!({}), ext);
        assert_error(&answer, &json!("l"), -32601);
    }
}

#[test]
fn task_methods_of_a_server_without_the_extension_are_method_not_found() {
    let mut s = Raw::server(mcp_sansio::testing::Pair::server_config(), origin());
    let answer = ask(&mut s, "g", "tasks/get", json!({"taskId": "x"}), true);
    assert_error(&answer, &json!("g"), -32601);
}

#[test]
fn unknown_task_id_is_invalid_params() {
    let mut s = modern_server();
    let answer = ask(
        &mut s,
        "g",
        "tasks/get",
        json!({"taskId": "tasks-conformance-nonexistent-12345"}),
        true,
    );
    assert_error(&answer, &json!("g"), -32602);
    // Missing taskId too.
    let answer = ask(&mut s, "g2", "tasks/get", json!({}), true);
    assert_error(&answer, &json!("g2"), -32602);
}

#[test]
fn create_task_result_without_ttl_has_ttl_ms_null_and_resolves_at_once() {
    let mut s = modern_server();
    let (_, created, _) = create(&mut s, TaskOptions::default());
    let r = &created["result"];
    assert_eq!(created["id"], "call");
    assert_eq!(r["resultType"], "task", "{created}");
    assert!(r.as_object().unwrap().contains_key("ttlMs"), "{created}");
    assert!(r["ttlMs"].is_null(), "{created}");
    assert!(r.get("pollIntervalMs").is_none(), "{created}");
    assert_eq!(r["taskId"], task_id());
    no_request_state(&created);
    let got = ask(&mut s, "g", "tasks/get", json!({"taskId": task_id()}), true);
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    assert!(got["result"]["ttlMs"].is_null(), "{got}");
    for absent in ["result", "error", "inputRequests", "ttl", "pollInterval"] {
        assert!(got["result"].get(absent).is_none(), "{absent}: {got}");
    }
}

#[test]
fn tasks_get_is_a_detailed_task_in_every_status_and_never_has_request_state() {
    let mut s = modern_server();
    let (task, created, _) = create(&mut s, TaskOptions::default().ttl(Duration::from_secs(30)));
    assert_eq!(created["result"]["ttlMs"], 30_000);
    s.advance(Duration::from_millis(1500));
    s.session
        .update_task(s.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    let got = ask(
        &mut s,
        "g1",
        "tasks/get",
        json!({"taskId": task_id()}),
        true,
    );
    let r = &got["result"];
    assert_eq!(r["status"], "input_required", "{got}");
    assert_eq!(r["createdAt"], "2023-11-14T22:13:20.000Z", "{got}");
    assert_eq!(r["lastUpdatedAt"], "2023-11-14T22:13:21.500Z", "{got}");
    assert_eq!(r["inputRequests"].as_object().unwrap().len(), 2, "{got}");
    no_request_state(&got);

    let result = raw(json!({"content": [{"type": "text", "text": "ok"}],
                            "_meta": {"example.com/own": 1}}));
    s.session
        .update_task(s.now, task, TaskUpdate::Completed(result))
        .unwrap();
    let got = ask(
        &mut s,
        "g2",
        "tasks/get",
        json!({"taskId": task_id()}),
        true,
    );
    let r = &got["result"];
    assert_eq!(r["status"], "completed", "{got}");
    assert_eq!(r["result"]["content"][0]["text"], "ok", "{got}");
    assert_eq!(
        r["result"]["_meta"],
        json!({"example.com/own": 1}),
        "no related-task: {got}"
    );
    assert!(r.get("inputRequests").is_none(), "{got}");
    assert!(r.get("error").is_none(), "{got}");
    no_request_state(&got);
    // Still there well after the end (within its ttl).
    s.advance(Duration::from_secs(5));
    let got = ask(
        &mut s,
        "g3",
        "tasks/get",
        json!({"taskId": task_id()}),
        true,
    );
    assert_eq!(got["result"]["status"], "completed", "{got}");
}

#[test]
fn tasks_update_acks_exactly_complete_for_unknown_keys_and_any_status() {
    let mut s = modern_server();
    let (task, _, _) = create(&mut s, TaskOptions::default());
    let params = json!({"taskId": task_id(), "inputResponses": {"unknown-key": {"ignored": true}}});
    let answer = ask(&mut s, "u1", "tasks/update", params.clone(), true);
    assert_eq!(answer["id"], "u1");
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    assert!(s.events().is_empty());
    assert_eq!(s.session.task_status(task), Some(TaskStatus::Working));
    s.session
        .update_task(s.now, task, TaskUpdate::Completed(tool_result("x")))
        .unwrap();
    let answer = ask(&mut s, "u2", "tasks/update", params, true);
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    let answer = ask(
        &mut s,
        "c",
        "tasks/cancel",
        json!({"taskId": task_id()}),
        true,
    );
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    assert_eq!(s.session.task_status(task), Some(TaskStatus::Completed));
}

#[test]
fn tasks_cancel_of_a_working_task_acks_and_cancels() {
    let mut s = modern_server();
    let (task, _, _) = create(&mut s, TaskOptions::default());
    let answer = ask(
        &mut s,
        "c",
        "tasks/cancel",
        json!({"taskId": task_id()}),
        true,
    );
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    assert!(
        matches!(s.events().as_slice(), [ServerEvent::TaskCancelled { task: t }] if *t == task)
    );
    let got = ask(&mut s, "g", "tasks/get", json!({"taskId": task_id()}), true);
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}

#[test]
fn an_invalid_answer_for_a_pending_key_leaves_the_key_pending() {
    let mut s = modern_server();
    let (task, _, _) = create(&mut s, TaskOptions::default());
    s.session
        .update_task(s.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    let answer = ask(
        &mut s,
        "u1",
        "tasks/update",
        json!({"taskId": task_id(), "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "color": {"not": "an elicitation result"}
        }}),
        true,
    );
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    assert!(s.events().is_empty(), "no TaskInput with an answer missing");
    let got = ask(&mut s, "g", "tasks/get", json!({"taskId": task_id()}), true);
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    let keys: Vec<&String> = got["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["color"], "{got}");
    let answer = ask(
        &mut s,
        "u2",
        "tasks/update",
        json!({"taskId": task_id(), "inputResponses": {
            "color": {"action": "accept", "content": {"color": "blue"}}
        }}),
        true,
    );
    assert_eq!(
        ack_of(&answer),
        json!({"resultType": "complete"}),
        "{answer}"
    );
    let events = s.events();
    assert!(
        matches!(events.as_slice(), [ServerEvent::TaskInput { responses, .. }] if responses.len() == 2),
        "{events:?}"
    );
}

#[test]
fn a_2026_task_needs_the_extension_in_this_request_and_ignores_a_legacy_task_param() {
    let mut s = modern_server();
    // The legacy `task` param without the extension: a plain synchronous call.
    s.feed(&req(
        "1",
        "tools/call",
        json!({"name": "greet", "task": {"ttl": 60000, "pollInterval": 100}}),
        false,
    ));
    assert!(!the_request(&mut s).task_offered);
    // The same connection, the extension in this request's _meta: a task may be created.
    s.feed(&req(
        "2",
        "tools/call",
        json!({"name": "slow_compute"}),
        true,
    ));
    assert!(the_request(&mut s).task_offered);
}

#[test]
fn an_offered_task_may_still_be_answered_directly() {
    let mut s = modern_server();
    s.feed(&req("1", "tools/call", json!({"name": "greet"}), true));
    let request = the_request(&mut s);
    assert!(request.task_offered);
    s.session
        .respond_raw(request.responder, &tool_result("Hello, x!"))
        .unwrap();
    let answer = s.one_out();
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert!(answer["result"].get("taskId").is_none(), "{answer}");
}

// --- 2025-11-25 shapes ------------------------------------------------------------------------

fn legacy_server() -> Raw<Server> {
    let mut s = Raw::server(server_config(Form::Legacy), origin());
    s.session.anchor_wall_clock(s.now, ANCHOR_MS);
    s.feed(&wire::initialize(
        json!(0),
        "2025-11-25",
        json!({"elicitation": {}}),
    ));
    s.out();
    s.feed_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.events();
    s
}

#[test]
fn legacy_task_methods_have_the_2025_11_25_shapes() {
    let mut s = legacy_server();
    s.feed(&wire::request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "task": {"ttl": 5000}}),
    ));
    let request = the_request(&mut s);
    assert!(request.task_offered);
    let task = s
        .session
        .inbound(request.responder.id())
        .start_task(s.now, TaskOptions::default())
        .unwrap();
    let created = s.one_out();
    assert_eq!(created["result"]["task"]["ttl"], 5000, "{created}");
    assert!(created["result"].get("resultType").is_none(), "{created}");

    s.feed(&wire::request(
        json!(2),
        "tasks/get",
        json!({"taskId": task_id()}),
    ));
    let got = s.one_out();
    assert_eq!(got["result"]["taskId"], task_id(), "{got}");
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert!(got["result"].get("resultType").is_none(), "{got}");
    assert!(got["result"].get("ttlMs").is_none(), "{got}");

    s.feed(&wire::request(json!(3), "tasks/list", json!({})));
    let list = s.one_out();
    assert_eq!(list["result"]["tasks"][0]["taskId"], task_id(), "{list}");
    assert_eq!(
        list["result"]["tasks"].as_array().unwrap().len(),
        1,
        "{list}"
    );

    s.feed(&wire::request(
        json!(4),
        "tasks/get",
        json!({"taskId": "nope"}),
    ));
    assert_error(&s.one_out(), &json!(4), -32602);

    s.session
        .update_task(s.now, task, TaskUpdate::Completed(tool_result("r")))
        .unwrap();
    let status = s.one_out();
    assert_eq!(status["method"], "notifications/tasks/status", "{status}");
    assert_eq!(status["params"]["status"], "completed", "{status}");
    s.feed(&wire::request(
        json!(5),
        "tasks/result",
        json!({"taskId": task_id()}),
    ));
    let result = s.one_out();
    assert_eq!(result["id"], 5);
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id(),
        "{result}"
    );
    // A legacy request without `params.task` is not offered a task.
    s.feed(&wire::request(
        json!(6),
        "tools/call",
        json!({"name": "slow"}),
    ));
    assert!(!the_request(&mut s).task_offered);
}

#[test]
fn legacy_live_input_answers_reach_the_task_only_when_valid() {
    let mut s = legacy_server();
    s.feed(&wire::request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "task": {}}),
    ));
    let request = the_request(&mut s);
    let task = s
        .session
        .inbound(request.responder.id())
        .start_task(s.now, TaskOptions::default())
        .unwrap();
    s.out();
    s.session
        .update_task(s.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    let asks: Vec<Value> = s
        .out()
        .into_iter()
        .filter(|m| m["method"] == "elicitation/create")
        .collect();
    assert_eq!(asks.len(), 2, "{asks:#?}");
    let dropped = s.session.stats().dropped_messages;
    // One answer is no elicitation result: it is dropped and its key stays pending.
    s.feed(&json!({"jsonrpc": "2.0", "id": asks[0]["id"], "result": {"bogus": 1}}));
    s.feed(&json!({"jsonrpc": "2.0", "id": asks[1]["id"],
                        "result": {"action": "accept", "content": {"x": "y"}}}));
    assert!(s.events().is_empty(), "no TaskInput with an answer missing");
    assert_eq!(s.session.stats().dropped_messages, dropped + 1);
    assert_eq!(s.session.task_status(task), Some(TaskStatus::InputRequired));
}
