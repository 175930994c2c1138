//! The innocent client, and the faults of issue 34 it watches (raw `std::net` clients on
//! plain threads, like the rest of the hostile-client kit)
//!
//! [`Innocent::watch`] starts a well-behaved client calling the 2026 `echo` tool on a fresh
//! connection every [`PERIOD`] with a [`TIMEOUT`] while a fault runs; its [`Report`] says how
//! many calls it made, which failed, and their latencies. A server that keeps serving
//! everyone else while some clients misbehave answers every call, in time.
//!
//! The faults, each with its scale as parameters (the binding suite runs them small, the
//! mcp-interop test `innocent` at the issue's scale against the everything-server
//! processes), against a server with the everything-servers' `echo` (answers `text`) and
//! `slow` (`steps` tenths of a second, a progress report at each):
//!
//! 1. [`responses_nobody_reads`]: slow calls, legacy GET streams and large echoes from
//!    clients with 4 KiB receive buffers that never read;
//! 2. [`clients_that_leave`]: requests whose bodies are cut short and event streams dropped
//!    mid-stream, then a `slow` call that must complete;
//! 3. [`one_source_holds_many_calls`]: many connections each holding a `slow` call; each
//!    must end with its result or a clear refusal (503 with `Retry-After`), none silent past
//!    the client's patience.
//!
//! Self-contained (std, serde_json, socket2), so the mcp-interop crate includes it by path.
//! `INNOCENT_TRACE=1` prints each of the innocent client's calls (latency, failure) to stderr.

#![allow(dead_code)] // each crate that includes this uses the parts it needs

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How often the innocent client calls
pub(crate) const PERIOD: Duration = Duration::from_millis(200);
/// How long it waits for each answer: a call answered later counts as failed
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);
/// The bound on the 99th percentile of its latencies (issue 34: "p99 under 1 s")
pub(crate) const P99_BOUND: Duration = Duration::from_secs(1);

/// A well-behaved client calling `echo` on the server at `addr` every [`PERIOD`], each call
/// on a fresh 2026 connection, until [`report`](Self::report)
/// (dropped without a report, when the test failed first, it stops calling)
pub(crate) struct Innocent {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Outcome>>>,
    /// One watched fault at a time in this process: two hostile loads side by side on the
    /// 2-core machine would measure each other, not the server
    _turn: Turn,
}

/// The process's one watching turn, given back when dropped
struct Turn;

static WATCHING: (std::sync::Mutex<bool>, std::sync::Condvar) =
    (std::sync::Mutex::new(false), std::sync::Condvar::new());

impl Turn {
    fn take() -> Self {
        let (busy, freed) = &WATCHING;
        let mut busy = busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *busy {
            busy = freed
                .wait(busy)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *busy = true;
        Self
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (busy, freed) = &WATCHING;
        *busy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = false;
        freed.notify_one();
    }
}

impl Drop for Innocent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One call of the innocent client: how long it took, and why it failed (if it did)
#[derive(Debug, Clone)]
struct Outcome {
    latency: Duration,
    failure: Option<String>,
}

impl Innocent {
    /// Starts calling (the first call at once; it is made even when the report is asked
    /// for before it began)
    pub(crate) fn watch(addr: SocketAddr) -> Self {
        let turn = Turn::take();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name("innocent".into())
            .spawn(move || {
                let mut outcomes = Vec::new();
                let mut next = Instant::now();
                let mut id = 0_u64;
                // At least one call, however short the fault
                loop {
                    id += 1;
                    let start = Instant::now();
                    let failure = echo(addr, id, TIMEOUT).err();
                    if std::env::var_os("INNOCENT_TRACE").is_some() {
                        eprintln!("innocent {id}: {:?} {failure:?}", start.elapsed());
                    }
                    outcomes.push(Outcome {
                        latency: start.elapsed(),
                        failure,
                    });
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    next += PERIOD;
                    // The next call at its time, or at once when this one took longer.
                    let now = Instant::now();
                    if next > now {
                        thread::sleep(next - now);
                    } else {
                        next = now;
                    }
                }
                outcomes
            })
            .expect("a thread for the innocent client");
        Self {
            stop,
            thread: Some(thread),
            _turn: turn,
        }
    }

