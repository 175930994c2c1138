//! Property tests of the newest parts of the session engine: input during requests (MRTR and
//! live input), tasks (server table and client following), subscriptions, under random
//! operation sequences on a client/server pair in both eras, with a lossy pipe, clock jumps
//! and injected hostile or mutated messages
//!
//! Invariants checked after every step and at the end:
//! - nothing panics;
//! - every frame either session writes is valid JSON-RPC (`jsonrpc::decode`);
//! - every `OutboundId` from `send_request` gets exactly one `Response` event by the time
//!   the session closed, none before it was sent, no progress after it;
//! - nothing follows the `Closed` event, which comes once;
//! - each side answers each request id at most as often as requests with that id reached it
//!   (every inbound request answered at most once);
//! - the transmit and event queues stay within a bound derived from `Limits`.
//!
//! `PROPTEST_CASES` raises the number of cases (the default keeps the run short).

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use common::{origin, raw};
use mcp_sansio::jsonrpc::{self, Decoded, Message};
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse, InputResponses};
use mcp_sansio::session::{InputId, ListKind, TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::testing::{Pair, Side};
use mcp_sansio::{
    ClientConfig, ClientEvent, ClientSession, EraMode, ErrorObject, Limits, OutboundId, Progress,
    ProtocolVersion, RequestOptions, Responder, ServerConfig, ServerEvent, ServerSession, Transmit,
};

const SEED: u64 = 0xabc;

fn task_wire(n: u64) -> String {
    mcp_sansio::session::task_wire_id(&[0; 32], SEED, None, n)
}

// --- configurations ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Era {
    Modern,
    Auto,
    V2025_11_25,
    V2025_03_26,
}

#[derive(Debug, Clone)]
struct Setup {
    era: Era,
    state_key: bool,
    tasks: bool,
    small: bool,
    chunk_seed: Option<u64>,
    max_rounds: u8,
}

fn setup_strategy() -> impl Strategy<Value = Setup> {
    (
        prop_oneof![
            3 => Just(Era::Modern),
            1 => Just(Era::Auto),
            3 => Just(Era::V2025_11_25),
            1 => Just(Era::V2025_03_26),
        ],
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.3),
        prop::option::of(any::<u64>()),
        1u8..4,
    )
        .prop_map(
            |(era, state_key, tasks, small, chunk_seed, max_rounds)| Setup {
                era,
                state_key,
                tasks,
                small,
                chunk_seed,
                max_rounds,
            },
        )
}

fn limits(small: bool) -> Limits {
    let mut l = Limits::default();
    l.max_tasks = 4;
    l.max_subscriptions = 2;
    if small {
        l.max_message_size = 4096;
        l.max_queued_events = 4;
        l.max_queued_bytes = 2048;
        l.max_in_flight_outbound = 4;
        l.max_in_flight_inbound = 3;
        l.max_batch_len = 3;
        l.max_tasks = 2;
        l.max_subscriptions = 1;
    } else {
        l.max_queued_events = 64;
        l.max_queued_bytes = 64 * 1024;
        l.max_in_flight_outbound = 16;
        l.max_in_flight_inbound = 16;
    }
    l
}

fn client_config(setup: &Setup) -> ClientConfig {
    let era = match setup.era {
        Era::Modern => EraMode::Modern,
        Era::Auto => EraMode::Auto,
        Era::V2025_11_25 => EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Era::V2025_03_26 => EraMode::Legacy(ProtocolVersion::V2025_03_26),
    };
    let mut c = Pair::client_config(era);
    if setup.tasks {
        c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        c.capabilities["tasks"] = json!({"list": {}, "cancel": {}, "requests": {
            "sampling": {"createMessage": {}}, "elicitation": {"create": {}}}});
    }
    c.timeouts.request = Some(Duration::from_secs(10));
    c.limits = limits(setup.small);
    c.max_input_rounds = setup.max_rounds;
    c.task_id_seed = SEED + 1;
    c
}

