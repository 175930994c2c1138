//! `ClientTransport`: the HTTP requests a client session needs, and what recorded responses
//! mean for it, on both wires, without sockets

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::http::{ClientTransport, HttpMethod, HttpRequest, StreamId};
use mcp_sansio::session::{CallError, RequestOptions};
use mcp_sansio::testing::{Pair, drain_events};
use mcp_sansio::{ClientEvent, ClientSession, EraMode, ProtocolVersion};
use serde_json::{Value, json};

const SID: &str = "sess-1";

/// The fake clock's origin: any instant will do
fn start() -> Instant {
    #[allow(clippy::disallowed_methods)]
    Instant::now()
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

fn requests(t: &mut ClientTransport) -> Vec<HttpRequest> {
    std::iter::from_fn(|| t.poll_request()).collect()
}

fn aborts(t: &mut ClientTransport) -> Vec<StreamId> {
    std::iter::from_fn(|| t.poll_abort()).collect()
}

fn events(s: &mut ClientSession) -> Vec<ClientEvent> {
    drain_events(s)
}

fn json_head() -> Vec<(String, String)> {
    vec![("Content-Type".into(), "application/json".into())]
}

fn sse_head() -> Vec<(String, String)> {
    vec![("Content-Type".into(), "text/event-stream".into())]
}

/// Answers one POST with a JSON body
fn answer_json(
    t: &mut ClientTransport,
    s: &mut ClientSession,
    now: Instant,
    r: &HttpRequest,
    extra: &[(&str, &str)],
    message: &Value,
) {
    let mut head = json_head();
    head.extend(
        extra
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
    );
    t.handle_head(now, r.stream, 200, &head, s);
    t.handle_body(now, r.stream, message.to_string().as_bytes(), s);
    t.handle_end(now, r.stream, s);
}

fn initialize_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "recorded", "version": "1"}}})
}

/// A legacy client through its handshake over the 2025 wire; returns the transport and the
/// session after `notifications/initialized` was answered with 202
fn legacy_ready(now: Instant) -> (ClientTransport, ClientSession, HttpRequest) {
    let (mut t, mut s, get) = legacy_handshake(now);
    t.handle_head(now, get.stream, 200, &sse_head(), &mut s);
    (t, s, get)
}

/// [`legacy_ready`] without answering the GET stream's head
fn legacy_handshake(now: Instant) -> (ClientTransport, ClientSession, HttpRequest) {
    legacy_handshake_over(now, ClientTransport::new())
}

/// [`legacy_handshake`] over a transport made by the test
fn legacy_handshake_over(
    now: Instant,
    mut t: ClientTransport,
) -> (ClientTransport, ClientSession, HttpRequest) {
    let config = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    let mut s = ClientSession::new(Arc::new(config), now);
    t.pull(&mut s);
    let first = requests(&mut t);
    assert_eq!(first.len(), 1, "only initialize goes out before its answer");
    let init = &first[0];
    assert_eq!(init.method, HttpMethod::Post);
    assert_eq!(body(init)["method"], "initialize");
    assert_eq!(header(init, "Mcp-Session-Id"), None);
    assert_eq!(header(init, "Mcp-Method"), None);
    let id = body(init)["id"].clone();
    answer_json(
        &mut t,
        &mut s,
        now,
        init,
        &[("Mcp-Session-Id", SID)],
        &initialize_result(&id),
    );
    let next = requests(&mut t);
    assert_eq!(next.len(), 2, "{next:?}");
    let initialized = &next[0];
    assert_eq!(body(initialized)["method"], "notifications/initialized");
    assert_eq!(header(initialized, "Mcp-Session-Id"), Some(SID));
    assert_eq!(
        header(initialized, "MCP-Protocol-Version"),
        Some("2025-11-25")
    );
    let get = next[1].clone();
    assert_eq!(get.method, HttpMethod::Get);
    assert_eq!(header(&get, "Accept"), Some("text/event-stream"));
    assert_eq!(header(&get, "Mcp-Session-Id"), Some(SID));
    t.handle_head(now, initialized.stream, 202, &[] as &[(&str, &str)], &mut s);
    t.handle_end(now, initialized.stream, &mut s);
    assert!(
        events(&mut s)
            .iter()
            .any(|e| matches!(e, ClientEvent::Ready { .. }))
    );
    (t, s, get)
}

