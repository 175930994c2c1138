//! Raw HTTP from chosen loopback addresses (127.0.0.x: every one reaches a server on
//! 127.0.0.1 on Linux), and the checks of how a server shares itself out: requests in
//! progress capped per client address and in all (429 and 503 with `Retry-After`), idle
//! sessions making room for new clients, sessions answering only the user who made them.
//! Plain functions on plain threads, like [`raw_http`](super::raw_http)

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use socket2::{Domain, Socket, Type};

/// A response: status, headers (names in lower case), body (de-chunked)
pub(crate) type Response = (u16, HashMap<String, String>, Vec<u8>);

/// How long any one read may wait
const READ: Duration = Duration::from_secs(20);

/// The loopback address `127.0.0.<n>`
pub(crate) fn client(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A connection from `from` to `url`'s server, and the request target's path
fn connect(url: &str, from: IpAddr) -> (TcpStream, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let server: SocketAddr = authority.parse().unwrap();
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::new(from, 0).into()).unwrap();
    socket.connect(&server.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(READ)).unwrap();
    (stream, authority.to_owned(), path.to_owned())
}

/// Writes one request; `close` asks the server to close the connection after it
fn send(
    url: &str,
    from: IpAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    close: bool,
) -> TcpStream {
    let (mut stream, authority, path) = connect(url, from);
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for (n, v) in headers {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    if close {
        request.push_str("Connection: close\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream
}

/// One request from `from`, on a connection of its own, read to the end
pub(crate) fn request(
    url: &str,
    from: IpAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = send(url, from, method, headers, body, true);
    let mut all = Vec::new();
    stream
        .read_to_end(&mut all)
        .expect("the whole response in time");
    let (status, headers, start) = head(&all).expect("a complete response head");
    let rest = &all[start..];
    let body = if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    (status, headers, body)
}

/// A request whose response stays open: returns once its head (status 200, an event
/// stream) arrived, with the connection; dropping it closes the response
pub(crate) fn hold(
    url: &str,
    from: IpAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> TcpStream {
    let mut stream = send(url, from, method, headers, body, false);
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).expect("a response head in time");
        assert!(n > 0, "the connection closed before the response head");
        all.extend_from_slice(&buf[..n]);
        if let Some((status, headers, _)) = head(&all) {
            let text = String::from_utf8_lossy(&all);
            assert_eq!(status, 200, "{text}");
            let sse = headers
                .get("content-type")
                .is_some_and(|c| c.starts_with("text/event-stream"));
            assert!(sse, "an open event stream: {text}");
            return stream;
        }
    }
}

fn head(bytes: &[u8]) -> Option<(u16, HashMap<String, String>, usize)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = std::str::from_utf8(&bytes[..end]).expect("an ASCII head");
    let mut lines = text.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some((status, headers, end + 4))
}

fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size_text = std::str::from_utf8(&bytes[..end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
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
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// Retries `attempt` (every 50 ms, for 10 s at most) until it holds
pub(crate) fn eventually(what: &str, mut attempt: impl FnMut() -> bool) {
    #[allow(clippy::disallowed_methods)] // a real server on real sockets
    let deadline = Instant::now() + Duration::from_secs(10);
    #[allow(clippy::disallowed_methods)]
    while Instant::now() < deadline {
        if attempt() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}: not within 10 s");
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

/// A 2026 `tools/call` of `tool`; `progress` asks for progress (the slow tool's first
/// progress then opens the response's event stream at once)
pub(crate) fn modern_call(
    id: u64,
    tool: &str,
    progress: bool,
) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if progress {
        meta["progressToken"] = json!(format!("p{id}"));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": {"text": "hi"}, "_meta": meta}});
    let headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", tool.to_owned()),
    ];
    (headers, body.to_string().into_bytes())
}

fn with_json<'a>(extra: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![JSON, ACCEPT];
    headers.extend(extra.iter().map(|(n, v)| (*n, v.as_str())));
    headers
}

/// A 2026 `echo` call from `from`: its response
fn echo_from(url: &str, from: IpAddr, id: u64) -> Response {
    let (headers, body) = modern_call(id, "echo", false);
    request(url, from, "POST", &with_json(&headers), &body)
}

/// A 2026 `slow` call from `from`, in progress once this returns
fn slow_from(url: &str, from: IpAddr, id: u64) -> TcpStream {
    let (headers, body) = modern_call(id, "slow", true);
    hold(url, from, "POST", &with_json(&headers), &body)
}

/// The echo's answer came: 200 and the result
fn answered(response: &Response) -> bool {
    let (status, _, body) = response;
    *status == 200
        && messages(body)
            .last()
            .is_some_and(|m| m["result"]["content"][0]["text"] == "hi")
}

/// A refusal past a cap: `status`, `Retry-After`, a JSON-RPC error with the request's id
fn refused(response: &Response, status: u16, id: u64) {
    let (got, headers, body) = response;
    assert_eq!(*got, status, "{}", String::from_utf8_lossy(body));
    let retry: u64 = headers
        .get("retry-after")
        .expect("a Retry-After header")
        .parse()
        .unwrap();
    assert!(retry >= 1);
    let error: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(error["id"], id, "{error}");
    assert!(error["error"]["code"].is_i64(), "{error}");
}

/// The server at `url` has `echo` and `slow` (which reports progress, then waits), at most 2
/// requests in progress per client address and 3 in all: one client's slow calls take its
/// share only (429 past it), others are served until the server is full (503), and closing
/// the slow calls' responses frees their share
pub(crate) fn one_client_cannot_take_the_shared_capacity(url: &str) {
    let (a, b, c) = (client(2), client(3), client(4));
    let a1 = slow_from(url, a, 1);
    let a2 = slow_from(url, a, 2);
    refused(&echo_from(url, a, 3), 429, 3);
    let other = echo_from(url, b, 4);
    assert!(answered(&other), "another client is served: {other:?}");
    let b1 = slow_from(url, b, 5);
    refused(&echo_from(url, c, 6), 503, 6);
    // The slow calls' clients go away: the server cancels them, and has room again.
    drop((a1, a2));
    eventually("the closed calls free their share", || {
        answered(&echo_from(url, c, 7))
    });
    eventually("and client a's", || answered(&echo_from(url, a, 8)));
    drop(b1);
}

/// A 2025 `initialize` from 127.0.0.1: its status and session id
fn initialize(url: &str) -> (u16, Option<String>, Response) {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    initialize_with(url, &init, None)
}

fn initialize_with(
    url: &str,
    init: &Value,
    authorization: Option<&str>,
) -> (u16, Option<String>, Response) {
    let mut headers = vec![JSON, ACCEPT];
    if let Some(a) = authorization {
        headers.push(("Authorization", a));
    }
    let response = request(
        url,
        client(1),
        "POST",
        &headers,
        init.to_string().as_bytes(),
    );
    let sid = response.1.get("mcp-session-id").cloned();
    (response.0, sid, response)
}

/// A 2025 `ping` on session `sid`: its status
fn ping(url: &str, sid: &str, authorization: Option<&str>) -> u16 {
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut headers = vec![
        JSON,
        ACCEPT,
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(a) = authorization {
        headers.push(("Authorization", a));
    }
    request(url, client(1), "POST", &headers, ping).0
}

/// The standalone GET stream of session `sid`, open
fn get_stream(url: &str, sid: &str) -> TcpStream {
    let headers = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    hold(url, client(1), "GET", &headers, b"")
}

/// The server at `url` keeps at most 2 sessions: while both have a stream open (busy) a
/// new client gets 503 with `Retry-After`; once one is idle, the new client's `initialize`
/// closes it (404 afterwards) instead of being refused, and the busy one lives on
pub(crate) fn idle_sessions_make_room_for_new_clients(url: &str) {
    let (status, a, _) = initialize(url);
    assert_eq!(status, 200);
    let (status, b, _) = initialize(url);
    assert_eq!(status, 200);
    let (a, b) = (a.expect("a session id"), b.expect("a session id"));
    let stream_a = get_stream(url, &a);
    let stream_b = get_stream(url, &b);
    let (status, _, response) = initialize(url);
    assert_eq!(status, 503, "{response:?}");
    assert!(response.1.contains_key("retry-after"), "{response:?}");
    // b's stream closes: b is idle, and the next client takes its place.
    drop(stream_b);
    let mut c = None;
    eventually("a new client gets a session", || {
        let (status, sid, _) = initialize(url);
        c = sid;
        status == 200
    });
    let c = c.expect("a session id");
    assert_eq!(ping(url, &b, None), 404, "the idle session was closed");
    assert_eq!(ping(url, &a, None), 200, "the busy one lives");
    // Again: c is the idle one now.
    let (status, _, _) = initialize(url);
    assert_eq!(status, 200);
    assert_eq!(ping(url, &c, None), 404);
    assert_eq!(ping(url, &a, None), 200);
    drop(stream_a);
}

/// An HS256 access token (see [`super::oauth::token`]) for `subject`
#[cfg(feature = "auth")]
pub(crate) fn token_for(issuer: &str, resource: &str, subject: &str) -> String {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    #[allow(clippy::disallowed_methods)] // tokens carry wall-clock times
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({
        "iss": issuer, "aud": resource, "sub": subject, "client_id": "suite",
        "scope": super::oauth::SCOPE, "iat": now, "exp": now + 600,
    });
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(super::oauth::SECRET).unwrap(),
    )
    .unwrap()
}

/// The protected server at `resource` (trusting `issuer`'s tokens): a session made with
/// alice's token answers alice, and another user's valid token gets 404 for it (POST, GET,
/// DELETE) as if it did not exist
#[cfg(feature = "auth")]
pub(crate) fn sessions_belong_to_their_user(resource: &str, issuer: &str) {
    let alice = format!("Bearer {}", token_for(issuer, resource, "alice"));
    let bob = format!("Bearer {}", token_for(issuer, resource, "bob"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, sid, response) = initialize_with(resource, &init, Some(&alice));
    assert_eq!(status, 200, "{response:?}");
    let sid = sid.expect("a session id");
    assert_eq!(ping(resource, &sid, Some(&alice)), 200);
    assert_eq!(ping(resource, &sid, Some(&bob)), 404, "bob's token");
    let get = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Authorization", bob.as_str()),
    ];
    assert_eq!(request(resource, client(1), "GET", &get, b"").0, 404);
    let delete = [
        ("Mcp-Session-Id", sid.as_str()),
        ("Authorization", bob.as_str()),
    ];
    assert_eq!(request(resource, client(1), "DELETE", &delete, b"").0, 404);
    assert_eq!(ping(resource, &sid, Some(&alice)), 200, "still alice's");
    // Bob gets a session of his own.
    let (status, bobs, _) = initialize_with(resource, &init, Some(&bob));
    assert_eq!(status, 200);
    assert_eq!(
        ping(resource, &bobs.expect("a session id"), Some(&bob)),
        200
    );
}

/// A 2026 call of `tool` from `from` with `authorization`
#[cfg(feature = "auth")]
fn call_as(
    resource: &str,
    from: IpAddr,
    authorization: &str,
    id: u64,
    tool: &str,
    hold_it: bool,
) -> Result<Response, TcpStream> {
    let (mut headers, body) = modern_call(id, tool, hold_it);
    headers.push(("Authorization", authorization.to_owned()));
    let headers = with_json(&headers);
    if hold_it {
        Err(hold(resource, from, "POST", &headers, &body))
    } else {
        Ok(request(resource, from, "POST", &headers, &body))
    }
}

/// The protected server at `resource` (`hello` and `slow`; at most 1 request in progress per
/// principal): alice's slow call takes her share wherever she calls from (429), bob is
/// served, and her share comes back when the call's response closes
#[cfg(feature = "auth")]
pub(crate) fn one_user_cannot_take_the_capacity(resource: &str, issuer: &str) {
    let alice = format!("Bearer {}", token_for(issuer, resource, "alice"));
    let bob = format!("Bearer {}", token_for(issuer, resource, "bob"));
    let hello = |r: &Response| {
        r.0 == 200
            && messages(&r.2)
                .last()
                .is_some_and(|m| m["result"]["content"][0]["text"] == "hello")
    };
    let held = call_as(resource, client(2), &alice, 1, "slow", true).unwrap_err();
    let elsewhere = call_as(resource, client(3), &alice, 2, "hello", false).unwrap();
    refused(&elsewhere, 429, 2);
    let bobs = call_as(resource, client(2), &bob, 3, "hello", false).unwrap();
    assert!(hello(&bobs), "{bobs:?}");
    drop(held);
    eventually("alice's share comes back", || {
        hello(&call_as(resource, client(3), &alice, 4, "hello", false).unwrap())
    });
}