    /// Stops calling (the call in progress ends first: within [`TIMEOUT`]) and reports
    pub(crate) fn report(mut self) -> Report {
        self.stop.store(true, Ordering::SeqCst);
        let outcomes = self
            .thread
            .take()
            .expect("reported once")
            .join()
            .expect("the innocent client never panics");
        let mut latencies: Vec<Duration> = outcomes.iter().map(|o| o.latency).collect();
        latencies.sort();
        Report {
            calls: outcomes.len(),
            failures: outcomes
                .iter()
                .enumerate()
                .filter_map(|(i, o)| {
                    o.failure
                        .as_ref()
                        .map(|f| format!("call {} after {:?}: {f}", i + 1, o.latency))
                })
                .collect(),
            max: latencies.last().copied().unwrap_or_default(),
            p99: percentile(&latencies, 99),
        }
    }
}

/// The `pct`th percentile of sorted `values` (nearest rank); zero when there are none
pub(crate) fn percentile(sorted: &[Duration], pct: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// What the innocent client saw
#[derive(Debug, Clone)]
pub(crate) struct Report {
    /// How many calls it made
    pub(crate) calls: usize,
    /// The calls not answered correctly within [`TIMEOUT`], and why
    pub(crate) failures: Vec<String>,
    /// The longest latency
    pub(crate) max: Duration,
    /// The 99th percentile of the latencies (nearest rank: with fewer than 100 calls, the
    /// longest)
    pub(crate) p99: Duration,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} calls, {} failed, max {:?}, p99 {:?}",
            self.calls,
            self.failures.len(),
            self.max,
            self.p99
        )?;
        for failure in self.failures.iter().take(5) {
            write!(f, "\n  {failure}")?;
        }
        Ok(())
    }
}

impl Report {
    /// Whether every call was answered correctly within [`TIMEOUT`] and the p99 is under
    /// `p99_bound`; why not, if not
    pub(crate) fn served_within(&self, p99_bound: Duration) -> Result<(), String> {
        if self.calls == 0 {
            return Err("the innocent client made no call".into());
        }
        if !self.failures.is_empty() || self.p99 >= p99_bound {
            return Err(format!(
                "the innocent client was not served (p99 bound {p99_bound:?}): {self}"
            ));
        }
        Ok(())
    }

    /// Fails the test unless the innocent client was served during `what`: every call
    /// answered correctly within [`TIMEOUT`], p99 under [`P99_BOUND`]
    pub(crate) fn assert_served(&self, what: &str) {
        self.assert_served_within(what, P99_BOUND);
    }

    /// [`assert_served`](Self::assert_served) with another latency bound, for a fault that
    /// makes every client wait by design (the server at its `max_connections`)
    pub(crate) fn assert_served_within(&self, what: &str, p99_bound: Duration) {
        if let Err(why) = self.served_within(p99_bound) {
            panic!("{what}: {why}");
        }
    }
}

/// One 2026 `echo` call on a fresh connection to `addr`, answered with its text within
/// `limit`; why not, if not
pub(crate) fn echo(addr: SocketAddr, id: u64, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    let text = format!("innocent {id}");
    let (headers, body) = modern_call(id, "echo", json!({ "text": text }), false);
    let mut stream =
        TcpStream::connect_timeout(&addr, limit).map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    stream
        .set_write_timeout(Some(limit))
        .map_err(|e| e.to_string())?;
    let request = request_bytes(addr, "POST", &headers, &body, true);
    stream
        .write_all(&request)
        .map_err(|e| format!("send: {e}"))?;
    let bytes = read_until(&mut stream, deadline, |_| false);
    let (status, _, body) =
        parse(&bytes).ok_or_else(|| format!("no whole response: {}", lossy(&bytes)))?;
    if status != 200 {
        return Err(format!("status {status}: {}", lossy(&body)));
    }
    let answered = messages(&body)
        .iter()
        .any(|m| m["id"] == id && m["result"]["content"][0]["text"] == text.as_str());
    if answered {
        Ok(())
    } else {
        Err(format!("not the echo: {}", lossy(&body)))
    }
}

fn lossy(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]);
    text.into_owned()
}

/// The headers and body of a 2026 `tools/call` of `tool` with `arguments`; `progress` asks
/// for progress (a `slow` call's first report then opens its event stream at once)
pub(crate) fn modern_call(
    id: u64,
    tool: &str,
    arguments: Value,
    progress: bool,
) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "innocent", "version": "1"},
    });
    if progress {
        meta["progressToken"] = json!(format!("p{id}"));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta}});
    let headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", tool.to_owned()),
    ];
    (headers, body.to_string().into_bytes())
}

