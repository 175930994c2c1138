//! HTTP servers (one, or several "processes" sharing a `MemoryStore`) on one fake clock,
//! whose application records who sent each request and runs task-backed calls: the harness
//! of the identity tests (tasks bound to their creator, `requestState`, listeners, scopes,
//! what a handler learns of its caller)
//!
//! Every request names its [`Source`] (the principal a binding's token verifier found, the
//! header fields it hands over), so one test can be alice, bob and an anonymous caller in
//! turn.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_sansio::http::{
    ExchangeId, HttpConfig, HttpResponse, HttpServer, Output, Principal, Reply, SessionKey, Source,
};
use mcp_sansio::schema::InputResponses;
use mcp_sansio::session::{Caller, TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::store::{MemoryStore, SharedTasks};
use mcp_sansio::testing::Pair;
use mcp_sansio::{Asked, Responder, ServerConfig, ServerEvent};

use super::http_kit::{Collected, one_elicitation, raw};

/// The servers' wall clock at the origin
pub const ANCHOR_MS: u64 = 1_700_000_000_000;
/// The lease of shared tasks
pub const LEASE: Duration = Duration::from_secs(3);
/// The key task ids are derived under (a binding draws it at random)
pub const TASK_KEY: [u8; 32] = [0x5a; 32];

/// A principal of the `app` client
pub fn principal(subject: &str) -> Principal {
    Principal::new(Some(subject.into()), Some("app".into()))
}

/// A request carrying alice's verified token
pub fn alice() -> Source {
    Source::unknown().with_principal(Some(principal("alice")))
}

/// A request carrying bob's verified token
pub fn bob() -> Source {
    Source::unknown().with_principal(Some(principal("bob")))
}

/// A request of an unprotected server: no principal
pub fn anonymous() -> Source {
    Source::unknown()
}

/// A request the application saw, and who sent it
#[derive(Debug, Clone)]
pub struct Seen {
    pub node: usize,
    pub key: SessionKey,
    pub method: String,
    /// The `name` (or `uri`) of the request
    pub name: String,
    pub caller: Option<Arc<Caller>>,
}

/// One server process
pub struct Node {
    pub http: HttpServer,
    pub exchanges: HashMap<ExchangeId, Collected>,
    /// Tasks this node runs: (session, task)
    pub tasks: Vec<(SessionKey, TaskId)>,
    pub cancelled: Vec<TaskId>,
    pub inputs: Vec<(TaskId, InputResponses)>,
    /// Calls held without an answer: (session, responder)
    pub held: Vec<(SessionKey, Responder)>,
}

/// The servers, the store they share (if any) and the fake clock
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub store: Option<MemoryStore>,
    /// The store's operations wait (a slow store) until this is `false` again
    pub store_held: bool,
    pub origin: Instant,
    pub now: Instant,
    next_id: u128,
    /// Every request the applications saw, in order
    pub seen: Vec<Seen>,
}

/// The configuration of node `name`: tools, resources, prompts; tasks in both forms (the
/// 2026 extension and the 2025-11-25 capability); a state key; a task id key; a shared
/// store with `shared`
pub fn config(name: &str, shared: bool) -> ServerConfig {
    let mut c = Pair::server_config();
    c.state_key = Some([7; 32]);
    c.task_id_key = TASK_KEY;
    c.task_id_seed = u64::from(name.as_bytes()[0]);
    c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
    c.capabilities["tasks"] =
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    if shared {
        c.shared_tasks = Some(SharedTasks::new(name).lease(LEASE));
    }
    c
}

/// What an HTTP request got: its status, header fields and JSON-RPC answer
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// The answer (`Null` for an empty body)
    pub body: Value,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn error_code(&self) -> Option<i64> {
        self.body["error"]["code"].as_i64()
    }

    pub fn error_message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }

    /// This answer with every occurrence of `id` written `<id>`: two answers about two ids
    /// compared as one
    pub fn without(&self, id: &str) -> (u16, Vec<(&'static str, String)>, String) {
        (
            self.status,
            self.headers
                .iter()
                .map(|(n, v)| (*n, v.replace(id, "<id>")))
                .collect(),
            self.body.to_string().replace(id, "<id>"),
        )
    }
}

