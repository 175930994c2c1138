//! Several server "processes" (three `Server`s in this test process, each serving HTTP on
//! its own port) share their tasks and changes through one `MemoryTaskStore`, as processes
//! behind a load balancer do (issue 21): a 2026 task started on one is read, given input and
//! cancelled through the others, its result read anywhere (a 2025-11-25 `tasks/result` on
//! another process waits for it); a process that dies leaves its task `failed` once its
//! lease ends; a list change raised on one reaches the subscribers of another; a store that
//! cannot be reached fails the requests that need it, saying so, and loses nothing stored
//!
//! Each process reaches the store through its own [`Link`], which the test can cut: a killed
//! process reads, writes and hears nothing any more, as one that got SIGKILL.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, ReadResourceResult, Resource, ResourceContents, Tool};
use mcp_sansio::session::TASKS_EXTENSION;
use mcp_sansio::store::{SharedTasks, StoreError, StoreOp, StoreReply};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, InboundNotification, ListKind,
    RequestOptions, ServerConfig, TaskOptions,
};
use mcp_sansio_runtime::store::{Deliver, Done, MemoryTaskStore, Subscription, TaskStore};
use serde_json::{Map, Value, json};

use super::Flag;
use super::push::{NOTE, next_named, subscribe};
use super::support::raw_http::raw_within;
use super::support::{LEGACY, greeting, name_request};
use crate::binding::{CallWatch, Client, ClientError, ClientOptions, HttpServerHandle, Server};
use crate::{dialect, rt};

/// A lease long enough that no renewal is ever late on a loaded machine: the tests that do
/// not watch a lease end
const CALM: Duration = Duration::from_secs(10);
/// The lease of the test where a process dies
const SHORT: Duration = Duration::from_millis(300);
/// How long a test waits for a status or a notification before it fails
const PATIENCE: Duration = Duration::from_secs(10);

/// One process's way to the shared store: everything goes through until it is killed, then
/// nothing (its writes and reads fail, it hears no message)
struct Link {
    store: Arc<MemoryTaskStore>,
    dead: Arc<AtomicBool>,
}

impl Link {
    fn kill(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }
}

impl TaskStore for Link {
    fn run(&self, op: StoreOp, done: Done) {
        if !self.dead.load(Ordering::SeqCst) {
            self.store.run(op, done);
        } else if !matches!(op, StoreOp::Publish { .. }) {
            done(StoreReply::Failed(StoreError(
                "this process is dead".into(),
            )));
        }
    }

    fn subscribe(&self, deliver: Deliver) -> Subscription {
        let dead = Arc::clone(&self.dead);
        self.store.subscribe(Arc::new(move |message: &str| {
            if !dead.load(Ordering::SeqCst) {
                deliver(message);
            }
        }))
    }

    fn describe(&self) -> String {
        self.store.describe()
    }
}

