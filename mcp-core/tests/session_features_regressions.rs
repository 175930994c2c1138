//! Regression tests for bugs found by `session_props_features.rs` and the fuzz targets in
//! the newest parts of the engine (input during requests, tasks, subscriptions)

mod common;
mod tasks_kit;

use std::time::Duration;

use mcp_core::schema::InputRequests;
use mcp_core::session::{Asked, TaskOptions, TaskUpdate};
use mcp_core::testing::Pair;
use mcp_core::{Event, InboundRequest, Side};
use tasks_kit::{Form, call_tool, elicit, offered_request, pair};

fn closed(events: &[Event]) -> bool {
    matches!(events.last(), Some(Event::Closed { .. }))
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
            .start_task(pair.now, &request.responder, TaskOptions::default())
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
        .ask_input(pair.now, &request.responder, requests)
        .unwrap();
    assert_eq!(asked, Asked::Suspended);
    pair.drive();
    assert!(pair.server.is_closed(), "closed once the request ended");
    assert!(closed(&pair.server_events()));
}

/// A 2025-11-25 task that asks for input after its session closed writes nothing: no live
/// `elicitation/create` after `Event::Closed`, no request left in flight
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