impl From<HttpResponse> for Answer {
    fn from(r: HttpResponse) -> Self {
        let body = if r.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&r.body).expect("a JSON body")
        };
        Self {
            status: r.status,
            headers: r.headers,
            body,
        }
    }
}

/// The `_meta` of a 2026 request from a client that follows tasks and answers elicitation
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {TASKS_EXTENSION: {}},
            "elicitation": {}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "identity-test", "version": "1.0.0"},
    })
}

/// The member of a 2026 request's params its `Mcp-Name` header mirrors
fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The headers of a 2025-11-25 request on session `sid`
pub fn legacy_headers(sid: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("Accept", "application/json, text/event-stream".into()),
        ("Host", "127.0.0.1:3000".into()),
        ("Mcp-Session-Id", sid.into()),
        ("MCP-Protocol-Version", "2025-11-25".into()),
    ]
}

impl Cluster {
    /// `n` processes; sharing one store when `shared`
    pub fn new(n: usize, shared: bool) -> Self {
        #[allow(clippy::disallowed_methods)] // the fake clock starts at any instant
        let origin = Instant::now();
        let nodes = (0..n)
            .map(|i| {
                let name = ["a", "b", "c"][i];
                let mut http = HttpServer::new(
                    Arc::new(HttpConfig::default()),
                    Arc::new(config(name, shared)),
                    origin,
                );
                http.anchor_wall_clock(origin, ANCHOR_MS);
                Node {
                    http,
                    exchanges: HashMap::new(),
                    tasks: Vec::new(),
                    cancelled: Vec::new(),
                    inputs: Vec::new(),
                    held: Vec::new(),
                }
            })
            .collect();
        Self {
            nodes,
            store: shared.then(MemoryStore::new),
            store_held: false,
            origin,
            now: origin,
            next_id: 0,
            seen: Vec::new(),
        }
    }

    /// One server without a store
    pub fn single() -> Self {
        Self::new(1, false)
    }

    fn wall_ms(&self) -> u64 {
        ANCHOR_MS + u64::try_from((self.now - self.origin).as_millis()).unwrap()
    }

    pub fn advance(&mut self, by: Duration) {
        let end = self.now + by;
        while self.now < end {
            self.now = (self.now + Duration::from_millis(100)).min(end);
            for node in &mut self.nodes {
                node.http.handle_timeout(self.now);
            }
            self.pump();
        }
    }

    /// Runs every node's application, outputs and store operations until all are quiet
    pub fn pump(&mut self) {
        loop {
            let mut busy = false;
            for i in 0..self.nodes.len() {
                while let Some((key, event)) = self.nodes[i].http.poll_event() {
                    busy = true;
                    self.on_event(i, key, event);
                }
                while let Some(output) = self.nodes[i].http.poll_output() {
                    busy = true;
                    let node = &mut self.nodes[i];
                    match output {
                        Output::Head { exchange, head } => {
                            let c = node.exchanges.entry(exchange).or_default();
                            assert!(c.head.is_none(), "one head per exchange");
                            c.head = Some(head);
                        }
                        Output::Body { exchange, data } => {
                            node.exchanges
                                .entry(exchange)
                                .or_default()
                                .body
                                .extend(data);
                        }
                        Output::End { exchange } => {
                            node.exchanges.entry(exchange).or_default().ended = true;
                        }
                        _ => unreachable!(),
                    }
                }
                while !self.store_held
                    && let Some((key, op)) = self.nodes[i].http.poll_store()
                {
                    busy = true;
                    let now_ms = self.wall_ms();
                    let store = self.store.as_mut().expect("only a sharing server stores");
                    if let Some((ticket, reply)) = store.apply(now_ms, op) {
                        self.nodes[i]
                            .http
                            .handle_store_reply(self.now, key, ticket, reply);
                    }
                }
                let published = self
                    .store
                    .as_mut()
                    .map(MemoryStore::take_published)
                    .unwrap_or_default();
                for message in published {
                    busy = true;
                    for node in &mut self.nodes {
                        node.http.handle_store_signal(self.now, &message);
                    }
                }
            }
            if !busy {
                return;
            }
        }
    }