/// Counts the `hold` handlers that stopped (dropped, or returned on their cancellation)
struct Stop(Arc<AtomicUsize>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a process's handlers tell the test
#[derive(Default)]
struct Probes {
    /// `ask` saw its handler stop
    aborted: Arc<AtomicBool>,
    /// The greetings `ask` made of its answers
    heard: Arc<Mutex<Vec<String>>>,
    /// How many `hold` handlers stopped
    stopped: Arc<AtomicUsize>,
    /// Lets `gate` complete
    released: Arc<AtomicBool>,
}

/// Process `node`'s server: the same tools, resource and `state_key` as every other's, the
/// 2026 tasks extension, sharing through `link` with `lease`
///
/// - `ask` runs as a task, asks for a name (the task goes `input_required`), keeps the
///   greeting in `heard`, then waits an hour (setting `aborted` when it stops);
/// - `quick` runs as a task and completes it with "done by <node>" soon;
/// - `hold` runs as a task and waits an hour (counted in `stopped` when it stops);
/// - `gate` runs as a task and completes it with "released on <node>" once `released` is set.
fn server(node: &str, link: Arc<Link>, lease: Duration, probes: &Probes) -> Server {
    let mut config = ServerConfig::new(Implementation::new("scale-out", "1.0"));
    config.capabilities = json!({
        "extensions": {TASKS_EXTENSION: {}},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    });
    config.state_key = Some([9; 32]);
    let store: Arc<dyn TaskStore> = link;
    let (aborted, heard, stopped, released) = (
        Arc::clone(&probes.aborted),
        Arc::clone(&probes.heard),
        Arc::clone(&probes.stopped),
        Arc::clone(&probes.released),
    );
    let opened = format!("released on {node}");
    let done = format!("done by {node}");
    Server::builder(config)
        .task_store(store, SharedTasks::new(node).lease(lease))
        .list_changed()
        .resource_subscriptions()
        .resource(
            Resource::new(NOTE, "a note"),
            handler!(|_cx, uri, _vars| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri, "a",
                )]))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("ask", Map::new()),
            handler!([aborted, heard]; |cx, _args| {
                aw!(cx.run_as_task(TaskOptions::default())).map_err(|e| e.to_error())?;
                let _flag = Flag(Arc::clone(&aborted));
                let answers = aw!(cx.ask(name_request())).map_err(|e| e.to_error())?;
                let greeting = greeting(&answers).content[0].as_text().map(str::to_owned);
                heard
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(greeting);
                nap!(cx, Duration::from_secs(3600));
                Ok(CallToolResult::text("never"))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("quick", Map::new()),
            handler!([done]; |cx, _args| {
                aw!(cx.run_as_task(TaskOptions::default())).map_err(|e| e.to_error())?;
                nap!(cx, Duration::from_millis(50));
                Ok(CallToolResult::text(done.clone()))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("hold", Map::new()),
            handler!([stopped]; |cx, _args| {
                let _stop = Stop(Arc::clone(&stopped));
                aw!(cx.run_as_task(TaskOptions::default())).map_err(|e| e.to_error())?;
                nap!(cx, Duration::from_secs(3600));
                Ok(CallToolResult::text("never"))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("gate", Map::new()),
            handler!([released, opened]; |cx, _args| {
                aw!(cx.run_as_task(TaskOptions::default())).map_err(|e| e.to_error())?;
                while !released.load(Ordering::SeqCst) {
                    nap!(cx, Duration::from_millis(10));
                }
                Ok(CallToolResult::text(opened.clone()))
            }),
        )
        .unwrap()
        .build()
}

/// One server process serving HTTP, and a client of it
struct Process {
    server: Server,
    handle: HttpServerHandle,
    link: Arc<Link>,
    probes: Probes,
    url: String,
    client: Client,
}

dialect_fn! {
    /// Processes `a`, `b`, .. (`n` of them) sharing `store` with `lease`, each with a 2026
    /// client
    async fn cluster(store: &Arc<MemoryTaskStore>, n: usize, lease: Duration) -> Vec<Process> {
        let mut processes = Vec::new();
        for node in ["a", "b", "c"].into_iter().take(n) {
            let link = Arc::new(Link {
                store: Arc::clone(store),
                dead: Arc::default(),
            });
            let probes = Probes::default();
            let server = server(node, Arc::clone(&link), lease, &probes);
            let mut config = HttpConfig::default();
            if let Some(keepalive) = rt::HTTP_KEEPALIVE {
                config.keepalive = Some(keepalive);
            }
            let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
            let handle = aw!(server.serve_http_with(localhost, config)).unwrap();
            let url = format!("http://{}/mcp", handle.local_addr());
            let client = aw!(connect(&url, EraMode::Modern, None));
            processes.push(Process {
                server,
                handle,
                link,
                probes,
                url,
                client,
            });
        }
        processes
    }

    /// A client of `url` in `era` that declares the tasks extension, its notifications to
    /// `notifications`
    async fn connect(
        url: &str,
        era: EraMode,
        notifications: Option<rt::Sender<InboundNotification>>,
    ) -> Client {
        let mut config = ClientConfig::new(Implementation::new("scale-out-client", "1.0"));
        config.era = era;
        config.capabilities = json!({"extensions": {TASKS_EXTENSION: {}}});
        let mut options = ClientOptions::default();
        if let Some(tx) = notifications {
            options = options.notifications(tx);
        }
        aw!(rt::timeout(PATIENCE, Client::connect_http(url, config, options)))
            .expect("connects in time")
            .unwrap()
    }

    /// Shuts every process down that still runs
    async fn stop(processes: Vec<Process>) {
        for p in processes {
            aw!(p.client.close());
            aw!(rt::timeout(PATIENCE, p.handle.shutdown())).expect("shutdown in time");
        }
    }

    /// A raw 2026 request through `client`: its result
    async fn request(client: &Client, method: &str, params: Value) -> Result<Value, ClientError> {
        let params = serde_json::value::to_raw_value(&params).unwrap();
        let options = RequestOptions::default().timeout(PATIENCE);
        let result = aw!(client.request_raw(method, Some(params), options, None))?;
        Ok(serde_json::from_str(result.get()).unwrap())
    }

    /// `tasks/get` of `id` through `client`: the task
    async fn get(client: &Client, id: &str) -> Value {
        aw!(request(client, "tasks/get", json!({ "taskId": id })))
            .unwrap_or_else(|e| panic!("tasks/get {id}: {e:?}"))
    }

    /// `tasks/get` of `id` through `client` until it reads `status` (a few seconds at most)
    async fn until_status(client: &Client, id: &str, status: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..400 {
            last = aw!(get(client, id));
            if last["status"] == status {
                return last;
            }
            aw!(rt::sleep(Duration::from_millis(25)));
        }
        panic!("task {id} never read {status}: {last}")
    }

    /// Starts tool `tool` through process `p` as a raw 2026 `tools/call` (a client of ours
    /// would follow the task itself): the JSON-RPC answer, the task handle when it started
    async fn start(p: &Process, tool: &'static str) -> Value {
        let url = p.url.clone();
        aw!(rt::unblock(move || start_raw(&url, tool)))
    }
}

/// A 2026 `tools/call` of `tool` to `url`, as raw HTTP, from a client that allows tasks and
/// elicitation: the JSON-RPC answer (from a JSON body or an event stream)
fn start_raw(url: &str, tool: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
    "params": {"name": tool, "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {TASKS_EXTENSION: {}}, "elicitation": {}},
    }}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let body = body.to_string();
    let (_, _, answer) = raw_within(url, "POST", &headers, body.as_bytes(), Some(PATIENCE));
    let text = String::from_utf8_lossy(&answer);
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {text}"))
}

/// The task id of a `tools/call` answered with a task handle
fn task_id(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_owned()
}

dialect_fn! {
    /// Waits (a few seconds at most) until `check` holds
    async fn eventually(check: impl Fn() -> bool) -> bool {
        for _ in 0..400 {
            if check() {
                return true;
            }
            aw!(rt::sleep(Duration::from_millis(25)));
        }
        check()
    }
}

#[test]
fn a_task_started_on_one_process_is_read_given_input_and_cancelled_through_the_others() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let processes = aw!(cluster(&store, 3, CALM));
        let [a, b, c] = &processes[..] else {
            unreachable!()
        };
        let id = task_id(&aw!(start(a, "ask")));
        assert_eq!(store.len(), 1, "stored before the handle went out");

        // The handler on a asks for a name: b reads the task's input requests.
        let asking = aw!(until_status(&b.client, &id, "input_required"));
        assert_eq!(asking["taskId"], id.as_str());
        assert!(asking["inputRequests"]["name"].is_object(), "{asking}");
        assert_eq!(aw!(get(&c.client, &id))["status"], "input_required");

        // Answered through c: the handler on a gets the answer and goes on.
        let answer = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
        let params = json!({"taskId": id, "inputResponses": answer});
        aw!(request(&c.client, "tasks/update", params)).expect("tasks/update through c");
        let heard = Arc::clone(&a.probes.heard);
        assert!(
            aw!(eventually(|| !heard.lock().unwrap().is_empty())),
            "the handler on a got the answer given through c"
        );
        assert_eq!(*heard.lock().unwrap(), ["Hello, Ada!"]);
        aw!(until_status(&b.client, &id, "working"));

        // Cancelled through b: the handler on a stops, a and c read `cancelled`.
        aw!(request(&b.client, "tasks/cancel", json!({ "taskId": id })))
            .expect("tasks/cancel through b");
        assert!(
            aw!(super::wait_for(&a.probes.aborted)),
            "the handler on a saw the cancellation made through b"
        );
        for p in [a, c, b] {
            assert_eq!(aw!(get(&p.client, &id))["status"], "cancelled", "{}", p.url);
        }
        aw!(stop(processes));
    });
}

