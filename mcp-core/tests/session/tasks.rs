//! Tasks, end to end on a `Pair`: a task-backed `tools/call` looks like one slow call to the
//! client (polling, `tasks/result` in 2025-11-25, inline results in 2026) while the server
//! application drives the task with `start_task` / `update_task`; the status machine and its
//! errors

use crate::common;
use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::schema::TaskStatus;
use mcp_sansio::session::{TASKS_EXTENSION, TaskError, TaskOptions, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{ClientEvent, EraMode, RequestOptions, ServerSession, jsonrpc};
use tasks_kit::{
    ANCHOR_MS, Form, SEED, call_tool, count_method, offered_request, pair, response_to, started,
    tool_result,
};

// --- 1. end to end -----------------------------------------------------------------------

#[test]
fn create_task_result_has_the_shape_of_each_form() {
    for form in Form::BOTH {
        let (pair, _, _) = started(form);
        let created = pair
            .sent_by(Side::Server)
            .into_iter()
            .find(|m| m.get("result").is_some())
            .expect("the server answered the call");
        let result = &created["result"];
        let expected_created = "2023-11-14T22:13:20.000Z";
        assert_eq!(ANCHOR_MS, 1_700_000_000_000);
        let task = match form {
            Form::Modern => {
                assert_eq!(result["resultType"], "task", "{result}");
                assert!(result.get("task").is_none(), "flat, no wrapper: {result}");
                for absent in ["result", "error", "inputRequests", "requestState", "ttl"] {
                    assert!(result.get(absent).is_none(), "no {absent}: {result}");
                }
                assert!(result.get("pollInterval").is_none(), "{result}");
                assert_eq!(result["ttlMs"], 60_000, "{result}");
                assert_eq!(result["pollIntervalMs"], 250, "{result}");
                result.clone()
            }
            Form::Legacy => {
                assert!(result.get("resultType").is_none(), "{result}");
                let task = result["task"].clone();
                assert_eq!(task["ttl"], 60_000, "{result}");
                assert_eq!(task["pollInterval"], 250, "{result}");
                assert!(task.get("ttlMs").is_none(), "{result}");
                assert!(task.get("pollIntervalMs").is_none(), "{result}");
                task
            }
        };
        assert_eq!(
            task["taskId"],
            mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, 0),
            "{task}"
        );
        assert_eq!(task["status"], "working", "{task}");
        assert_eq!(task["createdAt"], expected_created, "{task}");
        assert_eq!(task["lastUpdatedAt"], expected_created, "{task}");
    }
}

#[test]
fn task_backed_call_is_one_slow_call_for_the_client() {
    for form in Form::BOTH {
        let (mut pair, call, task) = started(form);
        let events = pair.client_events();
        assert!(
            matches!(
                events.as_slice(),
                [ClientEvent::TaskStatus { id, status: TaskStatus::Working, .. }] if *id == call
            ),
            "{form:?}: {events:?}"
        );
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
        pair.take_transcript();

        // Polls at the server's interval: 250, 500, 750, 1000 ms.
        pair.advance(Duration::from_millis(1000));
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/get"),
            4,
            "{form:?}: {:#?}",
            pair.transcript()
        );
        for get in pair.sent_by(Side::Client) {
            assert_eq!(
                get["params"]["taskId"],
                mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, 0),
                "{get}"
            );
        }
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/result"),
            0,
            "{form:?}: no tasks/result while working"
        );
        // Same status: nothing new for the application.
        let events = pair.client_events();
        assert!(events.is_empty(), "{form:?}: {events:?}");
        pair.take_transcript();

        pair.server
            .update_task(pair.now, task, TaskUpdate::Completed(tool_result("done")))
            .unwrap();
        pair.drive();
        if form == Form::Modern {
            // No status notification in 2026: the next poll brings the result.
            assert!(pair.client_events().is_empty());
            pair.advance(Duration::from_millis(250));
        }
        let events = pair.client_events();
        match events.as_slice() {
            [
                ClientEvent::TaskStatus {
                    id: a,
                    status: TaskStatus::Completed,
                    ..
                },
                ClientEvent::Response {
                    id: b,
                    outcome: Ok(result),
                },
            ] if *a == call && *b == call => {
                let result: Value = serde_json::from_str(result.get()).unwrap();
                assert_eq!(result["content"][0]["text"], "done", "{result}");
                let related = &result["_meta"]["io.modelcontextprotocol/related-task"];
                match form {
                    Form::Modern => assert!(related.is_null(), "{result}"),
                    Form::Legacy => {
                        assert_eq!(
                            related["taskId"],
                            mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, 0),
                            "{result}"
                        );
                    }
                }
            }
            other => panic!("{form:?}: {other:?}"),
        }
        let results = count_method(pair.transcript(), Side::Client, "tasks/result");
        assert_eq!(results, usize::from(form == Form::Legacy), "{form:?}");
        pair.take_transcript();

        // The call is over: no more polls, no more events.
        pair.advance(Duration::from_secs(5));
        assert!(
            pair.transcript().iter().all(|(s, _)| *s != Side::Client),
            "{form:?}: {:#?}",
            pair.transcript()
        );
        assert!(pair.client_events().is_empty());
        assert_eq!(pair.client.outbound_in_flight(), 0);
    }
}

