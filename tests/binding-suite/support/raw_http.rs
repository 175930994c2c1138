//! Raw HTTP/1.1 over `std::net`, one request per connection (`Connection: close`), to send
//! what our clients never would; and the malformed requests every binding's server must
//! answer with the spec's status and a JSON-RPC error body

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use super::error_code;

/// A response: status, headers (names in lower case) and body (for an event stream, up to
/// the first result)
pub(crate) type Response = (u16, HashMap<String, String>, Vec<u8>);

/// Sends one request to `url` (`http://host:port/path`) and reads its response
pub(crate) fn raw(url: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    raw_within(url, method, headers, body, None)
}

/// [`raw`], failing the test when the server stays silent for `limit` while it answers
pub(crate) fn raw_within(
    url: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    limit: Option<Duration>,
) -> Response {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(limit).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for (n, v) in headers {
        request.push_str(&format!("{n}: {v}\r\n"));
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    // A server may answer (413) and close before it read all of an oversize body.
    let _ = stream.write_all(body);
    // Read until the head is complete and the body is whole (or has a result).
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("no answer from {url} in time: {e}"));
        all.extend_from_slice(&buf[..n]);
        if let Some((status, headers, start)) = head(&all) {
            let rest = &all[start..];
            let chunked = headers
                .get("transfer-encoding")
                .is_some_and(|t| t == "chunked");
            let body = if chunked {
                dechunk(rest)
            } else {
                rest.to_vec()
            };
            let length = headers
                .get("content-length")
                .map(|l| l.parse::<usize>().unwrap());
            let done = n == 0
                || length.is_some_and(|l| body.len() >= l)
                || String::from_utf8_lossy(&body).contains("\"result\"");
            if done {
                return (status, headers, body);
            }
        }
        assert!(n > 0, "the connection closed before the response");
    }
}

/// The status, headers and body offset of a complete response head in `bytes`
fn head(bytes: &[u8]) -> Option<(u16, HashMap<String, String>, usize)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = std::str::from_utf8(&bytes[..end]).expect("an ASCII head");
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {status_line}"));
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap_or_else(|| panic!("a header: {l}"));
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    Some((status, headers, end + 4))
}

/// The data of the complete chunks in `bytes`
fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&bytes[..end]).unwrap(), 16).unwrap();
        if size == 0 || bytes.len() < end + 2 + size + 2 {
            break;
        }
        data.extend_from_slice(&bytes[end + 2..end + 2 + size]);
        bytes = &bytes[end + 2 + size + 2..];
    }
    data
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

/// The server at `url` (its `max_body_size` under 100 KiB) answers bad JSON, a wrong content
/// type, an unknown session, an oversize body and a hostile `Origin` with the spec's status
/// and a JSON-RPC error; a 2025 session it deleted gets 404 afterwards
pub(crate) fn malformed_requests_get_the_spec_status(url: &str) {
    // Bad JSON
    let (status, _, body) = raw(url, "POST", &[JSON, ACCEPT], b"{not json");
    assert_eq!(status, 400);
    assert_eq!(error_code(&body), -32700);
    // Wrong content type
    let (status, _, body) = raw(
        url,
        "POST",
        &[("Content-Type", "text/plain"), ACCEPT],
        b"{}",
    );
    assert_eq!(status, 415);
    error_code(&body);
    // Unknown session
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let unknown = [JSON, ACCEPT, ("Mcp-Session-Id", "no-such-session")];
    let (status, _, body) = raw(url, "POST", &unknown, ping);
    assert_eq!(status, 404);
    error_code(&body);
    // Oversize body
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100 * 1024)
    );
    let (status, _, body) = raw(url, "POST", &[JSON, ACCEPT], big.as_bytes());
    assert_eq!(status, 413);
    error_code(&body);
    // Hostile Origin (DNS rebinding)
    let hostile = [JSON, ACCEPT, ("Origin", "http://evil.example")];
    let (status, _, body) = raw(url, "POST", &hostile, ping);
    assert_eq!(status, 403);
    error_code(&body);

    // The session of a 2025 client is deleted: later requests get 404.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, headers, _) = raw(url, "POST", &[JSON, ACCEPT], init.to_string().as_bytes());
    assert_eq!(status, 200);
    let sid = headers.get("mcp-session-id").expect("a session id").clone();
    let (status, _, _) = raw(url, "DELETE", &[("Mcp-Session-Id", sid.as_str())], b"");
    assert_eq!(status, 200);
    let (status, _, body) = raw(
        url,
        "POST",
        &[JSON, ACCEPT, ("Mcp-Session-Id", sid.as_str())],
        ping,
    );
    assert_eq!(status, 404);
    error_code(&body);
}