#[test]
fn a_result_completed_on_one_process_is_read_through_another() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let processes = aw!(cluster(&store, 3, CALM));
        let [a, b, c] = &processes[..] else {
            unreachable!()
        };
        let id = task_id(&aw!(start(a, "quick")));
        let done = aw!(until_status(&b.client, &id, "completed"));
        assert_eq!(done["result"]["content"][0]["text"], "done by a", "{done}");
        let done = aw!(get(&c.client, &id));
        assert_eq!(done["result"]["content"][0]["text"], "done by a", "{done}");

        // Tasks started on different processes are different tasks.
        let other = task_id(&aw!(start(b, "quick")));
        assert_ne!(other, id, "task ids are unique across processes");
        let done = aw!(until_status(&a.client, &other, "completed"));
        assert_eq!(done["result"]["content"][0]["text"], "done by b", "{done}");
        let first = aw!(get(&c.client, &id));
        assert_eq!(
            first["result"]["content"][0]["text"], "done by a",
            "{first}"
        );

        // A 2025-11-25 session's task on a (its client follows it there) is a task of its
        // own too, beside a's 2026 ones.
        let legacy = aw!(connect(&a.url, LEGACY, None));
        let params = serde_json::value::to_raw_value(&json!({"name": "quick"})).unwrap();
        let options = RequestOptions::default()
            .as_task(Some(Duration::from_secs(60)))
            .timeout(PATIENCE);
        let result = aw!(legacy.request_raw("tools/call", Some(params), options, None)).unwrap();
        let result: Value = serde_json::from_str(result.get()).unwrap();
        assert_eq!(result["content"][0]["text"], "done by a", "{result}");
        assert_eq!(store.len(), 3, "three tasks, three records");
        aw!(legacy.close());

        // An id no process knows is refused as such, wherever it is asked.
        match aw!(request(&c.client, "tasks/get", json!({"taskId": "nope"}))) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602, "{e:?}"),
            other => panic!("{other:?}"),
        }
        aw!(stop(processes));
    });
}

