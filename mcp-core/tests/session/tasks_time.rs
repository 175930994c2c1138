//! Tasks over time: expiry on the session's clock, the bounded task table, and status
//! notifications (early completion; news after the end is ignored)

use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::time::Duration;

use serde_json::{Value, json};

use mcp_sansio::schema::TaskStatus;
use mcp_sansio::session::{TaskError, TaskOptions, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{CallError, ClientEvent, Limits, OutboundId};
use tasks_kit::{
    Form, call_tool, count_method, inject_json, offered_request, pair_with, response_to, started,
    task_request, task0, tool_result,
};

/// A task with a 2 s ttl and a 10 s poll interval (so no poll happens before it expires)
fn short_lived(form: Form) -> (Pair, OutboundId, mcp_sansio::session::TaskId) {
    let mut pair = tasks_kit::pair(form);
    let call = call_tool(&mut pair, form, "slow");
    let request = offered_request(&mut pair);
    let options = TaskOptions::default()
        .ttl(Duration::from_secs(2))
        .poll_interval(Duration::from_secs(10));
    let task = pair
        .server
        .inbound(request.responder.id())
        .start_task(pair.now, options)
        .unwrap();
    pair.drive();
    pair.client_events();
    (pair, call, task)
}

// --- 6. expiry and the table bound ------------------------------------------------------------

#[test]
fn a_task_expires_at_its_ttl_on_the_fake_clock() {
    for form in Form::BOTH {
        let (mut pair, _, task) = short_lived(form);
        let start = pair.now;
        assert_eq!(
            pair.server.poll_timeout(),
            Some(start + Duration::from_secs(2)),
            "{form:?}: the expiry is a timer of the server"
        );
        // Not early.
        pair.advance(Duration::from_millis(1999));
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
        inject_json(
            &mut pair,
            Side::Server,
            &task_request(form, "g1", "tasks/get", json!({"taskId": task0()})),
        );
        let got = response_to(&pair, &json!("g1")).unwrap();
        assert_eq!(got["result"]["status"], "working", "{form:?}: {got}");

        pair.advance(Duration::from_millis(1));
        assert_eq!(pair.server.task_status(task), None, "{form:?}");
        assert_eq!(pair.server.poll_timeout(), None, "{form:?}");
        assert_eq!(
            pair.server
                .update_task(pair.now, task, TaskUpdate::Completed(tool_result("late"))),
            Err(TaskError::UnknownTask)
        );
        inject_json(
            &mut pair,
            Side::Server,
            &task_request(form, "g2", "tasks/get", json!({"taskId": task0()})),
        );
        let got = response_to(&pair, &json!("g2")).unwrap();
        assert_eq!(got["error"]["code"], -32602, "{form:?}: {got}");
    }
}

#[test]
fn the_clients_poll_of_an_expired_task_ends_its_call_with_the_error() {
    for form in Form::BOTH {
        let (mut pair, call, _) = short_lived(form);
        pair.advance(Duration::from_secs(10));
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/get"),
            1
        );
        let events = pair.client_events();
        match events.as_slice() {
            [
                ClientEvent::Response {
                    id,
                    outcome: Err(CallError::Remote(e)),
                },
            ] if *id == call => {
                assert_eq!(e.code, -32602, "{form:?}");
            }
            other => panic!("{form:?}: {other:?}"),
        }
        // No more polls.
        pair.take_transcript();
        pair.advance(Duration::from_secs(30));
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/get"),
            0
        );
    }
}

#[test]
fn a_waiting_legacy_tasks_result_is_answered_with_an_error_when_the_task_expires() {
    let (mut pair, _, _) = short_lived(Form::Legacy);
    inject_json(
        &mut pair,
        Side::Server,
        &task_request(
            Form::Legacy,
            "r1",
            "tasks/result",
            json!({"taskId": task0()}),
        ),
    );
    assert!(response_to(&pair, &json!("r1")).is_none());
    pair.advance(Duration::from_secs(2));
    let answer = response_to(&pair, &json!("r1")).expect("answered at expiry");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // Exactly once.
    pair.advance(Duration::from_secs(5));
    let answers = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["id"] == "r1")
        .count();
    assert_eq!(answers, 1);
}

