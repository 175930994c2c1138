//! A handler turns its request into a task with `Context::run_as_task`; the client follows it
//! as one slow call; `tasks/cancel` (from dropping the call) aborts the handler

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod common;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{
    ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
    TaskOptions,
};
use mcp_sansio_async_std::{Client, Server};
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
                async_io::Timer::after(Duration::from_millis(ms)).await;
                std::mem::forget(flag);
                Ok(CallToolResult::text(format!("computed in {ms} ms")))
            }
        })
        .unwrap()
        .build()
}

async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
    let (r, w) = common::serve(server(aborted));
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = era;
    config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    Client::connect(r, w, config).await.unwrap()
}

fn call(ms: u64) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&json!({"name": "slow_compute", "arguments": {"ms": ms}}))
        .unwrap()
}

#[test]
fn a_task_backed_call_is_one_slow_call_in_both_forms() {
    smol::block_on(async {
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
    smol::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
        let pending = client.request_raw(
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            None,
        );
        assert!(
            common::timeout(Duration::from_millis(200), pending)
                .await
                .is_none()
        );
        for _ in 0..100 {
            if aborted.load(Ordering::SeqCst) {
                break;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
        assert!(
            aborted.load(Ordering::SeqCst),
            "tasks/cancel aborted the handler"
        );
    });
}

#[test]
fn task_status_is_reported_and_an_explicit_handle_cancels() {
    smol::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = connect(EraMode::Modern, Arc::clone(&aborted)).await;
        let (tx, statuses) = async_channel::unbounded();
        let mut watch = mcp_sansio_async_std::CallWatch::default();
        watch.task_status = Some(tx);
        let (handle, call) = client.start(
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            watch,
        );
        let call = smol::spawn(call);
        let first = common::timeout(Duration::from_secs(5), statuses.recv())
            .await
            .expect("a status in time")
            .expect("a status");
        assert_eq!(first.status, mcp_sansio::schema::TaskStatus::Working);
        handle.cancel();
        let outcome = common::timeout(Duration::from_secs(5), call)
            .await
            .expect("the call ends");
        assert!(
            matches!(
                outcome,
                Err(mcp_sansio_async_std::ClientError::Call(
                    mcp_sansio::CallError::Cancelled
                ))
            ),
            "{outcome:?}"
        );
        for _ in 0..100 {
            if aborted.load(Ordering::SeqCst) {
                break;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
        assert!(
            aborted.load(Ordering::SeqCst),
            "tasks/cancel aborted the handler"
        );
    });
}
