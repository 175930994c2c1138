//! The binding's glue over OS pipes: connect in every era mode, typed calls, progress,
//! cancellation (dropping the call, or a cancel handle) reaching the handler's token,
//! timeouts, input in both eras, logging, typed tools

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, InputRequests, LoggingLevel, Tool};
use mcp_sansio::{CallError, EraMode, Implementation, Progress, RequestOptions, ServerConfig};
use mcp_sansio_blocking::{
    CallWatch, CancellationToken, ClientError, ClientOptions, InputHandler, Server,
};
use serde_json::value::RawValue;
use serde_json::{Map, json};

use common::support::{
    ERAS, LEGACY, answer_ada, echo_schema, greeting, log_levels, name_request, object, text,
};
use common::{config, connect};

/// A server whose `slow` tool reports three progress steps, then waits for cancellation and
/// hands its token to the test
fn server(tokens: mpsc::Sender<CancellationToken>) -> Server {
    let tokens = std::sync::Mutex::new(tokens);
    let mut config = ServerConfig::new(Implementation::new("test-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .logging()
        .tool(Tool::new("echo", echo_schema()), |_cx, args| {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let _ = tokens.lock().unwrap().send(cx.cancellation());
            for i in 1..=3 {
                cx.progress(Progress::new(f64::from(i)).total(3.0));
            }
            cx.sleep(Duration::from_secs(3600))?;
            Ok(CallToolResult::text("never"))
        })
        .unwrap()
        .tool(Tool::new("chatty", Map::new()), |cx, _args| {
            cx.log(LoggingLevel::Debug, "debug detail");
            cx.log(LoggingLevel::Info, "info note");
            cx.log(LoggingLevel::Error, json!({"error": "bad"}));
            Ok(CallToolResult::text("done"))
        })
        .unwrap()
        .build()
}

fn plain_server() -> Server {
    server(mpsc::channel().0)
}

#[test]
fn typed_calls_in_every_era_mode() {
    for (era, version) in ERAS {
        let client = connect(plain_server(), config(era), ClientOptions::default());
        assert_eq!(client.peer().version, version);
        let tools = client.list_tools().unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["chatty", "echo", "slow"], "{era:?}");
        let result = client.call_tool("echo", text("hello world")).unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello world"));
        // Arguments that fail the input schema are a tool error, not a protocol error.
        assert!(client.call_tool("echo", Map::new()).unwrap().is_error());
        // An unknown tool is a protocol error.
        match client.call_tool("nope", Map::new()) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32602),
            other => panic!("{other:?}"),
        }
        client.close();
    }
}

#[test]
fn progress_arrives_and_dropping_the_call_cancels_the_handler() {
    for era in [LEGACY, EraMode::Modern] {
        let (tokens_tx, tokens) = mpsc::channel();
        let client = connect(server(tokens_tx), config(era), ClientOptions::default());
        let (tx, rx) = mpsc::channel();
        let mut watch = CallWatch::default();
        watch.progress = Some(tx);
        let raw = RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
        let call = client.start(
            "tools/call",
            Some(raw),
            RequestOptions::default().with_progress(),
            watch,
        );
        for expected in 1..=3 {
            let p = rx.recv().unwrap();
            assert_eq!(p.progress, f64::from(expected));
            assert_eq!(p.total, Some(3.0));
        }
        let token = tokens.recv().unwrap();
        assert!(!token.is_cancelled());
        drop(call);
        // The handler's sleep ends with the cancellation (else this test hangs).
        assert_eq!(
            token.sleep(Duration::from_secs(3600)),
            Err(mcp_sansio_blocking::Cancelled),
            "{era:?}"
        );
        // The connection still works.
        let result = client.call_tool("echo", text("still here")).unwrap();
        assert_eq!(result.content[0].as_text(), Some("still here"));
    }
}

