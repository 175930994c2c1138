//! The 2025 (stateful) wire end to end: session lifecycle, per-request streams, the
//! standalone GET stream, resumability and idle eviction

use crate::http_kit;

use std::time::Duration;

use http_kit::Kit;
use mcp_sansio::ListKind;
use mcp_sansio::http::HttpConfig;
use serde_json::{Value, json};

fn on(sid: &str) -> Vec<(&str, &str)> {
    vec![
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

fn call(id: i64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool}})
}

#[test]
fn lifecycle_initialize_use_delete() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    assert!(
        !sid.is_empty() && sid.bytes().all(|b| (0x21..=0x7E).contains(&b)),
        "{sid}"
    );
    assert_eq!(kit.http.session_count(), 1);

    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let exchange = kit.post(&on(&sid), &list).unwrap_err();
    let c = kit.collected(exchange);
    assert!(c.ended && c.is_sse() && c.status() == 200);
    let events = c.events();
    // the priming event: an id, empty data, a retry delay
    assert!(events[0].id.is_some() && events[0].data.is_empty() && events[0].retry.is_some());
    assert_eq!(
        c.messages(),
        [json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})]
    );

    // unknown session
    let r = kit.post(&on("no-such-session"), &list).unwrap();
    assert_eq!((r.status, r.error_code()), (404, Some(-32600)));
    // The reason a binding logs: what the body tells the client
    assert!(
        r.error_message().is_some_and(|why| !why.is_empty()),
        "{r:?}"
    );
    assert_eq!(
        mcp_sansio::http::HttpResponse::empty(202).error_message(),
        None
    );
    // a request without a session that is not initialize
    assert_eq!(kit.post(&[], &list).unwrap().status, 400);

    // DELETE ends it; afterwards the id is unknown
    let r = kit.request("DELETE", &on(&sid), "").unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(kit.closed.len(), 1);
    assert_eq!(kit.post(&on(&sid), &list).unwrap().status, 404);
    assert_eq!(kit.request("DELETE", &on(&sid), "").unwrap().status, 404);
    assert_eq!(kit.http.session_count(), 0);
}

#[test]
fn any_supported_version_header_and_extra_headers_are_accepted() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for version in ["2025-06-18", "2025-03-26", "2026-07-28"] {
        let h = vec![
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", version),
            ("Mcp-Method", "wrong/on/purpose"),
        ];
        let exchange = kit.post(&h, &list).unwrap_err();
        assert_eq!(kit.collected(exchange).status(), 200, "{version}");
    }
    let h = vec![
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "1900-01-01"),
    ];
    assert_eq!(kit.post(&h, &list).unwrap().status, 400);
}

#[test]
fn three_concurrent_posts_each_get_their_own_response() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let streams: Vec<_> = (0..3)
        .map(|i| {
            kit.post(&on(&sid), &call(1000 + i, &format!("slow{i}")))
                .unwrap_err()
        })
        .collect();
    for s in &streams {
        let c = kit.collected(*s);
        assert!(!c.ended && c.status() == 200);
        assert!(
            !c.events().is_empty(),
            "each stream delivers its priming event at once"
        );
    }
    for i in [2, 0, 1] {
        kit.finish(&format!("slow{i}"), &format!("answer {i}"));
    }
    for (i, s) in streams.iter().enumerate() {
        let c = kit.collected(*s);
        assert!(c.ended);
        let m = c.messages();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["id"], 1000 + i as i64);
        assert_eq!(m[0]["result"]["content"][0]["text"], format!("answer {i}"));
    }
    // a duplicate id while the first is in flight is refused
    let first = kit.post(&on(&sid), &call(7, "slowx")).unwrap_err();
    let r = kit.post(&on(&sid), &call(7, "slowy")).unwrap();
    assert_eq!(r.status, 400);
    kit.finish("slowx", "done");
    assert!(kit.collected(first).ended);
}

#[test]
fn a_server_request_goes_on_the_calls_stream_before_its_response() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let exchange = kit.post(&on(&sid), &call(5, "ask")).unwrap_err();
    let messages = kit.collected(exchange).messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["method"], "elicitation/create");
    let ask_id = messages[0]["id"].clone();
    // the client's answer is a separate POST: 202
    let answer = json!({"jsonrpc": "2.0", "id": ask_id, "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(kit.post(&on(&sid), &answer).unwrap().status, 202);
    let c = kit.collected(exchange);
    assert!(c.ended);
    let messages = c.messages();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["id"], 5);
    assert_eq!(messages[1]["result"]["content"][0]["text"], "Ada");
}

#[test]
fn progress_and_logs_of_a_call_go_on_its_stream() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let mut body = call(6, "progress");
    body["params"]["_meta"] = json!({"progressToken": "p"});
    let exchange = kit.post(&on(&sid), &body).unwrap_err();
    let methods: Vec<_> = kit
        .collected(exchange)
        .messages()
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(answer)").to_owned())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "(answer)"
        ]
    );
}

