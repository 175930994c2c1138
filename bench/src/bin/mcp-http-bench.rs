//! `mcp-http-bench`: Streamable HTTP workloads against any MCP server, and our servers to run
//! them against
//!
//! ```text
//! mcp-http-bench serve --binding <tokio-ct|tokio-mt|async-std|blocking|hyper>
//! mcp-http-bench <h1|h2|h3|h4> --url http://127.0.0.1:PORT/mcp [--wire <legacy|modern>] [--n N] [--seconds S]
//! mcp-http-bench flood --url http://127.0.0.1:PORT/mcp [--wire <legacy|modern>] [--n CLIENTS] [--seconds S]
//! mcp-http-bench tasks --url URL[,URL...] [--n CLIENTS] [--seconds S]
//! ```
//!
//! `tasks` is #21's workload, task-backed calls against everything-servers (2026 wire, the
//! tasks extension): each of `n` clients (16 unless given) calls `slow_compute` with
//! `seconds: 0` as a task through one URL, then polls `tasks/get` through the next URL (round
//! robin over the list, so with three processes the poll lands on another process than the
//! call) until it reads `completed`. It prints the completed calls per second and the
//! `tasks/get` requests per call.
//!
//! `serve` starts an HTTP server on 127.0.0.1 (a free port) with two tools, `echo` and `flood`
//! (`{"count": N, "size": S}`: N progress reports with an S-byte message, as fast as it can,
//! yielding every 64), prints its
//! URL on a line of its own and serves until its stdin closes. `hyper` is the limit: a bare
//! hyper server that reads each POST and answers the bytes our servers answer a `tools/call`
//! with, no MCP at all.
//!
//! The workloads are one load generator for every server (ours, rmcp, the official Python
//! SDK): raw HTTP/1.1 on keep-alive connections, so each server is measured by the same client.
//! `--wire legacy` speaks 2025-11-25 (an `initialize` per connection, then calls under its
//! `Mcp-Session-Id`); `modern` speaks 2026-07-28 (stateless; `_meta` and the `Mcp-Method` and
//! `Mcp-Name` headers on every call). Each call is `tools/call` `echo` with
//! `{"text":"hello world"}`, answered as JSON or as an SSE stream.
//!
//! - `h1`: one connection, `n` sequential calls;
//! - `h2`: 64 connections, each sequential, `n` calls in all;
//! - `h3`: 1,000 connections open, 200 of them active (sequential calls, `n` in all), the other
//!   800 idle after their handshake;
//! - `h4`: 1,000 connections, every one active (sequential calls, `n` in all): on the legacy
//!   wire, 1,000 sessions each its own `initialize` and each calling at once.
//!
//! Each caller stops after its share of `n` or after `--seconds` (3 unless given), whichever
//! comes first, so a slow server is measured in bounded time.
//!
//! `flood` is #17's fault workload, for the server's memory (the script reads its peak RSS):
//! `n` clients (20 unless given) each call `flood` with 40,000 reports of 1,000 bytes (40 MB)
//! and a progress token, from a socket with a 4 KiB receive buffer, and never read; after
//! `--seconds` they close. It prints how many clients it started.
//!
//! Prints one JSON line: workload, wire, url, n, `calls_per_s`, latency `p50_us` and `p99_us`,
//! and `errors` (answers that were not HTTP 200 with a JSON-RPC result, and broken
//! connections). Never part of the test suite: figures depend on the machine.

