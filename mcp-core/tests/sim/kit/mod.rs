//! The deterministic simulation: seeded random schedules of a client and a server session
//! (and of several HTTP clients against one [`HttpServer`], in [`http`]), with the invariants
//! checked after every step
//!
//! Every choice comes from a [`Source`]: [`Rng`] (a seeded PRNG, for the simulation test) or
//! the fuzzer's bytes (the `operations` fuzz target includes this module). Nothing reads the
//! real clock after the origin instant, so a seed replays exactly.
//!
//! Invariants (the oracles), checked after every step:
//! - nothing panics;
//! - every frame a session writes is one line of valid JSON-RPC, within the peer's message
//!   size limit;
//! - every outbound request ends in exactly one `Response` event: never twice, never for an
//!   id that was not sent, no progress, task status or input request after it; and, once the
//!   pipes flow again and the clock moved past every timeout, every request has ended;
//! - `Closed` comes at most once and is the last event; a closed session arms no timer;
//! - the queues stay within their limits: queued events and bytes, requests in flight both
//!   ways, tasks, subscriptions (bounds derived from `Limits`).

#![allow(dead_code, unreachable_pub, clippy::too_many_lines)]

pub mod http;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use mcp_sansio::jsonrpc::{self, Decoded};
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse, InputResponses};
use mcp_sansio::session::{
    InputId, ListKind, Role, TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate,
};
use mcp_sansio::testing::{Chunking, Pair, Side};
use mcp_sansio::{
    CallError, ClientEvent, EraMode, ErrorObject, Limits, OutboundId, Progress, ProtocolVersion,
    RequestOptions, Responder, ServerEvent, ServerSession, Session,
};
use serde_json::json;
use serde_json::value::RawValue;

// --- choices --------------------------------------------------------------------------------

/// Where the simulation's choices come from
pub trait Source {
    /// The next 64 random bits
    fn word(&mut self) -> u64;

    /// Whether the source ran dry (a fuzzer's input is finite; a PRNG never is)
    fn exhausted(&self) -> bool {
        false
    }

    /// A number in `0..n` (`n > 0`)
    fn below(&mut self, n: u64) -> u64 {
        self.word() % n.max(1)
    }

    /// True with probability `num / den`
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// An index into a weight table
    fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut r = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

/// SplitMix64: small, seedable, and the same on every machine
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Source for Rng {
    fn word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Fuzzer bytes as a source: eight bytes a word, zeros once they run out
#[derive(Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Choices from `data`
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }
}

impl Source for Bytes<'_> {
    fn word(&mut self) -> u64 {
        let n = self.data.len().min(8);
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        u64::from_le_bytes(b)
    }

    fn exhausted(&self) -> bool {
        self.data.is_empty()
    }
}

/// The fake clock's origin; nothing reads the real clock after this
#[allow(clippy::disallowed_methods)]
pub fn origin() -> Instant {
    Instant::now()
}

pub use mcp_sansio::testing::raw;

// --- checks shared by both simulations ----------------------------------------------------------

/// Every frame is one line of valid JSON-RPC within `max` bytes
pub fn check_frame(who: &str, frame: &str, max: usize) {
    assert!(
        frame.len() <= max,
        "{who} wrote {} bytes (limit {max})",
        frame.len()
    );
    assert!(!frame.contains('\n'), "{who}: a frame spans lines: {frame}");
    match jsonrpc::decode(frame) {
        Decoded::Single(m) => assert!(m.is_ok(), "{who} wrote invalid JSON-RPC: {frame}"),
        Decoded::Batch(items) => assert!(
            items.iter().all(Result::is_ok),
            "{who} wrote an invalid batch: {frame}"
        ),
        other => panic!("{who} wrote something that is not JSON-RPC ({other:?}): {frame}"),
    }
}

/// The bookkeeping of one side's outbound requests and event stream
#[derive(Debug, Default)]
pub struct Ledger {
    /// Requests sent and not yet ended
    pub live: HashSet<OutboundId>,
    /// Requests that ended, with how
    pub ended: HashMap<OutboundId, String>,
    /// `Closed` was seen
    pub closed: bool,
    /// Events seen in total
    pub events: u64,
}

impl Ledger {
    /// A request was sent
    pub fn sent(&mut self, id: OutboundId) {
        assert!(
            !self.live.contains(&id) && !self.ended.contains_key(&id),
            "id {id} reused"
        );
        self.live.insert(id);
    }

