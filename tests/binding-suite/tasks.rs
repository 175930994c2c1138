//! A handler turns its request into a task with `Context::run_as_task`; the client follows it
//! as one slow call; `tasks/cancel` (from dropping the call, or a handle) aborts the handler

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, TaskStatus, Tool};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions,
    ServerConfig, TaskOptions,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Flag;
use crate::binding::{CallWatch, Client, ClientError, Server};
use crate::rt;

/// `slow_compute` runs as a task when offered one and takes `ms` milliseconds; `aborted` is
/// set if it is dropped before it finishes
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
                let flag = Flag(aborted);
                if cx.task_offered() {
                    let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                    cx.run_as_task(options).await.map_err(|e| e.to_error())?;
                }
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
                rt::sleep(Duration::from_millis(ms)).await;
                std::mem::forget(flag);
                Ok(CallToolResult::text(format!("computed in {ms} ms")))
            }
        })
        .unwrap()
        .build()
}

async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
    let (r, w) = super::serve(server(aborted));
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = era;
    config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    Client::connect(r, w, config).await.unwrap()
}

fn call(ms: u64) -> Box<RawValue> {
    serde_json::value::to_raw_value(&json!({"name": "slow_compute", "arguments": {"ms": ms}}))
        .unwrap()
}

/// Waits (a second at most) for the handler to be aborted
async fn aborted_in_time(aborted: &AtomicBool) -> bool {
    for _ in 0..100 {
        if aborted.load(Ordering::SeqCst) {
            break;
        }
        rt::sleep(Duration::from_millis(10)).await;
    }
    aborted.load(Ordering::SeqCst)
}

#[test]
fn a_task_backed_call_is_one_slow_call_in_both_forms() {
    rt::block_on(async {
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
    });
}

#[test]
fn dropping_a_task_backed_call_cancels_the_task_and_aborts_the_handler() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
        let pending = client.request_raw(
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            None,
        );
        assert!(
            rt::timeout(Duration::from_millis(200), pending)
                .await
                .is_none()
        );
        assert!(
            aborted_in_time(&aborted).await,
            "tasks/cancel aborted the handler"
        );
    });
}

#[test]
fn task_status_is_reported_and_an_explicit_handle_cancels() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
        let (tx, mut statuses) = rt::channel();
        let mut watch = CallWatch::default();
        watch.task_status = Some(tx);
        let (handle, call) = client.start(
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            watch,
        );
        let call = rt::spawn(call);
        let first = rt::timeout(Duration::from_secs(5), statuses.recv())
            .await
            .expect("a status in time")
            .expect("a status");
        assert_eq!(first.status, TaskStatus::Working);
        handle.cancel();
        let outcome = rt::timeout(Duration::from_secs(5), call.join())
            .await
            .expect("the call ends");
        assert!(
            matches!(outcome, Err(ClientError::Call(CallError::Cancelled))),
            "{outcome:?}"
        );
        assert!(
            aborted_in_time(&aborted).await,
            "tasks/cancel aborted the handler"
        );
    });
}
