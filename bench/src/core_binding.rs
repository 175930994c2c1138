//! The core alone: a client and a server `Session` driven by hand (W1, W2), over stdio pipes
//! to a child process with plain blocking I/O (W3), the serde_json limit, and memory

use std::hint::black_box;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, Implementation, RequestOptions,
    ServerConfig, ServerEvent, ServerSession,
};
use serde_json::json;
use serde_json::value::RawValue;

use crate::alloc;
use crate::common::{ARGS, IN_FLIGHT};

fn params() -> Box<RawValue> {
    RawValue::from_string(format!(r#"{{"name":"echo","arguments":{ARGS}}}"#)).expect("valid")
}

fn result() -> Box<RawValue> {
    RawValue::from_string(r#"{"content":[{"type":"text","text":"hello world"}]}"#.to_owned())
        .expect("valid")
}

#[allow(clippy::disallowed_methods)] // the origin of the sessions' clock
fn origin() -> Instant {
    Instant::now()
}

fn client_config(era: EraMode) -> ClientConfig {
    let mut c = ClientConfig::new(Implementation::new("bench-client", "1.0"));
    c.era = era;
    c.limits.max_in_flight_outbound = 4096;
    c
}

fn server_config() -> ServerConfig {
    let mut s = ServerConfig::new(Implementation::new("bench", "1.0"));
    s.capabilities = json!({"tools": {}});
    s.limits.max_in_flight_inbound = 4096;
    s.limits.max_queued_events = 8192;
    s
}

/// A ready client and server sharing configurations with other sessions (as a binding's
/// sessions do), driven by hand
fn ready_shared(
    client: &Arc<ClientConfig>,
    server: &Arc<ServerConfig>,
    now: Instant,
) -> (ClientSession, ServerSession) {
    let mut c = ClientSession::new(Arc::clone(client), now);
    let mut s = ServerSession::new(Arc::clone(server), now);
    let mut buf = Vec::new();
    let mut ready = false;
    for _ in 0..8 {
        while c.poll_transmit(&mut buf).is_some() {}
        s.handle_bytes(now, &buf);
        buf.clear();
        while s.poll_transmit(&mut buf).is_some() {}
        c.handle_bytes(now, &buf);
        buf.clear();
        while let Some(e) = c.poll_event() {
            ready |= matches!(e, ClientEvent::Ready { .. });
        }
        while s.poll_event().is_some() {}
    }
    assert!(ready, "the handshake completes");
    (c, s)
}

/// A ready client and server
fn ready(era: EraMode, now: Instant) -> (ClientSession, ServerSession) {
    let mut pair = Pair::new(now, client_config(era), server_config());
    pair.drive();
    assert!(
        matches!(pair.client_events().as_slice(), [ClientEvent::Ready { .. }]),
        "the handshake completes"
    );
    let _ = pair.server_events();
    (pair.client, pair.server)
}

/// `k` calls in flight at once: all requests out, all answered, all answers in
fn calls(
    client: &mut ClientSession,
    server: &mut ServerSession,
    now: Instant,
    buf: &mut Vec<u8>,
    result: &RawValue,
    k: usize,
    capture: Option<&mut Vec<String>>,
) {
    for _ in 0..k {
        client
            .send_request_raw(now, "tools/call", Some(params()), RequestOptions::default())
            .expect("ready");
    }
    while client.poll_transmit(buf).is_some() {}
    let mut captured = Vec::new();
    if capture.is_some() {
        captured.push(String::from_utf8_lossy(buf).trim_end().to_owned());
    }
    server.handle_bytes(now, buf);
    buf.clear();
    while let Some(event) = server.poll_event() {
        let ServerEvent::Request(request) = event else {
            panic!("expected a request, got {event:?}")
        };
        server
            .respond_raw(request.responder, result)
            .expect("an object");
    }
    while server.poll_transmit(buf).is_some() {}
    if let Some(c) = capture {
        captured.push(String::from_utf8_lossy(buf).trim_end().to_owned());
        *c = captured;
    }
    client.handle_bytes(now, buf);
    buf.clear();
    let mut done = 0;
    while let Some(event) = client.poll_event() {
        match event {
            ClientEvent::Response { outcome: Ok(r), .. } => {
                black_box(r);
                done += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(done, k, "every call answered");
}

fn rounds(era: EraMode, runs: usize, n: usize, k: usize) -> Vec<f64> {
    let now = origin();
    let (mut client, mut server) = ready(era, now);
    let result = result();
    let mut buf = Vec::with_capacity(64 * 1024);
    crate::common::time_runs(runs, n, |n| {
        for _ in 0..n / k {
            calls(&mut client, &mut server, now, &mut buf, &result, k, None);
        }
    })
}

/// W1: sequential round trips
pub(crate) fn w1(era: EraMode, runs: usize, n: usize) -> Vec<f64> {
    rounds(era, runs, n, 1)
}

/// W2: 64 calls in flight
pub(crate) fn w2(era: EraMode, runs: usize, n: usize) -> Vec<f64> {
    rounds(era, runs, n.max(IN_FLIGHT), IN_FLIGHT)
}

/// The bytes of one W1 round trip in this era: the request and the response, as written
fn round_trip_bytes(era: EraMode) -> (String, String) {
    let now = origin();
    let (mut client, mut server) = ready(era, now);
    let mut buf = Vec::new();
    let mut captured = Vec::new();
    calls(
        &mut client,
        &mut server,
        now,
        &mut buf,
        &result(),
        1,
        Some(&mut captured),
    );
    let response = captured.pop().expect("captured");
    let request = captured.pop().expect("captured");
    (request, response)
}

/// The serde_json limit: the same bytes parsed and written once each, `n` times
pub(crate) fn limit(era: EraMode, n: usize) {
    thread_local! {
        static BYTES: std::cell::RefCell<Option<(EraMode, String, String)>> = const { std::cell::RefCell::new(None) };
    }
    let (request, response) = BYTES.with(|b| {
        let mut b = b.borrow_mut();
        if b.as_ref().is_none_or(|(e, _, _)| *e != era) {
            let (req, resp) = round_trip_bytes(era);
            *b = Some((era, req, resp));
        }
        let (_, req, resp) = b.as_ref().expect("set");
        (req.clone(), resp.clone())
    });
    let mut buf = Vec::with_capacity(4096);
    for _ in 0..n {
        let req: serde_json::Value = serde_json::from_str(black_box(&request)).expect("valid");
        serde_json::to_writer(&mut buf, &req).expect("vec");
        buf.clear();
        let resp: serde_json::Value = serde_json::from_str(black_box(&response)).expect("valid");
        serde_json::to_writer(&mut buf, &resp).expect("vec");
        buf.clear();
        black_box((req, resp));
    }
}

fn era_arg(era: EraMode) -> &'static str {
    match era {
        EraMode::Modern => "modern",
        _ => "legacy",
    }
}

/// W3 with the core alone: this process is the client, a child `mcp-bench serve --binding
/// core` the server; both use blocking pipe I/O and no runtime
pub(crate) fn w3(era: EraMode, runs: usize, n: usize) -> Result<Vec<f64>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["serve", "--binding", "core", "--era", era_arg(era)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the child: {e}"))?;
    let mut to_child = child.stdin.take().expect("piped");
    let mut from_child = child.stdout.take().expect("piped");
    let now = origin();
    let mut client = ClientSession::new(Arc::new(client_config(era)), now);
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut read = vec![0u8; 64 * 1024];
    // Runs the client until `want` responses arrived (0: until ready).
    let mut pump = |client: &mut ClientSession, want: usize| -> Result<(), String> {
        let mut got = 0;
        loop {
            while client.poll_transmit(&mut buf).is_some() {}
            if !buf.is_empty() {
                to_child.write_all(&buf).map_err(|e| e.to_string())?;
                to_child.flush().map_err(|e| e.to_string())?;
                buf.clear();
            }
            while let Some(event) = client.poll_event() {
                match event {
                    ClientEvent::Ready { .. } if want == 0 => return Ok(()),
                    ClientEvent::Response { outcome: Ok(r), .. } => {
                        black_box(r);
                        got += 1;
                    }
                    ClientEvent::Response {
                        outcome: Err(e), ..
                    } => return Err(e.to_string()),
                    ClientEvent::Closed { reason } => return Err(reason.to_string()),
                    _ => {}
                }
            }
            if want > 0 && got == want {
                return Ok(());
            }
            let k = from_child.read(&mut read).map_err(|e| e.to_string())?;
            if k == 0 {
                return Err("the child closed its stdout".into());
            }
            client.handle_bytes(now, &read[..k]);
        }
    };
    pump(&mut client, 0)?;
    let mut failure = None;
    let rates = crate::common::time_runs(runs, n, |n| {
        for _ in 0..n {
            if failure.is_some() {
                return;
            }
            if let Err(e) = client.send_request_raw(
                now,
                "tools/call",
                Some(params()),
                RequestOptions::default(),
            ) {
                failure = Some(e.to_string());
                return;
            }
            if let Err(e) = pump(&mut client, 1) {
                failure = Some(e);
            }
        }
    });
    drop(to_child);
    let _ = child.wait();
    match failure {
        Some(e) => Err(e),
        None => Ok(rates),
    }
}

/// The W3 child with the core alone: blocking stdio, answers every `tools/call` with the echo
pub(crate) fn serve_stdio() -> Result<(), String> {
    let now = origin();
    let mut server = ServerSession::new(Arc::new(server_config()), now);
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let stdout = std::io::stdout();
    let mut stdout = stdout.lock();
    let mut read = vec![0u8; 64 * 1024];
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        let k = stdin.read(&mut read).map_err(|e| e.to_string())?;
        if k == 0 {
            return Ok(());
        }
        server.handle_bytes(now, &read[..k]);
        loop {
            let mut moved = false;
            while let Some(event) = server.poll_event() {
                moved = true;
                if let ServerEvent::Request(request) = event {
                    let text = request
                        .params_as::<serde_json::Value>()
                        .ok()
                        .and_then(|p| p["arguments"]["text"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    let result = json!({"content": [{"type": "text", "text": text}]});
                    let result = RawValue::from_string(result.to_string()).expect("valid");
                    let _ = server.respond_raw(request.responder, &result);
                }
            }
            while server.poll_transmit(&mut buf).is_some() {
                moved = true;
            }
            if !moved {
                break;
            }
        }
        if !buf.is_empty() {
            stdout.write_all(&buf).map_err(|e| e.to_string())?;
            stdout.flush().map_err(|e| e.to_string())?;
            buf.clear();
        }
    }
}

/// Bytes per idle session (client and server, after the handshake) and per request in
/// flight (payloads aside: the client's entry once written, the server's once delivered and
/// its event taken), from the counting allocator; per request in flight both with warm
/// tables (sized by an earlier burst) and with tables that emptied and gave their slots back
pub(crate) fn memory(era: EraMode) -> serde_json::Value {
    const SESSIONS: usize = 1000;
    const REQUESTS: usize = 1000;
    let now = origin();
    let mut clients = Vec::with_capacity(SESSIONS);
    let mut servers = Vec::with_capacity(SESSIONS);
    let client_config = Arc::new(client_config(era));
    let server_config = Arc::new(server_config());
    // Warm up whatever is allocated once per process.
    drop(ready_shared(&client_config, &server_config, now));
    let base = alloc::live();
    for _ in 0..SESSIONS {
        let (c, s) = ready_shared(&client_config, &server_config, now);
        clients.push(c);
        servers.push(s);
    }
    let (client_grown, server_grown) = {
        let before = alloc::live();
        for c in &mut clients {
            c.shrink_to_fit();
        }
        let clients_shrunk = before - alloc::live();
        let before = alloc::live();
        for s in &mut servers {
            s.shrink_to_fit();
        }
        let servers_shrunk = before - alloc::live();
        (clients_shrunk, servers_shrunk)
    };
    // `clear` drops the sessions but keeps the vectors' buffers (allocated before `base`).
    let both = alloc::live();
    clients.clear();
    let servers_only = alloc::live();
    servers.clear();
    // Heap per session after `shrink_to_fit`, plus the session value itself.
    let inline = size_of::<ServerSession>() as f64;
    let client_idle = (both - servers_only) as f64 / SESSIONS as f64 + inline;
    let server_idle = (servers_only - base) as f64 / SESSIONS as f64 + inline;
    let client_spare = client_grown as f64 / SESSIONS as f64;
    let server_spare = server_grown as f64 / SESSIONS as f64;

    let (mut client, mut server) = ready(era, now);
    let mut buf = Vec::with_capacity(1 << 20);
    let mut responders = Vec::with_capacity(2 * REQUESTS);
    // Warm the tables up to their size, then measure a second batch of the same size.
    let measure = |client: &mut ClientSession,
                   server: &mut ServerSession,
                   buf: &mut Vec<u8>,
                   responders: &mut Vec<mcp_sansio::Responder>| {
        let start = alloc::live();
        for _ in 0..REQUESTS {
            client
                .send_request_raw(now, "tools/call", Some(params()), RequestOptions::default())
                .expect("ready");
        }
        while client.poll_transmit(buf).is_some() {}
        let client_grew = alloc::live() - start;
        let mid = alloc::live();
        server.handle_bytes(now, buf);
        buf.clear();
        while let Some(event) = server.poll_event() {
            if let ServerEvent::Request(r) = event {
                responders.push(r.responder);
            }
        }
        let server_grew = alloc::live() - mid;
        (client_grew, server_grew)
    };
    let result = result();
    // Answers every request but `keep` of them, and takes the client's events.
    let answer = |client: &mut ClientSession,
                  server: &mut ServerSession,
                  buf: &mut Vec<u8>,
                  responders: &mut Vec<mcp_sansio::Responder>,
                  keep: usize| {
        for r in responders.drain(keep..) {
            server.respond_raw(r, &result).expect("an object");
        }
        while server.poll_transmit(buf).is_some() {}
        client.handle_bytes(now, buf);
        buf.clear();
        while client.poll_event().is_some() {}
    };
    // Cold: the tables emptied between the bursts and gave their slots back (an idle
    // session keeps only a few), so the second burst grows them again.
    let _ = measure(&mut client, &mut server, &mut buf, &mut responders);
    answer(&mut client, &mut server, &mut buf, &mut responders, 0);
    let (client_cold, server_cold) = measure(&mut client, &mut server, &mut buf, &mut responders);
    // Warm: one request of the last burst stays in flight, so the tables keep their size
    // and the next burst reuses it (a server that is never idle between bursts).
    answer(&mut client, &mut server, &mut buf, &mut responders, 1);
    let (client_grew, server_grew) = measure(&mut client, &mut server, &mut buf, &mut responders);
    json!({
        "workload": "mem",
        "era": crate::common::era_name(era),
        "idle_session_bytes": {"client": client_idle.round(), "server": server_idle.round()},
        "session_value_bytes": inline,
        "spare_capacity_released_by_shrink": {"client": client_spare.round(), "server": server_spare.round()},
        "in_flight_request_bytes": {
            "client": (client_grew as f64 / REQUESTS as f64).round(),
            "server": (server_grew as f64 / REQUESTS as f64).round(),
        },
        "in_flight_request_bytes_cold_tables": {
            "client": (client_cold as f64 / REQUESTS as f64).round(),
            "server": (server_cold as f64 / REQUESTS as f64).round(),
        },
    })
}
