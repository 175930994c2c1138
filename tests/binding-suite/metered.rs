//! Metrics (feature `metrics`): a recorder installed for the whole test binary sees what
//! the binding records, over a byte stream (in memory) and over HTTP in both eras: request
//! durations by side, method, tool name and outcome, bytes, open sessions and connections,
//! and refusals (a 404 for a session the server never issued, a 408 for a late head)
//!
//! Every test of this binary records into the same recorder once it is installed, so the
//! tool names here are unique to this file, and shared series (bytes, gauges) are only
//! checked for being there.

use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ServerConfig};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

use super::support::raw_http::raw;
use super::support::{LEGACY, echo_schema, text};
use crate::binding::{Client, ClientOptions, Server};
use crate::rt;

/// The recorder of this test binary, installed once
fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::set_global_recorder(recorder).expect("the only recorder of this binary");
        snapshotter
    })
}

/// One series: its name, its labels as `key=value`, its value
type Series = (String, Vec<String>, DebugValue);

/// What was recorded so far (histograms: since the last snapshot, so one test at a time)
fn snapshot() -> Vec<Series> {
    snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            (key.name().to_owned(), labels, value)
        })
        .collect()
}

/// The series named `name` that has every label of `labels`
fn series<'a>(seen: &'a [Series], name: &str, labels: &[&str]) -> Vec<&'a DebugValue> {
    seen.iter()
        .filter(|(n, l, _)| n == name && labels.iter().all(|x| l.iter().any(|y| y == x)))
        .map(|(_, _, v)| v)
        .collect()
}

/// How many durations the histograms named `name` with `labels` took
fn timed(seen: &[Series], name: &str, labels: &[&str]) -> usize {
    series(seen, name, labels)
        .into_iter()
        .map(|v| match v {
            DebugValue::Histogram(values) => values.len(),
            other => panic!("{name} is a histogram, not {other:?}"),
        })
        .sum()
}

fn counter(seen: &[Series], name: &str, labels: &[&str]) -> u64 {
    series(seen, name, labels)
        .into_iter()
        .map(|v| match v {
            DebugValue::Counter(n) => *n,
            other => panic!("{name} is a counter, not {other:?}"),
        })
        .sum()
}

/// The metered tests take turns: a snapshot drains the histograms
static TURN: Mutex<()> = Mutex::new(());

fn server(tool: &str) -> Server {
    let mut config = ServerConfig::new(Implementation::new("metered-server", "1.0"));
    config.state_key = Some([5; 32]);
    Server::builder(config)
        .tool(
            Tool::new(tool, echo_schema()),
            handler!(|_cx, args| {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            }),
        )
        .unwrap()
        .build()
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("metered-client", "1.0"));
    config.era = era;
    config
}