fn modern_ready(now: Instant) -> (ClientTransport, ClientSession) {
    let config = Pair::client_config(EraMode::Modern);
    let mut s = ClientSession::new(Arc::new(config), now);
    let mut t = ClientTransport::new();
    t.pull(&mut s);
    let first = requests(&mut t);
    assert_eq!(first.len(), 1);
    assert_eq!(body(&first[0])["method"], "server/discover");
    assert_eq!(header(&first[0], "Mcp-Method"), Some("server/discover"));
    let id = body(&first[0])["id"].clone();
    let discover = json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "recorded", "version": "1"}}});
    answer_json(&mut t, &mut s, now, &first[0], &[], &discover);
    assert!(
        events(&mut s)
            .iter()
            .any(|e| matches!(e, ClientEvent::Ready { .. })),
    );
    (t, s)
}

fn call(s: &mut ClientSession, now: Instant, tool: &str) -> mcp_sansio::session::OutboundId {
    let params = serde_json::value::to_raw_value(&json!({"name": tool, "arguments": {}})).unwrap();
    s.send_request_raw(now, "tools/call", Some(params), RequestOptions::default())
        .unwrap()
}

fn outcome(s: &mut ClientSession) -> Result<Value, CallError> {
    for event in events(s) {
        if let ClientEvent::Response { outcome, .. } = event {
            return outcome.map(|raw| serde_json::from_str(raw.get()).unwrap());
        }
    }
    panic!("no response event")
}

/// The text of a local transport failure (never dressed as the server's -32603)
fn transport_message(result: Result<Value, CallError>) -> String {
    match result {
        Err(CallError::Transport(why)) => why,
        other => panic!("expected a transport failure, got {other:?}"),
    }
}

#[test]
fn the_2025_wire_orders_posts_behind_the_handshake_and_opens_the_get_stream() {
    let now = start();
    let (mut t, mut s, get) = legacy_handshake(now);
    // POSTs wait for the GET stream's head, so the server has the stream before anything
    // it may send there.
    call(&mut s, now, "echo");
    t.pull(&mut s);
    assert!(requests(&mut t).is_empty());
    // The GET stream may be refused with 405: nothing is owed, nothing fails.
    t.handle_head(now, get.stream, 405, &[] as &[(&str, &str)], &mut s);
    let sent = requests(&mut t);
    assert_eq!(sent.len(), 1);
    assert_eq!(body(&sent[0])["method"], "tools/call");
    t.handle_end(now, get.stream, &mut s);
    assert!(events(&mut s).is_empty());
    assert_eq!(t.streams_in_flight(), 1);
}

#[test]
fn posts_stop_waiting_for_a_get_head_the_server_holds_back() {
    let now = start();
    let (mut t, mut s, _get) = legacy_handshake(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    assert!(requests(&mut t).is_empty());
    let deadline = t.poll_timeout().expect("a bounded wait");
    assert_eq!(deadline, now + Duration::from_secs(2));
    t.handle_timeout(deadline - Duration::from_millis(1));
    assert!(requests(&mut t).is_empty());
    t.handle_timeout(deadline);
    let sent = requests(&mut t);
    assert_eq!(sent.len(), 1);
    assert_eq!(body(&sent[0])["method"], "tools/call");
    assert_eq!(t.poll_timeout(), None);
}

#[test]
fn a_json_answer_completes_the_call_and_an_sse_answer_too() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    assert_eq!(header(&r, "Mcp-Name"), Some("echo"));
    let id = body(&r)["id"].clone();
    let answer =
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [], "resultType": "complete"}});
    answer_json(&mut t, &mut s, now, &r, &[], &answer);
    assert!(outcome(&mut s).is_ok());

    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    let id = body(&r)["id"].clone();
    t.handle_head(now, r.stream, 200, &sse_head(), &mut s);
    let answer =
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": [], "resultType": "complete"}});
    let event = format!("id: 1\ndata: {answer}\n\n");
    // Split mid-event: the decoder joins the pieces.
    let (a, b) = event.as_bytes().split_at(10);
    t.handle_body(now, r.stream, a, &mut s);
    t.handle_body(now, r.stream, b, &mut s);
    assert!(outcome(&mut s).is_ok());
    t.handle_end(now, r.stream, &mut s);
    assert!(
        events(&mut s).is_empty(),
        "the answer is not failed afterwards"
    );
    assert_eq!(t.streams_in_flight(), 0);
}

