//! Legacy era: timeouts, progress and cancellation, including their races

use crate::common;
use crate::legacy_kit;

use mcp_sansio::testing::Side;
use std::time::Duration;

use serde_json::{Value, json};

use common::origin;
use common::raw;
use legacy_kit::{Raw, client_call, only_response, ready, ready_with, server_ask};
use mcp_sansio::schema::{
    CreateMessageResult, InputRequest, InputResponse, InputResponses, ListRootsResult,
    SamplingContent,
};
use mcp_sansio::session::{InputError, InputId};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, CancelError, ClientEvent, EraMode, OutboundId, Progress, ProgressError,
    ProtocolVersion, RequestOptions, ServerEvent,
};

const V: ProtocolVersion = ProtocolVersion::V2025_11_25;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// A ready pair whose client's default request timeout is `timeout`
fn with_client_timeout(timeout: Option<Duration>) -> Pair {
    let mut client = Pair::client_config(EraMode::Legacy(V));
    client.timeouts.request = timeout;
    ready_with(client, Pair::server_config())
}

/// The last `notifications/cancelled` `side` sent, as params
fn last_cancelled(pair: &Pair, side: Side) -> Value {
    pair.sent_by(side)
        .into_iter()
        .rev()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("a notifications/cancelled was sent")["params"]
        .clone()
}

fn count_method(pair: &Pair, side: Side, method: &str) -> usize {
    pair.sent_by(side)
        .iter()
        .filter(|m| m["method"] == method)
        .count()
}

fn assert_timed_out(pair: &mut Pair, id: OutboundId) {
    assert_eq!(
        only_response(pair.client_events(), id),
        Err(CallError::TimedOut)
    );
    let cancelled = last_cancelled(pair, Side::Client);
    assert_eq!(cancelled["requestId"], id.wire_id());
    let reason = cancelled["reason"].as_str().expect("a reason");
    assert!(reason.contains("timed out"), "{reason}");
    match pair.server_events().as_slice() {
        [ServerEvent::Cancelled { reason, .. }] => {
            assert!(reason.as_deref().unwrap().contains("timed out"));
        }
        other => panic!("the server was not told: {other:?}"),
    }
}

// --- 7. timeouts -------------------------------------------------------------------------

#[test]
fn default_timeout_comes_from_the_client_config() {
    let mut pair = with_client_timeout(Some(secs(10)));
    let t0 = pair.now;
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default(),
    );
    assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(10)));
    pair.advance(millis(9_999));
    assert!(pair.client_events().is_empty());
    assert_eq!(
        count_method(&pair, Side::Client, "notifications/cancelled"),
        0
    );
    pair.advance(millis(1));
    assert_timed_out(&mut pair, id);
    assert_eq!(pair.client.poll_timeout(), None);
    assert_eq!(pair.client.outbound_in_flight(), 0);
    // The server's responder is inert now.
    let before = pair.transcript().len();
    pair.server
        .respond_raw(request.responder, &raw(json!({})))
        .unwrap();
    pair.drive();
    assert_eq!(pair.transcript().len(), before);
}

#[test]
fn default_timeout_of_server_requests_comes_from_the_server_config() {
    let mut server = Pair::server_config();
    server.timeouts.request = Some(secs(3));
    let mut pair = ready_with(Pair::client_config(EraMode::Legacy(V)), server);
    let (id, inbound, _request) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.advance(millis(2_999));
    assert!(pair.server_events().is_empty());
    pair.advance(millis(1));
    assert_eq!(
        only_response(pair.server_events(), id),
        Err(CallError::TimedOut)
    );
    assert_eq!(
        last_cancelled(&pair, Side::Server)["requestId"],
        id.wire_id()
    );
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Cancelled { id: got, .. }] if *got == inbound
    ));
}

