//! Who is calling, on both HTTP wires: a task answers only its creator (another principal,
//! or a caller without one, gets exactly what an unknown id gets), task ids are 128 random-
//! looking bits that never repeat, a 2025-11-25 session's tasks are its own, a sealed
//! `requestState` is good only for the caller it was issued to, a task's notifications
//! reach only its creator's listen streams, and a handler learns the caller's principal,
//! header fields and 2025 session id

use std::collections::BTreeSet;

use serde_json::{Value, json};

use mcp_sansio::http::{Principal, Source};
use mcp_sansio::session::TaskUpdate;

use super::http_kit::{one_elicitation, raw};
use super::identity_kit::{Answer, Cluster, MADE_UP, alice, anonymous, bob, is_task_id, principal};

/// An accepted answer to the elicitation of `one_elicitation`
fn name_answer(name: &str) -> Value {
    json!({"name": {"action": "accept", "content": {"name": name}}})
}

/// The params of a task method for task `id`
fn task_params(method: &str, id: &str) -> Value {
    match method {
        "tasks/update" => json!({"taskId": id, "inputResponses": name_answer("Mallory")}),
        _ => json!({"taskId": id}),
    }
}

/// alice's token issued to another client: another principal
fn alice_elsewhere() -> Source {
    Source::unknown().with_principal(Some(Principal::new(
        Some("alice".into()),
        Some("other-app".into()),
    )))
}

/// alice's refreshed token, with other scopes: the same principal
fn alice_refreshed() -> Source {
    Source::unknown().with_principal(Some(
        principal("alice").with_scopes(vec!["mcp:extra".into()]),
    ))
}

/// Asserts that `source`'s `method` for task `id` is answered exactly as the same request
/// for an id nobody issued (but for the id itself), and with the unknown-task error
fn as_if_unknown(c: &mut Cluster, i: usize, source: &Source, method: &str, id: &str) -> Answer {
    let theirs = c.modern(i, source, 41, method, task_params(method, id));
    let unknown = c.modern(i, source, 41, method, task_params(method, MADE_UP));
    assert_eq!(unknown.error_code(), Some(-32602), "{unknown:?}");
    assert_eq!(unknown.status, 400, "{unknown:?}");
    assert!(
        unknown.error_message().contains("unknown task"),
        "{unknown:?}"
    );
    assert_eq!(
        theirs.without(id),
        unknown.without(MADE_UP),
        "{method} of another's task must read as an unknown id"
    );
    theirs
}

#[test]
fn another_principals_task_is_answered_as_an_unknown_id_on_the_2026_wire() {
    let mut c = Cluster::single();
    let id = c.start(0, &alice());
    // The task waits for input, so that a tasks/update could give it some.
    c.update(0, &id, TaskUpdate::InputRequired(one_elicitation()));
    let got = c.modern(0, &alice(), 2, "tasks/get", json!({"taskId": id}));
    assert_eq!(got.body["result"]["status"], "input_required", "{got:?}");

    for stranger in [bob(), anonymous(), alice_elsewhere()] {
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            as_if_unknown(&mut c, 0, &stranger, method, &id);
        }
    }
    // Nothing reached the task: no input, no cancellation, still waiting.
    assert!(c.nodes[0].cancelled.is_empty());
    assert!(c.nodes[0].inputs.is_empty());

    // Its creator reads it (also with a refreshed token), answers it and cancels it.
    let got = c.modern(0, &alice_refreshed(), 3, "tasks/get", json!({"taskId": id}));
    assert_eq!(got.status, 200, "{got:?}");
    assert_eq!(got.body["result"]["taskId"], id.as_str());
    assert_eq!(got.body["result"]["status"], "input_required", "{got:?}");
    assert!(got.body["result"]["inputRequests"]["name"].is_object());
    let ack = c.modern(
        0,
        &alice(),
        4,
        "tasks/update",
        json!({"taskId": id, "inputResponses": name_answer("Ada")}),
    );
    assert_eq!(ack.body["result"]["resultType"], "complete", "{ack:?}");
    let (_, task) = c.task(0, &id);
    assert_eq!(c.nodes[0].inputs.len(), 1);
    assert_eq!(c.nodes[0].inputs[0].0, task);
    let given = serde_json::to_value(&c.nodes[0].inputs[0].1["name"]).unwrap();
    assert_eq!(given["content"]["name"], "Ada", "alice's answer, not bob's");
    let ack = c.modern(0, &alice(), 5, "tasks/cancel", json!({"taskId": id}));
    assert_eq!(ack.body["result"]["resultType"], "complete", "{ack:?}");
    assert_eq!(c.nodes[0].cancelled, vec![task]);
    let got = c.modern(0, &alice(), 6, "tasks/get", json!({"taskId": id}));
    assert_eq!(got.body["result"]["status"], "cancelled", "{got:?}");
    // Still unknown to the others once ended.
    as_if_unknown(&mut c, 0, &bob(), "tasks/get", &id);
}