#[test]
fn cancelling_on_the_2026_wire_closes_the_response_instead_of_posting() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    let id = call(&mut s, now, "slow");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    s.cancel(now, id, Some("user")).unwrap();
    t.pull(&mut s);
    assert!(
        requests(&mut t).is_empty(),
        "no notifications/cancelled POST"
    );
    assert_eq!(aborts(&mut t), vec![r.stream]);
    assert!(matches!(outcome(&mut s), Err(CallError::Cancelled)));
    // A late report for the aborted stream is ignored.
    t.handle_head(now, r.stream, 200, &json_head(), &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert!(events(&mut s).is_empty());
}

#[test]
fn cancelling_on_the_2025_wire_posts_the_notification() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    let id = call(&mut s, now, "slow");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 200, &sse_head(), &mut s);
    s.cancel(now, id, None).unwrap();
    t.pull(&mut s);
    let sent = requests(&mut t);
    assert_eq!(sent.len(), 1);
    assert_eq!(body(&sent[0])["method"], "notifications/cancelled");
    assert_eq!(header(&sent[0], "Mcp-Session-Id"), Some(SID));
}

#[test]
fn an_http_error_status_fails_the_request_once() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 500, &[] as &[(&str, &str)], &mut s);
    t.handle_body(now, r.stream, b"oops", &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert!(transport_message(outcome(&mut s)).contains("HTTP 500"));
    assert!(events(&mut s).is_empty());
}

#[test]
fn a_json_body_without_the_answer_fails_the_request() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 200, &json_head(), &mut s);
    t.handle_body(now, r.stream, b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}", &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert!(transport_message(outcome(&mut s)).contains("no answer"));
}

#[test]
fn a_json_error_status_without_an_answer_fails_the_request_with_the_status() {
    // (401 and 403 fail at their head: a_401_or_403_without_authorization_...)
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    // A proxy's or framework's error document: JSON, but no JSON-RPC answer.
    t.handle_head(now, r.stream, 500, &json_head(), &mut s);
    t.handle_body(now, r.stream, br#"{"error":"boom"}"#, &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert_eq!(
        transport_message(outcome(&mut s)),
        "the server answered HTTP 500"
    );
    assert!(events(&mut s).is_empty());
}

#[test]
fn an_oversized_json_body_fails_the_request_and_aborts_it() {
    let now = start();
    let mut config = Pair::client_config(EraMode::Modern);
    config.limits.max_message_size = 64;
    let mut s = ClientSession::new(Arc::new(config), now);
    let mut t = ClientTransport::new();
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 200, &json_head(), &mut s);
    t.handle_body(now, r.stream, &[b' '; 65], &mut s);
    assert_eq!(aborts(&mut t), vec![r.stream]);
    t.handle_end(now, r.stream, &mut s);
    // Discovery failed at once, saying why, rather than at its timeout.
    assert_eq!(t.streams_in_flight(), 0);
    assert!(s.is_closed());
    let closed = events(&mut s).into_iter().find_map(|e| match e {
        ClientEvent::Closed { reason } => Some(reason.to_string()),
        _ => None,
    });
    assert_eq!(
        closed.as_deref(),
        Some(
            "handshake failed: server/discover failed: the answer is over the message limit \
             of 64 bytes (Limits::max_message_size)"
        )
    );
}

