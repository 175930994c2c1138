//! The hostile-client kit: raw `std::net` clients that misbehave (a head that never
//! completes, a body that never ends, a connection that idles, more connections than the
//! server takes, header fields the RFCs forbid) and the checks of what a server must do
//! about each; plain functions on plain threads, so every binding's suite runs them as they
//! are. Nothing here measures speed: each check waits for an outcome within a generous bound.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long any check waits for the server before it fails: far longer than the deadlines
/// the suite configures, so a slow machine passes and a server that holds on fails
pub(crate) const BOUND: Duration = Duration::from_secs(15);

/// What became of a connection the server was expected to end
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The server closed it after sending these bytes (maybe none)
    Closed(Vec<u8>),
    /// It was still open at the bound, after these bytes
    Open(Vec<u8>),
}

impl Ended {
    /// The status of the response the bytes begin with, if any
    pub(crate) fn status(&self) -> Option<u16> {
        let (Self::Closed(bytes) | Self::Open(bytes)) = self;
        let text = std::str::from_utf8(bytes.get(..12)?).ok()?;
        text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
    }

    pub(crate) fn is_closed(&self) -> bool {
        matches!(self, Self::Closed(_))
    }
}

/// A connection to the server at `addr`
pub(crate) fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connects");
    stream.set_nodelay(true).unwrap();
    stream
}

/// Reads until the server closes the connection (or resets it) or `BOUND` passes
pub(crate) fn until_closed(stream: &mut TcpStream) -> Ended {
    let start = Instant::now();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < BOUND {
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return Ended::Closed(bytes),
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Reset: the server closed with our bytes unread
            Err(_) => return Ended::Closed(bytes),
        }
    }
    Ended::Open(bytes)
}

/// The head of a request for `/mcp` at `addr` with these extra header lines (raw bytes,
/// each ending in CRLF), up to and including the blank line
fn request_head(addr: SocketAddr, method: &str, extra: &[u8], length: usize) -> Vec<u8> {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n"
    )
    .into_bytes();
    head.extend_from_slice(extra);
    head.extend_from_slice(b"\r\n");
    head
}

/// Reads one whole response with a `Content-Length` body: (status, head text, body); `None`
/// when the connection closed or `limit` passed first
pub(crate) fn response(stream: &mut TcpStream, limit: Duration) -> Option<(u16, String, Vec<u8>)> {
    let start = Instant::now();
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(end) = all.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&all[..end]).into_owned();
            let status = head.get(9..12).and_then(|s| s.parse().ok())?;
            let length = head
                .lines()
                .find_map(|l| {
                    let (n, v) = l.split_once(':')?;
                    n.trim()
                        .eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if all.len() >= end + 4 + length {
                return Some((status, head, all[end + 4..end + 4 + length].to_vec()));
            }
        }
        let left = limit.checked_sub(start.elapsed())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None;
            }
            Err(_) => return None,
        }
    }
}

