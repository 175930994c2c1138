//! Tasks shared between server processes through a store: three `HttpServer`s (three
//! "processes") on one fake clock and one `MemoryStore`, the 2026 wire round-robined over
//! them, the 2025-11-25 form on a session of one of them
//!
//! A task started on one process is read, given input and cancelled through the others; a
//! process that stops renewing its lease leaves its task `failed`; a store that cannot be
//! reached fails the affected requests with its error and loses nothing stored.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mcp_sansio::http::{ExchangeId, HttpConfig, HttpServer, Output, Reply, SessionKey, Source};
use mcp_sansio::schema::InputResponses;
use mcp_sansio::session::{TASKS_EXTENSION, TaskId, TaskOptions, TaskUpdate};
use mcp_sansio::store::{MemoryStore, SharedTasks, StoreError, StoreOp, StoreReply};
use mcp_sansio::{ServerConfig, ServerEvent};

use super::http_kit::{Collected, one_elicitation, raw};

const ANCHOR_MS: u64 = 1_700_000_000_000;
const LEASE: Duration = Duration::from_secs(3);

struct Node {
    http: HttpServer,
    exchanges: HashMap<ExchangeId, Collected>,
    /// Tasks this node runs: (session, task)
    tasks: Vec<(SessionKey, TaskId)>,
    cancelled: Vec<TaskId>,
    inputs: Vec<(TaskId, InputResponses)>,
    /// A killed process: it reads and writes nothing any more
    dead: bool,
}

struct Cluster {
    nodes: Vec<Node>,
    store: MemoryStore,
    origin: Instant,
    now: Instant,
    /// The store is unreachable
    down: bool,
    next_id: u128,
}

fn config(node: &str) -> ServerConfig {
    let mut c = super::http_kit::server_config();
    c.capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
    c.capabilities["tasks"] =
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    c.task_id_seed = u64::from(node.as_bytes()[0]);
    c.shared_tasks = Some(SharedTasks::new(node).lease(LEASE));
    c
}

impl Cluster {
    fn new(n: usize) -> Self {
        #[allow(clippy::disallowed_methods)] // the fake clock starts at any instant
        let origin = Instant::now();
        let nodes = (0..n)
            .map(|i| {
                let name = ["a", "b", "c"][i];
                let mut http = HttpServer::new(
                    Arc::new(HttpConfig::default()),
                    Arc::new(config(name)),
                    origin,
                );
                http.anchor_wall_clock(origin, ANCHOR_MS);
                Node {
                    http,
                    exchanges: HashMap::new(),
                    tasks: Vec::new(),
                    cancelled: Vec::new(),
                    inputs: Vec::new(),
                    dead: false,
                }
            })
            .collect();
        Self {
            nodes,
            store: MemoryStore::new(),
            origin,
            now: origin,
            down: false,
            next_id: 0,
        }
    }

    fn wall_ms(&self) -> u64 {
        ANCHOR_MS + u64::try_from((self.now - self.origin).as_millis()).unwrap()
    }

    fn advance(&mut self, by: Duration) {
        let end = self.now + by;
        // In steps, so lease renewals and rechecks happen at their times.
        while self.now < end {
            self.now = (self.now + Duration::from_millis(100)).min(end);
            for node in self.nodes.iter_mut().filter(|n| !n.dead) {
                node.http.handle_timeout(self.now);
            }
            self.pump();
        }
    }

