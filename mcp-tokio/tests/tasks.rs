//! A handler turns its request into a task with `Context::run_as_task`; the client follows it
//! as one slow call; `tasks/cancel` (from dropping the call) aborts the handler

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{
    ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
    TaskOptions,
};
use mcp_sansio_tokio::{Client, Server};
use serde_json::{Map, Value, json};

fn server(aborted: Arc<AtomicBool>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("task-server", "1.0"));
    config.capabilities = json!({
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    });
    config.task_id_seed = 42;
    Server::builder(config)
        .tool(Tool::new("slow_compute", Map::new()), move |cx, args| {
            let aborted = Arc::clone(&aborted);
            async move {
                struct Flag(Arc<AtomicBool>);
                impl Drop for Flag {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let flag = Flag(aborted);
                if cx.task_offered() {
                    let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                    cx.run_as_task(options).await.map_err(|e| e.to_error())?;
                }
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                std::mem::forget(flag);
                Ok(CallToolResult::text(format!("computed in {ms} ms")))
            }
        })
        .unwrap()
        .build()
}

async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let server = server(aborted);
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(b);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(a);
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = era;
    config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    Client::connect(r, w, config).await.unwrap()
}

fn call(ms: u64) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&json!({"name": "slow_compute", "arguments": {"ms": ms}}))
        .unwrap()
}

#[tokio::test]
async fn a_task_backed_call_is_one_slow_call_in_both_forms() {
    for (era, options) in [
        (EraMode::Modern, RequestOptions::default()),
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            RequestOptions::default().as_task(Some(Duration::from_secs(60))),
        ),
    ] {
        let client = connect(era, Arc::default()).await;
        let result = client
            .request_raw("tools/call", Some(call(60)), options, None)
            .await
            .unwrap();
        let result: Value = serde_json::from_str(result.get()).unwrap();
        assert_eq!(
            result["content"][0]["text"], "computed in 60 ms",
            "{era:?}: {result}"
        );
    }
}

#[tokio::test]
async fn dropping_a_task_backed_call_cancels_the_task_and_aborts_the_handler() {
    let aborted = Arc::new(AtomicBool::new(false));
    let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
    let pending = client.request_raw(
        "tools/call",
        Some(call(60_000)),
        RequestOptions::default(),
        None,
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), pending)
            .await
            .is_err()
    );
    for _ in 0..100 {
        if aborted.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        aborted.load(Ordering::SeqCst),
        "tasks/cancel aborted the handler"
    );
}

#[tokio::test]
async fn task_status_is_reported_and_an_explicit_handle_cancels() {
    let aborted = Arc::new(AtomicBool::new(false));
    let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
    let (tx, mut statuses) = tokio::sync::mpsc::unbounded_channel();
    let mut watch = mcp_sansio_tokio::CallWatch::default();
    watch.task_status = Some(tx);
    let (handle, call) = client.start(
        "tools/call",
        Some(call(60_000)),
        RequestOptions::default(),
        watch,
    );
    let call = tokio::spawn(call);
    let first = tokio::time::timeout(Duration::from_secs(5), statuses.recv())
        .await
        .expect("a status in time")
        .expect("a status");
    assert_eq!(first.status, mcp_sansio::schema::TaskStatus::Working);
    handle.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            outcome,
            Err(mcp_sansio_tokio::ClientError::Call(
                mcp_sansio::CallError::Cancelled
            ))
        ),
        "{outcome:?}"
    );
    for _ in 0..100 {
        if aborted.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        aborted.load(Ordering::SeqCst),
        "tasks/cancel aborted the handler"
    );
}
