//! Both directions full at once: a client and a server over a Unix socket pair, with many
//! concurrent calls carrying large arguments to a tool that answers with large results,
//! large progress reports and large log messages. Enough bytes go each way to fill the
//! kernel's socket buffers in both directions; neither side may stop reading because it is
//! busy writing (a thread blocked in `write` must not keep the other side's bytes from being
//! read), or both hang. And many small calls at once: nothing left for the session lock's
//! holder may be stranded.

mod common;

use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_sansio::{
    EraMode, Implementation, Progress, ProtocolVersion, RequestOptions, ServerConfig,
};
use mcp_sansio_blocking::{Client, ClientOptions, Server};
use serde_json::json;

use common::config;
use common::support::object;

/// Callers at once, and calls each makes
const CALLERS: usize = 8;
const CALLS: usize = 6;
/// Bytes of each call's argument (echoed back as its result)
const ARG: usize = 400 * 1024;
/// Bytes of each progress message and log message the handler sends
const NOTE: usize = 100 * 1024;

/// A tool that reports large progress, logs large messages, and echoes its large argument
fn server() -> Server {
    Server::builder(ServerConfig::new(Implementation::new("duplex", "1.0")))
        .logging()
        .workers(CALLERS)
        .tool(
            Tool::new(
                "bulk",
                object(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
            ),
            |cx, args| {
                let note = "p".repeat(NOTE);
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0).message(&*note));
                    cx.log(LoggingLevel::Info, note.as_str());
                }
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap()
        .build()
}

/// A client connected over a Unix socket pair to `server`, which serves on a thread
fn connect(server: Server, options: ClientOptions) -> Client {
    let (a, b) = UnixStream::pair().unwrap();
    let b_write = b.try_clone().unwrap();
    thread::spawn(move || server.serve(b, b_write));
    let a_write = a.try_clone().unwrap();
    let era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    Client::connect_with(a, a_write, config(era), options).unwrap()
}

/// `callers` threads at once, each making `calls` calls through `call(client, caller, n)`
/// (which asserts on what comes back); then the client closes. Returns the calls made.
fn from_callers(
    client: Client,
    callers: usize,
    calls: usize,
    call: impl Fn(&Client, usize, usize) + Sync,
) -> usize {
    let call = &call;
    let made = thread::scope(|s| {
        let threads: Vec<_> = (0..callers)
            .map(|i| {
                let client = client.clone();
                s.spawn(move || (0..calls).map(|j| call(&client, i, j)).count())
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    client.close();
    made
}

/// Runs `exchange` on a thread and returns its count, failing with `hang` if it does not
/// end within 120 s: a hang detector, not a timing assertion (each exchange takes about a
/// second when it works)
fn without_hanging(hang: &str, exchange: impl FnOnce() -> usize + Send + 'static) -> usize {
    let (done_tx, done) = mpsc::channel();
    thread::spawn(move || {
        let _ = done_tx.send(exchange());
    });
    match done.recv_timeout(Duration::from_secs(120)) {
        Ok(count) => count,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{hang}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the exchange panicked"),
    }
}

/// Runs the whole exchange; returns the calls that came back intact
fn exchange() -> usize {
    let (notes_tx, notes) = mpsc::channel();
    let client = connect(server(), ClientOptions::default().notifications(notes_tx));
    // Take the log messages as they come (the channel is unbounded anyway).
    thread::spawn(move || notes.iter().count());
    from_callers(client, CALLERS, CALLS, |client, i, j| {
        let text = char::from(b'a' + u8::try_from((i * CALLS + j) % 26).unwrap())
            .to_string()
            .repeat(ARG);
        let (progress, reports) = mpsc::channel();
        let result = client
            .call_tool_with(
                "bulk",
                object(json!({ "text": text })),
                RequestOptions::default().with_progress(),
                progress,
            )
            .unwrap();
        assert!(!result.is_error());
        assert_eq!(result.content[0].as_text(), Some(text.as_str()));
        // Progress is best effort (dropped over the queue limit), never wrong.
        for p in reports.try_iter() {
            assert_eq!(p.message.as_deref().map(str::len), Some(NOTE));
        }
    })
}

#[test]
fn large_traffic_both_ways_at_once_does_not_hang() {
    let intact = without_hanging(
        "the exchange hung: both sides stopped reading while writing",
        exchange,
    );
    assert_eq!(intact, CALLERS * CALLS);
}

/// Many callers, small calls, handlers that report progress: the session's lock is taken by
/// callers, handlers and the reader all at once, so commands and handler messages are often
/// left for the lock's holder. Every call must come back with its own result, its progress
/// in order, and none may be stranded (a hang).
fn contended_exchange() -> usize {
    let server = Server::builder(ServerConfig::new(Implementation::new("busy", "1.0")))
        .workers(4)
        .tool(
            Tool::new(
                "echo",
                object(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
            ),
            |cx, args| {
                cx.progress(Progress::new(1.0).total(2.0));
                cx.progress(Progress::new(2.0).total(2.0));
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap()
        .build();
    let client = connect(server, ClientOptions::default());
    from_callers(client, 32, 300, |client, i, j| {
        let text = format!("{i}-{j}");
        let (progress, reports) = mpsc::channel();
        let result = client
            .call_tool_with(
                "echo",
                object(json!({ "text": text })),
                RequestOptions::default().with_progress(),
                progress,
            )
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some(text.as_str()));
        let steps: Vec<f64> = reports.try_iter().map(|p| p.progress).collect();
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    })
}

#[test]
fn many_callers_and_handlers_at_once_each_get_their_own_answer() {
    let calls = without_hanging("a call was stranded", contended_exchange);
    assert_eq!(calls, 32 * 300);
}
