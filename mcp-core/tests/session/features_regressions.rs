//! Regression tests for bugs found by `session_props_features.rs` and the fuzz targets in
//! the newest parts of the engine (input during requests, tasks, subscriptions)

use crate::common;
use crate::tasks_kit;

use mcp_sansio::testing::Side;
use std::time::Duration;

use serde_json::json;

use mcp_sansio::schema::InputRequests;
use mcp_sansio::session::{Asked, TaskOptions, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{ClientEvent, InboundRequest, ServerEvent};
use tasks_kit::{Form, call_tool, elicit, offered_request, pair};

fn closed(events: &[ServerEvent]) -> bool {
    matches!(events.last(), Some(ServerEvent::Closed { .. }))
}

/// A ready pair (of `form`) whose client called a tool that the server holds, after the
/// client's EOF reached the server
fn held_after_eof(form: Form) -> (Pair, InboundRequest) {
    let mut pair = pair(form);
    call_tool(&mut pair, form, "slow");
    let request = offered_request(&mut pair);
    pair.server.handle_eof(pair.now);
    pair.drive();
    assert!(
        !pair.server.is_closed(),
        "an unanswered request holds the session open"
    );
    (pair, request)
}

/// After the peer's EOF the session closes once the last inbound request is answered; a
/// task handle answers the request too.
#[test]
fn start_task_after_eof_closes_the_session() {
    for form in Form::BOTH {
        let (mut pair, request) = held_after_eof(form);
        pair.server
            .inbound(request.responder.id())
            .start_task(pair.now, TaskOptions::default())
            .unwrap();
        pair.drive();
        assert!(pair.server.is_closed(), "{form:?}: closed once answered");
        assert!(closed(&pair.server_events()), "{form:?}");
        assert_eq!(pair.server.poll_timeout(), None);
    }
}

/// The same for a modern request suspended by `ask_input` (answered with `input_required`)
#[test]
fn ask_input_suspending_after_eof_closes_the_session() {
    let mut server = tasks_kit::server_config(Form::Modern);
    server.state_key = Some([1; 32]);
    let mut pair =
        tasks_kit::pair_with(Form::Modern, tasks_kit::client_config(Form::Modern), server);
    call_tool(&mut pair, Form::Modern, "ask");
    let request = offered_request(&mut pair);
    pair.server.handle_eof(pair.now);
    pair.drive();
    let mut requests = InputRequests::new();
    requests.insert("name".into(), elicit("name"));
    let asked = pair
        .server
        .inbound(request.responder.id())
        .ask_input(pair.now, requests)
        .unwrap();
    assert_eq!(asked, Asked::Suspended);
    pair.drive();
    assert!(pair.server.is_closed(), "closed once the request ended");
    assert!(closed(&pair.server_events()));
}

/// A 2025-11-25 task that asks for input after its session closed writes nothing: no live
/// `elicitation/create` after `ServerEvent::Closed`, no request left in flight
#[test]
fn task_input_after_close_writes_nothing() {
    let (mut pair, _, task) = tasks_kit::started(Form::Legacy);
    pair.server.close(pair.now);
    pair.drive();
    assert!(closed(&pair.server_events()));
    let before = pair.transcript().len();
    let mut requests = InputRequests::new();
    requests.insert("name".into(), elicit("name"));
    let _ = pair
        .server
        .update_task(pair.now, task, TaskUpdate::InputRequired(requests));
    pair.drive();
    let after: Vec<_> = pair.transcript()[before..]
        .iter()
        .filter(|(s, _)| *s == Side::Server)
        .collect();
    assert!(after.is_empty(), "written after Closed: {after:?}");
    assert_eq!(pair.server.poll_timeout(), None);
    assert!(pair.server_events().is_empty(), "nothing after Closed");
    pair.advance(Duration::from_secs(120));
    assert!(pair.server_events().is_empty());
}

/// 2025-11-25 `tasks/result` requests for a running task wait for its end outside the
/// inbound table; a client that sends them without end must not grow the table without
/// bound: past `max_in_flight_inbound` waiting ones, the rest are refused at once
#[test]
fn waiting_task_results_are_bounded() {
    let mut server = tasks_kit::server_config(Form::Legacy);
    server.limits.max_in_flight_inbound = 4;
    let mut pair =
        tasks_kit::pair_with(Form::Legacy, tasks_kit::client_config(Form::Legacy), server);
    call_tool(&mut pair, Form::Legacy, "slow");
    let request = offered_request(&mut pair);
    let task = pair
        .server
        .inbound(request.responder.id())
        .start_task(pair.now, TaskOptions::default())
        .unwrap();
    pair.drive();
    pair.take_transcript();
    for n in 0..10 {
        let id = format!("r{n}");
        let req = tasks_kit::task_request(
            Form::Legacy,
            &id,
            "tasks/result",
            json!({"taskId": tasks_kit::task0()}),
        );
        tasks_kit::inject_json(&mut pair, Side::Server, &req);
    }
    let refused: Vec<_> = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(
        refused,
        (4..10).map(|n| json!(format!("r{n}"))).collect::<Vec<_>>(),
        "the waiting ones beyond the limit are refused at once"
    );
    // The four waiting ones are answered once the task ends.
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::Completed(tasks_kit::tool_result("done")),
        )
        .unwrap();
    pair.drive();
    let answered = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m.get("result").is_some() && m["id"].is_string())
        .count();
    assert_eq!(answered, 4);
}

/// A waiting `tasks/result` the client cancelled is not answered when the task ends
#[test]
fn a_cancelled_task_result_is_not_answered() {
    let (mut pair, _, task) = tasks_kit::started(Form::Legacy);
    let req = tasks_kit::task_request(
        Form::Legacy,
        "w1",
        "tasks/result",
        json!({"taskId": tasks_kit::task0()}),
    );
    tasks_kit::inject_json(&mut pair, Side::Server, &req);
    tasks_kit::inject_json(
        &mut pair,
        Side::Server,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "w1"}}),
    );
    pair.server
        .update_task(
            pair.now,
            task,
            TaskUpdate::Completed(tasks_kit::tool_result("done")),
        )
        .unwrap();
    pair.drive();
    assert_eq!(tasks_kit::response_to(&pair, &json!("w1")), None);
}

/// Found by `session_props`: with complete frames waiting in the backlog, EOF handled a frame
/// that closed the session (an invalid initialize result) and then the frames after it, so
/// events followed `ServerEvent::Closed`
#[test]
fn nothing_is_delivered_after_a_frame_that_closes_the_session() {
    let now = common::origin();
    let mut config = Pair::client_config(mcp_sansio::EraMode::Legacy(
        mcp_sansio::ProtocolVersion::V2025_11_25,
    ));
    config.limits.max_queued_bytes = 10;
    let mut client = mcp_sansio::ClientSession::new(std::sync::Arc::new(config), now);
    let mut out = Vec::new();
    while client.poll_transmit(&mut out).is_some() {}
    // The error reply to a malformed line waits unwritten (past max_queued_bytes), so the
    // next frames wait in the backlog.
    client.handle_bytes(
        now,
        b"not json\n\
          {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\
          {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
    );
    assert!(!client.wants_read());
    client.handle_eof(now);
    let mut events = Vec::new();
    while let Some(e) = client.poll_event() {
        events.push(e);
    }
    let closed = events
        .iter()
        .position(|e| matches!(e, ClientEvent::Closed { .. }))
        .expect("the invalid initialize result closes the session");
    assert_eq!(closed, events.len() - 1, "nothing after Closed: {events:?}");
}