use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const USAGE: &str = "usage: mcp-http-bench serve --binding <tokio-ct|tokio-mt|async-std|blocking|hyper>\n       mcp-http-bench <h1|h2|h3|h4|flood> --url URL [--wire <legacy|modern>] [--n N] [--seconds S]\n       mcp-http-bench tasks --url URL[,URL...] [--n CLIENTS] [--seconds S]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let outcome = match args.first().map(String::as_str) {
        Some("serve") => serve(get("--binding").as_deref().unwrap_or("tokio-mt")),
        Some("tasks") => {
            let Some(urls) = get("--url") else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            let clients = get("--n").and_then(|n| n.parse().ok()).unwrap_or(16);
            let seconds = get("--seconds")
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(3.0);
            tasks(&urls, clients, Duration::from_secs_f64(seconds))
        }
        Some(w @ ("h1" | "h2" | "h3" | "h4" | "flood")) => {
            let Some(url) = get("--url") else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            let wire = match get("--wire").as_deref() {
                None | Some("legacy") => Wire::Legacy,
                Some("modern") => Wire::Modern,
                Some(other) => {
                    eprintln!("unknown wire `{other}`");
                    return ExitCode::from(2);
                }
            };
            let n = get("--n").and_then(|n| n.parse().ok());
            let seconds = get("--seconds")
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .unwrap_or(3.0);
            let seconds = Duration::from_secs_f64(seconds);
            if w == "flood" {
                flood(&url, wire, n.unwrap_or(20), seconds)
            } else {
                load(w, &url, wire, n, seconds)
            }
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-http-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

// --- the servers ---------------------------------------------------------------------------

/// The tool every server has
fn echo_tool() -> mcp_sansio::schema::Tool {
    let serde_json::Value::Object(schema) = serde_json::json!({
        "type": "object", "properties": {"text": {"type": "string"}}
    }) else {
        unreachable!()
    };
    mcp_sansio::schema::Tool::new("echo", schema)
}

/// The flood tool every one of our servers has
fn flood_tool() -> mcp_sansio::schema::Tool {
    let serde_json::Value::Object(schema) = serde_json::json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}, "size": {"type": "integer"}}
    }) else {
        unreachable!()
    };
    mcp_sansio::schema::Tool::new("flood", schema)
}

/// The flood's count and the report for step `i`
fn flood_args(args: &serde_json::Map<String, serde_json::Value>) -> (u64, String) {
    let count = args
        .get("count")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let size = args
        .get("size")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    (count, "y".repeat(usize::try_from(size).unwrap_or(0)))
}

fn report(i: u64, message: &str) -> mcp_sansio::Progress {
    #[allow(clippy::cast_precision_loss)]
    mcp_sansio::Progress::new(i as f64).message(message)
}

fn server_config() -> mcp_sansio::ServerConfig {
    mcp_sansio::ServerConfig::new(mcp_sansio::Implementation::new("bench", "1.0"))
}

fn text(args: &serde_json::Map<String, serde_json::Value>) -> mcp_sansio::schema::CallToolResult {
    mcp_sansio::schema::CallToolResult::text(args["text"].as_str().unwrap_or_default())
}

/// Prints the URL, then waits for stdin to close
fn announce_and_wait(addr: SocketAddr) {
    println!("http://{addr}/mcp");
    let _ = io::stdout().flush();
    let mut sink = Vec::new();
    let _ = io::Read::read_to_end(&mut io::stdin(), &mut sink);
}