#[test]
fn requests_are_timed_by_side_method_tool_and_outcome_over_a_byte_stream() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    snapshotter();
    rt::block_on(async {
        let server = server("metered_stream_echo");
        let client = aw!(Client::in_memory(&server, config(LEGACY))).unwrap();
        for _ in 0..3 {
            let result = aw!(client.call_tool("metered_stream_echo", text("hi"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("hi"));
        }
        // An unknown tool: the catalog answers; its name (the peer's) is no label.
        let unknown = aw!(client.call_tool("zz_never_registered_4711", text("x")));
        assert!(unknown.is_err() || unknown.unwrap().is_error == Some(true));
        aw!(client.close());
    });
    let seen = snapshot();
    let ok = [
        "mcp.method.name=tools/call",
        "gen_ai.tool.name=metered_stream_echo",
        "outcome=ok",
    ];
    assert_eq!(
        timed(&seen, "mcp.server.operation.duration", &ok),
        3,
        "{seen:?}"
    );
    assert_eq!(
        timed(&seen, "mcp.client.operation.duration", &ok),
        3,
        "{seen:?}"
    );
    // Server side, the peer's unknown tool name is no label (client side it is ours).
    let server_series = seen.iter().filter(|(n, _, _)| n.starts_with("mcp.server."));
    assert!(
        !server_series
            .clone()
            .any(|(_, labels, _)| labels.iter().any(|l| l.contains("zz_never_registered"))),
        "a peer's unknown tool name became a label"
    );
    let answered = ["mcp.method.name=tools/call", "outcome=answered"];
    assert!(
        timed(&seen, "mcp.server.operation.duration", &answered) >= 1,
        "{seen:?}"
    );
    assert!(counter(&seen, "mcp.bytes.received", &["transport=stream"]) > 0);
    assert!(counter(&seen, "mcp.bytes.sent", &["transport=stream"]) > 0);
    for gauge in [
        "mcp.server.sessions.active",
        "mcp.client.sessions.active",
        "mcp.server.connections.active",
        "mcp.client.connections.active",
        "mcp.server.requests.active",
    ] {
        assert!(
            !series(&seen, gauge, &[]).is_empty(),
            "no {gauge}: {seen:?}"
        );
    }
}

#[test]
fn under_a_middleware_chain_the_catalogs_answers_stay_answered_and_unnamed() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    snapshotter();
    rt::block_on(async {
        let mut config = ServerConfig::new(Implementation::new("metered-chain", "1.0"));
        config.state_key = Some([6; 32]);
        let server = Server::builder(config)
            .middleware(middleware!([]; |call, next| { pass!(next, call) }))
            .tool(
                Tool::new("metered_chain_echo", echo_schema()),
                handler!(|_cx, _args| { Ok(CallToolResult::text("ok")) }),
            )
            .unwrap()
            .build();
        let client = aw!(Client::in_memory(&server, config_for_chain())).unwrap();
        let _ = aw!(client.call_tool("metered_chain_echo", text("x"))).unwrap();
        let unknown = aw!(client.call_tool("zz_chained_unknown_4712", text("x")));
        assert!(unknown.is_err());
        aw!(client.close());
    });
    let seen = snapshot();
    let ok = ["gen_ai.tool.name=metered_chain_echo", "outcome=ok"];
    assert_eq!(
        timed(&seen, "mcp.server.operation.duration", &ok),
        1,
        "{seen:?}"
    );
    assert!(
        !seen.iter().any(|(name, labels, _)| {
            name.starts_with("mcp.server.")
                && labels.iter().any(|l| l.contains("zz_chained_unknown"))
        }),
        "a peer's unknown tool name became a label under a chain: {seen:?}"
    );
}

fn config_for_chain() -> ClientConfig {
    config(LEGACY)
}

#[cfg(feature = "http")]
#[test]
fn http_requests_bytes_connections_and_refusals_are_counted_in_both_eras() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    snapshotter();
    let before = snapshot();
    let refused_before = counter(&before, "mcp.server.refusals", &["reason=session"]);
    let late_before = counter(&before, "mcp.server.refusals", &["reason=deadline"]);
    rt::block_on(async {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut edge = HttpConfig::default();
        edge.header_read_timeout = Duration::from_millis(300);
        let handle = aw!(server("metered_http_echo").serve_http_with(localhost, edge)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        for era in [LEGACY, EraMode::Modern] {
            let client = aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, config(era), ClientOptions::default()),
            ))
            .expect("connects in time")
            .unwrap();
            for _ in 0..2 {
                let result = aw!(client.call_tool("metered_http_echo", text("hey"))).unwrap();
                assert_eq!(result.content[0].as_text(), Some("hey"));
            }
            aw!(client.close());
        }
        // A session this server never issued: 404 on the 2025 wire.
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", "not-a-session-of-this-server"),
            ("Mcp-Protocol-Version", "2025-11-25"),
        ];
        let url2 = url.clone();
        let (status, _, _) = aw!(rt::unblock(move || raw(&url2, "POST", &headers, body)));
        assert_eq!(status, 404);
        // A request head that never ends: 408 at the header read deadline.
        let authority = handle.local_addr();
        let late = aw!(rt::unblock(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(authority).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            answer
        }));
        assert!(late.starts_with("HTTP/1.1 408"), "{late}");
        aw!(handle.shutdown());
    });
    let seen = snapshot();
    let ok = [
        "mcp.method.name=tools/call",
        "gen_ai.tool.name=metered_http_echo",
        "outcome=ok",
    ];
    assert_eq!(
        timed(&seen, "mcp.server.operation.duration", &ok),
        4,
        "{seen:?}"
    );
    assert!(counter(&seen, "mcp.bytes.received", &["transport=http"]) > 0);
    assert!(counter(&seen, "mcp.bytes.sent", &["transport=http"]) > 0);
    assert!(!series(&seen, "mcp.server.connections.active", &["transport=http"]).is_empty());
    let refused = counter(&seen, "mcp.server.refusals", &["reason=session"]);
    assert!(refused > refused_before, "{refused} after {refused_before}");
    let late = counter(&seen, "mcp.server.refusals", &["reason=deadline"]);
    assert!(late > late_before, "{late} after {late_before}");
}
