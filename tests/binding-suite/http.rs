//! Our client and our server over real Streamable HTTP on 127.0.0.1, in the legacy
//! (2025-11-25) and modern (2026-07-28) eras; malformed requests get the spec's status and a
//! JSON-RPC error body, and the server keeps serving; closing, shutting down and timeouts

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::http::HttpConfig;
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
};
use serde_json::value::RawValue;
use serde_json::{Map, json};

use super::support::raw_http::malformed_requests_get_the_spec_status;
use super::support::{LEGACY, answer_ada, text};
use super::{echo_tool, greet_tool, slow_tool, wait_for};
use crate::binding::{CallWatch, Client, ClientError, ClientOptions, HttpServerHandle, Server};
use crate::{dialect, rt};

/// `echo`, `slow` (which sets `aborted` when it is dropped) and `greet` (which counts its
/// runs in `runs`)
fn server(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("http-test-server", "1.0"));
    config.state_key = Some([7; 32]);
    let builder = slow_tool(echo_tool(Server::builder(config)), aborted);
    greet_tool(builder, runs).build()
}

dialect_fn! {
    async fn start(aborted: Arc<AtomicBool>, runs: Arc<AtomicUsize>) -> HttpServerHandle {
        let mut config = HttpConfig::default();
        config.max_body_size = 64 * 1024;
        if let Some(keepalive) = rt::HTTP_KEEPALIVE {
            config.keepalive = Some(keepalive);
        }
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        aw!(server(aborted, runs).serve_http_with(localhost, config)).unwrap()
    }
}

fn url(handle: &HttpServerHandle) -> String {
    format!("http://{}/mcp", handle.local_addr())
}

dialect_fn! {
    async fn connect(url: &str, era: EraMode) -> Client {
        let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
        config.era = era;
        config.capabilities = json!({"elicitation": {}});
        let answering = dialect::input_handler(|requests| Ok(answer_ada(requests)));
        let options = ClientOptions::default().input(answering);
        aw!(rt::timeout(
            Duration::from_secs(10),
            Client::connect_http(url, config, options),
        ))
        .expect("connects in time")
        .unwrap()
    }
}

fn slow() -> Box<RawValue> {
    RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap()
}

