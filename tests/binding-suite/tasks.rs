//! A handler turns its request into a task with `Context::run_as_task`; the client follows it
//! as one slow call, its task's status reported; `tasks/cancel` (from dropping the call, or a
//! handle) aborts the handler

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
use crate::{dialect, rt};

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
        .tool(
            Tool::new("slow_compute", Map::new()),
            handler!([aborted]; |cx, args| {
                let flag = Flag(Arc::clone(&aborted));
                if cx.task_offered() {
                    let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                    aw!(cx.run_as_task(options)).map_err(|e| e.to_error())?;
                }
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
                nap!(cx, Duration::from_millis(ms));
                std::mem::forget(flag);
                Ok(CallToolResult::text(format!("computed in {ms} ms")))
            }),
        )
        .unwrap()
        .build()
}

dialect_fn! {
    async fn connect(era: EraMode, aborted: Arc<AtomicBool>) -> Client {
        let (r, w) = super::serve(server(aborted));
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = era;
        config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        aw!(Client::connect(r, w, config)).unwrap()
    }
}

fn call(ms: u64) -> Box<RawValue> {
    serde_json::value::to_raw_value(&json!({"name": "slow_compute", "arguments": {"ms": ms}}))
        .unwrap()
}

dialect_fn! {
    /// Waits (a second at most) for the handler to be aborted
    async fn aborted_in_time(aborted: &AtomicBool) -> bool {
        for _ in 0..100 {
            if aborted.load(Ordering::SeqCst) {
                break;
            }
            aw!(rt::sleep(Duration::from_millis(10)));
        }
        aborted.load(Ordering::SeqCst)
    }
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
            let client = aw!(connect(era, Arc::default()));
            let (tx, mut statuses) = rt::channel();
            let mut watch = CallWatch::default();
            watch.task_status = Some(tx);
            let (_, pending) =
                dialect::start(&client, "tools/call", Some(call(60)), options, watch);
            let result = aw!(pending.join()).unwrap();
            let result: Value = serde_json::from_str(result.get()).unwrap();
            assert_eq!(
                result["content"][0]["text"], "computed in 60 ms",
                "{era:?}: {result}"
            );
            // The task's first status, as the client followed it.
            let seen: Vec<TaskStatus> = std::iter::from_fn(|| statuses.try_recv())
                .map(|u| u.status)
                .collect();
            assert_eq!(
                seen.first(),
                Some(&TaskStatus::Working),
                "{era:?}: {seen:?}"
            );
        }
    });
}

#[test]
fn dropping_a_task_backed_call_cancels_the_task_and_aborts_the_handler() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = aw!(connect(EraMode::Modern, Arc::clone(&aborted)));
        let (tx, mut statuses) = rt::channel();
        let mut watch = CallWatch::default();
        watch.task_status = Some(tx);
        let (_, pending) = dialect::start(
            &client,
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            watch,
        );
        // The task runs: its first status arrives.
        let first = aw!(rt::timeout(Duration::from_secs(5), statuses.recv()))
            .expect("a status in time")
            .expect("a status");
        assert_eq!(first.status, TaskStatus::Working);
        aw!(pending.abort());
        assert!(
            aw!(aborted_in_time(&aborted)),
            "tasks/cancel aborted the handler"
        );
    });
}

only_async! {
    #[test]
    fn a_task_backed_call_dropped_by_a_timeout_cancels_the_task_and_aborts_the_handler() {
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
}

#[test]
fn task_status_is_reported_and_an_explicit_handle_cancels() {
    rt::block_on(async {
        let aborted = Arc::new(AtomicBool::new(false));
        let client = aw!(connect(EraMode::Modern, Arc::clone(&aborted)));
        let (tx, mut statuses) = rt::channel();
        let mut watch = CallWatch::default();
        watch.task_status = Some(tx);
        let (handle, call) = dialect::start(
            &client,
            "tools/call",
            Some(call(60_000)),
            RequestOptions::default(),
            watch,
        );
        let first = aw!(rt::timeout(Duration::from_secs(5), statuses.recv()))
            .expect("a status in time")
            .expect("a status");
        assert_eq!(first.status, TaskStatus::Working);
        handle.cancel();
        let outcome = aw!(rt::timeout(Duration::from_secs(5), call.join())).expect("the call ends");
        assert!(
            matches!(outcome, Err(ClientError::Call(CallError::Cancelled))),
            "{outcome:?}"
        );
        assert!(
            aw!(aborted_in_time(&aborted)),
            "tasks/cancel aborted the handler"
        );
    });
}