#[test]
fn the_legacy_clients_requested_ttl_is_kept_when_the_server_sets_none() {
    let mut pair = tasks_kit::pair(Form::Legacy);
    call_tool(&mut pair, Form::Legacy, "slow"); // asks for 60 s
    let request = offered_request(&mut pair);
    pair.server
        .inbound(request.responder.id())
        .start_task(pair.now, TaskOptions::default())
        .unwrap();
    pair.drive();
    let created = response_to(
        &pair,
        &json!(tasks_kit::last_request(&pair, Side::Client, "tools/call").unwrap()["id"]),
    )
    .unwrap();
    assert_eq!(created["result"]["task"]["ttl"], 60_000, "{created}");
    assert_eq!(
        pair.server.poll_timeout(),
        Some(pair.now + Duration::from_secs(60))
    );
}

#[test]
fn the_task_table_is_bounded_and_evicts_ended_tasks_first() {
    for form in Form::BOTH {
        let mut server = tasks_kit::server_config(form);
        server.limits = Limits::default();
        server.limits.max_tasks = 2;
        let mut pair = pair_with(form, tasks_kit::client_config(form), server);
        let mut tasks = Vec::new();
        for _ in 0..2 {
            call_tool(&mut pair, form, "slow");
            let r = offered_request(&mut pair);
            tasks.push(
                pair.server
                    .inbound(r.responder.id())
                    .start_task(pair.now, TaskOptions::default())
                    .unwrap(),
            );
        }
        let third = call_tool(&mut pair, form, "slow");
        let r = offered_request(&mut pair);
        assert_eq!(
            pair.server
                .inbound(r.responder.id())
                .start_task(pair.now, TaskOptions::default()),
            Err(TaskError::TableFull),
            "{form:?}"
        );
        // Still answerable: the client gets the refusal.
        pair.server
            .respond_error(r.responder, &TaskError::TableFull.to_error());
        pair.drive();
        let events = pair.client_events();
        assert!(
            events.iter().any(|e| matches!(e, ClientEvent::Response { id, outcome: Err(CallError::Remote(_)) } if *id == third)),
            "{form:?}: {events:?}"
        );

        // One ends: the next task evicts it, not the working one.
        pair.server
            .update_task(pair.now, tasks[0], TaskUpdate::Completed(tool_result("a")))
            .unwrap();
        pair.drive();
        call_tool(&mut pair, form, "slow");
        let r = offered_request(&mut pair);
        let fourth = pair
            .server
            .inbound(r.responder.id())
            .start_task(pair.now, TaskOptions::default())
            .unwrap();
        assert_eq!(pair.server.task_status(tasks[0]), None, "{form:?}");
        assert_eq!(pair.server.task_status(tasks[1]), Some(TaskStatus::Working));
        assert_eq!(pair.server.task_status(fourth), Some(TaskStatus::Working));
    }
}

// --- 7. status notifications -------------------------------------------------------------------