#[test]
fn a_cancel_handle_ends_the_call_from_another_thread() {
    let (tokens_tx, tokens) = mpsc::channel();
    let client = connect(server(tokens_tx), config(LEGACY), ClientOptions::default());
    let raw = RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
    let call = client.start(
        "tools/call",
        Some(raw),
        RequestOptions::default(),
        CallWatch::default(),
    );
    let handle = call.cancel_handle();
    let token = tokens.recv().unwrap();
    std::thread::spawn(move || handle.cancel());
    match call.wait() {
        Err(ClientError::Call(CallError::Cancelled)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        token.sleep(Duration::from_secs(3600)),
        Err(mcp_sansio_blocking::Cancelled)
    );
}

#[test]
fn a_request_times_out_and_the_handler_is_cancelled() {
    let (tokens_tx, tokens) = mpsc::channel();
    let client = connect(server(tokens_tx), config(LEGACY), ClientOptions::default());
    let raw = RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
    let options = RequestOptions::default().timeout(Duration::from_millis(200));
    let outcome = client.request_raw("tools/call", Some(raw), options, None);
    assert!(
        matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
        "{outcome:?}"
    );
    // The timed-out request was cancelled on the wire, so the handler's token is too.
    let token = tokens.recv().unwrap();
    assert_eq!(
        token.sleep(Duration::from_secs(3600)),
        Err(mcp_sansio_blocking::Cancelled)
    );
}

fn notification_levels(rx: &mpsc::Receiver<mcp_sansio::InboundNotification>) -> Vec<String> {
    log_levels(rx.try_iter())
}

#[test]
fn legacy_log_levels_follow_set_level() {
    let (tx, rx) = mpsc::channel();
    let client = connect(
        plain_server(),
        config(LEGACY),
        ClientOptions::default().notifications(tx),
    );
    client.call_tool("chatty", Map::new()).unwrap();
    assert_eq!(notification_levels(&rx), ["info", "error"]);
    let raw = RawValue::from_string(r#"{"level":"error"}"#.into()).unwrap();
    client
        .request_raw(
            "logging/setLevel",
            Some(raw),
            RequestOptions::default(),
            None,
        )
        .unwrap();
    client.call_tool("chatty", Map::new()).unwrap();
    assert_eq!(notification_levels(&rx), ["error"]);
}

#[test]
fn modern_requests_get_no_logs_unless_they_ask() {
    let (tx, rx) = mpsc::channel();
    let client = connect(
        plain_server(),
        config(EraMode::Modern),
        ClientOptions::default().notifications(tx),
    );
    client.call_tool("chatty", Map::new()).unwrap();
    assert!(notification_levels(&rx).is_empty());
    let raw = RawValue::from_string(
        r#"{"name":"chatty","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}"#.into(),
    )
    .unwrap();
    client
        .request_raw("tools/call", Some(raw), RequestOptions::default(), None)
        .unwrap();
    assert_eq!(notification_levels(&rx), ["debug", "info", "error"]);
}

fn asking_server(runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("ask-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(Tool::new("greet", Map::new()), move |cx, _args| {
            runs.fetch_add(1, Ordering::SeqCst);
            let answers = cx.ask(name_request()).map_err(|e| e.to_error())?;
            Ok(greeting(&answers))
        })
        .unwrap()
        .build()
}

fn answering() -> InputHandler {
    Arc::new(|requests: InputRequests| Ok(answer_ada(&requests)))
}

#[test]
fn the_same_handler_asks_in_both_eras() {
    for (era, expected_runs) in [
        (LEGACY, 1),
        // Modern: the first run ends in input_required; the retry runs the handler again.
        (EraMode::Modern, 2),
    ] {
        let runs = Arc::new(AtomicUsize::new(0));
        let mut config = config(era);
        config.capabilities = json!({"elicitation": {}});
        let client = connect(
            asking_server(Arc::clone(&runs)),
            config,
            ClientOptions::default().input(answering()),
        );
        let result = client.call_tool("greet", Map::new()).unwrap();
        assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
        assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
    }
}

#[test]
fn without_the_capability_the_handler_gets_a_clear_error() {
    let client = connect(
        asking_server(Arc::default()),
        config(EraMode::Modern),
        ClientOptions::default(),
    );
    match client.call_tool("greet", Map::new()) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32021),
        other => panic!("{other:?}"),
    }
}

#[cfg(feature = "schemars")]
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number
    a: f64,
    /// The second number
    b: f64,
}

#[cfg(feature = "schemars")]
#[test]
fn typed_tool_schema_and_arguments() {
    let server = Server::builder(ServerConfig::new(Implementation::new("typed", "1.0")))
        .typed_tool("add", "Adds two numbers", |_cx, args: AddArgs| {
            Ok(CallToolResult::text((args.a + args.b).to_string()))
        })
        .unwrap()
        .build();
    let client = connect(server, config(EraMode::Auto), ClientOptions::default());
    let tools = client.list_tools().unwrap();
    let schema = serde_json::Value::Object(tools[0].input_schema.clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "number");
    assert_eq!(schema["required"], json!(["a", "b"]));
    let result = client
        .call_tool("add", object(json!({"a": 2, "b": 3.5})))
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("5.5"));
    assert!(client.call_tool("add", Map::new()).unwrap().is_error());
}

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
    let client = connect(server, config(LEGACY), ClientOptions::default());
    match client.call_tool("boom", Map::new()) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32603),
        other => panic!("{other:?}"),
    }
    // The one worker survived the panic.
    let result = client.call_tool("ok", Map::new()).unwrap();
    assert_eq!(result.content[0].as_text(), Some("ok"));
}

#[test]
fn a_server_that_stops_reading_resumes_and_answers_every_pipelined_call() {
    // Two requests in flight at most: the server's session stops wanting bytes after two,
    // so its reader waits, and must be woken as handlers finish, or the calls never end.
    let mut config = ServerConfig::new(Implementation::new("test-server", "1.0"));
    config.limits.max_in_flight_inbound = 2;
    let server = Server::builder(config)
        .workers(1)
        .tool(
            Tool::new("echo", object(json!({"type": "object"}))),
            |_cx, args| {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap()
        .build();
    let client = connect(server, config_legacy(), ClientOptions::default());
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let params = json!({"name": "echo", "arguments": {"text": format!("call {i}")}});
            let params = serde_json::value::to_raw_value(&params).unwrap();
            client.start(
                "tools/call",
                Some(params),
                RequestOptions::default(),
                CallWatch::default(),
            )
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let result: CallToolResult = serde_json::from_str(call.wait().unwrap().get()).unwrap();
        assert_eq!(result, CallToolResult::text(format!("call {i}")));
    }
}

fn config_legacy() -> mcp_sansio::ClientConfig {
    config(LEGACY)
}
