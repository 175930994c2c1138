//! The client helpers against the server rules: a real client session talks to an
//! `HttpServer` through `HttpClient`, on both wires, without sockets

use crate::http_kit;

use std::sync::Arc;
use std::time::{Duration, Instant};

use http_kit::{Kit, raw};
use mcp_sansio::codec::sse::SseDecoder;
use mcp_sansio::http::{HttpClient, ResponseKind};
use mcp_sansio::schema::Tool;
use mcp_sansio::testing::{Pair, drain_events};
use mcp_sansio::{ClientEvent, ClientSession, EraMode, ProtocolVersion};
use serde_json::{Value, json};

/// Moves every message the client transmits through the HTTP rules and feeds the answers
/// back; returns the headers of every POST
fn exchange(
    kit: &mut Kit,
    client: &mut ClientSession,
    http: &mut HttpClient,
) -> Vec<Vec<(String, String)>> {
    let mut sent = Vec::new();
    loop {
        let mut buf = Vec::new();
        let Some(t) = client.poll_transmit(&mut buf) else {
            break;
        };
        let message = &buf[..t.len - 1];
        let mut headers = http.post_headers(message);
        headers.push(("Host".into(), "localhost:3000".into()));
        sent.push(headers.clone());
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        match kit.request("POST", &pairs, std::str::from_utf8(message).unwrap()) {
            Ok(response) => {
                let kind = http.handle_response(response.status, &response.headers);
                match kind {
                    ResponseKind::Accepted => {}
                    ResponseKind::Json => client.handle_message(kit.now, &response.body),
                    other => panic!(
                        "unexpected {other:?}: {}",
                        String::from_utf8_lossy(&response.body)
                    ),
                }
            }
            Err(exchange) => {
                let c = kit.collected(exchange).clone();
                let head = c.head.clone().unwrap();
                let kind = http.handle_response(head.status, &head.headers);
                match kind {
                    ResponseKind::Json => client.handle_message(kit.now, &c.body),
                    ResponseKind::EventStream => {
                        let mut decoder = SseDecoder::new(1 << 20);
                        decoder.push(&c.body);
                        while let Some(event) = decoder.next_event() {
                            let event = event.unwrap();
                            if !event.data.is_empty() {
                                client.handle_message(kit.now, event.data.as_bytes());
                            }
                        }
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
    sent
}

fn events(client: &mut ClientSession) -> Vec<ClientEvent> {
    drain_events(client)
}

fn region_tool() -> Tool {
    serde_json::from_value(json!({"name": "echo", "description": "echo",
        "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string"},
            "region": {"type": "string", "x-mcp-header": "Region"}}}}))
    .unwrap()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_legacy_client_over_the_2025_wire() {
    let mut kit = Kit::new();
    let now = kit.now;
    let config = Pair::client_config(EraMode::Legacy(ProtocolVersion::V2025_11_25));
    let mut client = ClientSession::new(Arc::new(config), now);
    let mut http = HttpClient::new();
    let sent = exchange(&mut kit, &mut client, &mut http);
    assert!(
        header(&sent[0], "MCP-Protocol-Version").is_none(),
        "no version header on initialize"
    );
    assert!(
        http.session_id().is_some(),
        "the session id was learnt from the initialize answer"
    );
    assert!(
        events(&mut client)
            .iter()
            .any(|e| matches!(e, ClientEvent::Ready { .. }))
    );
    assert_eq!(
        header(&sent[1], "Mcp-Session-Id"),
        http.session_id(),
        "initialized names the session"
    );
    http.set_version(client.version().unwrap());

    let params = raw(json!({"name": "echo", "arguments": {"text": "over http"}}));
    let id = client
        .send_request_raw(now, "tools/call", Some(params), Default::default())
        .unwrap();
    let sent = exchange(&mut kit, &mut client, &mut http);
    assert_eq!(header(&sent[0], "MCP-Protocol-Version"), Some("2025-11-25"));
    assert!(
        header(&sent[0], "Mcp-Method").is_none(),
        "no routing headers on the 2025 wire"
    );
    let answer = events(&mut client)
        .into_iter()
        .find_map(|e| match e {
            ClientEvent::Response { id: got, outcome } if got == id => Some(outcome.unwrap()),
            _ => None,
        })
        .unwrap();
    assert!(answer.get().contains("over http"));

    // DELETE, then the server answers 404: the session expired
    let delete = http.delete_headers().unwrap();
    let pairs: Vec<(&str, &str)> = delete
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(kit.request("DELETE", &pairs, "").unwrap().status, 200);
    let r = kit.request("GET", &pairs, "").unwrap();
    assert_eq!(
        http.handle_response(r.status, &r.headers),
        ResponseKind::SessionExpired
    );
    assert!(http.session_id().is_none());
}

#[test]
fn a_modern_client_over_the_2026_wire_mirrors_headers() {
    let mut kit = Kit::new();
    kit.http.set_tool(&region_tool());
    let now = kit.now;
    let config = Pair::client_config(EraMode::Modern);
    let mut client = ClientSession::new(Arc::new(config), now);
    let mut http = HttpClient::new();
    let sent = exchange(&mut kit, &mut client, &mut http);
    assert_eq!(header(&sent[0], "Mcp-Method"), Some("server/discover"));
    assert_eq!(header(&sent[0], "MCP-Protocol-Version"), Some("2026-07-28"));
    assert!(
        events(&mut client)
            .iter()
            .any(|e| matches!(e, ClientEvent::Ready { .. }))
    );
    assert!(http.session_id().is_none());

    http.observe_tool(&region_tool());
    let params = raw(json!({"name": "echo", "arguments": {"text": "hi", "region": "Hello, 世界"}}));
    let id = client
        .send_request_raw(now, "tools/call", Some(params), Default::default())
        .unwrap();
    let sent = exchange(&mut kit, &mut client, &mut http);
    assert_eq!(header(&sent[0], "Mcp-Name"), Some("echo"));
    assert_eq!(
        header(&sent[0], "Mcp-Param-Region"),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    let answer = events(&mut client)
        .into_iter()
        .find_map(|e| match e {
            ClientEvent::Response { id: got, outcome } if got == id => Some(outcome),
            _ => None,
        })
        .unwrap()
        .expect("the server accepted the mirrored headers");
    assert!(answer.get().contains("hi"));

    // null arguments send no header
    let headers = http.post_headers(
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"region":null},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
    assert!(header(&headers, "Mcp-Param-Region").is_none());
}

#[test]
fn an_unknown_method_answer_on_2026_is_read_as_json() {
    let mut http = HttpClient::new();
    let headers = vec![("Content-Type", "application/json")];
    assert_eq!(http.handle_response(404, &headers), ResponseKind::Json);
    assert_eq!(http.handle_response(400, &headers), ResponseKind::Json);
    assert_eq!(
        http.handle_response(405, &Vec::<(&str, &str)>::new()),
        ResponseKind::NotAllowed
    );
    assert_eq!(
        http.handle_response(202, &Vec::<(&str, &str)>::new()),
        ResponseKind::Accepted
    );
    assert_eq!(
        http.handle_response(500, &Vec::<(&str, &str)>::new()),
        ResponseKind::Failed { status: 500 }
    );
    let sse = vec![
        ("Content-Type", "text/event-stream"),
        ("Mcp-Session-Id", "abc"),
    ];
    assert_eq!(http.handle_response(200, &sse), ResponseKind::EventStream);
    assert_eq!(http.session_id(), Some("abc"));
}

#[test]
fn an_interrupted_stream_reconnects_after_the_retry_delay() {
    let mut http = HttpClient::new();
    let sse = vec![
        ("Content-Type", "text/event-stream"),
        ("Mcp-Session-Id", "abc"),
    ];
    http.handle_response(200, &sse);
    let mut decoder = SseDecoder::new(1 << 16);
    decoder.push(b"id: event-7\nretry: 500\ndata:\n\n");
    while decoder.next_event().is_some() {}
    decoder.finish();
    #[allow(clippy::disallowed_methods)] // the fake clock starts at any instant
    let now = Instant::now();
    assert_eq!(
        http.stream_ended(now, &decoder, true),
        None,
        "a complete stream needs nothing"
    );
    let at = http.stream_ended(now, &decoder, false).unwrap();
    assert_eq!(at, now + Duration::from_millis(500));
    assert_eq!(http.poll_timeout(), Some(at));
    assert_eq!(
        http.poll_reconnect(now + Duration::from_millis(449)),
        None,
        "never early"
    );
    assert_eq!(http.poll_reconnect(at).as_deref(), Some("event-7"));
    assert_eq!(http.poll_reconnect(at), None, "once");
    let get = http.get_headers(Some("event-7"));
    assert_eq!(header(&get, "Last-Event-ID"), Some("event-7"));
    assert_eq!(header(&get, "Mcp-Session-Id"), Some("abc"));
    assert_eq!(header(&get, "Accept"), Some("text/event-stream"));
    let _: Value = json!(null);
}