    /// Runs every node's application, outputs and store operations until all are quiet
    fn pump(&mut self) {
        loop {
            let mut busy = false;
            for i in 0..self.nodes.len() {
                if self.nodes[i].dead {
                    continue;
                }
                while let Some((key, event)) = self.nodes[i].http.poll_event() {
                    busy = true;
                    self.on_event(i, key, event);
                }
                while let Some(output) = self.nodes[i].http.poll_output() {
                    busy = true;
                    let node = &mut self.nodes[i];
                    match output {
                        Output::Head { exchange, head } => {
                            node.exchanges.entry(exchange).or_default().head = Some(head);
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
                while let Some((key, op)) = self.nodes[i].http.poll_store() {
                    busy = true;
                    let now_ms = self.wall_ms();
                    let reply = if self.down {
                        match op {
                            StoreOp::Put { ticket, .. } | StoreOp::Get { ticket, .. } => Some((
                                ticket,
                                StoreReply::Failed(StoreError("connection refused".into())),
                            )),
                            _ => None,
                        }
                    } else {
                        self.store.apply(now_ms, op)
                    };
                    if let Some((ticket, reply)) = reply {
                        self.nodes[i]
                            .http
                            .handle_store_reply(self.now, key, ticket, reply);
                    }
                }
                for message in self.store.take_published() {
                    busy = true;
                    for node in self.nodes.iter_mut().filter(|n| !n.dead) {
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
                let session = node.http.session_mut(key).unwrap();
                let responder = request.responder;
                if request.method == "tools/call" {
                    let task = session
                        .inbound(responder.id())
                        .start_task(now, TaskOptions::default())
                        .expect("offered");
                    node.tasks.push((key, task));
                } else {
                    session.respond_raw(responder, &raw(json!({}))).unwrap();
                }
            }
            ServerEvent::TaskCancelled { task } => node.cancelled.push(task),
            ServerEvent::TaskInput { task, responses } => node.inputs.push((task, responses)),
            _ => {}
        }
    }

    /// A 2026 request to node `i`: the answer's JSON (complete, or the open exchange's
    /// messages once pumped), `None` while it waits
    fn modern(&mut self, i: usize, method: &str, params: Value) -> Option<Value> {
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Host", "127.0.0.1:3000"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(n) = &name {
            headers.push(("Mcp-Name", n));
        }
        self.send(i, &headers, &body.to_string())
    }

    fn send(&mut self, i: usize, headers: &[(&str, &str)], body: &str) -> Option<Value> {
        let counter = &mut self.next_id;
        let mut ids = || {
            *counter += 1;
            (0xABCD_0000u128 + *counter).to_be_bytes()
        };
        let reply = self.nodes[i].http.handle_request(
            self.now,
            &Source::unknown(),
            "POST",
            headers,
            body.as_bytes(),
            &mut ids,
        );
        match reply {
            Reply::Complete(r) if r.body.is_empty() => Some(Value::Null),
            Reply::Complete(r) => Some(serde_json::from_slice(&r.body).unwrap()),
            Reply::Open(exchange) => {
                self.nodes[i].exchanges.entry(exchange).or_default();
                self.pump();
                self.answer_of(i, exchange)
            }
            _ => unreachable!(),
        }
    }

    fn answer_of(&self, i: usize, exchange: ExchangeId) -> Option<Value> {
        let c = &self.nodes[i].exchanges[&exchange];
        if !c.ended {
            return None;
        }
        if c.is_sse() {
            c.messages().into_iter().find(|m| m.get("id").is_some())
        } else {
            Some(c.json())
        }
    }

    /// Starts a 2026 task on node `i`: its id
    fn start(&mut self, i: usize) -> String {
        let created = self
            .modern(i, "tools/call", json!({"name": "slow", "arguments": {}}))
            .expect("answered");
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        created["result"]["taskId"].as_str().unwrap().to_owned()
    }

    fn get(&mut self, i: usize, task: &str) -> Value {
        self.modern(i, "tasks/get", json!({"taskId": task}))
            .expect("tasks/get answered")
    }

    fn update(&mut self, i: usize, task: TaskId, update: TaskUpdate) {
        let (key, _) = *self.nodes[i]
            .tasks
            .iter()
            .find(|(_, t)| *t == task)
            .unwrap();
        let now = self.now;
        self.nodes[i]
            .http
            .session_mut(key)
            .unwrap()
            .update_task(now, task, update)
            .unwrap();
        self.pump();
    }
}

#[test]
fn a_task_is_read_given_input_and_cancelled_through_other_processes() {
    let mut cluster = Cluster::new(3);
    let id = cluster.start(0);
    let task = cluster.nodes[0].tasks[0].1;
    assert_eq!(cluster.store.len(), 1, "stored before the handle went out");

    // Read through b and c.
    for i in [1, 2] {
        let got = cluster.get(i, &id);
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert_eq!(got["result"]["taskId"], id);
    }

    // Input: asked on a, read on b, answered through c.
    cluster.update(0, task, TaskUpdate::InputRequired(one_elicitation()));
    let got = cluster.get(1, &id);
    assert_eq!(got["result"]["status"], "input_required");
    assert!(got["result"]["inputRequests"]["name"].is_object(), "{got}");
    let answer = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let ack = cluster
        .modern(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": answer}),
        )
        .unwrap();
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(
        cluster.nodes[0].inputs.len(),
        1,
        "the owner got the answers"
    );
    assert_eq!(cluster.nodes[0].inputs[0].0, task);
    assert!(cluster.nodes[0].inputs[0].1.contains_key("name"));
    assert_eq!(cluster.get(1, &id)["result"]["status"], "working");

    // Cancelled through b: the owner's handler is told, every process reads `cancelled`.
    let ack = cluster
        .modern(1, "tasks/cancel", json!({"taskId": id}))
        .unwrap();
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(cluster.nodes[0].cancelled, vec![task]);
    for i in 0..3 {
        assert_eq!(cluster.get(i, &id)["result"]["status"], "cancelled");
    }
    // The owner cannot complete it any more.
    let (key, _) = cluster.nodes[0].tasks[0];
    let now = cluster.now;
    let late = cluster.nodes[0].http.session_mut(key).unwrap().update_task(
        now,
        task,
        TaskUpdate::Completed(raw(json!({"content": []}))),
    );
    assert!(late.is_err());
}

#[test]
fn a_result_written_by_the_owner_is_read_everywhere() {
    let mut cluster = Cluster::new(3);
    let id = cluster.start(1);
    let task = cluster.nodes[1].tasks[0].1;
    let result = json!({"content": [{"type": "text", "text": "done"}]});
    cluster.update(1, task, TaskUpdate::Completed(raw(result)));
    let got = cluster.get(2, &id);
    assert_eq!(got["result"]["status"], "completed");
    assert_eq!(
        got["result"]["result"]["content"][0]["text"], "done",
        "{got}"
    );
    // Unknown ids are still unknown.
    let unknown = cluster.get(0, "nope");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn a_task_whose_process_died_reads_failed_after_its_lease() {
    let mut cluster = Cluster::new(3);
    let id = cluster.start(0);
    // Renewals keep it alive past several leases.
    cluster.advance(LEASE * 3);
    assert_eq!(cluster.get(1, &id)["result"]["status"], "working");
    cluster.nodes[0].dead = true;
    cluster.advance(LEASE / 2);
    assert_eq!(
        cluster.get(1, &id)["result"]["status"],
        "working",
        "lease not over"
    );
    cluster.advance(LEASE);
    let got = cluster.get(2, &id);
    assert_eq!(got["result"]["status"], "failed", "{got}");
    let message = got["result"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("(a) stopped"), "{message}");
    // Written back: the same on every process from now on.
    assert_eq!(cluster.get(1, &id)["result"]["status"], "failed");
}

#[test]
fn a_store_that_is_down_fails_requests_clearly_and_loses_nothing() {
    let mut cluster = Cluster::new(2);
    let id = cluster.start(0);
    let task = cluster.nodes[0].tasks[0].1;
    cluster.down = true;
    let got = cluster.get(1, &id);
    let message = got["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("task store failed: connection refused"),
        "{got}"
    );
    // A new task cannot start (nobody else could answer for it); its handler is told.
    let refused = cluster
        .modern(0, "tools/call", json!({"name": "slow", "arguments": {}}))
        .unwrap();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not started"),
        "{refused}"
    );
    assert_eq!(cluster.nodes[0].cancelled.len(), 1);
    // The owner's result while the store is down is written at the next renewal.
    cluster.update(0, task, TaskUpdate::Completed(raw(json!({"content": []}))));
    // An outage shorter than the lease: the owner writes the record once the store is back.
    cluster.now += LEASE / 2;
    cluster.down = false;
    assert_eq!(cluster.get(1, &id)["result"]["status"], "working", "stale");
    cluster.advance(LEASE / 3);
    assert_eq!(cluster.get(1, &id)["result"]["status"], "completed");
}

#[test]
fn a_store_that_never_answers_fails_the_request_after_a_lease() {
    let mut cluster = Cluster::new(2);
    let id = cluster.start(0);
    // Node b's operations vanish: its tasks/get gets an answer within one lease anyway.
    let body = {
        let mut params = json!({"taskId": id});
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        });
        json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": params}).to_string()
    };
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Host", "127.0.0.1:3000"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tasks/get"),
        ("Mcp-Name", id.as_str()),
    ];
    let mut ids = || [1u8; 16];
    let reply = cluster.nodes[1].http.handle_request(
        cluster.now,
        &Source::unknown(),
        "POST",
        &headers[..],
        body.as_bytes(),
        &mut ids,
    );
    let Reply::Open(exchange) = reply else {
        panic!("waits for the store")
    };
    cluster.nodes[1].exchanges.entry(exchange).or_default();
    while cluster.nodes[1].http.poll_store().is_some() {}
    cluster.now += LEASE;
    cluster.nodes[1].http.handle_timeout(cluster.now);
    while let Some(output) = cluster.nodes[1].http.poll_output() {
        let c = cluster.nodes[1].exchanges.entry(exchange).or_default();
        match output {
            Output::Head { head, .. } => c.head = Some(head),
            Output::Body { data, .. } => c.body.extend(data),
            Output::End { .. } => c.ended = true,
            _ => {}
        }
    }
    let answer = cluster.answer_of(1, exchange).expect("answered");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("did not answer within 3000 ms"),
        "{answer}"
    );
}

