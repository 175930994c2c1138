//! Several server processes sharing tasks and changes through a real Redis (issue #21):
//! three mcp-sansio-tokio everything-servers (`--store redis://…`, built with the `redis`
//! feature: `MCP_INTEROP_SERVER`, scripts/interop-setup builds it) and a `redis-server`
//! (Debian's package; `.ci/run` installs it), each on a free 127.0.0.1 port, spoken to over
//! raw HTTP/1.1 so every request goes to the process the test names
//!
//! - a task started through one process is polled, given input and cancelled through the
//!   others;
//! - the process running a task is killed with SIGKILL, and the others report the task
//!   `failed` once its lease ended;
//! - a `tools/list_changed` raised on one process reaches a 2026 listener and a legacy
//!   subscriber connected to others;
//! - Redis is killed and restarted mid-run: clear errors while it is down, the stored task
//!   still there afterwards, and its result written once Redis is back.
//!
//! nginx in front (round robin and sticky legacy sessions) and the conformance suite through
//! it are scripts/scale-out's.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_interop::{ServerProcess, everything_server, free_port};
use serde_json::{Value, json};

const STATE_KEY: &str = "5ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e0075ca1e007";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A `redis-server` with append-only persistence in a folder of its own
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Redis {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "mcp-scale-out-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Self {
            child: None,
            port: free_port(),
            dir,
        };
        redis.restart();
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn restart(&mut self) {
        let bin = ["/usr/bin/redis-server", "/usr/sbin/redis-server"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("redis-server is not installed (Debian's redis-server; .ci/run installs it)");
        let child = Command::new(bin)
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        wait_listening(self.port, "redis-server");
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn wait_listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} is not listening on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One everything-server process sharing through `redis`
struct Node {
    process: Option<ServerProcess>,
    addr: SocketAddr,
}

fn node(name: &str, redis: &Redis, lease_ms: u64) -> Node {
    let port = free_port();
    let mut command = Command::new(everything_server());
    command
        .args(["--conformance", "--http", &format!("127.0.0.1:{port}")])
        .args(["--node", name, "--state-key", STATE_KEY])
        .args(["--store", &redis.url(), "--lease", &lease_ms.to_string()]);
    let process = ServerProcess::start(command);
    process.wait_for_line("serving MCP at ", Duration::from_secs(20));
    Node {
        process: Some(process),
        addr: ([127, 0, 0, 1], port).into(),
    }
}

/// A raw HTTP/1.1 exchange (`Connection: close`): the status, the header fields and the
/// body (de-chunked)
fn exchange(addr: SocketAddr, head: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = format!(
        "{head}Host: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head[9..12].parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    (status, head.to_owned(), body)
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

/// The JSON-RPC answer in a response body: a JSON body, or the SSE event carrying it
fn answer(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {body:?}"))
}

/// A 2026 request to `addr` (the tasks extension declared): its answer
fn modern(addr: SocketAddr, method: &str, mut params: Value) -> Value {
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "scale-out", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let head = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}"
    );
    answer(&exchange(addr, &head, &body.to_string()).2)
}

fn start_task(addr: SocketAddr, tool: &str, arguments: Value) -> String {
    let created = modern(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

fn get(addr: SocketAddr, task: &str) -> Value {
    modern(addr, "tasks/get", json!({"taskId": task}))
}

/// Polls `tasks/get` through `addr` until the status is `status` (30 s at most)
fn until_status(addr: SocketAddr, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = get(addr, task);
        if got["result"]["status"] == status {
            return got;
        }
        assert!(Instant::now() < deadline, "never {status}: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "needs redis-server and the everything-server built with --features redis (scripts/interop-setup)"]
fn a_task_is_polled_given_input_and_cancelled_through_other_processes() {
    let redis = Redis::start();
    let (a, b, c) = (
        node("a", &redis, 10_000),
        node("b", &redis, 10_000),
        node("c", &redis, 10_000),
    );

    // Input: asked on a, read on b, answered through c, the result read on b.
    let task = start_task(a.addr, "confirm_delete", json!({"filename": "notes.txt"}));
    let waiting = until_status(b.addr, &task, "input_required");
    let requests = &waiting["result"]["inputRequests"];
    assert_eq!(
        requests["confirm"]["method"], "elicitation/create",
        "{waiting}"
    );
    let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let ack = modern(
        c.addr,
        "tasks/update",
        json!({"taskId": task, "inputResponses": answers}),
    );
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until_status(b.addr, &task, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "Deleted notes.txt",
        "{done}"
    );

    // Cancelled through b: c reads it cancelled, and so does a, which ran it.
    let task = start_task(a.addr, "slow_compute", json!({"seconds": 120}));
    assert_eq!(get(c.addr, &task)["result"]["status"], "working");
    let ack = modern(b.addr, "tasks/cancel", json!({"taskId": task}));
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert_eq!(get(c.addr, &task)["result"]["status"], "cancelled");
    until_status(a.addr, &task, "cancelled");
}

#[test]
#[ignore = "needs redis-server and the everything-server built with --features redis (scripts/interop-setup)"]
fn a_task_of_a_killed_process_reads_failed_after_its_lease() {
    let redis = Redis::start();
    let lease = 1_500;
    let (mut a, b) = (node("a", &redis, lease), node("b", &redis, lease));
    let task = start_task(a.addr, "slow_compute", json!({"seconds": 120}));
    // Renewed while a lives (several leases)...
    std::thread::sleep(Duration::from_millis(lease * 2));
    assert_eq!(get(b.addr, &task)["result"]["status"], "working");
    // ...and failed once a was killed (ServerProcess drops with SIGKILL) and its lease ran out.
    drop(a.process.take());
    let failed = until_status(b.addr, &task, "failed");
    let message = failed["result"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("(a) stopped"), "{failed}");
}

/// An open response read in the background: everything that arrives on it
fn open_stream(addr: SocketAddr, head: &str, body: &str) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = format!(
        "{head}Host: {addr}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0
                || tx
                    .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                    .is_err()
            {
                break;
            }
        }
    });
    rx
}

/// Waits (20 s at most) until `needle` arrived on `stream`
fn heard(stream: &std::sync::mpsc::Receiver<String>, needle: &str, seen: &mut String) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains(needle) {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return false;
        };
        match stream.recv_timeout(left) {
            Ok(piece) => seen.push_str(&piece),
            Err(_) => return false,
        }
    }
    true
}