#[test]
fn legacy_tasks_result_is_held_until_the_task_ends() {
    let (mut pair, _, task) = started(Form::Legacy);
    let task_id = mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, 0);
    pair.take_transcript();
    pair.inject(
        Side::Server,
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": "held", "method": "tasks/result",
                   "params": {"taskId": task_id}})
        )
        .as_bytes(),
    );
    pair.advance(Duration::from_millis(600));
    assert!(
        response_to(&pair, &json!("held")).is_none(),
        "answered only once terminal: {:#?}",
        pair.transcript()
    );
    pair.server
        .update_task(pair.now, task, TaskUpdate::Completed(tool_result("late")))
        .unwrap();
    pair.drive();
    let answer = response_to(&pair, &json!("held")).expect("answered at completion");
    assert_eq!(answer["result"]["content"][0]["text"], "late", "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id,
        "{answer}"
    );
    // And a status notification went out with the terminal status.
    let status: Vec<Value> = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .collect();
    assert_eq!(status.len(), 1, "{status:#?}");
    assert_eq!(status[0]["params"]["status"], "completed");
    assert_eq!(status[0]["params"]["taskId"], task_id);
}

// --- 2. the status machine ----------------------------------------------------------------

#[test]
fn working_input_required_working_completed_is_allowed_then_terminal() {
    for form in Form::BOTH {
        let (mut pair, _, task) = started(form);
        let s = &mut pair.server;
        let now = pair.now;
        s.update_task(now, task, TaskUpdate::Working(Some("step 1".into())))
            .unwrap();
        assert_eq!(s.task_status(task), Some(TaskStatus::Working));
        s.update_task(now, task, TaskUpdate::InputRequired(tasks_kit::two_keys()))
            .unwrap();
        assert_eq!(s.task_status(task), Some(TaskStatus::InputRequired));
        s.update_task(now, task, TaskUpdate::Working(None)).unwrap();
        assert_eq!(s.task_status(task), Some(TaskStatus::Working));
        s.update_task(now, task, TaskUpdate::Completed(tool_result("ok")))
            .unwrap();
        assert_eq!(s.task_status(task), Some(TaskStatus::Completed));

        for update in [
            TaskUpdate::Working(None),
            TaskUpdate::InputRequired(tasks_kit::two_keys()),
            TaskUpdate::Completed(tool_result("again")),
            TaskUpdate::Failed(jsonrpc::ErrorObject::internal_error("late")),
        ] {
            assert_eq!(
                s.update_task(now, task, update),
                Err(TaskError::Terminal(TaskStatus::Completed)),
                "{form:?}"
            );
        }
        assert_eq!(s.task_status(task), Some(TaskStatus::Completed));
    }
}

#[test]
fn failed_and_cancelled_are_terminal_too() {
    let (mut pair, _, task) = started(Form::Modern);
    let now = pair.now;
    pair.server
        .update_task(
            now,
            task,
            TaskUpdate::Failed(jsonrpc::ErrorObject::internal_error("boom")),
        )
        .unwrap();
    assert_eq!(
        pair.server
            .update_task(now, task, TaskUpdate::Working(None)),
        Err(TaskError::Terminal(TaskStatus::Failed))
    );
}

#[test]
fn a_result_that_is_not_an_object_is_refused_and_changes_nothing() {
    let (mut pair, _, task) = started(Form::Modern);
    let now = pair.now;
    assert_eq!(
        pair.server
            .update_task(now, task, TaskUpdate::Completed(raw(json!([1, 2])))),
        Err(TaskError::ResultNotAnObject)
    );
    assert_eq!(pair.server.task_status(task), Some(TaskStatus::Working));
}

