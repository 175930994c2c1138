//! `server::Runs`: the decisions a binding takes around its handler runs, on a fake clock
//!
//! `R` (a run's handle) is a `&str` naming the run and `W` (a waiter) a number, so each test
//! sees exactly which run `Runs` stops and which waiter gets which reply.

use crate::common;
use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::time::Duration;

use mcp_sansio::schema::{
    InputRequest, InputRequests, InputResponse, InputResponses, LoggingLevel,
    LoggingMessageNotificationParams,
};
use mcp_sansio::server::{AskFailure, Effects, Ending, LogFilter, Runs};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, ClientEvent, EraMode, InboundRequest, OutboundId, ProtocolVersion, RequestOptions,
    ServerEvent, jsonrpc,
};
use serde_json::{Value, json};
use tasks_kit::Form;

type TestRuns = Runs<&'static str, u32>;

fn legacy(version: ProtocolVersion) -> Pair {
    let mut pair = Pair::legacy(common::origin(), version);
    pair.drive();
    pair.client_events();
    pair.server_events();
    pair
}

fn modern() -> Pair {
    let mut server = Pair::server_config();
    server.state_key = Some([7; 32]);
    let mut pair = Pair::new(
        common::origin(),
        Pair::client_config(EraMode::Modern),
        server,
    );
    pair.drive();
    pair.client_events();
    pair.server_events();
    pair
}

/// The client sends `method`; returns its id and the request the server got
fn request(pair: &mut Pair, method: &str, params: Value) -> (OutboundId, InboundRequest) {
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            method,
            Some(common::raw(params)),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    let mut events = pair.server_events();
    assert_eq!(events.len(), 1, "{events:?}");
    match events.pop().unwrap() {
        ServerEvent::Request(r) => (id, r),
        other => panic!("expected a request, got {other:?}"),
    }
}

fn call_tool(pair: &mut Pair) -> (OutboundId, InboundRequest) {
    request(
        pair,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
    )
}

fn elicit(field: &str) -> InputRequest {
    serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": format!("Your {field}?"),
        "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
    }}))
    .unwrap()
}

fn asks(keys: &[&str]) -> InputRequests {
    keys.iter().map(|k| ((*k).to_owned(), elicit(k))).collect()
}

fn accept(requests: &InputRequests) -> InputResponses {
    requests
        .keys()
        .map(|k| {
            let r = json!({"action": "accept", "content": {k.as_str(): "Ada"}});
            (
                k.clone(),
                serde_json::from_value::<InputResponse>(r).unwrap(),
            )
        })
        .collect()
}

/// The client answers every input request: accepted, but the first one refused if
/// `refuse_first`
fn client_answers(pair: &mut Pair, refuse_first: bool) {
    pair.drive();
    let mut refuse = refuse_first;
    for event in pair.client_events() {
        if let ClientEvent::InputRequired { id, requests } = event {
            if std::mem::take(&mut refuse) {
                let error = jsonrpc::ErrorObject::internal_error("the user walked away");
                pair.client.refuse_input(pair.now, id, &error).unwrap();
            } else {
                pair.client
                    .provide_input(pair.now, id, accept(&requests))
                    .unwrap();
            }
        }
    }
    pair.drive();
}

/// Feeds every server event to `runs`, collecting the effects; none may be left over
fn server_effects(pair: &mut Pair, runs: &mut TestRuns) -> Vec<Effects<&'static str, u32>> {
    pair.server_events()
        .into_iter()
        .map(|e| runs.handle_event(e).expect("an event for the runs"))
        .collect()
}

fn log(level: LoggingLevel, text: &str) -> LoggingMessageNotificationParams {
    LoggingMessageNotificationParams::new(level, text)
}

