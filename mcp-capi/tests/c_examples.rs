//! The C examples (`mcp-capi/examples/c`) against real peers, plain and under AddressSanitizer
//!
//! - the official Python SDK's client drives the C echo server in both eras
//!   (`tests/peers/py_c_echo.py`): handshake, tools/list, echo, progress, cancellation;
//! - the C client drives our tokio everything-server, the Python SDK's `MCPServer`
//!   (`tests/peers/py_server.py`) and the C echo server, in both eras;
//! - the echo server on the raw wire: progress before the result, a cancelled call sends
//!   nothing more, bad input gets an error and the server goes on;
//! - the client fails clearly (a command that does not start, a server that closes, one that
//!   never answers) and never hangs.
//!
//! Each runs again with the ASan builds (`detect_leaks=1`, reports written to files): a
//! test fails when the sanitizer reports anything.
//!
//! Every test is `#[ignore]`d: it needs the C examples (`MCP_C_EXAMPLES`, from
//! `eval "$(scripts/build-c-examples --asan)"`) and the interop peers (`eval "$(scripts/interop-setup)"`).
//! `scripts/test-all` sets both up and runs `cargo test -p mcp-sansio-capi --test c_examples
//! -- --include-ignored`; without them the tests fail, naming what is missing.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_interop::{PeerOutput, TEST_DEADLINE, everything_server, peer_script, python, run_peer};
use serde_json::{Value, json};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// The folder `scripts/build-c-examples` built into (`MCP_C_EXAMPLES`), or its `asan/`
fn examples(asan: bool) -> PathBuf {
    let hint = "run `eval \"$(scripts/build-c-examples --asan)\"` first (scripts/test-all does)";
    let dir = std::env::var_os("MCP_C_EXAMPLES")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("MCP_C_EXAMPLES is not set; {hint}"));
    let dir = if asan { dir.join("asan") } else { dir };
    for name in ["echo-server", "client"] {
        assert!(
            dir.join(name).is_file(),
            "{} is missing; {hint}",
            dir.join(name).display()
        );
    }
    dir
}

fn echo_server(asan: bool) -> PathBuf {
    examples(asan).join("echo-server")
}

fn client(asan: bool) -> PathBuf {
    examples(asan).join("client")
}

/// Where the sanitizer of one run writes its reports: a fresh folder, checked empty at the end
struct Sanitizer {
    dir: Option<PathBuf>,
}