/// A whole request for `/mcp` at `addr`; `close` asks the server to close after it
pub(crate) fn request_bytes(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
    close: bool,
) -> Vec<u8> {
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Reads until the server closes the connection, `deadline` passes, or `enough` holds for
/// what arrived; what arrived
pub(crate) fn read_until(
    stream: &mut TcpStream,
    deadline: Instant,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return bytes;
        };
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return bytes;
        }
        match stream.read(&mut buf) {
            Ok(0) => return bytes,
            Ok(n) => {
                bytes.extend_from_slice(&buf[..n]);
                if enough(&bytes) {
                    return bytes;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Timed out, or reset
            Err(_) => return bytes,
        }
    }
}

/// The status, head and body (de-chunked; up to what arrived) of the response `bytes`
/// begin with, once its head is whole
pub(crate) fn parse(bytes: &[u8]) -> Option<(u16, String, Vec<u8>)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let status = head.get(9..12)?.parse().ok()?;
    let rest = &bytes[end + 4..];
    let chunked = head.lines().any(|l| {
        l.split_once(':').is_some_and(|(n, v)| {
            n.trim().eq_ignore_ascii_case("transfer-encoding") && v.trim() == "chunked"
        })
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Some((status, head, body))
}

/// The value of header `name` in `head`
pub(crate) fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The data of the complete chunks in `bytes`
fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let Some(size) = std::str::from_utf8(&bytes[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
        else {
            break;
        };
        if size == 0 || bytes.len() < end + 2 + size + 2 {
            break;
        }
        data.extend_from_slice(&bytes[end + 2..end + 2 + size]);
        bytes = &bytes[end + 2 + size + 2..];
    }
    data
}

/// The JSON-RPC messages of a body: a JSON one, or the data of SSE events
pub(crate) fn messages(body: &[u8]) -> Vec<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return vec![v];
    }
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// A connection to `addr` whose receive buffer is 4 KiB (set before connecting, so the
/// window it offers stays small)
pub(crate) fn small_window(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.set_recv_buffer_size(4096)?;
    socket.connect_timeout(&addr.into(), TIMEOUT)?;
    let stream: TcpStream = socket.into();
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    Ok(stream)
}

/// A connection to `addr` that can write without waiting long
fn plain(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    Ok(stream)
}

/// Case 1's scale: how many of each response nobody reads
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unread {
    /// 2026 `slow` calls (default steps: half a second each) with progress
    pub(crate) slow: usize,
    /// Legacy (2025) sessions' GET streams
    pub(crate) streams: usize,
    /// 2026 `echo` calls of `echo_bytes` of text each
    pub(crate) echoes: usize,
    pub(crate) echo_bytes: usize,
}

/// The issue's case 1: 100 slow calls, 30 legacy GET streams, 30 echoes of 2 MiB
pub(crate) const UNREAD_AT_SCALE: Unread = Unread {
    slow: 100,
    streams: 30,
    echoes: 30,
    echo_bytes: 2 * 1024 * 1024,
};

/// Case 1: sends `scale`'s requests from clients with 4 KiB receive buffers that never read
/// their responses; the connections, for the caller to hold while the innocent watches
/// (dropping them closes them). Panics when the server refuses a connection or a request.
pub(crate) fn responses_nobody_reads(addr: SocketAddr, scale: Unread) -> Vec<TcpStream> {
    let mut held = Vec::new();
    let mut id = 1000;
    for _ in 0..scale.slow {
        id += 1;
        let (headers, body) = modern_call(id, "slow", json!({}), true);
        let mut stream = small_window(addr).expect("connects");
        stream
            .write_all(&request_bytes(addr, "POST", &headers, &body, false))
            .expect("the slow call is sent");
        held.push(stream);
    }
    for _ in 0..scale.streams {
        let sid = legacy_session(addr);
        let headers = [
            ("Accept", "text/event-stream".to_owned()),
            ("Mcp-Session-Id", sid),
            ("MCP-Protocol-Version", "2025-11-25".to_owned()),
        ];
        let mut stream = small_window(addr).expect("connects");
        stream
            .write_all(&request_bytes(addr, "GET", &headers, b"", false))
            .expect("the GET is sent");
        held.push(stream);
    }
    let text = "e".repeat(scale.echo_bytes);
    for _ in 0..scale.echoes {
        id += 1;
        let (headers, body) = modern_call(id, "echo", json!({ "text": text }), false);
        let mut stream = small_window(addr).expect("connects");
        stream
            .write_all(&request_bytes(addr, "POST", &headers, &body, false))
            .expect("the large echo is sent");
        held.push(stream);
    }
    held
}