#[test]
fn per_request_timeout_overrides_the_default() {
    let mut pair = with_client_timeout(Some(secs(10)));
    let (short, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default().timeout(secs(2)),
    );
    let (long, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    let (longer, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default().timeout(secs(30)),
    );
    pair.advance(secs(2));
    assert_timed_out(&mut pair, short);
    pair.advance(secs(8));
    assert_timed_out(&mut pair, long);
    pair.advance(millis(19_999));
    assert!(pair.client_events().is_empty());
    pair.advance(millis(1));
    assert_timed_out(&mut pair, longer);
}

#[test]
fn no_timeout_waits_forever() {
    let mut pair = with_client_timeout(Some(secs(10)));
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default().no_timeout(),
    );
    assert_eq!(pair.client.poll_timeout(), None);
    pair.advance(secs(24 * 3600));
    assert!(pair.client_events().is_empty());
    assert_eq!(
        count_method(&pair, Side::Client, "notifications/cancelled"),
        0
    );
    pair.server
        .respond_raw(request.responder, &raw(json!({"late": "but fine"})))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.client_events(), id).unwrap(),
        json!({"late": "but fine"})
    );
    // And a config without a default timeout behaves the same.
    let mut pair = with_client_timeout(None);
    client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    assert_eq!(pair.client.poll_timeout(), None);
}

#[test]
fn progress_resets_the_timeout_only_when_asked() {
    for reset in [false, true] {
        let mut pair = with_client_timeout(Some(secs(10)));
        let options = if reset {
            RequestOptions::default().reset_on_progress()
        } else {
            RequestOptions::default().with_progress()
        };
        let t0 = pair.now;
        let (id, request) = client_call(&mut pair, "tools/call", json!({"name": "x"}), options);
        pair.advance(secs(8));
        pair.server
            .inbound(request.responder.id())
            .report_progress(&Progress::new(1.0))
            .unwrap();
        pair.drive();
        assert!(matches!(
            pair.client_events().as_slice(),
            [ClientEvent::Progress { id: got, .. }] if *got == id
        ));
        if reset {
            assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(18)));
            pair.advance(millis(9_999));
            assert!(pair.client_events().is_empty(), "the deadline moved");
            pair.advance(millis(1));
        } else {
            assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(10)));
            pair.advance(secs(2));
        }
        assert_timed_out(&mut pair, id);
    }
}

#[test]
fn reset_on_progress_from_the_config() {
    let mut client = Pair::client_config(EraMode::Legacy(V));
    client.timeouts.request = Some(secs(10));
    client.timeouts.reset_on_progress = true;
    let mut pair = ready_with(client, Pair::server_config());
    let t0 = pair.now;
    let (_, request) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default().with_progress(),
    );
    pair.advance(secs(5));
    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(0.5))
        .unwrap();
    pair.drive();
    assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(15)));
}

#[test]
fn max_total_caps_the_request_despite_progress() {
    let mut pair = with_client_timeout(Some(secs(10)));
    let t0 = pair.now;
    let options = RequestOptions::default()
        .reset_on_progress()
        .max_total(secs(15));
    let (id, request) = client_call(&mut pair, "tools/call", json!({"name": "x"}), options);
    assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(10)));
    for (at, value) in [(8, 1.0), (14, 2.0)] {
        pair.advance(pair_until(&pair, t0 + secs(at)));
        pair.server
            .inbound(request.responder.id())
            .report_progress(&Progress::new(value))
            .unwrap();
        pair.drive();
        assert_eq!(pair.client_events().len(), 1, "progress at {at}s");
        assert_eq!(
            pair.client.poll_timeout(),
            Some(t0 + secs(15)),
            "progress at {at}s may not push the deadline past the cap"
        );
    }
    pair.advance(pair_until(&pair, t0 + millis(14_999)));
    assert!(pair.client_events().is_empty());
    pair.advance(millis(1));
    assert_timed_out(&mut pair, id);

    // The cap alone, without a per-request timeout.
    let mut pair = with_client_timeout(Some(secs(10)));
    let t0 = pair.now;
    let options = RequestOptions::default().no_timeout().max_total(secs(5));
    let (id, _) = client_call(&mut pair, "tools/list", json!({}), options);
    assert_eq!(pair.client.poll_timeout(), Some(t0 + secs(5)));
    pair.advance(secs(5));
    assert_timed_out(&mut pair, id);
}