impl Sanitizer {
    /// For an ASan run (`asan`), a folder for the reports; nothing otherwise
    fn new(asan: bool, name: &str) -> Self {
        let dir = asan.then(|| {
            let dir =
                std::env::temp_dir().join(format!("mcp-c-examples-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("creating the report folder");
            dir
        });
        Self { dir }
    }

    /// Gives `command` (and what it starts) the sanitizer's settings
    fn apply(&self, command: &mut Command) {
        if let Some(dir) = &self.dir {
            let options = format!(
                "detect_leaks=1:log_path={}:exitcode=99",
                dir.join("report").display()
            );
            command.env("ASAN_OPTIONS", options);
        }
    }

    /// Fails the test with every report the sanitizer wrote
    fn assert_clean(&self, context: &dyn std::fmt::Display) {
        let Some(dir) = &self.dir else { return };
        let mut reports = String::new();
        for entry in std::fs::read_dir(dir).expect("reading the report folder") {
            let path = entry.expect("a report").path();
            reports.push_str(&format!("--- {} ---\n", path.display()));
            reports.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
        assert!(
            reports.is_empty(),
            "AddressSanitizer reported:\n{reports}\n{context}"
        );
    }
}

impl Drop for Sanitizer {
    /// Removes the report folder, whatever happened (a failure shows the reports)
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Asserts that the echo server's log shows no failed library call and no work left over
fn assert_server_log_clean(stderr: &str, context: &dyn std::fmt::Display) {
    for bad in [" failed (", "dropped unfinished"] {
        assert!(
            !stderr.contains(bad),
            "the echo server logged `{bad}`:\n{stderr}\n{context}"
        );
    }
}

// --- the Python SDK's client drives the C echo server -------------------------------------------

fn python_drives_echo_server(mode: &str, version: &str, asan: bool) {
    let sanitizer = Sanitizer::new(asan, &format!("py-{mode}"));
    let mut command = Command::new(python());
    command
        .arg(peer_script("py_c_echo.py"))
        .arg(mode)
        .arg(echo_server(asan));
    sanitizer.apply(&mut command);
    let output = run_peer(command, TEST_DEADLINE);
    let s = output.summary();
    let ctx = format!("\nsummary: {s:#}\n{output}");
    assert!(
        output.status.success() && s.get("fatal").is_none(),
        "the Python client failed{ctx}"
    );
    assert_eq!(s["protocol_version"], version, "negotiated version{ctx}");
    assert_eq!(s["server_name"], "c-echo-server", "server name{ctx}");
    assert_eq!(s["tools"], json!(["echo", "slow"]), "tools/list{ctx}");
    assert_eq!(
        s["echo"],
        json!({"texts": ["hello from python"], "is_error": false}),
        "echo{ctx}"
    );
    assert_eq!(
        s["slow"]["texts"],
        json!(["done after 3 steps"]),
        "slow{ctx}"
    );
    assert_eq!(
        s["slow"]["progress"],
        json!([
            {"progress": 1.0, "total": 3.0, "message": "step 1 of 3"},
            {"progress": 2.0, "total": 3.0, "message": "step 2 of 3"},
            {"progress": 3.0, "total": 3.0, "message": "step 3 of 3"},
        ]),
        "slow's progress{ctx}"
    );
    assert_eq!(
        s["cancel"],
        json!({"cancelled": true, "result": null}),
        "the cancelled call{ctx}"
    );
    // The server handled the cancellation before the next request (one stream, in order):
    // it stopped the work and said so on its stderr, which the SDK passes to ours.
    assert!(
        output.stderr.contains("cancelled in step") && output.stderr.contains("no response sent"),
        "the server logs the cancellation{ctx}"
    );
    // ...and did no more of it: a step after the cancellation would fail its progress report
    // (the request is closed) and leave the job unfinished when the session ends
    assert_server_log_clean(&output.stderr, &ctx);
    assert_eq!(
        s["echo_after_cancel"],
        json!({"texts": ["still here"], "is_error": false}),
        "echo after the cancellation{ctx}"
    );
    let unknown = &s["unknown_tool"];
    assert!(
        unknown["error"]["code"] == -32602 || unknown["is_error"] == true,
        "an unknown tool fails{ctx}"
    );
    sanitizer.assert_clean(&output);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn python_client_legacy_drives_c_echo_server() {
    python_drives_echo_server("legacy", LEGACY, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn python_client_modern_drives_c_echo_server() {
    python_drives_echo_server("modern", MODERN, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn python_client_auto_drives_c_echo_server() {
    python_drives_echo_server("auto", MODERN, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn python_client_legacy_drives_c_echo_server_asan() {
    python_drives_echo_server("legacy", LEGACY, true);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn python_client_modern_drives_c_echo_server_asan() {
    python_drives_echo_server("modern", MODERN, true);
}

// --- the C client drives servers -----------------------------------------------------------------

/// What the C client printed: its JSON lines, and the whole output
struct ClientRun {
    lines: Vec<Value>,
    output: PeerOutput,
}

impl ClientRun {
    /// The line of `step`
    fn step(&self, step: &str) -> &Value {
        self.lines
            .iter()
            .find(|l| l["step"] == step)
            .unwrap_or_else(|| panic!("the client printed no `{step}` line\n{}", self.output))
    }

    fn steps(&self, step: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["step"] == step).collect()
    }
}

/// Runs the C client with `args` then `server...`; every stdout line must be JSON
fn run_client(asan: bool, name: &str, args: &[&str], server: &[OsString]) -> ClientRun {
    let sanitizer = Sanitizer::new(asan, name);
    let mut command = Command::new(client(asan));
    command.args(args).arg("--").args(server);
    sanitizer.apply(&mut command);
    let output = run_peer(command, TEST_DEADLINE);
    let lines = output
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {l}\n{output}"))
        })
        .collect();
    sanitizer.assert_clean(&output);
    ClientRun { lines, output }
}

/// Asserts a successful run: the version, the server's name, its tools, the call's texts
fn assert_client_run(run: &ClientRun, version: &str, server: &str, tools: &[&str], texts: &[&str]) {
    let out = &run.output;
    assert!(out.status.success(), "the C client failed\n{out}");
    let ready = run.step("ready");
    assert_eq!(ready["protocolVersion"], version, "version\n{out}");
    assert_eq!(ready["serverInfo"]["name"], server, "server name\n{out}");
    let mut listed: Vec<&str> = run.step("tools/list")["tools"]
        .as_array()
        .expect("tool names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, tools, "tools/list\n{out}");
    let result = &run.step("tools/call")["result"];
    let got: Vec<&str> = result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(got, texts, "the call's texts\n{out}");
    assert_ne!(result["isError"], true, "isError\n{out}");
}

/// Asserts the progress lines of a `slow` call of three steps
fn assert_three_steps(run: &ClientRun) {
    let values: Vec<(f64, f64)> = run
        .steps("progress")
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap_or(-1.0),
                p["total"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    assert_eq!(
        values,
        [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)],
        "progress\n{}",
        run.output
    );
}

fn everything() -> Vec<OsString> {
    vec![everything_server().into()]
}

fn python_server() -> Vec<OsString> {
    vec![python().into(), peer_script("py_server.py").into()]
}

fn c_echo(asan: bool) -> Vec<OsString> {
    vec![echo_server(asan).into()]
}

const EVERYTHING_TOOLS: [&str; 7] = [
    "add",
    "admin_echo",
    "ask_name",
    "echo",
    "long_job",
    "slow",
    "whoami",
];

fn c_client_everything(version: &str, asan: bool) {
    let name = format!("everything-{version}");
    let run = run_client(asan, &name, &["--protocol", version], &everything());
    assert_client_run(
        &run,
        version,
        "mcp-tokio-everything",
        &EVERYTHING_TOOLS,
        &["hello from c"],
    );
    let args = [
        "--protocol",
        version,
        "--tool",
        "slow",
        "--arguments",
        r#"{"steps":3}"#,
    ];
    let run = run_client(asan, &format!("{name}-slow"), &args, &everything());
    assert_client_run(
        &run,
        version,
        "mcp-tokio-everything",
        &EVERYTHING_TOOLS,
        &["done after 3 steps"],
    );
    assert_three_steps(&run);
}

fn c_client_python(version: &str, asan: bool) {
    let name = format!("python-{version}");
    let args = [
        "--protocol",
        version,
        "--text",
        "héllo \"quoted\"\n\u{1F600}",
    ];
    let run = run_client(asan, &name, &args, &python_server());
    assert_client_run(
        &run,
        version,
        "py-interop-server",
        &["echo", "slow"],
        &["héllo \"quoted\"\n\u{1F600}"],
    );
    let args = [
        "--protocol",
        version,
        "--tool",
        "slow",
        "--arguments",
        r#"{"steps":3}"#,
    ];
    let run = run_client(asan, &format!("{name}-slow"), &args, &python_server());
    assert_client_run(
        &run,
        version,
        "py-interop-server",
        &["echo", "slow"],
        &["done after 3 steps"],
    );
    assert_three_steps(&run);
}

fn c_client_c_echo(version: &str, asan: bool) {
    let name = format!("c-echo-{version}");
    let run = run_client(asan, &name, &["--protocol", version], &c_echo(asan));
    assert_client_run(
        &run,
        version,
        "c-echo-server",
        &["echo", "slow"],
        &["hello from c"],
    );
    let args = [
        "--protocol",
        version,
        "--tool",
        "slow",
        "--arguments",
        r#"{"steps":3,"step_ms":10}"#,
    ];
    let run = run_client(asan, &format!("{name}-slow"), &args, &c_echo(asan));
    assert_client_run(
        &run,
        version,
        "c-echo-server",
        &["echo", "slow"],
        &["done after 3 steps"],
    );
    assert_three_steps(&run);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_everything_server_legacy() {
    c_client_everything(LEGACY, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_everything_server_modern() {
    c_client_everything(MODERN, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_python_server_legacy() {
    c_client_python(LEGACY, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_python_server_modern() {
    c_client_python(MODERN, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_c_echo_server_legacy() {
    c_client_c_echo(LEGACY, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_c_echo_server_modern() {
    c_client_c_echo(MODERN, false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_everything_server_asan() {
    c_client_everything(LEGACY, true);
    c_client_everything(MODERN, true);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_python_server_asan() {
    c_client_python(LEGACY, true);
    c_client_python(MODERN, true);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_drives_c_echo_server_asan() {
    c_client_c_echo(LEGACY, true);
    c_client_c_echo(MODERN, true);
}

/// The docs' run loops serve the C client in both eras: the guide's (the C block of
/// guide/src/c-api.md) and the header's (the program in mcp.h's opening comment), which
/// scripts/build-c-examples compiles to `docs/c-api-1` and `docs/mcp-h-run-loop`
#[test]
#[ignore = "needs the C examples: run scripts/test-all"]
fn the_docs_run_loops_serve() {
    let docs = examples(false).join("docs");
    for (program, server, text) in [
        ("c-api-1", "hello-server", "hello from C"),
        ("mcp-h-run-loop", "demo", "hello"),
    ] {
        let program = docs.join(program);
        assert!(
            program.is_file(),
            "{} is missing: scripts/build-c-examples compiles it",
            program.display()
        );
        for version in [LEGACY, MODERN] {
            let args = ["--protocol", version, "--tool", "hello"];
            let run = run_client(false, "docs", &args, &[program.clone().into()]);
            assert_client_run(&run, version, server, &["hello"], &[text]);
        }
    }
}

/// The client's failures: a message and a non-zero status, never a hang
fn c_client_failures(asan: bool) {
    // A command that does not exist
    let run = run_client(asan, "no-command", &[], &["/nonexistent/mcp-server".into()]);
    assert_eq!(run.output.status.code(), Some(1), "{}", run.output);
    assert!(run.output.stderr.contains("cannot start"), "{}", run.output);
    // A server that exits at once
    let run = run_client(asan, "exits", &[], &["true".into()]);
    assert_eq!(run.output.status.code(), Some(1), "{}", run.output);
    assert!(run.output.stderr.contains("client: "), "{}", run.output);
    // A server that never answers: the client's own deadline ends the run (status 2)
    let run = run_client(
        asan,
        "silent",
        &["--timeout-ms", "500"],
        &["sleep".into(), "60".into()],
    );
    assert_eq!(run.output.status.code(), Some(2), "{}", run.output);
    assert!(
        run.output.stderr.contains("no result within 500 ms"),
        "{}",
        run.output
    );
    // A tool the server does not have
    let run = run_client(asan, "no-tool", &["--tool", "nope"], &c_echo(asan));
    assert_eq!(run.output.status.code(), Some(1), "{}", run.output);
    assert!(
        run.output.stderr.contains("has no tool nope"),
        "{}",
        run.output
    );
    // Arguments the tool's schema refuses: the library answers for the server
    let args = ["--tool", "slow", "--arguments", r#"{"steps":"many"}"#];
    let run = run_client(asan, "bad-args", &args, &c_echo(asan));
    assert_eq!(run.output.status.code(), Some(1), "{}", run.output);
    // Bad options
    let run = run_client(asan, "usage", &["--arguments", "[1"], &c_echo(asan));
    assert_eq!(run.output.status.code(), Some(1), "{}", run.output);
    assert!(run.output.stderr.contains("usage"), "{}", run.output);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_fails_clearly() {
    c_client_failures(false);
}

#[test]
#[ignore = "needs the C examples and the interop peers: run scripts/test-all"]
fn c_client_fails_clearly_asan() {
    c_client_failures(true);
}

// --- the echo server on the raw wire --------------------------------------------------------------

/// The echo server as a child process, talked to line by line
struct Wire {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<Value>,
    started: Instant,
}

impl Wire {
    fn start(asan: bool, sanitizer: &Sanitizer) -> Self {
        let mut command = Command::new(echo_server(asan));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        sanitizer.apply(&mut command);
        let mut child = command.spawn().expect("starting the echo server");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            started: Instant::now(),
        }
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("writing");
        stdin.write_all(b"\n").expect("writing");
        stdin.flush().expect("flushing");
    }

    /// Reads messages until one satisfies `until`; returns it (all are kept in `seen`)
    fn read_until(&mut self, what: &str, until: impl Fn(&Value) -> bool) -> Value {
        loop {
            let left = TEST_DEADLINE
                .checked_sub(self.started.elapsed())
                .unwrap_or_else(|| panic!("no {what} in time; seen: {:#?}", self.seen));
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no {what}: the server's output ended; seen: {:#?}",
                    self.seen
                )
            });
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            self.seen.push(message.clone());
            if until(&message) {
                return message;
            }
        }
    }

    fn response(&mut self, id: i64) -> Value {
        self.read_until(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// Closes stdin and waits for the server to exit; returns its stderr
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let mut stderr = self.child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            let _ = tx.send(text);
        });
        let deadline = self.started + TEST_DEADLINE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waiting") {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("the echo server did not exit after the end of its input");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stderr = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
        (status, stderr)
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn progress_of(m: &Value, token: &str) -> bool {
    m["method"] == "notifications/progress" && m["params"]["progressToken"] == token
}

fn raw_wire(asan: bool) {
    let sanitizer = Sanitizer::new(asan, "wire");
    let mut wire = Wire::start(asan, &sanitizer);
    wire.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    let init = wire.response(1);
    assert_eq!(init["result"]["protocolVersion"], LEGACY, "{init}");
    assert_eq!(
        init["result"]["serverInfo"]["name"], "c-echo-server",
        "{init}"
    );
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // Bad input gets a parse error; the server goes on
    wire.send("{this is not json");
    let error = wire.read_until("a parse error", |m| m["error"]["code"] == -32700);
    assert!(error["id"].is_null(), "{error}");
    // ...and so do bytes that are not UTF-8, JSON that is no message, and arguments the
    // tool's schema refuses (the library answers those before the C code sees them)
    wire.send_bytes(b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"ping\"}");
    wire.send(r#"{"jsonrpc":"2.0"}"#);
    wire.send(r#"[1,2,3]"#);
    wire.send(r#"{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{"name":"echo","arguments":{"text":5}}}"#);
    let refused = wire.response(91);
    assert!(
        refused["result"]["isError"] == true || refused["error"]["code"] == -32602,
        "{refused}"
    );
    wire.send(r#"{"jsonrpc":"2.0","id":92,"method":"ping"}"#);
    assert_eq!(
        wire.response(92)["result"],
        json!({}),
        "the server still answers"
    );

    // echo, asking for progress: the report precedes the result; the text comes back as sent
    let text = "héllo \"q\" \\ \u{1}\u{1F600}";
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": text}, "_meta": {"progressToken": "p2"}}});
    wire.send(&call.to_string());
    let response = wire.response(2);
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "text", "text": text}]),
        "{response}"
    );
    let reports: Vec<&Value> = wire.seen.iter().filter(|m| progress_of(m, "p2")).collect();
    assert_eq!(
        reports.len(),
        1,
        "one progress report for echo: {:#?}",
        wire.seen
    );
    assert_eq!(reports[0]["params"]["progress"], 1.0);

    // A long slow call, cancelled after its first report: it reports nothing more and is
    // never answered. The next call (4) is read after the server handled the cancellation
    // (one stream, in order); had it not, call 3 would report every 20 ms meanwhile.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 1000, "step_ms": 20}, "_meta": {"progressToken": "p3"}}});
    wire.send(&call.to_string());
    wire.read_until("slow's first report", |m| progress_of(m, "p3"));
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"test"}}"#);
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 5, "step_ms": 30}, "_meta": {"progressToken": "p4"}}});
    wire.send(&call.to_string());
    let response = wire.response(4);
    assert_eq!(
        response["result"]["content"][0]["text"], "done after 5 steps",
        "{response}"
    );
    let first_p4 = wire
        .seen
        .iter()
        .position(|m| progress_of(m, "p4"))
        .expect("call 4 reported progress");
    let late: Vec<&Value> = wire.seen[first_p4..]
        .iter()
        .filter(|m| progress_of(m, "p3"))
        .collect();
    assert!(
        late.is_empty(),
        "the cancelled call went on reporting: {late:#?}"
    );

    // Unknown tools and methods get errors
    wire.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let unknown = wire.response(5);
    assert!(
        unknown["error"]["code"] == -32602 || unknown["result"]["isError"] == true,
        "{unknown}"
    );
    wire.send(r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method"}"#);
    assert_eq!(wire.response(6)["error"]["code"], -32601);

    let seen = wire.seen.clone();
    let (status, stderr) = wire.finish();
    assert!(status.success(), "the server's exit: {status}\n{stderr}");
    assert!(
        !seen.iter().any(|m| m["id"] == 3),
        "the cancelled call was answered: {seen:#?}"
    );
    assert!(stderr.contains("cancelled in step"), "{stderr}");
    assert_server_log_clean(&stderr, &"");
    assert!(stderr.contains("the session closed"), "{stderr}");
    assert!(stderr.contains("echo-server: exiting"), "{stderr}");
    sanitizer.assert_clean(&stderr);
}

#[test]
#[ignore = "needs the C examples: run scripts/test-all"]
fn echo_server_on_the_raw_wire() {
    raw_wire(false);
}

#[test]
#[ignore = "needs the C examples: run scripts/test-all"]
fn echo_server_on_the_raw_wire_asan() {
    raw_wire(true);
}
