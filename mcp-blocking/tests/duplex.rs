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

use mcp_blocking::{Client, ClientOptions, Server};
use mcp_core::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_core::{EraMode, Implementation, Progress, ProtocolVersion, RequestOptions, ServerConfig};
use serde_json::json;

use common::{config, object};

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

/// Runs the whole exchange; returns the calls that came back intact
fn exchange() -> usize {
    let (a, b) = UnixStream::pair().unwrap();
    let server = server();
    let b_write = b.try_clone().unwrap();
    thread::spawn(move || server.serve(b, b_write));
    let (notes_tx, notes) = mpsc::channel();
    let options = ClientOptions::default().notifications(notes_tx);
    let a_write = a.try_clone().unwrap();
    let era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    let client = Client::connect_with(a, a_write, config(era), options).unwrap();
    // Take the log messages as they come (the channel is unbounded anyway).
    thread::spawn(move || notes.iter().count());
    let intact = thread::scope(|s| {
        let callers: Vec<_> = (0..CALLERS)
            .map(|i| {
                let client = client.clone();
                s.spawn(move || {
                    let mut intact = 0;
                    for j in 0..CALLS {
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
                        intact += 1;
                    }
                    intact
                })
            })
            .collect();
        callers.into_iter().map(|c| c.join().unwrap()).sum()
    });
    client.close();
    intact
}

#[test]
fn large_traffic_both_ways_at_once_does_not_hang() {
    let (done_tx, done) = mpsc::channel();
    thread::spawn(move || {
        let _ = done_tx.send(exchange());
    });
    // A hang detector, not a timing assertion: the exchange takes well under a second when
    // it works.
    match done.recv_timeout(Duration::from_secs(120)) {
        Ok(intact) => assert_eq!(intact, CALLERS * CALLS),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the exchange hung: both sides stopped reading while writing")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the exchange panicked"),
    }
}

/// Many callers, small calls, handlers that report progress: the session's lock is taken by
/// callers, handlers and the reader all at once, so commands and handler messages are often
/// left for the lock's holder. Every call must come back with its own result, its progress
/// in order, and none may be stranded (a hang).
fn contended_exchange() -> usize {
    const CALLERS: usize = 32;
    const CALLS: usize = 300;
    let (a, b) = UnixStream::pair().unwrap();
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
    let b_write = b.try_clone().unwrap();
    thread::spawn(move || server.serve(b, b_write));
    let a_write = a.try_clone().unwrap();
    let era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    let client = Client::connect(a, a_write, config(era)).unwrap();
    let intact = thread::scope(|s| {
        let callers: Vec<_> = (0..CALLERS)
            .map(|i| {
                let client = client.clone();
                s.spawn(move || {
                    let mut intact = 0;
                    for j in 0..CALLS {
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
                        intact += 1;
                    }
                    intact
                })
            })
            .collect();
        callers.into_iter().map(|c| c.join().unwrap()).sum()
    });
    client.close();
    intact
}

#[test]
fn many_callers_and_handlers_at_once_each_get_their_own_answer() {
    let (done_tx, done) = mpsc::channel();
    thread::spawn(move || {
        let _ = done_tx.send(contended_exchange());
    });
    // A hang detector, not a timing assertion: the exchange takes about a second.
    match done.recv_timeout(Duration::from_secs(120)) {
        Ok(intact) => assert_eq!(intact, 32 * 300),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("a call was stranded"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the exchange panicked"),
    }
}
