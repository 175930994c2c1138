//! W1: sequential `tools/call` round trips between a client and a server session, core only
//! (no runtime, no I/O), beside the bare serde_json cost of the same bytes; W2: the same with
//! 64 requests in flight
//!
//! `cargo bench -p mcp-sansio --bench round_trip`

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientEvent, ClientSession, EraMode, ProtocolVersion, RequestOptions, ServerEvent,
    ServerSession,
};
use serde_json::value::RawValue;

const PARAMS: &str = r#"{"name":"echo","arguments":{"text":"hello world"}}"#;
const RESULT: &str = r#"{"content":[{"type":"text","text":"hello world"}]}"#;

/// A ready client and server, taken out of the test kit
fn ready(era: EraMode, now: Instant) -> (ClientSession, ServerSession) {
    let mut pair = Pair::new(now, Pair::client_config(era), Pair::server_config());
    pair.drive();
    assert!(matches!(
        pair.client_events().as_slice(),
        [ClientEvent::Ready { .. }]
    ));
    pair.server_events();
    (pair.client, pair.server)
}

/// One call: request out, delivered, answered, answer delivered, outcome taken
fn round_trip(
    client: &mut ClientSession,
    server: &mut ServerSession,
    now: Instant,
    buf: &mut Vec<u8>,
    result: &RawValue,
) {
    let params = RawValue::from_string(PARAMS.to_owned()).expect("valid");
    let id = client
        .send_request_raw(now, "tools/call", Some(params), RequestOptions::default())
        .expect("ready");
    while client.poll_transmit(buf).is_some() {}
    server.handle_bytes(now, buf);
    buf.clear();
    let Some(ServerEvent::Request(request)) = server.poll_event() else {
        panic!("expected the request")
    };
    server
        .respond_raw(request.responder, result)
        .expect("an object");
    while server.poll_transmit(buf).is_some() {}
    client.handle_bytes(now, buf);
    buf.clear();
    match client.poll_event() {
        Some(ClientEvent::Response {
            id: got,
            outcome: Ok(r),
        }) if got == id => {
            black_box(r);
        }
        other => panic!("unexpected {other:?}"),
    }
}

fn w1(c: &mut Criterion) {
    #[allow(clippy::disallowed_methods)] // the fake clock's origin
    let now = Instant::now();
    let result = RawValue::from_string(RESULT.to_owned()).expect("valid");
    let mut group = c.benchmark_group("w1");
    group.throughput(Throughput::Elements(1));
    for (name, era) in [
        (
            "core_legacy_2025_11_25",
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
        ),
        ("core_modern_2026_07_28", EraMode::Modern),
    ] {
        let (mut client, mut server) = ready(era, now);
        let mut buf = Vec::with_capacity(4096);
        group.bench_function(name, |b| {
            b.iter(|| round_trip(&mut client, &mut server, now, &mut buf, &result));
        });
    }
    // The physical limit: serde_json parsing and writing the same four messages (request
    // and response, each written once and parsed once) with no protocol logic at all.
    let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{PARAMS}}}"#);
    let response = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{RESULT}}}"#);
    group.bench_function("serde_json_limit", |b| {
        let mut buf = Vec::with_capacity(4096);
        b.iter(|| {
            let req: serde_json::Value = serde_json::from_str(black_box(&request)).expect("valid");
            serde_json::to_writer(&mut buf, &req).expect("vec");
            buf.clear();
            let resp: serde_json::Value =
                serde_json::from_str(black_box(&response)).expect("valid");
            serde_json::to_writer(&mut buf, &resp).expect("vec");
            buf.clear();
            black_box((req, resp));
        });
    });
    group.finish();
}

/// 64 calls at once: every request out, delivered in one read, answered, every answer in
fn w2_batch(
    client: &mut ClientSession,
    server: &mut ServerSession,
    now: Instant,
    buf: &mut Vec<u8>,
    result: &RawValue,
) {
    for _ in 0..IN_FLIGHT {
        let params = RawValue::from_string(PARAMS.to_owned()).expect("valid");
        client
            .send_request_raw(now, "tools/call", Some(params), RequestOptions::default())
            .expect("ready");
    }
    while client.poll_transmit(buf).is_some() {}
    server.handle_bytes(now, buf);
    buf.clear();
    while let Some(event) = server.poll_event() {
        let ServerEvent::Request(request) = event else {
            panic!("expected a request")
        };
        server
            .respond_raw(request.responder, result)
            .expect("an object");
    }
    while server.poll_transmit(buf).is_some() {}
    client.handle_bytes(now, buf);
    buf.clear();
    let mut done = 0;
    while let Some(event) = client.poll_event() {
        assert!(matches!(
            event,
            ClientEvent::Response { outcome: Ok(_), .. }
        ));
        done += 1;
    }
    assert_eq!(done, IN_FLIGHT);
}

const IN_FLIGHT: usize = 64;

fn w2(c: &mut Criterion) {
    #[allow(clippy::disallowed_methods)] // the fake clock's origin
    let now = Instant::now();
    let result = RawValue::from_string(RESULT.to_owned()).expect("valid");
    let mut group = c.benchmark_group("w2");
    group.throughput(Throughput::Elements(IN_FLIGHT as u64));
    for (name, era) in [
        (
            "core_legacy_2025_11_25",
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
        ),
        ("core_modern_2026_07_28", EraMode::Modern),
    ] {
        let (mut client, mut server) = ready(era, now);
        let mut buf = Vec::with_capacity(64 * 1024);
        group.bench_function(name, |b| {
            b.iter(|| w2_batch(&mut client, &mut server, now, &mut buf, &result));
        });
    }
    group.finish();
}

criterion_group!(benches, w1, w2);
criterion_main!(benches);
