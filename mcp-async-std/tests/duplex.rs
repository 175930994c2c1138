//! The binding's glue over in-memory pipes: connect in every era mode, typed calls,
//! progress, cancellation by dropping the call (the handler is dropped), timeouts, errors;
//! on smol's `block_on` and on async-std's

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_io::Timer;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, ServerConfig};
use mcp_sansio_async_std::{Client, ClientError, Server};
use serde_json::{Map, Value, json};

fn schema() -> Map<String, Value> {
    let Value::Object(m) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    else {
        unreachable!()
    };
    m
}

struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn server(dropped: Arc<AtomicBool>) -> Server {
    Server::builder(ServerConfig::new(Implementation::new("test-server", "1.0")))
        .tool(Tool::new("echo", schema()), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .tool(Tool::new("slow", Map::new()), move |cx, _args| {
            let dropped = Arc::clone(&dropped);
            async move {
                let _flag = Flag(dropped);
                for i in 1..=3 {
                    cx.progress(Progress::new(f64::from(i)).total(3.0));
                    Timer::after(Duration::from_millis(10)).await;
                }
                Timer::after(Duration::from_secs(3600)).await;
                Ok(CallToolResult::text("never"))
            }
        })
        .unwrap()
        .build()
}

/// Two in-memory pipes, one each way: (client reader, client writer), (server reader,
/// server writer)
fn pipes() -> (
    (piper::Reader, piper::Writer),
    (piper::Reader, piper::Writer),
) {
    let (to_client_r, to_client_w) = piper::pipe(64 * 1024);
    let (to_server_r, to_server_w) = piper::pipe(64 * 1024);
    ((to_client_r, to_server_w), (to_server_r, to_client_w))
}

async fn connect_with_config(config: ClientConfig, dropped: Arc<AtomicBool>) -> Client {
    let ((cr, cw), (sr, sw)) = pipes();
    let server = server(dropped);
    smol::spawn(async move { server.serve(sr, sw).await }).detach();
    Client::connect(cr, cw, config).await.unwrap()
}

async fn connect(era: EraMode, dropped: Arc<AtomicBool>) -> Client {
    let mut config = ClientConfig::new(Implementation::new("test-client", "1.0"));
    config.era = era;
    connect_with_config(config, dropped).await
}

async fn typed_calls(era: EraMode, version: ProtocolVersion) {
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

const ERAS: [(EraMode, ProtocolVersion); 4] = [
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
];

#[test]
fn typed_calls_in_every_era_mode_on_smol() {
    smol::block_on(async {
        for (era, version) in ERAS {
            typed_calls(era, version).await;
        }
    });
}

#[test]
fn typed_calls_in_every_era_mode_on_async_std() {
    async_std::task::block_on(async {
        for (era, version) in ERAS {
            typed_calls(era, version).await;
        }
    });
}

async fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..400 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        Timer::after(Duration::from_millis(5)).await;
    }
    false
}

#[test]
fn progress_arrives_and_dropping_the_call_drops_the_handler() {
    smol::block_on(async {
        for era in [
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            EraMode::Modern,
        ] {
            let dropped = Arc::new(AtomicBool::new(false));
            let client = connect(era, Arc::clone(&dropped)).await;
            let (tx, rx) = async_channel::unbounded();
            let call = {
                let client = client.clone();
                smol::spawn(async move {
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
            // Dropping the task drops the call's future, which cancels the request.
            drop(call);
            assert!(wait_for(&dropped).await, "{era:?}: the handler was dropped");
            // The connection still works.
            let mut args = Map::new();
            args.insert("text".into(), json!("still here"));
            let result = client.call_tool("echo", args).await.unwrap();
            assert_eq!(result.content[0].as_text(), Some("still here"));
        }
    });
}

#[test]
fn a_cancel_handle_cancels_from_elsewhere() {
    smol::block_on(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let client = connect(EraMode::Modern, Arc::clone(&dropped)).await;
        let raw = serde_json::value::RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
        let (handle, call) = client.start(
            "tools/call",
            Some(raw),
            mcp_sansio::RequestOptions::default(),
            mcp_sansio_async_std::CallWatch::default(),
        );
        let call = smol::spawn(call);
        Timer::after(Duration::from_millis(50)).await;
        handle.cancel();
        let outcome = call.await;
        assert!(
            matches!(
                outcome,
                Err(ClientError::Call(mcp_sansio::CallError::Cancelled))
            ),
            "{outcome:?}"
        );
        assert!(wait_for(&dropped).await, "the handler was dropped");
    });
}

#[test]
fn a_request_times_out() {
    smol::block_on(async {
        let client = connect(
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            Arc::default(),
        )
        .await;
        let raw = serde_json::value::RawValue::from_string(r#"{"name":"slow"}"#.into()).unwrap();
        let options = mcp_sansio::RequestOptions::default().timeout(Duration::from_millis(200));
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
    });
}

#[test]
fn a_closed_server_fails_the_handshake_and_calls_after_close() {
    smol::block_on(async {
        // The server side hangs up at once: the handshake fails with a clear error.
        let ((cr, cw), (sr, sw)) = pipes();
        drop((sr, sw));
        let config = ClientConfig::new(Implementation::new("c", "1"));
        let outcome = Client::connect(cr, cw, config).await;
        assert!(
            matches!(
                outcome,
                Err(mcp_sansio_async_std::ConnectError::Handshake(_))
            ),
            "{outcome:?}"
        );
        // A call on a closed client ends, it does not hang.
        let client = connect(EraMode::Modern, Arc::default()).await;
        let other = client.clone();
        client.close().await;
        let outcome = other.list_tools().await;
        assert!(outcome.is_err(), "{outcome:?}");
    });
}