    /// Checks one event against the ledger; returns it for the caller to act on
    pub fn observe(&mut self, who: &str, event: &impl Observed) {
        assert!(!self.closed, "{who}: an event after Closed: {event:?}");
        self.events += 1;
        let live = |l: &Self, id: &OutboundId, what: &str| {
            assert!(
                l.live.contains(id),
                "{who}: {what} for {id}, which is {}",
                l.ended
                    .get(id)
                    .map_or("unknown".to_owned(), |how| format!("ended ({how})"))
            );
        };
        match event.seen() {
            Seen::Response(id, outcome) => {
                live(self, id, "a response");
                self.live.remove(id);
                let how = match outcome {
                    Ok(_) => "ok".to_owned(),
                    Err(e) => format!("{e:?}"),
                };
                self.ended.insert(*id, how);
            }
            Seen::Live(id, what) => live(self, id, what),
            Seen::Closed => self.closed = true,
            Seen::Other => {}
        }
    }
}

/// What the [`Ledger`] reads of one event, from either end
pub enum Seen<'a> {
    /// A request we sent ended
    Response(&'a OutboundId, &'a Result<Box<RawValue>, CallError>),
    /// Something about a request we sent that must still be live (progress, task status, an
    /// input request for a retry), and what it is
    Live(&'a OutboundId, &'static str),
    /// The session ended
    Closed,
    /// Nothing the ledger tracks
    Other,
}

/// An event the [`Ledger`] can check: a [`ClientEvent`] or a [`ServerEvent`]
pub trait Observed: std::fmt::Debug {
    /// What the ledger reads of it
    fn seen(&self) -> Seen<'_>;
}

impl Observed for ClientEvent {
    fn seen(&self) -> Seen<'_> {
        match self {
            Self::Response { id, outcome } => Seen::Response(id, outcome),
            Self::Progress { id, .. } => Seen::Live(id, "progress"),
            Self::TaskStatus { id, .. } => Seen::Live(id, "task status"),
            Self::InputRequired {
                id: InputId::Retry(id),
                ..
            } => Seen::Live(id, "an input request"),
            Self::Closed { .. } => Seen::Closed,
            _ => Seen::Other,
        }
    }
}

impl Observed for ServerEvent {
    fn seen(&self) -> Seen<'_> {
        match self {
            Self::Response { id, outcome } => Seen::Response(id, outcome),
            Self::Progress { id, .. } => Seen::Live(id, "progress"),
            Self::Closed { .. } => Seen::Closed,
            _ => Seen::Other,
        }
    }
}

// --- the pair simulation --------------------------------------------------------------------------

const CLIENT_METHODS: &[&str] = &[
    "tools/call",
    "tools/call",
    "tools/call",
    "prompts/get",
    "resources/read",
    "tools/list",
    "ping",
    "completion/complete",
    "subscriptions/listen",
    "x/unknown",
];

/// The simulated configuration of one run
#[derive(Debug, Clone)]
pub struct Setup {
    era: EraMode,
    tasks: bool,
    state_key: bool,
    small: bool,
    chunking: Chunking,
}

impl Setup {
    fn choose(src: &mut impl Source) -> Self {
        let era = match src.below(6) {
            0 | 1 => EraMode::Modern,
            2 => EraMode::Auto,
            3 => EraMode::Legacy(ProtocolVersion::V2025_11_25),
            4 => EraMode::Legacy(ProtocolVersion::V2025_03_26),
            _ => EraMode::Legacy(ProtocolVersion::V2024_11_05),
        };
        let chunking = match src.below(8) {
            0..=3 => Chunking::Whole,
            4 => Chunking::ByteByByte,
            _ => Chunking::Random(src.word()),
        };
        Self {
            era,
            tasks: src.chance(3, 4),
            state_key: src.chance(7, 8),
            small: src.chance(1, 4),
            chunking,
        }
    }

    fn limits(&self) -> Limits {
        let mut l = Limits::default();
        if self.small {
            l.max_message_size = 4096;
            l.max_queued_events = 8;
            l.max_queued_bytes = 8192;
            l.max_in_flight_outbound = 6;
            l.max_in_flight_inbound = 4;
            l.max_batch_len = 3;
            l.max_tasks = 3;
            l.max_subscriptions = 2;
        } else {
            l.max_queued_events = 128;
            l.max_queued_bytes = 256 * 1024;
            l.max_in_flight_outbound = 64;
            l.max_in_flight_inbound = 64;
            l.max_tasks = 32;
        }
        l
    }

