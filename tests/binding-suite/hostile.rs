//! The HTTP edge against hostile clients (issue 17, items 1, 3, 4 and 7), over real sockets
//! on 127.0.0.1: each test starts the binding's server with small deadlines and runs one
//! check of the hostile-client kit (`support/hostile.rs`) from a thread of its own. The
//! deadlines are a few hundred milliseconds and the kit waits up to 15 s for each outcome,
//! so nothing here depends on the machine's speed.
//!
//! While each fault runs, the innocent client (`support/innocent.rs`, issue 34) calls `echo`
//! every 200 ms on a fresh connection, and the test asserts it was served: every call
//! answered within 5 s, p99 under 1 s (where the fault fills `max_connections` or the
//! descriptors by design, under the time the fault holds them plus 1 s). The last three
//! tests are issue 34's cases, small enough for CI yet past what mcp-blocking's 16 workers
//! absorb; the mcp-interop test `innocent` runs them at the scale against the
//! everything-server processes, with their memory.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::{Implementation, ServerConfig};
use serde_json::Map;

use super::support::hostile;
use super::support::innocent::{self, Innocent, P99_BOUND};
use super::support::{LEGACY, text};
use super::{Flag, echo_tool, slow_tool};
use crate::binding::{Client, ClientOptions, HttpServerHandle, Server};
use crate::rt;

/// The suite's small deadlines: 300 ms for a head, 300 ms for a body, 300 ms idle
fn edge_config() -> HttpConfig {
    let mut config = HttpConfig::default();
    config.header_read_timeout = Duration::from_millis(300);
    config.body_read_timeout = Duration::from_millis(300);
    config.keep_alive_timeout = Duration::from_millis(300);
    if let Some(keepalive) = rt::HTTP_KEEPALIVE {
        config.keepalive = Some(keepalive);
    }
    config
}

dialect_fn! {
    async fn start(config: HttpConfig) -> HttpServerHandle {
        let server = slow_tool(
            echo_tool(Server::builder(ServerConfig::new(Implementation::new("hostile", "1")))),
            std::sync::Arc::default(),
        )
        .build();
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        aw!(server.serve_http_with(localhost, config)).unwrap()
    }
}

dialect_fn! {
    /// Runs `check` of the kit against a fresh server with `config` while the innocent
    /// client watches, then shuts it down; the innocent was served (p99 under 1 s)
    async fn against(config: HttpConfig, check: fn(SocketAddr)) {
        aw!(against_within(config, check, P99_BOUND));
    }
}

dialect_fn! {
    /// [`against`], the innocent client's p99 under `p99_bound`
    async fn against_within(config: HttpConfig, check: fn(SocketAddr), p99_bound: Duration) {
        let handle = aw!(start(config));
        let addr = handle.local_addr();
        let report = aw!(rt::unblock(move || {
            let innocent = Innocent::watch(addr);
            check(addr);
            innocent.report()
        }));
        aw!(rt::timeout(Duration::from_secs(10), handle.shutdown())).expect("shutdown in time");
        report.assert_served_within("the innocent client beside the fault", p99_bound);
    }
}

#[test]
fn an_unfinished_head_gets_408_and_the_connection_closes() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::an_unfinished_head_gets_408_and_the_connection_closes
        ));
    });
}

#[test]
fn a_head_sent_a_byte_at_a_time_is_cut_off() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::a_head_sent_a_byte_at_a_time_is_cut_off
        ));
    });
}

#[test]
fn a_body_that_never_ends_gets_408_and_the_connection_closes() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::a_body_that_never_ends_gets_408_and_the_connection_closes
        ));
    });
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::an_idle_keep_alive_connection_is_closed
        ));
    });
}

#[test]
fn beyond_max_connections_a_client_waits_until_the_deadlines_free_a_slot() {
    rt::block_on(async {
        let mut config = edge_config();
        config.max_connections = 2;
        config.header_read_timeout = Duration::from_secs(3);
        // Every client waits while the hostile ones hold both slots, the innocent one too:
        // it is served once the header deadline frees them.
        let bound = config.header_read_timeout + P99_BOUND;
        aw!(against_within(
            config,
            hostile::beyond_max_connections_a_client_waits_until_the_deadlines_free_a_slot,
            bound
        ));
    });
}

#[test]
fn two_host_fields_and_a_value_that_is_not_utf8_get_400() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::two_host_fields_and_a_value_that_is_not_utf8_get_400
        ));
    });
}

#[test]
fn a_request_without_host_gets_400() {
    rt::block_on(async {
        aw!(against(
            edge_config(),
            hostile::a_request_without_host_gets_400
        ));
    });
}