/// How far to advance to reach `t`
fn pair_until(pair: &Pair, t: std::time::Instant) -> Duration {
    t - pair.now
}

#[test]
fn a_late_answer_after_a_timeout_is_dropped_and_counted() {
    let mut pair = with_client_timeout(Some(secs(5)));
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default(),
    );
    // The timeout's cancellation is held back, so the server answers anyway.
    pair.pause(Side::Server);
    pair.advance(secs(5));
    assert_eq!(
        only_response(pair.client_events(), id),
        Err(CallError::TimedOut)
    );
    pair.server
        .respond_raw(request.responder, &raw(json!({"too": "late"})))
        .unwrap();
    pair.drive();
    assert!(
        pair.client_events().is_empty(),
        "exactly one response per request"
    );
    assert_eq!(pair.client.stats().unknown_responses, 1);
    pair.resume(Side::Server);
    pair.drive();
    assert!(
        pair.server_events().is_empty(),
        "cancel for a finished request"
    );
    assert!(pair.client_events().is_empty());
}

// --- 8. progress -------------------------------------------------------------------------

#[test]
fn with_progress_mints_a_token_and_progress_arrives_as_events() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "slow", "_meta": {"trace": "abc"}}),
        RequestOptions::default().with_progress(),
    );
    assert!(request.wants_progress);
    let sent = pair.sent_by(Side::Client).pop().unwrap();
    let token = sent["params"]["_meta"]["progressToken"].clone();
    assert!(token.is_number() || token.is_string(), "{sent}");
    assert_eq!(sent["params"]["name"], "slow");
    assert_eq!(sent["params"]["_meta"]["trace"], "abc", "other _meta kept");

    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(1.0).total(3.0).message("one"))
        .unwrap();
    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(2.5))
        .unwrap();
    pair.drive();
    let notes: Vec<_> = pair
        .sent_by(Side::Server)
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(
        notes[0]["params"],
        json!({"progressToken": token, "progress": 1.0, "total": 3.0, "message": "one"})
    );
    assert_eq!(
        notes[1]["params"],
        json!({"progressToken": token, "progress": 2.5})
    );
    let events = pair.client_events();
    match events.as_slice() {
        [
            ClientEvent::Progress {
                id: a,
                progress: p1,
            },
            ClientEvent::Progress {
                id: b,
                progress: p2,
            },
        ] => {
            assert_eq!((*a, *b), (id, id));
            assert_eq!(*p1, Progress::new(1.0).total(3.0).message("one"));
            assert_eq!(*p2, Progress::new(2.5));
        }
        other => panic!("{other:?}"),
    }
    pair.server
        .respond_raw(request.responder, &raw(json!({})))
        .unwrap();
    pair.drive();
    assert!(only_response(pair.client_events(), id).is_ok());
}

#[test]
fn with_progress_and_no_params_still_sends_the_token() {
    let mut pair = ready(V);
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/list",
            None,
            RequestOptions::default().with_progress(),
        )
        .unwrap();
    pair.drive();
    let sent = pair.sent_by(Side::Client).pop().unwrap();
    assert_eq!(
        sent["params"],
        json!({"_meta": {"progressToken": sent["params"]["_meta"]["progressToken"]}})
    );
    assert!(!sent["params"]["_meta"]["progressToken"].is_null());
    let request = legacy_kit::only_request(pair.server_events());
    assert!(request.wants_progress);
    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(1.0))
        .unwrap();
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Progress { id: got, .. }] if *got == id
    ));
}