    fn on_event(&mut self, i: usize, key: SessionKey, event: ServerEvent) {
        let now = self.now;
        let node = &mut self.nodes[i];
        match event {
            ServerEvent::Request(request) => {
                let params: Value = request.params_as().unwrap_or(json!({}));
                let name = params
                    .get("name")
                    .or_else(|| params.get("uri"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                self.seen.push(Seen {
                    node: i,
                    key,
                    method: request.method.clone(),
                    name: name.clone(),
                    caller: request.caller.clone(),
                });
                let session = node.http.session_mut(key).unwrap();
                let responder = request.responder;
                let answer = match (request.method.as_str(), name.as_str()) {
                    ("tools/call", "slow") if request.task_offered => {
                        let task = session
                            .inbound(responder.id())
                            .start_task(now, TaskOptions::default())
                            .expect("the client offered a task");
                        node.tasks.push((key, task));
                        None
                    }
                    ("tools/call", "slow") => {
                        node.held.push((key, responder));
                        return;
                    }
                    ("tools/call", "ask") => {
                        match session
                            .inbound(responder.id())
                            .ask_input(now, one_elicitation())
                            .unwrap()
                        {
                            Asked::Answered(answers) => {
                                let given = serde_json::to_value(&answers["name"]).unwrap();
                                let name = given["content"]["name"].clone();
                                Some(json!({"content": [{"type": "text", "text": name}]}))
                            }
                            Asked::Suspended => None,
                            _ => {
                                node.held.push((key, responder));
                                return;
                            }
                        }
                    }
                    ("tools/call", tool) => {
                        Some(json!({"content": [{"type": "text", "text": tool}]}))
                    }
                    ("resources/read", uri) => {
                        Some(json!({"contents": [{"uri": uri, "text": "contents"}]}))
                    }
                    ("prompts/get", _) => Some(json!({"messages": []})),
                    _ => Some(json!({})),
                };
                if let Some(result) = answer {
                    session.respond_raw(responder, &raw(result)).unwrap();
                }
            }
            ServerEvent::TaskCancelled { task } => node.cancelled.push(task),
            ServerEvent::TaskInput { task, responses } => node.inputs.push((task, responses)),
            _ => {}
        }
    }

    /// Any HTTP request to node `i` from `source`: a complete response, or the open
    /// exchange (pumped)
    pub fn send(
        &mut self,
        i: usize,
        source: &Source,
        method: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> Result<HttpResponse, ExchangeId> {
        let counter = &mut self.next_id;
        let mut ids = || {
            *counter += 1;
            (0xABCD_0000u128 + *counter).to_be_bytes()
        };
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = self.nodes[i].http.handle_request(
            self.now,
            source,
            method,
            &headers[..],
            body.as_bytes(),
            &mut ids,
        );
        let out = match reply {
            Reply::Complete(r) => Ok(r),
            Reply::Open(exchange) => {
                self.nodes[i].exchanges.entry(exchange).or_default();
                Err(exchange)
            }
            _ => unreachable!(),
        };
        self.pump();
        out
    }

    /// What an exchange of node `i` collected so far
    pub fn collected(&self, i: usize, exchange: ExchangeId) -> &Collected {
        &self.nodes[i].exchanges[&exchange]
    }

    /// The answer of a request: its complete response, or the ended exchange's status and
    /// the message answering it
    pub fn answer(&self, i: usize, sent: Result<HttpResponse, ExchangeId>) -> Answer {
        match sent {
            Ok(r) => r.into(),
            Err(exchange) => self.answer_of(i, exchange).expect("answered"),
        }
    }

    /// The answer of an open exchange, `None` while it waits
    pub fn answer_of(&self, i: usize, exchange: ExchangeId) -> Option<Answer> {
        let c = self.collected(i, exchange);
        if !c.ended {
            return None;
        }
        let head = c.head.as_ref().expect("a head before the end");
        let body = if c.is_sse() {
            c.messages()
                .into_iter()
                .find(|m| m.get("id").is_some())
                .expect("an answer on the stream")
        } else {
            c.json()
        };
        Some(Answer {
            status: head.status,
            headers: head.headers.clone(),
            body,
        })
    }

    /// A 2026 request (the client follows tasks and answers elicitation), unanswered yet
    pub fn modern_raw(
        &mut self,
        i: usize,
        source: &Source,
        id: i64,
        method: &str,
        params: Value,
    ) -> Result<HttpResponse, ExchangeId> {
        let mut params = params;
        params["_meta"] = modern_meta();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("Host", "127.0.0.1:3000".to_owned()),
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
            ("Mcp-Method", method.to_owned()),
        ];
        if let Some(name) = name_member(method).and_then(|m| params[m].as_str()) {
            headers.push(("Mcp-Name", name.to_owned()));
        }
        self.send(i, source, "POST", &headers, &body.to_string())
    }

    /// A 2026 request and its answer
    pub fn modern(
        &mut self,
        i: usize,
        source: &Source,
        id: i64,
        method: &str,
        params: Value,
    ) -> Answer {
        let sent = self.modern_raw(i, source, id, method, params);
        self.answer(i, sent)
    }

    /// Starts a 2026 task on node `i` as `source`: its id
    pub fn start(&mut self, i: usize, source: &Source) -> String {
        let created = self.modern(
            i,
            source,
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {}}),
        );
        assert_eq!(created.status, 200, "{created:?}");
        assert_eq!(created.body["result"]["resultType"], "task", "{created:?}");
        created.body["result"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The task node `i` runs under wire id `id`
    pub fn task(&mut self, i: usize, id: &str) -> (SessionKey, TaskId) {
        let node = &mut self.nodes[i];
        for &(key, task) in &node.tasks {
            let wire = node
                .http
                .session_mut(key)
                .and_then(|s| s.task_wire_id(task).map(str::to_owned));
            if wire.as_deref() == Some(id) {
                return (key, task);
            }
        }
        panic!("node {i} runs no task {id}")
    }

    /// The application of node `i` updates its task `id`
    pub fn update(&mut self, i: usize, id: &str, update: TaskUpdate) {
        let (key, task) = self.task(i, id);
        let now = self.now;
        self.nodes[i]
            .http
            .session_mut(key)
            .unwrap()
            .update_task(now, task, update)
            .unwrap();
        self.pump();
    }

    /// Opens a 2025-11-25 session on node `i` as `source`: its id
    pub fn initialize(&mut self, i: usize, source: &Source) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "identity-test", "version": "1.0.0"}}});
        let headers = [
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("Host", "127.0.0.1:3000".to_owned()),
        ];
        let exchange = self
            .send(i, source, "POST", &headers, &init.to_string())
            .expect_err("an open exchange");
        let c = self.collected(i, exchange);
        assert!(c.ended, "initialize answered");
        let sid = c
            .head
            .as_ref()
            .unwrap()
            .header("Mcp-Session-Id")
            .expect("a session id")
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self
            .send(
                i,
                source,
                "POST",
                &legacy_headers(&sid),
                &initialized.to_string(),
            )
            .expect("a complete 202");
        assert_eq!(r.status, 202);
        sid
    }

    /// A 2025-11-25 request on session `sid` of node `i`, unanswered yet
    pub fn legacy_raw(
        &mut self,
        i: usize,
        source: &Source,
        sid: &str,
        id: i64,
        method: &str,
        params: Value,
    ) -> Result<HttpResponse, ExchangeId> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(i, source, "POST", &legacy_headers(sid), &body.to_string())
    }

    /// A 2025-11-25 request on session `sid` of node `i`, and its answer
    pub fn legacy(
        &mut self,
        i: usize,
        source: &Source,
        sid: &str,
        id: i64,
        method: &str,
        params: Value,
    ) -> Answer {
        let sent = self.legacy_raw(i, source, sid, id, method, params);
        self.answer(i, sent)
    }

    /// Starts a 2025-11-25 task-augmented call on session `sid` of node `i`: its task id
    pub fn start_legacy(&mut self, i: usize, source: &Source, sid: &str) -> String {
        let created = self.legacy(
            i,
            source,
            sid,
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {}, "task": {"ttl": 60_000}}),
        );
        assert_eq!(created.status, 200, "{created:?}");
        created.body["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created:?}"))
            .to_owned()
    }
}

/// Whether `id` looks like a task id: 128 bits in lowercase hex
pub fn is_task_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A made-up task id of the right shape that no server issued
pub const MADE_UP: &str = "0123456789abcdef0123456789abcdef";
