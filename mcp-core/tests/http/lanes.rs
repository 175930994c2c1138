//! The 2026 fast path ([`Lane`]): a stateless request served on a session of its own, with
//! the server's rules. The oracle is the [`HttpServer`](mcp_sansio::http::HttpServer): every
//! request below gets the same answer on a lane as on the server (status, headers that
//! matter, body), and what a lane does not take it leaves to the server untouched.

use std::sync::Arc;
use std::time::Duration;

use crate::http_kit::{self, Kit, modern, raw, respond};
use mcp_sansio::codec::sse::SseDecoder;
use mcp_sansio::http::{HttpConfig, HttpResponse, Lane, LaneOutput, Source, Taken};
use mcp_sansio::schema::Tool;
use mcp_sansio::{ErrorObject, Progress, Responder, ServerEvent, ServerSession};
use serde_json::{Value, json};

fn headers<'a>(method: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Host", "127.0.0.1:3000"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    h.extend_from_slice(extra);
    h
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// What a lane wrote for one request
#[derive(Debug, Default)]
struct Written {
    status: u16,
    content_type: String,
    retry_after: Option<String>,
    body: Vec<u8>,
    ended: bool,
}

impl Written {
    fn of(response: &HttpResponse) -> Self {
        Self {
            status: response.status,
            content_type: response.header("Content-Type").unwrap_or("").to_owned(),
            retry_after: response.header("Retry-After").map(str::to_owned),
            body: response.body.clone(),
            ended: true,
        }
    }

    fn messages(&self) -> Vec<Value> {
        if !self.content_type.starts_with("text/event-stream") {
            return vec![serde_json::from_slice(&self.body).expect("a JSON body")];
        }
        let mut decoder = SseDecoder::new(1 << 20);
        decoder.push(&self.body);
        let mut messages = Vec::new();
        while let Some(event) = decoder.next_event() {
            let event = event.unwrap();
            if !event.data.is_empty() {
                messages.push(serde_json::from_str(&event.data).unwrap());
            }
        }
        messages
    }
}

/// The scripted application of the lane's session: the tools the server kit has
fn answer(session: &mut ServerSession, event: ServerEvent, held: &mut Vec<Responder>) {
    let ServerEvent::Request(request) = event else {
        return;
    };
    let params: Value = request.params_as().unwrap_or(json!({}));
    let responder = request.responder;
    match (
        request.method.as_str(),
        params["name"].as_str().unwrap_or(""),
    ) {
        ("tools/call", "echo") => {
            let text = params["arguments"]["text"].as_str().unwrap_or("hi");
            respond(
                session,
                responder,
                json!({"content": [{"type": "text", "text": text}]}),
            );
        }
        ("tools/call", "progress") => {
            let mut inbound = session.inbound(responder.id());
            inbound
                .report_progress(&Progress::new(1.0).total(2.0))
                .unwrap();
            let log = raw(json!({"level": "info", "data": "working"}));
            session
                .inbound(responder.id())
                .send_notification_raw("notifications/message", Some(&log))
                .unwrap();
            session
                .inbound(responder.id())
                .report_progress(&Progress::new(2.0).total(2.0))
                .unwrap();
            respond(session, responder, json!({"content": []}));
        }
        ("tools/call", "busy") => {
            let error = ErrorObject::server_busy("no handler thread left");
            session.respond_error(responder, &error);
        }
        ("tools/call", _) => held.push(responder),
        ("tools/list", _) => respond(session, responder, json!({"tools": []})),
        _ => respond(session, responder, json!({})),
    }
}

/// A lane of `kit`'s server and what its requests wrote
struct LaneKit {
    lane: Lane,
    held: Vec<Responder>,
    cancelled: usize,
    written: Written,
}

impl LaneKit {
    fn of(kit: &Kit) -> Self {
        Self {
            lane: kit.http.lanes().lane(kit.now),
            held: Vec::new(),
            cancelled: 0,
            written: Written::default(),
        }
    }

    fn post(&mut self, kit: &Kit, headers: &[(&str, &str)], body: &Value) -> Option<Taken> {
        self.written = Written::default();
        let body = body.to_string();
        let taken =
            self.lane
                .handle_request(kit.now, &kit.source, "POST", headers, body.as_bytes());
        match taken {
            Taken::Complete(response) => {
                self.written = Written::of(&response);
                Some(Taken::Complete(response))
            }
            Taken::Open => {
                self.pump();
                Some(Taken::Open)
            }
            Taken::Elsewhere => None,
            _ => unreachable!(),
        }
    }

