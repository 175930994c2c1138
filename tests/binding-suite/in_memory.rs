//! `Client::in_memory`: a built server tested through a client in the same process, with no
//! process, socket or port, in both eras: tools, progress, elicitation answered by the
//! client's input handler, a request timeout (on the real clock here; tokio's paused clock
//! has its own test, `mcp-tokio/tests/in_memory_clock.rs`), the server's notifications and
//! pushes, and the server's side ending with the client

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, InboundNotification, Progress,
    ProtocolVersion, RequestOptions, ServerConfig,
};
use serde_json::{Map, json};

use super::support::{LEGACY, answer_ada, text};
use super::{echo_tool, greet_tool, slow_tool, wait_for};
use crate::binding::{Client, ClientError, ClientOptions, Server};
use crate::{dialect, rt};

/// The eras an in-memory client is tested in, with the version each settles on
const ERAS: [(EraMode, ProtocolVersion); 2] = [
    (LEGACY, ProtocolVersion::V2025_11_25),
    (EraMode::Modern, ProtocolVersion::V2026_07_28),
];

fn config_for(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("in-memory-test", "1.0"));
    config.era = era;
    config
}

/// `echo`, `steps` (three progress reports, then `stepped`), `greet` (asks for a name) and
/// `slow` (progress, then an hour; `aborted` is set when its run is stopped)
fn server(runs: Arc<AtomicUsize>, aborted: Arc<AtomicBool>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("in-memory-server", "1.0"));
    config.state_key = Some([9; 32]);
    let builder = echo_tool(Server::builder(config))
        .tool(
            Tool::new("steps", Map::new()),
            handler!(|cx, _args| {
                for step in 1..=3 {
                    cx.progress(Progress::new(f64::from(step)).total(3.0));
                }
                Ok(CallToolResult::text("stepped"))
            }),
        )
        .unwrap();
    slow_tool(greet_tool(builder, runs), aborted).build()
}

#[test]
fn an_in_memory_client_calls_tools_and_sees_their_progress_in_both_eras() {
    rt::block_on(async {
        for (era, version) in ERAS {
            let server = server(Arc::default(), Arc::default());
            let client = aw!(Client::in_memory(&server, config_for(era))).unwrap();
            assert_eq!(client.peer().version, version, "{era:?}");
            let tools = aw!(client.list_tools()).unwrap();
            assert_eq!(tools.len(), 4, "{era:?}");

            let result = aw!(client.call_tool("echo", text("hi"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("hi"), "{era:?}");

            let (progress, mut reports) = rt::channel();
            let options = RequestOptions::default();
            let result = aw!(client.call_tool_with("steps", Map::new(), options, progress));
            assert_eq!(result.unwrap().content[0].as_text(), Some("stepped"));
            // Progress arrives before the result it belongs to
            let seen: Vec<f64> = std::iter::from_fn(|| reports.try_recv())
                .map(|p| p.progress)
                .collect();
            assert_eq!(seen, [1.0, 2.0, 3.0], "{era:?}");
        }
    });
}

#[test]
fn an_in_memory_client_answers_elicitations_through_its_input_handler_in_both_eras() {
    rt::block_on(async {
        // Modern: the first run ends in input_required; the retry runs the handler again.
        for ((era, _), expected_runs) in ERAS.into_iter().zip([1, 2]) {
            let runs = Arc::new(AtomicUsize::new(0));
            let server = server(Arc::clone(&runs), Arc::default());
            let answering = dialect::input_handler(|requests| Ok(answer_ada(requests)));
            let options = ClientOptions::default().input(answering);
            let client = aw!(Client::in_memory_with(&server, config_for(era), options)).unwrap();
            let result = aw!(client.call_tool("greet", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
        }
    });
}

#[test]
fn without_an_input_handler_the_elicitation_is_refused() {
    rt::block_on(async {
        let server = server(Arc::default(), Arc::default());
        let mut config = config_for(EraMode::Modern);
        config.capabilities = json!({});
        let client = aw!(Client::in_memory(&server, config)).unwrap();
        match aw!(client.call_tool("greet", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32021),
            other => panic!("{other:?}"),
        }
    });
}

/// No paused clock here (smol, threads; tokio on its real clock): a short timeout against a
/// tool that takes an hour, bounded by the timeout itself
#[test]
fn an_in_memory_request_times_out_and_stops_the_handler() {
    rt::block_on(async {
        for (era, _) in ERAS {
            let aborted = Arc::new(AtomicBool::new(false));
            let server = server(Arc::default(), Arc::clone(&aborted));
            let client = aw!(Client::in_memory(&server, config_for(era))).unwrap();
            let (progress, _reports) = rt::channel();
            let options = RequestOptions::default().timeout(Duration::from_millis(200));
            let outcome = aw!(client.call_tool_with("slow", Map::new(), options, progress));
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
                "{era:?}: {outcome:?}"
            );
            // The timed-out request was cancelled: the handler's run is stopped
            assert!(aw!(wait_for(&aborted)), "{era:?}");
            // The connection still serves
            let result = aw!(client.call_tool("echo", text("after"))).unwrap();
            assert_eq!(result.content[0].as_text(), Some("after"));
        }
    });
}

#[test]
fn closing_the_in_memory_client_ends_the_servers_side_and_its_handlers() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let server = server(Arc::default(), Arc::clone(&aborted));
        let client = aw!(Client::in_memory(&server, config_for(LEGACY))).unwrap();
        let (progress, mut reports) = rt::channel();
        let call = dialect::call_tool_with(&client, "slow", Map::new(), progress);
        assert!(aw!(reports.recv()).is_some(), "the handler runs");
        aw!(client.close());
        assert!(aw!(wait_for(&aborted)), "the handler's run is stopped");
        assert!(aw!(call.join()).is_err());
    });
}

dialect_fn! {
    /// The next notification named `method`, skipping others; at most 10 s (a failure guard:
    /// it polls, and the test fails if nothing came)
    async fn next_named(
        rx: &mut rt::Receiver<InboundNotification>,
        method: &str,
    ) -> Option<InboundNotification> {
        for _ in 0..2000 {
            match rx.try_recv() {
                Some(n) if n.method == method => return Some(n),
                Some(_) => {}
                None => aw!(rt::sleep(Duration::from_millis(5))),
            }
        }
        None
    }
}

#[test]
fn an_in_memory_client_gets_the_servers_logs_and_pushes() {
    rt::block_on(async {
        let config = ServerConfig::new(Implementation::new("in-memory-server", "1.0"));
        let server = Server::builder(config)
            .logging()
            .list_changed()
            .tool(
                Tool::new("chatty", Map::new()),
                handler!(|cx, _args| {
                    cx.log(LoggingLevel::Info, "a note");
                    Ok(CallToolResult::text("done"))
                }),
            )
            .unwrap()
            .build();
        let (tx, mut rx) = rt::channel();
        let options = ClientOptions::default().notifications(tx);
        let client = aw!(Client::in_memory_with(&server, config_for(LEGACY), options)).unwrap();
        aw!(client.call_tool("chatty", Map::new())).unwrap();
        assert!(aw!(next_named(&mut rx, "notifications/message")).is_some());
        // The in-memory connection is one of the server's live connections: pushes reach it
        server
            .add_tool(
                Tool::new("late", Map::new()),
                handler!(|_cx, _args| { Ok(CallToolResult::text("late but here")) }),
            )
            .unwrap();
        let pushed = aw!(next_named(&mut rx, "notifications/tools/list_changed"));
        assert!(pushed.is_some());
        assert_eq!(aw!(client.list_tools()).unwrap().len(), 2);
    });
}
