//! The binding's glue over an in-memory duplex: connect in every era mode, typed calls,
//! progress, cancellation by dropping the call (the handler is aborted), errors

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, ServerConfig};
use mcp_sansio_tokio::{Client, ClientError, Server};
use serde_json::{Map, Value, json};

fn schema() -> Map<String, Value> {
    let Value::Object(m) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    else {
        unreachable!()
    };
    m
}

fn server(aborted: Arc<AtomicBool>) -> Server {
    Server::builder(ServerConfig::new(Implementation::new("test-server", "1.0")))
        .tool(Tool::new("echo", schema()), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let aborted = Arc::clone(&aborted);
            async move {
                struct Flag(Arc<AtomicBool>);
                impl Drop for Flag {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _flag = Flag(aborted);
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0));
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("never"))
            }
        })
        .unwrap()
        .build()
}

async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = server(aborted);
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(client_io);
    let mut config = ClientConfig::new(Implementation::new("test-client", "1.0"));
    config.era = era;
    Client::connect(r, w, config).await.unwrap()
}

#[tokio::test]
async fn typed_calls_in_every_era_mode() {
    for (era, version) in [
        (EraMode::Auto, ProtocolVersion::V2026_07_28),
        (EraMode::Modern, ProtocolVersion::V2026_07_28),
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
        (
            EraMode::Legacy(ProtocolVersion::V2024_11_05),
            ProtocolVersion::V2024_11_05,
        ),
    ] {
        let client = connect(era, Arc::default()).await;
        assert_eq!(client.peer().version, version);
        let tools = client.list_tools().await.unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "slow"]);
        let mut args = Map::new();
        args.insert("text".into(), json!("hello world"));
        let result = client.call_tool("echo", args).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello world"));
        // Arguments that fail the input schema are a tool error, not a protocol error.
        let result = client.call_tool("echo", Map::new()).await.unwrap();
        assert!(result.is_error());
        // An unknown tool is a protocol error.
        match client.call_tool("nope", Map::new()).await {
            Err(ClientError::Call(mcp_sansio::CallError::Remote(e))) => assert_eq!(e.code, -32602),
            other => panic!("{other:?}"),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn progress_arrives_and_dropping_the_call_aborts_the_handler() {
    let aborted = Arc::new(AtomicBool::new(false));
    let client = connect(
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Arc::clone(&aborted),
    )
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let call = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .call_tool_with("slow", Map::new(), Default::default(), tx)
                .await
        })
    };
    for expected in 1..=3 {
        let p = rx.recv().await.unwrap();
        assert_eq!(p.progress, f64::from(expected));
        assert_eq!(p.total, Some(3.0));
    }
    call.abort();
    let _ = call.await;
    for _ in 0..100 {
        if aborted.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        aborted.load(Ordering::SeqCst),
        "the server aborted the cancelled handler"
    );
    // The connection still works.
    let mut args = Map::new();
    args.insert("text".into(), json!("still here"));
    let result = client.call_tool("echo", args).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("still here"));
}

#[tokio::test(start_paused = true)]
async fn a_request_times_out_on_the_paused_clock() {
    let client = connect(
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Arc::default(),
    )
    .await;
    let raw = serde_json::value::RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
    let options = mcp_sansio::RequestOptions::default().timeout(Duration::from_secs(30));
    let outcome = client
        .request_raw("tools/call", Some(raw), options, None)
        .await;
    assert!(
        matches!(
            outcome,
            Err(ClientError::Call(mcp_sansio::CallError::TimedOut))
        ),
        "{outcome:?}"
    );
}

/// The connection's one timer is armed lazily (moved only for a sooner deadline): a sooner
/// deadline must still fire on time, and a later one must fire after the timer went off
/// early for a deadline that went away
#[tokio::test(start_paused = true)]
async fn each_timeout_fires_at_its_own_deadline_whatever_the_timer_was_armed_for() {
    let client = connect(
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Arc::default(),
    )
    .await;
    let slow = || serde_json::value::RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
    let timeout = |s| mcp_sansio::RequestOptions::default().timeout(Duration::from_secs(s));
    let timed_out = |outcome: &Result<_, ClientError>| {
        matches!(
            outcome,
            Err(ClientError::Call(mcp_sansio::CallError::TimedOut))
        )
    };

    // An answered call arms the timer for 10 s; the next call's 30 s deadline comes later.
    let start = tokio::time::Instant::now();
    let echo = serde_json::value::RawValue::from_string(
        r#"{"name":"echo","arguments":{"text":"hi"}}"#.into(),
    )
    .unwrap();
    client
        .request_raw("tools/call", Some(echo), timeout(10), None)
        .await
        .unwrap();
    let outcome = client
        .request_raw("tools/call", Some(slow()), timeout(30), None)
        .await;
    assert!(timed_out(&outcome), "{outcome:?}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );

    // A call waiting an hour arms the timer for an hour; a second call's 5 s deadline moves it.
    let long = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request_raw("tools/call", Some(slow()), timeout(3600), None)
                .await
        })
    };
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    let outcome = client
        .request_raw("tools/call", Some(slow()), timeout(5), None)
        .await;
    assert!(timed_out(&outcome), "{outcome:?}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    let outcome = long.await.unwrap();
    assert!(timed_out(&outcome), "{outcome:?}");
}

#[tokio::test]
async fn a_cancel_before_the_call_first_runs_ends_it_without_sending_it() {
    let aborted = Arc::new(AtomicBool::new(false));
    let client = connect(
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Arc::clone(&aborted),
    )
    .await;
    let params = serde_json::value::to_raw_value(&json!({"name": "slow", "arguments": {}}));
    let (handle, call) = client.start(
        "tools/call",
        Some(params.unwrap()),
        mcp_sansio::RequestOptions::default(),
        mcp_sansio_tokio::CallWatch::default(),
    );
    // The request is sent when its future first runs; this cancel comes before that.
    handle.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the cancelled call ends at once, not after the handler's hour");
    assert!(
        matches!(
            outcome,
            Err(ClientError::Call(mcp_sansio::CallError::Cancelled))
        ),
        "{outcome:?}"
    );
    // The connection still works, and the slow handler never ran (its drop sets the flag).
    let mut args = Map::new();
    args.insert("text".into(), json!("still here"));
    let result = client.call_tool("echo", args).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("still here"));
    assert!(!aborted.load(Ordering::SeqCst), "the handler never started");
}