    fn pump(&mut self) {
        while let Some(event) = self.lane.poll_event() {
            if matches!(event, ServerEvent::Cancelled { .. }) {
                self.cancelled += 1;
            }
            answer(self.lane.session_mut(), event, &mut self.held);
        }
        while let Some(output) = self.lane.poll_output() {
            match output {
                LaneOutput::Complete(response) => {
                    assert!(!self.written.ended, "one response per request");
                    self.written = Written::of(&response);
                }
                LaneOutput::Head(head) => {
                    assert_eq!(self.written.status, 0, "one head");
                    self.written.status = head.status;
                    self.written.content_type =
                        head.header("Content-Type").unwrap_or("").to_owned();
                }
                LaneOutput::Body(data) => {
                    assert!(self.written.status != 0 && !self.written.ended);
                    self.written.body.extend_from_slice(&data);
                }
                LaneOutput::End => self.written.ended = true,
                _ => unreachable!(),
            }
        }
    }

    fn finish(&mut self, text: &str) {
        let responder = self.held.remove(0);
        respond(
            self.lane.session_mut(),
            responder,
            json!({"content": [{"type": "text", "text": text}]}),
        );
        self.pump();
    }
}

/// The server's answer to the same request, as the lane's
fn on_the_server(kit: &mut Kit, headers: &[(&str, &str)], body: &Value) -> Written {
    match kit.request("POST", headers, &body.to_string()) {
        Ok(response) => Written::of(&response),
        Err(exchange) => {
            let c = kit.collected(exchange);
            let head = c.head.as_ref().expect("answered at once");
            Written {
                status: head.status,
                content_type: head.header("Content-Type").unwrap_or("").to_owned(),
                retry_after: head.header("Retry-After").map(str::to_owned),
                body: c.body.clone(),
                ended: c.ended,
            }
        }
    }
}

fn with_token(mut body: Value) -> Value {
    body["params"]["_meta"]["progressToken"] = json!("p");
    body
}

fn x_mcp_header_tool() -> Tool {
    serde_json::from_value(json!({"name": "test_x_mcp_header", "description": "region",
        "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}))
    .unwrap()
}

#[test]
fn every_answer_is_the_servers_status_body_and_framing() {
    let mut kit = Kit::new();
    kit.http.set_tool(&x_mcp_header_tool());
    let mut lane = LaneKit::of(&kit);
    let mut no_meta = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}});
    let mut wrong_version = modern(2, "server/discover", json!({}));
    wrong_version["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let unknown = modern(3, "no/such/method", json!({}));
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Value);
    let cases: Vec<Case<'_>> = vec![
        (
            "discover",
            headers("server/discover", &[]),
            modern(4, "server/discover", json!({})),
        ),
        ("no _meta", headers("server/discover", &[]), no_meta.take()),
        (
            "a version header mismatch",
            headers("server/discover", &[]),
            wrong_version.clone(),
        ),
        (
            "an unsupported version",
            {
                let mut h = headers("server/discover", &[]);
                h[3] = ("MCP-Protocol-Version", "v999.0.0");
                h
            },
            wrong_version,
        ),
        (
            "an Mcp-Method mismatch",
            headers("tools/list", &[]),
            call(5, "echo", json!({})),
        ),
        (
            "a missing Mcp-Name",
            headers("tools/call", &[]),
            call(6, "echo", json!({})),
        ),
        (
            "an unknown method: 404",
            headers("no/such/method", &[]),
            unknown,
        ),
        (
            "echo as JSON",
            headers("tools/call", &[("Mcp-Name", "echo")]),
            call(7, "echo", json!({"text": "hello world"})),
        ),
        (
            "progress and logs first: SSE",
            headers("tools/call", &[("Mcp-Name", "progress")]),
            with_token(call(8, "progress", json!({}))),
        ),
        (
            "busy: 503 with Retry-After",
            headers("tools/call", &[("Mcp-Name", "busy")]),
            call(9, "busy", json!({})),
        ),
        (
            "a missing Mcp-Param header",
            headers("tools/call", &[("Mcp-Name", "test_x_mcp_header")]),
            call(10, "test_x_mcp_header", json!({"region": "us-west1"})),
        ),
        (
            "tools/list",
            headers("tools/list", &[]),
            modern(11, "tools/list", json!({})),
        ),
        (
            "params nested past the parser's depth",
            headers("tools/list", &[]),
            {
                let mut deep = json!([]);
                for _ in 0..300 {
                    deep = json!([deep]);
                }
                modern(13, "tools/list", json!({ "x": deep }))
            },
        ),
        (
            "not JSON",
            headers("tools/list", &[]),
            Value::String("{not json".to_owned()),
        ),
    ];
    for (what, h, body) in cases {
        let theirs = on_the_server(&mut kit, &h, &body);
        let taken = lane.post(&kit, &h, &body);
        assert!(taken.is_some(), "{what}: a lane takes it");
        let ours = &lane.written;
        assert!(ours.ended, "{what}: answered at once");
        assert_eq!(ours.status, theirs.status, "{what}");
        assert_eq!(ours.content_type, theirs.content_type, "{what}");
        assert_eq!(ours.retry_after, theirs.retry_after, "{what}");
        assert_eq!(ours.messages(), theirs.messages(), "{what}");
        assert!(!lane.lane.is_open(), "{what}: the lane is free again");
    }
    // A JSON-only client gets the answer without the progress before it.
    let h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
        ("Host", "127.0.0.1:3000"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "progress"),
    ];
    let body = with_token(call(12, "progress", json!({})));
    let theirs = on_the_server(&mut kit, &h, &body);
    lane.post(&kit, &h, &body).unwrap();
    assert_eq!(lane.written.content_type, "application/json");
    assert_eq!(lane.written.messages(), theirs.messages());
    assert_eq!(kit.http.in_flight(), 0, "nothing left counted");
}