#[test]
fn unknown_task_is_refused() {
    // A task id of another session names nothing here.
    let (_, _, task) = started(Form::Modern);
    let mut other = ServerSession::new(Arc::new(tasks_kit::server_config(Form::Modern)), origin());
    assert_eq!(
        other.update_task(origin(), task, TaskUpdate::Working(None)),
        Err(TaskError::UnknownTask)
    );
    assert_eq!(other.task_status(task), None);
}

#[test]
fn start_task_without_an_offer_is_refused_and_the_request_stays_answerable() {
    for form in Form::BOTH {
        let mut pair = pair(form);
        // 2025-11-25: no `as_task`; 2026: this request declares no extension.
        let mut options = RequestOptions::default();
        if form == Form::Modern {
            pair = tasks_kit::pair_with(
                form,
                Pair::client_config(EraMode::Modern),
                tasks_kit::server_config(form),
            );
        }
        options.timeout = Some(Some(Duration::from_secs(30)));
        let call = pair
            .client
            .send_request_raw(
                pair.now,
                "tools/call",
                Some(raw(json!({"name": "slow"}))),
                options,
            )
            .unwrap();
        let request = offered_request(&mut pair);
        assert!(!request.task_offered, "{form:?}");
        let responder = request.responder;
        assert_eq!(
            pair.server
                .inbound(responder.id())
                .start_task(pair.now, TaskOptions::default()),
            Err(TaskError::NotOffered),
            "{form:?}"
        );
        pair.drive();
        assert!(
            response_to(&pair, &call_wire_id(&pair)).is_none(),
            "{form:?}: nothing answered yet"
        );
        pair.server
            .respond_raw(responder, &tool_result("direct"))
            .unwrap();
        pair.drive();
        let events = pair.client_events();
        match events.as_slice() {
            [ClientEvent::Response { id, outcome: Ok(r) }] if *id == call => {
                assert!(r.get().contains("direct"), "{r}");
            }
            other => panic!("{form:?}: {other:?}"),
        }
    }
}