#[test]
fn an_answer_over_the_limit_fails_its_call_at_once_naming_the_size_and_the_limit() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    // The session's one limit, whatever the transport was made with.
    let (mut t2, mut s2) = {
        let mut config = Pair::client_config(EraMode::Modern);
        config.limits.max_message_size = 1000;
        let s2 = ClientSession::new(Arc::new(config), now);
        (ClientTransport::new(), s2)
    };
    t2.pull(&mut s2);
    let discover = requests(&mut t2).remove(0);
    let mut head = json_head();
    head.push(("Content-Length".into(), "5000".into()));
    t2.handle_head(now, discover.stream, 200, &head, &mut s2);
    assert_eq!(aborts(&mut t2), vec![discover.stream], "not read at all");
    assert!(s2.is_closed());
    let closed = events(&mut s2).into_iter().find_map(|e| match e {
        ClientEvent::Closed { reason } => Some(reason.to_string()),
        _ => None,
    });
    assert!(
        closed
            .as_deref()
            .is_some_and(|c| c.contains("is 5000 bytes, over the message limit of 1000 bytes")),
        "{closed:?}"
    );
    // An SSE answer over the limit fails its call too (the default limit is 64 MiB).
    call(&mut s, now, "big");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 200, &sse_head(), &mut s);
    let chunk = vec![b'x'; 1 << 20];
    t.handle_body(
        now,
        r.stream,
        b"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"",
        &mut s,
    );
    for _ in 0..65 {
        t.handle_body(now, r.stream, &chunk, &mut s);
    }
    match outcome(&mut s) {
        Err(CallError::TooLarge { size: None, limit }) => assert_eq!(limit, 64 << 20),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_failed_connection_fails_the_request() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "echo");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_failed(now, r.stream, "connection refused", &mut s);
    assert!(transport_message(outcome(&mut s)).contains("connection refused"));
}

#[test]
fn an_interrupted_stream_resumes_with_last_event_id_and_delivers_the_answer() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    call(&mut s, now, "slow");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    let id = body(&r)["id"].clone();
    t.handle_head(now, r.stream, 200, &sse_head(), &mut s);
    t.handle_body(now, r.stream, b"id: ev-7\nretry: 250\ndata: \n\n", &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert!(events(&mut s).is_empty(), "not failed: it can resume");
    let due = t.poll_timeout().expect("a reconnection is armed");
    assert_eq!(due, now + Duration::from_millis(250));
    t.handle_timeout(now + Duration::from_millis(100));
    assert!(requests(&mut t).is_empty());
    t.handle_timeout(due);
    let resume = requests(&mut t).remove(0);
    assert_eq!(resume.method, HttpMethod::Get);
    assert_eq!(header(&resume, "Last-Event-ID"), Some("ev-7"));
    assert_eq!(header(&resume, "Mcp-Session-Id"), Some(SID));
    t.handle_head(due, resume.stream, 200, &sse_head(), &mut s);
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
    t.handle_body(
        due,
        resume.stream,
        format!("id: ev-8\ndata: {answer}\n\n").as_bytes(),
        &mut s,
    );
    t.handle_end(due, resume.stream, &mut s);
    assert!(outcome(&mut s).is_ok());
    assert!(events(&mut s).is_empty());
}

#[test]
fn a_stream_that_ends_without_ids_fails_its_request() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    call(&mut s, now, "slow");
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    t.handle_head(now, r.stream, 200, &sse_head(), &mut s);
    t.handle_end(now, r.stream, &mut s);
    assert!(transport_message(outcome(&mut s)).contains("without an answer"));
}

const SID2: &str = "sess-2";

fn no_headers() -> &'static [(&'static str, &'static str)] {
    &[]
}

fn tool_result(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
}

