//! Property tests of the session engine: hostile input never panics and stays bounded, and
//! random operation sequences on a client/server pair keep the exactly-once guarantees

use crate::common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::session::Role;
use mcp_sansio::testing::{Chunking, Pair, Side};
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, ErrorObject, Limits, OutboundId, Progress,
    ProtocolVersion, RequestOptions, Responder, ServerConfig, ServerEvent, ServerSession, Session,
};

// --- (a) arbitrary input to a fresh session -------------------------------------------------

const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "resources/subscribe",
    "sampling/createMessage",
    "roots/list",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "x/unknown",
];

const IDS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "\"a\"",
    "null",
    "1.5",
    "-1",
    "18446744073709551615",
    "{\"o\":1}",
];

const PARAMS: &[&str] = &[
    "{}",
    "[1,2]",
    r#"{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}"#,
    r#"{"requestId":1,"reason":"r"}"#,
    r#"{"progressToken":2,"progress":1.0}"#,
    r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
    r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"v9"}}"#,
    r#"{"name":"t","_meta":{"progressToken":1}}"#,
    r#"{"name":"t","_meta":"not an object"}"#,
];

const RESULTS: &[&str] = &[
    "{}",
    r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}"#,
    r#"{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    "\"not an object\"",
];

const ERRORS: &[&str] = &[
    r#"{"code":-32601,"message":"nope"}"#,
    r#"{"code":-32022,"message":"v","data":{"supported":["2026-07-28"]}}"#,
    r#"{"code":"x"}"#,
];

/// One JSON-RPC-shaped text, valid or subtly wrong, chosen by `k`
///
/// Built by hand from seed bytes: nested proptest unions of `Value`s overflow the test
/// thread's stack in debug builds.
fn message(k: [u8; 5]) -> String {
    let pick = |table: &[&'static str], b: u8| table[b as usize % table.len()];
    let id = pick(IDS, k[1]);
    let method = pick(METHODS, k[2]);
    let params = if k[3].is_multiple_of(5) {
        String::new()
    } else {
        format!(r#","params":{}"#, pick(PARAMS, k[3]))
    };
    match k[0] % 8 {
        0 | 1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","method":"{method}"{params}}}"#),
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
            pick(RESULTS, k[4])
        ),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{}}}"#,
            pick(ERRORS, k[4])
        ),
        5 => r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_owned(),
        6 => pick(&["42", "{}", "[]", "null"], k[4]).to_owned(),
        _ => {
            // a batch of up to three messages
            let n = k[4] % 4;
            let items: Vec<_> = (0..n)
                .map(|i| {
                    message([
                        k[1].wrapping_add(i) % 5,
                        k[2],
                        k[3].wrapping_add(i),
                        k[1],
                        i,
                    ])
                })
                .collect();
            format!("[{}]", items.join(","))
        }
    }
}

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => any::<[u8; 5]>().prop_map(|k| message(k).into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..48),
        1 => (any::<[u8; 5]>(), any::<prop::sample::Index>()).prop_map(|(k, cut)| {
            let s = message(k).into_bytes();
            let n = cut.index(s.len() + 1);
            s[..n].to_vec()
        }),
    ]
    .boxed()
}

fn input_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((line_strategy(), 0..4usize), 0..24).prop_map(|lines| {
        let mut out = Vec::new();
        for (line, end) in lines {
            out.extend_from_slice(&line);
            out.extend_from_slice([&b"\n"[..], b"\r\n", b"\n\n", b""][end]);
        }
        out
    })
}

/// A session of either role, chosen at run time
enum AnySession {
    Client(ClientSession),
    Server(ServerSession),
}