/// The wire id of the client's tools/call (the first request it sent after setup)
fn call_wire_id(pair: &Pair) -> Value {
    pair.sent_by(Side::Client)
        .into_iter()
        .find(|m| m["method"] == "tools/call")
        .map(|m| m["id"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn modern_task_needs_the_extension_on_both_sides_and_only_for_tools_call() {
    // Server without the extension: a client that declares it is still not offered a task.
    let mut server = Pair::server_config();
    server.task_id_seed = SEED;
    let mut pair =
        tasks_kit::pair_with(Form::Modern, tasks_kit::client_config(Form::Modern), server);
    call_tool(&mut pair, Form::Modern, "slow");
    assert!(!offered_request(&mut pair).task_offered);

    // Both declare it, but only tools/call may become a task.
    let mut pair = pair_modern();
    pair.client
        .send_request_raw(pair.now, "prompts/list", None, RequestOptions::default())
        .unwrap();
    assert!(!offered_request(&mut pair).task_offered);
    call_tool(&mut pair, Form::Modern, "slow");
    assert!(offered_request(&mut pair).task_offered);
}

fn pair_modern() -> Pair {
    pair(Form::Modern)
}

#[test]
fn not_offered_maps_to_missing_capability_naming_the_extension() {
    let error = TaskError::NotOffered.to_error();
    assert_eq!(error.code, -32021);
    let data: Value = serde_json::from_str(error.data.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        data["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
        json!({}),
        "{data}"
    );
    // Other task errors are internal errors.
    assert_eq!(TaskError::TableFull.to_error().code, -32603);
}

#[test]
fn legacy_as_task_needs_the_servers_tasks_capability() {
    let mut pair = tasks_kit::pair_with(
        Form::Legacy,
        tasks_kit::client_config(Form::Legacy),
        Pair::server_config(),
    );
    let sent = pair.client.send_request_raw(
        pair.now,
        "tools/call",
        Some(raw(json!({"name": "slow"}))),
        RequestOptions::default().as_task(Some(Duration::from_secs(10))),
    );
    assert!(
        matches!(sent, Err(mcp_sansio::SendError::MissingCapability { capability, .. })
            if capability == "tasks.requests.tools.call"),
        "{sent:?}"
    );
}

#[test]
fn after_start_task_the_responder_is_spent() {
    for form in Form::BOTH {
        let mut pair = pair(form);
        call_tool(&mut pair, form, "slow");
        let request = offered_request(&mut pair);
        pair.server
            .inbound(request.responder.id())
            .start_task(pair.now, TaskOptions::default())
            .unwrap();
        assert_eq!(pair.server.inbound_in_flight(), 0, "{form:?}");
        // A second start or a direct answer changes nothing on the wire.
        assert_eq!(
            pair.server
                .inbound(request.responder.id())
                .start_task(pair.now, TaskOptions::default()),
            Err(TaskError::NotInFlight)
        );
        pair.server
            .respond_raw(request.responder, &tool_result("twice"))
            .unwrap();
        pair.drive();
        let answers: Vec<Value> = pair
            .sent_by(Side::Server)
            .into_iter()
            .filter(|m| m.get("result").is_some() || m.get("error").is_some())
            .collect();
        assert_eq!(answers.len(), 1, "{form:?}: {answers:#?}");
        assert!(!answers[0].to_string().contains("twice"), "{answers:#?}");
    }
}

#[test]
fn an_offered_task_answered_directly_is_a_plain_response() {
    for form in Form::BOTH {
        let mut pair = pair(form);
        let call = call_tool(&mut pair, form, "quick");
        let request = offered_request(&mut pair);
        assert!(request.task_offered);
        pair.server
            .respond_raw(request.responder, &tool_result("at once"))
            .unwrap();
        pair.drive();
        let events = pair.client_events();
        match events.as_slice() {
            [ClientEvent::Response { id, outcome: Ok(r) }] if *id == call => {
                assert!(r.get().contains("at once"), "{form:?}: {r}");
            }
            other => panic!("{form:?}: {other:?}"),
        }
        pair.advance(Duration::from_secs(3));
        assert_eq!(
            count_method(pair.transcript(), Side::Client, "tasks/get"),
            0
        );
    }
}

#[test]
fn a_task_backed_call_past_its_cap_times_out_and_cancels_the_task() {
    for form in Form::BOTH {
        let mut pair = pair(form);
        let mut options = RequestOptions::default().max_total(Duration::from_millis(900));
        if form == Form::Legacy {
            options = options.as_task(None);
        }
        let call = pair
            .client
            .send_request_raw(
                pair.now,
                "tools/call",
                Some(raw(json!({"name": "slow"}))),
                options,
            )
            .unwrap();
        let request = offered_request(&mut pair);
        let task = pair
            .server
            .inbound(request.responder.id())
            .start_task(
                pair.now,
                TaskOptions::default().poll_interval(Duration::from_millis(250)),
            )
            .unwrap();
        pair.drive();
        pair.client_events();
        pair.advance(Duration::from_secs(2));
        let events = pair.client_events();
        assert!(
            matches!(events.as_slice(), [ClientEvent::Response { id, outcome: Err(mcp_sansio::CallError::TimedOut) }] if *id == call),
            "{form:?}: {events:?}"
        );
        // Polls at 250, 500, 750 ms; at 900 ms the call ends with tasks/cancel.
        let t = pair.transcript();
        assert_eq!(count_method(t, Side::Client, "tasks/get"), 3, "{form:?}");
        assert_eq!(count_method(t, Side::Client, "tasks/cancel"), 1, "{form:?}");
        assert_eq!(
            count_method(t, Side::Client, "notifications/cancelled"),
            0,
            "{form:?}"
        );
        assert_eq!(pair.server.task_status(task), Some(TaskStatus::Cancelled));
    }
}

#[test]
fn a_server_cannot_make_the_client_poll_faster_than_every_10_ms() {
    for form in Form::BOTH {
        let mut pair = pair(form);
        let mut options = RequestOptions::default().max_total(Duration::from_millis(95));
        if form == Form::Legacy {
            options = options.as_task(None);
        }
        pair.client
            .send_request_raw(
                pair.now,
                "tools/call",
                Some(raw(json!({"name": "slow"}))),
                options,
            )
            .unwrap();
        let request = offered_request(&mut pair);
        pair.server
            .inbound(request.responder.id())
            .start_task(
                pair.now,
                TaskOptions::default().poll_interval(Duration::from_millis(1)),
            )
            .unwrap();
        pair.drive();
        pair.client_events();
        pair.advance(Duration::from_secs(1));
        // A 1 ms suggestion is raised to 10 ms: polls at 10, 20, .., 90 ms, then at 95 ms
        // the call's cap ends it (not 94 polls).
        let polls = count_method(pair.transcript(), Side::Client, "tasks/get");
        assert_eq!(polls, 9, "{form:?}");
    }
}