/// The transport's own `initialize` after a 404: the session's first one again, for the
/// negotiated version, without a session id; answered with `SID2`. Returns what follows it
/// (`notifications/initialized` and the GET stream of the new session).
fn renew(t: &mut ClientTransport, s: &mut ClientSession, now: Instant) -> Vec<HttpRequest> {
    let sent = requests(t);
    assert_eq!(sent.len(), 1, "one new initialize, nothing else: {sent:?}");
    let init = &sent[0];
    assert_eq!(init.method, HttpMethod::Post);
    assert_eq!(body(init)["method"], "initialize");
    assert_eq!(body(init)["params"]["protocolVersion"], "2025-11-25");
    assert!(body(init)["params"]["clientInfo"]["name"].is_string());
    assert_eq!(header(init, "Mcp-Session-Id"), None);
    let id = body(init)["id"].clone();
    answer_json(
        t,
        s,
        now,
        init,
        &[("Mcp-Session-Id", SID2)],
        &initialize_result(&id),
    );
    let renewed = events(s)
        .into_iter()
        .filter(|e| matches!(e, ClientEvent::SessionRenewed { version } if *version == ProtocolVersion::V2025_11_25))
        .count();
    assert_eq!(renewed, 1, "the application hears of the new session");
    let next = requests(t);
    assert_eq!(next.len(), 2, "{next:?}");
    assert_eq!(body(&next[0])["method"], "notifications/initialized");
    assert_eq!(header(&next[0], "Mcp-Session-Id"), Some(SID2));
    assert_eq!(
        next[1].method,
        HttpMethod::Get,
        "the GET stream is re-opened"
    );
    assert_eq!(header(&next[1], "Mcp-Session-Id"), Some(SID2));
    next
}

#[test]
fn a_404_on_the_session_starts_a_new_one_and_resends_the_call_it_refused() {
    let now = start();
    let (mut t, mut s, get) = legacy_ready(now);
    // `a` is being answered on the old session; `b` gets the 404; `c` waits behind it.
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    t.handle_head(now, a.stream, 200, &sse_head(), &mut s);
    call(&mut s, now, "b");
    t.pull(&mut s);
    let b = requests(&mut t).remove(0);
    call(&mut s, now, "c");
    t.pull(&mut s);
    assert!(requests(&mut t).is_empty(), "c waits for b's head");
    t.handle_head(now, b.stream, 404, no_headers(), &mut s);
    assert!(!s.is_closed());
    assert!(events(&mut s).is_empty(), "b is held, not failed");
    let mut aborted = aborts(&mut t);
    aborted.sort();
    assert_eq!(
        aborted,
        vec![get.stream, b.stream],
        "the old GET stream is gone"
    );
    let next = renew(&mut t, &mut s, now);
    let (initialized, get2) = (&next[0], &next[1]);
    t.handle_head(now, initialized.stream, 202, no_headers(), &mut s);
    t.handle_end(now, initialized.stream, &mut s);
    assert!(
        requests(&mut t).is_empty(),
        "POSTs wait for the new GET head"
    );
    t.handle_head(now, get2.stream, 200, &sse_head(), &mut s);
    // b again, the same message on the new session, then c after its head.
    let resent = requests(&mut t);
    assert_eq!(resent.len(), 1, "{resent:?}");
    assert_eq!(resent[0].body, b.body);
    assert_eq!(header(&resent[0], "Mcp-Session-Id"), Some(SID2));
    let id = body(&b)["id"].clone();
    answer_json(&mut t, &mut s, now, &resent[0], &[], &tool_result(&id));
    assert!(
        outcome(&mut s).is_ok(),
        "the call is answered on the new session"
    );
    let c = requests(&mut t);
    assert_eq!(c.len(), 1);
    assert_eq!(body(&c[0])["params"]["name"], "c");
    assert_eq!(header(&c[0], "Mcp-Session-Id"), Some(SID2));
    // a's answer was under way on the old session: it may have run, so it fails.
    t.handle_end(now, a.stream, &mut s);
    assert!(transport_message(outcome(&mut s)).contains("may have run"));
    let delete = t.close().expect("the new session is deleted");
    assert_eq!(header(&delete, "Mcp-Session-Id"), Some(SID2));
}

