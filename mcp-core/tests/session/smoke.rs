//! Smoke tests of the session engine: one round trip per era, a timeout, static checks

use crate::common;

use std::time::Duration;

use serde_json::json;

use common::{origin, raw};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    CallError, ClientEvent, ClientSession, ProtocolVersion, RequestOptions, ServerEvent,
    ServerSession,
};

#[test]
fn session_is_send_sync_unwind_safe() {
    fn check<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    check::<ClientSession>();
    check::<ServerSession>();
    check::<ClientEvent>();
    check::<ServerEvent>();
    check::<Pair>();
}

#[test]
fn event_stays_small() {
    assert!(
        size_of::<ClientEvent>() <= 128,
        "{}",
        size_of::<ClientEvent>()
    );
    assert!(
        size_of::<ServerEvent>() <= 128,
        "{}",
        size_of::<ServerEvent>()
    );
}

fn call_round_trip(mut pair: Pair) -> Pair {
    pair.drive();
    let ready: Vec<_> = pair.client_events();
    assert!(
        matches!(ready.as_slice(), [ClientEvent::Ready { .. }]),
        "{ready:?}"
    );
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "echo"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    let mut server_events = pair.server_events();
    let Some(ServerEvent::Request(request)) = server_events.pop() else {
        panic!("{server_events:?}")
    };
    assert_eq!(request.method, "tools/call");
    pair.server
        .respond_raw(request.responder, &raw(json!({"content": []})))
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    match events.as_slice() {
        [
            ClientEvent::Response {
                id: got,
                outcome: Ok(result),
            },
        ] => {
            assert_eq!(*got, id);
            assert!(result.get().contains("content"));
        }
        other => panic!("{other:?}"),
    }
    pair
}

#[test]
fn legacy_round_trip() {
    for v in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_11_25,
    ] {
        let pair = call_round_trip(Pair::legacy(origin(), v));
        assert_eq!(pair.client.version(), Some(v));
    }
}

#[test]
fn modern_round_trip_adds_result_type() {
    let pair = call_round_trip(Pair::modern(origin()));
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2026_07_28));
    let last = &pair.transcript().last().unwrap().1;
    assert!(last.contains(r#""resultType":"complete""#), "{last}");
    assert!(
        last.contains("io.modelcontextprotocol/serverInfo"),
        "{last}"
    );
}

#[test]
fn auto_mode_prefers_modern() {
    let pair = call_round_trip(Pair::new(
        origin(),
        Pair::client_config(mcp_sansio::EraMode::Auto),
        Pair::server_config(),
    ));
    assert_eq!(pair.client.version(), Some(ProtocolVersion::V2026_07_28));
}

#[test]
fn timeout_sends_cancel() {
    let mut pair = Pair::legacy(origin(), ProtocolVersion::V2025_11_25);
    pair.drive();
    pair.client_events();
    let opts = RequestOptions::default().timeout(Duration::from_secs(5));
    let id = pair
        .client
        .send_request_raw(pair.now, "tools/list", None, opts)
        .unwrap();
    pair.drive();
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Ready { .. }, ServerEvent::Request(_)]
    ));
    pair.advance(Duration::from_secs(5));
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id: got,
                outcome: Err(CallError::TimedOut),
            },
        ] => assert_eq!(*got, id),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        pair.server_events().as_slice(),
        [ServerEvent::Cancelled { .. }]
    ));
}
