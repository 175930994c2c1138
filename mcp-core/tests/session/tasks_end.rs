//! How task-backed calls end besides success: tool errors (`isError`), protocol errors
//! (`Failed`), and cancellation by the client (`tasks/cancel`), including races with the
//! server finishing first

use crate::common;
use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::time::Duration;

use serde_json::{Value, json};

use common::raw;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::TaskStatus;
use mcp_sansio::session::{TaskError, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{CallError, ClientEvent, OutboundId, ServerEvent};
use tasks_kit::{
    Form, count_method, inject_json, last_request, response_to, started, task_request, task0,
    tool_result, without_meta,
};

fn tool_error() -> Box<serde_json::value::RawValue> {
    raw(json!({"content": [{"type": "text", "text": "disk full"}], "isError": true}))
}

/// The client's responses for `call` among `events`
fn responses(
    events: &[ClientEvent],
    call: OutboundId,
) -> Vec<&Result<Box<serde_json::value::RawValue>, CallError>> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Response { id, outcome } if *id == call => Some(outcome),
            _ => None,
        })
        .collect()
}

/// Runs the pair until the client's call ends (polls included); returns every client event
fn finish(pair: &mut Pair) -> Vec<ClientEvent> {
    pair.drive();
    pair.advance(Duration::from_millis(250));
    pair.client_events()
}

// --- 4. tool errors and failures ------------------------------------------------------------

#[test]
fn tool_error_is_completed_in_2026_and_failed_in_2025_11_25() {
    for form in Form::BOTH {
        let (mut pair, call, task) = started(form);
        pair.client_events();
        pair.take_transcript();
        pair.server
            .update_task(pair.now, task, TaskUpdate::Completed(tool_error()))
            .unwrap();
        let expected = match form {
            Form::Modern => TaskStatus::Completed,
            Form::Legacy => TaskStatus::Failed,
        };
        assert_eq!(pair.server.task_status(task), Some(expected), "{form:?}");
        let events = finish(&mut pair);
        assert!(
            events.iter().any(
                |e| matches!(e, ClientEvent::TaskStatus { status, .. } if *status == expected)
            ),
            "{form:?}: {events:?}"
        );
        let outcomes = responses(&events, call);
        assert_eq!(outcomes.len(), 1, "{form:?}: {events:?}");
        let result: Value = serde_json::from_str(outcomes[0].as_ref().unwrap().get()).unwrap();
        assert_eq!(result["isError"], true, "{form:?}: {result}");
        assert_eq!(result["content"][0]["text"], "disk full", "{form:?}");
        match form {
            Form::Modern => {
                let answer = pair
                    .sent_by(Side::Server)
                    .into_iter()
                    .rev()
                    .find(|m| m["result"]["taskId"] == task0())
                    .unwrap();
                assert_eq!(answer["result"]["status"], "completed", "{answer}");
                assert_eq!(answer["result"]["result"]["isError"], true, "{answer}");
                assert!(answer["result"].get("error").is_none(), "{answer}");
            }
            Form::Legacy => {
                let status =
                    last_request(&pair, Side::Server, "notifications/tasks/status").unwrap();
                assert_eq!(status["params"]["status"], "failed", "{status}");
                // tasks/result still returns the tool's result.
                let asked = last_request(&pair, Side::Client, "tasks/result").unwrap();
                let answer = response_to(&pair, &asked["id"]).unwrap();
                assert_eq!(answer["result"]["isError"], true, "{answer}");
                assert!(answer.get("error").is_none(), "{answer}");
            }
        }
    }
}

