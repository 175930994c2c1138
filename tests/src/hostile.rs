//! The hostile-input table for Streamable HTTP servers: bad requests with the outcome each
//! must get, run against any server by base URL ([`run_over_tcp`]) or against the sans-IO
//! rules directly (the mcp-interop test `hostile_http` does both)
//!
//! Every binding's HTTP server runs the same table: start it on 127.0.0.1 with the
//! [`echo` tool](ECHO_TOOL) and `mcp_sansio::http::HttpConfig`'s default limits
//! but a body limit of [`MAX_BODY`], then call [`run_over_tcp`] with its address and path.
//! After the table, [`flood_over_tcp`] sends floods of requests, progress and cancellations
//! and checks the server still answers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{Value, json};

/// The body limit the server under test is configured with
pub const MAX_BODY: usize = 64 * 1024;

/// The tool the server under test offers: `echo`, answering `arguments.text` as text content
pub const ECHO_TOOL: &str = "echo";

/// What a case must get back
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// The HTTP status
    pub status: u16,
    /// The JSON-RPC error code of the body, when the body must be an error
    pub code: Option<i64>,
}

/// One hostile request and its expected outcome
#[derive(Debug, Clone)]
pub struct Case {
    /// What it tests
    pub name: &'static str,
    /// HTTP method
    pub method: &'static str,
    /// Header fields (besides `Host`, `Content-Length` and `Connection`)
    pub headers: Vec<(&'static str, String)>,
    /// The body
    pub body: Vec<u8>,
    /// The outcome
    pub expect: Expect,
}

const V26: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"}})
}

/// The headers of a 2026 POST of `method`
fn modern_headers(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", V26.to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(n) = name {
        h.push(("Mcp-Name", n.to_owned()));
    }
    h
}

fn legacy_headers() -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
    ]
}

fn echo_call(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": ECHO_TOOL, "arguments": {"text": "hello world"}, "_meta": meta()}})
}

fn body(v: &Value) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn expect(status: u16, code: Option<i64>) -> Expect {
    Expect { status, code }
}

/// The table
pub fn cases() -> Vec<Case> {
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}});
    let mut deep = r#"{"a":"#.repeat(10_000);
    deep.push_str(&"}".repeat(10_000));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{},"x":{}}}}}"#,
        meta(),
        "[".repeat(5_000) + &"]".repeat(5_000)
    );
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": ECHO_TOOL, "arguments": {"text": "x".repeat(MAX_BODY)}, "_meta": meta()}});
    vec![
        Case {
            name: "a valid 2026 call is answered (control)",
            method: "POST",
            headers: modern_headers("tools/call", Some(ECHO_TOOL)),
            body: body(&echo_call(&json!(1))),
            expect: expect(200, None),
        },
        Case {
            name: "malformed JSON",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#.to_vec(),
            expect: expect(400, Some(-32700)),
        },
        Case {
            name: "invalid UTF-8",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
            expect: expect(400, Some(-32700)),
        },
        Case {
            name: "wrong jsonrpc version",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: body(&json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list",
                "params": {"_meta": meta()}})),
            expect: expect(400, Some(-32600)),
        },
        Case {
            name: "null id",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: body(&json!({"jsonrpc": "2.0", "id": null, "method": "tools/list",
                "params": {"_meta": meta()}})),
            expect: expect(400, Some(-32600)),
        },
        Case {
            name: "a batch on the 2026 wire",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: format!("[{list},{list}]").into_bytes(),
            expect: expect(400, Some(-32600)),
        },
        Case {
            name: "deep nesting (10000 levels of objects)",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: deep.into_bytes(),
            expect: expect(400, Some(-32700)),
        },
        Case {
            name: "deep nesting inside params (past the parser's depth limit)",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: deep_params.into_bytes(),
            expect: expect(400, Some(-32602)),
        },
        Case {
            name: "a body over the limit",
            method: "POST",
            headers: modern_headers("tools/call", Some(ECHO_TOOL)),
            body: body(&huge),
            expect: expect(413, None),
        },
        Case {
            name: "unknown method",
            method: "POST",
            headers: modern_headers("x/unknown", None),
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "x/unknown",
                "params": {"_meta": meta()}})),
            expect: expect(404, Some(-32601)),
        },
        Case {
            name: "an unsupported protocol version",
            method: "POST",
            headers: {
                let mut h = modern_headers("tools/list", None);
                h[2].1 = "2099-01-01".into();
                h
            },
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                    "io.modelcontextprotocol/clientCapabilities": {}}}})),
            expect: expect(400, Some(-32022)),
        },
        Case {
            name: "Mcp-Method does not match the body",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: body(&echo_call(&json!(1))),
            expect: expect(400, Some(-32020)),
        },
        Case {
            name: "Mcp-Name does not match the body",
            method: "POST",
            headers: modern_headers("tools/call", Some("other")),
            body: body(&echo_call(&json!(1))),
            expect: expect(400, Some(-32020)),
        },
        Case {
            name: "the version header does not match _meta",
            method: "POST",
            headers: {
                let mut h = modern_headers("tools/list", None);
                h[2].1 = "2025-11-25".into();
                h
            },
            body: body(&list),
            expect: expect(400, Some(-32020)),
        },
        Case {
            name: "a request before initialize (2025 wire, no session)",
            method: "POST",
            headers: legacy_headers(),
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            expect: expect(400, None),
        },
        Case {
            name: "an unknown session id",
            method: "POST",
            headers: {
                let mut h = legacy_headers();
                h.push(("Mcp-Session-Id", "0123456789abcdef0123456789abcdef".into()));
                h.push(("MCP-Protocol-Version", "2025-11-25".into()));
                h
            },
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            expect: expect(404, None),
        },
        Case {
            name: "initialize with an unsupported version is answered with a supported one",
            method: "POST",
            headers: legacy_headers(),
            body: body(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "1999-01-01", "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"}}})),
            expect: expect(200, None),
        },
        Case {
            name: "a wrong Content-Type",
            method: "POST",
            headers: {
                let mut h = modern_headers("tools/list", None);
                h[0].1 = "text/plain".into();
                h
            },
            body: body(&list),
            expect: expect(415, None),
        },
        Case {
            name: "an Accept without JSON or SSE",
            method: "POST",
            headers: {
                let mut h = modern_headers("tools/list", None);
                h[1].1 = "text/html".into();
                h
            },
            body: body(&list),
            expect: expect(406, None),
        },
        Case {
            name: "a response nobody asked for is accepted and dropped",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: br#"{"jsonrpc":"2.0","id":99,"result":{}}"#.to_vec(),
            expect: expect(202, None),
        },
        Case {
            name: "a 2025 notification without a session",
            method: "POST",
            headers: legacy_headers(),
            body: br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}"#.to_vec(),
            expect: expect(400, Some(-32600)),
        },
        Case {
            name: "an empty body",
            method: "POST",
            headers: modern_headers("tools/list", None),
            body: Vec::new(),
            expect: expect(400, Some(-32700)),
        },
        Case {
            name: "an unsupported HTTP method",
            method: "PUT",
            headers: modern_headers("tools/list", None),
            body: body(&list),
            expect: expect(405, None),
        },
    ]
}

