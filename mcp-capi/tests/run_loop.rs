//! The run loop through the C functions: a client handle and a server handle joined in
//! memory, in both eras, on a fake millisecond clock

// The tests call the C functions, which are unsafe by nature (common/mod.rs wraps them).
#![allow(unsafe_code)]

mod common;

use common::{Client, Pair, Server, last_error};
use mcp_capi::mcp_status::{MCP_ERR_STATE, MCP_OK};
use serde_json::{Value, json};

const ERAS: [&str; 3] = ["2025-11-25", "2026-07-28", "auto"];

fn expected_version(era: &str) -> &str {
    if era == "auto" { "2026-07-28" } else { era }
}

#[test]
fn handshake_in_both_eras() {
    for era in ERAS
        .into_iter()
        .chain(["2024-11-05", "2025-03-26", "2025-06-18", "legacy"])
    {
        let mut pair = Pair::ready(era, "");
        let ready = Pair::take(&mut pair.client_events, "ready");
        assert_eq!(ready.len(), 1, "{era}");
        let version = match era {
            "legacy" => "2025-11-25",
            other => expected_version(other),
        };
        assert_eq!(ready[0]["protocolVersion"], version, "{era}");
        assert_eq!(ready[0]["serverInfo"]["name"], "test-server", "{era}");
        assert_eq!(
            ready[0]["capabilities"],
            json!({"tools": {}, "logging": {}}),
            "{era}"
        );
        // A legacy server learns of the client in a `ready` event; a modern one has no such
        // moment.
        let server_ready = Pair::take(&mut pair.server_events, "ready");
        if version == "2026-07-28" {
            assert!(server_ready.is_empty(), "{era}: {server_ready:?}");
        } else {
            assert_eq!(server_ready.len(), 1, "{era}");
            assert_eq!(server_ready[0]["protocolVersion"], version);
            assert_eq!(server_ready[0]["clientInfo"]["name"], "test-client");
        }
        assert!(
            pair.server_events.is_empty(),
            "{era}: {:?}",
            pair.server_events
        );
        assert_eq!(pair.client.is_closed(), 0);
        assert_eq!(pair.server.is_closed(), 0);
        assert_eq!(pair.client.wants_read(), 1);
        assert_eq!(pair.server.wants_read(), 1);
    }
}

#[test]
fn tools_list_is_answered_by_the_library() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let id = pair.client.request(pair.now, "tools/list", None).unwrap();
        pair.exchange();
        assert!(
            pair.server_events.iter().all(|e| e["kind"] != "request"),
            "{era}"
        );
        let responses = Pair::take(&mut pair.client_events, "response");
        assert_eq!(responses.len(), 1, "{era}: {:?}", pair.client_events);
        assert_eq!(responses[0]["request"], id);
        let tools = responses[0]["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["name"], "echo");
    }
}

/// Calls the echo tool; the server's request event and the request's number
fn call_echo(pair: &mut Pair, text: &str) -> (Value, u64) {
    let params = json!({"name": "echo", "arguments": {"text": text}}).to_string();
    let id = pair
        .client
        .request(pair.now, "tools/call", Some(&params))
        .unwrap_or_else(|s| panic!("{s:?}: {}", last_error()));
    pair.exchange();
    let mut requests = Pair::take(&mut pair.server_events, "request");
    assert_eq!(requests.len(), 1, "{:?}", pair.server_events);
    (requests.remove(0), id)
}

#[test]
fn tools_call_echo() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "hello from C");
        assert_eq!(request["method"], "tools/call");
        assert_eq!(request["name"], "echo");
        assert_eq!(request["arguments"], json!({"text": "hello from C"}));
        assert_eq!(request["params"]["name"], "echo");
        assert_eq!(request["protocolVersion"], expected_version(era));
        let handle = request["request"].as_u64().unwrap();
        let result = json!({"content": [{"type": "text", "text": request["arguments"]["text"]}]});
        assert_eq!(
            pair.server.respond(pair.now, handle, &result.to_string()),
            MCP_OK
        );
        // Answered once: a second answer is refused.
        assert_eq!(pair.server.respond(pair.now, handle, "{}"), MCP_ERR_STATE);
        assert!(last_error().contains("not open"), "{}", last_error());
        pair.exchange();
        let responses = Pair::take(&mut pair.client_events, "response");
        assert_eq!(responses.len(), 1, "{era}");
        assert_eq!(responses[0]["request"], id);
        assert_eq!(
            responses[0]["result"]["content"][0]["text"], "hello from C",
            "{era}"
        );
    }
}