#[test]
fn a_legacy_tasks_result_on_one_process_waits_for_a_task_another_one_runs() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let processes = aw!(cluster(&store, 2, CALM));
        let [a, b] = &processes[..] else {
            unreachable!()
        };
        let id = task_id(&aw!(start(a, "gate")));
        // A 2025-11-25 client of b (one that moved) waits there for the task's result.
        let legacy = aw!(connect(&b.url, LEGACY, None));
        let params = serde_json::value::to_raw_value(&json!({ "taskId": id })).unwrap();
        let options = RequestOptions::default().timeout(PATIENCE);
        let (_, waiting) = dialect::start(
            &legacy,
            "tasks/result",
            Some(params),
            options,
            CallWatch::default(),
        );
        aw!(until_status(&b.client, &id, "working"));
        a.probes.released.store(true, Ordering::SeqCst);
        let result = aw!(waiting.join()).expect("tasks/result through b");
        let result: Value = serde_json::from_str(result.get()).unwrap();
        assert_eq!(result["content"][0]["text"], "released on a", "{result}");
        aw!(legacy.close());
        aw!(stop(processes));
    });
}

#[test]
fn the_task_of_a_process_that_died_reads_failed_through_the_others_after_its_lease() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let mut processes = aw!(cluster(&store, 3, SHORT));
        let id = task_id(&aw!(start(&processes[0], "hold")));
        // a renews the lease: the task outlives several leases.
        aw!(rt::sleep(SHORT * 3));
        assert_eq!(aw!(get(&processes[1].client, &id))["status"], "working");

        // a dies: no renewal, no last word; its server stops.
        let a = processes.remove(0);
        a.link.kill();
        aw!(rt::timeout(PATIENCE, a.handle.shutdown())).expect("shutdown in time");
        let stopped = Arc::clone(&a.probes.stopped);
        assert!(aw!(eventually(|| stopped.load(Ordering::SeqCst) == 1)));
        drop(a.client);

        let failed = aw!(until_status(&processes[0].client, &id, "failed"));
        let message = failed["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("(a) stopped"), "{failed}");
        assert_eq!(aw!(get(&processes[1].client, &id))["status"], "failed");
        aw!(stop(processes));
    });
}