/// The `notifications/message` texts the client got
fn logs_received(pair: &mut Pair) -> Vec<String> {
    pair.drive();
    pair.client_events()
        .into_iter()
        .filter_map(|e| match e {
            ClientEvent::Notification(n) if n.method == "notifications/message" => {
                let params: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
                Some(params["data"].as_str().unwrap().to_owned())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn set_level_is_answered_and_filters_the_connections_logs() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    assert_eq!(runs.log_filter(), LogFilter::legacy());

    let (set, req) = request(&mut pair, "logging/setLevel", json!({"level": "error"}));
    assert!(runs.handle_request(&mut pair.server, req).is_none());
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { id, outcome: Ok(_) }] if *id == set
    ));
    assert_eq!(runs.log_filter(), LogFilter::at(LoggingLevel::Error));

    let (_, req) = call_tool(&mut pair);
    let req = runs
        .handle_request(&mut pair.server, req)
        .expect("not for the runs");
    let id = req.responder.id();
    runs.started(id, "run");
    // `log` says whether the filter let the message through.
    let quiet = log(LoggingLevel::Warning, "quiet");
    assert_eq!(runs.log(&mut pair.server, id, None, &quiet), Ok(false));
    let loud = log(LoggingLevel::Error, "loud");
    assert_eq!(runs.log(&mut pair.server, id, None, &loud), Ok(true));
    // A request's own filter (2026) wins over the connection's.
    let own = Some(LogFilter::at(LoggingLevel::Debug));
    let debug = log(LoggingLevel::Debug, "own");
    assert_eq!(runs.log(&mut pair.server, id, own, &debug), Ok(true));
    assert_eq!(logs_received(&mut pair), ["loud", "own"]);
}

#[test]
fn set_level_with_bad_params_is_invalid_params() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (set, req) = request(&mut pair, "logging/setLevel", json!({"level": "loudest"}));
    assert!(runs.handle_request(&mut pair.server, req).is_none());
    pair.drive();
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id,
                outcome: Err(CallError::Remote(e)),
            },
        ] if *id == set => assert_eq!(e.code, jsonrpc::code::INVALID_PARAMS),
        other => panic!("{other:?}"),
    }
    assert_eq!(runs.log_filter(), LogFilter::legacy());
}

#[test]
fn a_filter_of_its_own_answers_set_level_and_hands_back_the_rest() {
    // A binding that keeps the connection's filter itself (not in `Runs`).
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut filter = LogFilter::legacy();
    let (set, req) = request(&mut pair, "logging/setLevel", json!({"level": "warning"}));
    assert!(filter.handle_set_level(&mut pair.server, req).is_none());
    assert_eq!(filter, LogFilter::at(LoggingLevel::Warning));
    let (bad, req) = request(&mut pair, "logging/setLevel", json!({"level": "loudest"}));
    assert!(filter.handle_set_level(&mut pair.server, req).is_none());
    assert_eq!(filter, LogFilter::at(LoggingLevel::Warning));
    pair.drive();
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id: first,
                outcome: Ok(empty),
            },
            ClientEvent::Response {
                id: second,
                outcome: Err(CallError::Remote(e)),
            },
        ] if *first == set && *second == bad => {
            assert_eq!(empty.get(), "{}");
            assert_eq!(e.code, jsonrpc::code::INVALID_PARAMS);
        }
        other => panic!("{other:?}"),
    }

    let (_, req) = call_tool(&mut pair);
    let back = filter
        .handle_set_level(&mut pair.server, req)
        .expect("not setLevel: handed back");
    assert_eq!(back.method, "tools/call");
    assert_eq!(filter, LogFilter::at(LoggingLevel::Warning));
}

