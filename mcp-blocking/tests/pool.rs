//! The worker pool under the binding's glue, over OS pipes: a panicking handler is an
//! internal error and its worker survives; a server whose session stops reading (too many
//! requests in flight for one worker) is woken as handlers finish and answers every
//! pipelined call. What every binding's glue does (calls, progress, cancellation, input,
//! logging, tasks, child processes, HTTP, OAuth) is the binding suite's (`tests/suite.rs`).

mod common;

use mcp_sansio::schema::{CallToolResult, Tool};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use mcp_sansio::{CallError, ErrorObject, Implementation, RequestOptions, ServerConfig};
use mcp_sansio_blocking::{
    CallWatch, Client, ClientError, ClientOptions, Context, PendingCall, Server,
};
use serde_json::{Map, Value, json};

use common::connect;
use common::support::{LEGACY, object};

#[test]
fn a_panicking_handler_is_an_internal_error_and_the_server_goes_on() {
    let server = Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
        .workers(1)
        .tool(Tool::new("boom", Map::new()), |_cx, _args| panic!("boom"))
        .unwrap()
        .tool(Tool::new("ok", Map::new()), |_cx, _args| {
            Ok(CallToolResult::text("ok"))
        })
        .unwrap()
        .build();
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    match client.call_tool("boom", Map::new()) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32603),
        other => panic!("{other:?}"),
    }
    // The one worker survived the panic.
    let result = client.call_tool("ok", Map::new()).unwrap();
    assert_eq!(result.content[0].as_text(), Some("ok"));
}

/// Answers its `text`
fn echo(_cx: Context, args: Map<String, Value>) -> Result<CallToolResult, ErrorObject> {
    Ok(CallToolResult::text(
        args["text"].as_str().unwrap_or_default(),
    ))
}

#[test]
fn a_server_that_stops_reading_resumes_and_answers_every_pipelined_call() {
    // Two requests in flight at most: the server's session stops wanting bytes after two,
    // so its reader waits, and must be woken as handlers finish, or the calls never end.
    let mut config = ServerConfig::new(Implementation::new("test-server", "1.0"));
    config.limits.max_in_flight_inbound = 2;
    let server = Server::builder(config)
        .workers(1)
        .tool(Tool::new("echo", object(json!({"type": "object"}))), echo)
        .unwrap()
        .build();
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    let calls: Vec<_> = (0..200)
        .map(|i| start(&client, "echo", &format!("call {i}")))
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let result: CallToolResult = serde_json::from_str(call.wait().unwrap().get()).unwrap();
        assert_eq!(result, CallToolResult::text(format!("call {i}")));
    }
}

/// A handler that blocks on `gate` until it opens, ignoring its cancellation (as a handler
/// stuck in a blocking library call does); it tells `started` when it runs
fn stubborn(
    gate: Arc<(Mutex<bool>, Condvar)>,
    started: mpsc::Sender<()>,
) -> impl Fn(Context, Map<String, Value>) -> Result<CallToolResult, ErrorObject> + Send + Sync + 'static
{
    let started = Mutex::new(started);
    move |_cx, _args| {
        let _ = started.lock().unwrap().send(());
        let (open, opened) = &*gate;
        let mut open = open.lock().unwrap();
        while !*open {
            open = opened.wait(open).unwrap();
        }
        Ok(CallToolResult::text("done at last"))
    }
}

fn open(gate: &(Mutex<bool>, Condvar)) {
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
}

/// A call of `tool` with `text` in the background, dropped (cancelled) or waited for
fn start(client: &Client, tool: &str, text: &str) -> PendingCall {
    let params = json!({"name": tool, "arguments": {"text": text}});
    let params = serde_json::value::to_raw_value(&params).unwrap();
    client.start(
        "tools/call",
        Some(params),
        RequestOptions::default(),
        CallWatch::default(),
    )
}

/// A server of two workers with `stubborn` (on `gate`, telling `started`) and `echo`
fn stubborn_and_echo(gate: &Arc<(Mutex<bool>, Condvar)>, started: mpsc::Sender<()>) -> Server {
    Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
        .workers(2)
        .tool(
            Tool::new("stubborn", Map::new()),
            stubborn(Arc::clone(gate), started),
        )
        .unwrap()
        .tool(Tool::new("echo", object(json!({"type": "object"}))), echo)
        .unwrap()
        .build()
}