    fn pair(&self, now: Instant) -> Pair {
        let mut c = Pair::client_config(self.era);
        let mut s = Pair::server_config();
        if self.tasks {
            c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
            c.capabilities["tasks"] = json!({"list": {}, "cancel": {}, "requests": {
                "sampling": {"createMessage": {}}, "elicitation": {"create": {}}}});
            s.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
            s.capabilities["tasks"] =
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        }
        if self.state_key {
            s.state_key = Some([5; 32]);
        }
        s.state_ttl = Duration::from_secs(30);
        c.timeouts.request = Some(Duration::from_secs(10));
        c.timeouts.max_total = Some(Duration::from_secs(60));
        s.timeouts.request = Some(Duration::from_secs(10));
        c.max_input_rounds = 3;
        c.limits = self.limits();
        s.limits = self.limits();
        c.task_id_seed = 0xc1;
        s.task_id_seed = 0x5e;
        let mut pair = Pair::new(now, c, s);
        pair.chunking = self.chunking;
        pair
    }
}

/// One inbound request the server application holds
#[derive(Debug)]
struct Held {
    responder: Responder,
    method: String,
    wants_progress: bool,
    task_offered: bool,
    progress: f64,
}

/// How a run ends
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Both sides alive
    Running,
    /// One side is gone (crashed, or closed and dropped); the survivor was told
    Gone(Side),
}

/// One operation of a schedule
#[derive(Debug, Clone)]
pub enum Op {
    ClientSend {
        method: usize,
        timeout_ms: Option<u64>,
        progress: bool,
        as_task: bool,
    },
    ClientCancel(u64),
    ClientAnswer(u64, u8),
    ProvideInput(u64, u8),
    RefuseInput(u64),
    ServerRespond(u64, u8),
    ServerProgress(u64),
    ServerAsk(u64, u8),
    ServerStartTask(u64, u8),
    ServerUpdateTask(u64, u8),
    ServerLog(u64),
    ServerRequest(u8),
    ServerCancel(u64),
    ServerNotify(u8),
    Advance(u64),
    Pause(Side),
    Resume(Side),
    Inject(Side, u8),
    Flood(Side, u8, u16),
    Crash(Side, u64),
    Eof(Side),
    Close(Side),
}

impl Op {
    /// One operation, drawn from `src`
    pub fn choose(src: &mut impl Source) -> Self {
        let side = |src: &mut dyn FnMut() -> u64| {
            if src().is_multiple_of(2) {
                Side::Client
            } else {
                Side::Server
            }
        };
        let weights = [
            14, 3, 3, 4, 1, 9, 3, 4, 3, 4, 1, 2, 1, 1, 7, 2, 3, 2, 1, 1, 1, 1,
        ];
        match src.weighted(&weights) {
            0 => Self::ClientSend {
                method: src.below(CLIENT_METHODS.len() as u64) as usize,
                timeout_ms: src.chance(1, 5).then(|| 100 + src.below(20_000)),
                progress: src.chance(1, 2),
                as_task: src.chance(1, 3),
            },
            1 => Self::ClientCancel(src.word()),
            2 => Self::ClientAnswer(src.word(), src.below(4) as u8),
            3 => Self::ProvideInput(src.word(), src.below(8) as u8),
            4 => Self::RefuseInput(src.word()),
            5 => Self::ServerRespond(src.word(), src.below(8) as u8),
            6 => Self::ServerProgress(src.word()),
            7 => Self::ServerAsk(src.word(), src.below(6) as u8),
            8 => Self::ServerStartTask(src.word(), src.below(4) as u8),
            9 => Self::ServerUpdateTask(src.word(), src.below(8) as u8),
            10 => Self::ServerLog(src.word()),
            11 => Self::ServerRequest(src.below(4) as u8),
            12 => Self::ServerCancel(src.word()),
            13 => Self::ServerNotify(src.below(3) as u8),
            14 => Self::Advance(match src.below(10) {
                0..=5 => src.below(800),
                6..=8 => 1_000 + src.below(15_000),
                _ => 60_000 + src.below(3_600_000),
            }),
            15 => Self::Pause(side(&mut || src.word())),
            16 => Self::Resume(side(&mut || src.word())),
            17 => Self::Inject(side(&mut || src.word()), src.below(HOSTILE_KINDS) as u8),
            18 => Self::Flood(
                side(&mut || src.word()),
                src.below(4) as u8,
                1 + src.below(400) as u16,
            ),
            19 => Self::Crash(side(&mut || src.word()), src.word()),
            20 => Self::Eof(side(&mut || src.word())),
            _ => Self::Close(side(&mut || src.word())),
        }
    }
}