const PING: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A complete request the server answers at once (a ping without a session: an error
/// response, whole, with a length), keeping the connection open
pub(crate) fn quick_request(addr: SocketAddr) -> Vec<u8> {
    let mut bytes = request_head(addr, "POST", b"", PING.len());
    bytes.extend_from_slice(PING);
    bytes
}

/// Item 3: a request head that stops half way gets 408 and the connection closes after the
/// server's header-read deadline (its `header_read_timeout` well under `BOUND`)
pub(crate) fn an_unfinished_head_gets_408_and_the_connection_closes(addr: SocketAddr) {
    let mut stream = connect(addr);
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        .unwrap();
    let ended = until_closed(&mut stream);
    assert!(
        ended.is_closed(),
        "the server holds the connection: {ended:?}"
    );
    assert_eq!(ended.status(), Some(408), "{ended:?}");
}

/// Item 3: a client sending its head a byte at a time (slowloris) is cut off at the
/// header-read deadline, however steadily it sends
pub(crate) fn a_head_sent_a_byte_at_a_time_is_cut_off(addr: SocketAddr) {
    let mut stream = connect(addr);
    let head = request_head(addr, "POST", b"", 2);
    let start = Instant::now();
    for byte in head.iter().cycle().take(10_000) {
        if stream.write_all(&[*byte]).is_err() {
            return; // cut off
        }
        let mut probe = [0u8; 256];
        stream
            .set_read_timeout(Some(Duration::from_millis(40)))
            .unwrap();
        match stream.read(&mut probe) {
            Ok(_) => return, // closed (0) or answered (a 408) before the head was whole
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
        assert!(
            start.elapsed() < BOUND,
            "a head sent a byte at a time held the connection for {BOUND:?}"
        );
    }
    panic!("the server read 10,000 bytes of an unfinished head");
}

/// Item 3: a chunked body that never ends gets 408 and the connection closes after the
/// server's body-read deadline
pub(crate) fn a_body_that_never_ends_gets_408_and_the_connection_closes(addr: SocketAddr) {
    let mut stream = connect(addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
         5\r\n{{\"jso\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let ended = until_closed(&mut stream);
    assert!(
        ended.is_closed(),
        "the server holds the connection: {ended:?}"
    );
    assert_eq!(ended.status(), Some(408), "{ended:?}");
}

/// Item 3: a kept-alive connection that sends no next request is closed after the server's
/// idle deadline; it served its request first
pub(crate) fn an_idle_keep_alive_connection_is_closed(addr: SocketAddr) {
    let mut stream = connect(addr);
    stream.write_all(&quick_request(addr)).unwrap();
    let answered = response(&mut stream, BOUND);
    assert!(answered.is_some(), "the request is answered");
    let (_, head, _) = answered.unwrap();
    assert!(
        !head.to_ascii_lowercase().contains("connection: close"),
        "the connection is kept alive: {head}"
    );
    let ended = until_closed(&mut stream);
    assert_eq!(
        ended,
        Ended::Closed(Vec::new()),
        "closed without a response"
    );
}

/// Item 4: with the server at its `max_connections` (2) held by clients that send nothing,
/// a third client waits (it is not served while they hold the slots), and it is served
/// once their header-read deadline (a few seconds) frees the slots
pub(crate) fn beyond_max_connections_a_client_waits_until_the_deadlines_free_a_slot(
    addr: SocketAddr,
) {
    let mut hostile = [connect(addr), connect(addr)];
    // The server accepts in order: these two hold both slots before the third connects.
    std::thread::sleep(Duration::from_millis(100));
    let mut third = connect(addr);
    third.write_all(&quick_request(addr)).unwrap();
    assert!(
        response(&mut third, Duration::from_millis(300)).is_none(),
        "a connection beyond max_connections is not served while the slots are held"
    );
    let served = response(&mut third, BOUND);
    assert!(
        served.is_some(),
        "served once the header deadline closed the hostile connections"
    );
    for stream in &mut hostile {
        let ended = until_closed(stream);
        assert!(ended.is_closed(), "{ended:?}");
    }
    // And the server goes on serving new clients.
    let mut next = connect(addr);
    next.write_all(&quick_request(addr)).unwrap();
    assert!(response(&mut next, BOUND).is_some());
}

/// Item 4: `server` (an everything-server example) started with `--http` under a file
/// descriptor limit of 48, flooded with 80 idle connections: at its limit its accept loop
/// backs off instead of spinning (it spends under half a CPU second in a second), and a
/// client that came in at the limit is served once the flood's connections close
#[cfg(target_os = "linux")]
pub(crate) fn at_the_descriptor_limit_the_server_backs_off_and_serves_again(
    server: &std::path::Path,
) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 48 && exec "$0" --http 127.0.0.1:0"#)
        .arg(server)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("the server says where it serves: {line:?}"));
    // Its stderr keeps draining, so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let cpu = |pid: u32| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        // utime and stime, fields 14 and 15 of stat(5), in clock ticks (1/100 s)
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let innocent = super::innocent::Innocent::watch(addr);
    let flooded = Instant::now();
    let flood: Vec<TcpStream> = (0..80).map(|_| connect(addr)).collect();
    let mut late = connect(addr);
    late.write_all(&quick_request(addr)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu(child.id());
    std::thread::sleep(Duration::from_secs(1));
    let spent = cpu(child.id()) - before;
    drop(flood);
    let held = flooded.elapsed();
    let served = response(&mut late, BOUND);
    let report = innocent.report();
    let _ = child.kill();
    let _ = child.wait();
    // The innocent client waits while the flood holds the descriptors, and no longer.
    report.assert_served_within(
        "the innocent client beside the descriptor flood",
        held + super::innocent::P99_BOUND,
    );
    assert!(
        spent < 50,
        "at the descriptor limit the accept loop spins: {spent} ticks of CPU in a second"
    );
    assert!(
        served.is_some(),
        "the client at the limit is served once descriptors free"
    );
}

/// The JSON-RPC error message of a 400 body
fn bad_request_message(answered: Option<(u16, String, Vec<u8>)>) -> String {
    let (status, head, body) = answered.expect("an answer");
    assert_eq!(status, 400, "{head}");
    let v: serde_json::Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| panic!("a JSON-RPC error body: {}", String::from_utf8_lossy(&body)));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    v["error"]["message"].as_str().unwrap().to_owned()
}

/// Item 7: a request with two `Host` fields gets 400 with a JSON-RPC error naming `Host`;
/// one whose header value is not UTF-8 gets 400 naming the field and UTF-8
pub(crate) fn two_host_fields_and_a_value_that_is_not_utf8_get_400(addr: SocketAddr) {
    let mut stream = connect(addr);
    let mut bytes = request_head(addr, "POST", b"Host: 127.0.0.1\r\n", PING.len());
    bytes.extend_from_slice(PING);
    stream.write_all(&bytes).unwrap();
    let message = bad_request_message(response(&mut stream, BOUND));
    assert!(message.contains("Host"), "{message}");

    let mut stream = connect(addr);
    let mut bytes = request_head(addr, "POST", b"X-Note: caf\xe9\r\n", PING.len());
    bytes.extend_from_slice(PING);
    stream.write_all(&bytes).unwrap();
    let message = bad_request_message(response(&mut stream, BOUND));
    assert!(
        message.contains("X-Note") || message.contains("x-note"),
        "{message}"
    );
    assert!(message.contains("UTF-8"), "{message}");
}

/// Item 7: an HTTP/1.1 request without a `Host` field gets 400 naming `Host` (RFC 9112
/// section 3.2)
pub(crate) fn a_request_without_host_gets_400(addr: SocketAddr) {
    let mut stream = connect(addr);
    let bytes = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        PING.len()
    );
    stream.write_all(bytes.as_bytes()).unwrap();
    stream.write_all(PING).unwrap();
    let message = bad_request_message(response(&mut stream, BOUND));
    assert!(message.contains("Host"), "{message}");
}

/// Item 1: every TCP socket of this process connected to or accepted from `server` (the
/// binding's HTTP server and client run in the test process) has `TCP_NODELAY` set; how
/// many there are (Linux: read from `/proc/self/fd`)
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // borrows the binding's descriptors to read one socket option
pub(crate) fn sockets_to_and_from_have_nodelay(server: SocketAddr) -> usize {
    use std::mem::ManuallyDrop;
    use std::os::fd::FromRawFd;

    let mut seen = 0;
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if !target.to_string_lossy().starts_with("socket:") {
            continue;
        }
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // Borrowed, never closed here: the socket belongs to the binding (or the kit).
        // SAFETY: `fd` is open (listed just now) and is not closed through this value.
        let socket = ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(fd) });
        let (Ok(local), Ok(peer)) = (socket.local_addr(), socket.peer_addr()) else {
            continue; // not a connected TCP socket (the listener, a pipe, UDP)
        };
        if local != server && peer != server {
            continue;
        }
        seen += 1;
        assert_eq!(
            socket.nodelay().ok(),
            Some(true),
            "TCP_NODELAY on the socket {local} -> {peer}"
        );
    }
    seen
}