#[test]
fn a_request_carries_its_own_filter_only_in_2026() {
    let mut pair = legacy(ProtocolVersion::V2025_11_25);
    let (_, req) = call_tool(&mut pair);
    assert_eq!(LogFilter::for_request(&req), None);

    let mut pair = modern();
    let (_, req) = call_tool(&mut pair);
    assert_eq!(LogFilter::for_request(&req), Some(LogFilter::off()));
    let (_, req) = request(
        &mut pair,
        "tools/call",
        json!({"name": "greet", "_meta": {"io.modelcontextprotocol/logLevel": "warning"}}),
    );
    assert_eq!(
        LogFilter::for_request(&req),
        Some(LogFilter::at(LoggingLevel::Warning))
    );
}

#[test]
fn a_request_s_own_filter_is_what_its_params_say_and_a_bad_level_logs_nothing() {
    // The session reads the level as the request comes; it must agree with `from_params`
    // on the params as sent, and a level that is not one is no reason to refuse the request.
    let mut pair = modern();
    for level in [
        json!("debug"),
        json!("emergency"),
        json!("Warning"),
        json!("loud"),
        json!(""),
        json!(3),
        json!(true),
        json!(null),
        json!(["info"]),
        json!({"level": "info"}),
    ] {
        let (_, req) = request(
            &mut pair,
            "tools/call",
            json!({"name": "greet", "_meta": {"io.modelcontextprotocol/logLevel": level}}),
        );
        let said =
            LogFilter::from_params(req.params.as_deref()).unwrap_or_else(|_| LogFilter::off());
        assert_eq!(LogFilter::for_request(&req), Some(said), "{level}");
    }
}

#[test]
fn live_answers_come_together_then_the_result_answers_the_request() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (call, req) = call_tool(&mut pair);
    let id = req.responder.id();
    runs.started(id, "run");
    let effects = runs.ask(&mut pair.server, pair.now, id, asks(&["a", "b"]), 7);
    assert!(effects.is_empty(), "{effects:?}");
    client_answers(&mut pair, false);
    let effects = server_effects(&mut pair, &mut runs);
    assert_eq!(effects.len(), 2, "one event per answer");
    assert!(effects[0].is_empty(), "waits for the second answer");
    match effects[1].replies.as_slice() {
        [(7, Ok(answers))] => {
            assert_eq!(answers.keys().collect::<Vec<_>>(), ["a", "b"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(effects[1].stop.is_empty());

    runs.finish(
        &mut pair.server,
        pair.now,
        req.responder,
        Ok(tasks_kit::tool_result("done")),
    );
    assert_eq!(runs.running(), 0);
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { id, outcome: Ok(_) }] if *id == call
    ));
}

#[test]
fn a_failed_answer_fails_the_ask_with_its_key() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (_, req) = call_tool(&mut pair);
    let id = req.responder.id();
    runs.started(id, "run");
    let _ = runs.ask(&mut pair.server, pair.now, id, asks(&["a", "b"]), 7);
    client_answers(&mut pair, true);
    let replies: Vec<_> = server_effects(&mut pair, &mut runs)
        .into_iter()
        .flat_map(|e| e.replies)
        .collect();
    match replies.as_slice() {
        [(7, Err(AskFailure::Failed { key, .. }))] => assert_eq!(key, "a"),
        other => panic!("exactly one failure, to the waiter: {other:?}"),
    }
}

#[test]
fn a_cancelled_request_stops_its_run_and_drops_its_result() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (call, req) = call_tool(&mut pair);
    let id = req.responder.id();
    runs.started(id, "run");
    let _ = runs.ask(&mut pair.server, pair.now, id, asks(&["a"]), 7);
    pair.drive();
    pair.client.cancel(pair.now, call, Some("no")).unwrap();
    pair.drive();
    let mut events = pair.server_events();
    // The server may also see nothing but the cancellation.
    events.retain(|e| matches!(e, ServerEvent::Cancelled { .. }));
    let effects = runs.handle_event(events.pop().expect("cancelled")).unwrap();
    assert_eq!(effects.stop, ["run"]);
    assert!(matches!(
        effects.replies.as_slice(),
        [(7, Err(AskFailure::Cancelled))]
    ));

    pair.take_transcript();
    runs.finish(
        &mut pair.server,
        pair.now,
        req.responder,
        Ok(tasks_kit::tool_result("late")),
    );
    pair.drive();
    assert!(
        pair.sent_by(Side::Server).is_empty(),
        "the stopped run's result is dropped"
    );
}