#[test]
#[ignore = "needs redis-server and the everything-server built with --features redis (scripts/interop-setup)"]
fn a_list_change_on_one_process_reaches_the_clients_of_the_others() {
    let redis = Redis::start();
    let (a, b, c) = (
        node("a", &redis, 10_000),
        node("b", &redis, 10_000),
        node("c", &redis, 10_000),
    );

    // A 2026 listener on b.
    let mut params = json!({"notifications": {"toolsListChanged": true}});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let listen =
        json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params});
    let listener = open_stream(
        b.addr,
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\n",
        &listen.to_string(),
    );
    let mut on_b = String::new();
    assert!(
        heard(
            &listener,
            "notifications/subscriptions/acknowledged",
            &mut on_b
        ),
        "{on_b}"
    );

    // A legacy (2025-11-25) session on c with its standalone GET stream.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "scale-out", "version": "1"}}});
    let accept =
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    let (status, head, _) = exchange(
        c.addr,
        &format!("POST /mcp HTTP/1.1\r\n{accept}"),
        &init.to_string(),
    );
    assert_eq!(status, 200, "{head}");
    let sid = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    assert!(sid.starts_with("c."), "routed by its node: {sid}");
    let session = format!("Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, ..) = exchange(
        c.addr,
        &format!("POST /mcp HTTP/1.1\r\n{accept}{session}"),
        &initialized.to_string(),
    );
    assert_eq!(status, 202);
    let subscriber = open_stream(
        c.addr,
        &format!("GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\n{session}"),
        "",
    );
    let mut on_c = String::new();
    // The GET stream's head (and priming event) say it is open.
    assert!(heard(&subscriber, "200", &mut on_c), "{on_c}");

    // Raised on a.
    let told = modern(
        a.addr,
        "tools/call",
        json!({"name": "notify_tools_changed", "arguments": {}}),
    );
    assert_eq!(told["result"]["content"][0]["text"], "told", "{told}");
    assert!(
        heard(&listener, "notifications/tools/list_changed", &mut on_b),
        "{on_b}"
    );
    assert!(
        heard(&subscriber, "notifications/tools/list_changed", &mut on_c),
        "{on_c}"
    );
}

#[test]
#[ignore = "needs redis-server and the everything-server built with --features redis (scripts/interop-setup)"]
fn redis_stopped_and_restarted_mid_run_loses_no_task() {
    let mut redis = Redis::start();
    let (a, b) = (node("a", &redis, 10_000), node("b", &redis, 10_000));
    let task = start_task(a.addr, "slow_compute", json!({"seconds": 2}));
    assert_eq!(get(b.addr, &task)["result"]["status"], "working");

    redis.kill();
    let down = get(b.addr, &task);
    let message = down["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("task store failed"), "{down}");
    assert!(message.contains(&redis.url()), "names the store: {down}");
    let refused = modern(
        a.addr,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 1}}),
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not started"), "{refused}");

    // The task ends while Redis is down (2 s); once it is back, a writes the result.
    std::thread::sleep(Duration::from_secs(3));
    redis.restart();
    let done = until_status(b.addr, &task, "completed");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "job done after 2 s",
        "{done}"
    );
    drop((a, b));
}