#[test]
fn without_progress_there_is_no_token() {
    let mut pair = ready(V);
    let before = pair.transcript().len();
    let (_, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default(),
    );
    assert!(!request.wants_progress);
    let sent = pair.sent_by(Side::Client).pop().unwrap();
    assert_eq!(sent["params"], json!({"name": "x"}));
    assert_eq!(
        pair.server
            .inbound(request.responder.id())
            .report_progress(&Progress::new(1.0)),
        Err(ProgressError::NotRequested)
    );
    pair.drive();
    assert_eq!(
        pair.transcript().len(),
        before + 1,
        "only the request went out"
    );
}

#[test]
fn progress_must_be_finite_and_increasing() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default().with_progress(),
    );
    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(2.0))
        .unwrap();
    pair.drive();
    let before = pair.transcript().len();
    for given in [2.0, 1.5, -1.0] {
        assert_eq!(
            pair.server
                .inbound(request.responder.id())
                .report_progress(&Progress::new(given)),
            Err(ProgressError::NotIncreasing { last: 2.0, given })
        );
    }
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(
            pair.server
                .inbound(request.responder.id())
                .report_progress(&Progress::new(bad)),
            Err(ProgressError::NotFinite)
        );
        // A total that is not a number would go out as `"total":null`, which no schema allows.
        assert_eq!(
            pair.server
                .inbound(request.responder.id())
                .report_progress(&Progress::new(3.0).total(bad)),
            Err(ProgressError::NotFinite),
            "total {bad}"
        );
    }
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing sent");
    assert_eq!(pair.client_events().len(), 1, "only the first progress");
    // A refused report leaves the last value unchanged.
    pair.server
        .inbound(request.responder.id())
        .report_progress(&Progress::new(2.1))
        .unwrap();
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Progress { id: got, progress }] if *got == id && progress.progress == 2.1
    ));
}

#[test]
fn stray_progress_notifications_are_dropped() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default().with_progress(),
    );
    let token =
        pair.sent_by(Side::Client).pop().unwrap()["params"]["_meta"]["progressToken"].clone();
    let (plain, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    let progress = |token: &Value, value: f64| {
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": value}})
        )
    };
    let mut dropped = 0;
    for stray in [
        progress(&json!(987_654), 1.0),
        progress(&json!("no-such-token"), 1.0),
        progress(&json!(plain.wire_id()), 1.0),
    ] {
        pair.inject(Side::Client, stray.as_bytes());
        dropped += 1;
        assert!(pair.client_events().is_empty(), "{stray}");
        assert_eq!(pair.client.stats().dropped_messages, dropped);
    }
    // A valid one gets through, then a non-increasing one is dropped.
    pair.inject(Side::Client, progress(&token, 5.0).as_bytes());
    assert_eq!(pair.client_events().len(), 1);
    pair.inject(Side::Client, progress(&token, 5.0).as_bytes());
    dropped += 1;
    assert!(pair.client_events().is_empty());
    assert_eq!(pair.client.stats().dropped_messages, dropped);
    // After the request finished.
    pair.server
        .respond_raw(request.responder, &raw(json!({})))
        .unwrap();
    pair.drive();
    assert!(only_response(pair.client_events(), id).is_ok());
    pair.inject(Side::Client, progress(&token, 6.0).as_bytes());
    dropped += 1;
    assert!(pair.client_events().is_empty());
    assert_eq!(pair.client.stats().dropped_messages, dropped);
    // Reporting on an answered request is a no-op on the server side too.
    assert_eq!(pair.server.stats().dropped_messages, 0);
}

// --- 9. cancellation ---------------------------------------------------------------------