#[test]
fn a_task_without_a_principal_is_not_a_principals_and_the_reverse() {
    let mut c = Cluster::single();
    let anonymous_task = c.start(0, &anonymous());
    let alices = c.start(0, &alice());
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        as_if_unknown(&mut c, 0, &alice(), method, &anonymous_task);
        as_if_unknown(&mut c, 0, &bob(), method, &anonymous_task);
        as_if_unknown(&mut c, 0, &anonymous(), method, &alices);
    }
    assert!(c.nodes[0].cancelled.is_empty());
    // Each reads its own.
    let got = c.modern(
        0,
        &anonymous(),
        2,
        "tasks/get",
        json!({"taskId": anonymous_task}),
    );
    assert_eq!(got.body["result"]["status"], "working", "{got:?}");
    let got = c.modern(0, &alice(), 3, "tasks/get", json!({"taskId": alices}));
    assert_eq!(got.body["result"]["status"], "working", "{got:?}");
    // Two anonymous callers are one: without a principal there is nobody to tell apart.
    let ack = c.modern(
        0,
        &anonymous(),
        4,
        "tasks/cancel",
        json!({"taskId": anonymous_task}),
    );
    assert_eq!(ack.body["result"]["resultType"], "complete", "{ack:?}");
    assert_eq!(c.nodes[0].cancelled.len(), 1);
}

#[test]
fn task_ids_are_128_bits_of_hex_and_never_repeat() {
    let mut c = Cluster::single();
    let mut ids = BTreeSet::new();
    for source in [alice(), alice(), bob(), anonymous()] {
        let id = c.start(0, &source);
        assert!(is_task_id(&id), "{id}");
        assert!(ids.insert(id.clone()), "{id} repeated");
    }
    // The first task of each 2025-11-25 session, of one principal and of two.
    for source in [alice(), alice(), bob()] {
        let sid = c.initialize(0, &source);
        let id = c.start_legacy(0, &source, &sid);
        assert!(is_task_id(&id), "{id}");
        assert!(ids.insert(id.clone()), "{id} repeated");
    }
    assert_eq!(ids.len(), 7);
    // Another process with another seed, same key: other ids again.
    let mut other = Cluster::new(2, false);
    let from_b = other.start(1, &alice());
    assert!(is_task_id(&from_b));
    assert!(!ids.contains(&from_b));
    assert_ne!(other.start(0, &alice()), from_b);
}