#[test]
fn a_second_404_fails_the_resent_call_and_a_new_session_that_answered_nothing_closes() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    t.handle_head(now, a.stream, 404, no_headers(), &mut s);
    let next = renew(&mut t, &mut s, now);
    t.handle_head(now, next[0].stream, 202, no_headers(), &mut s);
    // The new GET stream's head never comes: the call goes out after the wait.
    let deadline = t.poll_timeout().expect("the wait for the GET head");
    t.handle_timeout(deadline);
    let resent = requests(&mut t).remove(0);
    assert_eq!(resent.body, a.body);
    t.handle_head(now, resent.stream, 404, no_headers(), &mut s);
    let why = transport_message(outcome(&mut s));
    assert!(
        why.contains("again") && why.contains("re-sent once"),
        "{why}"
    );
    assert!(
        s.is_closed(),
        "no third session for a server that answers nothing"
    );
    assert!(requests(&mut t).is_empty(), "no new initialize");
    assert!(t.close().is_none(), "the session id is gone: no DELETE");
}

#[test]
fn a_new_session_that_answered_may_be_renewed_again() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    t.handle_head(now, a.stream, 404, no_headers(), &mut s);
    let next = renew(&mut t, &mut s, now);
    t.handle_head(now, next[0].stream, 202, no_headers(), &mut s);
    t.handle_head(now, next[1].stream, 200, &sse_head(), &mut s);
    let resent = requests(&mut t).remove(0);
    let id = body(&a)["id"].clone();
    answer_json(&mut t, &mut s, now, &resent, &[], &tool_result(&id));
    assert!(outcome(&mut s).is_ok());
    // Later the new session is lost too: one more new session.
    call(&mut s, now, "b");
    t.pull(&mut s);
    let b = requests(&mut t).remove(0);
    assert_eq!(header(&b, "Mcp-Session-Id"), Some(SID2));
    t.handle_head(now, b.stream, 404, no_headers(), &mut s);
    let sent = requests(&mut t);
    assert_eq!(sent.len(), 1);
    assert_eq!(body(&sent[0])["method"], "initialize");
    assert!(!s.is_closed());
}

#[test]
fn a_new_session_refused_fails_the_held_call_and_closes_saying_why() {
    let now = start();
    let (mut t, mut s, _get) = legacy_ready(now);
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    t.handle_head(now, a.stream, 404, no_headers(), &mut s);
    let init = requests(&mut t).remove(0);
    assert_eq!(body(&init)["method"], "initialize");
    t.handle_head(now, init.stream, 503, no_headers(), &mut s);
    let why = transport_message(outcome(&mut s));
    assert!(
        why.contains("HTTP 404") && why.contains("could not be started") && why.contains("503"),
        "{why}"
    );
    assert!(s.is_closed());
}

#[test]
fn a_404_on_a_request_that_carried_no_session_id_is_an_http_failure() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    t.handle_head(now, a.stream, 404, no_headers(), &mut s);
    assert!(transport_message(outcome(&mut s)).contains("HTTP 404"));
    assert!(!s.is_closed());
    assert!(requests(&mut t).is_empty());
}

#[test]
fn a_401_or_403_without_authorization_is_one_sentence_with_the_challenge() {
    for status in [401, 403] {
        let now = start();
        let (mut t, mut s) = modern_ready(now);
        call(&mut s, now, "admin");
        t.pull(&mut s);
        let a = requests(&mut t).remove(0);
        let challenge = r#"Bearer error="insufficient_scope", scope="mcp:admin""#;
        let mut head = json_head();
        head.push(("WWW-Authenticate".into(), challenge.into()));
        t.handle_head(now, a.stream, status, &head, &mut s);
        // Not read: the body is an OAuth error document, not an answer.
        assert_eq!(aborts(&mut t), vec![a.stream]);
        let why = transport_message(outcome(&mut s));
        assert_eq!(
            why,
            format!(
                "the server answered HTTP {status} with WWW-Authenticate: {challenge}; \
                 this client has no authorization configured"
            )
        );
        assert!(!s.is_closed());
    }
}