/// The headers of a 2025-11-25 request on session `sid`
fn legacy_headers(sid: &str) -> Vec<(&str, &str)> {
    vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Host", "127.0.0.1:3000"),
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

impl Cluster {
    /// Opens a 2025-11-25 session on node `i`: its id
    fn legacy_session(&mut self, i: usize) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let base = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Host", "127.0.0.1:3000"),
        ];
        let sids = |node: &Node| -> Vec<String> {
            node.exchanges
                .values()
                .filter_map(|c| c.head.as_ref()?.header("Mcp-Session-Id").map(str::to_owned))
                .collect()
        };
        let before = sids(&self.nodes[i]);
        let _ = self.send(i, &base, &init.to_string());
        let sid = sids(&self.nodes[i])
            .into_iter()
            .find(|s| !before.contains(s))
            .expect("a new session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = self.send(i, &legacy_headers(&sid), &initialized.to_string());
        sid
    }
}

#[test]
fn the_2025_sessions_of_a_process_and_its_2026_one_give_different_task_ids() {
    let mut cluster = Cluster::new(1);
    cluster.start(0);
    for _ in 0..2 {
        let sid = cluster.legacy_session(0);
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "slow", "arguments": {}, "task": {"ttl": 60_000}}});
        let _ = cluster.send(0, &legacy_headers(&sid), &call.to_string());
    }
    assert_eq!(cluster.nodes[0].tasks.len(), 3, "three tasks started");
    // One id space in the store: three records, none written over another.
    assert_eq!(cluster.store.len(), 3);
}

#[test]
fn legacy_tasks_result_waits_for_another_process_task() {
    let mut cluster = Cluster::new(2);
    // A 2026 task on a; a 2025-11-25 session on b asks for its result (a client that moved).
    let id = cluster.start(0);
    let task = cluster.nodes[0].tasks[0].1;
    let sid = cluster.legacy_session(1);
    let h = legacy_headers(&sid);
    let result =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/result", "params": {"taskId": id}});
    assert!(cluster.send(1, &h, &result.to_string()).is_none(), "waits");
    let done = json!({"content": [{"type": "text", "text": "late"}]});
    cluster.update(0, task, TaskUpdate::Completed(raw(done)));
    let answered: Vec<Value> = cluster.nodes[1]
        .exchanges
        .values()
        .filter(|c| c.ended && c.is_sse())
        .flat_map(Collected::messages)
        .filter(|m| m["id"] == 5)
        .collect();
    assert_eq!(answered.len(), 1, "answered on the owner's signal");
    assert_eq!(answered[0]["result"]["content"][0]["text"], "late");
}