#[test]
fn a_list_change_on_one_process_reaches_a_listener_and_a_legacy_subscriber_of_another() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let processes = aw!(cluster(&store, 2, CALM));
        let [a, b] = &processes[..] else {
            unreachable!()
        };
        let mut subscribers = Vec::new();
        let mut listens = Vec::new();
        let mut clients = Vec::new();
        for era in [LEGACY, EraMode::Modern] {
            let (tx, mut rx) = rt::channel();
            let client = aw!(connect(&b.url, era, Some(tx)));
            listens.push(aw!(subscribe(&client, &mut rx, era)));
            subscribers.push((era, rx));
            clients.push(client);
        }

        a.server.notify_list_changed(ListKind::Tools).unwrap();
        for (era, rx) in &mut subscribers {
            let changed = aw!(next_named(rx, "notifications/tools/list_changed"));
            let modern = *era == EraMode::Modern;
            assert_eq!(changed.subscription_id().is_some(), modern, "{era:?}");
        }
        // A tool added on a at run time, and a resource updated there: told on b too.
        a.server
            .add_tool(
                Tool::new("late", Map::new()),
                handler!(|_cx, _args| { Ok(CallToolResult::text("late")) }),
            )
            .unwrap();
        a.server.notify_resource_updated(NOTE);
        for (era, rx) in &mut subscribers {
            aw!(next_named(rx, "notifications/tools/list_changed"));
            let updated = aw!(next_named(rx, "notifications/resources/updated"));
            let params: Value =
                serde_json::from_str(updated.params.as_deref().unwrap().get()).unwrap();
            assert_eq!(params["uri"], NOTE, "{era:?}");
        }
        drop(listens);
        for client in clients {
            aw!(client.close());
        }
        aw!(stop(processes));
    });
}

#[test]
fn a_store_that_is_down_fails_requests_saying_so_and_loses_no_task() {
    rt::block_on(async {
        let store = MemoryTaskStore::new();
        let processes = aw!(cluster(&store, 2, CALM));
        let [a, b] = &processes[..] else {
            unreachable!()
        };
        let done = task_id(&aw!(start(a, "quick")));
        aw!(until_status(&b.client, &done, "completed"));
        let held = task_id(&aw!(start(a, "hold")));
        aw!(until_status(&b.client, &held, "working"));

        store.set_available(false);
        match aw!(request(&b.client, "tasks/get", json!({ "taskId": held }))) {
            Err(ClientError::Call(CallError::Remote(e))) => {
                assert!(e.message.contains("task store"), "{e:?}");
            }
            other => panic!("tasks/get with the store down: {other:?}"),
        }
        // A new task cannot start: nobody could read it elsewhere. Its handler is stopped.
        let refused = aw!(start(a, "hold"));
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("task store"), "{refused}");
        let stopped = Arc::clone(&a.probes.stopped);
        assert!(
            aw!(eventually(|| stopped.load(Ordering::SeqCst) == 1)),
            "the refused task's handler stopped"
        );

        // Back: both tasks are there as they were.
        store.set_available(true);
        let read = aw!(get(&b.client, &done));
        assert_eq!(read["status"], "completed");
        assert_eq!(read["result"]["content"][0]["text"], "done by a", "{read}");
        assert_eq!(aw!(get(&b.client, &held))["status"], "working");
        aw!(request(
            &b.client,
            "tasks/cancel",
            json!({ "taskId": held })
        ))
        .unwrap();
        assert!(aw!(eventually(|| stopped.load(Ordering::SeqCst) == 2)));
        assert_eq!(aw!(get(&a.client, &held))["status"], "cancelled");
        aw!(stop(processes));
    });
}
