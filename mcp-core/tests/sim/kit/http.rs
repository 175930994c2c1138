//! The HTTP simulation: several client sessions (both wires) against one [`HttpServer`], with
//! POSTs that overtake each other, responses delivered in any order across streams (in order
//! within one), connections dropped by either side, clients that crash, hostile requests,
//! and a server application that answers, reports progress, asks for input and runs tasks
//!
//! Invariants, after every step: those of the pair simulation for each client session; every
//! exchange gets one head first, body only after it, and at most one end; nothing is output
//! for an exchange after its end; sessions stay within `HttpConfig::max_sessions`; every
//! server session stays within its limits.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::codec::sse::SseDecoder;
use mcp_sansio::http::{
    ExchangeId, HttpClient, HttpConfig, HttpServer, Output, Reply, ResponseKind, SessionKey,
};
use mcp_sansio::schema::InputRequests;
use mcp_sansio::session::{InputId, TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ClientEvent, ClientSession, EraMode, ErrorObject, Limits, Progress, ProtocolVersion,
    RequestOptions, Responder, ServerEvent,
};
use serde_json::json;

use super::{
    Ledger, Source, answers, check_bounds, check_frame, check_subscriptions, input_requests,
    origin, raw,
};

/// One simulated HTTP client
struct Client {
    session: ClientSession,
    http: HttpClient,
    ledger: Ledger,
    /// POSTs written but not yet arrived at the server
    outbox: VecDeque<Vec<u8>>,
    inputs: Vec<(InputId, InputRequests)>,
    held: Vec<Responder>,
    legacy: bool,
    /// Crashed: nothing is read or written for it any more
    gone: bool,
    get_open: bool,
}

/// One open exchange, as the client side of the connection sees it
struct Exchange {
    client: usize,
    decoder: SseDecoder,
    head: Option<ResponseKind>,
    json: Vec<u8>,
    /// Messages received but not yet handed to the client session
    inbox: VecDeque<Vec<u8>>,
    ended: bool,
    /// The client hung up; what still comes is dropped
    dropped: bool,
}

/// A request the server application holds
struct Held {
    key: SessionKey,
    responder: Responder,
    wants_progress: bool,
    progress: f64,
}

/// The state of one HTTP run
pub struct HttpSim {
    http: HttpServer,
    config: HttpConfig,
    limits: Limits,
    now: Instant,
    clients: Vec<Client>,
    exchanges: HashMap<ExchangeId, Exchange>,
    /// Exchanges that ended, so nothing more may come for them
    finished: Vec<ExchangeId>,
    held: Vec<Held>,
    tasks: Vec<(SessionKey, TaskId)>,
    ids: u128,
    trace: Vec<String>,
    verbose: bool,
}

impl HttpSim {
    /// Two to four clients, each of a random era, against one server
    pub fn new(src: &mut impl Source) -> Self {
        let now = origin();
        let mut config = HttpConfig::default();
        config.max_sessions = 1 + src.below(4) as usize;
        config.idle_timeout = Duration::from_secs(300);
        config.replay_events = 8;
        config.finished_streams = 2;
        let mut limits = Limits::default();
        limits.max_queued_events = 64;
        limits.max_in_flight_inbound = 16;
        limits.max_in_flight_outbound = 16;
        limits.max_tasks = 8;
        let mut server = Pair::server_config();
        server.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        server.capabilities["tasks"] =
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
        server.state_key = Some([9; 32]);
        server.limits = limits.clone();
        server.timeouts.request = Some(Duration::from_secs(10));
        server.task_id_seed = 0x77;
        let http = HttpServer::new(Arc::new(config.clone()), Arc::new(server), now);
        let n = 2 + src.below(3) as usize;
        let mut clients = Vec::new();
        let mut trace = vec![format!(
            "http: {n} clients, max_sessions {}",
            config.max_sessions
        )];
        for _ in 0..n {
            let era = match src.below(3) {
                0 => EraMode::Modern,
                1 => EraMode::Legacy(ProtocolVersion::V2025_11_25),
                _ => EraMode::Legacy(ProtocolVersion::V2025_06_18),
            };
            trace.push(format!("client {era:?}"));
            let mut c = Pair::client_config(era);
            if src.chance(1, 2) {
                c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
            }
            c.timeouts.request = Some(Duration::from_secs(10));
            c.timeouts.max_total = Some(Duration::from_secs(60));
            c.limits = limits.clone();
            clients.push(Client {
                session: ClientSession::new(Arc::new(c), now),
                http: HttpClient::new(),
                ledger: Ledger::default(),
                outbox: VecDeque::new(),
                inputs: Vec::new(),
                held: Vec::new(),
                legacy: !matches!(era, EraMode::Modern),
                gone: false,
                get_open: false,
            });
        }
        let mut sim = Self {
            http,
            config,
            limits,
            now,
            clients,
            exchanges: HashMap::new(),
            finished: Vec::new(),
            held: Vec::new(),
            tasks: Vec::new(),
            ids: 0,
            trace,
            verbose: false,
        };
        sim.settle();
        sim
    }