#[test]
fn close_aborts_everything_and_deletes_the_session() {
    let now = start();
    let (mut t, mut s, get) = legacy_ready(now);
    call(&mut s, now, "a");
    t.pull(&mut s);
    let a = requests(&mut t).remove(0);
    let delete = t.close().expect("a DELETE on the 2025 wire");
    assert_eq!(delete.method, HttpMethod::Delete);
    assert_eq!(header(&delete, "Mcp-Session-Id"), Some(SID));
    let mut aborted = aborts(&mut t);
    aborted.sort();
    assert_eq!(aborted, vec![get.stream, a.stream]);
    assert!(t.close().is_none(), "once");
    s.close(now);
    t.pull(&mut s);
    assert!(requests(&mut t).is_empty());
}

#[test]
fn modern_close_sends_no_delete() {
    let now = start();
    let (mut t, _s) = modern_ready(now);
    assert!(t.close().is_none());
}

#[test]
fn tools_list_answers_teach_the_param_headers() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    s.send_request_raw(now, "tools/list", None, RequestOptions::default())
        .unwrap();
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    let id = body(&r)["id"].clone();
    let list = json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "tools": [
        {"name": "echo", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}]}});
    answer_json(&mut t, &mut s, now, &r, &[], &list);
    events(&mut s);
    let params = serde_json::value::to_raw_value(
        &json!({"name": "echo", "arguments": {"region": "eu-west"}}),
    )
    .unwrap();
    s.send_request_raw(now, "tools/call", Some(params), RequestOptions::default())
        .unwrap();
    t.pull(&mut s);
    let r = requests(&mut t).remove(0);
    assert_eq!(header(&r, "Mcp-Param-Region"), Some("eu-west"));
}

#[test]
fn the_applications_headers_go_on_every_request_and_a_requests_own_on_its_post() {
    let now = start();
    let t = ClientTransport::new()
        .with_headers([("X-API-Key", "k-1"), ("Authorization", "Bearer static")])
        .expect("valid headers");
    let (mut t, mut s, get) = legacy_handshake_over(now, t);
    assert_eq!(header(&get, "X-API-Key"), Some("k-1"));
    assert_eq!(header(&get, "Authorization"), Some("Bearer static"));
    t.handle_head(now, get.stream, 200, &sse_head(), &mut s);
    let first = call(&mut s, now, "a");
    t.request_headers(first, [("X-Trace", "t-1")])
        .expect("valid");
    t.pull(&mut s);
    let mut posts = requests(&mut t);
    assert_eq!(posts.len(), 1, "{posts:?}");
    // The 2025 wire sends the next POST once this one's head is in.
    t.handle_head(now, posts[0].stream, 200, &sse_head(), &mut s);
    let _second = call(&mut s, now, "b");
    t.pull(&mut s);
    posts.extend(requests(&mut t));
    assert_eq!(posts.len(), 2, "{posts:?}");
    assert_eq!(header(&posts[0], "X-Trace"), Some("t-1"));
    assert_eq!(
        header(&posts[1], "X-Trace"),
        None,
        "only on its own request"
    );
    for post in &posts {
        assert_eq!(header(post, "X-API-Key"), Some("k-1"));
        assert_eq!(header(post, "Mcp-Session-Id"), Some(SID));
        let named = post
            .headers
            .iter()
            .filter(|(n, _)| n == "X-API-Key")
            .count();
        assert_eq!(named, 1, "once: {post:?}");
    }
    assert!(
        !format!("{:?}", posts[0]).contains("k-1"),
        "a key is not logged"
    );
    let delete = t.close().expect("a DELETE");
    assert_eq!(header(&delete, "X-API-Key"), Some("k-1"));
}