/// The state of one simulated run
pub struct PairSim {
    setup: Setup,
    pair: Pair,
    client: Ledger,
    server: Ledger,
    held: Vec<Held>,
    client_held: Vec<Responder>,
    inputs: Vec<(InputId, InputRequests)>,
    tasks: Vec<TaskId>,
    fate: Fate,
    trace: Vec<String>,
    verbose: bool,
}

impl PairSim {
    /// A fresh pair from `src`'s choices
    pub fn new(src: &mut impl Source) -> Self {
        let setup = Setup::choose(src);
        let pair = setup.pair(origin());
        let mut sim = Self {
            trace: vec![format!("{setup:?}")],
            setup,
            pair,
            client: Ledger::default(),
            server: Ledger::default(),
            held: Vec::new(),
            client_held: Vec::new(),
            inputs: Vec::new(),
            tasks: Vec::new(),
            fate: Fate::Running,
            verbose: false,
        };
        sim.settle();
        sim
    }

    /// Prints every operation as it runs (to replay one seed)
    pub fn verbose(&mut self) {
        self.verbose = true;
        eprintln!("{}", self.trace[0]);
    }

    fn alive(&self, side: Side) -> bool {
        self.fate != Fate::Gone(side)
    }

    /// Runs `steps` operations from `src`, then winds down and checks the end state
    pub fn run(mut self, src: &mut impl Source, steps: usize) {
        for _ in 0..steps {
            if src.exhausted() {
                break;
            }
            let op = Op::choose(src);
            self.step(&op);
        }
        self.finish();
    }

