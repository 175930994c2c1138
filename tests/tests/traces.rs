//! One trace across the call (SEP-414, issue 32): our tokio client calls `echo` inside a span
//! of its own; each Rust binding's everything-server (built with the `otlp` feature, as
//! scripts/interop-setup builds them), in a process of its own over stdio and over
//! Streamable HTTP, in both eras, exports its spans with `--otlp` to a test OTLP/HTTP
//! collector (a real socket on 127.0.0.1, the protobuf bodies decoded with
//! `opentelemetry-proto`). The client's spans go to a collector of the same kind through the
//! runtime layer's `otel::otlp` layer. Each test asserts one trace id from the client's span
//! through the client's `mcp.request` span and the server's `mcp.request` span to the
//! `tool.echo` span inside the tool handler, each the parent of the next. The official
//! Python SDK's client does the same against the tokio server, over stdio and HTTP (its
//! span's trace id printed by `tests/peers/py_trace_client.py`), as does mcp-sansio-blocking's
//! client. A malformed `traceparent` is ignored (the call succeeds, the server's span is not
//! in the client's trace), and a server exports what is left when it exits (SIGTERM, SIGINT,
//! stdin closed).
//!
//! `#[ignore]`d like the interop tests (they need the built servers): scripts/test-all runs
//! them with `--include-ignored` after scripts/interop-setup.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use mcp_interop::{
    ServerProcess, TEST_DEADLINE, everything_http_server_with, everything_server,
    everything_server_async_std, everything_server_blocking, peer_script, python, run_peer,
};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions};
use mcp_sansio_tokio::otel::otlp::Otlp;
use mcp_sansio_tokio::{Client, ClientOptions};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;
use serde_json::json;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// How long a span may take to reach a collector (the servers export every half second)
const SPAN_DEADLINE: Duration = Duration::from_secs(15);

/// One span a collector received
#[derive(Clone, Debug)]
struct Got {
    trace: String,
    span: String,
    parent: String,
    name: String,
    attributes: HashMap<String, String>,
}

impl Got {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    /// A request span of `side` for `method`
    fn is_request(&self, side: &str, method: &str) -> bool {
        self.name == "mcp.request"
            && self.attr("side") == Some(side)
            && self.attr("method") == Some(method)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A test OTLP/HTTP collector: `POST /v1/traces` with a protobuf `ExportTraceServiceRequest`
/// body, answered 200; keeps every span
struct Collector {
    addr: SocketAddr,
    spans: Arc<(Mutex<Vec<Got>>, Condvar)>,
}

impl Collector {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("an address");
        let spans = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let kept = Arc::clone(&spans);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let kept = Arc::clone(&kept);
                thread::spawn(move || serve(stream, &kept));
            }
        });
        Self { addr, spans }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The first span `pick` accepts, waiting up to [`SPAN_DEADLINE`]
    fn wait_for(&self, what: &str, pick: impl Fn(&Got) -> bool) -> Got {
        let (lock, arrived) = &*self.spans;
        let started = Instant::now();
        let mut spans = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(found) = spans.iter().find(|s| pick(s)) {
                return found.clone();
            }
            let Some(left) = SPAN_DEADLINE.checked_sub(started.elapsed()) else {
                panic!("no span {what} within {SPAN_DEADLINE:?}; received:\n{spans:#?}");
            };
            spans = arrived
                .wait_timeout(spans, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Answers one collector connection's requests (HTTP/1.1, `Content-Length` bodies)
fn serve(stream: TcpStream, spans: &(Mutex<Vec<Got>>, Condvar)) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = stream.try_clone().expect("a second handle");
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut close = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            if name == "content-length" {
                length = value.parse().unwrap_or(0);
            } else if name == "connection" && value.eq_ignore_ascii_case("close") {
                close = true;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let status = match ExportTraceServiceRequest::decode(body.as_slice()) {
            Ok(request) => {
                keep(request, spans);
                "200 OK"
            }
            Err(_) => "400 Bad Request",
        };
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
        );
        if writer.write_all(answer.as_bytes()).is_err() || close {
            return;
        }
    }
}

fn keep(request: ExportTraceServiceRequest, spans: &(Mutex<Vec<Got>>, Condvar)) {
    let (lock, arrived) = spans;
    let mut kept = lock.lock().unwrap_or_else(PoisonError::into_inner);
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            for span in scope.spans {
                let attributes = span
                    .attributes
                    .iter()
                    .map(|kv| {
                        let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(AnyValue::StringValue(s)) => s.clone(),
                            Some(AnyValue::IntValue(i)) => i.to_string(),
                            Some(other) => format!("{other:?}"),
                            None => String::new(),
                        };
                        (kv.key.clone(), value)
                    })
                    .collect();
                kept.push(Got {
                    trace: hex(&span.trace_id),
                    span: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    attributes,
                });
            }
        }
    }
    arrived.notify_all();
}