fn server_config(setup: &Setup) -> ServerConfig {
    let mut s = Pair::server_config();
    s.capabilities["prompts"] = json!({"listChanged": true});
    if setup.tasks {
        s.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        s.capabilities["tasks"] =
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    if setup.state_key {
        s.state_key = Some([7; 32]);
    }
    s.state_ttl = Duration::from_secs(5);
    s.task_id_seed = SEED;
    s.timeouts.request = Some(Duration::from_secs(10));
    s.limits = limits(setup.small);
    s
}

// --- operations ---------------------------------------------------------------------------------

const CLIENT_METHODS: &[&str] = &[
    "tools/call",
    "tools/call",
    "prompts/get",
    "resources/read",
    "tools/list",
    "subscriptions/listen",
    "resources/subscribe",
    "ping",
];

#[derive(Debug, Clone)]
enum Op {
    ClientSend {
        method: usize,
        as_task: bool,
        progress: bool,
        timeout_ms: Option<u64>,
        filter: u8,
    },
    Respond(usize),
    RespondError(usize),
    RespondBad(usize),
    Ask(usize, u8),
    StartTask(usize, Option<u64>, Option<u64>),
    UpdateTask(usize, u8),
    ReportProgress(usize, u8),
    ServerRequest(u8),
    ProvideInput(usize, u8),
    RefuseInput(usize),
    ClientCancel(usize),
    ClientAnswer(usize),
    ClientStartInputTask(usize),
    ClientUpdateTask(usize, u8),
    NotifyList(u8),
    NotifyResource(u8),
    EndSubscriptions,
    Advance(u64),
    Pause(bool),
    Resume(bool),
    Discard(bool),
    Inject(bool, u8, u64),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        9 => (0..CLIENT_METHODS.len(), any::<bool>(), any::<bool>(),
              prop::option::weighted(0.15, 100u64..20_000), any::<u8>())
            .prop_map(|(method, as_task, progress, timeout_ms, filter)|
                Op::ClientSend { method, as_task, progress, timeout_ms, filter }),
        3 => any::<usize>().prop_map(Op::Respond),
        1 => any::<usize>().prop_map(Op::RespondError),
        1 => any::<usize>().prop_map(Op::RespondBad),
        4 => (any::<usize>(), any::<u8>()).prop_map(|(i, k)| Op::Ask(i, k)),
        4 => (any::<usize>(), prop::option::of(0u64..30_000), prop::option::of(0u64..3_000))
            .prop_map(|(i, t, p)| Op::StartTask(i, t, p)),
        5 => (any::<usize>(), any::<u8>()).prop_map(|(i, k)| Op::UpdateTask(i, k)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, k)| Op::ReportProgress(i, k)),
        1 => any::<u8>().prop_map(Op::ServerRequest),
        4 => (any::<usize>(), any::<u8>()).prop_map(|(i, k)| Op::ProvideInput(i, k)),
        1 => any::<usize>().prop_map(Op::RefuseInput),
        1 => any::<usize>().prop_map(Op::ClientCancel),
        1 => any::<usize>().prop_map(Op::ClientAnswer),
        1 => any::<usize>().prop_map(Op::ClientStartInputTask),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, k)| Op::ClientUpdateTask(i, k)),
        1 => any::<u8>().prop_map(Op::NotifyList),
        1 => any::<u8>().prop_map(Op::NotifyResource),
        1 => Just(Op::EndSubscriptions),
        4 => prop_oneof![6 => 0u64..1_500, 2 => 0u64..12_000, 1 => Just(60_000)].prop_map(Op::Advance),
        1 => any::<bool>().prop_map(Op::Pause),
        2 => any::<bool>().prop_map(Op::Resume),
        1 => any::<bool>().prop_map(Op::Discard),
        5 => (any::<bool>(), any::<u8>(), any::<u64>()).prop_map(|(s, k, r)| Op::Inject(s, k, r)),
    ]
}

#[derive(Debug, Clone, Copy)]
enum End {
    CloseBoth,
    EofBoth,
    ClientCloseServerEof,
    ServerCloseClientEof,
}

// --- the harness ------------------------------------------------------------------------------

/// An event of either end
enum AnyEvent {
    Client(ClientEvent),
    Server(ServerEvent),
}

impl std::fmt::Debug for AnyEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Client(e) => e.fmt(f),
            Self::Server(e) => e.fmt(f),
        }
    }
}

impl AnyEvent {
    fn is_closed(&self) -> bool {
        matches!(
            self,
            Self::Client(ClientEvent::Closed { .. }) | Self::Server(ServerEvent::Closed { .. })
        )
    }

    /// The request a `Response` event ends
    fn response(&self) -> Option<&OutboundId> {
        match self {
            Self::Client(ClientEvent::Response { id, .. })
            | Self::Server(ServerEvent::Response { id, .. }) => Some(id),
            _ => None,
        }
    }

    /// The request a `Progress` event reports on
    fn progress(&self) -> Option<&OutboundId> {
        match self {
            Self::Client(ClientEvent::Progress { id, .. })
            | Self::Server(ServerEvent::Progress { id, .. }) => Some(id),
            _ => None,
        }
    }
}

/// One end of the pair, borrowed: the session a `Side` names
enum SessionMut<'a> {
    Client(&'a mut ClientSession),
    Server(&'a mut ServerSession),
}

impl SessionMut<'_> {
    fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        match self {
            Self::Client(s) => s.poll_transmit(buf),
            Self::Server(s) => s.poll_transmit(buf),
        }
    }

    fn poll_event(&mut self) -> Option<AnyEvent> {
        match self {
            Self::Client(s) => s.poll_event().map(AnyEvent::Client),
            Self::Server(s) => s.poll_event().map(AnyEvent::Server),
        }
    }

    fn handle_bytes(&mut self, now: Instant, data: &[u8]) {
        match self {
            Self::Client(s) => s.handle_bytes(now, data),
            Self::Server(s) => s.handle_bytes(now, data),
        }
    }
}

/// One end of the pair and what the test knows about it
#[derive(Default)]
struct Book {
    events: Vec<AnyEvent>,
    sent: Vec<OutboundId>,
    /// Frames this side wrote
    written: Vec<String>,
    /// Request ids that reached (or may have reached) this side, with how many times
    requests_in: HashMap<String, usize>,
    /// Response ids this side wrote, with how many times
    answers_out: HashMap<String, usize>,
    closed: bool,
}