#[test]
fn client_cancel_reaches_the_server_and_resolves_at_once() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default(),
    );
    let inbound = request.responder.id();
    pair.client
        .cancel(pair.now, id, Some("user pressed stop"))
        .unwrap();
    // Immediately, before anything moves.
    match pair.client.poll_event() {
        Some(ClientEvent::Response {
            id: got,
            outcome: Err(CallError::Cancelled),
        }) => assert_eq!(got, id),
        other => panic!("{other:?}"),
    }
    assert!(pair.client.poll_event().is_none());
    assert_eq!(pair.client.outbound_in_flight(), 0);
    pair.drive();
    assert_eq!(
        last_cancelled(&pair, Side::Client),
        json!({"requestId": id.wire_id(), "reason": "user pressed stop"})
    );
    match pair.server_events().as_slice() {
        [ServerEvent::Cancelled { id: got, reason }] => {
            assert_eq!(*got, inbound);
            assert_eq!(reason.as_deref(), Some("user pressed stop"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pair.server.inbound_in_flight(), 0);
    // Answering after the peer cancelled: Ok, and nothing goes out.
    let before = pair.transcript().len();
    assert_eq!(
        pair.server
            .respond_raw(request.responder, &raw(json!({"x": 1}))),
        Ok(())
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), before);
    assert!(pair.client_events().is_empty());
}

#[test]
fn server_cancel_reaches_the_client() {
    let mut pair = ready(V);
    let (id, inbound, request) = server_ask(
        &mut pair,
        "sampling/createMessage",
        json!({"messages": [], "maxTokens": 1}),
        RequestOptions::default(),
    );
    assert!(
        matches!(&request, InputRequest::CreateMessage(p) if p.max_tokens == 1),
        "{request:?}"
    );
    pair.server.cancel(pair.now, id, None).unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.server_events(), id),
        Err(CallError::Cancelled)
    );
    assert_eq!(
        last_cancelled(&pair, Side::Server)["requestId"],
        id.wire_id()
    );
    match pair.client_events().as_slice() {
        [ClientEvent::Cancelled { id: got, .. }] => assert_eq!(*got, inbound),
        other => panic!("{other:?}"),
    }
    // Answering the cancelled request finds nothing waiting and sends nothing.
    let before = pair.transcript().len();
    assert_eq!(
        pair.client.provide_input(
            pair.now,
            InputId::Live(inbound),
            InputResponses::from([(
                "sampling/createMessage".to_owned(),
                InputResponse::CreateMessage(CreateMessageResult::new(
                    SamplingContent::text("late"),
                    "m"
                )),
            )]),
        ),
        Err(InputError::NotWaiting)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), before);
}

#[test]
fn input_for_a_live_request_the_server_cancelled_is_not_waited_for() {
    let mut pair = ready(V);
    let (id, inbound, _) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.server
        .cancel(pair.now, id, Some("no longer needed"))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.server_events(), id),
        Err(CallError::Cancelled)
    );
    match pair.client_events().as_slice() {
        [ClientEvent::Cancelled { id: got, reason }] => {
            assert_eq!(*got, inbound);
            assert_eq!(reason.as_deref(), Some("no longer needed"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pair.client.inbound_in_flight(), 0);
    // A later live request must not be answered through the stale id.
    let (next, next_inbound, _) = server_ask(
        &mut pair,
        "roots/list",
        json!({}),
        RequestOptions::default(),
    );
    assert_ne!(next_inbound, inbound);
    let roots = || {
        InputResponses::from([(
            "roots/list".to_owned(),
            InputResponse::ListRoots(ListRootsResult::new(vec![])),
        )])
    };
    let before = pair.transcript().len();
    assert_eq!(
        pair.client
            .provide_input(pair.now, InputId::Live(inbound), roots()),
        Err(InputError::NotWaiting)
    );
    assert_eq!(
        pair.client.refuse_input(
            pair.now,
            InputId::Live(inbound),
            &mcp_sansio::ErrorObject::new(-1, "late")
        ),
        Err(InputError::NotWaiting)
    );
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing sent");
    assert!(pair.server_events().is_empty());
    assert_eq!(pair.client.inbound_in_flight(), 1);
    // The live one still works.
    pair.client
        .provide_input(pair.now, InputId::Live(next_inbound), roots())
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.server_events(), next).unwrap(),
        json!({"roots": []})
    );
}