    /// Applies one operation, moves the bytes, and checks every invariant
    pub fn step(&mut self, op: &Op) {
        if self.verbose {
            eprintln!("{:4}: {op:?}", self.trace.len());
        }
        self.trace.push(String::new());
        let now = self.pair.now;
        match *op {
            Op::ClientSend {
                method,
                timeout_ms,
                progress,
                as_task,
            } => {
                let method = CLIENT_METHODS[method];
                let mut o = RequestOptions::default();
                if let Some(ms) = timeout_ms {
                    o = o.timeout(Duration::from_millis(ms));
                }
                if progress {
                    o = o.reset_on_progress();
                }
                if as_task {
                    o = o.as_task(Some(Duration::from_secs(120)));
                }
                let params = match method {
                    "resources/read" => json!({"uri": "file:///a"}),
                    "prompts/get" => json!({"name": "p"}),
                    "completion/complete" => json!({"ref": {"type": "ref/prompt", "name": "p"},
                        "argument": {"name": "a", "value": "x"}}),
                    "subscriptions/listen" => json!({"notifications": {"toolsListChanged": true}}),
                    "tools/list" | "ping" => json!({}),
                    _ => json!({"name": "echo", "arguments": {"text": "hello world"}}),
                };
                if self.alive(Side::Client)
                    && let Ok(id) =
                        self.pair
                            .client
                            .send_request_raw(now, method, Some(raw(&params)), o)
                {
                    self.client.sent(id);
                }
            }
            Op::ClientCancel(k) => {
                let mut live: Vec<_> = self.client.live.iter().copied().collect();
                live.sort();
                if let Some(id) = pick(&live, k)
                    && self.alive(Side::Client)
                {
                    let _ = self.pair.client.cancel(now, id, Some("changed my mind"));
                }
            }
            Op::ClientAnswer(k, how) => {
                if !self.client_held.is_empty() && self.alive(Side::Client) {
                    let r = self
                        .client_held
                        .remove((k % self.client_held.len() as u64) as usize);
                    if how == 0 {
                        self.pair
                            .client
                            .respond_error(r, &ErrorObject::internal_error("no"));
                    } else {
                        let _ = self.pair.client.respond_raw(r, &raw(json!({})));
                    }
                }
            }
            Op::ProvideInput(k, how) => {
                if !self.inputs.is_empty() && self.alive(Side::Client) {
                    let (id, requests) =
                        self.inputs.remove((k % self.inputs.len() as u64) as usize);
                    let mut answers = answers(&requests);
                    if how == 0 {
                        answers.pop_first();
                    }
                    let r = self.pair.client.provide_input(now, id, answers);
                    if r.is_err() && how != 0 && self.pair.client.is_closed() {
                        // a closed session waits for nothing
                    }
                }
            }
            Op::RefuseInput(k) => {
                if !self.inputs.is_empty() && self.alive(Side::Client) {
                    let (id, _) = self.inputs.remove((k % self.inputs.len() as u64) as usize);
                    let _ = self.pair.client.refuse_input(
                        now,
                        id,
                        &ErrorObject::internal_error("refused"),
                    );
                }
            }
            Op::ServerRespond(k, how) => {
                if !self.held.is_empty() && self.alive(Side::Server) {
                    let h = self.held.remove((k % self.held.len() as u64) as usize);
                    self.answer(h, how);
                }
            }
            Op::ServerProgress(k) => {
                if !self.held.is_empty() && self.alive(Side::Server) {
                    let i = (k % self.held.len() as u64) as usize;
                    let h = &mut self.held[i];
                    let next = h.progress + 1.0;
                    let r = self
                        .pair
                        .server
                        .inbound(h.responder.id())
                        .report_progress(&Progress::new(next).total(10.0));
                    if h.wants_progress {
                        // A request that ended (cancelled, closed) makes this a no-op.
                        assert!(r.is_ok(), "progress on a request that asked for it: {r:?}");
                        h.progress = next;
                    }
                }
            }
            Op::ServerAsk(k, which) => {
                if !self.held.is_empty() && self.alive(Side::Server) {
                    let i = (k % self.held.len() as u64) as usize;
                    let requests = input_requests(which);
                    let r = self
                        .pair
                        .server
                        .inbound(self.held[i].responder.id())
                        .ask_input(now, requests);
                    if let Ok(mcp_sansio::Asked::Suspended) = r {
                        // The request was answered with input_required.
                        self.held.remove(i);
                    }
                }
            }
            Op::ServerStartTask(k, ttl) => {
                if !self.held.is_empty() && self.alive(Side::Server) {
                    let i = (k % self.held.len() as u64) as usize;
                    let mut o = TaskOptions::default().poll_interval(Duration::from_millis(500));
                    if ttl > 0 {
                        o = o.ttl(Duration::from_secs(u64::from(ttl) * 20));
                    }
                    if let Ok(task) = self
                        .pair
                        .server
                        .inbound(self.held[i].responder.id())
                        .start_task(now, o)
                    {
                        self.held.remove(i);
                        self.tasks.push(task);
                    }
                }
            }
            Op::ServerUpdateTask(k, how) => {
                if !self.tasks.is_empty() && self.alive(Side::Server) {
                    let i = (k % self.tasks.len() as u64) as usize;
                    let task = self.tasks[i];
                    let update = match how {
                        0 | 1 => TaskUpdate::Working(Some("step".into())),
                        2 => TaskUpdate::InputRequired(input_requests(how)),
                        3 | 4 => TaskUpdate::Completed(raw(json!({"content": [
                            {"type": "text", "text": "done"}]}))),
                        5 => TaskUpdate::Failed(ErrorObject::internal_error("failed")),
                        _ => TaskUpdate::Completed(raw(json!([1]))),
                    };
                    if self.pair.server.update_task(now, task, update).is_err()
                        || self
                            .pair
                            .server
                            .task_status(task)
                            .is_none_or(|s| s.is_terminal())
                    {
                        self.tasks.remove(i);
                    }
                }
            }
            Op::ServerLog(k) => {
                if !self.held.is_empty() && self.alive(Side::Server) {
                    let i = (k % self.held.len() as u64) as usize;
                    let id = self.held[i].responder.id();
                    let params = raw(json!({"level": "info", "data": "working"}));
                    let _ = self
                        .pair
                        .server
                        .inbound(id)
                        .send_notification_raw("notifications/message", Some(&params));
                }
            }
            Op::ServerRequest(which) => {
                if self.alive(Side::Server) {
                    let (method, params) = match which {
                        0 => ("ping", None),
                        1 => ("roots/list", None),
                        _ => ("x/unknown", Some(raw(json!({})))),
                    };
                    if let Ok(id) = self.pair.server.send_request_raw(
                        now,
                        method,
                        params,
                        RequestOptions::default(),
                    ) {
                        self.server.sent(id);
                    }
                }
            }
            Op::ServerCancel(k) => {
                let mut live: Vec<_> = self.server.live.iter().copied().collect();
                live.sort();
                if let Some(id) = pick(&live, k)
                    && self.alive(Side::Server)
                {
                    let _ = self.pair.server.cancel(now, id, None);
                }
            }
            Op::ServerNotify(which) => {
                if self.alive(Side::Server) {
                    let _ = match which {
                        0 => self.pair.server.notify_list_changed(ListKind::Tools),
                        1 => self
                            .pair
                            .server
                            .notify_resource_updated("file:///a")
                            .map(drop),
                        _ => self
                            .pair
                            .server
                            .send_notification_raw("notifications/tools/list_changed", None),
                    };
                }
            }
            Op::Advance(ms) => {
                self.pair.advance(Duration::from_millis(ms));
            }
            Op::Pause(side) => self.pair.pause(side),
            Op::Resume(side) => self.pair.resume(side),
            Op::Inject(to, kind) => {
                if self.alive(to) && self.alive(other(to)) {
                    let line = hostile(kind, to);
                    self.pair.inject(to, &line);
                }
            }
            Op::Flood(to, kind, n) => {
                if self.alive(to) {
                    self.flood(to, kind, n);
                }
            }
            Op::Crash(side, cut) => self.crash(side, cut),
            Op::Eof(side) => {
                // `side` shuts its sending half: the other reads EOF (after what is in flight)
                if self.alive(side) && self.alive(other(side)) {
                    self.pair.resume(other(side));
                    self.pair.drive();
                    self.collect();
                    match other(side) {
                        Side::Client => self.pair.client.handle_eof(now),
                        _ => self.pair.server.handle_eof(now),
                    }
                    self.pair.discard_held(other(side));
                    self.pair.pause(other(side));
                }
            }
            Op::Close(side) => {
                if self.alive(side) {
                    match side {
                        Side::Client => self.pair.client.close(now),
                        _ => self.pair.server.close(now),
                    }
                }
            }
        }
        self.settle();
    }