/// Item 8: a 2026 `tools/call` of `tool` with a progress token, sent from a socket with a
/// small receive buffer that is then never read; the socket, for the caller to read once
/// the server dropped the response
pub(crate) fn a_call_whose_client_never_reads(addr: SocketAddr, tool: &str) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&addr.into()).unwrap();
    let mut stream: TcpStream = socket.into();
    let (headers, body) = super::shares::modern_call(1, tool, true);
    let mut extra = Vec::new();
    for (name, value) in &headers {
        extra.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    let mut bytes = request_head(addr, "POST", &extra, body.len());
    bytes.extend_from_slice(&body);
    stream.write_all(&bytes).unwrap();
    stream
}

/// Item 8, after the server dropped the response of [`a_call_whose_client_never_reads`]:
/// what the socket still holds is an unfinished event stream, and then the connection
/// closes (a dropped response never ends cleanly: no last chunk)
pub(crate) fn the_dropped_response_closes_unfinished(mut stream: TcpStream) {
    let ended = until_closed(&mut stream);
    assert!(ended.is_closed(), "the server closes the connection");
    let Ended::Closed(bytes) = ended else {
        unreachable!()
    };
    assert_eq!(
        ended_status(&bytes),
        Some(200),
        "the event stream had begun"
    );
    assert!(
        !bytes.ends_with(b"0\r\n\r\n"),
        "a dropped response does not end with the last chunk"
    );
}

/// The status a response's bytes begin with
fn ended_status(bytes: &[u8]) -> Option<u16> {
    Ended::Closed(bytes.to_vec()).status()
}
