//! Who is calling, on a byte-stream session: a request carries no caller unless the
//! application set one for the connection (`Session::set_caller`) or gave one with the
//! message (`Session::handle_message_as`, which keeps the connection's own for the messages
//! after it); tasks are bound to the principal that created them, so `tasks/list` lists the
//! caller's own and every other task method reads another's as an unknown id; a 2026
//! listener hears only its own principal's tasks; a sealed `requestState` is its caller's

use crate::common;
use crate::tasks_kit;
use crate::wire;

use std::sync::Arc;

use serde_json::{Value, json};

use common::origin;
use mcp_sansio::session::role::Server;
use mcp_sansio::session::{Caller, Principal, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::testing::Side;
use tasks_kit::{
    Form, call_tool, ext_meta, inject_json, offered_request, response_to, server_config,
};
use wire::{Raw, request_of};

fn principal(subject: &str) -> Principal {
    Principal::new(Some(subject.into()), Some("app".into()))
}

fn caller(subject: &str) -> Option<Arc<Caller>> {
    Some(Arc::new(Caller::principal(principal(subject))))
}

/// A raw 2026 server declaring the tasks extension
fn modern_server() -> Raw<Server> {
    let mut config = server_config(Form::Modern);
    config.state_key = Some([9; 32]);
    config.task_id_key = [3; 32];
    Raw::server(config, origin())
}

/// A 2026 request declaring the tasks extension and elicitation
fn req(id: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = ext_meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn line(v: &Value) -> Vec<u8> {
    format!("{v}\n").into_bytes()
}

/// The request the server application got from the last message
fn delivered(s: &mut Raw<Server>) -> mcp_sansio::InboundRequest {
    let mut events = s.events();
    assert_eq!(events.len(), 1, "{events:?}");
    request_of(events.pop().unwrap())
}

#[test]
fn a_byte_stream_request_has_no_caller_unless_the_application_sets_one() {
    let mut s = modern_server();
    s.feed(&req("1", "tools/list", json!({})));
    let request = delivered(&mut s);
    assert!(request.caller.is_none());
    assert!(request.principal().is_none());
    assert!(s.session.caller().is_none());

    // The application authenticated the connection's user: every request carries it, with
    // no HTTP headers and no session id.
    s.session.set_caller(caller("alice"));
    s.feed(&req("2", "tools/list", json!({})));
    let request = delivered(&mut s);
    let c = request.caller.as_ref().expect("the connection's caller");
    assert_eq!(c.principal.as_ref(), Some(&principal("alice")));
    assert_eq!(c.headers, None);
    assert_eq!(c.header("host"), None);
    assert_eq!(c.session_id, None);
    assert_eq!(request.principal(), Some(&principal("alice")));
    assert_eq!(
        s.session.caller().and_then(|c| c.principal.as_ref()),
        Some(&principal("alice"))
    );

    // One message from someone else; the connection's caller again after it.
    let mut bob = Caller::principal(principal("bob"));
    bob.headers = Some(vec![("X-Trace".to_owned(), "b".to_owned())].into());
    let bob = Arc::new(bob);
    s.session
        .handle_message_as(s.now, &line(&req("3", "tools/list", json!({}))), Some(bob));
    let request = delivered(&mut s);
    assert_eq!(request.principal(), Some(&principal("bob")));
    assert_eq!(
        request.caller.as_ref().unwrap().header("x-trace"),
        Some("b")
    );
    s.feed(&req("4", "tools/list", json!({})));
    assert_eq!(delivered(&mut s).principal(), Some(&principal("alice")));

    s.session.set_caller(None);
    s.feed(&req("5", "tools/list", json!({})));
    assert!(delivered(&mut s).caller.is_none());
}

/// Starts a task as the session's current caller: its wire id and handle
fn start(s: &mut Raw<Server>, id: &str) -> (String, TaskId) {
    s.feed(&req(id, "tools/call", json!({"name": "slow"})));
    let request = delivered(s);
    let task = s
        .session
        .inbound(request.responder.id())
        .start_task(s.now, TaskOptions::default())
        .unwrap();
    let created = s.one_out();
    let wire = created["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(s.session.task_wire_id(task), Some(wire.as_str()));
    (wire, task)
}

/// The answer to `method` for task `task`, with the task id written `<id>`
fn answer_about(s: &mut Raw<Server>, method: &str, task: &str) -> String {
    let params = match method {
        "tasks/update" => json!({"taskId": task, "inputResponses": {}}),
        _ => json!({"taskId": task}),
    };
    s.feed(&req("q", method, params));
    s.one_out().to_string().replace(task, "<id>")
}

#[test]
fn a_connections_caller_change_moves_who_may_see_a_task() {
    let mut s = modern_server();
    s.session.set_caller(caller("alice"));
    let (alices, _) = start(&mut s, "a");
    s.session.set_caller(None);
    let (nobodys, _) = start(&mut s, "n");
    assert_ne!(alices, nobodys);
    let made_up = "00000000000000000000000000000000";

    for (who, theirs) in [
        (caller("bob"), &alices),
        (None, &alices),
        (caller("alice"), &nobodys),
    ] {
        s.session.set_caller(who);
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let got = answer_about(&mut s, method, theirs);
            assert!(got.contains("-32602"), "{got}");
            assert_eq!(got, answer_about(&mut s, method, made_up), "{method}");
        }
    }
    assert!(s.events().is_empty(), "nothing cancelled, no input");

    s.session.set_caller(caller("alice"));
    let got = answer_about(&mut s, "tasks/get", &alices);
    assert!(got.contains(r#""status":"working""#), "{got}");
    // A message from nobody on alice's connection sees nobody's task.
    s.session.handle_message_as(
        s.now,
        &line(&req("g", "tasks/get", json!({"taskId": nobodys}))),
        None,
    );
    assert_eq!(s.one_out()["result"]["status"], "working");
}

#[test]
fn tasks_list_lists_only_the_callers_tasks() {
    let mut pair = tasks_kit::pair(Form::Legacy);
    // Interleaved tasks of alice, bob and nobody; alice has more than a page of them.
    let mut own: std::collections::BTreeMap<Option<&str>, Vec<String>> = Default::default();
    for n in 0..160 {
        let who = match n % 3 {
            0 | 1 => Some("alice"),
            _ if n % 2 == 0 => Some("bob"),
            _ => None,
        };
        pair.server.set_caller(who.and_then(caller));
        call_tool(&mut pair, Form::Legacy, "slow");
        let request = offered_request(&mut pair);
        let task = pair
            .server
            .inbound(request.responder.id())
            .start_task(pair.now, TaskOptions::default())
            .unwrap();
        pair.drive();
        pair.client_events();
        let id = pair.server.task_wire_id(task).unwrap().to_owned();
        own.entry(who).or_default().push(id);
    }
    assert!(own[&Some("alice")].len() > 100, "more than one page");

    for (who, expected) in &own {
        pair.server.set_caller(who.and_then(caller));
        let mut listed = Vec::new();
        let mut cursor: Option<String> = None;
        for page in 0.. {
            assert!(page < 3, "ends");
            let id = format!("list-{page}");
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let list =
                json!({"jsonrpc": "2.0", "id": id, "method": "tasks/list", "params": params});
            inject_json(&mut pair, Side::Server, &list);
            let answer = response_to(&pair, &json!(id)).expect("answered");
            let tasks = answer["result"]["tasks"].as_array().unwrap();
            listed.extend(
                tasks
                    .iter()
                    .map(|t| t["taskId"].as_str().unwrap().to_owned()),
            );
            match answer["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
            pair.take_transcript();
        }
        pair.take_transcript();
        assert_eq!(&listed, expected, "{who:?} lists exactly its own, in order");
    }
}

#[test]
fn a_2025_tasks_result_of_another_principals_task_does_not_wait() {
    let mut pair = tasks_kit::pair(Form::Legacy);
    pair.server.set_caller(caller("alice"));
    call_tool(&mut pair, Form::Legacy, "slow");
    let request = offered_request(&mut pair);
    let task = pair
        .server
        .inbound(request.responder.id())
        .start_task(pair.now, TaskOptions::default())
        .unwrap();
    pair.drive();
    pair.client_events();
    let id = pair.server.task_wire_id(task).unwrap().to_owned();
    pair.server.set_caller(caller("bob"));
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let theirs =
            json!({"jsonrpc": "2.0", "id": "x", "method": method, "params": {"taskId": id}});
        inject_json(&mut pair, Side::Server, &theirs);
        let answer = response_to(&pair, &json!("x")).expect("answered now, not when it ends");
        pair.take_transcript();
        let made_up = "ffffffffffffffffffffffffffffffff";
        let unknown =
            json!({"jsonrpc": "2.0", "id": "x", "method": method, "params": {"taskId": made_up}});
        inject_json(&mut pair, Side::Server, &unknown);
        let expected = response_to(&pair, &json!("x")).unwrap();
        pair.take_transcript();
        assert_eq!(
            answer.to_string().replace(&id, "<id>"),
            expected.to_string().replace(made_up, "<id>"),
            "{method}"
        );
    }
    assert!(pair.server_events().is_empty(), "not cancelled");
    assert_eq!(
        pair.server.task_status(task),
        Some(mcp_sansio::schema::TaskStatus::Working)
    );
}

#[test]
fn a_listener_hears_only_its_own_principals_tasks() {
    let mut s = modern_server();
    s.session.set_caller(caller("alice"));
    let (alices, task) = start(&mut s, "a");
    let listen = |s: &mut Raw<Server>, who, id: &str| {
        s.session.set_caller(who);
        s.feed(&req(
            id,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [alices.clone()]}}),
        ));
        let ack = s.one_out();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    };
    listen(&mut s, caller("bob"), "l-bob");
    listen(&mut s, None, "l-nobody");
    listen(&mut s, caller("alice"), "l-alice");
    s.session
        .update_task(s.now, task, TaskUpdate::Working(Some("half way".into())))
        .unwrap();
    let out = s.out();
    let heard: Vec<&Value> = out
        .iter()
        .filter(|m| m["method"] == "notifications/tasks")
        .collect();
    assert_eq!(heard.len(), 1, "{out:?}");
    assert_eq!(
        heard[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l-alice"
    );
    assert_eq!(heard[0]["params"]["statusMessage"], "half way");
}

#[test]
fn a_request_state_is_refused_to_another_caller_of_the_connection() {
    let mut s = modern_server();
    s.session.set_caller(caller("alice"));
    s.feed(&req("1", "tools/call", json!({"name": "ask"})));
    let request = delivered(&mut s);
    let asked = s
        .session
        .inbound(request.responder.id())
        .ask_input(s.now, tasks_kit::two_keys())
        .unwrap();
    assert_eq!(asked, mcp_sansio::Asked::Suspended);
    let first = s.one_out();
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = |id: &str| {
        req(
            id,
            "tools/call",
            json!({"name": "ask", "requestState": state, "inputResponses": {
                "name": {"action": "accept", "content": {"name": "Ada"}}}}),
        )
    };
    s.session.set_caller(caller("bob"));
    s.feed(&retry("2"));
    let refused = s.one_out();
    assert_eq!(refused["error"]["code"], -32602);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("requestState was issued to another caller"),
        "{refused}"
    );
    assert!(s.events().is_empty(), "the handler never saw it");
    s.session.set_caller(caller("alice"));
    s.feed(&retry("3"));
    let request = delivered(&mut s);
    assert_eq!(request.principal(), Some(&principal("alice")));
    match s
        .session
        .inbound(request.responder.id())
        .ask_input(s.now, tasks_kit::two_keys())
        .unwrap()
    {
        // One of the two keys answered: the other is asked for, under a new state.
        mcp_sansio::Asked::Suspended => {
            let next = s.one_out();
            assert_eq!(next["result"]["resultType"], "input_required");
            assert!(next["result"]["inputRequests"]["color"].is_object());
            assert!(next["result"]["inputRequests"].get("name").is_none());
        }
        other => panic!("{other:?}"),
    }
}