    fn answer(&mut self, h: Held, how: u8) {
        let server = &mut self.pair.server;
        match how {
            0 => server.respond_error(h.responder, &ErrorObject::internal_error("boom")),
            1 => {
                // Refused, or a no-op if it already ended; the core hands a refused
                // responder back, and the peer gets an internal error instead
                if let Err(e) = server.respond_raw(h.responder, &raw(json!([1, 2]))) {
                    server.respond_error(
                        e.into_responder(),
                        &ErrorObject::internal_error("the server produced an invalid result"),
                    );
                }
            }
            _ => {
                let result = match h.method.as_str() {
                    "tools/call" => json!({"content": [{"type": "text", "text": "hello world"}]}),
                    "tools/list" => json!({"tools": []}),
                    "prompts/get" => json!({"messages": []}),
                    "resources/read" => json!({"contents": []}),
                    "completion/complete" => json!({"completion": {"values": []}}),
                    _ => json!({}),
                };
                server
                    .respond_raw(h.responder, &raw(&result))
                    .expect("an object result");
            }
        }
    }

    /// Feeds many messages straight into one session without draining in between (a peer
    /// that floods, a binding slow to write), checking the queue bounds after each
    fn flood(&mut self, to: Side, kind: u8, n: u16) {
        let now = self.pair.now;
        let limits = self.setup.limits();
        for i in 0..n {
            let id = 1_000_000 + u64::from(i);
            let line = match (to, kind) {
                (Side::Server, 0) => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
                ),
                (Side::Server, 1) => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                (_, 2) => format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
                    i % 7
                ),
                (Side::Client, 0 | 1) => {
                    format!(r#"{{"jsonrpc":"2.0","id":"s{id}","method":"ping"}}"#)
                }
                _ => format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":{i}}}}}"#,
                    i % 5
                ),
            };
            let who = format!("{to:?} under a flood");
            match to {
                Side::Client => flood_one(&mut self.pair.client, now, &line, &limits, &who),
                _ => {
                    flood_one(&mut self.pair.server, now, &line, &limits, &who);
                    check_subscriptions(&self.pair.server, &limits, &who);
                }
            }
        }
    }

    /// `side` dies: the other reads what was in the pipe and a random prefix of the last
    /// write, then EOF
    fn crash(&mut self, side: Side, cut: u64) {
        if !self.alive(side) || !self.alive(other(side)) {
            return;
        }
        let now = self.pair.now;
        // The dying side's last output lands in the pipe, cut anywhere.
        self.pair.pause(other(side));
        self.pair.pause(side);
        self.fate = Fate::Gone(side);
        self.pair.drive();
        let held = self.pair.held_len(other(side));
        self.pair
            .truncate_held(other(side), (cut % (held as u64 + 1)) as usize);
        self.pair.discard_held(side);
        match side {
            Side::Client => die(&mut self.pair.client, now),
            _ => die(&mut self.pair.server, now),
        }
        self.pair.resume(other(side));
        self.pair.drive();
        self.collect();
        match other(side) {
            Side::Client => self.pair.client.handle_eof(now),
            _ => self.pair.server.handle_eof(now),
        }
        match side {
            Side::Client => {
                self.client.live.clear();
                self.client_held.clear();
                self.inputs.clear();
            }
            _ => {
                self.server.live.clear();
                self.held.clear();
                self.tasks.clear();
            }
        }
    }

    /// Drives until quiet, then checks everything
    fn settle(&mut self) {
        self.pair.drive();
        self.collect();
        self.check();
    }

    fn collect(&mut self) {
        for (side, frame) in self.pair.take_transcript() {
            let limit = self.setup.limits().max_message_size;
            check_frame(&format!("{side:?}"), &frame, limit);
        }
        for e in self.pair.client_events() {
            if self.fate == Fate::Gone(Side::Client) {
                continue;
            }
            self.client.observe("client", &e);
            match e {
                ClientEvent::Request(r) => self.client_held.push(r.responder),
                ClientEvent::InputRequired { id, requests } => self.inputs.push((id, requests)),
                _ => {}
            }
        }
        for e in self.pair.server_events() {
            if self.fate == Fate::Gone(Side::Server) {
                continue;
            }
            self.server.observe("server", &e);
            match e {
                ServerEvent::Request(r) => self.held.push(Held {
                    wants_progress: r.wants_progress,
                    task_offered: r.task_offered,
                    method: r.method,
                    responder: r.responder,
                    progress: 0.0,
                }),
                // The responder is inert now; keep some to check a late answer is a no-op.
                ServerEvent::Cancelled { id, .. } if self.server.events.is_multiple_of(2) => {
                    self.held.retain(|h| h.responder.id() != id);
                }
                _ => {}
            }
        }
    }

    fn check(&self) {
        let limits = self.setup.limits();
        if self.alive(Side::Client) {
            check_side(Side::Client, &self.pair.client, &self.client, &limits);
        }
        if self.alive(Side::Server) {
            check_side(Side::Server, &self.pair.server, &self.server, &limits);
            check_subscriptions(&self.pair.server, &limits, &format!("{:?}", Side::Server));
        }
    }

    /// Lets every timer run out with the pipes flowing, checks that every request ended,
    /// then closes both sides and checks the end state
    pub fn finish(mut self) {
        self.trace.push("finish".into());
        self.pair.resume(Side::Client);
        self.pair.resume(Side::Server);
        // Every request carries a timeout (10 s, capped at 60 s in total) and every task a
        // lifetime bound by the cap, so two simulated hours end everything.
        // The client application answers what waits for it (input and live requests).
        for _ in 0..8 {
            for _ in 0..self.inputs.len() {
                self.step(&Op::ProvideInput(0, 1));
            }
            for _ in 0..self.client_held.len() {
                self.step(&Op::ClientAnswer(0, 1));
            }
            self.step(&Op::Advance(15 * 60 * 1000));
        }
        assert!(
            self.client.live.is_empty(),
            "client requests never ended: {:?}",
            self.client.live
        );
        assert!(
            self.server.live.is_empty(),
            "server requests never ended: {:?}",
            self.server.live
        );
        let now = self.pair.now;
        if self.alive(Side::Client) {
            self.pair.client.close(now);
        }
        if self.alive(Side::Server) {
            // EOF processes what was still buffered: answer until nothing is held.
            self.pair.server.handle_eof(now);
            self.settle();
            while !self.held.is_empty() {
                for h in std::mem::take(&mut self.held) {
                    let _ = self.pair.server.respond_raw(h.responder, &raw(json!({})));
                }
                self.settle();
            }
        }
        self.settle();
        let held = self.held.len();
        if self.alive(Side::Client) {
            check_end(Side::Client, &self.pair.client, &self.client, held);
        }
        if self.alive(Side::Server) {
            check_end(Side::Server, &self.pair.server, &self.server, held);
        }
    }
}