/// A response as read back
#[derive(Debug, Clone, Default)]
pub struct Got {
    /// The status
    pub status: u16,
    /// The body (an SSE body as sent)
    pub body: Vec<u8>,
}

impl Got {
    /// The JSON-RPC error code of a JSON body (or of the last SSE message), if any
    pub fn error_code(&self) -> Option<i64> {
        let text = String::from_utf8_lossy(&self.body);
        let last = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .map_or_else(|| text.to_string(), str::to_owned);
        let v: Value = serde_json::from_str(&last).ok()?;
        v.get("error")?.get("code")?.as_i64()
    }
}

/// Checks one outcome; `Err` says what differs
pub fn check(case: &Case, got: &Got) -> Result<(), String> {
    if got.status != case.expect.status {
        return Err(format!(
            "{}: status {} (expected {}), body {}",
            case.name,
            got.status,
            case.expect.status,
            String::from_utf8_lossy(&got.body[..got.body.len().min(300)])
        ));
    }
    if let Some(code) = case.expect.code
        && got.error_code() != Some(code)
    {
        return Err(format!(
            "{}: error code {:?} (expected {code}), body {}",
            case.name,
            got.error_code(),
            String::from_utf8_lossy(&got.body[..got.body.len().min(300)])
        ));
    }
    Ok(())
}

/// Sends one request over a new connection (`Connection: close`) and reads the whole response
///
/// # Errors
/// The connection failed or the response is not HTTP/1.1.
pub fn send(
    addr: SocketAddr,
    path: &str,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<Got> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes())?;
    // A server may answer (413) before reading the whole body and close: ignore write errors.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {raw:?}")))
}

fn parse_response(raw: &[u8]) -> Option<Got> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let mut rest = &raw[end + 4..];
    let body = if chunked {
        let mut out = Vec::new();
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).ok()?, 16).ok()?;
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            out.extend_from_slice(rest.get(..size)?);
            rest = rest.get(size + 2..)?;
        }
        out
    } else {
        rest.to_vec()
    };
    Some(Got { status, body })
}

/// Runs the table against a server at `addr` and `path`; returns every mismatch
pub fn run_over_tcp(addr: SocketAddr, path: &str) -> Vec<String> {
    cases()
        .iter()
        .filter_map(
            |case| match send(addr, path, case.method, &case.headers, &case.body) {
                Ok(got) => check(case, &got).err(),
                Err(e) => Some(format!("{}: {e}", case.name)),
            },
        )
        .collect()
}

/// The floods: many requests, progress reports and cancellations in a row, then a control
/// call that must still be answered; returns every mismatch
pub fn flood_over_tcp(addr: SocketAddr, path: &str, n: usize) -> Vec<String> {
    let mut failures = Vec::new();
    let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
    let cancel =
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    for i in 0..n {
        let (headers, body, want) = match i % 3 {
            0 => (
                modern_headers("tools/call", Some(ECHO_TOOL)),
                body(&echo_call(&json!(i))),
                200,
            ),
            1 => (
                modern_headers("notifications/progress", None),
                progress.to_vec(),
                202,
            ),
            _ => (
                modern_headers("notifications/cancelled", None),
                cancel.to_vec(),
                202,
            ),
        };
        match send(addr, path, "POST", &headers, &body) {
            Ok(got) if got.status == want => {}
            Ok(got) => failures.push(format!("flood {i}: status {}", got.status)),
            Err(e) => failures.push(format!("flood {i}: {e}")),
        }
        if failures.len() > 5 {
            break;
        }
    }
    let control = &cases()[0];
    match send(addr, path, control.method, &control.headers, &control.body) {
        Ok(got) => failures.extend(check(control, &got).err()),
        Err(e) => failures.push(format!("after the flood: {e}")),
    }
    failures
}

/// The resident set size of this process in KiB (Linux), to check memory stays bounded
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