    /// Runs `steps` random operations, then lets every timer run out and checks the end
    pub fn run(mut self, src: &mut impl Source, steps: usize) {
        for _ in 0..steps {
            if src.exhausted() {
                break;
            }
            self.step(src);
        }
        self.finish();
    }

    /// Prints every operation as it runs (to replay one seed)
    pub fn verbose(&mut self) {
        self.verbose = true;
        for t in &self.trace {
            eprintln!("{t}");
        }
    }

    fn note(&mut self, what: String) {
        if self.verbose {
            eprintln!("{what}");
        }
    }

    fn client_index(&self, k: u64) -> usize {
        (k % self.clients.len() as u64) as usize
    }

    fn step(&mut self, src: &mut impl Source) {
        let weights = [12, 10, 16, 8, 3, 4, 3, 2, 6, 2, 1, 1, 2, 1, 2];
        let choice = src.weighted(&weights);
        let k = src.word();
        let arg = src.below(8) as u8;
        self.note(format!("op {choice} k={k} arg={arg}"));
        let now = self.now;
        match choice {
            // a client sends a request
            0 => {
                let i = self.client_index(k);
                let c = &mut self.clients[i];
                if !c.gone {
                    let (method, params) = match arg {
                        0..=3 => (
                            "tools/call",
                            json!({"name": "echo", "arguments": {"text": "hello world"}}),
                        ),
                        4 => ("tools/list", json!({})),
                        5 => ("resources/read", json!({"uri": "file:///a"})),
                        6 => ("ping", json!({})),
                        _ => ("subscriptions/listen", json!({"notifications": {}})),
                    };
                    let mut o = RequestOptions::default();
                    if arg.is_multiple_of(2) {
                        o = o.with_progress();
                    }
                    if arg == 3 {
                        o = o.as_task(None);
                    }
                    if let Ok(id) = c
                        .session
                        .send_request_raw(now, method, Some(raw(&params)), o)
                    {
                        c.ledger.sent(id);
                    }
                }
            }
            // POSTs arrive at the server, in any order across a client's connections
            1 => {
                let i = self.client_index(k);
                let n = self.clients[i].outbox.len();
                if n > 0 {
                    let at = if arg < 6 { 0 } else { (k >> 8) as usize % n };
                    let body = self.clients[i].outbox.remove(at).expect("in range");
                    self.post(i, &body);
                }
            }
            // a message arrives at a client from one of its open streams
            2 => {
                let mut ready: Vec<_> = self
                    .exchanges
                    .iter()
                    .filter(|(_, e)| !e.inbox.is_empty())
                    .map(|(id, _)| *id)
                    .collect();
                ready.sort();
                if !ready.is_empty() {
                    let ex = ready[(k % ready.len() as u64) as usize];
                    let n = 1 + arg as usize;
                    for _ in 0..n {
                        let e = self.exchanges.get_mut(&ex).expect("listed");
                        let Some(msg) = e.inbox.pop_front() else {
                            break;
                        };
                        let c = &mut self.clients[e.client];
                        if !c.gone {
                            if self.verbose {
                                eprintln!("  to {}: {}", e.client, String::from_utf8_lossy(&msg));
                            }
                            c.session.handle_message(now, &msg);
                        }
                    }
                }
            }
            // the server application answers a request
            3 => {
                if !self.held.is_empty() {
                    let h = self.held.remove((k % self.held.len() as u64) as usize);
                    if let Some(s) = self.http.session_mut(h.key) {
                        if arg == 0 {
                            s.respond_error(h.responder, &ErrorObject::internal_error("boom"));
                        } else {
                            let result =
                                json!({"content": [{"type": "text", "text": "hello world"}]});
                            let _ = s.respond_raw(h.responder, &raw(&result));
                        }
                    }
                }
            }
            // progress, or a log line for the request
            4 => {
                if !self.held.is_empty() {
                    let i = (k % self.held.len() as u64) as usize;
                    let h = &mut self.held[i];
                    if let Some(s) = self.http.session_mut(h.key) {
                        if arg.is_multiple_of(2) {
                            h.progress += 1.0;
                            let r = s
                                .inbound(h.responder.id())
                                .report_progress(&Progress::new(h.progress));
                            assert!(!h.wants_progress || r.is_ok(), "{r:?}");
                        } else {
                            let params = raw(json!({"level": "info", "data": "x"}));
                            let _ = s
                                .inbound(h.responder.id())
                                .send_notification_raw("notifications/message", Some(&params));
                        }
                    }
                }
            }
            // ask for input
            5 => {
                if !self.held.is_empty() {
                    let i = (k % self.held.len() as u64) as usize;
                    let key = self.held[i].key;
                    if let Some(s) = self.http.session_mut(key)
                        && let Ok(mcp_sansio::Asked::Suspended) = s
                            .inbound(self.held[i].responder.id())
                            .ask_input(now, input_requests(arg))
                    {
                        self.held.remove(i);
                    }
                }
            }
            // start a task, or move one on
            6 => {
                if arg < 4 && !self.held.is_empty() {
                    let i = (k % self.held.len() as u64) as usize;
                    let key = self.held[i].key;
                    if let Some(s) = self.http.session_mut(key)
                        && let Ok(task) = s
                            .inbound(self.held[i].responder.id())
                            .start_task(now, TaskOptions::default().ttl(Duration::from_secs(90)))
                    {
                        self.held.remove(i);
                        self.tasks.push((key, task));
                    }
                } else if !self.tasks.is_empty() {
                    let i = (k % self.tasks.len() as u64) as usize;
                    let (key, task) = self.tasks[i];
                    let update = match arg {
                        4 => TaskUpdate::Working(None),
                        5 => TaskUpdate::InputRequired(input_requests(0)),
                        6 => TaskUpdate::Failed(ErrorObject::internal_error("no")),
                        _ => TaskUpdate::Completed(raw(json!({"content": []}))),
                    };
                    let ok = self
                        .http
                        .session_mut(key)
                        .is_some_and(|s| s.update_task(now, task, update).is_ok());
                    if !ok {
                        self.tasks.remove(i);
                    }
                }
            }
            // a client answers input or a server request
            7 => {
                let i = self.client_index(k);
                let c = &mut self.clients[i];
                if !c.gone {
                    if let Some((id, requests)) = c.inputs.pop() {
                        if arg == 0 {
                            let _ =
                                c.session
                                    .refuse_input(now, id, &ErrorObject::internal_error("no"));
                        } else {
                            let _ = c.session.provide_input(now, id, answers(&requests));
                        }
                    } else if let Some(r) = c.held.pop() {
                        let _ = c.session.respond_raw(r, &raw(json!({})));
                    }
                }
            }
            // the clock moves
            8 => {
                let ms = match arg {
                    0..=4 => k % 500,
                    5 | 6 => 1_000 + k % 15_000,
                    _ => 60_000 + k % 600_000,
                };
                self.advance(Duration::from_millis(ms));
            }
            // a client hangs up one of its open responses
            9 => {
                let mut open: Vec<_> = self
                    .exchanges
                    .iter()
                    .filter(|(_, e)| !e.ended && !e.dropped)
                    .map(|(id, _)| *id)
                    .collect();
                open.sort();
                if !open.is_empty() {
                    let ex = open[(k % open.len() as u64) as usize];
                    let e = self.exchanges.get_mut(&ex).expect("listed");
                    e.dropped = true;
                    e.inbox.clear();
                    if let Some(c) = self.clients.get_mut(e.client)
                        && c.get_open
                        && e.head.is_some()
                    {
                        c.get_open = false;
                    }
                    self.http.handle_closed(now, ex);
                }
            }
            // the server ends a response early
            10 => {
                let mut open: Vec<_> = self
                    .exchanges
                    .iter()
                    .filter(|(_, e)| !e.ended && !e.dropped)
                    .map(|(id, _)| *id)
                    .collect();
                open.sort();
                if !open.is_empty() {
                    let ex = open[(k % open.len() as u64) as usize];
                    self.http.disconnect(now, ex);
                }
            }
            // a client crashes: its connections drop, nothing more from it
            11 => {
                let i = self.client_index(k);
                if !self.clients[i].gone {
                    self.clients[i].gone = true;
                    self.clients[i].ledger.live.clear();
                    let mut mine: Vec<_> = self
                        .exchanges
                        .iter()
                        .filter(|(_, e)| e.client == i && !e.ended && !e.dropped)
                        .map(|(id, _)| *id)
                        .collect();
                    mine.sort();
                    for ex in mine {
                        self.exchanges.get_mut(&ex).expect("listed").dropped = true;
                        self.http.handle_closed(now, ex);
                    }
                }
            }
            // a hostile request from a client's connection
            12 => {
                let i = self.client_index(k);
                self.hostile(i, arg, k);
            }
            // a legacy client opens its GET stream, or ends its session with DELETE
            13 => {
                let i = self.client_index(k);
                let c = &mut self.clients[i];
                if !c.gone && c.legacy && c.http.session_id().is_some() {
                    if arg < 6 && !c.get_open {
                        let headers = with_host(c.http.get_headers(None));
                        c.get_open = true;
                        self.request(i, "GET", &headers, b"");
                    } else if arg >= 6
                        && let Some(headers) = c.http.delete_headers()
                    {
                        self.request(i, "DELETE", &with_host(headers), b"");
                    }
                }
            }
            // the server notifies, or sends a legacy session a request
            _ => {
                let i = self.client_index(k);
                if let Some(key) = self.clients[i]
                    .http
                    .session_id()
                    .and_then(|sid| self.http.session_key(sid))
                    && let Some(s) = self.http.session_mut(key)
                {
                    if arg < 4 {
                        let _ = s.send_notification_raw("notifications/tools/list_changed", None);
                    } else {
                        let _ = s.send_request_raw(now, "ping", None, RequestOptions::default());
                    }
                }
            }
        }
        self.settle();
    }