/// TCP_NODELAY on the server's accepted sockets and on the binding's client sockets, checked
/// on the sockets themselves while a call is in flight (a slow one keeps its connection open)
#[cfg(target_os = "linux")]
#[test]
fn server_and_client_sockets_have_tcp_nodelay() {
    rt::block_on(async {
        let handle = aw!(start(HttpConfig::default()));
        let addr = handle.local_addr();
        let url = format!("http://{addr}/mcp");
        for era in [LEGACY, mcp_sansio::EraMode::Modern] {
            let mut config = mcp_sansio::ClientConfig::new(Implementation::new("nodelay", "1"));
            config.era = era;
            let client = aw!(rt::timeout(
                Duration::from_secs(10),
                Client::connect_http(&url, config, ClientOptions::default()),
            ))
            .expect("connects in time")
            .unwrap();
            let echoed = aw!(client.call_tool("echo", text("hi"))).unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("hi"));
            let (tx, mut rx) = rt::channel();
            let call = crate::dialect::call_tool_with(&client, "slow", Map::new(), tx);
            aw!(rt::timeout(Duration::from_secs(10), rx.recv()))
                .expect("the slow call runs")
                .unwrap();
            let seen = aw!(rt::unblock(move || {
                hostile::sockets_to_and_from_have_nodelay(addr)
            }));
            // The slow call's request: the client's socket and the server's, at least.
            assert!(seen >= 2, "{era:?}: {seen} sockets");
            aw!(call.abort());
            aw!(client.close());
        }
        aw!(rt::timeout(Duration::from_secs(10), handle.shutdown())).expect("shutdown in time");
    });
}

/// At the process's descriptor limit (a child everything-server under `ulimit -n 48`) the
/// accept loop backs off instead of spinning, and serves again once descriptors free
#[cfg(target_os = "linux")]
#[test]
fn at_the_descriptor_limit_the_server_backs_off_and_serves_again() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target/<profile>/deps");
    let server = dir.join("examples").join(rt::EVERYTHING_SERVER);
    assert!(server.exists(), "{} is not built", server.display());
    hostile::at_the_descriptor_limit_the_server_backs_off_and_serves_again(&server);
}

/// Adds `flood`, which reports progress with a 1 KB message 40,000 times (40 MB), napping
/// now and then; `aborted` is set when its run is cancelled, `finished` when it ran to the end
fn flood_tool(
    builder: crate::binding::ServerBuilder,
    aborted: std::sync::Arc<std::sync::atomic::AtomicBool>,
    finished: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> crate::binding::ServerBuilder {
    use mcp_sansio::Progress;
    use mcp_sansio::schema::{CallToolResult, Tool};
    builder
        .tool(
            Tool::new("flood", Map::new()),
            handler!([aborted, finished]; |cx, _args| {
                let flag = Flag(std::sync::Arc::clone(&aborted));
                let message = "y".repeat(1000);
                for i in 1..=40_000_u32 {
                    cx.progress(Progress::new(f64::from(i)).message(message.clone()));
                    if i % 64 == 0 {
                        nap!(cx, Duration::from_millis(1));
                    }
                }
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                std::mem::forget(flag);
                Ok(CallToolResult::text("flooded"))
            }),
        )
        .unwrap()
}

/// Item 8: a client that never reads its event stream has the response dropped once
/// `max_unwritten` bytes wait for it (rather than the server holding 40 MB), which on the
/// 2026 wire cancels the call; the connection then closes without the stream's end
#[test]
fn an_event_stream_nobody_reads_is_dropped_and_its_call_cancelled() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        let server = flood_tool(
            echo_tool(Server::builder(ServerConfig::new(Implementation::new(
                "flood", "1",
            )))),
            Arc::clone(&aborted),
            Arc::clone(&finished),
        )
        .build();
        let mut config = HttpConfig::default();
        config.max_unwritten = 256 * 1024;
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server.serve_http_with(localhost, config)).unwrap();
        let addr = handle.local_addr();
        let innocent = Innocent::watch(addr);
        let stream = aw!(rt::unblock(move || {
            hostile::a_call_whose_client_never_reads(addr, "flood")
        }));
        let mut cancelled = false;
        for _ in 0..1500 {
            if aborted.load(Ordering::SeqCst) || finished.load(Ordering::SeqCst) {
                cancelled = aborted.load(Ordering::SeqCst);
                break;
            }
            aw!(rt::sleep(Duration::from_millis(10)));
        }
        assert!(cancelled, "the flood was cancelled, not run to its end");
        aw!(rt::unblock(move || {
            hostile::the_dropped_response_closes_unfinished(stream)
        }));
        let report = aw!(rt::unblock(move || innocent.report()));
        aw!(rt::timeout(Duration::from_secs(10), handle.shutdown())).expect("shutdown in time");
        report.assert_served("the innocent client beside the flood nobody reads");
    });
}