/// A fresh, initialized 2025 session's id
fn legacy_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "unread", "version": "1"}}});
    let json_headers = [
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
    ];
    let (status, head, body) = exchange(addr, "POST", &json_headers, init.to_string().as_bytes());
    assert_eq!(status, 200, "initialize: {}", lossy(&body));
    let sid = header(&head, "mcp-session-id")
        .expect("a session id")
        .to_owned();
    let mut headers = json_headers.to_vec();
    headers.push(("Mcp-Session-Id", sid.clone()));
    headers.push(("MCP-Protocol-Version", "2025-11-25".to_owned()));
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, body) = exchange(addr, "POST", &headers, initialized);
    assert_eq!(status, 202, "initialized: {}", lossy(&body));
    sid
}

/// One request on a connection of its own, its whole response read within [`TIMEOUT`]
fn exchange(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut stream = plain(addr).expect("connects");
    stream
        .write_all(&request_bytes(addr, method, headers, body, true))
        .expect("the request is sent");
    let bytes = read_until(&mut stream, Instant::now() + TIMEOUT, |_| false);
    parse(&bytes).unwrap_or_else(|| panic!("no response within {TIMEOUT:?}: {}", lossy(&bytes)))
}

/// Case 2's scale
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leaving {
    /// Requests whose bodies are cut short (the client closes half way)
    pub(crate) cut: usize,
    /// `slow` calls (5 s each) whose event streams the client drops once it began
    pub(crate) dropped: usize,
}

/// The issue's case 2: 1,000 bodies cut short, 600 event streams dropped
pub(crate) const LEAVING_AT_SCALE: Leaving = Leaving {
    cut: 1000,
    dropped: 600,
};

/// How long case 2's last `slow` call (half a second of work) may take: it must complete
pub(crate) const AFTER_PATIENCE: Duration = Duration::from_secs(5);

/// Case 2: `scale.cut` requests whose bodies stop half way (the client closes), and
/// `scale.dropped` 5 s `slow` calls whose clients close once their event stream began (or
/// after a second, when it has not); then a `slow` call of half a second made right after
/// must complete within [`AFTER_PATIENCE`]: why not, if not
pub(crate) fn clients_that_leave(addr: SocketAddr, scale: Leaving) -> Result<Duration, String> {
    let (headers, body) = modern_call(1, "echo", json!({"text": "x".repeat(4000)}), false);
    let whole = request_bytes(addr, "POST", &headers, &body, false);
    let cut_at = whole.len() - body.len() / 2;
    for _ in 0..scale.cut {
        let mut stream = plain(addr).map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(&whole[..cut_at])
            .map_err(|e| format!("a cut-short body: {e}"))?;
        // Closed half way through the body
    }
    let mut open = Vec::new();
    for i in 0..scale.dropped {
        let id = 2000 + i as u64;
        let (headers, body) = modern_call(id, "slow", json!({"steps": 50}), true);
        let mut stream = plain(addr).map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(&request_bytes(addr, "POST", &headers, &body, false))
            .map_err(|e| format!("a slow call: {e}"))?;
        open.push(stream);
    }
    // Each is dropped once its event stream carries a first event (mid-stream), or at a
    // second in all for those that have not begun.
    let began = Instant::now() + Duration::from_secs(1);
    for mut stream in open {
        read_until(&mut stream, began, |b| {
            parse(b).is_some_and(|(_, _, body)| !messages(&body).is_empty())
        });
    }
    let start = Instant::now();
    let (headers, body) = modern_call(3000, "slow", json!({"steps": 5}), false);
    let mut stream = plain(addr).map_err(|e| format!("connect: {e}"))?;
    stream
        .write_all(&request_bytes(addr, "POST", &headers, &body, true))
        .map_err(|e| format!("the slow call after: {e}"))?;
    let bytes = read_until(&mut stream, start + AFTER_PATIENCE, |_| false);
    let done = parse(&bytes).is_some_and(|(status, _, body)| {
        status == 200
            && messages(&body).iter().any(|m| {
                m["id"] == 3000 && m["result"]["content"][0]["text"] == "done after 5 steps"
            })
    });
    if done {
        Ok(start.elapsed())
    } else {
        Err(format!(
            "the slow call made right after did not complete within {AFTER_PATIENCE:?}: {}",
            lossy(&bytes)
        ))
    }
}

/// Case 3's scale
#[derive(Debug, Clone, Copy)]
pub(crate) struct Holding {
    /// Connections, each holding one `slow` call
    pub(crate) calls: usize,
    /// Each call's `steps` (tenths of a second)
    pub(crate) steps: u64,
    /// How long each client waits for its answer
    pub(crate) patience: Duration,
}