    fn hostile(&mut self, i: usize, kind: u8, k: u64) {
        let c = &self.clients[i];
        let mut headers = with_host(c.http.post_headers(b"{}"));
        let body: Vec<u8> = match kind {
            0 => b"{not json".to_vec(),
            1 => br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#
                .to_vec(),
            2 => {
                headers.push(("MCP-Protocol-Version".into(), "2026-07-28".into()));
                headers.push(("Mcp-Method".into(), "tools/list".into()));
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.to_vec()
            }
            3 => {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Mcp-Session-Id"));
                headers.push(("Mcp-Session-Id".into(), format!("{k:032x}")));
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()
            }
            4 => b"\xff\xfe\xfd".to_vec(),
            5 => format!("{}1{}", "[".repeat(300), "]".repeat(300)).into_bytes(),
            6 => {
                headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Host"));
                headers.push(("Host".into(), "evil.example".into()));
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()
            }
            _ => br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
        };
        self.note(format!("hostile {kind} from client {i}"));
        self.request(usize::MAX, "POST", &headers, &body);
    }

    fn post(&mut self, i: usize, body: &[u8]) {
        if self.clients[i].gone {
            return;
        }
        let headers = with_host(self.clients[i].http.post_headers(body));
        self.note(format!(
            "  POST from {i}: {}",
            String::from_utf8_lossy(body)
        ));
        self.request(i, "POST", &headers, body);
    }