#[test]
fn list_call_progress_cancel_and_ask_in_both_eras() {
    rt::block_on(async {
        for (era, version, expected_runs) in [
            (LEGACY, ProtocolVersion::V2025_11_25, 1),
            (EraMode::Modern, ProtocolVersion::V2026_07_28, 2),
            (EraMode::Auto, ProtocolVersion::V2026_07_28, 2),
        ] {
            let aborted = Arc::new(AtomicBool::new(false));
            let runs = Arc::new(AtomicUsize::new(0));
            let handle = aw!(start(Arc::clone(&aborted), Arc::clone(&runs)));
            let client = aw!(connect(&url(&handle), era));
            assert_eq!(client.peer().version, version, "{era:?}");

            let tools = aw!(client.list_tools()).unwrap();
            let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["echo", "greet", "slow"]);
            let result = aw!(client.call_tool("echo", text("over http"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("over http"));
            match aw!(client.call_tool("nope", Map::new())) {
                Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602),
                other => panic!("{era:?}: {other:?}"),
            }

            // Progress arrives on the request's stream; dropping the call aborts the handler:
            // by notifications/cancelled (2025), or because the client closed the response
            // (2026).
            let (tx, mut rx) = rt::channel();
            let call = dialect::call_tool_with(&client, "slow", Map::new(), tx);
            for expected in 1..=3 {
                let p = aw!(rt::timeout(Duration::from_secs(5), rx.recv()))
                    .expect("progress in time")
                    .unwrap();
                assert_eq!(p.progress, f64::from(expected));
            }
            aw!(call.abort());
            assert!(aw!(wait_for(&aborted)), "{era:?}: the handler was aborted");

            // A cancel handle ends the call at once, as cancelled, and aborts the handler.
            aborted.store(false, Ordering::SeqCst);
            let (tx, mut rx) = rt::channel();
            let mut watch = CallWatch::default();
            watch.progress = Some(tx);
            let options = RequestOptions::default().with_progress();
            let (cancel, call) =
                dialect::start(&client, "tools/call", Some(slow()), options, watch);
            aw!(rt::timeout(Duration::from_secs(5), rx.recv()))
                .expect("progress in time: the handler runs")
                .unwrap();
            cancel.cancel();
            match aw!(rt::timeout(Duration::from_secs(10), call.join())) {
                Some(Err(ClientError::Call(CallError::Cancelled))) => {}
                other => panic!("{era:?}: {other:?}"),
            }
            assert!(
                aw!(wait_for(&aborted)),
                "{era:?}: the handler of the cancelled call was aborted"
            );

            // Context::ask: live elicitation (2025) or input_required and a retry (2026).
            let result = aw!(client.call_tool("greet", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");

            let result = aw!(client.call_tool("echo", text("still here"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("still here"));
            aw!(client.close());
            aw!(handle.shutdown());
        }
    });
}

#[test]
fn malformed_requests_get_the_spec_status_and_the_server_keeps_serving() {
    rt::block_on(async {
        let handle = aw!(start(Arc::default(), Arc::default()));
        let url = url(&handle);
        let other = aw!(connect(&url, LEGACY));

        // The raw requests block: they go from a thread of their own.
        let raw_url = url.clone();
        aw!(rt::unblock(move || malformed_requests_get_the_spec_status(
            &raw_url
        )));

        // Other clients are unaffected, in both eras.
        let result = aw!(other.call_tool("echo", text("fine"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("fine"));
        let modern = aw!(connect(&url, EraMode::Modern));
        let result = aw!(modern.call_tool("echo", text("fine too"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("fine too"));
        aw!(other.close());
        aw!(modern.close());
        aw!(handle.shutdown());
    });
}

#[test]
fn closing_the_client_deletes_its_session_and_shutdown_ends_open_streams() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let handle = aw!(start(Arc::clone(&aborted), Arc::default()));
        let url = url(&handle);
        let client = aw!(connect(&url, LEGACY));
        let result = aw!(client.call_tool("echo", text("hi"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hi"));
        aw!(client.close());

        // A slow call is in flight when the server shuts down: the call ends, shutdown
        // returns, the handler is aborted.
        let client = aw!(connect(&url, LEGACY));
        let call = {
            let client = client.clone();
            rt::spawn(async move { aw!(client.call_tool("slow", Map::new())) })
        };
        aw!(rt::sleep(Duration::from_millis(100)));
        aw!(rt::timeout(Duration::from_secs(10), handle.shutdown())).expect("shutdown in time");
        let outcome =
            aw!(rt::timeout(Duration::from_secs(10), call.join())).expect("the call ends");
        assert!(outcome.is_err(), "{outcome:?}");
        assert!(aw!(wait_for(&aborted)), "shutdown aborted the handler");
    });
}

dialect_fn! {
    /// An `echo` server at `addr` without a `state_key`: a new process knows none of the
    /// sessions of the one before
    async fn start_echo(addr: SocketAddr) -> HttpServerHandle {
        let config = ServerConfig::new(Implementation::new("http-restarted-server", "1.0"));
        let server = echo_tool(Server::builder(config)).build();
        aw!(server.serve_http_with(addr, HttpConfig::default())).unwrap()
    }
}

/// The server process restarts on the same port and forgets the session: its 404 makes
/// the client start a new session (the spec's MUST), and the call that got it is re-sent
/// and answered, on the same client
#[test]
fn a_client_whose_server_restarted_starts_a_new_session_and_its_call_is_answered() {
    rt::block_on(async {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let first = aw!(start_echo(localhost));
        let addr = first.local_addr();
        let url = format!("http://{addr}/mcp");
        let client = aw!(connect(&url, LEGACY));
        let result = aw!(client.call_tool("echo", text("before"))).unwrap();
        assert_eq!(result.content[0].as_text(), Some("before"));
        aw!(rt::timeout(Duration::from_secs(10), first.shutdown())).expect("shutdown in time");

        let second = aw!(start_echo(addr));
        let result = aw!(rt::timeout(
            Duration::from_secs(30),
            client.call_tool("echo", text("after")),
        ))
        .expect("answered in time")
        .unwrap();
        assert_eq!(result.content[0].as_text(), Some("after"));
        assert_eq!(client.peer().version, ProtocolVersion::V2025_11_25);
        let again = aw!(client.call_tool("echo", text("again"))).unwrap();
        assert_eq!(again.content[0].as_text(), Some("again"));
        aw!(client.close());
        aw!(second.shutdown());
    });
}

/// The HTTP client's one timer (armed lazily, for the earliest deadline): a call times out
/// over HTTP, its handler on the server is cancelled, and the session goes on
#[test]
fn a_call_times_out_over_http_and_the_session_goes_on() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let handle = aw!(start(Arc::clone(&aborted), Arc::default()));
        for era in [LEGACY, EraMode::Modern] {
            aborted.store(false, Ordering::SeqCst);
            let client = aw!(connect(&url(&handle), era));
            // A long deadline first, so the timer is armed later than the short one below.
            let options = RequestOptions::default().timeout(Duration::from_secs(600));
            let (_, long) = dialect::start(
                &client,
                "tools/call",
                Some(slow()),
                options,
                CallWatch::default(),
            );
            let options = RequestOptions::default().timeout(Duration::from_millis(300));
            let outcome = aw!(rt::timeout(
                Duration::from_secs(30),
                client.request_raw("tools/call", Some(slow()), options, None),
            ))
            .expect("the timeout fires");
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
                "{outcome:?}"
            );
            assert!(
                aw!(wait_for(&aborted)),
                "the timed-out handler is cancelled"
            );
            let echoed = aw!(client.call_tool("echo", text("still here"))).unwrap();
            assert_eq!(echoed.content[0].as_text(), Some("still here"));
            aw!(long.abort());
            aw!(client.close());
        }
        aw!(handle.shutdown());
    });
}

/// Without the `tls` feature an `https://` URL is refused before connecting, saying why
#[cfg(not(feature = "tls"))]
#[test]
fn https_without_the_tls_feature_is_refused_saying_why() {
    let config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
    let outcome = rt::block_on(async {
        aw!(Client::connect_http(
            "https://127.0.0.1:9/mcp",
            config,
            ClientOptions::default()
        ))
    });
    match outcome {
        Err(crate::binding::ConnectError::Url(why)) => {
            assert!(why.contains("https:// needs the `tls` feature"), "{why}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn a_handler_that_panics_over_http_is_answered_and_the_server_goes_on() {
    rt::block_on(async {
        let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let server = super::duplex::panics_when_run();
        let handle = aw!(server.serve_http_with(localhost, HttpConfig::default())).unwrap();
        for era in [LEGACY, EraMode::Modern] {
            let mut config = ClientConfig::new(Implementation::new("http-test-client", "1.0"));
            config.era = era;
            let client = aw!(Client::connect_http(
                &url(&handle),
                config,
                ClientOptions::default()
            ))
            .unwrap();
            let boom = serde_json::value::to_raw_value(
                &json!({"name": "boom", "arguments": {"text": "boom"}}),
            )
            .unwrap();
            let options = RequestOptions::default().timeout(Duration::from_secs(5));
            let outcome = aw!(client.request_raw("tools/call", Some(boom), options, None));
            match outcome {
                Err(ClientError::Call(CallError::Remote(e))) => {
                    assert_eq!(e.code, -32603, "{era:?}: {e:?}");
                }
                other => panic!("{era:?}: {:?}", other.map(|_| ())),
            }
            let fine = aw!(client.call_tool("boom", text("calm"))).unwrap();
            assert_eq!(fine.content[0].as_text(), Some("fine"), "{era:?}");
            aw!(client.close());
        }
        aw!(handle.shutdown());
    });
}
