//! Subscriptions: modern `subscriptions/listen` (filter intersection, acknowledgement first,
//! tagged notifications, teardown by either side, overflow) and legacy
//! `resources/subscribe` / list_changed

use crate::common;

use common::{origin, raw};
use mcp_sansio::testing::Pair;
use mcp_sansio::testing::Side;
use mcp_sansio::{
    CallError, ClientEvent, EraMode, Limits, ListKind, OutboundId, ProtocolVersion, RequestOptions,
    SendError, ServerConfig, ServerEvent,
};
use serde_json::{Value, json};

fn server_config() -> ServerConfig {
    let mut s = Pair::server_config();
    // Tools and resources announce changes; prompts do not.
    s.capabilities = json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    });
    s
}

fn pair(era: EraMode) -> Pair {
    let mut pair = Pair::new(origin(), Pair::client_config(era), server_config());
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready { .. }]
    ));
    pair.server_events();
    pair
}

fn listen(pair: &mut Pair, filter: Value) -> OutboundId {
    let id = pair
        .client
        .send_request_raw(
            pair.now,
            "subscriptions/listen",
            Some(raw(json!({ "notifications": filter }))),
            RequestOptions::default().no_timeout(),
        )
        .unwrap();
    pair.drive();
    id
}

fn notifications(events: Vec<ClientEvent>) -> Vec<(String, Value)> {
    events
        .into_iter()
        .map(|e| match e {
            ClientEvent::Notification(n) => (
                n.method,
                n.params
                    .map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap()),
            ),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn tag(params: &Value) -> &Value {
    &params["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

#[test]
fn listen_is_acknowledged_first_with_what_the_server_offers() {
    let mut pair = pair(EraMode::Modern);
    let id = listen(
        &mut pair,
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourceSubscriptions": ["file:///a"], "x-unknown": true}),
    );
    // The core handles listen: the server application sees nothing.
    assert!(pair.server_events().is_empty());
    assert_eq!(pair.server.subscription_count(), 1);
    let got = notifications(pair.client_events());
    let [(method, params)] = got.as_slice() else {
        panic!("{got:?}")
    };
    assert_eq!(method, "notifications/subscriptions/acknowledged");
    assert_eq!(tag(params), &json!(id.wire_id()));
    // prompts has no listChanged: not granted.
    assert_eq!(
        params["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
}

#[test]
fn notifications_reach_the_streams_that_asked_tagged_with_their_id() {
    let mut pair = pair(EraMode::Modern);
    let tools = listen(&mut pair, json!({"toolsListChanged": true}));
    let files = listen(&mut pair, json!({"resourceSubscriptions": ["file:///dir"]}));
    pair.client_events();

    pair.server.notify_list_changed(ListKind::Tools).unwrap();
    assert_eq!(
        pair.server
            .notify_resource_updated("file:///dir/x.txt")
            .unwrap(),
        1
    );
    assert_eq!(
        pair.server
            .notify_resource_updated("file:///elsewhere")
            .unwrap(),
        0
    );
    assert_eq!(
        pair.server
            .notify_resource_updated("file:///director")
            .unwrap(),
        0
    );
    assert!(matches!(
        pair.server.notify_list_changed(ListKind::Prompts),
        Err(SendError::NotAllowed { .. })
    ));
    pair.drive();
    let got = notifications(pair.client_events());
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "notifications/tools/list_changed");
    assert_eq!(tag(&got[0].1), &json!(tools.wire_id()));
    assert_eq!(got[1].0, "notifications/resources/updated");
    assert_eq!(got[1].1["uri"], "file:///dir/x.txt");
    assert_eq!(tag(&got[1].1), &json!(files.wire_id()));
}

#[test]
fn the_client_ends_a_stream_by_cancelling_and_the_server_ends_all_on_shutdown() {
    let mut pair = pair(EraMode::Modern);
    let a = listen(&mut pair, json!({"toolsListChanged": true}));
    let b = listen(&mut pair, json!({"toolsListChanged": true}));
    pair.client_events();
    pair.client.cancel(pair.now, a, None).unwrap();
    pair.drive();
    assert_eq!(pair.server.subscription_count(), 1);
    pair.client_events();
    pair.server.notify_list_changed(ListKind::Tools).unwrap();
    pair.drive();
    let got = notifications(pair.client_events());
    assert_eq!(got.len(), 1);
    assert_eq!(tag(&got[0].1), &json!(b.wire_id()));

    pair.server.end_subscriptions();
    pair.drive();
    assert_eq!(pair.server.subscription_count(), 0);
    match pair.client_events().as_slice() {
        [
            ClientEvent::Response {
                id,
                outcome: Ok(result),
            },
        ] => {
            assert_eq!(*id, b);
            let result: Value = serde_json::from_str(result.get()).unwrap();
            assert_eq!(tag(&result), &json!(b.wire_id()));
            assert_eq!(result["resultType"], "complete");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stream_that_falls_behind_is_ended_with_a_clear_error() {
    let mut server = server_config();
    let mut limits = Limits::default();
    limits.max_queued_bytes = 600;
    server.limits = limits;
    let mut pair = Pair::new(origin(), Pair::client_config(EraMode::Modern), server);
    pair.drive();
    pair.client_events();
    let id = listen(&mut pair, json!({"toolsListChanged": true}));
    pair.client_events();
    // The client stops reading; the server keeps announcing.
    pair.pause(Side::Client);
    let mut buf = Vec::new();
    for _ in 0..50 {
        pair.server.notify_list_changed(ListKind::Tools).unwrap();
    }
    assert_eq!(pair.server.subscription_count(), 0, "the stream was ended");
    assert!(pair.server.stats().dropped_messages > 0);
    while pair.server.poll_transmit(&mut buf).is_some() {}
    pair.inject(Side::Client, &buf);
    pair.resume(Side::Client);
    pair.drive();
    let events = pair.client_events();
    let ended = events.iter().find_map(|e| match e {
        ClientEvent::Response {
            id: got,
            outcome: Err(CallError::Remote(e)),
        } if *got == id => Some(e),
        _ => None,
    });
    let error = ended.unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("listen again"), "{}", error.message);
}

#[test]
fn the_number_of_streams_is_bounded() {
    let mut server = server_config();
    let mut limits = Limits::default();
    limits.max_subscriptions = 2;
    server.limits = limits;
    let mut pair = Pair::new(origin(), Pair::client_config(EraMode::Modern), server);
    pair.drive();
    pair.client_events();
    listen(&mut pair, json!({}));
    listen(&mut pair, json!({}));
    let third = listen(&mut pair, json!({}));
    let events = pair.client_events();
    assert!(
        events.iter().any(
            |e| matches!(e, ClientEvent::Response { id, outcome: Err(CallError::Remote(e)) }
            if *id == third && e.code == -32603)
        ),
        "{events:?}"
    );
    assert_eq!(pair.server.subscription_count(), 2);
}

#[test]
fn legacy_resource_subscriptions_and_list_changed() {
    let mut pair = pair(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    let sub = pair
        .client
        .send_request_raw(
            pair.now,
            "resources/subscribe",
            Some(raw(json!({"uri": "file:///dir"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    assert!(
        pair.server_events().is_empty(),
        "the core answers subscribe"
    );
    assert!(matches!(pair.client_events().as_slice(),
        [ClientEvent::Response { id, outcome: Ok(r) }] if *id == sub && r.get() == "{}"));

    assert_eq!(
        pair.server
            .notify_resource_updated("file:///dir/a")
            .unwrap(),
        1
    );
    assert_eq!(
        pair.server
            .notify_resource_updated("file:///other")
            .unwrap(),
        0
    );
    pair.server
        .notify_list_changed(ListKind::Resources)
        .unwrap();
    pair.drive();
    let got = notifications(pair.client_events());
    assert_eq!(
        got,
        [
            (
                "notifications/resources/updated".to_owned(),
                json!({"uri": "file:///dir/a"})
            ),
            (
                "notifications/resources/list_changed".to_owned(),
                Value::Null
            ),
        ]
    );

    pair.client
        .send_request_raw(
            pair.now,
            "resources/unsubscribe",
            Some(raw(json!({"uri": "file:///dir"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    pair.client_events();
    assert_eq!(
        pair.server
            .notify_resource_updated("file:///dir/a")
            .unwrap(),
        0
    );
}

#[test]
fn modern_task_status_reaches_streams_that_name_the_task() {
    let mut client = Pair::client_config(EraMode::Modern);
    client.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    let mut pair = Pair::new(origin(), client, server_config());
    pair.drive();
    pair.client_events();
    let call = pair
        .client
        .send_request_raw(
            pair.now,
            "tools/call",
            Some(raw(json!({"name": "slow"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.drive();
    let Some(ServerEvent::Request(r)) = pair.server_events().pop() else {
        panic!()
    };
    assert!(r.task_offered);
    let task = pair
        .server
        .inbound(r.responder.id())
        .start_task(pair.now, Default::default())
        .unwrap();
    pair.drive();
    let created: Value = pair
        .transcript()
        .iter()
        .rev()
        .find(|(s, l)| *s == Side::Server && l.contains("\"task\""))
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .unwrap();
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let stream = listen(&mut pair, json!({"taskIds": [task_id]}));
    pair.client_events();
    pair.server
        .update_task(
            pair.now,
            task,
            mcp_sansio::TaskUpdate::Completed(raw(
                json!({"content": [{"type": "text", "text": "done"}]}),
            )),
        )
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    // The stream's notification ends the call at once (no poll needed): one Response.
    let responses: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::Response { id, .. } if *id == call))
        .collect();
    assert_eq!(responses.len(), 1, "{events:?}");
    let tagged = pair
        .transcript()
        .iter()
        .filter(|(s, l)| *s == Side::Server && l.contains("\"notifications/tasks\""))
        .count();
    assert_eq!(tagged, 1);
    assert!(pair.transcript().iter().any(|(_, l)| l.contains(&format!(
        "\"io.modelcontextprotocol/subscriptionId\":{}",
        stream.wire_id()
    ))));
}

#[test]
fn a_client_reads_which_listen_stream_a_notification_belongs_to() {
    let mut pair = pair(EraMode::Modern);
    let tools = listen(&mut pair, json!({"toolsListChanged": true}));
    pair.client_events();
    pair.server.notify_list_changed(ListKind::Tools).unwrap();
    pair.server
        .send_notification_raw("notifications/custom", None)
        .unwrap();
    pair.drive();
    let ids: Vec<(String, Option<mcp_sansio::RequestId>)> = pair
        .client_events()
        .into_iter()
        .filter_map(|e| match e {
            ClientEvent::Notification(n) => Some((n.method.clone(), n.subscription_id())),
            _ => None,
        })
        .collect();
    let wire = i64::try_from(tools.wire_id()).unwrap();
    assert_eq!(
        ids,
        [
            (
                "notifications/tools/list_changed".to_owned(),
                Some(mcp_sansio::RequestId::Number(wire))
            ),
            ("notifications/custom".to_owned(), None),
        ]
    );
}