/// Issue 17, item 8: with every worker held by handlers whose calls were cancelled but that
/// do not notice, another call still runs: a cancelled handler lends its seat
#[test]
fn a_cancelled_handler_that_keeps_running_lends_its_worker_to_the_next_call() {
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (started, starts) = mpsc::channel();
    let server = stubborn_and_echo(&gate, started);
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    let bound = Duration::from_secs(15);
    // Both workers run a stubborn handler; then both calls are cancelled.
    let calls = [
        start(&client, "stubborn", "stubborn"),
        start(&client, "stubborn", "stubborn"),
    ];
    for _ in 0..2 {
        starts.recv_timeout(bound).expect("a stubborn handler runs");
    }
    drop(calls);
    let echo = start(&client, "echo", "echo");
    let (tx, answered) = mpsc::channel();
    std::thread::spawn(move || tx.send(echo.wait()));
    let outcome = answered.recv_timeout(bound);
    // Only now do the stubborn handlers end (a failure above must not hang the test).
    open(&gate);
    let result = outcome.expect("the echo is answered while the stubborn handlers still run");
    let result: CallToolResult = serde_json::from_str(result.unwrap().get()).unwrap();
    assert_eq!(result, CallToolResult::text("echo"));
}

/// A call cancelled while it waits for a worker never runs its handler
#[test]
fn a_call_cancelled_before_a_worker_took_it_never_runs() {
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (started, starts) = mpsc::channel();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let server = Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
        .workers(1)
        .tool(
            Tool::new("stubborn", Map::new()),
            stubborn(Arc::clone(&gate), started),
        )
        .unwrap()
        .tool(Tool::new("counted", Map::new()), move |_cx, _args| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(CallToolResult::text("counted"))
        })
        .unwrap()
        .build();
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    let bound = Duration::from_secs(15);
    let first = start(&client, "stubborn", "stubborn");
    starts
        .recv_timeout(bound)
        .expect("the stubborn handler runs");
    // Queued behind it (one worker), then cancelled.
    drop(start(&client, "counted", "counted"));
    // The cancellation reaches the server before the gate opens: a listing sent after it
    // is answered after it was read.
    client.list_tools().unwrap();
    open(&gate);
    let done: CallToolResult = serde_json::from_str(first.wait().unwrap().get()).unwrap();
    assert_eq!(done, CallToolResult::text("done at last"));
    // A call queued after the cancelled one runs: the cancelled one was skipped before it.
    let after: CallToolResult =
        serde_json::from_str(start(&client, "counted", "counted").wait().unwrap().get()).unwrap();
    assert_eq!(after, CallToolResult::text("counted"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Issue 17, item 8, over HTTP: a storm of 2026 clients that start calls and leave holds
/// up no other client: the calls still queued are skipped, the handlers already running
/// (and ignoring their cancellation) lend their workers, and another client's call is
/// answered while they still run
#[cfg(feature = "http")]
#[test]
fn clients_that_leave_mid_call_do_not_hold_up_another_clients_call() {
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (started, starts) = mpsc::channel();
    let server = stubborn_and_echo(&gate, started);
    let handle = server.serve_http("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = handle.local_addr();
    let bound = Duration::from_secs(15);
    let storm: Vec<_> = (0..8)
        .map(|_| common::support::hostile::a_call_whose_client_never_reads(addr, "stubborn"))
        .collect();
    for _ in 0..2 {
        starts.recv_timeout(bound).expect("a stubborn handler runs");
    }
    drop(storm);
    let (tx, answered) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = Client::connect_http(
            &format!("http://{addr}/mcp"),
            common::config(mcp_sansio::EraMode::Modern),
            ClientOptions::default(),
        )
        .map(|client| client.call_tool("echo", object(json!({"text": "still served"}))));
        let _ = tx.send(outcome);
    });
    let outcome = answered.recv_timeout(bound);
    open(&gate);
    let result = outcome
        .expect("the call is answered while the storm's handlers still run")
        .expect("connects")
        .expect("answered");
    assert_eq!(result.content[0].as_text(), Some("still served"));
    handle.shutdown();
}

/// Past `max_threads` a call is refused at once: on the 2026 HTTP wire `503` with
/// `Retry-After` and the JSON-RPC error SERVER_BUSY with the call's id; the calls that hold
/// the threads finish normally, and once they have, a call is served again
#[cfg(feature = "http")]
#[test]
fn past_max_threads_a_call_is_refused_at_once_with_503_and_retry_after() {
    use common::support::innocent::{
        header, messages, modern_call, parse, read_until, request_bytes,
    };
    use std::io::Write;
    use std::net::TcpStream;
    use std::time::Instant;

    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let held = Arc::clone(&gate);
    let running = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&running);
    let server = Server::builder(ServerConfig::new(Implementation::new("busy", "1.0")))
        .workers(1)
        .max_threads(2)
        .start_within(Duration::from_millis(20))
        .tool(Tool::new("hold", Map::new()), move |_cx, _args| {
            counted.fetch_add(1, Ordering::SeqCst);
            // Until the test opens the gate (bounded, so nothing hangs)
            let (lock, cvar) = &*held;
            let guard = lock.lock().unwrap();
            let _open = cvar
                .wait_timeout_while(guard, Duration::from_secs(20), |open| !*open)
                .unwrap();
            Ok(CallToolResult::text("held"))
        })
        .unwrap()
        .tool(Tool::new("echo", object(json!({"type": "object"}))), echo)
        .unwrap()
        .build();
    let http = server.serve_http("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = http.local_addr();
    let send = |id: u64, tool: &str| {
        let (headers, body) = modern_call(id, tool, json!({"text": "hi"}), false);
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(&request_bytes(addr, "POST", &headers, &body, true))
            .unwrap();
        stream
    };
    let answer = |stream: &mut TcpStream, id: u64| {
        let bytes = read_until(stream, Instant::now() + Duration::from_secs(15), |b| {
            parse(b).is_some_and(|(_, _, body)| messages(&body).iter().any(|m| m["id"] == id))
        });
        parse(&bytes).unwrap_or_else(|| panic!("no answer to {id}: {bytes:?}"))
    };
    // Two calls take both threads the server may have.
    let mut first = send(1, "hold");
    let mut second = send(2, "hold");
    let start = Instant::now();
    while running.load(Ordering::SeqCst) < 2 {
        if start.elapsed() > Duration::from_secs(15) {
            let bytes = read_until(&mut first, Instant::now() + Duration::from_secs(1), |_| {
                false
            });
            panic!(
                "the held calls never started ({} did): {}",
                running.load(Ordering::SeqCst),
                String::from_utf8_lossy(&bytes)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // A third is refused at once, while they still hold them.
    let mut third = send(3, "echo");
    let (status, head, body) = answer(&mut third, 3);
    assert_eq!(status, 503, "{head}");
    assert_eq!(header(&head, "retry-after"), Some("1"), "{head}");
    let refusal = messages(&body).into_iter().find(|m| m["id"] == 3).unwrap();
    assert_eq!(
        refusal["error"]["code"],
        mcp_sansio::jsonrpc::code::SERVER_BUSY,
        "{refusal}"
    );
    assert_eq!(
        running.load(Ordering::SeqCst),
        2,
        "the refused call never ran"
    );
    // The held calls end normally; then the server serves again.
    open(&gate);
    for (stream, id) in [(&mut first, 1), (&mut second, 2)] {
        let (status, _, body) = answer(stream, id);
        assert_eq!(status, 200);
        let m = messages(&body).into_iter().find(|m| m["id"] == id).unwrap();
        assert_eq!(m["result"]["content"][0]["text"], "held", "{m}");
    }
    let mut fourth = send(4, "echo");
    let (status, _, body) = answer(&mut fourth, 4);
    assert_eq!(status, 200);
    let m = messages(&body).into_iter().find(|m| m["id"] == 4).unwrap();
    assert_eq!(m["result"]["content"][0]["text"], "hi", "{m}");
    http.shutdown();
}

/// A client that stops reading a large response holds its connection no longer than
/// `HttpConfig::write_timeout`: then the server closes it (and the thread writing it is free)
#[cfg(feature = "http")]
#[test]
fn a_response_nobody_reads_is_given_up_at_the_write_deadline() {
    use common::support::innocent::{modern_call, request_bytes, small_window};
    use mcp_sansio::http::HttpConfig;
    use std::io::{Read, Write};
    use std::time::Instant;

    let server = Server::builder(ServerConfig::new(Implementation::new("w", "1.0")))
        .tool(Tool::new("echo", object(json!({"type": "object"}))), echo)
        .unwrap()
        .build();
    let mut config = HttpConfig::default();
    config.write_timeout = Duration::from_secs(1);
    config.max_body_size = 64 * 1024 * 1024;
    let http = server
        .serve_http_with("127.0.0.1:0".parse().unwrap(), config)
        .unwrap();
    let addr = http.local_addr();
    // 24 MiB back (more than the kernel's send buffer takes), to a 4 KiB receive window
    // that is not read: the write blocks.
    let text = "x".repeat(24 * 1024 * 1024);
    let (headers, body) = modern_call(1, "echo", json!({ "text": text }), false);
    let mut stream = small_window(addr).unwrap();
    stream
        .write_all(&request_bytes(addr, "POST", &headers, &body, false))
        .unwrap();
    std::thread::sleep(Duration::from_secs(8));
    // Past the deadline the server has closed: reading what it queued ends in EOF or a
    // reset within the bound, not in a connection still being written.
    let start = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    let mut received = 0;
    let closed = loop {
        match stream.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => received += n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break false;
            }
            // Reset: closed with bytes unread
            Err(_) => break true,
        }
        if start.elapsed() > Duration::from_secs(15) {
            break false;
        }
    };
    assert!(closed, "still open after the write deadline");
    assert!(
        received < text.len(),
        "the whole response went out ({received} bytes): the deadline was not what closed it"
    );
    http.shutdown();
}