#[test]
fn what_needs_the_shared_session_or_the_2025_wire_is_left_to_the_server() {
    let kit = Kit::new();
    let mut lane = LaneKit::of(&kit);
    let get = lane
        .lane
        .handle_request(kit.now, &kit.source, "GET", &headers("x", &[]), b"");
    assert!(matches!(get, Taken::Elsewhere));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let legacy = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Host", "127.0.0.1:3000"),
    ];
    assert!(lane.post(&kit, &legacy, &init).is_none(), "the 2025 wire");
    let listen = modern(1, "subscriptions/listen", json!({}));
    assert!(
        lane.post(&kit, &headers("subscriptions/listen", &[]), &listen)
            .is_none()
    );
    let get_task = modern(2, "tasks/get", json!({"taskId": "abc"}));
    assert!(
        lane.post(
            &kit,
            &headers("tasks/get", &[("Mcp-Name", "abc")]),
            &get_task
        )
        .is_none()
    );
    assert_eq!(kit.http.in_flight(), 0, "nothing counted for them");
}

#[test]
fn a_call_that_may_become_a_task_goes_to_the_shared_session() {
    let mut config = http_kit::server_config();
    config.capabilities["extensions"]["io.modelcontextprotocol/tasks"] = json!({});
    #[allow(clippy::disallowed_methods)] // the fake clock starts at any instant
    let now = std::time::Instant::now();
    let http =
        mcp_sansio::http::HttpServer::new(Arc::new(HttpConfig::default()), Arc::new(config), now);
    let mut lane = http.lanes().lane(now);
    let mut body = call(1, "slow", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    let text = body.to_string();
    let taken = lane.handle_request(now, &Source::unknown(), "POST", &h, text.as_bytes());
    assert!(matches!(taken, Taken::Elsewhere), "{taken:?}");
    // Without the client's tasks extension the lane takes it.
    let plain = call(2, "slow", json!({})).to_string();
    let taken = lane.handle_request(now, &Source::unknown(), "POST", &h, plain.as_bytes());
    assert!(matches!(taken, Taken::Open), "{taken:?}");
}

#[test]
fn closing_the_response_cancels_the_request_and_frees_its_place() {
    let mut config = HttpConfig::default();
    config.max_in_flight = 1;
    let mut kit = Kit::with_config(config);
    let mut lane = LaneKit::of(&kit);
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    assert!(matches!(
        lane.post(&kit, &h, &call(1, "slow", json!({}))),
        Some(Taken::Open)
    ));
    assert_eq!(lane.held.len(), 1);
    assert_eq!(
        kit.http.in_flight(),
        1,
        "the lane counts in the server's caps"
    );
    // The server is full: one cap for both paths.
    let theirs = on_the_server(&mut kit, &h, &call(2, "slow", json!({})));
    assert_eq!(theirs.status, 503);
    assert!(theirs.retry_after.is_some());
    let mut other = LaneKit::of(&kit);
    other.post(&kit, &h, &call(3, "slow", json!({}))).unwrap();
    assert_eq!(other.written.status, 503, "a second lane is refused too");
    // The client leaves: cancelled, counted no more.
    lane.lane.handle_closed(kit.now);
    lane.pump();
    assert_eq!(lane.cancelled, 1);
    assert_eq!(kit.http.in_flight(), 0);
    assert!(!lane.lane.is_open());
    // The late answer goes nowhere.
    lane.finish("late");
    assert_eq!(lane.written.status, 0);
    // The lane serves the next request.
    lane.post(
        &kit,
        &headers("tools/call", &[("Mcp-Name", "echo")]),
        &call(4, "echo", json!({"text": "again"})),
    )
    .unwrap();
    assert_eq!(
        lane.written.messages()[0]["result"]["content"][0]["text"],
        "again"
    );
}

#[test]
fn dropping_a_lane_with_a_request_open_frees_its_place() {
    let kit = Kit::new();
    let mut lane = LaneKit::of(&kit);
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    lane.post(&kit, &h, &call(1, "slow", json!({}))).unwrap();
    assert_eq!(kit.http.in_flight(), 1);
    drop(lane);
    assert_eq!(kit.http.in_flight(), 0);
}

#[test]
fn a_held_request_answers_later_and_a_busy_lane_takes_no_other() {
    let kit = Kit::new();
    let mut lane = LaneKit::of(&kit);
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    lane.post(&kit, &h, &call(1, "slow", json!({}))).unwrap();
    assert!(lane.lane.is_open() && lane.lane.poll_output().is_none());
    let second = call(2, "echo", json!({})).to_string();
    let taken = lane
        .lane
        .handle_request(kit.now, &kit.source, "POST", &h, second.as_bytes());
    assert!(matches!(taken, Taken::Elsewhere), "one request at a time");
    lane.finish("done");
    assert!(lane.written.ended);
    assert_eq!(lane.written.status, 200);
    assert_eq!(lane.written.messages()[0]["id"], 1);
    assert_eq!(kit.http.in_flight(), 0);
}

#[test]
fn a_quiet_request_gets_keepalive_comments_like_the_servers() {
    let second = Duration::from_secs(1);
    let mut config = HttpConfig::default();
    config.keepalive = Some(15 * second);
    let mut kit = Kit::with_config(config);
    let mut lane = LaneKit::of(&kit);
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    lane.post(&kit, &h, &call(3, "slow", json!({}))).unwrap();
    let due = lane.lane.poll_timeout().expect("a keepalive deadline");
    assert_eq!(due, kit.now + 15 * second);
    kit.now += 14 * second;
    lane.lane.handle_timeout(kit.now);
    lane.pump();
    assert_eq!(lane.written.status, 0, "not quiet long enough");
    kit.now += second;
    lane.lane.handle_timeout(kit.now);
    lane.pump();
    assert_eq!(lane.written.status, 200);
    assert_eq!(lane.written.content_type, "text/event-stream");
    assert_eq!(lane.written.body, b": keepalive\n\n");
    lane.finish("done");
    assert!(lane.written.ended);
    let messages = lane.written.messages();
    assert_eq!(messages.len(), 1, "comments are no messages");
    assert_eq!(messages[0]["result"]["content"][0]["text"], "done");
}

#[test]
fn a_tool_set_on_the_server_is_checked_by_its_lanes() {
    let mut kit = Kit::new();
    let mut lane = LaneKit::of(&kit);
    let h = headers("tools/call", &[("Mcp-Name", "test_x_mcp_header")]);
    let body = call(1, "test_x_mcp_header", json!({"region": "us-west1"}));
    lane.post(&kit, &h, &body).unwrap();
    assert!(lane.lane.is_open(), "no mirrors known: the call runs");
    lane.lane.handle_closed(kit.now);
    lane.pump();
    // A lane made before the tool was set follows it.
    kit.http.set_tool(&x_mcp_header_tool());
    lane.post(&kit, &h, &body).unwrap();
    assert_eq!(
        lane.written.status, 400,
        "the Mcp-Param-Region header is missing"
    );
    kit.http.remove_tool("test_x_mcp_header");
    lane.post(&kit, &h, &body).unwrap();
    assert!(lane.lane.is_open(), "forgotten: the call runs");
}