#[test]
fn headers_the_transport_owns_are_refused_with_their_name() {
    let err = ClientTransport::new()
        .with_headers([("Mcp-Session-Id", "forged")])
        .expect_err("reserved");
    assert_eq!(
        err.to_string(),
        "the header `Mcp-Session-Id` is set by the MCP transport and cannot be replaced"
    );
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    let id = call(&mut s, now, "a");
    assert!(t.request_headers(id, [("X-Key", "a\nb")]).is_err());
    t.pull(&mut s);
    let posts = requests(&mut t);
    assert_eq!(
        posts.len(),
        1,
        "the request still goes, without the refused header"
    );
    assert_eq!(header(&posts[0], "X-Key"), None);
}

#[test]
fn a_requests_own_headers_follow_its_multi_round_trip_retry() {
    let now = start();
    let (mut t, mut s) = modern_ready(now);
    let id = call(&mut s, now, "ask");
    t.request_headers(id, [("X-Trace", "t-9")]).expect("valid");
    t.pull(&mut s);
    let first = requests(&mut t).remove(0);
    assert_eq!(header(&first, "X-Trace"), Some("t-9"));
    let wire = body(&first)["id"].clone();
    let required = json!({"jsonrpc": "2.0", "id": wire, "result": {
    "resultType": "input_required",
    "requestState": "sealed",
    "inputRequests": {"name": {"method": "elicitation/create", "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    }}}}});
    answer_json(&mut t, &mut s, now, &first, &[], &required);
    let input = events(&mut s)
        .into_iter()
        .find_map(|e| match e {
            ClientEvent::InputRequired { id, .. } => Some(id),
            _ => None,
        })
        .expect("the client is asked");
    let answers: mcp_sansio::schema::InputResponses = serde_json::from_value(json!({
        "name": {"action": "accept", "content": {"name": "Ada"}}
    }))
    .unwrap();
    s.provide_input(now, input, answers).unwrap();
    t.pull(&mut s);
    let retry = requests(&mut t).remove(0);
    assert_ne!(body(&retry)["id"], wire, "the retry travels under a new id");
    assert_eq!(
        header(&retry, "X-Trace"),
        Some("t-9"),
        "and keeps its headers"
    );
    // Once it is answered the transport forgets them.
    let done = json!({"jsonrpc": "2.0", "id": body(&retry)["id"], "result": {
        "resultType": "complete", "content": []}});
    answer_json(&mut t, &mut s, now, &retry, &[], &done);
    assert!(outcome(&mut s).is_ok());
    let again = call(&mut s, now, "ask");
    t.pull(&mut s);
    assert_ne!(again, id);
    assert_eq!(header(&requests(&mut t).remove(0), "X-Trace"), None);
}

#[test]
fn auto_falls_back_to_initialize_when_discovery_fails_in_transport_and_says_why_when_that_fails_too()
 {
    let now = start();
    let mut s = ClientSession::new(Arc::new(Pair::client_config(EraMode::Auto)), now);
    let mut t = ClientTransport::new();
    t.pull(&mut s);
    let discover = requests(&mut t).remove(0);
    assert_eq!(body(&discover)["method"], "server/discover");
    // A server of the handshake era that drops server/discover without an answer
    t.handle_failed(
        now,
        discover.stream,
        "the connection closed before a response head",
        &mut s,
    );
    t.pull(&mut s);
    let sent = requests(&mut t);
    assert_eq!(sent.len(), 1, "{sent:?} {:?}", events(&mut s));
    let init = &sent[0];
    assert_eq!(
        body(init)["method"],
        "initialize",
        "Auto falls back: {init:?}"
    );
    // Nobody there at all: the connection's own words close the session.
    t.handle_failed(
        now,
        init.stream,
        "could not connect to http://127.0.0.1:9/mcp: Connection refused (os error 111)",
        &mut s,
    );
    let closed = events(&mut s).into_iter().find_map(|e| match e {
        ClientEvent::Closed { reason } => Some(reason.to_string()),
        _ => None,
    });
    assert_eq!(
        closed.as_deref(),
        Some("could not connect to http://127.0.0.1:9/mcp: Connection refused (os error 111)")
    );
}