fn localhost() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn serve(binding: &str) -> Result<(), String> {
    match binding {
        #[cfg(feature = "tokio")]
        "tokio-ct" | "tokio-mt" => {
            let runtime = if binding == "tokio-mt" {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
            } else {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            }
            .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let server = mcp_sansio_tokio::Server::builder(server_config())
                    .tool(echo_tool(), |_cx, args| async move { Ok(text(&args)) })
                    .map_err(|e| e.to_string())?
                    .tool(flood_tool(), |cx, args| async move {
                        let (count, message) = flood_args(&args);
                        for i in 1..=count {
                            cx.progress(report(i, &message));
                            if i % 64 == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                        Ok(mcp_sansio::schema::CallToolResult::text("flooded"))
                    })
                    .map_err(|e| e.to_string())?
                    .build();
                let handle = server
                    .serve_http(localhost())
                    .await
                    .map_err(|e| e.to_string())?;
                let addr = handle.local_addr();
                tokio::task::spawn_blocking(move || announce_and_wait(addr))
                    .await
                    .map_err(|e| e.to_string())?;
                handle.shutdown().await;
                Ok(())
            })
        }
        #[cfg(feature = "tokio")]
        "hyper" => bare_hyper(),
        #[cfg(feature = "async-std")]
        "async-std" => smol::block_on(async {
            let server = mcp_sansio_async_std::Server::builder(server_config())
                .tool(echo_tool(), |_cx, args| async move { Ok(text(&args)) })
                .map_err(|e| e.to_string())?
                .tool(flood_tool(), |cx, args| async move {
                    let (count, message) = flood_args(&args);
                    for i in 1..=count {
                        cx.progress(report(i, &message));
                        if i % 64 == 0 {
                            smol::future::yield_now().await;
                        }
                    }
                    Ok(mcp_sansio::schema::CallToolResult::text("flooded"))
                })
                .map_err(|e| e.to_string())?
                .build();
            let handle = server
                .serve_http(localhost())
                .await
                .map_err(|e| e.to_string())?;
            let addr = handle.local_addr();
            smol::unblock(move || announce_and_wait(addr)).await;
            handle.shutdown().await;
            Ok(())
        }),
        #[cfg(feature = "blocking")]
        "blocking" => {
            let server = mcp_sansio_blocking::Server::builder(server_config())
                .tool(echo_tool(), |_cx, args| Ok(text(&args)))
                .map_err(|e| e.to_string())?
                .tool(flood_tool(), |cx, args| {
                    let (count, message) = flood_args(&args);
                    for i in 1..=count {
                        cx.progress(report(i, &message));
                        if i % 64 == 0 {
                            cx.sleep(Duration::ZERO)?;
                        }
                    }
                    Ok(mcp_sansio::schema::CallToolResult::text("flooded"))
                })
                .map_err(|e| e.to_string())?
                .build();
            let handle = server.serve_http(localhost()).map_err(|e| e.to_string())?;
            announce_and_wait(handle.local_addr());
            handle.shutdown();
            Ok(())
        }
        other => Err(format!("unknown or not built binding `{other}`")),
    }
}

/// The bytes our servers answer a legacy `tools/call` echo with (JSON, not SSE): the limit
/// answers them to every POST
const CANNED: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello world"}]}}"#;

#[cfg(feature = "tokio")]
fn bare_hyper() -> Result<(), String> {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper_util::rt::TokioIo;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(localhost())
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        |request: hyper::Request<hyper::body::Incoming>| async move {
                            let _ = request.into_body().collect().await;
                            let mut response = hyper::Response::new(Full::new(Bytes::from_static(
                                CANNED.as_bytes(),
                            )));
                            response.headers_mut().insert(
                                hyper::header::CONTENT_TYPE,
                                hyper::header::HeaderValue::from_static("application/json"),
                            );
                            response.headers_mut().insert(
                                "mcp-session-id",
                                hyper::header::HeaderValue::from_static("bare"),
                            );
                            Ok::<_, std::convert::Infallible>(response)
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        tokio::task::spawn_blocking(move || announce_and_wait(addr))
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    })
}

// --- the load generator --------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Legacy,
    Modern,
}

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// One keep-alive connection speaking MCP over HTTP/1.1
struct Conn {
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: tokio::net::tcp::OwnedWriteHalf,
    authority: String,
    path: String,
    wire: Wire,
    session: Option<String>,
    next_id: u64,
    request: Vec<u8>,
}

/// What a response said
struct Answer {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

impl Conn {
    async fn open(authority: &str, path: &str, wire: Wire) -> io::Result<Self> {
        Self::open_with(authority, path, wire, None).await
    }