#[test]
fn notifications_and_responses_get_202() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    let r = kit.post(&on(&sid), &note).unwrap();
    assert_eq!(r.status, 202);
    assert_eq!(r.header("mcp-session-id"), Some(sid.as_str()));
    assert!(
        kit.notifications
            .contains(&"notifications/roots/list_changed".to_owned())
    );
    // a stray response is accepted (and counted by the session)
    let response = json!({"jsonrpc": "2.0", "id": 99, "result": {}});
    assert_eq!(kit.post(&on(&sid), &response).unwrap().status, 202);
}

#[test]
fn a_json_only_client_gets_a_json_answer() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let mut h = on(&sid);
    h.push(("Accept", "application/json"));
    // the kit's own Accept comes first; give this one alone
    let all: Vec<(&str, &str)> = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ]
    .into_iter()
    .chain(on(&sid))
    .collect();
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let exchange = kit.request("POST", &all, &list.to_string()).unwrap_err();
    let c = kit.collected(exchange);
    assert!(c.ended && !c.is_sse());
    assert_eq!(
        c.head.as_ref().unwrap().header("Mcp-Session-Id"),
        Some(sid.as_str())
    );
    assert_eq!(c.json()["id"], 3);
}

#[test]
fn unrelated_messages_use_the_get_stream_and_wait_for_it() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let key = kit.http.session_key(&sid).unwrap();
    kit.http
        .session_mut(key)
        .unwrap()
        .notify_list_changed(ListKind::Tools)
        .unwrap();
    kit.pump();
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    let get = kit.request("GET", &h, "").unwrap_err();
    let c = kit.collected(get);
    assert!(c.is_sse() && !c.ended);
    assert_eq!(
        c.messages()[0]["method"],
        "notifications/tools/list_changed"
    );
    // one standalone stream at a time
    assert_eq!(kit.request("GET", &h, "").unwrap().status, 409);
    // later ones arrive live
    kit.http
        .session_mut(key)
        .unwrap()
        .notify_list_changed(ListKind::Tools)
        .unwrap();
    kit.pump();
    assert_eq!(kit.collected(get).messages().len(), 2);
    // GET needs SSE in Accept
    let h = vec![
        ("Mcp-Session-Id", sid.as_str()),
        ("Accept", "application/json"),
    ];
    assert_eq!(kit.request("GET", &h, "").unwrap().status, 406);
}

#[test]
fn the_server_wide_notify_commands_reach_every_session() {
    let mut kit = Kit::new();
    let a = kit.initialize();
    let b = kit.initialize();
    let sub = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/subscribe",
        "params": {"uri": "file:///dir"}});
    let exchange = kit.post(&on(&b), &sub).unwrap_err();
    assert_eq!(kit.collected(exchange).messages()[0]["result"], json!({}));
    let mut gets = Vec::new();
    for sid in [&a, &b] {
        let mut h = on(sid);
        h.push(("Accept", "text/event-stream"));
        gets.push(kit.request("GET", &h, "").unwrap_err());
    }
    kit.http.notify_list_changed(ListKind::Tools).unwrap();
    assert_eq!(kit.http.notify_resource_updated("file:///dir/x"), 1);
    assert!(
        kit.http.notify_list_changed(ListKind::Prompts).is_err(),
        "prompts do not declare listChanged"
    );
    kit.pump();
    let methods = |kit: &Kit, get| -> Vec<Value> {
        kit.collected(get)
            .messages()
            .iter()
            .map(|m| m["method"].clone())
            .collect()
    };
    assert_eq!(
        methods(&kit, gets[0]),
        [json!("notifications/tools/list_changed")]
    );
    assert_eq!(
        methods(&kit, gets[1]),
        [
            json!("notifications/tools/list_changed"),
            json!("notifications/resources/updated")
        ]
    );
}

#[test]
fn resumption_replays_a_stream_after_last_event_id() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let post = kit.post(&on(&sid), &call(8, "slow")).unwrap_err();
    let priming = kit.collected(post).events()[0].clone();
    let last = priming.id.clone().unwrap();
    assert_eq!(priming.retry, Some(1000));
    // the server ends the POST stream (polling); the result is produced meanwhile
    kit.http.disconnect(kit.now, post);
    kit.pump();
    assert!(kit.collected(post).ended);
    kit.finish("slow", "resumed result");
    // GET with Last-Event-ID gets the rest of that stream, then the stream ends
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    h.push(("Last-Event-ID", &last));
    let get = kit.request("GET", &h, "").unwrap_err();
    let c = kit.collected(get);
    assert!(c.ended);
    let messages = c.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["id"], 8);
    assert_eq!(
        messages[0]["result"]["content"][0]["text"],
        "resumed result"
    );
    // the event ids name the stream: resuming after the answer replays nothing more
    let answer_id = c.events().last().unwrap().id.clone().unwrap();
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    h.push(("Last-Event-ID", &answer_id));
    let again = kit.request("GET", &h, "").unwrap_err();
    assert!(kit.collected(again).ended);
    assert!(kit.collected(again).messages().is_empty());
}