    /// Sends one HTTP request; `client` is `usize::MAX` for a connection whose answer nobody
    /// reads (hostile requests)
    fn request(&mut self, client: usize, method: &str, headers: &[(String, String)], body: &[u8]) {
        let counter = &mut self.ids;
        let mut ids = || {
            *counter += 1;
            (0x5151_0000_0000_0000_0000_0000_0000_0000u128 + *counter).to_be_bytes()
        };
        let reply = self.http.handle_request(
            self.now,
            &mcp_sansio::http::Source::unknown(),
            method,
            headers,
            body,
            &mut ids,
        );
        match reply {
            Reply::Complete(response) => {
                if let Some(c) = self.clients.get_mut(client) {
                    let kind = c.http.handle_response(response.status, &response.headers);
                    if kind == ResponseKind::Json {
                        let text = String::from_utf8_lossy(&response.body).into_owned();
                        check_frame("http server", &text, usize::MAX);
                        c.session.handle_message(self.now, &response.body);
                    }
                    if method == "GET" {
                        c.get_open = false;
                    }
                }
            }
            Reply::Open(ex) => {
                assert!(
                    !self.exchanges.contains_key(&ex) && !self.finished.contains(&ex),
                    "exchange id {ex:?} reused"
                );
                self.exchanges.insert(
                    ex,
                    Exchange {
                        client,
                        decoder: SseDecoder::new(1 << 20),
                        head: None,
                        json: Vec::new(),
                        inbox: VecDeque::new(),
                        ended: false,
                        dropped: client == usize::MAX,
                    },
                );
            }
            other => panic!("unexpected reply {other:?}"),
        }
    }