#[test]
fn tools_call_refusals_are_answered_by_the_library() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        // An unknown tool: an error answer.
        let unknown = json!({"name": "nope", "arguments": {}}).to_string();
        let id = pair
            .client
            .request(pair.now, "tools/call", Some(&unknown))
            .unwrap();
        // Arguments failing the input schema: an isError result.
        let invalid = json!({"name": "echo", "arguments": {"text": 5}}).to_string();
        let id2 = pair
            .client
            .request(pair.now, "tools/call", Some(&invalid))
            .unwrap();
        pair.exchange();
        assert!(
            pair.server_events.iter().all(|e| e["kind"] != "request"),
            "{era}"
        );
        let responses = Pair::take(&mut pair.client_events, "response");
        let first = responses.iter().find(|r| r["request"] == id).unwrap();
        assert_eq!(first["failure"], "remote", "{era}: {first}");
        assert!(first["error"]["code"].is_i64());
        let second = responses.iter().find(|r| r["request"] == id2).unwrap();
        assert_eq!(second["result"]["isError"], true, "{era}: {second}");
    }
}

#[test]
fn errors_reach_the_client() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "x");
        let handle = request["request"].as_u64().unwrap();
        assert_eq!(
            pair.server
                .respond_error(pair.now, handle, -32000, "it broke"),
            MCP_OK
        );
        pair.exchange();
        let responses = Pair::take(&mut pair.client_events, "response");
        assert_eq!(responses[0]["request"], id);
        assert_eq!(responses[0]["failure"], "remote");
        assert_eq!(
            responses[0]["error"],
            json!({"code": -32000, "message": "it broke"})
        );
    }
}

#[test]
fn progress_reaches_the_client() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "slow");
        assert_eq!(
            request["wantsProgress"], true,
            "{era}: every client request asks"
        );
        let handle = request["request"].as_u64().unwrap();
        let now = pair.now;
        assert_eq!(
            pair.server.progress(now, handle, 1.0, 3.0, Some("one")),
            MCP_OK
        );
        assert_eq!(
            pair.server.progress(now, handle, 2.0, f64::NAN, None),
            MCP_OK
        );
        // Progress must increase.
        assert_eq!(
            pair.server.progress(now, handle, 2.0, 3.0, None),
            MCP_ERR_STATE
        );
        assert!(last_error().contains("increase"), "{}", last_error());
        assert_eq!(
            pair.server.progress(now, handle, f64::INFINITY, 3.0, None),
            MCP_ERR_STATE
        );
        pair.exchange();
        let progress = Pair::take(&mut pair.client_events, "progress");
        assert_eq!(
            progress,
            vec![
                json!({"kind": "progress", "request": id, "progress": 1.0, "total": 3.0, "message": "one"}),
                json!({"kind": "progress", "request": id, "progress": 2.0}),
            ],
            "{era}"
        );
        assert_eq!(
            pair.server.respond(pair.now, handle, r#"{"content":[]}"#),
            MCP_OK
        );
        pair.exchange();
        assert_eq!(Pair::take(&mut pair.client_events, "response").len(), 1);
        // Progress on an answered request is refused.
        assert_eq!(
            pair.server.progress(pair.now, handle, 3.0, 3.0, None),
            MCP_ERR_STATE
        );
    }
}

#[test]
fn cancellation_reaches_the_server() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "long");
        let handle = request["request"].as_u64().unwrap();
        assert_eq!(pair.client.cancel(pair.now, id), MCP_OK);
        // Cancelled once: the request is no longer in flight.
        pair.exchange();
        let responses = Pair::take(&mut pair.client_events, "response");
        assert_eq!(responses.len(), 1, "{era}");
        assert_eq!(responses[0]["request"], id);
        assert_eq!(responses[0]["failure"], "cancelled");
        assert_eq!(pair.client.cancel(pair.now, id), MCP_ERR_STATE);
        let cancelled = Pair::take(&mut pair.server_events, "cancelled");
        assert_eq!(cancelled.len(), 1, "{era}: {:?}", pair.server_events);
        assert_eq!(cancelled[0]["request"], handle);
        // Responding after the `cancelled` event was polled: refused, nothing sent.
        assert_eq!(pair.server.respond(pair.now, handle, "{}"), MCP_ERR_STATE);
        assert!(pair.server.transmit().is_empty());

        // Answered before its `cancelled` event was polled: accepted, and dropped.
        let (request, id) = call_echo(&mut pair, "again");
        let handle = request["request"].as_u64().unwrap();
        assert_eq!(pair.client.cancel(pair.now, id), MCP_OK);
        let to_server = pair.client.transmit();
        assert_eq!(pair.server.bytes(pair.now, &to_server), MCP_OK);
        assert_eq!(
            pair.server.respond(pair.now, handle, r#"{"content":[]}"#),
            MCP_OK
        );
        assert!(
            pair.server.transmit().is_empty(),
            "{era}: the answer is dropped"
        );
        let events = pair.server.events();
        assert_eq!(events.len(), 1, "{era}: {events:?}");
        assert_eq!(events[0]["kind"], "cancelled");
        assert_eq!(pair.server.respond(pair.now, handle, "{}"), MCP_ERR_STATE);
    }
}

