//! Cross-crate and interop tests of the workspace (not published)
//!
//! The interop tests (`tests/interop/`) talk to the official MCP SDKs over real stdio pipes:
//! the Python SDK's client and `MCPServer`, the TypeScript SDK's client and
//! `@modelcontextprotocol/server-everything`. They are `#[ignore]`d, so a plain
//! `cargo test --workspace` needs nothing but Rust; `scripts/test-all` installs the pinned
//! peers (`scripts/interop-setup`) and runs them with `--include-ignored`, where a missing
//! peer is a failure, not a skip. The matrix (`tests/matrix/`) runs each binding's client
//! against each binding's everything-server, over stdio and Streamable HTTP, in both eras.
//!
//! This library holds what those tests share: where the peers are ([`python`],
//! [`node_modules`], [`everything_server`], [`peer_script`]) and running a peer process to the
//! end under a deadline, killing its whole process group whatever happens ([`run_peer`]).

pub mod hostile;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::Value;

/// How long one interop test may take before it is failed (and its processes killed)
pub const TEST_DEADLINE: Duration = Duration::from_secs(60);

/// The prefix of the line a peer script prints its JSON summary on
pub const SUMMARY_PREFIX: &str = "INTEROP-SUMMARY ";

const SETUP_HINT: &str = "run `eval \"$(scripts/interop-setup)\"` first (scripts/test-all does)";

fn env_path(name: &str, what: &str) -> PathBuf {
    let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
        panic!("{name} is not set: it names {what}; {SETUP_HINT}");
    };
    let path = PathBuf::from(value);
    assert!(
        path.exists(),
        "{name}={} does not exist ({what}); {SETUP_HINT}",
        path.display()
    );
    path
}

/// The Python of the venv holding the official Python SDK (`MCP_INTEROP_PYTHON`)
///
/// # Panics
/// When the variable is unset or names nothing: the interop tests fail without their peers.
pub fn python() -> PathBuf {
    env_path(
        "MCP_INTEROP_PYTHON",
        "the python of the venv with the pinned `mcp` package",
    )
}

/// The `node_modules` folder holding the TypeScript SDK and server-everything
/// (`MCP_INTEROP_NODE_MODULES`)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn node_modules() -> PathBuf {
    env_path(
        "MCP_INTEROP_NODE_MODULES",
        "the node_modules folder of tests/peers (npm ci)",
    )
}

/// The `mcp-server-everything` launcher of the npm package
/// `@modelcontextprotocol/server-everything`
///
/// # Panics
/// When it is not installed.
pub fn server_everything() -> PathBuf {
    let bin = node_modules().join(".bin/mcp-server-everything");
    assert!(bin.exists(), "{} is missing; {SETUP_HINT}", bin.display());
    bin
}

/// The `mcp-server-filesystem` launcher of the npm package
/// `@modelcontextprotocol/server-filesystem` (the reference filesystem server)
///
/// # Panics
/// When it is not installed.
pub fn server_filesystem() -> PathBuf {
    let bin = node_modules().join(".bin/mcp-server-filesystem");
    assert!(bin.exists(), "{} is missing; {SETUP_HINT}", bin.display());
    bin
}

/// Our `everything-server` example binary (`MCP_INTEROP_SERVER`; scripts/test-all builds it)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn everything_server() -> PathBuf {
    env_path(
        "MCP_INTEROP_SERVER",
        "the mcp-sansio-tokio everything-server example binary \
         (`cargo build -p mcp-sansio-tokio --example everything-server`, then target/debug/examples/everything-server)",
    )
}

/// Our `everything-server-blocking` example binary, the mcp-sansio-blocking twin of
/// [`everything_server`] (`MCP_INTEROP_SERVER_BLOCKING`; scripts/test-all builds it)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn everything_server_blocking() -> PathBuf {
    env_path(
        "MCP_INTEROP_SERVER_BLOCKING",
        "the mcp-sansio-blocking everything-server-blocking example binary \
         (`cargo build -p mcp-sansio-blocking --example everything-server-blocking`)",
    )
}

/// Our `everything-server-async-std` example binary (`MCP_INTEROP_SERVER_ASYNC_STD`;
/// scripts/interop-setup builds it)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn everything_server_async_std() -> PathBuf {
    env_path(
        "MCP_INTEROP_SERVER_ASYNC_STD",
        "the mcp-sansio-async-std everything-server-async-std example binary \
         (`cargo build -p mcp-sansio-async-std --example everything-server-async-std`)",
    )
}