/// The client side of every test: one OTLP layer for this test binary's spans, exporting to
/// one collector
fn client_tracing() -> &'static (Collector, Otlp) {
    static CLIENT: OnceLock<(Collector, Otlp)> = OnceLock::new();
    CLIENT.get_or_init(|| {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::filter::{LevelFilter, Targets};
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        let collector = Collector::start();
        let (layer, otlp) =
            mcp_sansio_tokio::otel::otlp::layer(&collector.url(), "trace-test-client")
                .expect("the collector's URL");
        let spans = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("mcp_sansio", LevelFilter::DEBUG);
        tracing_subscriber::registry()
            .with(layer.with_filter(spans))
            .init();
        (collector, otlp)
    })
}

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

fn config(modern: bool) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("mcp-interop-traces", "0.1.0"));
    config.era = if modern {
        EraMode::Modern
    } else {
        EraMode::Legacy(ProtocolVersion::V2025_11_25)
    };
    config.timeouts.request = Some(Duration::from_secs(20));
    config
}

/// Our client connected to `server` (its process exporting to `collector`)
async fn connect(
    server: &Path,
    transport: Transport,
    collector: &Collector,
    modern: bool,
) -> (Client, Option<ServerProcess>) {
    let otlp = collector.url();
    match transport {
        Transport::Stdio => {
            let mut command = tokio::process::Command::new(server);
            command.args(["--otlp", &otlp]);
            let client = Client::spawn_with(command, config(modern), ClientOptions::default())
                .await
                .expect("the stdio server starts");
            (client, None)
        }
        Transport::Http => {
            let (process, url) = everything_http_server_with(server, &["--otlp", &otlp]);
            let client = Client::connect_http(&url, config(modern), ClientOptions::default())
                .await
                .expect("the HTTP server answers");
            (client, Some(process))
        }
    }
}

/// The trace and span ids of `span`
fn ids(span: &tracing::Span) -> (String, String) {
    let cx = span.context();
    let otel = cx.span();
    let sc = otel.span_context();
    assert!(
        sc.is_valid(),
        "the test's span has an OpenTelemetry context"
    );
    (sc.trace_id().to_string(), sc.span_id().to_string())
}

/// The client's span, the client's and the server's `mcp.request` and the tool's
/// `tool.echo` are one trace, each the parent of the next
async fn one_trace(server: PathBuf, transport: Transport, modern: bool) {
    let (client_spans, otlp) = client_tracing();
    let server_spans = Collector::start();
    let (client, _process) = connect(&server, transport, &server_spans, modern).await;
    let work = tracing::info_span!("client.work");
    let (trace, work_id) = ids(&work);
    let result = client
        .call_tool(
            "echo",
            json!({"text": "traced"}).as_object().cloned().unwrap(),
        )
        .instrument(work.clone())
        .await
        .expect("tools/call echo");
    assert_eq!(result.content.len(), 1, "{result:?}");
    drop(work);
    otlp.flush();
    let request = client_spans.wait_for("client mcp.request tools/call in the trace", |s| {
        s.trace == trace && s.is_request("client", "tools/call")
    });
    assert_eq!(
        request.parent, work_id,
        "the client's request span is a child of the application's span: {request:?}"
    );
    let served = server_spans.wait_for("server mcp.request tools/call in the trace", |s| {
        s.trace == trace && s.is_request("server", "tools/call")
    });
    assert_eq!(
        served.parent, request.span,
        "the server's request span is a child of the client's: {served:?}"
    );
    let tool = server_spans.wait_for("tool.echo in the trace", |s| {
        s.trace == trace && s.name == "tool.echo"
    });
    assert_eq!(
        tool.parent, served.span,
        "the tool's span is a child of the server's request span: {tool:?}"
    );
    client.close().await;
}