#[test]
fn failed_task_ends_the_call_with_the_remote_error() {
    for form in Form::BOTH {
        let (mut pair, call, task) = started(form);
        pair.client_events();
        pair.take_transcript();
        let error = ErrorObject::new(-32_050, "the backend refused");
        pair.server
            .update_task(pair.now, task, TaskUpdate::Failed(error))
            .unwrap();
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Failed));
        let events = finish(&mut pair);
        let outcomes = responses(&events, call);
        assert_eq!(outcomes.len(), 1, "{form:?}: {events:?}");
        match outcomes[0] {
            Err(CallError::Remote(e)) => {
                assert_eq!(e.code, -32_050, "{form:?}");
                assert_eq!(e.message, "the backend refused", "{form:?}");
            }
            other => panic!("{form:?}: {other:?}"),
        }
        if form == Form::Modern {
            inject_json(
                &mut pair,
                Side::Server,
                &task_request(form, "g", "tasks/get", json!({"taskId": task0()})),
            );
            let got = response_to(&pair, &json!("g")).unwrap();
            let r = &got["result"];
            assert_eq!(r["status"], "failed", "{got}");
            assert_eq!(
                r["error"],
                json!({"code": -32050, "message": "the backend refused"})
            );
            assert!(r.get("result").is_none(), "{got}");
        }
    }
}

// --- 5. cancellation ------------------------------------------------------------------------

#[test]
fn cancel_sends_tasks_cancel_and_ends_the_call_at_once() {
    for form in Form::BOTH {
        let (mut pair, call, task) = started(form);
        pair.client_events();
        pair.take_transcript();
        pair.client
            .cancel(pair.now, call, Some("changed my mind"))
            .unwrap();
        // At once, before anything moves.
        let mut events = Vec::new();
        while let Some(e) = pair.client.poll_event() {
            events.push(e);
        }
        assert!(
            matches!(events.as_slice(), [ClientEvent::Response { id, outcome: Err(CallError::Cancelled) }] if *id == call),
            "{form:?}: {events:?}"
        );
        pair.drive();
        let client_sent = pair.sent_by(Side::Client);
        assert_eq!(client_sent.len(), 1, "{form:?}: {client_sent:#?}");
        assert_eq!(client_sent[0]["method"], "tasks/cancel", "{form:?}");
        assert_eq!(client_sent[0]["params"]["taskId"], task0(), "{form:?}");
        let ack = response_to(&pair, &client_sent[0]["id"]).unwrap();
        match form {
            Form::Modern => {
                assert_eq!(
                    without_meta(&ack["result"]),
                    json!({"resultType": "complete"})
                );
            }
            Form::Legacy => assert_eq!(ack["result"]["status"], "cancelled", "{ack}"),
        }
        let server_events = pair.server_events();
        assert!(
            matches!(server_events.as_slice(), [ServerEvent::TaskCancelled { task: t }] if *t == task),
            "{form:?}: {server_events:?}"
        );
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Cancelled));
        assert_eq!(
            pair.server
                .update_task(pair.now, task, TaskUpdate::Completed(tool_result("x"))),
            Err(TaskError::Terminal(TaskStatus::Cancelled))
        );
        // The ack and any status news are dropped: no second response, no more polls.
        pair.take_transcript();
        pair.advance(Duration::from_secs(3));
        assert!(pair.client_events().is_empty(), "{form:?}");
        assert!(pair.sent_by(Side::Client).is_empty(), "{form:?}");
        assert_eq!(pair.client.outbound_in_flight(), 0);
        assert_eq!(pair.client.stats().unknown_responses, 0, "{form:?}");
    }
}

