//! Tasks that need input: 2026 `input_required` read from `tasks/get` and answered with
//! `tasks/update` (by hand or through the client's `provide_input`); 2025-11-25 live
//! requests carrying the related-task `_meta`. Either way the server application gets one
//! `ServerEvent::TaskInput` and the task is working again.

use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use mcp_sansio::schema::{InputResponses, TaskStatus};
use mcp_sansio::session::{InputId, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{ClientEvent, ServerEvent};
use tasks_kit::{
    Form, accept, count_method, inject_json, last_request, response_to, started, task_request,
    task0, tool_result, two_keys, without_meta,
};

/// Answers for the keys given
fn answers(keys: &[(&str, &str)]) -> InputResponses {
    keys.iter()
        .map(|(k, v)| ((*k).to_owned(), accept(k, v)))
        .collect()
}

/// A hand-written `tasks/get` of the first task; returns the server's answer
fn get(pair: &mut Pair, form: Form, id: &str) -> Value {
    let req = task_request(form, id, "tasks/get", json!({"taskId": task0()}));
    inject_json(pair, Side::Server, &req);
    response_to(pair, &json!(id)).expect("tasks/get answered")
}

/// A 2026 task parked in input_required with two keys, the client told so by its poll
fn parked_modern() -> (Pair, mcp_sansio::OutboundId, mcp_sansio::session::TaskId) {
    let (mut pair, call, task) = started(Form::Modern);
    pair.client_events();
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    pair.drive();
    pair.advance(Duration::from_millis(250));
    let events = pair.client_events();
    match events.as_slice() {
        [
            ClientEvent::TaskStatus {
                id: a,
                status: TaskStatus::InputRequired,
                ..
            },
            ClientEvent::InputRequired {
                id: InputId::Retry(b),
                requests,
            },
        ] if *a == call && *b == call => {
            assert_eq!(
                requests.keys().collect::<Vec<_>>(),
                ["color", "name"],
                "{requests:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    (pair, call, task)
}

#[test]
fn modern_tasks_get_lists_the_input_requests_and_the_client_prompts_once() {
    let (mut pair, _, task) = parked_modern();
    assert_eq!(
        pair.server.task_status(task),
        Some(TaskStatus::InputRequired)
    );
    let got = get(&mut pair, Form::Modern, "g1");
    let result = &got["result"];
    assert_eq!(result["status"], "input_required", "{got}");
    assert_eq!(result["resultType"], "complete", "{got}");
    assert_eq!(
        result["inputRequests"]["name"]["method"], "elicitation/create",
        "{got}"
    );
    assert!(result["inputRequests"]["color"].is_object(), "{got}");
    assert!(result.get("requestState").is_none(), "{got}");
    // While its application answers, the client keeps polling (the task may be cancelled,
    // fail or stop needing the input) but prompts only once.
    pair.take_transcript();
    pair.client_events();
    pair.advance(Duration::from_secs(5));
    assert!(count_method(pair.transcript(), Side::Client, "tasks/get") > 0);
    assert!(
        !pair
            .client_events()
            .iter()
            .any(|e| matches!(e, ClientEvent::InputRequired { .. })),
        "no second prompt for the same round"
    );
}

#[test]
fn modern_partial_tasks_update_keeps_input_required_with_the_other_key() {
    let (mut pair, _, task) = parked_modern();
    let update = task_request(
        Form::Modern,
        "u1",
        "tasks/update",
        json!({"taskId": task0(), "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}),
    );
    inject_json(&mut pair, Side::Server, &update);
    let ack = response_to(&pair, &json!("u1")).unwrap();
    assert_eq!(
        without_meta(&ack["result"]),
        json!({"resultType": "complete"}),
        "{ack}"
    );
    assert!(
        pair.server_events().is_empty(),
        "no TaskInput before every key is answered"
    );
    assert_eq!(
        pair.server.task_status(task),
        Some(TaskStatus::InputRequired)
    );
    let got = get(&mut pair, Form::Modern, "g1");
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    let keys: Vec<&String> = got["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["color"], "only the unanswered key: {got}");

    // The second key, plus an unknown one (ignored, same ack).
    let update = task_request(
        Form::Modern,
        "u2",
        "tasks/update",
        json!({"taskId": task0(), "inputResponses": {
            "color": {"action": "accept", "content": {"color": "blue"}},
            "unknown-key": {"action": "accept", "content": {}}
        }}),
    );
    inject_json(&mut pair, Side::Server, &update);
    let ack = response_to(&pair, &json!("u2")).unwrap();
    assert_eq!(
        without_meta(&ack["result"]),
        json!({"resultType": "complete"}),
        "{ack}"
    );
    let events = pair.server_events();
    match events.as_slice() {
        [ServerEvent::TaskInput { task: t, responses }] if *t == task => {
            assert_eq!(responses.keys().collect::<Vec<_>>(), ["color", "name"]);
            assert_eq!(
                serde_json::to_value(&responses["name"]).unwrap()["content"]["name"],
                "Ada"
            );
            assert_eq!(
                serde_json::to_value(&responses["color"]).unwrap()["content"]["color"],
                "blue"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
    let got = get(&mut pair, Form::Modern, "g2");
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert!(got["result"].get("inputRequests").is_none(), "{got}");

    // A late update for the same keys changes nothing and still acks.
    let late = task_request(
        Form::Modern,
        "u3",
        "tasks/update",
        json!({"taskId": task0(), "inputResponses": {"name": {"action": "decline"}}}),
    );
    inject_json(&mut pair, Side::Server, &late);
    let ack = response_to(&pair, &json!("u3")).unwrap();
    assert_eq!(
        without_meta(&ack["result"]),
        json!({"resultType": "complete"}),
        "{ack}"
    );
    assert!(pair.server_events().is_empty());
    assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
}

#[test]
fn modern_provide_input_sends_tasks_update_and_resumes_polling() {
    let (mut pair, call, task) = parked_modern();
    pair.take_transcript();
    pair.client
        .provide_input(
            pair.now,
            InputId::Retry(call),
            answers(&[("name", "Ada"), ("color", "blue")]),
        )
        .unwrap();
    pair.drive();
    let update = last_request(&pair, Side::Client, "tasks/update").expect("tasks/update sent");
    assert_eq!(update["params"]["taskId"], task0(), "{update}");
    assert_eq!(
        update["params"]["inputResponses"]["color"]["content"]["color"], "blue",
        "{update}"
    );
    assert!(update["params"].get("requestState").is_none(), "{update}");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            [mcp_sansio::session::TASKS_EXTENSION],
        json!({}),
        "a task method declares the extension: {update}"
    );
    // The original call is not retried.
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tools/call"),
        0
    );
    let events = pair.server_events();
    assert!(
        matches!(events.as_slice(), [ServerEvent::TaskInput { task: t, responses }]
            if *t == task && responses.len() == 2),
        "{events:?}"
    );
    // Polling resumes: the next poll reports working again.
    pair.advance(Duration::from_millis(250));
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/get"),
        1
    );
    let events = pair.client_events();
    assert!(
        matches!(events.as_slice(), [ClientEvent::TaskStatus { id, status: TaskStatus::Working, .. }] if *id == call),
        "{events:?}"
    );
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::Completed(tool_result("Ada likes blue")),
        )
        .unwrap();
    pair.advance(Duration::from_millis(250));
    let events = pair.client_events();
    let responses: Vec<&ClientEvent> = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Response { .. }))
        .collect();
    assert_eq!(responses.len(), 1, "{events:?}");
    assert!(
        matches!(responses[0], ClientEvent::Response { id, outcome: Ok(r) } if *id == call && r.get().contains("Ada likes blue")),
        "{events:?}"
    );
}

#[test]
fn modern_partial_provide_input_surfaces_the_remaining_key_again() {
    let (mut pair, call, task) = parked_modern();
    pair.client
        .provide_input(pair.now, InputId::Retry(call), answers(&[("name", "Ada")]))
        .unwrap();
    pair.drive();
    assert!(pair.server_events().is_empty());
    assert_eq!(
        pair.server.task_status(task),
        Some(TaskStatus::InputRequired)
    );
    pair.advance(Duration::from_millis(250));
    let events = pair.client_events();
    match events.as_slice() {
        [
            ClientEvent::InputRequired {
                id: InputId::Retry(id),
                requests,
            },
        ] if *id == call => {
            assert_eq!(requests.keys().collect::<Vec<_>>(), ["color"]);
        }
        other => panic!("{other:?}"),
    }
    pair.client
        .provide_input(pair.now, InputId::Retry(call), answers(&[("color", "red")]))
        .unwrap();
    pair.drive();
    let events = pair.server_events();
    assert!(
        matches!(events.as_slice(), [ServerEvent::TaskInput { responses, .. }] if responses.len() == 2),
        "{events:?}"
    );
}

#[test]
fn legacy_input_becomes_live_requests_with_the_related_task_meta() {
    let (mut pair, call, task) = started(Form::Legacy);
    pair.client_events();
    pair.take_transcript();
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    pair.drive();
    let elicitations: Vec<Value> = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["method"] == "elicitation/create")
        .collect();
    assert_eq!(elicitations.len(), 2, "{:#?}", pair.transcript());
    for e in &elicitations {
        assert_eq!(
            e["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            task0(),
            "{e}"
        );
        assert!(e["params"]["requestedSchema"].is_object(), "{e}");
    }
    let status = last_request(&pair, Side::Server, "notifications/tasks/status").unwrap();
    assert_eq!(status["params"]["status"], "input_required", "{status}");

    let mut live = Vec::new();
    let mut statuses = Vec::new();
    for event in pair.client_events() {
        match event {
            ClientEvent::InputRequired {
                id: InputId::Live(id),
                requests,
            } => live.push((id, requests)),
            ClientEvent::TaskStatus { id, status, .. } if id == call => statuses.push(status),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(statuses, [TaskStatus::InputRequired]);
    assert_eq!(live.len(), 2);
    // Answer the first: the task still waits.
    let (first, requests) = live.remove(0);
    let field = if format!("{requests:?}").contains("Your name") {
        "name"
    } else {
        "color"
    };
    let mut one = BTreeMap::new();
    one.insert("x".to_owned(), accept(field, "A"));
    pair.client
        .provide_input(pair.now, InputId::Live(first), one)
        .unwrap();
    pair.drive();
    assert!(pair.server_events().is_empty());
    assert_eq!(
        pair.server.task_status(task),
        Some(TaskStatus::InputRequired)
    );
    let (second, requests) = live.remove(0);
    let field2 = if format!("{requests:?}").contains("Your name") {
        "name"
    } else {
        "color"
    };
    assert_ne!(field, field2);
    let mut one = BTreeMap::new();
    one.insert("x".to_owned(), accept(field2, "B"));
    pair.client
        .provide_input(pair.now, InputId::Live(second), one)
        .unwrap();
    pair.drive();
    let events = pair.server_events();
    match events.as_slice() {
        [ServerEvent::TaskInput { task: t, responses }] if *t == task => {
            assert_eq!(responses.keys().collect::<Vec<_>>(), ["color", "name"]);
            let name = serde_json::to_value(&responses["name"]).unwrap();
            assert!(name["content"]["name"].is_string(), "{name}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
    let status = last_request(&pair, Side::Server, "notifications/tasks/status").unwrap();
    assert_eq!(status["params"]["status"], "working", "{status}");
    let events = pair.client_events();
    assert!(
        matches!(
            events.as_slice(),
            [ClientEvent::TaskStatus {
                status: TaskStatus::Working,
                ..
            }]
        ),
        "{events:?}"
    );
}

#[test]
fn legacy_live_input_is_withdrawn_when_the_task_ends() {
    let (mut pair, call, task) = started(Form::Legacy);
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    pair.drive();
    pair.take_transcript();
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::Completed(tool_result("no input needed")),
        )
        .unwrap();
    pair.drive();
    assert_eq!(
        count_method(pair.transcript(), Side::Server, "notifications/cancelled"),
        2,
        "{:#?}",
        pair.transcript()
    );
    let events = pair.client_events();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ClientEvent::Response { id, outcome: Ok(_) } if *id == call))
            .count(),
        1,
        "{events:?}"
    );
}

#[test]
fn legacy_live_input_is_withdrawn_when_the_task_goes_back_to_working() {
    let (mut pair, _, task) = started(Form::Legacy);
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    pair.drive();
    let live: Vec<mcp_sansio::InboundId> = pair
        .client_events()
        .into_iter()
        .filter_map(|e| match e {
            ClientEvent::InputRequired {
                id: InputId::Live(id),
                ..
            } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(live.len(), 2);
    pair.take_transcript();
    // The handler no longer needs the input.
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::Working(Some("went on without".into())),
        )
        .unwrap();
    pair.drive();
    assert_eq!(
        count_method(pair.transcript(), Side::Server, "notifications/cancelled"),
        2,
        "{:#?}",
        pair.transcript()
    );
    // The client's application hears that the live requests were cancelled.
    let cancelled = pair
        .client_events()
        .into_iter()
        .filter(|e| matches!(e, ClientEvent::Cancelled { id, .. } if live.contains(id)))
        .count();
    assert_eq!(cancelled, 2);
    // Asking again sends only the new requests.
    pair.take_transcript();
    let mut again = BTreeMap::new();
    again.insert("name".to_owned(), tasks_kit::elicit("name"));
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(again))
        .unwrap();
    pair.drive();
    assert_eq!(
        count_method(pair.transcript(), Side::Server, "elicitation/create"),
        1
    );
    let id = pair
        .client_events()
        .into_iter()
        .find_map(|e| match e {
            ClientEvent::InputRequired {
                id: InputId::Live(id),
                ..
            } => Some(id),
            _ => None,
        })
        .unwrap();
    pair.client
        .provide_input(pair.now, InputId::Live(id), answers(&[("name", "Ada")]))
        .unwrap();
    pair.drive();
    let events = pair.server_events();
    assert!(
        matches!(events.as_slice(), [ServerEvent::TaskInput { responses, .. }]
            if responses.keys().collect::<Vec<_>>() == ["name"]),
        "{events:?}"
    );
}

#[test]
fn legacy_input_asked_again_replaces_the_outstanding_requests() {
    let (mut pair, _, task) = started(Form::Legacy);
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(two_keys()))
        .unwrap();
    pair.drive();
    pair.client_events();
    pair.take_transcript();
    let mut one = BTreeMap::new();
    one.insert("name".to_owned(), tasks_kit::elicit("name"));
    pair.server
        .update_task(pair.now, task, TaskUpdate::InputRequired(one))
        .unwrap();
    pair.drive();
    assert_eq!(
        count_method(pair.transcript(), Side::Server, "notifications/cancelled"),
        2,
        "the first round is withdrawn: {:#?}",
        pair.transcript()
    );
    assert_eq!(
        count_method(pair.transcript(), Side::Server, "elicitation/create"),
        1
    );
}