struct Held {
    responder: Responder,
    wants_progress: bool,
    last_progress: f64,
}

struct Duo {
    client: ClientSession,
    server: ServerSession,
    now: Instant,
    to_client: Vec<u8>,
    to_server: Vec<u8>,
    paused: [bool; 2],
    rng: u64,
    chunked: bool,
    cb: Book,
    sb: Book,
    limits: Limits,
    /// Server: requests the application holds
    held: Vec<Held>,
    tasks: Vec<TaskId>,
    /// Client: requests from the server (not input) and input waiting for an answer
    client_held: Vec<Responder>,
    inputs: Vec<(InputId, InputRequests)>,
    client_tasks: Vec<TaskId>,
}

fn other(side: Side) -> Side {
    match side {
        Side::Client => Side::Server,
        _ => Side::Client,
    }
}

/// The ids of a frame's requests and of its responses
fn ids_of(frame: &str) -> (Vec<String>, Vec<String>) {
    let Ok(v) = serde_json::from_str::<Value>(frame) else {
        return (vec![], vec![]);
    };
    let items = match v {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut requests = vec![];
    let mut responses = vec![];
    for m in items {
        let Some(id) = m.get("id").filter(|id| !id.is_null()) else {
            continue;
        };
        if m.get("method").is_some() {
            requests.push(id.to_string());
        } else if m.get("result").is_some() || m.get("error").is_some() {
            responses.push(id.to_string());
        }
    }
    (requests, responses)
}

impl Duo {
    fn new(setup: &Setup) -> Self {
        let now = origin();
        let client = client_config(setup);
        let server = server_config(setup);
        let limits = client.limits.clone();
        let mut server = ServerSession::new(Arc::new(server), now);
        server.anchor_wall_clock(now, 1_700_000_000_000);
        Self {
            client: ClientSession::new(Arc::new(client), now),
            server,
            now,
            to_client: vec![],
            to_server: vec![],
            paused: [false; 2],
            rng: setup.chunk_seed.unwrap_or(0) | 1,
            chunked: setup.chunk_seed.is_some(),
            cb: Book::default(),
            sb: Book::default(),
            limits,
            held: vec![],
            tasks: vec![],
            client_held: vec![],
            inputs: vec![],
            client_tasks: vec![],
        }
    }

    fn session(&mut self, side: Side) -> SessionMut<'_> {
        match side {
            Side::Client => SessionMut::Client(&mut self.client),
            _ => SessionMut::Server(&mut self.server),
        }
    }

    fn book(&mut self, side: Side) -> &mut Book {
        match side {
            Side::Client => &mut self.cb,
            _ => &mut self.sb,
        }
    }

    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Bound on the bytes a session may have queued after one step
    fn byte_bound(&self, delivered: usize) -> usize {
        self.limits.max_queued_bytes + 8 * delivered + 64 * 1024
    }

    /// Bound on the events a session may have queued after one step
    fn event_bound(&self, frames: usize) -> usize {
        2 * self.limits.max_queued_events
            + 2 * self.limits.max_in_flight_outbound
            + 2 * self.limits.max_tasks
            + frames
            + 8
    }

    /// Takes a session's output: checks every frame, records ids, queues the bytes
    fn drain_side(&mut self, side: Side, delivered: usize) -> bool {
        let mut buf = Vec::new();
        let mut bytes = 0;
        let mut moved = false;
        let closed_before = self.book(side).closed;
        while let Some(t) = self.session(side).poll_transmit(&mut buf) {
            assert!(
                !closed_before,
                "{side:?} wrote after Closed: {}",
                String::from_utf8_lossy(&buf)
            );
            assert_eq!(t.len, buf.len());
            assert_eq!(
                buf.last(),
                Some(&b'\n'),
                "{side:?}: a frame ends in a newline"
            );
            let text = std::str::from_utf8(&buf[..buf.len() - 1])
                .unwrap_or_else(|e| panic!("{side:?} wrote non-UTF-8: {e}"))
                .to_owned();
            assert!(!text.contains('\n'), "{side:?}: one frame per line: {text}");
            check_valid(side, &text);
            bytes += buf.len();
            let (requests, responses) = ids_of(&text);
            // The peer may receive these requests.
            let peer = self.book(other(side));
            for r in requests {
                *peer.requests_in.entry(r).or_default() += 1;
            }
            let book = self.book(side);
            for r in responses {
                *book.answers_out.entry(r).or_default() += 1;
            }
            book.written.push(text);
            match side {
                Side::Client => self.to_server.extend_from_slice(&buf),
                _ => self.to_client.extend_from_slice(&buf),
            }
            buf.clear();
            moved = true;
        }
        let bound = self.byte_bound(delivered);
        assert!(
            bytes <= bound,
            "{side:?}: {bytes} bytes queued at once (bound {bound})"
        );
        let mut events = vec![];
        while let Some(e) = self.session(side).poll_event() {
            events.push(e);
        }
        let frames = delivered / 16 + 1;
        let bound = self.event_bound(frames);
        assert!(
            events.len() <= bound,
            "{side:?}: {} events queued at once (bound {bound})",
            events.len()
        );
        moved |= !events.is_empty();
        for e in events {
            self.take_event(side, e);
        }
        moved
    }

    fn take_event(&mut self, side: Side, e: AnyEvent) {
        let book = self.book(side);
        assert!(!book.closed, "{side:?}: an event after Closed: {e:?}");
        if e.is_closed() {
            book.closed = true;
        } else if let Some(id) = e.response() {
            assert!(
                book.sent.contains(id),
                "{side:?}: a response to {id} never sent"
            );
            assert!(
                !book.events.iter().any(|p| p.response() == Some(id)),
                "{side:?}: a second response to {id}: {e:?}"
            );
        } else if let Some(id) = e.progress() {
            assert!(
                !book.events.iter().any(|p| p.response() == Some(id)),
                "{side:?}: progress for {id} after its response"
            );
        }
        match e {
            AnyEvent::Client(ClientEvent::Request(r)) => self.client_held.push(r.responder),
            AnyEvent::Server(ServerEvent::Request(r)) => self.held.push(Held {
                responder: r.responder,
                wants_progress: r.wants_progress,
                last_progress: 0.0,
            }),
            AnyEvent::Client(ClientEvent::InputRequired { id, requests }) => {
                if std::env::var("FEATURES_DEBUG").is_ok() {
                    eprintln!("INPUT {id:?} {}", requests.len());
                }
                self.inputs.push((id, requests));
            }
            other => self.book(side).events.push(other),
        }
    }

    fn deliver(&mut self, to: Side) -> usize {
        let bytes = match to {
            Side::Client => std::mem::take(&mut self.to_client),
            _ => std::mem::take(&mut self.to_server),
        };
        let now = self.now;
        if self.chunked {
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let n = 1 + (self.next_random() as usize % rest.len().min(97));
                let (head, tail) = rest.split_at(n);
                self.session(to).handle_bytes(now, head);
                rest = tail;
            }
        } else {
            self.session(to).handle_bytes(now, &bytes);
        }
        bytes.len()
    }

    /// Moves bytes both ways until both sessions are quiet
    fn drive(&mut self) {
        let mut delivered = [0usize; 2];
        for _ in 0..10_000 {
            let mut moved = self.drain_side(Side::Client, delivered[0]);
            moved |= self.drain_side(Side::Server, delivered[1]);
            delivered = [0, 0];
            if !self.paused[1] && !self.to_server.is_empty() {
                delivered[1] = self.deliver(Side::Server);
                moved = true;
            }
            if !self.paused[0] && !self.to_client.is_empty() {
                delivered[0] = self.deliver(Side::Client);
                moved = true;
            }
            if !moved {
                return;
            }
        }
        panic!("the pair never went quiet");
    }

    fn advance(&mut self, by: Duration) {
        let target = self.now + by;
        // Timers may fire many times on the way to `target` (a task polled every 10 ms over
        // a minute); what must not happen is a timer that fires again and again without the
        // clock moving.
        let mut same_instant = 0;
        while same_instant < 10_000 {
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= target => {
                    same_instant = if t > self.now { 0 } else { same_instant + 1 };
                    self.now = self.now.max(t);
                    let now = self.now;
                    self.client.handle_timeout(now);
                    self.server.handle_timeout(now);
                    self.drive();
                }
                _ => {
                    self.now = target;
                    self.client.handle_timeout(target);
                    self.server.handle_timeout(target);
                    self.drive();
                    return;
                }
            }
        }
        panic!("timers keep firing at the same instant");
    }

    /// Feeds a line to a session as if its peer had sent it
    fn inject(&mut self, to: Side, line: &str) {
        let (requests, _) = ids_of(line);
        for r in requests {
            *self.book(to).requests_in.entry(r).or_default() += 1;
        }
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let now = self.now;
        self.session(to).handle_bytes(now, &bytes);
        self.drain_side(to, bytes.len());
        self.drive();
    }
}