#[test]
fn a_2025_sessions_tasks_are_its_own_and_tasks_list_is_not_on_the_2026_wire() {
    let mut c = Cluster::single();
    let first = c.initialize(0, &alice());
    let second = c.initialize(0, &alice());
    let in_first = c.start_legacy(0, &alice(), &first);
    let in_second = c.start_legacy(0, &alice(), &second);

    // tasks/list lists the session's own tasks only.
    for (sid, own) in [(&first, &in_first), (&second, &in_second)] {
        let list = c.legacy(0, &alice(), sid, 5, "tasks/list", json!({}));
        assert_eq!(list.status, 200, "{list:?}");
        let tasks = list.body["result"]["tasks"].as_array().unwrap();
        let listed: Vec<&str> = tasks
            .iter()
            .map(|t| t["taskId"].as_str().unwrap())
            .collect();
        assert_eq!(listed, vec![own.as_str()], "{list:?}");
    }
    // The other session's task is an unknown id there, exactly like a made-up one.
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let theirs = c.legacy(0, &alice(), &first, 6, method, json!({"taskId": in_second}));
        let unknown = c.legacy(0, &alice(), &first, 6, method, json!({"taskId": MADE_UP}));
        assert_eq!(unknown.error_code(), Some(-32602), "{unknown:?}");
        assert_eq!(
            theirs.body.to_string().replace(&in_second, "<id>"),
            unknown.body.to_string().replace(MADE_UP, "<id>"),
            "{method}"
        );
    }
    // Nobody else uses alice's session.
    for stranger in [bob(), anonymous()] {
        let r = c
            .legacy_raw(0, &stranger, &first, 7, "tasks/list", json!({}))
            .expect("a complete refusal");
        assert_eq!(r.status, 404);
    }
    // The tasks extension has no tasks/list: the 2026 wire answers method not found, the
    // same for everybody.
    let alices = c.start(0, &alice());
    let mut answers = Vec::new();
    for source in [alice(), bob(), anonymous()] {
        let list = c.modern(0, &source, 8, "tasks/list", json!({}));
        assert_eq!(list.status, 404, "{list:?}");
        assert_eq!(list.error_code(), Some(-32601), "{list:?}");
        assert!(!list.body.to_string().contains(&alices), "{list:?}");
        answers.push(list);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
}

#[test]
fn a_sealed_request_state_is_good_only_for_its_caller() {
    let mut c = Cluster::single();
    let call = json!({"name": "ask", "arguments": {}});
    let first = c.modern(0, &alice(), 1, "tools/call", call.clone());
    assert_eq!(first.status, 200, "{first:?}");
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{first:?}"
    );
    let state = first.body["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let retry = |state: &str, answer: &str| {
        let mut p = call.clone();
        p["inputResponses"] = name_answer(answer);
        p["requestState"] = json!(state);
        p
    };
    let handled = c.seen.len();
    for stranger in [bob(), anonymous(), alice_elsewhere()] {
        let refused = c.modern(0, &stranger, 2, "tools/call", retry(&state, "Mallory"));
        assert_eq!(refused.status, 400, "{refused:?}");
        assert_eq!(refused.error_code(), Some(-32602), "{refused:?}");
        assert_eq!(
            refused.error_message(),
            "Invalid params: requestState was issued to another caller"
        );
        assert_eq!(refused.body["id"], 2);
    }
    assert_eq!(c.seen.len(), handled, "no handler saw a refused retry");

    // Its caller's retry (a refreshed token is the same caller) is answered.
    let answered = c.modern(0, &alice_refreshed(), 3, "tools/call", retry(&state, "Ada"));
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(
        answered.body["result"]["content"][0]["text"], "Ada",
        "{answered:?}"
    );

    // A state issued without a principal is no principal's either.
    let first = c.modern(0, &anonymous(), 4, "tools/call", call.clone());
    let state = first.body["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = c.modern(0, &alice(), 5, "tools/call", retry(&state, "Ada"));
    assert_eq!(
        refused.error_message(),
        "Invalid params: requestState was issued to another caller"
    );
    let answered = c.modern(0, &anonymous(), 6, "tools/call", retry(&state, "Ada"));
    assert_eq!(answered.body["result"]["content"][0]["text"], "Ada");
}

/// The messages a listen stream carried so far
fn stream(c: &Cluster, exchange: mcp_sansio::http::ExchangeId) -> Vec<Value> {
    let collected = c.collected(0, exchange);
    assert!(collected.is_sse() && !collected.ended, "an open stream");
    collected.messages()
}