fn session_for(kind: u8) -> AnySession {
    let mut small = Limits::default();
    small.max_message_size = 200;
    small.max_queued_events = 2;
    small.max_in_flight_inbound = 2;
    small.max_batch_len = 2;
    small.max_queued_bytes = 300;
    let client = |era, limits: Limits| {
        let mut c: ClientConfig = Pair::client_config(era);
        c.limits = limits;
        AnySession::Client(ClientSession::new(Arc::new(c), origin()))
    };
    let server = |limits: Limits| {
        let mut s: ServerConfig = Pair::server_config();
        s.limits = limits;
        AnySession::Server(ServerSession::new(Arc::new(s), origin()))
    };
    match kind % 8 {
        0 => client(EraMode::Auto, Limits::default()),
        1 => client(EraMode::Modern, Limits::default()),
        2 => client(
            EraMode::Legacy(ProtocolVersion::V2025_03_26),
            Limits::default(),
        ),
        3 => client(EraMode::Legacy(ProtocolVersion::V2024_11_05), small.clone()),
        4 => client(EraMode::Auto, small.clone()),
        5 => server(small),
        _ => server(Limits::default()),
    }
}

/// Drains a session; returns (bytes, frames, events); checks every frame is one JSON value
fn drain<R: Role>(s: &mut Session<R>, events: &mut Vec<R::Event>) -> (usize, usize) {
    let mut bytes = 0;
    let mut frames = 0;
    loop {
        let mut moved = false;
        let mut buf = Vec::new();
        while let Some(t) = s.poll_transmit(&mut buf) {
            assert_eq!(t.len, buf.len());
            assert_eq!(buf.last(), Some(&b'\n'));
            let v: Value = serde_json::from_slice(&buf).expect("the session writes valid JSON");
            assert!(v.is_object() || v.is_array(), "{v}");
            bytes += buf.len();
            frames += 1;
            buf.clear();
            moved = true;
        }
        while let Some(e) = s.poll_event() {
            events.push(e);
            moved = true;
        }
        if !moved {
            return (bytes, frames);
        }
    }
}

/// What these properties read of an event, on either end
trait Observed: std::fmt::Debug {
    /// A `Closed` event
    fn is_closed(&self) -> bool;
    /// The request a `Response` event ends
    fn response(&self) -> Option<&OutboundId>;
    /// The request a `Progress` event reports on
    fn progress(&self) -> Option<&OutboundId>;
}

macro_rules! observed {
    ($($event:ty),*) => {$(
        impl Observed for $event {
            fn is_closed(&self) -> bool {
                matches!(self, Self::Closed { .. })
            }
            fn response(&self) -> Option<&OutboundId> {
                match self {
                    Self::Response { id, .. } => Some(id),
                    _ => None,
                }
            }
            fn progress(&self) -> Option<&OutboundId> {
                match self {
                    Self::Progress { id, .. } => Some(id),
                    _ => None,
                }
            }
        }
    )*};
}

observed!(ClientEvent, ServerEvent);

fn closed_once_and_last(events: &[impl Observed]) {
    let closed: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_closed())
        .map(|(i, _)| i)
        .collect();
    assert!(closed.len() <= 1, "Closed twice: {events:?}");
    if let Some(&i) = closed.first() {
        assert_eq!(i, events.len() - 1, "an event after Closed: {events:?}");
    }
}

proptest! {
    #![proptest_config(common::beside_source(ProptestConfig { cases: 1024, ..ProptestConfig::default() }))]

    #[test]
    fn arbitrary_input_never_panics_and_stays_bounded(
        kind in any::<u8>(),
        input in input_strategy(),
        cuts in prop::collection::vec(1usize..40, 1..16),
        drain_every in prop::collection::vec(any::<bool>(), 1..8),
        as_messages in any::<bool>(),
        eof in any::<bool>(),
    ) {
        match session_for(kind) {
            AnySession::Client(s) => arbitrary_input(s, &input, &cuts, &drain_every, as_messages, eof)?,
            AnySession::Server(s) => arbitrary_input(s, &input, &cuts, &drain_every, as_messages, eof)?,
        }
    }
}