fn check_valid(side: Side, text: &str) {
    let ok = |m: &Result<Message, jsonrpc::Invalid>| m.is_ok();
    match jsonrpc::decode(text) {
        Decoded::Single(m) => assert!(ok(&m), "{side:?} wrote invalid JSON-RPC: {text}"),
        Decoded::Batch(items) => assert!(
            items.iter().all(ok),
            "{side:?} wrote an invalid batch: {text}"
        ),
        _ => unreachable!(),
    }
}

// --- input requests and answers -------------------------------------------------------------------

fn elicit(field: &str) -> InputRequest {
    serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": format!("Your {field}?"),
        "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
    }}))
    .unwrap()
}

fn sample() -> InputRequest {
    serde_json::from_value(json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10
    }}))
    .unwrap()
}

fn roots() -> InputRequest {
    serde_json::from_value(json!({"method": "roots/list"})).unwrap()
}

fn input_requests(k: u8) -> InputRequests {
    let mut m = BTreeMap::new();
    match k % 6 {
        0 => {
            m.insert("name".to_owned(), elicit("name"));
        }
        1 => {
            m.insert("name".to_owned(), elicit("name"));
            m.insert("color".to_owned(), elicit("color"));
        }
        2 => {
            m.insert("summary".to_owned(), sample());
        }
        3 => {
            m.insert("roots".to_owned(), roots());
        }
        4 => {
            m.insert("color".to_owned(), elicit("color"));
            m.insert("summary".to_owned(), sample());
        }
        _ => {}
    }
    m
}