/// One message fed straight into `session` without draining, then the queue bounds
fn flood_one<R: Role>(
    session: &mut Session<R>,
    now: Instant,
    line: &str,
    limits: &Limits,
    who: &str,
) {
    session.handle_bytes(now, line.as_bytes());
    session.handle_bytes(now, b"\n");
    check_bounds(session, limits, who);
}

/// A dying session: closed, its output and events thrown away
fn die<R: Role>(dying: &mut Session<R>, now: Instant) {
    dying.close(now);
    let mut buf = Vec::new();
    while dying.poll_transmit(&mut buf).is_some() {}
    while dying.poll_event().is_some() {}
}

/// The invariants of one live side after a step
fn check_side<R: Role>(side: Side, s: &Session<R>, ledger: &Ledger, limits: &Limits) {
    check_bounds(s, limits, &format!("{side:?}"));
    if s.is_closed() {
        assert!(ledger.closed, "{side:?} closed without a Closed event");
        assert!(ledger.live.is_empty(), "{side:?} closed with requests live");
        assert_eq!(s.poll_timeout(), None, "{side:?}: a timer after close");
    }
}

/// The end state of one side that is still alive
fn check_end<R: Role>(side: Side, s: &Session<R>, ledger: &Ledger, held: usize) {
    assert!(
        s.is_closed(),
        "{side:?} still open at the end: {} inbound, {held} held",
        s.inbound_in_flight(),
    );
    assert!(ledger.closed, "{side:?}: no Closed event");
    assert_eq!(s.outbound_in_flight(), 0);
    assert_eq!(s.inbound_in_flight(), 0);
}

