//! The binding's glue over an in-memory pipe pair: connect in every era mode, typed calls,
//! progress, cancellation by dropping the call (the handler is aborted) or by a handle
//! (from elsewhere; before the call first runs), timeouts (the handler is aborted too), a
//! server that hangs up, errors

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
};
use serde_json::Map;
use serde_json::value::RawValue;

use super::support::{ERAS, LEGACY, text};
use super::{echo_tool, slow_tool, wait_for};
use crate::binding::{CallWatch, Client, ClientError, ConnectError, Server};
use crate::{dialect, rt};

/// `echo` and `slow` (which sets `aborted` when it is dropped)
fn server(aborted: Arc<AtomicBool>) -> Server {
    let builder = Server::builder(ServerConfig::new(Implementation::new("test-server", "1.0")));
    slow_tool(echo_tool(builder), aborted).build()
}

dialect_fn! {
    async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
        let (r, w) = super::serve(server(aborted));
        let mut config = ClientConfig::new(Implementation::new("test-client", "1.0"));
        config.era = era;
        aw!(Client::connect(r, w, config)).unwrap()
    }
}

fn slow() -> Box<RawValue> {
    RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap()
}

dialect_fn! {
    /// A client in `era` speaks `version`, lists the tools and calls them; bad arguments are a
    /// tool error, an unknown tool a protocol error
    pub(crate) async fn typed_calls(era: EraMode, version: ProtocolVersion) {
        let client = aw!(connect(era, Arc::default()));
        assert_eq!(client.peer().version, version);
        let tools = aw!(client.list_tools()).unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "slow"]);
        let result = aw!(client.call_tool("echo", text("hello world"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello world"));
        // Arguments that fail the input schema are a tool error, not a protocol error.
        let result = aw!(client.call_tool("echo", Map::new())).unwrap();
        assert!(result.is_error());
        // An unknown tool is a protocol error.
        match aw!(client.call_tool("nope", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602),
            other => panic!("{other:?}"),
        }
        aw!(client.close());
    }
}

#[test]
fn typed_calls_in_every_era_mode() {
    rt::block_on(async {
        for (era, version) in ERAS {
            aw!(typed_calls(era, version));
        }
    });
}

#[test]
fn progress_arrives_and_dropping_the_call_aborts_the_handler() {
    rt::block_on(async {
        for era in [LEGACY, EraMode::Modern] {
            let aborted = Arc::new(AtomicBool::new(false));
            let client = aw!(connect(era, Arc::clone(&aborted)));
            let (tx, mut rx) = rt::channel();
            let call = dialect::call_tool_with(&client, "slow", Map::new(), tx);
            for expected in 1..=3 {
                let p = aw!(rx.recv()).unwrap();
                assert_eq!(p.progress, f64::from(expected));
                assert_eq!(p.total, Some(3.0));
            }
            assert!(!aborted.load(Ordering::SeqCst), "{era:?}: the handler runs");
            // Aborting the call drops it, which cancels the request.
            aw!(call.abort());
            assert!(
                aw!(wait_for(&aborted)),
                "{era:?}: the server aborted the cancelled handler"
            );
            // The connection still works.
            let result = aw!(client.call_tool("echo", text("still here"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("still here"));
        }
    });
}

#[test]
fn a_cancel_handle_cancels_from_elsewhere() {
    rt::block_on(async {
        for era in [LEGACY, EraMode::Modern] {
            let aborted = Arc::new(AtomicBool::new(false));
            let client = aw!(connect(era, Arc::clone(&aborted)));
            let (handle, call) = dialect::start(
                &client,
                "tools/call",
                Some(slow()),
                RequestOptions::default(),
                CallWatch::default(),
            );
            // Another task (thread) cancels while this one waits for the outcome.
            let canceller = rt::spawn(async move {
                aw!(rt::sleep(Duration::from_millis(50)));
                handle.cancel();
            });
            let outcome = aw!(call.join());
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::Cancelled))),
                "{era:?}: {outcome:?}"
            );
            aw!(canceller.join());
            assert!(aw!(wait_for(&aborted)), "{era:?}: the handler was aborted");
        }
    });
}

only_async! {
    #[test]
    fn a_cancel_before_the_call_first_runs_ends_it_without_sending_it() {
        rt::block_on(async {
            let aborted = Arc::new(AtomicBool::new(false));
            let client = connect(LEGACY, Arc::clone(&aborted)).await;
            let (handle, call) = client.start(
                "tools/call",
                Some(slow()),
                RequestOptions::default(),
                CallWatch::default(),
            );
            // The request is sent when its future first runs; this cancel comes before that.
            handle.cancel();
            let outcome = rt::timeout(Duration::from_secs(5), call)
                .await
                .expect("the cancelled call ends at once, not after the handler's hour");
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::Cancelled))),
                "{outcome:?}"
            );
            // The connection still works, and the slow handler never ran (its drop sets the
            // flag).
            let result = client.call_tool("echo", text("still here")).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("still here"));
            assert!(!aborted.load(Ordering::SeqCst), "the handler never started");
        });
    }
}