/// The body of `arbitrary_input_never_panics_and_stays_bounded`, for a session of either role
fn arbitrary_input<R: Role>(
    mut s: Session<R>,
    input: &[u8],
    cuts: &[usize],
    drain_every: &[bool],
    as_messages: bool,
    eof: bool,
) -> Result<(), TestCaseError>
where
    R::Event: Observed,
{
    let mut events = Vec::new();
    let (initial, _) = drain(&mut s, &mut events);
    let now = origin();
    let mut out_bytes = 0;
    if as_messages {
        for (i, frame) in input.split(|&b| b == b'\n').enumerate() {
            s.handle_message(now, frame);
            if drain_every[i % drain_every.len()] {
                out_bytes += drain(&mut s, &mut events).0;
            }
        }
    } else {
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = cuts[i % cuts.len()].min(rest.len());
            let (head, tail) = rest.split_at(n);
            s.handle_bytes(now, head);
            if drain_every[i % drain_every.len()] {
                out_bytes += drain(&mut s, &mut events).0;
            }
            rest = tail;
            i += 1;
        }
    }
    if eof {
        s.handle_eof(now);
    }
    s.handle_timeout(now + Duration::from_secs(3600));
    out_bytes += drain(&mut s, &mut events).0;
    // Bounds: each frame or batch entry gives at most one event and one reply; lifecycle
    // messages (a discover retry, the initialize fallback) answer responses, also frames.
    let frames = input.iter().filter(|&&b| b == b'\n' || b == b',').count() + 1;
    prop_assert!(
        events.len() <= frames + 2,
        "{} events for {} frames",
        events.len(),
        frames
    );
    prop_assert!(
        out_bytes <= 600 * frames + 2 * input.len(),
        "{out_bytes} bytes out for {} bytes in ({initial} initially)",
        input.len()
    );
    closed_once_and_last(&events);
    if eof && !s.is_closed() {
        // Only unanswered inbound requests keep it open.
        prop_assert!(s.inbound_in_flight() > 0);
    }
    Ok(())
}

// --- (b) random operations on a pair ---------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Send {
        method: usize,
        timeout_ms: Option<u64>,
        progress: bool,
        reset: bool,
    },
    Respond(usize),
    RespondError(usize),
    ReportProgress(usize),
    Cancel(usize),
    Advance(u64),
    Pause(bool),
    Resume(bool),
    ServerNotify,
    ServerRequest,
    ClientAnswer(usize),
    Drive,
}

#[derive(Debug, Clone, Copy)]
enum End {
    CloseBoth,
    EofBoth,
    ClientCloseServerEof,
}

const SEND_METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "prompts/list",
    "resources/read",
    "x/not-served",
];

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..SEND_METHODS.len(), prop::option::of(1u64..5_000), any::<bool>(), any::<bool>())
            .prop_map(|(method, timeout_ms, progress, reset)| Op::Send { method, timeout_ms, progress, reset }),
        3 => any::<usize>().prop_map(Op::Respond),
        1 => any::<usize>().prop_map(Op::RespondError),
        2 => any::<usize>().prop_map(Op::ReportProgress),
        2 => any::<usize>().prop_map(Op::Cancel),
        2 => (0u64..6_000).prop_map(Op::Advance),
        1 => any::<bool>().prop_map(Op::Pause),
        1 => any::<bool>().prop_map(Op::Resume),
        1 => Just(Op::ServerNotify),
        1 => Just(Op::ServerRequest),
        1 => any::<usize>().prop_map(Op::ClientAnswer),
        1 => Just(Op::Drive),
    ]
}