    fn advance(&mut self, by: Duration) {
        let target = self.now + by;
        loop {
            let next = self
                .clients
                .iter()
                .filter(|c| !c.gone)
                .filter_map(|c| c.session.poll_timeout())
                .chain(self.http.poll_timeout())
                .min();
            match next {
                Some(t) if t <= target => {
                    self.now = self.now.max(t);
                    self.fire();
                }
                _ => break,
            }
        }
        self.now = target;
        self.fire();
    }

    fn fire(&mut self) {
        let now = self.now;
        self.http.handle_timeout(now);
        for c in &mut self.clients {
            if !c.gone {
                c.session.handle_timeout(now);
            }
        }
        self.settle();
    }

    /// Moves outputs and events until quiet, checking each
    fn settle(&mut self) {
        for round in 0.. {
            assert!(
                round < 10_000,
                "the HTTP server and its clients never go quiet"
            );
            let mut busy = false;
            while let Some((key, event)) = self.http.poll_event() {
                busy = true;
                match event {
                    ServerEvent::Request(r) => self.held.push(Held {
                        key,
                        wants_progress: r.wants_progress,
                        responder: r.responder,
                        progress: 0.0,
                    }),
                    ServerEvent::Cancelled { id, .. } => {
                        self.held.retain(|h| h.key != key || h.responder.id() != id);
                    }
                    ServerEvent::Closed { .. } => {
                        self.held.retain(|h| h.key != key);
                        self.tasks.retain(|(k, _)| *k != key);
                    }
                    _ => {}
                }
            }
            while let Some(output) = self.http.poll_output() {
                busy = true;
                self.output(output);
            }
            for (i, c) in self.clients.iter_mut().enumerate() {
                if c.gone {
                    continue;
                }
                let mut buf = Vec::new();
                while c.session.poll_transmit(&mut buf).is_some() {
                    busy = true;
                    let text = String::from_utf8_lossy(&buf);
                    check_frame(&format!("client {i}"), text.trim_end(), usize::MAX);
                    buf.pop();
                    c.outbox.push_back(std::mem::take(&mut buf));
                }
                while let Some(e) = c.session.poll_event() {
                    busy = true;
                    if self.verbose {
                        eprintln!("  client {i} event: {e:?}");
                    }
                    c.ledger.observe(&format!("client {i}"), &e);
                    match e {
                        ClientEvent::Ready { version } if c.legacy => c.http.set_version(version),
                        ClientEvent::InputRequired { id, requests } => {
                            c.inputs.push((id, requests))
                        }
                        ClientEvent::Request(r) => c.held.push(r.responder),
                        _ => {}
                    }
                }
            }
            if !busy {
                break;
            }
        }
        self.check();
    }

    fn output(&mut self, output: Output) {
        match output {
            Output::Head { exchange, head } => {
                assert!(!self.finished.contains(&exchange), "a head after the end");
                let e = self.exchanges.get_mut(&exchange).expect("a known exchange");
                assert!(e.head.is_none(), "two heads for {exchange:?}");
                let kind = match self.clients.get_mut(e.client) {
                    Some(c) => c.http.handle_response(head.status, &head.headers),
                    None => ResponseKind::Failed { status: 0 },
                };
                e.head = Some(kind);
            }
            Output::Body { exchange, data } => {
                assert!(!self.finished.contains(&exchange), "body after the end");
                let e = self.exchanges.get_mut(&exchange).expect("a known exchange");
                assert!(e.head.is_some(), "body before the head of {exchange:?}");
                if e.dropped {
                    return;
                }
                match e.head {
                    Some(ResponseKind::EventStream) => {
                        e.decoder.push(&data);
                        while let Some(event) = e.decoder.next_event() {
                            let event = event.expect("the server writes valid SSE");
                            if !event.data.is_empty() {
                                check_frame("http server", &event.data, usize::MAX);
                                e.inbox.push_back(event.data.into_bytes());
                            }
                        }
                    }
                    _ => e.json.extend_from_slice(&data),
                }
            }
            Output::End { exchange } => {
                assert!(
                    !self.finished.contains(&exchange),
                    "two ends for {exchange:?}"
                );
                let mut e = self.exchanges.remove(&exchange).expect("a known exchange");
                assert!(e.head.is_some(), "an end before the head");
                self.finished.push(exchange);
                if !e.json.is_empty() && !e.dropped {
                    let text = String::from_utf8_lossy(&e.json).into_owned();
                    check_frame("http server", &text, usize::MAX);
                    e.inbox.push_back(std::mem::take(&mut e.json));
                }
                if let Some(c) = self.clients.get_mut(e.client)
                    && e.head == Some(ResponseKind::EventStream)
                    && c.get_open
                    && e.inbox.is_empty()
                {
                    // A GET stream that ended; the client may open another.
                    c.get_open = false;
                }
                // What arrived before the end is still read.
                if !e.inbox.is_empty() {
                    e.ended = true;
                    let id = exchange;
                    self.exchanges.insert(id, e);
                }
            }
            other => panic!("unexpected output {other:?}"),
        }
    }