fn response_for(request: &InputRequest) -> InputResponse {
    let v = match request {
        InputRequest::Elicit(_) => json!({"action": "accept", "content": {"name": "Ada"}}),
        InputRequest::CreateMessage(_) => json!({
            "role": "assistant", "content": {"type": "text", "text": "a summary"},
            "model": "test-model"
        }),
        _ => json!({"roots": []}),
    };
    serde_json::from_value(v).unwrap()
}

fn answers(requests: &InputRequests, k: u8) -> InputResponses {
    let mut out: InputResponses = requests
        .iter()
        .map(|(key, r)| (key.clone(), response_for(r)))
        .collect();
    match k % 5 {
        // drop one answer
        0 => {
            if let Some(key) = out.keys().next().cloned() {
                out.remove(&key);
            }
        }
        // an extra, unasked key
        1 => {
            out.insert("extra".into(), response_for(&elicit("x")));
        }
        // the wrong kind of answer
        2 => {
            for v in out.values_mut() {
                *v = response_for(&roots());
            }
        }
        _ => {}
    }
    out
}

fn task_update(k: u8) -> TaskUpdate {
    match k % 7 {
        0 | 1 => TaskUpdate::Working(Some(format!("step {k}"))),
        2 | 3 => TaskUpdate::InputRequired(input_requests(k / 7)),
        4 => TaskUpdate::Completed(raw(
            json!({"content": [{"type": "text", "text": "done"}], "isError": k.is_multiple_of(2)}),
        )),
        5 => TaskUpdate::Failed(ErrorObject::internal_error("failed")),
        _ => TaskUpdate::Completed(RawValue::from_string("[1]".into()).unwrap()),
    }
}

// --- hostile messages ---------------------------------------------------------------------------

const STATUSES: &[&str] = &[
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
    "bogus",
];

fn random_id(r: u64) -> Value {
    match r % 5 {
        0 => json!(r % 8),
        1 => json!((r >> 8) % 40),
        2 => json!(format!("s{}", r % 3)),
        3 => json!(-1),
        _ => json!(u64::MAX),
    }
}

fn random_task_id(r: u64) -> Value {
    match r % 4 {
        0 => json!(task_wire(r % 5)),
        1 => json!(mcp_sansio::session::task_wire_id(
            &[0; 32],
            SEED + 1,
            None,
            r % 3
        )),
        2 => json!("nope"),
        _ => json!(r % 3),
    }
}