/// One of our everything-server examples built with `--release`: `name` is
/// `everything-server`, `everything-server-async-std` or `everything-server-blocking`
/// (`MCP_INTEROP_RELEASE_EXAMPLES` names their folder; scripts/interop-setup builds them).
/// The test `innocent` measures them at the scale of issue 34, as the issue did: a debug
/// build spends some 0.4 s of CPU on one 2 MiB echo.
///
/// # Panics
/// When the variable is unset or the folder holds no such binary.
pub fn release_example(name: &str) -> PathBuf {
    let dir = env_path(
        "MCP_INTEROP_RELEASE_EXAMPLES",
        "the folder of the everything-server examples built with `cargo build --release`",
    );
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built (`cargo build --release --example {name}`); {SETUP_HINT}",
        path.display()
    );
    path
}

/// Our `axum-app` example binary: the tokio everything-server's endpoint mounted at `/mcp`
/// in an axum app beside `GET /health` (`MCP_INTEROP_AXUM_APP`; scripts/interop-setup
/// builds it)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn axum_app() -> PathBuf {
    env_path(
        "MCP_INTEROP_AXUM_APP",
        "the mcp-sansio-tokio axum-app example binary \
         (`cargo build -p mcp-sansio-tokio --example axum-app`)",
    )
}

/// Our `weather` example binary: the spec's weather server written with the macros
/// (`MCP_INTEROP_WEATHER`; scripts/interop-setup builds it)
///
/// # Panics
/// When the variable is unset or names nothing.
pub fn weather_example() -> PathBuf {
    env_path(
        "MCP_INTEROP_WEATHER",
        "the mcp-sansio-tokio weather example binary \
         (`cargo build -p mcp-sansio-tokio --example weather`)",
    )
}

/// Starts the [`axum_app`] on a port the OS picks; returns the process and its MCP URL
/// (`http://127.0.0.1:PORT/mcp`)
///
/// # Panics
/// When it does not say where it serves within 20 seconds.
pub fn axum_app_server() -> (ServerProcess, String) {
    let mut command = Command::new(axum_app());
    command.arg("127.0.0.1:0");
    let (server, url) = serving(command);
    let url = url.split_whitespace().next().unwrap_or_default().to_owned();
    (server, url)
}

/// Starts one of our everything-servers (`binary`) over Streamable HTTP on a port the OS
/// picks; returns the process and its URL
///
/// # Panics
/// When it does not say where it serves within 20 seconds.
pub fn everything_http_server(binary: &std::path::Path) -> (ServerProcess, String) {
    everything_http_server_with(binary, &[])
}

/// [`everything_http_server`] with more arguments (`--otlp URL`, ...)
///
/// # Panics
/// When it does not say where it serves within 20 seconds.
pub fn everything_http_server_with(
    binary: &std::path::Path,
    args: &[&str],
) -> (ServerProcess, String) {
    let mut command = Command::new(binary);
    command.args(["--http", "127.0.0.1:0"]).args(args);
    serving(command)
}

/// Starts `command`, one of our everything-servers, and waits until it says where it serves
fn serving(command: Command) -> (ServerProcess, String) {
    let server = ServerProcess::start(command);
    let line = server.wait_for_line("serving MCP at ", Duration::from_secs(20));
    let url = line
        .split("serving MCP at ")
        .nth(1)
        .expect("the URL follows")
        .trim()
        .to_owned();
    (server, url)
}

/// Starts one of our everything-servers at `https://127.0.0.1:<free port>/mcp`, presenting
/// the certificate chain and key of the PEM files `chain` and `key`, and waits until it
/// says where it serves
///
/// # Panics
/// If the server does not start or print its URL within 20 s.
pub fn everything_https_server(
    binary: &std::path::Path,
    chain: &std::path::Path,
    key: &std::path::Path,
) -> (ServerProcess, String) {
    let mut command = Command::new(binary);
    command
        .arg("--https")
        .arg("127.0.0.1:0")
        .arg(chain)
        .arg(key);
    serving(command)
}