/// A `traceparent` the application put in `_meta` itself is sent as it is; a malformed one
/// is ignored by the server: the call succeeds and the server's span is not in the client's
/// trace (its parent is its session's span, as without a `traceparent`)
async fn malformed_traceparent(server: PathBuf, transport: Transport) {
    let (_, _) = client_tracing();
    let server_spans = Collector::start();
    let (client, _process) = connect(&server, transport, &server_spans, false).await;
    let work = tracing::info_span!("client.work");
    let (trace, _) = ids(&work);
    let params = json!({
        "name": "echo",
        "arguments": {"text": "malformed"},
        "_meta": {"traceparent": "00-not-a-trace-01", "tracestate": "=", "baggage": ";"},
    });
    let params = serde_json::value::to_raw_value(&params).expect("params");
    let result = client
        .request_raw("tools/call", Some(params), RequestOptions::default(), None)
        .instrument(work.clone())
        .await
        .expect("the call succeeds");
    assert!(result.get().contains("malformed"), "{}", result.get());
    drop(work);
    let tool = server_spans.wait_for("tool.echo", |s| s.name == "tool.echo");
    let served = server_spans.wait_for("the tool's request span", |s| {
        s.is_request("server", "tools/call") && s.span == tool.parent
    });
    // Its OpenTelemetry parent is then its `tracing` parent, the server's session span.
    assert_ne!(served.trace, trace, "not the client's trace: {served:?}");
    client.close().await;
}

macro_rules! trace_tests {
    ($($name:ident: $server:expr, $transport:expr, $modern:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
        async fn $name() {
            tokio::time::timeout(TEST_DEADLINE, one_trace($server, $transport, $modern))
                .await
                .expect("within the test's deadline");
        }
    )*};
}