/// Adds `slow` as the everything-servers have it: `steps` tenths of a second (5 unless
/// given), a progress report at the start of each, then `done after <steps> steps`
fn stepped_slow_tool(builder: crate::binding::ServerBuilder) -> crate::binding::ServerBuilder {
    use mcp_sansio::Progress;
    use mcp_sansio::schema::{CallToolResult, Tool};
    let schema = super::support::object(serde_json::json!({"type": "object",
        "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 50}}}));
    builder
        .tool(
            Tool::new("slow", schema),
            handler!(|cx, args| {
                let steps = args
                    .get("steps")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(5);
                for step in 1..=steps {
                    #[allow(clippy::cast_precision_loss)]
                    cx.progress(Progress::new(step as f64).total(steps as f64));
                    nap!(cx, Duration::from_millis(100));
                }
                Ok(CallToolResult::text(format!("done after {steps} steps")))
            }),
        )
        .unwrap()
}

dialect_fn! {
    /// The binding's server with the everything-servers' `echo` and `slow`, on the default
    /// [`HttpConfig`] (issue 34 measured the defaults) and the default workers
    async fn start_everything() -> HttpServerHandle {
        let server = stepped_slow_tool(echo_tool(Server::builder(ServerConfig::new(
            Implementation::new("innocent", "1"),
        ))))
        .build();
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        aw!(server.serve_http_with(localhost, HttpConfig::default())).unwrap()
    }
}

/// A fault of issue 34: what it found wrong (besides the innocent client), or what it saw
type Fault = Box<dyn FnOnce(SocketAddr) -> Result<String, String> + Send>;

dialect_fn! {
    /// Runs `fault` against a fresh [`start_everything`] server while the innocent client
    /// watches; fails unless the fault found nothing wrong and the innocent was served
    async fn watched(what: &'static str, fault: Fault) {
        let handle = aw!(start_everything());
        let addr = handle.local_addr();
        let (outcome, report) = aw!(rt::unblock(move || {
            let innocent = Innocent::watch(addr);
            let outcome = fault(addr);
            (outcome, innocent.report())
        }));
        aw!(rt::timeout(Duration::from_secs(10), handle.shutdown())).expect("shutdown in time");
        let served = report.served_within(P99_BOUND);
        // What was seen, also when it held (`--nocapture` shows it)
        eprintln!("{what}: {outcome:?}; innocent client: {report}");
        assert!(
            outcome.is_ok() && served.is_ok(),
            "{what}: {}; innocent client: {report}",
            outcome.unwrap_or_else(|e| e)
        );
    }
}

/// Issue 34, case 1 (the counts, smaller echoes): 100 slow calls, 30 legacy GET
/// streams and 10 echoes of 256 KiB from clients with 4 KiB receive buffers that never
/// read, held for 4 s (the slow calls are 50 s of work: three times what 16 workers do in
/// the window); the innocent client is served throughout. (A debug build spends some 0.4 s
/// of CPU on a 2 MiB echo, which a current-thread runtime's other clients wait for: the
/// 2 MiB echoes are the mcp-interop test `innocent`'s, with the memory they cost.)
#[test]
fn responses_nobody_reads_leave_the_innocent_client_served() {
    rt::block_on(async {
        let scale = innocent::Unread {
            echoes: 10,
            echo_bytes: 256 * 1024,
            ..innocent::UNREAD_AT_SCALE
        };
        aw!(watched(
            "responses nobody reads",
            Box::new(move |addr| {
                let held = innocent::responses_nobody_reads(addr, scale);
                std::thread::sleep(Duration::from_secs(4));
                drop(held);
                Ok(format!("{scale:?} held for 4 s"))
            })
        ));
    });
}

/// Issue 34, case 2: 500 requests whose bodies are cut short and 400 five-second `slow`
/// calls dropped mid-stream; a `slow` call made right after completes, and the innocent
/// client is served throughout
#[test]
fn clients_that_leave_free_what_they_held() {
    rt::block_on(async {
        let scale = innocent::Leaving {
            cut: 500,
            dropped: 400,
        };
        aw!(watched(
            "clients that leave",
            Box::new(move |addr| {
                let after = innocent::clients_that_leave(addr, scale)?;
                Ok(format!("the slow call after took {after:?}"))
            })
        ));
    });
}

/// Issue 34, case 3: 96 connections from one address, each holding a one-second `slow`
/// call (six times what 16 workers start at once) with 5 s of patience: each ends with its
/// result or an immediate 503 with `Retry-After`, and the innocent client is served
#[test]
fn one_source_holding_many_calls_gets_results_or_clear_refusals() {
    rt::block_on(async {
        let scale = innocent::Holding {
            calls: 96,
            steps: 10,
            patience: Duration::from_secs(5),
        };
        aw!(watched(
            "one source holds many calls",
            Box::new(move |addr| {
                let held = innocent::one_source_holds_many_calls(addr, scale);
                held.every_call_answered()?;
                Ok(held.to_string())
            })
        ));
    });
}
