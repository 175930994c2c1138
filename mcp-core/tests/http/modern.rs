//! The 2026 (stateless) wire end to end: the FIXTURES §2.1.2 validation table and its order,
//! the status mapping, response streaming, cancellation by closing, DNS rebinding and the
//! transport checks

use crate::http_kit;

use http_kit::{Kit, modern};
use mcp_sansio::http::{HttpConfig, HttpResponse};
use mcp_sansio::schema::Tool;
use serde_json::{Value, json};

fn headers<'a>(method: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    h.extend_from_slice(extra);
    h
}

/// A complete rejection: status, code, echoed id
fn rejected(
    r: Result<HttpResponse, mcp_sansio::http::ExchangeId>,
    status: u16,
    code: i64,
    id: i64,
) -> Value {
    let r = r.expect("a complete rejection");
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["id"], id, "every error echoes the id");
    body
}

/// An open exchange's JSON answer: status and body
macro_rules! answered {
    ($kit:expr, $r:expr) => {{
        let r = $r;
        answered_at(&$kit, r)
    }};
}

fn answered_at(kit: &Kit, r: Result<HttpResponse, mcp_sansio::http::ExchangeId>) -> (u16, Value) {
    let exchange = r.expect_err("an open exchange");
    let c = kit.collected(exchange);
    assert!(c.ended, "the answer ends the response");
    (c.status(), c.messages().last().cloned().unwrap())
}

