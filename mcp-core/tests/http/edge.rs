//! The rules of the HTTP edge: header hygiene (400 for a value that is not UTF-8 and for two
//! `Host` fields, on both wires) and each connection's read deadlines

use crate::common;
use crate::http_kit;

use std::time::Duration;

use http_kit::Kit;
use mcp_sansio::http::{Expiry, HttpConfig, ReadDeadline, ReadPhase};
use serde_json::{Value, json};

fn ping() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()
}

fn error_message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(v["error"]["code"], -32600);
    v["error"]["message"].as_str().unwrap().to_owned()
}

fn headers<'a>(extra: &[(&'a str, &'a [u8])]) -> Vec<(&'a str, Vec<u8>)> {
    let mut all: Vec<(&str, Vec<u8>)> = vec![
        ("Content-Type", b"application/json".to_vec()),
        ("Accept", b"application/json, text/event-stream".to_vec()),
    ];
    all.extend(extra.iter().map(|(n, v)| (*n, v.to_vec())));
    all
}

fn answer(kit: &mut Kit, method: &str, headers: &[(&str, Vec<u8>)]) -> (u16, Vec<u8>) {
    let mut ids = || [7u8; 16];
    let body = if method == "POST" {
        ping()
    } else {
        String::new()
    };
    match kit.http.handle_request(
        kit.now,
        &mcp_sansio::http::Source::unknown(),
        method,
        headers,
        body.as_bytes(),
        &mut ids,
    ) {
        mcp_sansio::http::Reply::Complete(r) => (r.status, r.body),
        other => panic!("a complete reply: {other:?}"),
    }
}

#[test]
fn no_host_field_or_two_get_400_on_every_method() {
    let mut kit = Kit::new();
    for method in ["POST", "GET", "DELETE"] {
        let two = headers(&[("Host", b"127.0.0.1:3000"), ("host", b"127.0.0.1:3000")]);
        let (status, body) = answer(&mut kit, method, &two);
        assert_eq!(status, 400, "{method}");
        assert!(error_message(&body).contains("Host"), "{method}");
    }
    // Even with the host checks off.
    let mut config = HttpConfig::default();
    config.hosts = mcp_sansio::http::HostPolicy::allow_all();
    let mut kit = Kit::with_config(config);
    let two = headers(&[("Host", b"a"), ("Host", b"b")]);
    assert_eq!(answer(&mut kit, "POST", &two).0, 400);
    // No Host field at all: 400 too (RFC 9112 section 3.2).
    let (status, body) = answer(&mut kit, "POST", &headers(&[]));
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("no Host"), "{body:?}");
    // One Host field passes this check (the ping then lacks a session).
    let one = headers(&[("Host", b"127.0.0.1:3000")]);
    let (_, body) = answer(&mut kit, "POST", &one);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        !v["error"]["message"].as_str().unwrap().contains("Host"),
        "{v}"
    );
}

#[test]
fn a_header_value_that_is_not_utf8_gets_a_clear_400() {
    let mut kit = Kit::new();
    for (name, value) in [
        ("X-Anything", &b"caf\xe9"[..]),
        ("Mcp-Session-Id", &b"\xff\xfe"[..]),
        ("MCP-Protocol-Version", &b"2026-07-28\x80"[..]),
    ] {
        let bad = headers(&[("Host", b"127.0.0.1:3000"), (name, value)]);
        let (status, body) = answer(&mut kit, "POST", &bad);
        assert_eq!(status, 400, "{name}");
        let message = error_message(&body);
        assert!(
            message.contains(name) && message.contains("UTF-8"),
            "{message}"
        );
    }
}

#[test]
fn the_read_deadlines_follow_the_connection() {
    let mut config = HttpConfig::default();
    config.header_read_timeout = Duration::from_secs(1);
    config.body_read_timeout = Duration::from_secs(2);
    config.keep_alive_timeout = Duration::from_secs(3);
    let t0 = common::origin();
    let mut d = ReadDeadline::accepted(t0);
    assert_eq!(d.phase(), ReadPhase::Head);
    assert_eq!(d.deadline(&config), Some(t0 + Duration::from_secs(1)));
    assert_eq!(d.expiry(), Expiry::RequestTimeout);
    assert!(!d.expired(&config, t0));
    assert!(d.expired(&config, t0 + Duration::from_secs(1)));
    // More bytes of the head do not move its deadline (a byte a second gains nothing).
    d.head_started(t0 + Duration::from_millis(500));
    assert_eq!(d.deadline(&config), Some(t0 + Duration::from_secs(1)));
    let t1 = t0 + Duration::from_millis(900);
    d.head_read(t1);
    assert_eq!(d.deadline(&config), Some(t1 + Duration::from_secs(2)));
    assert_eq!(d.expiry().status(), Some(408));
    d.body_read(t1);
    assert_eq!(d.deadline(&config), None);
    assert!(!d.expired(&config, t1 + Duration::from_secs(3600)));
    let t2 = t1 + Duration::from_secs(10);
    d.response_written(t2);
    assert_eq!(d.phase(), ReadPhase::Idle);
    assert_eq!(d.deadline(&config), Some(t2 + Duration::from_secs(3)));
    assert_eq!(d.expiry(), Expiry::Close);
    assert_eq!(d.expiry().status(), None);
    let t3 = t2 + Duration::from_secs(1);
    d.head_started(t3);
    assert_eq!(d.deadline(&config), Some(t3 + Duration::from_secs(1)));
    assert_eq!(d.expiry(), Expiry::RequestTimeout);
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let config = HttpConfig::default();
    assert_eq!(config.header_read_timeout, Duration::from_secs(10));
    assert_eq!(config.body_read_timeout, Duration::from_secs(30));
    assert_eq!(config.keep_alive_timeout, Duration::from_secs(60));
    assert_eq!(config.max_connections, 1024);
    assert_eq!(config.accept_backoff, Duration::from_millis(100));
}