/// Asserts the scenario of `py_client.py` and `ts_client.mjs` against one of our
/// everything-servers, which calls itself `server_name`
///
/// # Panics
/// When the summary differs from what the server does (showing the summary and the output).
pub fn assert_everything_scenario(
    s: &Value,
    server_name: &str,
    version: &str,
    output: &PeerOutput,
) {
    let ctx = format!("\nsummary: {s:#}\n{output}");
    assert_eq!(s["protocol_version"], version, "negotiated version{ctx}");
    assert_eq!(s["server_name"], server_name, "server name{ctx}");
    assert_eq!(
        s["tools"],
        serde_json::json!([
            "add",
            "admin_echo",
            "ask_name",
            "echo",
            "long_job",
            "slow",
            "whoami"
        ]),
        "tools/list{ctx}"
    );

    let echo = &s["echo"];
    assert_eq!(echo["is_error"], false, "echo{ctx}");
    let echoed = echo["texts"][0].as_str().unwrap_or_default();
    assert!(echoed.starts_with("hello from "), "echo text{ctx}");

    assert_eq!(
        s["add"],
        serde_json::json!({"texts": ["5.5"], "is_error": false}),
        "add{ctx}"
    );

    let slow = &s["slow"];
    assert_eq!(
        slow["texts"],
        serde_json::json!(["done after 3 steps"]),
        "slow{ctx}"
    );
    let progress = slow["progress"].as_array().expect("progress list");
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect();
    assert_eq!(
        values,
        [1.0, 2.0, 3.0],
        "every progress value, in order{ctx}"
    );
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["total"].as_f64(), Some(3.0), "progress total{ctx}");
        assert_eq!(
            p["message"],
            format!("step {} of 3", i + 1),
            "progress message{ctx}"
        );
    }

    assert_eq!(
        s["static"],
        serde_json::json!([{"uri": "test://static-text", "text": "Hello from a static resource"}]),
        "resources/read static{ctx}"
    );
    assert_eq!(
        s["template"],
        serde_json::json!([{"uri": "test://template/42/data", "text": "Data for 42"}]),
        "resources/read template{ctx}"
    );
    assert_eq!(
        s["prompt"],
        serde_json::json!([{"role": "user", "text": "Say hello to Ada."}]),
        "prompts/get{ctx}"
    );

    let unknown = &s["unknown_tool"];
    let failed = unknown["error"]["code"] == -32602 || unknown["is_error"] == true;
    assert!(failed, "an unknown tool must fail (-32602 or isError){ctx}");
}

/// A helper script in `tests/peers/`
///
/// # Panics
/// When it is missing.
pub fn peer_script(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join(name);
    assert!(path.exists(), "{} is missing", path.display());
    path
}

/// What a peer process did
#[derive(Debug)]
pub struct PeerOutput {
    /// How it ended
    pub status: ExitStatus,
    /// Everything it wrote to stdout
    pub stdout: String,
    /// Everything it wrote to stderr
    pub stderr: String,
}

impl PeerOutput {
    /// The JSON object on the peer's summary line
    ///
    /// # Panics
    /// When there is no summary line or it is not JSON (showing both outputs).
    pub fn summary(&self) -> Value {
        let Some(line) = self
            .stdout
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(SUMMARY_PREFIX))
        else {
            panic!("the peer printed no summary line\n{self}");
        };
        serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("the summary line is not JSON ({e})\n{self}"))
    }
}

impl std::fmt::Display for PeerOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Kills a process group when dropped (the peer, and whatever it started)
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // ESRCH (the group is already gone) is the usual case.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

/// Reads a pipe to its end on a thread; the receiver gets the text
fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// The text of a drained pipe; a process outside the group (a grandchild in a session of its
/// own) may still hold the pipe open, so this waits a little, not forever
fn collect(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "(the pipe stayed open: a process outside the group holds it)".into())
}