fn era_strategy() -> impl Strategy<Value = EraMode> {
    prop_oneof![
        Just(EraMode::Modern),
        Just(EraMode::Auto),
        Just(EraMode::Legacy(ProtocolVersion::V2024_11_05)),
        Just(EraMode::Legacy(ProtocolVersion::V2025_03_26)),
        Just(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
    ]
}

fn side(b: bool) -> Side {
    if b { Side::Client } else { Side::Server }
}

#[derive(Default)]
struct World {
    client_events: Vec<ClientEvent>,
    server_events: Vec<ServerEvent>,
    client_sent: Vec<OutboundId>,
    server_sent: Vec<OutboundId>,
    /// Responders the server holds, with the last progress reported
    server_held: Vec<(Responder, Option<f64>, bool)>,
    client_held: Vec<Responder>,
}

impl World {
    fn collect(&mut self, pair: &mut Pair) {
        fn closed(events: &[impl Observed]) -> bool {
            events.iter().any(Observed::is_closed)
        }
        for e in pair.client_events() {
            match e {
                ClientEvent::Request(r) => {
                    assert!(!closed(&self.client_events), "a request after Closed");
                    self.client_held.push(r.responder);
                }
                other => self.client_events.push(other),
            }
        }
        for e in pair.server_events() {
            match e {
                ServerEvent::Request(r) => {
                    assert!(!closed(&self.server_events), "a request after Closed");
                    self.server_held.push((r.responder, None, r.wants_progress));
                }
                other => self.server_events.push(other),
            }
        }
    }
}

fn pick<T>(v: &mut Vec<T>, i: usize) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        let n = v.len();
        Some(v.remove(i % n))
    }
}

/// Each id gets exactly one Response, no Progress after it, and nothing after Closed
fn check_outcomes(events: &[impl Observed], sent: &[OutboundId], who: &str) {
    closed_once_and_last(events);
    let mut done: HashMap<OutboundId, usize> = HashMap::new();
    for e in events {
        if let Some(id) = e.response() {
            assert!(sent.contains(id), "{who}: a response for {id} never sent");
            *done.entry(*id).or_default() += 1;
        } else if let Some(id) = e.progress() {
            assert!(sent.contains(id), "{who}: progress for {id} never sent");
            assert!(
                !done.contains_key(id),
                "{who}: progress for {id} after its response"
            );
        }
    }
    for id in sent {
        assert_eq!(done.get(id), Some(&1), "{who}: {id} must end exactly once");
    }
}

/// Response ids a side wrote are unique (wire ids are never reused, so a repeat is a second
/// answer to one request)
fn check_single_answers(transcript: &[(Side, String)], from: Side) {
    let mut seen = HashSet::new();
    for (s, line) in transcript {
        if *s != from {
            continue;
        }
        let v: Value = serde_json::from_str(line).unwrap();
        let items = match v {
            Value::Array(items) => items,
            one => vec![one],
        };
        for m in items {
            let is_answer = m.get("method").is_none()
                && (m.get("result").is_some() || m.get("error").is_some());
            if let Some(id) = m.get("id").filter(|id| is_answer && !id.is_null()) {
                assert!(seen.insert(id.to_string()), "{from:?} answered {id} twice");
            }
        }
    }
}