#[test]
fn timeouts_fire_through_poll_timeout() {
    for era in ERAS {
        let mut pair = Pair::ready(era, r#","requestTimeoutMs":5000"#);
        // Drain what the handshake armed (auto's discovery timer is gone once ready).
        let (request, id) = call_echo(&mut pair, "never answered");
        let handle = request["request"].as_u64().unwrap();
        let deadline = pair
            .client
            .deadline()
            .expect("the request's timeout is armed");
        assert_eq!(
            deadline,
            pair.now + 5000,
            "{era}: in the caller's milliseconds"
        );
        // Not yet: nothing fires a millisecond early.
        assert_eq!(pair.client.timeout(deadline - 1), MCP_OK);
        assert!(pair.client.events().is_empty());
        pair.now = deadline;
        assert_eq!(pair.client.timeout(pair.now), MCP_OK);
        pair.exchange();
        let responses = Pair::take(&mut pair.client_events, "response");
        assert_eq!(responses.len(), 1, "{era}");
        assert_eq!(responses[0]["request"], id);
        assert_eq!(responses[0]["failure"], "timeout");
        assert_eq!(responses[0]["error"]["code"], -32001);
        // The server was told: its request is cancelled.
        let cancelled = Pair::take(&mut pair.server_events, "cancelled");
        assert_eq!(cancelled.len(), 1, "{era}: {:?}", pair.server_events);
        assert_eq!(cancelled[0]["request"], handle);
        assert_eq!(pair.client.deadline(), None);
    }
}

#[test]
fn auto_falls_back_to_initialize_on_a_legacy_server() {
    let now = 10;
    let mut server = Server::new(r#"{"name":"old","version":"1","era":"legacy"}"#, now);
    let mut client = Client::new(r#"{"name":"c","version":"1"}"#, now);
    let mut ready = None;
    let mut t = now;
    for _ in 0..20 {
        let to_server = client.transmit();
        server.bytes(t, &to_server);
        assert!(server.events().iter().all(|e| e["kind"] == "ready"));
        let to_client = server.transmit();
        client.bytes(t, &to_client);
        if let Some(r) = client.events().into_iter().find(|e| e["kind"] == "ready") {
            ready = Some(r);
            break;
        }
        // Quiet: fire the next timer through poll_timeout.
        if to_server.is_empty()
            && to_client.is_empty()
            && let Some(deadline) = client.deadline()
        {
            t = t.max(deadline);
            client.timeout(t);
        }
    }
    let ready = ready.expect("the client fell back to initialize");
    assert_eq!(ready["protocolVersion"], "2025-11-25");
}

#[test]
fn time_never_goes_back() {
    let mut pair = Pair::ready("2025-11-25", r#","requestTimeoutMs":1000"#);
    let (_, id) = call_echo(&mut pair, "x");
    let deadline = pair.client.deadline().unwrap();
    // Time 0 is earlier than the handle's creation: treated as the latest time seen.
    assert_eq!(pair.client.timeout(0), MCP_OK);
    assert_eq!(pair.client.deadline(), Some(deadline));
    assert!(pair.client.events().is_empty());
    // A jump far ahead saturates instead of overflowing.
    assert_eq!(pair.client.timeout(u64::MAX), MCP_OK);
    let responses: Vec<_> = pair
        .client
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "response")
        .collect();
    assert_eq!(responses[0]["request"], id);
    assert_eq!(responses[0]["failure"], "timeout");
}

#[test]
fn log_messages_follow_set_level() {
    let mut pair = Pair::ready("2025-11-25", "");
    let info = r#"{"level":"info","data":"visible"}"#;
    let debug = r#"{"level":"debug","data":"hidden"}"#;
    assert_eq!(
        pair.server
            .notify(pair.now, "notifications/message", Some(info)),
        MCP_OK
    );
    assert_eq!(
        pair.server
            .notify(pair.now, "notifications/message", Some(debug)),
        MCP_OK
    );
    pair.exchange();
    let notes = Pair::take(&mut pair.client_events, "notification");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/message");
    assert_eq!(notes[0]["params"]["data"], "visible");
    // logging/setLevel is answered by the library and lowers the filter.
    let id = pair
        .client
        .request(pair.now, "logging/setLevel", Some(r#"{"level":"debug"}"#))
        .unwrap();
    pair.exchange();
    assert!(pair.server_events.iter().all(|e| e["kind"] != "request"));
    let responses = Pair::take(&mut pair.client_events, "response");
    assert_eq!(responses[0]["request"], id);
    assert!(responses[0]["result"].is_object(), "{responses:?}");
    assert_eq!(
        pair.server
            .notify(pair.now, "notifications/message", Some(debug)),
        MCP_OK
    );
    pair.exchange();
    assert_eq!(Pair::take(&mut pair.client_events, "notification").len(), 1);
    // A list change needs listChanged declared.
    assert_eq!(
        pair.server
            .notify(pair.now, "notifications/tools/list_changed", None),
        MCP_ERR_STATE
    );
    assert!(last_error().contains("listChanged"), "{}", last_error());
    // Other notifications go out as given.
    assert_eq!(
        pair.server
            .notify(pair.now, "example/note", Some(r#"{"a":1}"#)),
        MCP_OK
    );
    pair.exchange();
    let notes = Pair::take(&mut pair.client_events, "notification");
    assert_eq!(notes[0]["method"], "example/note");
    assert_eq!(notes[0]["params"], json!({"a": 1}));
}

#[test]
fn list_changes_reach_subscribers_in_both_eras() {
    for era in ["2025-11-25", "2026-07-28"] {
        let now = 0;
        let mut server = Server::new(
            r#"{"name":"s","version":"1","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true}}}"#,
            now,
        );
        server.add_tool(common::ECHO_TOOL);
        let client = Client::new(
            &format!(r#"{{"name":"c","version":"1","protocolVersion":"{era}"}}"#),
            now,
        );
        let mut pair = Pair {
            client,
            server,
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
        };
        pair.exchange();
        if era == "2026-07-28" {
            // A 2026 client listens for what it wants.
            let params = json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}});
            pair.client
                .request(now, "subscriptions/listen", Some(&params.to_string()))
                .unwrap_or_else(|s| panic!("{s:?} {}", last_error()));
        } else {
            let params = json!({"uri": "file:///a"});
            pair.client
                .request(now, "resources/subscribe", Some(&params.to_string()))
                .unwrap();
        }
        pair.exchange();
        Pair::take(&mut pair.client_events, "response");
        // 2026: the listen stream's acknowledgement.
        Pair::take(&mut pair.client_events, "notification");
        assert!(
            pair.server_events.iter().all(|e| e["kind"] != "request"),
            "{era}: {:?}",
            pair.server_events
        );
        // Adding a tool tells them by itself; so does the application.
        assert_eq!(
            pair.server
                .add_tool(&common::ECHO_TOOL.replace("echo", "echo2")),
            MCP_OK
        );
        assert_eq!(
            pair.server.notify(
                now,
                "notifications/resources/updated",
                Some(r#"{"uri":"file:///a"}"#)
            ),
            MCP_OK
        );
        assert_eq!(
            pair.server.notify(
                now,
                "notifications/resources/updated",
                Some(r#"{"uri":"file:///b"}"#)
            ),
            MCP_OK
        );
        pair.exchange();
        let notes = Pair::take(&mut pair.client_events, "notification");
        let methods: Vec<_> = notes
            .iter()
            .map(|n| n["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/tools/list_changed",
                "notifications/resources/updated"
            ],
            "{era}: {notes:?}"
        );
        assert_eq!(notes[1]["params"]["uri"], "file:///a");
    }
}

#[test]
fn ping_is_answered_by_the_library() {
    let mut pair = Pair::ready("2025-11-25", "");
    Pair::take(&mut pair.server_events, "ready");
    let id = pair.client.request(pair.now, "ping", None).unwrap();
    pair.exchange();
    let responses = Pair::take(&mut pair.client_events, "response");
    assert_eq!(
        responses[0]["request"], id,
        "ping is answered by the library"
    );
    assert!(pair.server_events.is_empty(), "{:?}", pair.server_events);
}

#[test]
fn extra_methods_go_to_the_application_both_ways() {
    let now = 0;
    let mut server = Server::new(
        r#"{"name":"s","version":"1","extraMethods":["example/thing"],"capabilities":{"tools":{},"experimental":{}}}"#,
        now,
    );
    let client = Client::new(
        r#"{"name":"c","version":"1","protocolVersion":"2025-11-25"}"#,
        now,
    );
    server.add_tool(common::ECHO_TOOL);
    let mut pair = Pair {
        client,
        server,
        now,
        client_events: Vec::new(),
        server_events: Vec::new(),
    };
    pair.exchange();
    let id = pair
        .client
        .request(now, "example/thing", Some(r#"{"x":1}"#))
        .unwrap();
    pair.exchange();
    let requests = Pair::take(&mut pair.server_events, "request");
    assert_eq!(requests.len(), 1, "{:?}", pair.server_events);
    assert_eq!(requests[0]["method"], "example/thing");
    assert_eq!(requests[0]["params"]["x"], 1);
    assert!(requests[0].get("name").is_none());
    let handle = requests[0]["request"].as_u64().unwrap();
    assert_eq!(pair.server.respond(now, handle, r#"{"y":2}"#), MCP_OK);
    pair.exchange();
    let responses = Pair::take(&mut pair.client_events, "response");
    assert_eq!(responses[0]["request"], id);
    assert_eq!(responses[0]["result"]["y"], 2);
}

#[test]
fn eof_and_close_end_both_sides() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "pending");
        let handle = request["request"].as_u64().unwrap();
        // The client goes away: its pending request ends, then the client is closed.
        assert_eq!(pair.client.close(pair.now), MCP_OK);
        assert_eq!(pair.client.is_closed(), 1);
        let events = pair.client.events();
        let kinds: Vec<_> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["response", "closed"], "{era}: {events:?}");
        assert_eq!(events[0]["request"], id);
        assert_eq!(events[0]["failure"], "closed");
        assert_eq!(events[1]["reason"], "local");
        assert_eq!(
            pair.client.close(pair.now),
            MCP_OK,
            "closing twice is harmless"
        );
        assert_eq!(
            pair.client.request(pair.now, "tools/list", None),
            Err(MCP_ERR_STATE)
        );
        // The server sees EOF: the pending request may still be answered, then it closes.
        assert_eq!(pair.server.eof(pair.now), MCP_OK);
        assert_eq!(pair.server.is_closed(), 0, "{era}: a request is still open");
        assert_eq!(
            pair.server.respond(pair.now, handle, r#"{"content":[]}"#),
            MCP_OK
        );
        let events = pair.server.events();
        let closed: Vec<_> = events.iter().filter(|e| e["kind"] == "closed").collect();
        assert_eq!(closed.len(), 1, "{era}: {events:?}");
        assert_eq!(closed[0]["reason"], "peer_closed");
        assert_eq!(pair.server.is_closed(), 1);
        assert_eq!(pair.server.deadline(), None);
    }
}

#[test]
fn auto_falls_back_to_initialize_when_discovery_gets_no_answer() {
    // A server that never answers `server/discover` (it reads nothing): the discovery
    // timer fires through poll_timeout/handle_timeout and `initialize` follows.
    let now = 500;
    let mut client = Client::new(r#"{"name":"c","version":"1"}"#, now);
    let first = String::from_utf8(client.transmit()).unwrap();
    assert!(first.contains("server/discover"), "{first}");
    let deadline = client.deadline().expect("the discovery timer");
    assert!(deadline > now);
    assert_eq!(client.timeout(deadline), MCP_OK);
    let second = String::from_utf8(client.transmit()).unwrap();
    assert!(second.contains("\"initialize\""), "{second}");
    // A legacy server answers it: the client is ready in 2025-11-25.
    let mut server = Server::new(r#"{"name":"s","version":"1","era":"legacy"}"#, deadline);
    server.bytes(deadline, second.as_bytes());
    let answer = server.transmit();
    client.bytes(deadline, &answer);
    let ready: Vec<_> = client
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "ready")
        .collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0]["protocolVersion"], "2025-11-25");
}

#[test]
fn a_flood_is_bounded_and_every_request_is_answered_once() {
    let mut pair = Pair::ready("2025-11-25", "");
    Pair::take(&mut pair.server_events, "ready");
    let total = 3000u64;
    let mut flood = Vec::new();
    for id in 100..100 + total {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": id.to_string()}}});
        flood.extend_from_slice(format!("{call}\n").as_bytes());
    }
    let now = pair.now;
    assert_eq!(pair.server.bytes(now, &flood), MCP_OK);
    assert_eq!(
        pair.server.wants_read(),
        0,
        "the queues are full: stop reading"
    );
    // The C loop: events (answering each), transmits, the deadline; until quiet.
    let mut answered = std::collections::HashMap::new();
    let mut from_app = 0;
    for _ in 0..100 {
        let events = pair.server.events();
        for event in &events {
            assert_eq!(event["kind"], "request", "{event}");
            let handle = event["request"].as_u64().unwrap();
            let text = event["arguments"]["text"].as_str().unwrap().to_owned();
            let result = json!({"content": [{"type": "text", "text": text}]}).to_string();
            assert_eq!(pair.server.respond(now, handle, &result), MCP_OK);
            from_app += 1;
        }
        let out = String::from_utf8(pair.server.transmit()).unwrap();
        for line in out.lines() {
            let message: Value = serde_json::from_str(line).unwrap();
            let id = message["id"].as_u64().unwrap();
            *answered.entry(id).or_insert(0) += 1;
            if message.get("result").is_some() {
                assert_eq!(message["result"]["content"][0]["text"], id.to_string());
            }
        }
        match pair.server.deadline() {
            Some(_) => assert_eq!(pair.server.timeout(now), MCP_OK),
            None if events.is_empty() && out.is_empty() => break,
            None => {}
        }
    }
    assert_eq!(answered.len() as u64, total, "every request answered");
    assert!(answered.values().all(|n| *n == 1), "each once");
    assert!(from_app > 0);
    assert_eq!(pair.server.wants_read(), 1, "drained: read again");
}

#[test]
fn input_required_is_answered_or_refused_through_the_client() {
    let caps = r#","capabilities":{"elicitation":{},"roots":{}}"#;
    let mut pair = Pair::ready("2025-11-25", caps);
    let now = pair.now;
    // A 2025 server asks the client directly (the C server API does not ask: raw bytes).
    let ask = json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
        "params": {"message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}}}});
    let roots = json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"});
    assert_eq!(
        pair.client
            .bytes(now, format!("{ask}\n{roots}\n").as_bytes()),
        MCP_OK
    );
    let events = pair.client.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events.iter().all(|e| e["kind"] == "input_required"),
        "{events:?}"
    );
    let (elicit, list) = (&events[0], &events[1]);
    let (key, request) = elicit["requests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your name?");
    let input = elicit["input"].as_u64().unwrap();
    // A missing key is refused; the input stays waiting.
    assert_eq!(
        pair.client.provide_input(now, input, "{}"),
        mcp_capi::mcp_status::MCP_ERR_JSON
    );
    let answer = json!({key: {"action": "accept", "content": {"name": "Ada"}}}).to_string();
    assert_eq!(
        pair.client.provide_input(now, input, &answer),
        MCP_OK,
        "{}",
        last_error()
    );
    assert_eq!(
        pair.client.provide_input(now, input, &answer),
        MCP_ERR_STATE
    );
    let refused = list["input"].as_u64().unwrap();
    assert_eq!(
        pair.client
            .refuse_input(now, refused, -32601, "no roots here"),
        MCP_OK
    );
    let out = String::from_utf8(pair.client.transmit()).unwrap();
    let replies: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{out}");
    assert_eq!(replies[0]["id"], "e1");
    assert_eq!(replies[0]["result"]["content"]["name"], "Ada");
    assert_eq!(replies[1]["id"], "r1");
    assert_eq!(replies[1]["error"]["message"], "no roots here");
}

#[test]
fn a_server_closes_itself() {
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let (request, id) = call_echo(&mut pair, "pending");
        let handle = request["request"].as_u64().unwrap();
        assert_eq!(pair.server.close(pair.now), MCP_OK);
        assert_eq!(pair.server.is_closed(), 1);
        // Answering before the closed event is polled: accepted, dropped.
        assert_eq!(pair.server.respond(pair.now, handle, "{}"), MCP_OK);
        let events = pair.server.events();
        assert_eq!(events.len(), 1, "{era}: {events:?}");
        assert_eq!(events[0]["reason"], "local");
        assert_eq!(
            pair.server.close(pair.now),
            MCP_OK,
            "closing twice is harmless"
        );
        // The client sees the end of the stream: its request ends, then it closes.
        assert_eq!(pair.client.eof(pair.now), MCP_OK);
        let events = pair.client.events();
        let kinds: Vec<_> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["response", "closed"], "{era}: {events:?}");
        assert_eq!(events[0]["request"], id);
        assert_eq!(events[0]["failure"], "closed");
        assert_eq!(events[1]["reason"], "peer_closed");
    }
}

#[test]
fn a_request_may_carry_its_own_timeout() {
    let mut pair = Pair::ready("2025-11-25", r#","requestTimeoutMs":5000"#);
    let params = r#"{"name":"echo","arguments":{"text":"x"}}"#;
    let mut timed = 0;
    let mut forever = 0;
    // SAFETY: a live handle and valid buffers.
    unsafe {
        use mcp_capi::mcp_client_request_timeout as request;
        let (m, p) = ("tools/call", params);
        let now = pair.now;
        assert_eq!(
            request(
                pair.client.0,
                now,
                m.as_ptr().cast(),
                m.len(),
                p.as_ptr().cast(),
                p.len(),
                200,
                &mut timed
            ),
            MCP_OK
        );
        assert_eq!(
            request(
                pair.client.0,
                now,
                m.as_ptr().cast(),
                m.len(),
                p.as_ptr().cast(),
                p.len(),
                0,
                &mut forever
            ),
            MCP_OK
        );
        assert_eq!(
            request(
                pair.client.0,
                now,
                std::ptr::null(),
                0,
                p.as_ptr().cast(),
                p.len(),
                0,
                &mut forever
            ),
            mcp_capi::mcp_status::MCP_ERR_NULL
        );
    }
    pair.exchange();
    // The one with 200 ms is due first; the one without a timeout never is.
    assert_eq!(pair.client.deadline(), Some(pair.now + 200));
    pair.now += 200;
    assert_eq!(pair.client.timeout(pair.now), MCP_OK);
    let responses: Vec<_> = pair
        .client
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "response")
        .collect();
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0]["request"], timed);
    assert_eq!(responses[0]["failure"], "timeout");
    assert_eq!(
        pair.client.deadline(),
        None,
        "request {forever} waits forever"
    );
}

#[test]
fn an_event_stays_readable_while_it_is_answered() {
    use mcp_capi::{mcp_server_poll_event, mcp_server_poll_transmit};
    for era in ERAS {
        let mut pair = Pair::ready(era, "");
        let params = json!({"name": "echo", "arguments": {"text": "kept"}}).to_string();
        pair.client
            .request(pair.now, "tools/call", Some(&params))
            .unwrap_or_else(|s| panic!("{s:?}: {}", last_error()));
        let bytes = pair.client.transmit();
        assert_eq!(pair.server.bytes(pair.now, &bytes), MCP_OK);
        let mut text = std::ptr::null();
        let mut len = 0;
        // SAFETY: a live handle and valid out pointers.
        let status = unsafe { mcp_server_poll_event(pair.server.0, &mut text, &mut len) };
        assert_eq!(status, MCP_OK, "{era}");
        // SAFETY: the library lends `len` bytes at `text` until the next poll_event.
        let read = || unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) }.to_vec();
        let before = read();
        let event: Value = serde_json::from_slice(&before).unwrap();
        assert_eq!(event["kind"], "request", "{era}");
        let handle = event["request"].as_u64().unwrap();
        // Answering it, and draining the bytes of the answer, leave the text alone.
        let result = json!({"content": [{"type": "text", "text": "kept"}]}).to_string();
        assert_eq!(pair.server.respond(pair.now, handle, &result), MCP_OK);
        let mut out = std::ptr::null();
        let mut out_len = 0;
        // SAFETY: as above.
        let status = unsafe { mcp_server_poll_transmit(pair.server.0, &mut out, &mut out_len) };
        assert_eq!(status, MCP_OK, "{era}");
        assert_eq!(
            read(),
            before,
            "{era}: the event's text changed under the caller"
        );
    }
}