fn meta(tasks: bool) -> Value {
    let mut caps = json!({"elicitation": {}, "sampling": {}});
    if tasks {
        caps["extensions"] = json!({ TASKS_EXTENSION: {} });
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// Rewrites every member named `key`, anywhere in `v`
fn rewrite(v: &mut Value, key: &str, f: &mut dyn FnMut(&mut Value)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == key {
                    f(x);
                } else {
                    rewrite(x, key, f);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| rewrite(x, key, f)),
        _ => {}
    }
}

/// A hostile line for `to`: a real message its peer sent, mutated, or a made-up one
fn hostile(duo: &Duo, to: Side, kind: u8, r: u64) -> String {
    let from = match to {
        Side::Client => &duo.sb.written,
        _ => &duo.cb.written,
    };
    let r2 = r.rotate_left(17);
    if kind % 3 != 2 && !from.is_empty() {
        let line = &from[(r as usize) % from.len()];
        let mut v: Value = serde_json::from_str(line).unwrap();
        match (kind / 3) % 9 {
            0 => return line.clone(), // a replay
            1 => rewrite(&mut v, "id", &mut |x| *x = random_id(r2)),
            2 => rewrite(&mut v, "taskId", &mut |x| *x = random_task_id(r2)),
            3 => rewrite(&mut v, "requestState", &mut |x| {
                *x = match r2 % 4 {
                    0 => json!("garbage"),
                    1 => json!(""),
                    2 => {
                        let s = x.as_str().unwrap_or("").to_owned();
                        let cut = s.len() / 2;
                        json!(format!("{}A{}", &s[..cut], &s[(cut + 1).min(s.len())..]))
                    }
                    _ => json!(42),
                }
            }),
            4 => rewrite(&mut v, "status", &mut |x| {
                *x = json!(STATUSES[(r2 as usize) % STATUSES.len()]);
            }),
            5 => rewrite(&mut v, "resultType", &mut |x| {
                *x = json!(["task", "input_required", "complete", "x"][(r2 % 4) as usize]);
            }),
            6 => {
                if let Some(m) = v.as_object_mut() {
                    m.remove("params");
                    m.remove("result");
                    if m.contains_key("id") && !m.contains_key("method") {
                        m.insert("result".into(), json!({}));
                    }
                }
            }
            7 => rewrite(&mut v, "inputResponses", &mut |x| {
                *x = json!({"name": {"action": 5}, "color": "x"});
            }),
            _ => rewrite(&mut v, "inputRequests", &mut |x| {
                *x = json!({"k": {"method": "x"}})
            }),
        }
        return v.to_string();
    }
    let id = random_id(r2);
    let task_id = random_task_id(r2 >> 3);
    let status = STATUSES[(r2 as usize >> 5) % STATUSES.len()];
    let tasks = r2 & 1 == 1;
    let task_method = [
        "tasks/get",
        "tasks/cancel",
        "tasks/update",
        "tasks/result",
        "tasks/list",
    ][(r2 % 5) as usize];
    let live_method = [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
        "tasks/get",
    ][(r2 % 4) as usize];
    let v = match (to, r % 12) {
        (_, 0) => json!({"jsonrpc": "2.0", "method": "notifications/tasks",
            "params": {"taskId": task_id, "status": status, "ttlMs": null,
                       "createdAt": "x", "lastUpdatedAt": "x",
                       "result": {"content": []}, "inputRequests": {"name": elicit("name")}}}),
        (_, 1) => json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": {"taskId": task_id, "status": status, "ttl": null,
                       "createdAt": "x", "lastUpdatedAt": "x"}}),
        (_, 2) => json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "task",
            "taskId": task_id, "status": status, "pollIntervalMs": 0}}),
        (_, 3) => json!({"jsonrpc": "2.0", "id": id, "result": {"task": {
            "taskId": task_id, "status": status}}}),
        (_, 4) => json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "input_required",
            "inputRequests": {"name": elicit("name")}, "requestState": "abc"}}),
        (_, 5) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "x"}}),
        (_, 6) => json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}}),
        (Side::Server, 7) => json!({"jsonrpc": "2.0", "id": id,
            "method": task_method,
            "params": {"taskId": task_id, "_meta": meta(tasks), "cursor": "1",
                       "inputResponses": {"name": {"action": "accept", "content": {}}}}}),
        (Side::Server, 8) => json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": meta(tasks), "notifications": {"toolsListChanged": true,
                "resourceSubscriptions": ["file:///a"], "taskIds": [task_id]}}}),
        (Side::Server, 9) => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "t", "_meta": meta(tasks), "requestState": "abc.def",
                       "inputResponses": {"name": {"action": "accept"}}}}),
        (Side::Server, 10) => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "t", "task": {"ttl": r2 % 3000}}}),
        (Side::Client, 7..=10) => json!({"jsonrpc": "2.0", "id": id,
            "method": live_method,
            "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}},
                       "taskId": task_id, "task": {"ttl": 1000},
                       "messages": [], "maxTokens": 1}}),
        _ => {
            return String::from_utf8_lossy(&r.to_le_bytes()).into_owned();
        }
    };
    v.to_string()
}

// --- the run --------------------------------------------------------------------------------------

fn pick<T>(v: &[T], i: usize) -> Option<usize> {
    if v.is_empty() {
        None
    } else {
        Some(i % v.len())
    }
}

fn listen_params(filter: u8) -> Value {
    let mut tasks = vec![];
    for n in 0..3u64 {
        if filter & (1 << n) != 0 {
            tasks.push(task_wire(n));
        }
    }
    json!({"notifications": {
        "toolsListChanged": filter & 8 != 0,
        "promptsListChanged": filter & 16 != 0,
        "resourcesListChanged": filter & 32 != 0,
        "resourceSubscriptions": if filter & 64 != 0 { vec!["file:///a/"] } else { vec![] },
        "taskIds": tasks,
    }})
}