/// A status notification of `form` about the first task
fn status_notification(form: Form, status: &str, result: Option<Value>) -> Value {
    let mut params = json!({
        "taskId": task0(), "status": status,
        "createdAt": "2023-11-14T22:13:20.000Z", "lastUpdatedAt": "2023-11-14T22:13:21.000Z",
    });
    let method = match form {
        Form::Modern => {
            params["ttlMs"] = Value::Null;
            if let Some(r) = result {
                params["result"] = r;
            }
            "notifications/tasks"
        }
        Form::Legacy => {
            params["ttl"] = Value::Null;
            "notifications/tasks/status"
        }
    };
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[test]
fn status_news_after_the_end_is_ignored_and_counted() {
    for form in Form::BOTH {
        let (mut pair, _, task) = started(form);
        pair.server
            .update_task(pair.now, task, TaskUpdate::Completed(tool_result("done")))
            .unwrap();
        pair.advance(Duration::from_millis(250));
        let events = pair.client_events();
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, ClientEvent::Response { .. }))
                .count(),
            1,
            "{form:?}: {events:?}"
        );
        let dropped = pair.client.stats().dropped_messages;
        for status in ["working", "failed", "completed"] {
            inject_json(
                &mut pair,
                Side::Client,
                &status_notification(form, status, Some(json!({"content": []}))),
            );
        }
        assert!(pair.client_events().is_empty(), "{form:?}");
        assert_eq!(
            pair.client.stats().dropped_messages,
            dropped + 3,
            "{form:?}"
        );
        // Nothing was sent in reaction (no tasks/result, no poll).
        pair.take_transcript();
        pair.advance(Duration::from_secs(2));
        assert!(
            pair.transcript().iter().all(|(s, _)| *s != Side::Client),
            "{form:?}: {:#?}",
            pair.transcript()
        );
    }
}

#[test]
fn a_completed_status_notification_ends_a_2026_call_before_the_next_poll() {
    let (mut pair, call, _) = started(Form::Modern);
    pair.client_events();
    pair.take_transcript();
    inject_json(
        &mut pair,
        Side::Client,
        &status_notification(
            Form::Modern,
            "completed",
            Some(json!({"content": [{"type": "text", "text": "early"}]})),
        ),
    );
    let events = pair.client_events();
    match events.as_slice() {
        [
            ClientEvent::TaskStatus {
                status: TaskStatus::Completed,
                ..
            },
            ClientEvent::Response { id, outcome: Ok(r) },
        ] if *id == call => {
            let r: Value = serde_json::from_str(r.get()).unwrap();
            assert_eq!(r["content"][0]["text"], "early", "{r}");
        }
        other => panic!("{other:?}"),
    }
    pair.advance(Duration::from_secs(1));
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/get"),
        0
    );
    assert!(pair.client_events().is_empty());
}

#[test]
fn a_terminal_legacy_status_notification_fetches_the_result_at_once() {
    let (mut pair, call, task) = started(Form::Legacy);
    pair.client_events();
    pair.take_transcript();
    pair.server
        .update_task(pair.now, task, TaskUpdate::Completed(tool_result("now")))
        .unwrap();
    // No clock movement: the notification alone leads to tasks/result.
    pair.drive();
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/get"),
        0
    );
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/result"),
        1
    );
    let events = pair.client_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ClientEvent::Response { id, outcome: Ok(_) } if *id == call)),
        "{events:?}"
    );
}

#[test]
fn status_news_about_an_unknown_task_is_dropped() {
    for form in Form::BOTH {
        let mut pair = tasks_kit::pair(form);
        let dropped = pair.client.stats().dropped_messages;
        inject_json(
            &mut pair,
            Side::Client,
            &status_notification(form, "working", None),
        );
        assert!(pair.client_events().is_empty(), "{form:?}");
        assert_eq!(
            pair.client.stats().dropped_messages,
            dropped + 1,
            "{form:?}"
        );
    }
}

#[test]
fn terminal_news_twice_fetches_the_legacy_result_once() {
    let (mut pair, call, task) = started(Form::Legacy);
    pair.client_events();
    pair.pause(Side::Client);
    pair.server
        .update_task(pair.now, task, TaskUpdate::Completed(tool_result("once")))
        .unwrap();
    // A poll crosses the held `completed` notification; both say completed.
    pair.advance(Duration::from_millis(250));
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/get"),
        1
    );
    pair.resume(Side::Client);
    pair.drive();
    pair.advance(Duration::from_secs(1));
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/result"),
        1,
        "{:#?}",
        pair.transcript()
    );
    let events = pair.client_events();
    let done = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Response { id, .. } if *id == call))
        .count();
    assert_eq!(done, 1, "{events:?}");
    let completed = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ClientEvent::TaskStatus {
                    status: TaskStatus::Completed,
                    ..
                }
            )
        })
        .count();
    assert_eq!(completed, 1, "{events:?}");
}