/// Runs a peer process to its end, in a process group of its own, with stdin closed
///
/// When it has not ended by `deadline`, the whole group is killed and the test fails with
/// what it printed. Whatever happens (a normal end, a panic), the group is killed afterwards,
/// so a server the peer started cannot outlive the test.
///
/// # Panics
/// When the process does not start or misses the deadline.
pub fn run_peer(mut command: Command, deadline: Duration) -> PeerOutput {
    use std::os::unix::process::CommandExt;

    command
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {command:?}: {e}"));
    let guard = GroupGuard(i32::try_from(child.id()).ok().and_then(Pid::from_raw));
    let stdout = drain(child.stdout.take().expect("piped"));
    let stderr = drain(child.stderr.take().expect("piped"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting on the peer") {
            break Some(status);
        }
        if started.elapsed() >= deadline {
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    // Ends every process of the group, which also closes the pipes the drains read.
    drop(guard);
    let timed_out = status.is_none();
    let status = status.unwrap_or_else(|| child.wait().expect("waiting on the killed peer"));
    let output = PeerOutput {
        status,
        stdout: collect(&stdout),
        stderr: collect(&stderr),
    };
    assert!(
        !timed_out,
        "{command:?} did not end within {deadline:?}; killed it\n{output}"
    );
    output
}

/// A server process listening on a port, in a process group of its own; the whole group is
/// killed (and the child reaped) when this is dropped
pub struct ServerProcess {
    child: std::process::Child,
    _group: GroupGuard,
    lines: mpsc::Receiver<String>,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ServerProcess {
    /// Starts `command` with stdin closed, stdout discarded and stderr read line by line
    ///
    /// # Panics
    /// When the process does not start.
    pub fn start(mut command: Command) -> Self {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;

        command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {command:?}: {e}"));
        let group = GroupGuard(i32::try_from(child.id()).ok().and_then(Pid::from_raw));
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            _group: group,
            lines,
        }
    }

    /// The process id (its `/proc/<id>/status` says how much memory it holds)
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The first stderr line containing `needle`, waiting up to `timeout`
    ///
    /// # Panics
    /// When no such line comes in time.
    pub fn wait_for_line(&self, needle: &str, timeout: Duration) -> String {
        let started = Instant::now();
        let mut seen = Vec::new();
        while let Some(left) = timeout.checked_sub(started.elapsed()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => seen.push(line),
                Err(_) => break,
            }
        }
        panic!(
            "the server printed no line with `{needle}` within {timeout:?}; stderr so far:\n{}",
            seen.join("\n")
        );
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(pid) = self._group.0 {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago on 127.0.0.1, for a server that cannot bind port 0
///
/// # Panics
/// When no port can be bound.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding 127.0.0.1:0")
        .port()
}

/// A test CA and a server certificate it signed for 127.0.0.1, the chain and key written to
/// files for the server (removed when dropped)
pub struct Pki {
    /// The CA certificate (PEM), for the clients to trust
    pub ca: String,
    /// The server's chain (PEM file)
    pub chain: PathBuf,
    /// The server's key (PEM file)
    pub key: PathBuf,
}

impl Pki {
    /// A fresh CA and certificate
    ///
    /// # Panics
    /// When the files cannot be written.
    #[must_use]
    pub fn new() -> Self {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // Distinct names: with rcgen's one default name for both, OpenSSL takes the leaf
        // for self-signed.
        params
            .distinguished_name
            .push(DnType::CommonName, "mcp-interop test CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        leaf.distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        let leaf = leaf.signed_by(&key, &ca).unwrap();
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir();
        let stem = format!("mcp-interop-{}-{n}", std::process::id());
        let chain = dir.join(format!("{stem}-chain.pem"));
        let key_file = dir.join(format!("{stem}-key.pem"));
        std::fs::write(&chain, format!("{}{}", leaf.pem(), ca.pem())).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        Self {
            ca: ca.pem(),
            chain,
            key: key_file,
        }
    }
}

impl Default for Pki {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.chain);
        let _ = std::fs::remove_file(&self.key);
    }
}

/// The Python SDK's `MCPServer` (`tests/peers/py_server.py`) over Streamable HTTP on a free
/// loopback port, under uvicorn with TLS when `tls` is given; returns the running process
/// (killed when dropped) and its URL, once it accepts connections
///
/// # Panics
/// When it does not start.
#[must_use]
pub fn python_http_server(tls: Option<&Pki>) -> (ServerProcess, String) {
    let port = free_port();
    let mut command = Command::new(python());
    command.arg(peer_script("py_server.py"));
    match tls {
        Some(pki) => {
            command
                .arg("--https")
                .arg(port.to_string())
                .arg(&pki.chain)
                .arg(&pki.key);
        }
        None => {
            command.arg("--http").arg(port.to_string());
        }
    }
    let server = ServerProcess::start(command);
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    (server, format!("{scheme}://127.0.0.1:{port}/mcp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_peer_collects_output_and_the_summary() {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "echo noise; echo 'INTEROP-SUMMARY {\"ok\": true}'; echo oops >&2",
        ]);
        let output = run_peer(command, Duration::from_secs(10));
        assert!(output.status.success());
        assert_eq!(output.summary(), serde_json::json!({"ok": true}));
        assert_eq!(output.stderr, "oops\n");
    }

    #[test]
    fn run_peer_kills_the_whole_group_at_the_deadline() {
        // The shell starts a grandchild, prints its pid and waits on it: both must die.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & echo $!; wait"]);
        let started = Instant::now();
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_peer(command, Duration::from_millis(500))
        }))
        .expect_err("a peer that misses its deadline fails the test");
        assert!(started.elapsed() < Duration::from_secs(10));
        let message = panic.downcast_ref::<String>().expect("a formatted message");
        assert!(message.contains("did not end within"), "{message}");
        let grandchild: i32 = message
            .split("--- stdout ---\n")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .and_then(|line| line.trim().parse().ok())
            .unwrap_or_else(|| panic!("no pid in {message}"));
        // Dead means no such process, or a zombie that init has not reaped yet.
        let dead = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/stat")).map_or(true, |stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
            })
        };
        let gone = (0..250).any(|_| {
            thread::sleep(Duration::from_millis(20));
            dead()
        });
        assert!(gone, "the grandchild {grandchild} outlived the deadline");
    }
}