fn apply(duo: &mut Duo, op: &Op) {
    let now = duo.now;
    match op {
        Op::ClientSend {
            method,
            as_task,
            progress,
            timeout_ms,
            filter,
        } => {
            let method = CLIENT_METHODS[*method];
            let params = match method {
                "subscriptions/listen" => listen_params(*filter),
                "resources/subscribe" | "resources/read" => json!({"uri": "file:///a/b"}),
                "prompts/get" => json!({"name": "p"}),
                _ => json!({"name": "t", "arguments": {}}),
            };
            let mut o = RequestOptions::default();
            if *as_task {
                o = o.as_task(Some(Duration::from_millis(u64::from(*filter) * 100)));
            }
            if *progress {
                o = o.with_progress();
            }
            if let Some(ms) = timeout_ms {
                o = o.timeout(Duration::from_millis(*ms));
            }
            if let Ok(id) = duo
                .client
                .send_request_raw(now, method, Some(raw(params)), o)
            {
                duo.cb.sent.push(id);
            }
        }
        Op::Respond(i) => {
            if let Some(i) = pick(&duo.held, *i) {
                let h = duo.held.remove(i);
                let result = raw(json!({"content": [{"type": "text", "text": "ok"}]}));
                duo.server.respond_raw(h.responder, &result).unwrap();
            }
        }
        Op::RespondError(i) => {
            if let Some(i) = pick(&duo.held, *i) {
                let h = duo.held.remove(i);
                duo.server
                    .respond_error(h.responder, &ErrorObject::internal_error("no"));
            }
        }
        Op::RespondBad(i) => {
            if let Some(i) = pick(&duo.held, *i) {
                let h = duo.held.remove(i);
                // Refused: the core hands the responder back, and the peer gets an internal
                // error instead
                if let Err(e) = duo
                    .server
                    .respond_raw(h.responder, &RawValue::from_string("7".into()).unwrap())
                {
                    duo.server.respond_error(
                        e.into_responder(),
                        &ErrorObject::internal_error("the server produced an invalid result"),
                    );
                }
            }
        }
        Op::Ask(i, k) => {
            if let Some(i) = pick(&duo.held, *i) {
                let requests = input_requests(*k);
                let _ = duo
                    .server
                    .inbound(duo.held[i].responder.id())
                    .ask_input(now, requests);
            }
        }
        Op::StartTask(i, ttl, poll) => {
            if let Some(i) = pick(&duo.held, *i) {
                let mut o = TaskOptions::default();
                if let Some(t) = ttl {
                    o = o.ttl(Duration::from_millis(*t));
                }
                if let Some(p) = poll {
                    o = o.poll_interval(Duration::from_millis(*p));
                }
                if let Ok(task) = duo
                    .server
                    .inbound(duo.held[i].responder.id())
                    .start_task(now, o)
                {
                    duo.tasks.push(task);
                }
            }
        }
        Op::UpdateTask(i, k) => {
            if let Some(i) = pick(&duo.tasks, *i) {
                let r = duo.server.update_task(now, duo.tasks[i], task_update(*k));
                if std::env::var("FEATURES_DEBUG").is_ok() {
                    eprintln!("UPDATE {:?} {r:?}", task_update(*k));
                }
            }
        }
        Op::ReportProgress(i, k) => {
            if let Some(i) = pick(&duo.held, *i) {
                let h = &mut duo.held[i];
                let next = if k % 4 == 0 {
                    h.last_progress
                } else {
                    h.last_progress + 1.0
                };
                let p = if k % 9 == 0 {
                    Progress::new(f64::NAN)
                } else {
                    Progress::new(next).total(10.0)
                };
                let result = duo.server.inbound(h.responder.id()).report_progress(&p);
                if result.is_ok() && h.wants_progress && p.progress.is_finite() {
                    h.last_progress = next;
                }
            }
        }
        Op::ServerRequest(k) => {
            let (method, params) = match k % 4 {
                0 => ("ping", None),
                1 => ("roots/list", None),
                _ => (
                    "elicitation/create",
                    Some(raw(json!({"message": "m",
                        "requestedSchema": {"type": "object", "properties": {}}}))),
                ),
            };
            let mut o = RequestOptions::default();
            if k % 4 == 3 {
                o = o.as_task(Some(Duration::from_secs(5)));
            }
            if let Ok(id) = duo.server.send_request_raw(now, method, params, o) {
                duo.sb.sent.push(id);
            }
        }
        Op::ProvideInput(i, k) => {
            if let Some(i) = pick(&duo.inputs, *i) {
                let (id, requests) = &duo.inputs[i];
                let id = *id;
                let a = answers(requests, *k);
                let r = duo.client.provide_input(now, id, a);
                if std::env::var("FEATURES_DEBUG").is_ok() {
                    eprintln!("PROVIDE {id:?} {r:?}");
                }
                if r.is_ok() && k % 3 != 0 {
                    duo.inputs.remove(i);
                }
            }
        }
        Op::RefuseInput(i) => {
            if let Some(i) = pick(&duo.inputs, *i) {
                let (id, _) = duo.inputs.remove(i);
                let _ = duo
                    .client
                    .refuse_input(now, id, &ErrorObject::internal_error("no"));
            }
        }
        Op::ClientCancel(i) => {
            if let Some(i) = pick(&duo.cb.sent, *i) {
                let id = duo.cb.sent[i];
                let _ = duo.client.cancel(now, id, Some("bye"));
            }
        }
        Op::ClientAnswer(i) => {
            if let Some(i) = pick(&duo.client_held, *i) {
                let r = duo.client_held.remove(i);
                let _ = duo.client.respond_raw(r, &raw(json!({})));
            }
        }
        Op::ClientStartInputTask(i) => {
            if let Some(i) = pick(&duo.inputs, *i) {
                let id = duo.inputs[i].0;
                if let Ok(task) = duo.client.start_input_task(now, id, TaskOptions::default()) {
                    duo.client_tasks.push(task);
                    duo.inputs.remove(i);
                }
            }
        }
        Op::ClientUpdateTask(i, k) => {
            if let Some(i) = pick(&duo.client_tasks, *i) {
                let update = match k % 3 {
                    0 => TaskUpdate::Completed(raw(
                        json!({"action": "accept", "content": {"name": "Ada"}}),
                    )),
                    _ => task_update(*k),
                };
                let _ = duo.client.update_task(now, duo.client_tasks[i], update);
            }
        }
        Op::NotifyList(k) => {
            let kind = [ListKind::Tools, ListKind::Prompts, ListKind::Resources][*k as usize % 3];
            let _ = duo.server.notify_list_changed(kind);
        }
        Op::NotifyResource(k) => {
            let uri = ["file:///a/b", "file:///a", "file:///c", "file:///a/"][*k as usize % 4];
            let _ = duo.server.notify_resource_updated(uri);
        }
        Op::EndSubscriptions => duo.server.end_subscriptions(),
        Op::Advance(ms) => duo.advance(Duration::from_millis(*ms)),
        Op::Pause(b) => duo.paused[usize::from(*b)] = true,
        Op::Resume(b) => duo.paused[usize::from(*b)] = false,
        Op::Discard(b) => {
            if *b {
                duo.to_server.clear();
            } else {
                duo.to_client.clear();
            }
        }
        Op::Inject(s, kind, r) => {
            let to = if *s { Side::Server } else { Side::Client };
            let line = hostile(duo, to, *kind, *r);
            duo.inject(to, &line);
        }
    }
    duo.drive();
}