#[test]
fn a_request_times_out_and_its_handler_is_aborted() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = aw!(connect(LEGACY, Arc::clone(&aborted)));
        let options = RequestOptions::default().timeout(Duration::from_millis(200));
        let outcome = aw!(client.request_raw("tools/call", Some(slow()), options, None));
        assert!(
            matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
            "{outcome:?}"
        );
        // The timed-out request was cancelled on the wire, so the handler is aborted.
        assert!(aw!(wait_for(&aborted)), "the timed-out handler was aborted");
    });
}

#[test]
fn a_closed_server_fails_the_handshake_and_calls_after_close() {
    rt::block_on(async {
        // The server side hangs up at once: the handshake fails with a clear error.
        let ((cr, cw), server_ends) = rt::pipes();
        drop(server_ends);
        let config = ClientConfig::new(Implementation::new("c", "1"));
        let outcome = aw!(Client::connect(cr, cw, config));
        // A transport failure, not a refusal: one sentence, no "handshake failed" twice.
        match outcome {
            Err(e @ ConnectError::Transport(_)) => {
                let text = e.to_string();
                assert!(
                    text == "the server closed the connection before the handshake was done"
                        || text.starts_with("writing to the connection failed: "),
                    "{text}"
                );
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        // A call on a closed client ends, it does not hang.
        let client = aw!(connect(EraMode::Modern, Arc::default()));
        let other = client.clone();
        aw!(client.close());
        let outcome = aw!(other.list_tools());
        assert!(outcome.is_err(), "{outcome:?}");
    });
}

/// Calls `boom` with `{"text": "boom"}` (the tool panics) in both eras: the call is answered
/// `-32603`, and the session goes on (`{"text": "calm"}` is answered "fine")
fn a_panic_is_answered(server: fn() -> Server) {
    rt::block_on(async {
        for era in [EraMode::Modern, LEGACY] {
            let (r, w) = super::serve(server());
            let mut config = ClientConfig::new(Implementation::new("c", "1.0"));
            config.era = era;
            let client = aw!(Client::connect(r, w, config)).unwrap();
            let params = serde_json::value::to_raw_value(
                &serde_json::json!({"name": "boom", "arguments": {"text": "boom"}}),
            )
            .unwrap();
            let options = RequestOptions::default().timeout(Duration::from_secs(5));
            let (_, call) = dialect::start(
                &client,
                "tools/call",
                Some(params),
                options,
                CallWatch::default(),
            );
            match aw!(call.join()) {
                Err(ClientError::Call(CallError::Remote(e))) => {
                    assert_eq!(e.code, -32603, "{era:?}: {e:?}");
                    assert!(
                        e.message.ends_with("the handler panicked"),
                        "{era:?}: {e:?}"
                    );
                }
                other => panic!("{era:?}: {:?}", other.map(|_| ())),
            }
            let fine = aw!(client.call_tool("boom", text("calm"))).unwrap();
            assert_eq!(fine.content[0].as_text(), Some("fine"));
            aw!(client.close());
        }
    });
}

/// A server without middleware whose `boom` panics on `{"text": "boom"}`
pub(crate) fn panics_when_run() -> Server {
    Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
        .tool(
            mcp_sansio::schema::Tool::new("boom", super::support::echo_schema()),
            handler!(|_cx, args| {
                if args["text"] == "boom" {
                    panic!("the handler gave up");
                }
                Ok(mcp_sansio::schema::CallToolResult::text("fine"))
            }),
        )
        .unwrap()
        .build()
}

#[test]
fn a_handler_that_panics_is_answered_with_an_internal_error_not_left_hanging() {
    a_panic_is_answered(panics_when_run);
}

only_async! {
    /// A server whose `boom` panics before it makes its future
    fn panics_when_called() -> Server {
        Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
            .tool(
                mcp_sansio::schema::Tool::new("boom", super::support::echo_schema()),
                |_cx, args: Map<String, serde_json::Value>| {
                    assert_ne!(args["text"], "boom", "the handler gave up at once");
                    async move { Ok(mcp_sansio::schema::CallToolResult::text("fine")) }
                },
            )
            .unwrap()
            .build()
    }

    #[test]
    fn a_handler_that_panics_before_its_future_runs_is_answered_too() {
        a_panic_is_answered(panics_when_called);
    }
}