/// The issue's case 3: 400 calls of 5 s, 20 s of patience
pub(crate) const HOLDING_AT_SCALE: Holding = Holding {
    calls: 400,
    steps: 50,
    patience: Duration::from_secs(20),
};

/// How case 3's calls ended
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    /// Answered with their result
    pub(crate) results: usize,
    /// Refused clearly: 503 with `Retry-After` and a JSON-RPC error, and their latencies
    pub(crate) refusals: Vec<Duration>,
    /// No answer within the patience (neither a result nor an error)
    pub(crate) silent: usize,
    /// Anything else, and what
    pub(crate) other: Vec<String>,
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut refusals = self.refusals.clone();
        refusals.sort();
        write!(
            f,
            "{} results, {} refused (p99 {:?}), {} silent, {} other",
            self.results,
            self.refusals.len(),
            percentile(&refusals, 99),
            self.silent,
            self.other.len()
        )?;
        for other in self.other.iter().take(3) {
            write!(f, "\n  {other}")?;
        }
        Ok(())
    }
}

impl Held {
    /// Whether every call ended with its result or a clear, immediate refusal (the
    /// refusals' p99 under [`P99_BOUND`]); why not, if not
    pub(crate) fn every_call_answered(&self) -> Result<(), String> {
        let mut refusals = self.refusals.clone();
        refusals.sort();
        if self.silent > 0 || !self.other.is_empty() || percentile(&refusals, 99) >= P99_BOUND {
            return Err(format!("not every held call was answered: {self}"));
        }
        Ok(())
    }
}

/// Case 3: `scale.calls` connections, each with a 2026 `slow` call of `scale.steps` (with
/// progress), all sent at once; how each ended within `scale.patience`
pub(crate) fn one_source_holds_many_calls(addr: SocketAddr, scale: Holding) -> Held {
    let threads: Vec<_> = (0..scale.calls)
        .map(|i| {
            let id = 5000 + i as u64;
            thread::Builder::new()
                .name("holding".into())
                .stack_size(128 * 1024)
                .spawn(move || held_call(addr, id, scale))
                .expect("a thread per held call")
        })
        .collect();
    let mut held = Held::default();
    for thread in threads {
        match thread.join().expect("a held call never panics") {
            Ending::Result => held.results += 1,
            Ending::Refused(after) => held.refusals.push(after),
            Ending::Silent => held.silent += 1,
            Ending::Other(what) => held.other.push(what),
        }
    }
    held
}

enum Ending {
    Result,
    Refused(Duration),
    Silent,
    Other(String),
}

fn held_call(addr: SocketAddr, id: u64, scale: Holding) -> Ending {
    let start = Instant::now();
    let (headers, body) = modern_call(id, "slow", json!({ "steps": scale.steps }), true);
    let Ok(mut stream) = plain(addr) else {
        return Ending::Other("could not connect".into());
    };
    if stream
        .write_all(&request_bytes(addr, "POST", &headers, &body, true))
        .is_err()
    {
        return Ending::Other("could not send".into());
    }
    let ended = |bytes: &[u8]| {
        parse(bytes).is_some_and(|(status, head, body)| {
            if status != 200 {
                // A refusal: whole at its Content-Length, or (an open exchange's answer,
                // written chunked) once its JSON-RPC error has arrived
                let length = header(&head, "content-length").and_then(|l| l.parse().ok());
                return length.map_or_else(
                    || messages(&body).iter().any(|m| m["id"] == id),
                    |l: usize| body.len() >= l,
                );
            }
            messages(&body)
                .iter()
                .any(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
        })
    };
    let bytes = read_until(&mut stream, start + scale.patience, ended);
    let after = start.elapsed();
    let Some((status, head, body)) = parse(&bytes) else {
        return if bytes.is_empty() && after >= scale.patience {
            Ending::Silent
        } else {
            Ending::Other(format!("after {after:?}: {}", lossy(&bytes)))
        };
    };
    let messages = messages(&body);
    let last = messages.iter().find(|m| m["id"] == id);
    match (status, last) {
        (200, Some(m))
            if m["result"]["content"][0]["text"] == format!("done after {} steps", scale.steps) =>
        {
            Ending::Result
        }
        (503, Some(m))
            if m["error"]["code"].is_i64()
                && header(&head, "retry-after")
                    .and_then(|r| r.parse::<u64>().ok())
                    .is_some_and(|r| r >= 1) =>
        {
            Ending::Refused(after)
        }
        (200, None) if after >= scale.patience => Ending::Silent,
        _ => Ending::Other(format!("after {after:?}: {status} {}", lossy(&body))),
    }
}