trace_tests! {
    tokio_stdio_2025: everything_server(), Transport::Stdio, false;
    tokio_stdio_2026: everything_server(), Transport::Stdio, true;
    tokio_http_2025: everything_server(), Transport::Http, false;
    tokio_http_2026: everything_server(), Transport::Http, true;
    async_std_stdio_2025: everything_server_async_std(), Transport::Stdio, false;
    async_std_stdio_2026: everything_server_async_std(), Transport::Stdio, true;
    async_std_http_2025: everything_server_async_std(), Transport::Http, false;
    async_std_http_2026: everything_server_async_std(), Transport::Http, true;
    blocking_stdio_2025: everything_server_blocking(), Transport::Stdio, false;
    blocking_stdio_2026: everything_server_blocking(), Transport::Stdio, true;
    blocking_http_2025: everything_server_blocking(), Transport::Http, false;
    blocking_http_2026: everything_server_blocking(), Transport::Http, true;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
async fn a_malformed_traceparent_is_ignored_over_stdio() {
    tokio::time::timeout(
        TEST_DEADLINE,
        malformed_traceparent(everything_server(), Transport::Stdio),
    )
    .await
    .expect("within the test's deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
async fn a_malformed_traceparent_is_ignored_over_http() {
    tokio::time::timeout(
        TEST_DEADLINE,
        malformed_traceparent(everything_server_blocking(), Transport::Http),
    )
    .await
    .expect("within the test's deadline");
}

/// The official Python SDK's client calls `echo` inside an OpenTelemetry span; our tokio
/// server's request span and the span inside its tool handler are in the trace it printed
fn python_trace(transport: Transport) {
    let server_spans = Collector::start();
    let mut command = Command::new(python());
    command.arg(peer_script("py_trace_client.py"));
    let _process = match transport {
        Transport::Stdio => {
            command.arg(everything_server()).arg(server_spans.url());
            None
        }
        Transport::Http => {
            let (process, url) =
                everything_http_server_with(&everything_server(), &["--otlp", &server_spans.url()]);
            command.arg(url);
            Some(process)
        }
    };
    let output = run_peer(command, TEST_DEADLINE);
    let summary = output.summary();
    assert_eq!(summary["echo"], json!(["from python"]), "{output}");
    let trace = summary["trace_id"]
        .as_str()
        .unwrap_or_else(|| panic!("a trace id: {output}"))
        .to_owned();
    assert_eq!(trace.len(), 32, "{output}");
    let served = server_spans.wait_for("server mcp.request tools/call in the trace", |s| {
        s.trace == trace && s.is_request("server", "tools/call")
    });
    // The SDK sends from a client span of its own, a child of the script's span.
    assert!(
        !served.parent.is_empty(),
        "the server's request span is a child of the Python client's span: {served:?}"
    );
    let tool = server_spans.wait_for("tool.echo in the trace", |s| {
        s.trace == trace && s.name == "tool.echo"
    });
    assert_eq!(tool.parent, served.span, "{tool:?}");
}

#[test]
#[ignore = "needs the interop venv and the everything-servers (scripts/interop-setup)"]
fn the_python_sdk_client_continues_into_the_tool_over_stdio() {
    python_trace(Transport::Stdio);
}

#[test]
#[ignore = "needs the interop venv and the everything-servers (scripts/interop-setup)"]
fn the_python_sdk_client_continues_into_the_tool_over_http() {
    python_trace(Transport::Http);
}

/// A server whose batches would wait ten minutes (`OTEL_BSP_SCHEDULE_DELAY`) still exports
/// its spans when it exits: on SIGTERM, on SIGINT (over HTTP), and when stdin closes (stdio)
fn flushed_on_exit(server: &Path) {
    use rustix::process::{Pid, Signal, kill_process};
    for signal in [Signal::TERM, Signal::INT] {
        let spans = Collector::start();
        let mut command = Command::new(server);
        command
            .args(["--http", "127.0.0.1:0", "--otlp", &spans.url()])
            .env("OTEL_BSP_SCHEDULE_DELAY", "600000");
        let process = ServerProcess::start(command);
        let line = process.wait_for_line("serving MCP at ", Duration::from_secs(20));
        let url = line.split("serving MCP at ").nth(1).expect("a URL").trim();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let client = Client::connect_http(url, config(false), ClientOptions::default())
                .await
                .expect("the HTTP server answers");
            client
                .call_tool("echo", json!({"text": "x"}).as_object().cloned().unwrap())
                .await
                .expect("tools/call echo");
            client.close().await;
        });
        let pid = Pid::from_raw(i32::try_from(process.id()).expect("a pid")).expect("a pid");
        kill_process(pid, signal).expect("the signal is sent");
        spans.wait_for(&format!("tool.echo after {signal:?}"), |s| {
            s.name == "tool.echo"
        });
    }
    // Stdio: the client closes stdin once answered; the server exits and flushes.
    let spans = Collector::start();
    let mut child = Command::new(server)
        .args(["--otlp", &spans.url()])
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the server starts");
    let traceparent = "00-5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a-0123456789abcdef-01";
    let mut stdin = child.stdin.take().expect("piped");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "traces-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "x"}, "_meta": {"traceparent": traceparent}}}),
    ];
    for message in messages {
        writeln!(stdin, "{message}").expect("the server reads");
    }
    let stdout = child.stdout.take().expect("piped");
    let (tx, answers) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let started = Instant::now();
    loop {
        let left = TEST_DEADLINE.saturating_sub(started.elapsed());
        let line = answers
            .recv_timeout(left)
            .expect("the echo's answer in time");
        if line.contains(r#""id":2"#) {
            break;
        }
    }
    drop(stdin);
    let tool = spans.wait_for("tool.echo after stdin closed", |s| s.name == "tool.echo");
    assert_eq!(tool.trace, "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a", "{tool:?}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
fn tokio_flushes_on_exit() {
    flushed_on_exit(&everything_server());
}

#[test]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
fn async_std_flushes_on_exit() {
    flushed_on_exit(&everything_server_async_std());
}

#[test]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
fn blocking_flushes_on_exit() {
    flushed_on_exit(&everything_server_blocking());
}

/// mcp-sansio-blocking's client takes the context on the calling thread: the same chain
/// from its span to the blocking server's tool, over stdio and over HTTP
#[test]
#[ignore = "needs the everything-servers built with `otlp` (scripts/interop-setup)"]
fn the_blocking_client_continues_into_the_tool() {
    let (client_spans, otlp) = client_tracing();
    for transport in [Transport::Stdio, Transport::Http] {
        let server_spans = Collector::start();
        let server = everything_server_blocking();
        let mut process = None;
        let client = match transport {
            Transport::Stdio => {
                let mut command = Command::new(&server);
                command.args(["--otlp", &server_spans.url()]);
                mcp_sansio_blocking::Client::spawn(command, config(false))
            }
            Transport::Http => {
                let (started, url) =
                    everything_http_server_with(&server, &["--otlp", &server_spans.url()]);
                process = Some(started);
                mcp_sansio_blocking::Client::connect_http(
                    &url,
                    config(true),
                    mcp_sansio_blocking::ClientOptions::default(),
                )
            }
        }
        .expect("the blocking client connects");
        let work = tracing::info_span!("client.work");
        let (trace, work_id) = ids(&work);
        work.in_scope(|| {
            client
                .call_tool("echo", json!({"text": "x"}).as_object().cloned().unwrap())
                .expect("tools/call echo")
        });
        drop(work);
        otlp.flush();
        let request = client_spans.wait_for("the blocking client's mcp.request", |s| {
            s.trace == trace && s.is_request("client", "tools/call")
        });
        assert_eq!(request.parent, work_id, "{transport:?}: {request:?}");
        let served = server_spans.wait_for("server mcp.request in the trace", |s| {
            s.trace == trace && s.is_request("server", "tools/call")
        });
        assert_eq!(served.parent, request.span, "{transport:?}: {served:?}");
        let tool = server_spans.wait_for("tool.echo in the trace", |s| {
            s.trace == trace && s.name == "tool.echo"
        });
        assert_eq!(tool.parent, served.span, "{transport:?}: {tool:?}");
        client.close();
        drop(process);
    }
}