    /// [`open`](Self::open), with the socket's receive buffer set to `recv_buffer` bytes
    async fn open_with(
        authority: &str,
        path: &str,
        wire: Wire,
        recv_buffer: Option<u32>,
    ) -> io::Result<Self> {
        let stream = match recv_buffer {
            None => TcpStream::connect(authority).await?,
            Some(size) => {
                let addr = tokio::net::lookup_host(authority)
                    .await?
                    .next()
                    .ok_or_else(|| io::Error::other("no address"))?;
                let socket = tokio::net::TcpSocket::new_v4()?;
                socket.set_recv_buffer_size(size)?;
                socket.connect(addr).await?
            }
        };
        stream.set_nodelay(true)?;
        let (r, w) = stream.into_split();
        let mut conn = Self {
            reader: BufReader::with_capacity(64 * 1024, r),
            writer: w,
            authority: authority.to_owned(),
            path: path.to_owned(),
            wire,
            session: None,
            next_id: 1,
            request: Vec::with_capacity(1024),
        };
        if wire == Wire::Legacy {
            let init = format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"mcp-http-bench","version":"1"}}}}}}"#
            );
            let answer = conn.post(init.as_bytes(), None).await?;
            if answer.status != 200 {
                return Err(io::Error::other(format!(
                    "initialize: HTTP {}",
                    answer.status
                )));
            }
            conn.session = answer.session;
            let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            let answer = conn.post(note, None).await?;
            if answer.status != 202 && answer.status != 200 {
                return Err(io::Error::other(format!(
                    "notifications/initialized: HTTP {}",
                    answer.status
                )));
            }
        }
        Ok(conn)
    }

    /// One `tools/call` echo; whether it was answered with a result
    async fn call(&mut self) -> io::Result<bool> {
        let id = self.next_id;
        self.next_id += 1;
        let body = match self.wire {
            Wire::Legacy => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello world"}}}}}}"#
            ),
            Wire::Modern => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello world"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-http-bench","version":"1"}}}}}}}}"#
            ),
        };
        let answer = self.post(body.as_bytes(), Some("echo")).await?;
        Ok(answer.status == 200 && contains(&answer.body, b"\"result\""))
    }

    /// Sends a `tools/call` of `flood` with a progress token and reads nothing
    async fn start_flood(&mut self) -> io::Result<()> {
        let meta = match self.wire {
            Wire::Legacy => r#""_meta":{"progressToken":"f"}"#.to_owned(),
            Wire::Modern => format!(
                r#""_meta":{{"progressToken":"f","io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
            ),
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"flood","arguments":{{"count":40000,"size":1000}},{meta}}}}}"#
        );
        self.write_request(body.as_bytes(), Some("flood")).await
    }

    /// A 2026 request declaring the tasks extension, `Mcp-Name` given
    async fn modern_task_request(
        &mut self,
        method: &str,
        name: &str,
        params: &str,
    ) -> io::Result<Answer> {
        let id = self.next_id;
        self.next_id += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
        );
        let r = &mut self.request;
        r.clear();
        let _ = write!(
            r,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\n\r\n",
            self.path,
            self.authority,
            body.len()
        );
        r.extend_from_slice(body.as_bytes());
        self.writer.write_all(r).await?;
        self.read_answer().await
    }

    async fn post(&mut self, body: &[u8], tool: Option<&str>) -> io::Result<Answer> {
        self.write_request(body, tool).await?;
        self.read_answer().await
    }

    async fn write_request(&mut self, body: &[u8], tool: Option<&str>) -> io::Result<()> {
        let r = &mut self.request;
        r.clear();
        let _ = write!(
            r,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.authority,
            body.len()
        );
        match self.wire {
            Wire::Legacy => {
                if let Some(s) = &self.session {
                    let _ = write!(
                        r,
                        "Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: {LEGACY}\r\n"
                    );
                }
            }
            Wire::Modern => {
                let _ = write!(r, "MCP-Protocol-Version: {MODERN}\r\n");
                if let Some(name) = tool {
                    let _ = write!(r, "Mcp-Method: tools/call\r\nMcp-Name: {name}\r\n");
                }
            }
        }
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(body);
        self.writer.write_all(r).await
    }

    async fn read_answer(&mut self) -> io::Result<Answer> {
        let mut line = String::new();
        let mut status = 0;
        let mut length = None;
        let mut chunked = false;
        let mut session = None;
        let mut first = true;
        loop {
            line.clear();
            if self.reader.read_line(&mut line).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let l = line.trim_end();
            if first {
                first = false;
                status = l
                    .split_whitespace()
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                continue;
            }
            if l.is_empty() {
                break;
            }
            let Some((name, value)) = l.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.to_owned());
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).await?;
                let size =
                    usize::from_str_radix(line.trim().split(';').next().unwrap_or_default(), 16)
                        .map_err(|_| io::Error::other("a bad chunk size"))?;
                if size == 0 {
                    line.clear();
                    self.reader.read_line(&mut line).await?;
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                self.reader.read_exact(&mut body[start..]).await?;
                let mut crlf = [0u8; 2];
                self.reader.read_exact(&mut crlf).await?;
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            self.reader.read_exact(&mut body).await?;
        }
        Ok(Answer {
            status,
            session,
            body,
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `http://host:port/path` → (`host:port`, `/path`)
fn split_url(url: &str) -> Result<(String, String), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs are supported")?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    Ok((authority.to_owned(), format!("/{path}")))
}

struct Tally {
    errors: AtomicU64,
    latencies: std::sync::Mutex<Vec<u32>>,
}

/// `calls` sequential calls on `conn`, latencies in microseconds
async fn run_calls(mut conn: Conn, calls: usize, until: Instant, tally: Arc<Tally>) -> Conn {
    let mut mine = Vec::with_capacity(calls);
    for _ in 0..calls {
        if Instant::now() >= until {
            break;
        }
        let start = Instant::now();
        match conn.call().await {
            Ok(true) => {
                mine.push(u32::try_from(start.elapsed().as_micros()).unwrap_or(u32::MAX));
            }
            Ok(false) => {
                tally.errors.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                tally.errors.fetch_add(1, Ordering::Relaxed);
                // A broken connection ends this caller's share.
                break;
            }
        }
    }
    tally
        .latencies
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend(mine);
    conn
}

/// The `flood` workload: `clients` callers of `flood` that never read, held `seconds`
fn flood(url: &str, wire: Wire, clients: usize, seconds: Duration) -> Result<(), String> {
    let (authority, path) = split_url(url)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let mut held = Vec::with_capacity(clients);
        let mut errors = 0u64;
        for _ in 0..clients {
            match Conn::open_with(&authority, &path, wire, Some(4096)).await {
                Ok(mut conn) => match conn.start_flood().await {
                    Ok(()) => held.push(conn),
                    Err(_) => errors += 1,
                },
                Err(_) => errors += 1,
            }
        }
        tokio::time::sleep(seconds).await;
        let line = serde_json::json!({
            "workload": "flood",
            "wire": match wire { Wire::Legacy => LEGACY, Wire::Modern => MODERN },
            "url": url,
            "connections": held.len(),
            "seconds": seconds.as_secs_f64(),
            "errors": errors,
        });
        drop(held);
        println!("{line}");
        Ok(())
    })
}