fn other(side: Side) -> Side {
    match side {
        Side::Client => Side::Server,
        _ => Side::Client,
    }
}

fn pick<T: Copy>(v: &[T], k: u64) -> Option<T> {
    (!v.is_empty()).then(|| v[(k % v.len() as u64) as usize])
}

/// The queue bounds a session keeps whatever the peer and the caller do (a server's
/// subscriptions: [`check_subscriptions`])
pub fn check_bounds<R: Role>(s: &Session<R>, limits: &Limits, who: &str) {
    assert!(
        s.outbound_in_flight() <= limits.max_in_flight_outbound,
        "{who}: {} outbound in flight",
        s.outbound_in_flight()
    );
    assert!(
        s.inbound_in_flight() <= limits.max_in_flight_inbound + limits.max_batch_len,
        "{who}: {} inbound in flight",
        s.inbound_in_flight()
    );
    let events = s.queued_events();
    assert!(
        events <= 2 * limits.max_queued_events + limits.max_in_flight_outbound + 2,
        "{who}: {events} events queued (limit {})",
        limits.max_queued_events
    );
    let bytes = s.queued_bytes();
    assert!(
        bytes <= limits.max_queued_bytes + 2 * limits.max_message_size,
        "{who}: {bytes} bytes queued (limit {})",
        limits.max_queued_bytes
    );
}

/// The subscription bound a server session keeps (only a server has subscriptions)
pub fn check_subscriptions(s: &ServerSession, limits: &Limits, who: &str) {
    assert!(
        s.subscription_count() <= limits.max_subscriptions,
        "{who}: {} subscriptions",
        s.subscription_count()
    );
}

// --- input requests and hostile lines -------------------------------------------------------------

fn elicit(field: &str) -> InputRequest {
    serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": format!("Your {field}?"),
        "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
    }}))
    .expect("an elicitation")
}

/// A set of input requests chosen by `k`
pub fn input_requests(k: u8) -> InputRequests {
    let mut m = BTreeMap::new();
    match k % 3 {
        0 => {
            m.insert("name".to_owned(), elicit("name"));
        }
        1 => {
            m.insert("name".to_owned(), elicit("name"));
            m.insert("color".to_owned(), elicit("color"));
        }
        _ => {
            m.insert(
                "roots".to_owned(),
                serde_json::from_value(json!({"method": "roots/list"})).expect("roots"),
            );
        }
    }
    m
}

fn answers(requests: &InputRequests) -> InputResponses {
    requests
        .iter()
        .map(|(key, r)| {
            let v = match r {
                InputRequest::Elicit(_) => json!({"action": "accept", "content": {"name": "Ada"}}),
                _ => json!({"roots": []}),
            };
            let answer: InputResponse = serde_json::from_value(v).expect("an input response");
            (key.clone(), answer)
        })
        .collect()
}

const HOSTILE_KINDS: u64 = 14;

/// A hostile or unexpected line for `to`
fn hostile(kind: u8, to: Side) -> Vec<u8> {
    let line = match kind {
        0 => "{not json".to_owned(),
        1 => r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_owned(),
        2 => r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
        3 => r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
        4 => r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#.to_owned(),
        5 => r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#
            .to_owned(),
        6 => r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":5}}"#
            .to_owned(),
        7 => format!("{}1{}", "[".repeat(200), "]".repeat(200)),
        8 => r#"{"jsonrpc":"2.0","id":7,"method":"x/unknown"}"#.to_owned(),
        9 => "[]".to_owned(),
        10 => r#"[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]"#
            .to_owned(),
        11 => match to {
            Side::Server => r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}"#.to_owned(),
            _ => r#"{"jsonrpc":"2.0","id":"s9","method":"elicitation/create","params":{"message":"hi","requestedSchema":{"type":"object","properties":{}}}}"#.to_owned(),
        },
        12 => r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#
            .to_owned(),
        _ => return b"\xff\xfe{\"a\":1}\n".to_vec(),
    };
    (line + "\n").into_bytes()
}