#[test]
fn a_tasks_notifications_reach_only_its_creators_listen_streams() {
    let mut c = Cluster::single();
    let id = c.start(0, &alice());
    let listen = |c: &mut Cluster, source: &Source, sub: i64, task: &str| {
        c.modern_raw(
            0,
            source,
            sub,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task]}}),
        )
        .expect_err("a stream")
    };
    let alices = listen(&mut c, &alice(), 10, &id);
    let bobs = listen(&mut c, &bob(), 11, &id);
    let anonymous_one = listen(&mut c, &anonymous(), 12, &id);
    let bobs_made_up = listen(&mut c, &bob(), 11, MADE_UP);
    // The acknowledgment tells bob nothing: the same as for an id nobody issued.
    let ack = &stream(&c, bobs)[0];
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack.to_string().replace(&id, "<id>"),
        stream(&c, bobs_made_up)[0]
            .to_string()
            .replace(MADE_UP, "<id>")
    );

    c.update(0, &id, TaskUpdate::InputRequired(one_elicitation()));
    c.update(
        0,
        &id,
        TaskUpdate::Completed(raw(json!({"content": [{"type": "text", "text": "done"}]}))),
    );
    let to_alice: Vec<Value> = stream(&c, alices)
        .into_iter()
        .filter(|m| m["method"] == "notifications/tasks")
        .collect();
    let statuses: Vec<&str> = to_alice
        .iter()
        .map(|m| m["params"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["input_required", "completed"], "{to_alice:?}");
    for m in &to_alice {
        assert_eq!(m["params"]["taskId"], id.as_str());
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 10,
            "{m}"
        );
    }
    for other in [bobs, anonymous_one, bobs_made_up] {
        let messages = stream(&c, other);
        assert_eq!(messages.len(), 1, "only the acknowledgment: {messages:?}");
    }
}

#[test]
fn a_handler_sees_the_callers_principal_headers_and_2025_session() {
    let mut c = Cluster::single();
    let headers = vec![
        ("X-Trace-Id".to_owned(), "t-1".to_owned()),
        ("X-Tenant".to_owned(), "acme".to_owned()),
    ];
    let with_headers = alice().with_headers(headers.clone());

    // 2026: principal and headers, no session.
    let echo = json!({"name": "echo", "arguments": {}});
    let r = c.modern(0, &with_headers, 1, "tools/call", echo.clone());
    assert_eq!(r.status, 200, "{r:?}");
    let seen = c.seen.last().unwrap().clone();
    let caller = seen.caller.expect("a caller");
    assert_eq!(caller.principal.as_ref(), Some(&principal("alice")));
    let expected = mcp_sansio::session::HeaderFields::from(headers.clone());
    assert_eq!(caller.headers.as_ref(), Some(&expected));
    assert_eq!(caller.header("x-trace-id"), Some("t-1"));
    assert_eq!(caller.header("X-TENANT"), Some("acme"));
    assert_eq!(caller.header("Authorization"), None);
    assert_eq!(caller.session_id, None);

    // 2025-11-25: the same, and the session the request came in.
    let sid = c.initialize(0, &with_headers);
    let r = c.legacy(0, &with_headers, &sid, 2, "tools/call", echo.clone());
    assert_eq!(r.status, 200, "{r:?}");
    let caller = c.seen.last().unwrap().caller.clone().expect("a caller");
    assert_eq!(caller.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(caller.header("x-trace-id"), Some("t-1"));
    assert_eq!(caller.principal.as_ref(), Some(&principal("alice")));
    // Each request brings its own: the next one's headers, not the first one's.
    let later = alice().with_headers(vec![("X-Trace-Id".to_owned(), "t-2".to_owned())]);
    c.legacy(0, &later, &sid, 3, "tools/call", echo.clone());
    let caller = c.seen.last().unwrap().caller.clone().unwrap();
    assert_eq!(caller.header("x-trace-id"), Some("t-2"));
    assert_eq!(caller.header("x-tenant"), None);
    assert_eq!(caller.session_id.as_deref(), Some(sid.as_str()));

    // Without a principal or headers a 2026 request has no caller; a 2025 one still has
    // its session.
    c.modern(0, &anonymous(), 4, "tools/call", echo.clone());
    assert!(c.seen.last().unwrap().caller.is_none());
    let sid = c.initialize(0, &anonymous());
    c.legacy(0, &anonymous(), &sid, 5, "tools/call", echo);
    let caller = c.seen.last().unwrap().caller.clone().unwrap();
    assert_eq!(caller.principal, None);
    assert_eq!(caller.headers, None);
    assert_eq!(caller.session_id.as_deref(), Some(sid.as_str()));
}