    fn check(&mut self) {
        assert!(self.http.session_count() <= self.config.max_sessions);
        let limits = self.limits.clone();
        let mut keys = vec![SessionKey::STATELESS];
        for c in &self.clients {
            if let Some(key) = c.http.session_id().and_then(|s| self.http.session_key(s)) {
                keys.push(key);
            }
        }
        for key in keys {
            if let Some(s) = self.http.session_mut(key) {
                check_bounds(s, &limits, "http server session");
                check_subscriptions(s, &limits, "http server session");
            }
        }
        for (i, c) in self.clients.iter().enumerate() {
            if c.gone {
                continue;
            }
            check_bounds(&c.session, &limits, &format!("client {i}"));
            if c.session.is_closed() {
                assert!(c.ledger.closed && c.ledger.live.is_empty());
                assert_eq!(c.session.poll_timeout(), None);
            }
        }
        // Exchanges that ended with nothing left to read are forgotten.
        self.exchanges
            .retain(|_, e| !(e.ended && e.inbox.is_empty()));
    }

    /// Delivers everything, lets every timer run out, and checks that every request of a
    /// live client ended exactly once
    pub fn finish(mut self) {
        self.note("finish".into());
        for _ in 0..40 {
            self.flush_all();
            self.advance(Duration::from_secs(5 * 60));
        }
        self.flush_all();
        for (i, c) in self.clients.iter().enumerate() {
            if !c.gone {
                assert!(
                    c.ledger.live.is_empty(),
                    "client {i}: requests never ended: {:?}",
                    c.ledger.live
                );
            }
        }
        let now = self.now;
        for c in &mut self.clients {
            if !c.gone {
                c.session.close(now);
            }
        }
        self.settle();
    }

    /// Sends every POST and delivers every message waiting, until quiet
    fn flush_all(&mut self) {
        for _ in 0..64 {
            let mut moved = false;
            for i in 0..self.clients.len() {
                while let Some(body) = self.clients[i].outbox.pop_front() {
                    moved = true;
                    self.post(i, &body);
                }
            }
            let mut ids: Vec<_> = self.exchanges.keys().copied().collect();
            ids.sort();
            let now = self.now;
            for ex in ids {
                let Some(e) = self.exchanges.get_mut(&ex) else {
                    continue;
                };
                while let Some(msg) = e.inbox.pop_front() {
                    moved = true;
                    let c = &mut self.clients[e.client];
                    if !c.gone {
                        c.session.handle_message(now, &msg);
                    }
                }
            }
            // The application answers what it holds, so the run can wind down.
            for h in std::mem::take(&mut self.held) {
                moved = true;
                if let Some(s) = self.http.session_mut(h.key) {
                    let _ = s.respond_raw(h.responder, &raw(json!({"content": []})));
                }
            }
            for c in &mut self.clients {
                while let Some((id, requests)) = c.inputs.pop() {
                    moved = true;
                    let _ = c.session.provide_input(now, id, answers(&requests));
                }
                while let Some(r) = c.held.pop() {
                    moved = true;
                    let _ = c.session.respond_raw(r, &raw(json!({})));
                }
            }
            self.settle();
            if !moved {
                return;
            }
        }
    }
}

fn with_host(mut headers: Vec<(String, String)>) -> Vec<(String, String)> {
    headers.push(("Host".into(), "127.0.0.1:3000".into()));
    headers
}