#[test]
fn cancel_racing_completion_gives_one_response() {
    for form in Form::BOTH {
        let (mut pair, call, task) = started(form);
        pair.client_events();
        // The server finishes; its news is held on the way to the client.
        pair.pause(Side::Client);
        pair.server
            .update_task(pair.now, task, TaskUpdate::Completed(tool_result("raced")))
            .unwrap();
        pair.drive();
        pair.take_transcript();
        pair.client.cancel(pair.now, call, None).unwrap();
        pair.drive();
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/cancel"),
            1
        );
        let cancel = last_request(&pair, Side::Client, "tasks/cancel").unwrap();
        let answer = response_to(&pair, &cancel["id"]).unwrap();
        match form {
            Form::Modern => {
                assert_eq!(
                    without_meta(&answer["result"]),
                    json!({"resultType": "complete"})
                );
            }
            Form::Legacy => {
                assert_eq!(answer["error"]["code"], -32602, "{answer}");
            }
        }
        assert!(
            pair.server_events().is_empty(),
            "no TaskCancelled for a finished task"
        );
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Completed));
        let dropped = pair.client.stats().dropped_messages;
        pair.resume(Side::Client);
        pair.drive();
        if form == Form::Legacy {
            // The held `completed` status notification names a task no longer followed.
            assert_eq!(pair.client.stats().dropped_messages, dropped + 1);
        }
        pair.advance(Duration::from_secs(2));
        let events = pair.client_events();
        let outcomes = responses(&events, call);
        assert_eq!(outcomes.len(), 1, "{form:?}: {events:?}");
        assert!(
            matches!(outcomes[0], Err(CallError::Cancelled)),
            "{form:?}: {events:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ClientEvent::TaskStatus { .. })),
            "{form:?}: {events:?}"
        );
    }
}

#[test]
fn cancel_while_a_poll_is_in_flight_drops_the_late_answer() {
    let (mut pair, call, task) = started(Form::Modern);
    pair.client_events();
    pair.pause(Side::Client);
    pair.server
        .update_task(pair.now, task, TaskUpdate::Completed(tool_result("late")))
        .unwrap();
    // The poll goes out and its answer (completed, with the result) is held.
    pair.advance(Duration::from_millis(250));
    assert_eq!(
        count_method(pair.transcript(), Side::Client, "tasks/get"),
        1
    );
    pair.client.cancel(pair.now, call, None).unwrap();
    pair.resume(Side::Client);
    pair.drive();
    let events = pair.client_events();
    let outcomes = responses(&events, call);
    assert_eq!(outcomes.len(), 1, "{events:?}");
    assert!(
        matches!(outcomes[0], Err(CallError::Cancelled)),
        "{events:?}"
    );
}

#[test]
fn cancelling_a_terminal_task_acks_in_2026_and_is_invalid_params_in_2025_11_25() {
    for form in Form::BOTH {
        let (mut pair, _, task) = started(form);
        pair.server
            .update_task(pair.now, task, TaskUpdate::Completed(tool_result("done")))
            .unwrap();
        pair.drive();
        pair.server_events();
        inject_json(
            &mut pair,
            Side::Server,
            &task_request(form, "c1", "tasks/cancel", json!({"taskId": task0()})),
        );
        let answer = response_to(&pair, &json!("c1")).unwrap();
        match form {
            Form::Modern => {
                assert_eq!(
                    without_meta(&answer["result"]),
                    json!({"resultType": "complete"})
                );
            }
            Form::Legacy => assert_eq!(answer["error"]["code"], -32602, "{answer}"),
        }
        assert!(pair.server_events().is_empty(), "{form:?}");
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Completed));
    }
}

#[test]
fn cancel_while_2026_input_is_awaited_sends_tasks_cancel() {
    let (mut pair, call, task) = started(Form::Modern);
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::InputRequired(tasks_kit::two_keys()),
        )
        .unwrap();
    pair.advance(Duration::from_millis(250));
    assert!(
        pair.client_events()
            .iter()
            .any(|e| matches!(e, ClientEvent::InputRequired { .. }))
    );
    pair.take_transcript();
    pair.client.cancel(pair.now, call, None).unwrap();
    pair.drive();
    let sent = pair.sent_by(Side::Client);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    assert_eq!(sent[0]["method"], "tasks/cancel");
    assert_eq!(pair.server.task_status(task), Some(TaskStatus::Cancelled));
    let events = pair.client_events();
    assert_eq!(responses(&events, call).len(), 1, "{events:?}");
    // The input can no longer be given.
    assert!(
        pair.client
            .provide_input(
                pair.now,
                mcp_sansio::InputId::Retry(call),
                std::collections::BTreeMap::new()
            )
            .is_err()
    );
}