#[test]
fn a_client_disconnect_is_not_a_cancellation_on_2025() {
    let mut kit = Kit::new();
    let sid = kit.initialize();
    let post = kit.post(&on(&sid), &call(8, "slow")).unwrap_err();
    let last = kit.collected(post).events()[0].id.clone().unwrap();
    kit.close(post);
    assert!(kit.cancelled.is_empty());
    kit.finish("slow", "kept");
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    h.push(("Last-Event-ID", &last));
    let get = kit.request("GET", &h, "").unwrap_err();
    assert_eq!(
        kit.collected(get).messages()[0]["result"]["content"][0]["text"],
        "kept"
    );
}

#[test]
fn the_replay_buffer_is_bounded() {
    let mut config = HttpConfig::default();
    config.replay_events = 3;
    let mut kit = Kit::with_config(config);
    let sid = kit.initialize();
    let key = kit.http.session_key(&sid).unwrap();
    for _ in 0..5 {
        kit.http
            .session_mut(key)
            .unwrap()
            .notify_list_changed(ListKind::Tools)
            .unwrap();
    }
    kit.pump();
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    let get = kit.request("GET", &h, "").unwrap_err();
    let ids: Vec<_> = kit
        .collected(get)
        .events()
        .into_iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| e.id.unwrap())
        .collect();
    assert_eq!(ids.len(), 3, "only the newest three were kept: {ids:?}");
    // a resumption from the second-to-last replays one
    kit.close(get);
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    h.push(("Last-Event-ID", &ids[1]));
    let again = kit.request("GET", &h, "").unwrap_err();
    let replayed: Vec<_> = kit
        .collected(again)
        .events()
        .into_iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| e.id.unwrap())
        .collect();
    assert_eq!(replayed, [ids[2].clone()]);
}

#[test]
fn idle_sessions_are_evicted_and_the_count_is_bounded() {
    let mut config = HttpConfig::default();
    config.idle_timeout = Duration::from_secs(60);
    config.max_sessions = 2;
    let mut kit = Kit::with_config(config);
    let a = kit.initialize();
    let _b = kit.initialize();
    assert!(kit.http.poll_timeout().is_some());
    kit.advance(Duration::from_secs(61));
    assert_eq!(kit.http.session_count(), 0);
    assert_eq!(kit.closed.len(), 2);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(kit.post(&on(&a), &list).unwrap().status, 404);
}

#[test]
fn an_open_stream_keeps_a_session_alive() {
    let mut config = HttpConfig::default();
    config.idle_timeout = Duration::from_secs(60);
    let mut kit = Kit::with_config(config);
    let sid = kit.initialize();
    let mut h = on(&sid);
    h.push(("Accept", "text/event-stream"));
    let get = kit.request("GET", &h, "").unwrap_err();
    kit.advance(Duration::from_secs(600));
    assert_eq!(kit.http.session_count(), 1);
    kit.close(get);
    kit.advance(Duration::from_secs(61));
    assert_eq!(kit.http.session_count(), 0);
}

#[test]
fn with_a_node_every_session_id_names_it_and_still_serves() {
    let config = HttpConfig::default()
        .with_node("b-2")
        .expect("a valid name");
    let mut kit = Kit::with_config(config);
    let (one, two) = (kit.initialize(), kit.initialize());
    for sid in [&one, &two] {
        let (node, rest) = sid.split_once('.').expect("a tagged id");
        assert_eq!(node, "b-2", "{sid}");
        assert!(
            rest.len() == 32 && rest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{sid}"
        );
    }
    assert_ne!(one, two);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let exchange = kit.post(&on(&one), &list).unwrap_err();
    assert_eq!(kit.collected(exchange).status(), 200);
    // The same random part under another node's name is another (unknown) session
    let other = one.replacen("b-2.", "c.", 1);
    assert_eq!(kit.post(&on(&other), &list).unwrap().status, 404);
    // Untagged by default
    let mut plain = Kit::new();
    assert!(!plain.initialize().contains('.'));
}

#[test]
fn a_node_name_is_checked_when_it_is_set() {
    for bad in ["", "a.b", "has space", &"x".repeat(33)] {
        let err = HttpConfig::default().with_node(bad).unwrap_err();
        assert!(err.to_string().contains("invalid node name"), "{err}");
    }
    assert!(HttpConfig::default().node.is_none());
}