fn load(
    workload: &str,
    url: &str,
    wire: Wire,
    n: Option<usize>,
    seconds: Duration,
) -> Result<(), String> {
    let (authority, path) = split_url(url)?;
    let (connections, active, default_n) = match workload {
        "h1" => (1, 1, 2_000),
        "h2" => (64, 64, 20_000),
        "h4" => (1_000, 1_000, 20_000),
        _ => (1_000, 200, 20_000),
    };
    let n = n.unwrap_or(default_n);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let tally = Arc::new(Tally {
            errors: AtomicU64::new(0),
            latencies: std::sync::Mutex::new(Vec::with_capacity(n)),
        });
        // Open every connection first (in parallel, 50 at a time), handshakes included.
        let mut conns = Vec::with_capacity(connections);
        let mut opening = tokio::task::JoinSet::new();
        let mut failed = 0u64;
        for i in 0..connections {
            let (a, p) = (authority.clone(), path.clone());
            opening.spawn(async move { Conn::open(&a, &p, wire).await });
            if opening.len() >= 50 || i + 1 == connections {
                while let Some(done) = opening.join_next().await {
                    match done {
                        Ok(Ok(c)) => conns.push(c),
                        Ok(Err(e)) => {
                            if failed == 0 {
                                eprintln!("mcp-http-bench: opening a connection: {e}");
                            }
                            failed += 1;
                        }
                        Err(_) => failed += 1,
                    }
                }
            }
        }
        if conns.is_empty() {
            return Err(format!("no connection could be opened to {url}"));
        }
        let idle = conns.split_off(active.min(conns.len()));
        let per = n / conns.len();
        let start = Instant::now();
        let until = start + seconds;
        let mut calls = tokio::task::JoinSet::new();
        for conn in conns {
            calls.spawn(run_calls(conn, per, until, Arc::clone(&tally)));
        }
        while calls.join_next().await.is_some() {}
        let elapsed = start.elapsed();
        drop(idle);
        let mut lat = std::mem::take(
            &mut *tally
                .latencies
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        lat.sort_unstable();
        let pick = |q: f64| {
            lat.get(((lat.len() as f64 * q) as usize).min(lat.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        let ok = lat.len();
        let line = serde_json::json!({
            "workload": workload,
            "wire": match wire { Wire::Legacy => LEGACY, Wire::Modern => MODERN },
            "url": url,
            "connections": connections,
            "active": active,
            "n": ok,
            "calls_per_s": (ok as f64 / elapsed.as_secs_f64().max(1e-9)).round(),
            "p50_us": pick(0.5),
            "p99_us": pick(0.99),
            "errors": tally.errors.load(Ordering::Relaxed) + failed,
        });
        println!("{line}");
        // Let idle connections close before the server goes.
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok(())
    })
}

/// The task id in a `CreateTaskResult`
fn task_id(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    Some(v["result"]["taskId"].as_str()?.to_owned())
}

/// One client of the `tasks` workload: a connection per URL; returns (calls, polls, errors)
async fn task_client(
    urls: Vec<(String, String)>,
    first: usize,
    until: Instant,
) -> io::Result<(u64, u64, u64)> {
    let mut conns = Vec::with_capacity(urls.len());
    for (authority, path) in &urls {
        conns.push(Conn::open(authority, path, Wire::Modern).await?);
    }
    let (mut calls, mut polls, mut errors) = (0u64, 0u64, 0u64);
    let mut next = first;
    while Instant::now() < until {
        let at = next % conns.len();
        next += 1;
        let created = conns[at]
            .modern_task_request(
                "tools/call",
                "slow_compute",
                r#""name":"slow_compute","arguments":{"seconds":0}"#,
            )
            .await?;
        let Some(task) = task_id(&created.body) else {
            errors += 1;
            continue;
        };
        let params = format!(r#""taskId":"{task}""#);
        loop {
            let at = next % conns.len();
            next += 1;
            polls += 1;
            let got = conns[at]
                .modern_task_request("tasks/get", &task, &params)
                .await?;
            if contains(&got.body, br#""status":"completed""#) {
                calls += 1;
                break;
            }
            if got.status != 200 || contains(&got.body, br#""error""#) {
                errors += 1;
                break;
            }
            if Instant::now() >= until {
                // Time is up with this task still running: not counted either way.
                break;
            }
        }
    }
    Ok((calls, polls, errors))
}

/// The `tasks` workload (see the crate docs)
fn tasks(urls: &str, clients: usize, seconds: Duration) -> Result<(), String> {
    let parsed = urls
        .split(',')
        .map(split_url)
        .collect::<Result<Vec<_>, _>>()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let start = Instant::now();
        let until = start + seconds;
        let mut set = tokio::task::JoinSet::new();
        for i in 0..clients {
            set.spawn(task_client(parsed.clone(), i, until));
        }
        let (mut calls, mut polls, mut errors) = (0u64, 0u64, 0u64);
        while let Some(done) = set.join_next().await {
            match done {
                Ok(Ok((c, p, e))) => {
                    calls += c;
                    polls += p;
                    errors += e;
                }
                Ok(Err(e)) => {
                    eprintln!("mcp-http-bench: a client: {e}");
                    errors += 1;
                }
                Err(_) => errors += 1,
            }
        }
        let elapsed = start.elapsed().as_secs_f64().max(1e-9);
        let line = serde_json::json!({
            "workload": "tasks",
            "urls": urls,
            "clients": clients,
            "calls": calls,
            "calls_per_s": (calls as f64 / elapsed).round(),
            "gets_per_call": if calls == 0 { 0.0 } else { (polls as f64 / calls as f64 * 100.0).round() / 100.0 },
            "errors": errors,
        });
        println!("{line}");
        Ok(())
    })
}