#[test]
fn an_answer_in_flight_when_the_client_cancels_is_dropped_and_counted() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({"name": "x"}),
        RequestOptions::default(),
    );
    pair.pause(Side::Client);
    pair.server
        .respond_raw(request.responder, &raw(json!({"content": []})))
        .unwrap();
    pair.drive();
    pair.client
        .cancel(pair.now, id, Some("changed my mind"))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.client_events(), id),
        Err(CallError::Cancelled)
    );
    // The cancellation crossed the answer: the server ignores it.
    assert!(pair.server_events().is_empty());
    pair.resume(Side::Client);
    pair.drive();
    assert!(pair.client_events().is_empty(), "exactly one response");
    assert_eq!(pair.client.stats().unknown_responses, 1);
    assert_eq!(pair.server.stats(), mcp_sansio::Stats::default());
}

#[test]
fn cancelling_a_finished_request_is_refused() {
    let mut pair = with_client_timeout(Some(secs(5)));
    let (answered, request) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.server
        .respond_raw(request.responder, &raw(json!({"tools": []})))
        .unwrap();
    pair.drive();
    assert!(only_response(pair.client_events(), answered).is_ok());
    let (cancelled, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default(),
    );
    pair.client.cancel(pair.now, cancelled, None).unwrap();
    pair.drive();
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Cancelled { .. }]
    ));
    let (timed_out, _) = client_call(
        &mut pair,
        "tools/list",
        json!({}),
        RequestOptions::default().timeout(secs(1)),
    );
    pair.advance(secs(1));
    pair.client_events();
    let before = pair.transcript().len();
    for id in [answered, cancelled, timed_out] {
        assert_eq!(
            pair.client.cancel(pair.now, id, None),
            Err(CancelError::NotInFlight),
            "{id}"
        );
    }
    pair.drive();
    assert_eq!(pair.transcript().len(), before, "nothing sent");
    assert!(pair.client_events().is_empty());
}

#[test]
fn cancelling_the_initialize_request_changes_nothing() {
    // Server side: the cancellation arrives between initialize and initialized.
    let mut server = Raw::server(Pair::server_config(), origin());
    server.feed(&json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}
    }));
    assert_eq!(server.out().len(), 1);
    server.feed(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 0, "reason": "never mind"}}),
    );
    assert!(server.out().is_empty());
    assert!(server.events().is_empty());
    assert_eq!(server.session.version(), Some(ProtocolVersion::V2025_06_18));
    server.feed(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(matches!(
        server.events().as_slice(),
        [ServerEvent::Ready {
            version: ProtocolVersion::V2025_06_18
        }]
    ));

    // Client side: a cancellation naming the initialize id before the answer.
    let mut client = Raw::client(Pair::client_config(EraMode::Legacy(V)), origin());
    let init = client.out().remove(0);
    client.feed(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": init["id"]}}),
    );
    assert!(client.out().is_empty());
    assert!(client.events().is_empty());
    assert!(!client.session.is_closed());
    client.feed(&json!({
        "jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"}
        }
    }));
    assert!(matches!(
        client.events().as_slice(),
        [ClientEvent::Ready { .. }]
    ));
}

#[test]
fn a_cancellation_for_an_unknown_id_is_ignored() {
    let mut pair = ready(V);
    let (id, request) = client_call(
        &mut pair,
        "tools/call",
        json!({}),
        RequestOptions::default(),
    );
    let before = pair.transcript().len();
    for unknown in [
        json!(12_345),
        json!("tools/call"),
        json!(id.wire_id().to_string()),
    ] {
        let line = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": unknown}});
        pair.inject(Side::Server, format!("{line}\n").as_bytes());
        assert!(pair.server_events().is_empty(), "{line}");
    }
    assert_eq!(pair.transcript().len(), before, "nothing answered");
    assert_eq!(pair.server.inbound_in_flight(), 1);
    pair.server
        .respond_raw(request.responder, &raw(json!({"ok": 1})))
        .unwrap();
    pair.drive();
    assert_eq!(
        only_response(pair.client_events(), id).unwrap(),
        json!({"ok": 1})
    );
}