fn run(era: EraMode, chunking: Chunking, ops: &[Op], end: End) {
    let mut client = Pair::client_config(era);
    client.timeouts.request = Some(Duration::from_secs(10));
    let mut pair = Pair::new(origin(), client, Pair::server_config());
    pair.chunking = chunking;
    let mut w = World::default();
    pair.drive();
    w.collect(&mut pair);
    for op in ops {
        match op {
            Op::Send {
                method,
                timeout_ms,
                progress,
                reset,
            } => {
                let mut o = RequestOptions::default();
                if let Some(ms) = timeout_ms {
                    o = o.timeout(Duration::from_millis(*ms));
                }
                if *progress {
                    o = o.with_progress();
                }
                if *reset {
                    o = o.reset_on_progress().max_total(Duration::from_secs(20));
                }
                let params = Some(raw(json!({"name": "t"})));
                if let Ok(id) =
                    pair.client
                        .send_request_raw(pair.now, SEND_METHODS[*method], params, o)
                {
                    w.client_sent.push(id);
                }
            }
            Op::Respond(i) => {
                if let Some((r, _, _)) = pick(&mut w.server_held, *i) {
                    pair.server
                        .respond_raw(r, &raw(json!({"ok": true})))
                        .unwrap();
                }
            }
            Op::RespondError(i) => {
                if let Some((r, _, _)) = pick(&mut w.server_held, *i) {
                    pair.server
                        .respond_error(r, &ErrorObject::internal_error("no"));
                }
            }
            Op::ReportProgress(i) => {
                if !w.server_held.is_empty() {
                    let n = w.server_held.len();
                    let (r, last, wants) = &mut w.server_held[i % n];
                    let next = last.map_or(1.0, |l| l + 1.0);
                    let result = pair
                        .server
                        .inbound(r.id())
                        .report_progress(&Progress::new(next));
                    if *wants {
                        result.unwrap();
                        *last = Some(next);
                    }
                }
            }
            Op::Cancel(i) => {
                if !w.client_sent.is_empty() {
                    let id = w.client_sent[i % w.client_sent.len()];
                    let _ = pair.client.cancel(pair.now, id, None);
                }
            }
            Op::Advance(ms) => pair.advance(Duration::from_millis(*ms)),
            Op::Pause(b) => pair.pause(side(*b)),
            Op::Resume(b) => pair.resume(side(*b)),
            Op::ServerNotify => {
                let _ = pair
                    .server
                    .send_notification_raw("notifications/tools/list_changed", None);
            }
            Op::ServerRequest => {
                if let Ok(id) =
                    pair.server
                        .send_request_raw(pair.now, "ping", None, RequestOptions::default())
                {
                    w.server_sent.push(id);
                }
            }
            Op::ClientAnswer(i) => {
                if let Some(r) = pick(&mut w.client_held, *i) {
                    pair.client.respond_raw(r, &raw(json!({}))).unwrap();
                }
            }
            Op::Drive => {}
        }
        pair.drive();
        w.collect(&mut pair);
    }
    // Wind down.
    let now = pair.now;
    match end {
        End::CloseBoth => {
            pair.client.close(now);
            pair.server.close(now);
        }
        End::EofBoth => {
            pair.client.handle_eof(now);
            pair.server.handle_eof(now);
        }
        End::ClientCloseServerEof => {
            pair.client.close(now);
            pair.server.handle_eof(now);
        }
    }
    pair.drive();
    w.collect(&mut pair);
    // Unanswered inbound requests hold an EOF'd session open until answered.
    for r in std::mem::take(&mut w.client_held) {
        pair.client.respond_raw(r, &raw(json!({}))).unwrap();
    }
    for (r, _, _) in std::mem::take(&mut w.server_held) {
        pair.server.respond_raw(r, &raw(json!({}))).unwrap();
    }
    pair.drive();
    w.collect(&mut pair);
    assert!(pair.client.is_closed(), "client open after {end:?}");
    assert!(pair.server.is_closed(), "server open after {end:?}");
    assert!(matches!(
        w.client_events.last(),
        Some(ClientEvent::Closed { .. })
    ));
    assert!(matches!(
        w.server_events.last(),
        Some(ServerEvent::Closed { .. })
    ));
    assert_eq!(pair.client.poll_timeout(), None);
    check_outcomes(&w.client_events, &w.client_sent, "client");
    check_outcomes(&w.server_events, &w.server_sent, "server");
    check_single_answers(pair.transcript(), Side::Server);
    check_single_answers(pair.transcript(), Side::Client);
}

proptest! {
    #![proptest_config(common::beside_source(ProptestConfig { cases: 512, ..ProptestConfig::default() }))]

    #[test]
    fn random_operations_keep_exactly_once(
        era in era_strategy(),
        seed in prop::option::of(any::<u64>()),
        ops in prop::collection::vec(op_strategy(), 0..48),
        end in prop_oneof![Just(End::CloseBoth), Just(End::EofBoth), Just(End::ClientCloseServerEof)],
    ) {
        let chunking = seed.map_or(Chunking::Whole, Chunking::Random);
        run(era, chunking, &ops, end);
    }
}