fn x_mcp_header_tool() -> Tool {
    serde_json::from_value(json!({"name": "test_x_mcp_header", "description": "region",
        "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}))
    .unwrap()
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

#[test]
fn meta_rows_give_400_with_invalid_params() {
    let mut kit = Kit::new();
    let h = headers("server/discover", &[]);
    let bare = json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}});
    rejected(kit.post(&h, &bare), 400, -32602, 101);
    let mut no_version = modern(102, "server/discover", json!({}));
    no_version["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    rejected(kit.post(&h, &no_version), 400, -32602, 102);
    let mut no_caps = modern(104, "server/discover", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    rejected(kit.post(&h, &no_caps), 400, -32602, 104);
    // clientInfo is optional
    let mut no_info = modern(105, "server/discover", json!({}));
    no_info["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let (status, body) = answered!(kit, kit.post(&h, &no_info));
    assert_eq!(status, 200);
    assert_eq!(body["id"], 105);
    assert_eq!(body["result"]["supportedVersions"], json!(["2026-07-28"]));
}

#[test]
fn header_mismatch_comes_before_unsupported_version() {
    let mut kit = Kit::new();
    let mut body = modern(302, "server/discover", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    rejected(
        kit.post(&headers("server/discover", &[]), &body),
        400,
        -32020,
        302,
    );

    body["id"] = json!(301);
    let h = vec![
        ("MCP-Protocol-Version", "v999.0.0"),
        ("Mcp-Method", "server/discover"),
    ];
    let error = rejected(kit.post(&h, &body), 400, -32022, 301);
    assert_eq!(
        error["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
    );

    // A missing version header with a version in _meta is a mismatch too.
    let body = modern(303, "server/discover", json!({}));
    rejected(
        kit.post(&[("Mcp-Method", "server/discover")], &body),
        400,
        -32020,
        303,
    );
}

#[test]
fn mcp_method_rows() {
    let mut kit = Kit::new();
    let body = modern(100, "tools/list", json!({}));
    rejected(
        kit.post(&headers("prompts/list", &[]), &body),
        400,
        -32020,
        100,
    );
    rejected(
        kit.post(&[("MCP-Protocol-Version", "2026-07-28")], &body),
        400,
        -32020,
        100,
    );
    rejected(
        kit.post(&headers("TOOLS/LIST", &[]), &body),
        400,
        -32020,
        100,
    );
    for name in ["mcp-method", "MCP-METHOD"] {
        let h = vec![("mcp-protocol-version", "2026-07-28"), (name, "tools/list")];
        let (status, answer) = answered!(kit, kit.post(&h, &body));
        assert_eq!(status, 200, "header names are case-insensitive: {name}");
        assert_eq!(answer["result"]["tools"], json!([]));
    }
}

#[test]
fn mcp_name_rows() {
    let mut kit = Kit::new();
    let body = call(110, "echo", json!({"text": "x"}));
    rejected(
        kit.post(
            &headers("tools/call", &[("Mcp-Name", "wrong_tool_name")]),
            &body,
        ),
        400,
        -32020,
        110,
    );
    rejected(
        kit.post(&headers("tools/call", &[]), &body),
        400,
        -32020,
        110,
    );
    let (status, answer) = answered!(
        kit,
        kit.post(&headers("tools/call", &[("Mcp-Name", "  echo  ")]), &body)
    );
    assert_eq!(status, 200, "Mcp-Name is trimmed");
    assert_eq!(answer["result"]["content"][0]["text"], "x");
    let read = modern(111, "resources/read", json!({"uri": "test://a"}));
    rejected(
        kit.post(
            &headers("resources/read", &[("Mcp-Name", "test://b")]),
            &read,
        ),
        400,
        -32020,
        111,
    );
    let get = modern(112, "tasks/get", json!({"taskId": "t1"}));
    rejected(
        kit.post(&headers("tasks/get", &[("Mcp-Name", "t2")]), &get),
        400,
        -32020,
        112,
    );
}

#[test]
fn mcp_param_rows() {
    let mut kit = Kit::new();
    kit.http.set_tool(&x_mcp_header_tool());
    let tool = "test_x_mcp_header";
    let accept = |kit: &mut Kit, header: Option<&str>, region: &str| {
        let mut h = headers("tools/call", &[("Mcp-Name", tool)]);
        if let Some(v) = header {
            h.push(("Mcp-Param-Region", v));
        }
        kit.post(&h, &call(200, tool, json!({"region": region})))
    };
    // base64 decoded and compared
    let r = accept(&mut kit, Some("=?base64?SGVsbG8=?="), "Hello");
    kit.finish(tool, "ok");
    assert_eq!(answered!(kit, r).0, 200);
    // malformed base64: bad padding, bad characters
    rejected(
        accept(&mut kit, Some("=?base64?SGVsbG8?="), "Hello"),
        400,
        -32020,
        200,
    );
    rejected(
        accept(&mut kit, Some("=?base64?SGVs!!!bG8=?="), "Hello"),
        400,
        -32020,
        200,
    );
    // literal values
    let r = accept(&mut kit, Some("SGVsbG8="), "SGVsbG8=");
    kit.finish(tool, "ok");
    assert_eq!(answered!(kit, r).0, 200);
    let r = accept(&mut kit, Some("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
    kit.finish(tool, "ok");
    assert_eq!(answered!(kit, r).0, 200);
    // mismatch and omission
    rejected(
        accept(&mut kit, Some("us-east"), "us-west"),
        400,
        -32020,
        200,
    );
    rejected(accept(&mut kit, None, "test-value"), 400, -32020, 200);
    // the header name is case-insensitive
    let mut h = headers("tools/call", &[("Mcp-Name", tool)]);
    h.push(("mcp-param-region", "eu"));
    let r = kit.post(&h, &call(201, tool, json!({"region": "eu"})));
    kit.finish(tool, "ok");
    assert_eq!(answered!(kit, r).0, 200);
    // an absent argument needs no header
    let r = kit.post(
        &headers("tools/call", &[("Mcp-Name", tool)]),
        &call(202, tool, json!({})),
    );
    kit.finish(tool, "ok");
    assert_eq!(answered!(kit, r).0, 200);
}

#[test]
fn answers_map_error_codes_to_statuses() {
    let mut kit = Kit::new();
    // -32021 from the handler: 400
    let body = call(401, "needs_sampling", json!({}));
    let (status, answer) = answered!(
        kit,
        kit.post(
            &headers("tools/call", &[("Mcp-Name", "needs_sampling")]),
            &body
        )
    );
    assert_eq!(
        (status, answer["error"]["code"].as_i64()),
        (400, Some(-32021))
    );
    assert_eq!(answer["id"], 401);
    assert!(answer["error"]["data"]["requiredCapabilities"]["sampling"].is_object());
    // unknown and removed methods: 404 with -32601
    for method in [
        "unknown/method",
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ] {
        let body = modern(500, method, json!({}));
        let (status, answer) = answered!(kit, kit.post(&headers(method, &[]), &body));
        assert_eq!(status, 404, "{method}: {answer}");
        assert_eq!(answer["error"]["code"], -32601);
        assert_eq!(answer["id"], 500);
    }
}

/// A server that cannot start the work answers SERVER_BUSY: on the 2026 wire 503 with
/// `Retry-After` (HttpConfig::retry_after in whole seconds), the error with the client's id
#[test]
fn a_busy_answer_is_503_with_retry_after() {
    let mut kit = Kit::new();
    let body = call(7, "busy", json!({}));
    let exchange = kit
        .post(&headers("tools/call", &[("Mcp-Name", "busy")]), &body)
        .expect_err("an open exchange");
    let c = kit.collected(exchange);
    assert!(c.ended);
    assert_eq!(c.status(), 503);
    let head = c.head.as_ref().unwrap();
    let retry = head
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Retry-After"));
    assert_eq!(retry.map(|(_, v)| v.as_str()), Some("1"));
    let answer = c.messages().last().cloned().unwrap();
    assert_eq!(
        answer["error"]["code"],
        mcp_sansio::jsonrpc::code::SERVER_BUSY
    );
    assert_eq!(answer["id"], 7);
    // Any other answer carries no Retry-After.
    let body = call(8, "needs_sampling", json!({}));
    let exchange = kit
        .post(
            &headers("tools/call", &[("Mcp-Name", "needs_sampling")]),
            &body,
        )
        .expect_err("an open exchange");
    let head = kit.collected(exchange).head.as_ref().unwrap();
    assert!(
        !head
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("Retry-After"))
    );
}

#[test]
fn progress_and_logs_go_on_the_response_stream_before_the_result() {
    let mut kit = Kit::new();
    let mut body = call(7, "progress", json!({}));
    body["params"]["_meta"]["progressToken"] = json!("progress-test-1");
    let exchange = kit
        .post(&headers("tools/call", &[("Mcp-Name", "progress")]), &body)
        .unwrap_err();
    let c = kit.collected(exchange);
    assert!(c.ended && c.is_sse() && c.status() == 200);
    let messages = c.messages();
    let methods: Vec<_> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(answer)"))
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
    assert_eq!(messages[0]["params"]["progressToken"], "progress-test-1");
    assert_eq!(messages[3]["id"], 7, "the client's id is restored");
    assert!(
        c.events().iter().all(|e| e.id.is_none()),
        "no event ids on the 2026 wire"
    );
}

#[test]
fn colliding_client_ids_are_kept_apart() {
    let mut kit = Kit::new();
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    let a = kit.post(&h, &call(1, "slow", json!({}))).unwrap_err();
    let b = kit.post(&h, &call(1, "slow", json!({}))).unwrap_err();
    assert!(!kit.collected(a).ended && !kit.collected(b).ended);
    kit.finish("slow", "first");
    kit.finish("slow", "second");
    let (a, b) = (kit.collected(a).json(), kit.collected(b).json());
    assert_eq!((a["id"].clone(), b["id"].clone()), (json!(1), json!(1)));
    assert_eq!(a["result"]["content"][0]["text"], "first");
    assert_eq!(b["result"]["content"][0]["text"], "second");
}

#[test]
fn closing_the_response_cancels_the_request() {
    let mut kit = Kit::new();
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    let exchange = kit.post(&h, &call(9, "slow", json!({}))).unwrap_err();
    let held = kit.held[0].1.id();
    kit.close(exchange);
    assert_eq!(kit.cancelled, [held]);
    // the late answer goes nowhere
    kit.finish("slow", "late");
    assert!(kit.http.poll_output().is_none());
}

#[test]
fn input_is_gathered_with_input_required_never_a_request_on_the_stream() {
    let mut kit = Kit::new();
    let mut body = call(12, "ask", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let (status, answer) = answered!(
        kit,
        kit.post(&headers("tools/call", &[("Mcp-Name", "ask")]), &body)
    );
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert!(answer["result"]["inputRequests"]["name"].is_object());
}

#[test]
fn notifications_on_the_2026_wire_get_202() {
    let mut kit = Kit::new();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/whatever",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    assert_eq!(
        kit.post(&headers("notifications/whatever", &[]), &note)
            .unwrap()
            .status,
        202
    );
}

#[test]
fn dns_rebinding_is_refused_on_both_wires() {
    let mut kit = Kit::new();
    let evil = [
        ("Host", "evil.example.com"),
        ("Origin", "http://evil.example.com"),
    ];
    let discover = modern(1, "server/discover", json!({}));
    let mut h = headers("server/discover", &[]);
    h.extend_from_slice(&evil);
    let all: Vec<(&str, &str)> = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]
    .into_iter()
    .chain(h)
    .collect();
    let r = kit.request("POST", &all, &discover.to_string()).unwrap();
    assert!((400..500).contains(&r.status));
    // a foreign Origin alone
    let h = headers("server/discover", &[("Origin", "http://evil.example.com")]);
    assert_eq!(kit.post(&h, &discover).unwrap().status, 403);
    // the loopback names with any port
    for (host, origin) in [
        ("127.0.0.1:4000", "http://127.0.0.1:4000"),
        ("localhost:1", "http://localhost:1"),
        ("[::1]:8080", "http://[::1]:8080"),
    ] {
        let all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Host", host),
            ("Origin", origin),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ];
        let exchange = kit
            .request("POST", &all, &discover.to_string())
            .unwrap_err();
        assert_eq!(kit.collected(exchange).status(), 200, "{host}");
    }
    // the 2025 initialize probe
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Host", "evil.example.com"),
        ("Origin", "http://evil.example.com"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert!((400..500).contains(&kit.request("POST", &all, &init.to_string()).unwrap().status));
    assert_eq!(kit.http.session_count(), 0);
}

#[test]
fn transport_checks() {
    let mut config = HttpConfig::default();
    config.max_body_size = 200;
    let mut kit = Kit::with_config(config);
    let body = modern(1, "tools/list", json!({}));
    let h = headers("tools/list", &[]);
    // wrong content type
    let all = vec![
        ("Content-Type", "text/plain"),
        ("MCP-Protocol-Version", "2026-07-28"),
    ];
    assert_eq!(
        kit.request("POST", &all, &body.to_string()).unwrap().status,
        415
    );
    // Accept allows neither type
    let all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "text/html"),
    ];
    assert_eq!(
        kit.request("POST", &all, &body.to_string()).unwrap().status,
        406
    );
    // oversize
    let mut big = body.clone();
    big["params"]["pad"] = json!("x".repeat(300));
    let r = kit.post(&h, &big).unwrap();
    assert_eq!((r.status, r.error_code()), (413, Some(-32600)));
    assert_eq!(kit.http.reject_oversize().status, 413);
    // bad JSON
    let all = vec![("Content-Type", "application/json; charset=utf-8")];
    let r = kit.request("POST", &all, "{\"jsonrpc\": ").unwrap();
    assert_eq!((r.status, r.error_code()), (400, Some(-32700)));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let r = kit.request("POST", &all, "[]").unwrap();
    assert_eq!((r.status, r.error_code()), (400, Some(-32600)));
    // not a message
    let r = kit.request("POST", &all, "{\"id\": 3}").unwrap();
    assert_eq!(r.status, 400);
    // other HTTP methods
    let r = kit.request("PUT", &[], "").unwrap();
    assert_eq!(r.status, 405);
    // GET and DELETE without a session
    assert_eq!(
        kit.request("GET", &[("Accept", "text/event-stream")], "")
            .unwrap()
            .status,
        405
    );
    assert_eq!(kit.request("DELETE", &[], "").unwrap().status, 405);
}

#[test]
fn a_listen_stream_carries_the_clients_id_and_ends_when_closed() {
    use mcp_sansio::ListKind;
    use mcp_sansio::http::SessionKey;
    let mut kit = Kit::new();
    let body = modern(
        77,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let exchange = kit
        .post(&headers("subscriptions/listen", &[]), &body)
        .unwrap_err();
    let session = kit.http.session_mut(SessionKey::STATELESS).unwrap();
    session.notify_list_changed(ListKind::Tools).unwrap();
    kit.pump();
    let c = kit.collected(exchange);
    assert!(c.is_sse() && !c.ended);
    let messages = c.messages();
    assert_eq!(
        messages[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(messages[1]["method"], "notifications/tools/list_changed");
    for m in &messages {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 77,
            "{m}"
        );
    }
    assert_eq!(
        kit.http
            .session_mut(SessionKey::STATELESS)
            .unwrap()
            .subscription_count(),
        1
    );
    kit.close(exchange);
    assert_eq!(
        kit.http
            .session_mut(SessionKey::STATELESS)
            .unwrap()
            .subscription_count(),
        0
    );
}

/// Found by the simulation (http seed 9): a listen stream whose client id equals the
/// server's internal id hung the server rewriting the subscription id for ever
#[test]
fn a_listen_stream_whose_client_id_equals_the_internal_id() {
    use mcp_sansio::ListKind;
    use mcp_sansio::http::SessionKey;
    let mut kit = Kit::new();
    // The first request gets internal id 1.
    let body = modern(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let exchange = kit
        .post(&headers("subscriptions/listen", &[]), &body)
        .unwrap_err();
    let session = kit.http.session_mut(SessionKey::STATELESS).unwrap();
    session.notify_list_changed(ListKind::Tools).unwrap();
    kit.pump();
    let messages = kit.collected(exchange).messages();
    assert_eq!(messages.len(), 2, "{messages:?}");
    for m in &messages {
        assert_eq!(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1,
            "{m}"
        );
    }
}

#[test]
fn a_listen_stream_whose_client_id_contains_the_internal_id_is_rewritten_once() {
    use mcp_sansio::ListKind;
    use mcp_sansio::http::SessionKey;
    // The first request gets internal id 1: a client id of 1 (the same) or 12 (containing it)
    // must not make the id rewrite loop.
    for client_id in [1, 12] {
        let mut kit = Kit::new();
        let body = modern(
            client_id,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        );
        let exchange = kit
            .post(&headers("subscriptions/listen", &[]), &body)
            .unwrap_err();
        let session = kit.http.session_mut(SessionKey::STATELESS).unwrap();
        session.notify_list_changed(ListKind::Tools).unwrap();
        kit.pump();
        let messages = kit.collected(exchange).messages();
        assert_eq!(messages.len(), 2, "{messages:?}");
        for m in &messages {
            assert_eq!(
                m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], client_id,
                "{m}"
            );
        }
    }
}

#[test]
fn a_quiet_response_gets_keepalive_comments_and_opens_its_stream_for_them() {
    let second = std::time::Duration::from_secs(1);
    let mut config = HttpConfig::default();
    config.keepalive = Some(15 * second);
    let mut kit = Kit::with_config(config);
    let h = headers("tools/call", &[("Mcp-Name", "slow")]);
    let exchange = kit.post(&h, &call(3, "slow", json!({}))).unwrap_err();
    assert!(
        kit.collected(exchange).head.is_none(),
        "undecided: no head yet"
    );
    let due = kit.http.poll_timeout().expect("a keepalive deadline");
    assert!(due <= kit.now + 15 * second);
    kit.advance(14 * second);
    assert!(
        kit.collected(exchange).head.is_none(),
        "not quiet long enough"
    );
    kit.advance(second);
    let c = kit.collected(exchange);
    assert!(c.is_sse() && c.status() == 200 && !c.ended);
    assert_eq!(c.body, b": keepalive\n\n");
    kit.advance(15 * second);
    assert_eq!(
        kit.collected(exchange).body,
        b": keepalive\n\n: keepalive\n\n"
    );
    kit.finish("slow", "done");
    let c = kit.collected(exchange);
    assert!(c.ended);
    let messages = c.messages();
    assert_eq!(messages.len(), 1, "comments are no messages");
    assert_eq!(messages[0]["id"], 3);
    assert_eq!(messages[0]["result"]["content"][0]["text"], "done");
}

#[test]
fn no_keepalive_for_a_json_only_client_or_when_turned_off() {
    let minute = std::time::Duration::from_secs(60);
    let mut config = HttpConfig::default();
    config.keepalive = None;
    for (config, accept) in [
        (HttpConfig::default(), "application/json"),
        (config, "application/json, text/event-stream"),
    ] {
        let mut kit = Kit::with_config(config);
        let mut h = headers("tools/call", &[("Mcp-Name", "slow")]);
        h.extend([
            ("Content-Type", "application/json"),
            ("Accept", accept),
            ("Host", "127.0.0.1:3000"),
        ]);
        let exchange = kit
            .request("POST", &h, &call(4, "slow", json!({})).to_string())
            .unwrap_err();
        kit.advance(minute);
        assert!(kit.collected(exchange).head.is_none(), "{accept}");
        kit.finish("slow", "done");
        let c = kit.collected(exchange);
        assert!(c.ended && !c.is_sse(), "{accept}");
        assert_eq!(c.json()["result"]["content"][0]["text"], "done");
    }
}