#[test]
fn a_2026_ask_ends_the_run_and_the_retry_gets_the_answers_at_once() {
    let mut pair = modern();
    let mut runs = TestRuns::new();
    let (call, req) = call_tool(&mut pair);
    let first = req.responder.id();
    runs.started(first, "first");
    let effects = runs.ask(&mut pair.server, pair.now, first, asks(&["name"]), 1);
    assert_eq!(effects.stop, ["first"]);
    assert!(matches!(
        effects.replies.as_slice(),
        [(1, Err(AskFailure::Cancelled))]
    ));
    // Whatever the stopped run returns is dropped.
    runs.finish(
        &mut pair.server,
        pair.now,
        req.responder,
        Err(jsonrpc::ErrorObject::internal_error("stopped")),
    );

    client_answers(&mut pair, false);
    let retry = match pair.server_events().pop() {
        Some(ServerEvent::Request(r)) => r,
        other => panic!("the retry: {other:?}"),
    };
    let second = retry.responder.id();
    runs.started(second, "second");
    let effects = runs.ask(&mut pair.server, pair.now, second, asks(&["name"]), 2);
    match effects.replies.as_slice() {
        [(2, Ok(answers))] => assert!(answers.contains_key("name")),
        other => panic!("{other:?}"),
    }
    assert!(effects.stop.is_empty());
    runs.finish(
        &mut pair.server,
        pair.now,
        retry.responder,
        Ok(tasks_kit::tool_result("hi Ada")),
    );
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Response { id, outcome: Ok(_) }] if *id == call
    ));
}

#[test]
fn a_task_logs_untied_asks_through_its_status_and_cancel_stops_its_run() {
    for form in Form::BOTH {
        let mut pair = tasks_kit::pair(form);
        let mut runs = TestRuns::new();
        let call = tasks_kit::call_tool(&mut pair, form, "slow");
        let req = tasks_kit::offered_request(&mut pair);
        let id = req.responder.id();
        let own = LogFilter::for_request(&req);
        runs.started(id, "run");
        let options = mcp_sansio::TaskOptions::default()
            .ttl(Duration::from_secs(60))
            .poll_interval(Duration::from_millis(250));
        let task = runs
            .start_task(&mut pair.server, pair.now, id, options)
            .unwrap();
        pair.drive();
        pair.client_events();

        // The request was answered (with the task): the log goes out on its own. A 2026
        // request without a log level wants none.
        let sent = runs.log(&mut pair.server, id, own, &log(LoggingLevel::Error, "bad"));
        assert_eq!(sent, Ok(form == Form::Legacy), "{form:?}");
        let expected: &[&str] = if form == Form::Legacy { &["bad"] } else { &[] };
        assert_eq!(logs_received(&mut pair), expected, "{form:?}");

        let effects = runs.ask(&mut pair.server, pair.now, id, asks(&["name"]), 3);
        assert!(effects.is_empty(), "{form:?}: {effects:?}");
        assert_eq!(
            pair.server.task_status(task),
            Some(mcp_sansio::schema::TaskStatus::InputRequired)
        );

        pair.client.cancel(pair.now, call, Some("no")).unwrap();
        pair.drive();
        let mut cancelled: Vec<_> = pair
            .server_events()
            .into_iter()
            .filter(|e| matches!(e, ServerEvent::TaskCancelled { .. }))
            .collect();
        let effects = runs
            .handle_event(cancelled.pop().expect("cancelled"))
            .unwrap();
        assert_eq!(effects.stop, ["run"], "{form:?}");
        assert!(
            matches!(
                effects.replies.as_slice(),
                [(3, Err(AskFailure::Cancelled))]
            ),
            "{form:?}: {effects:?}"
        );
        assert_eq!(runs.running(), 0);
    }
}

