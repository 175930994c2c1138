//! A handler turns its request into a task with `Context::run_as_task`; the client follows it
//! as one slow call; `tasks/cancel` (from dropping the call or a cancel handle) cancels the
//! handler's token

mod common;

use std::sync::{Mutex, mpsc};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, TaskStatus, Tool};
use mcp_sansio::{
    CallError, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig, TaskOptions,
};
use mcp_sansio_blocking::{
    CallWatch, CancellationToken, Client, ClientError, ClientOptions, Server,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use common::config;

fn server(tokens: mpsc::Sender<CancellationToken>) -> Server {
    let tokens = Mutex::new(tokens);
    let mut config = ServerConfig::new(Implementation::new("task-server", "1.0"));
    config.capabilities = json!({
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    });
    config.task_id_seed = 42;
    Server::builder(config)
        .tool(Tool::new("slow_compute", Map::new()), move |cx, args| {
            let _ = tokens.lock().unwrap().send(cx.cancellation());
            if cx.task_offered() {
                let options = TaskOptions::default().poll_interval(Duration::from_millis(20));
                cx.run_as_task(options).map_err(|e| e.to_error())?;
            }
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
            cx.sleep(Duration::from_millis(ms))?;
            Ok(CallToolResult::text(format!("computed in {ms} ms")))
        })
        .unwrap()
        .build()
}

fn connect(era: EraMode, tokens: mpsc::Sender<CancellationToken>) -> Client {
    let mut config = config(era);
    config.capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    common::connect(server(tokens), config, ClientOptions::default())
}

fn call(ms: u64) -> Box<RawValue> {
    serde_json::value::to_raw_value(&json!({"name": "slow_compute", "arguments": {"ms": ms}}))
        .unwrap()
}

#[test]
fn a_task_backed_call_is_one_slow_call_in_both_forms() {
    for (era, options) in [
        (EraMode::Modern, RequestOptions::default()),
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            RequestOptions::default().as_task(Some(Duration::from_secs(60))),
        ),
    ] {
        let client = connect(era, mpsc::channel().0);
        let (tx, statuses) = mpsc::channel();
        let mut watch = CallWatch::default();
        watch.task_status = Some(tx);
        let result = client
            .start("tools/call", Some(call(60)), options, watch)
            .wait()
            .unwrap();
        let result: Value = serde_json::from_str(result.get()).unwrap();
        assert_eq!(
            result["content"][0]["text"], "computed in 60 ms",
            "{era:?}: {result}"
        );
        let seen: Vec<TaskStatus> = statuses.try_iter().map(|u| u.status).collect();
        assert_eq!(
            seen.first(),
            Some(&TaskStatus::Working),
            "{era:?}: {seen:?}"
        );
    }
}

#[test]
fn dropping_a_task_backed_call_cancels_the_task_and_the_handler() {
    let (tokens_tx, tokens) = mpsc::channel();
    let client = connect(EraMode::Modern, tokens_tx);
    let (tx, statuses) = mpsc::channel();
    let mut watch = CallWatch::default();
    watch.task_status = Some(tx);
    let pending = client.start(
        "tools/call",
        Some(call(3_600_000)),
        RequestOptions::default(),
        watch,
    );
    // The task runs: its first status arrives.
    assert_eq!(statuses.recv().unwrap().status, TaskStatus::Working);
    let token = tokens.recv().unwrap();
    drop(pending);
    assert_eq!(
        token.sleep(Duration::from_secs(3600)),
        Err(mcp_sansio_blocking::Cancelled)
    );
}

#[test]
fn an_explicit_handle_cancels_a_task_backed_call() {
    let (tokens_tx, tokens) = mpsc::channel();
    let client = connect(EraMode::Modern, tokens_tx);
    let (tx, statuses) = mpsc::channel();
    let mut watch = CallWatch::default();
    watch.task_status = Some(tx);
    let pending = client.start(
        "tools/call",
        Some(call(3_600_000)),
        RequestOptions::default(),
        watch,
    );
    assert_eq!(statuses.recv().unwrap().status, TaskStatus::Working);
    pending.cancel_handle().cancel();
    let outcome = pending.wait();
    assert!(
        matches!(outcome, Err(ClientError::Call(CallError::Cancelled))),
        "{outcome:?}"
    );
    let token = tokens.recv().unwrap();
    assert_eq!(
        token.sleep(Duration::from_secs(3600)),
        Err(mcp_sansio_blocking::Cancelled)
    );
}