fn run(setup: &Setup, ops: &[Op], end: End, after: &[Op]) {
    let mut duo = Duo::new(setup);
    duo.drive();
    for op in ops {
        apply(&mut duo, op);
    }
    // Wind down.
    let now = duo.now;
    match end {
        End::CloseBoth => {
            duo.client.close(now);
            duo.server.close(now);
        }
        End::EofBoth => {
            duo.client.handle_eof(now);
            duo.server.handle_eof(now);
        }
        End::ClientCloseServerEof => {
            duo.client.close(now);
            duo.server.handle_eof(now);
        }
        End::ServerCloseClientEof => {
            duo.server.close(now);
            duo.client.handle_eof(now);
        }
    }
    duo.drive();
    // Commands after the end (and input after EOF) must stay harmless.
    for op in after {
        apply(&mut duo, op);
    }
    // Unanswered inbound requests hold an EOF'd session open until answered.
    for _ in 0..4 {
        for h in std::mem::take(&mut duo.held) {
            duo.server
                .respond_raw(h.responder, &raw(json!({})))
                .unwrap();
        }
        for r in std::mem::take(&mut duo.client_held) {
            duo.client.respond_raw(r, &raw(json!({}))).unwrap();
        }
        for (id, _) in std::mem::take(&mut duo.inputs) {
            let _ = duo
                .client
                .refuse_input(duo.now, id, &ErrorObject::internal_error("end"));
        }
        duo.drive();
    }
    if std::env::var("FEATURES_DEBUG").is_ok() {
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for (side, book) in [("c", &duo.cb), ("s", &duo.sb)] {
            for e in &book.events {
                let name = format!("{side}:{e:?}");
                let name = name.split([' ', '(', '{']).next().unwrap().to_owned();
                *kinds.entry(name).or_default() += 1;
            }
            for line in &book.written {
                let v: Value = serde_json::from_str(line).unwrap();
                if let Some(m) = v.get("method").and_then(Value::as_str) {
                    *kinds.entry(format!("{side}>{m}")).or_default() += 1;
                }
                if let Some(t) = v.pointer("/result/resultType").and_then(Value::as_str) {
                    *kinds.entry(format!("{side}>rt:{t}")).or_default() += 1;
                }
            }
        }
        eprintln!("{:?} {kinds:?}", setup.era);
    }
    assert!(duo.client.is_closed(), "client open after {end:?}");
    assert!(duo.server.is_closed(), "server open after {end:?}");
    assert_eq!(duo.client.poll_timeout(), None);
    assert_eq!(duo.server.poll_timeout(), None);
    for (side, book) in [(Side::Client, &duo.cb), (Side::Server, &duo.sb)] {
        assert!(
            book.events.last().is_some_and(AnyEvent::is_closed),
            "{side:?}: the last event is Closed"
        );
        for id in &book.sent {
            let n = book
                .events
                .iter()
                .filter(|e| e.response() == Some(id))
                .count();
            assert_eq!(n, 1, "{side:?}: {id} must end exactly once");
        }
        for (id, n) in &book.answers_out {
            let received = book.requests_in.get(id).copied().unwrap_or(0);
            assert!(
                *n <= received,
                "{side:?} answered id {id} {n} times; {received} requests carried it"
            );
        }
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(common::beside_source(ProptestConfig { cases: cases(1000), ..ProptestConfig::default() }))]

    #[test]
    fn feature_operations_keep_the_contract(
        setup in setup_strategy(),
        ops in prop::collection::vec(op_strategy(), 8..120),
        end in prop_oneof![
            Just(End::CloseBoth),
            Just(End::EofBoth),
            Just(End::ClientCloseServerEof),
            Just(End::ServerCloseClientEof),
        ],
        after in prop::collection::vec(op_strategy(), 0..12),
    ) {
        run(&setup, &ops, end, &after);
    }
}