#[test]
fn a_tasks_result_completes_the_task() {
    let mut pair = tasks_kit::pair(Form::Legacy);
    let mut runs = TestRuns::new();
    let _call = tasks_kit::call_tool(&mut pair, Form::Legacy, "slow");
    let req = tasks_kit::offered_request(&mut pair);
    let id = req.responder.id();
    runs.started(id, "run");
    let task = runs
        .start_task(
            &mut pair.server,
            pair.now,
            id,
            mcp_sansio::TaskOptions::default(),
        )
        .unwrap();
    runs.finish(
        &mut pair.server,
        pair.now,
        req.responder,
        Ok(tasks_kit::tool_result("done")),
    );
    assert_eq!(
        pair.server.task_status(task),
        Some(mcp_sansio::schema::TaskStatus::Completed)
    );
}

/// `end`, for a binding that answers itself: what a run's result is for, once
#[test]
fn end_says_what_a_result_is_for() {
    // A plain request: answer it; a second `end` (or a run never started) drops the result.
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (_, req) = call_tool(&mut pair);
    let id = req.responder.id();
    assert_eq!(runs.end(id), Ending::Dropped, "never started");
    runs.started(id, "run");
    assert_eq!(runs.end(id), Ending::Respond);
    assert_eq!(runs.end(id), Ending::Dropped, "ended already");
    assert_eq!(runs.running(), 0);

    // A stopped run (its request cancelled): drop the result.
    let (call, req) = call_tool(&mut pair);
    let id = req.responder.id();
    runs.started(id, "cancelled");
    pair.client.cancel(pair.now, call, Some("no")).unwrap();
    pair.drive();
    let effects = server_effects(&mut pair, &mut runs);
    assert!(
        effects.iter().any(|e| e.stop == ["cancelled"]),
        "{effects:?}"
    );
    assert_eq!(runs.end(id), Ending::Dropped);

    // A request that became a task: its result completes the task, and the task is no
    // longer the run's (a log after it is tied to nothing, a second `end` drops).
    let mut pair = tasks_kit::pair(Form::Legacy);
    let _call = tasks_kit::call_tool(&mut pair, Form::Legacy, "slow");
    let req = tasks_kit::offered_request(&mut pair);
    let id = req.responder.id();
    runs.started(id, "task");
    let task = runs
        .start_task(
            &mut pair.server,
            pair.now,
            id,
            mcp_sansio::TaskOptions::default(),
        )
        .unwrap();
    assert_eq!(runs.end(id), Ending::Task(task));
    assert_eq!(runs.end(id), Ending::Dropped);
}

#[test]
fn closing_ends_every_wait_and_stops_every_run() {
    let mut pair = legacy(ProtocolVersion::V2025_06_18);
    let mut runs = TestRuns::new();
    let (_, a) = call_tool(&mut pair);
    let (_, b) = call_tool(&mut pair);
    runs.started(a.responder.id(), "a");
    runs.started(b.responder.id(), "b");
    let _ = runs.ask(
        &mut pair.server,
        pair.now,
        a.responder.id(),
        asks(&["x"]),
        1,
    );
    let mut effects = runs.close();
    effects.stop.sort_unstable();
    assert_eq!(effects.stop, ["a", "b"]);
    assert!(matches!(
        effects.replies.as_slice(),
        [(1, Err(AskFailure::Closed))]
    ));
    assert_eq!(runs.running(), 0);
}

#[test]
fn other_events_pass_through() {
    let mut runs = TestRuns::new();
    let event = ServerEvent::Closed {
        reason: mcp_sansio::CloseReason::Local,
    };
    assert!(matches!(
        runs.handle_event(event),
        Err(ServerEvent::Closed { .. })
    ));
}
