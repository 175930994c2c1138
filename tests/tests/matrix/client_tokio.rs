//! The matrix scenario through mcp-sansio-tokio's client

use std::sync::Arc;

use mcp_sansio::schema::method::{CallTool, Method};
use mcp_sansio::{CallError, RequestOptions};
use mcp_sansio_tokio::{CallWatch, Client, ClientError, ClientOptions, HttpOptions, InputHandler};
use serde_json::json;
use tokio::sync::mpsc;

use crate::common::{
    CANCELLED_STEPS, Call, Case, Ending, LONG_JOB_MS, SLOW_STEPS, Summary, Target, WAIT,
    answer_user, args, call_params, config, contents, decode_call, greeting, messages,
};

fn ending(outcome: Result<Call, ClientError>) -> Ending {
    match outcome {
        Ok(call) => Ending::Result(call),
        Err(ClientError::Call(CallError::Remote(e))) => Ending::Remote(e.code),
        Err(ClientError::Call(CallError::Cancelled)) => Ending::Cancelled,
        Err(e) => Ending::Other(e.to_string()),
    }
}

async fn connect(case: &Case) -> Client {
    let handler: InputHandler = Arc::new(|requests| Box::pin(async { answer_user(requests) }));
    let options = ClientOptions::default().input(handler);
    let config = config(case.era);
    let connected = match &case.target {
        Target::Stdio(binary) => {
            Client::spawn_with(tokio::process::Command::new(binary), config, options).await
        }
        Target::Http(url) => Client::connect_http(url, config, options).await,
        Target::Https { url, ca } => {
            let roots = HttpOptions::default().root_certificates_pem(ca.clone());
            Client::connect_http(url, config, options.http(roots)).await
        }
    };
    connected.unwrap_or_else(|e| panic!("connecting to {:?} failed: {e}", case.target))
}

async fn call(client: &Client, name: &str, arguments: serde_json::Value) -> Call {
    let result = client
        .call_tool(name, args(arguments))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
    Call::from(&result)
}

async fn scenario(case: Case) -> Summary {
    let client = connect(&case).await;
    let peer = client.peer().clone();

    let mut tools: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    tools.sort();

    let echo = call(&client, "echo", json!({"text": "hello from the matrix"})).await;
    let add = call(&client, "add", json!({"a": 2, "b": 3.5})).await;

    // Progress: every report reaches the channel before the call's result does.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let slow = client
        .call_tool_with(
            "slow",
            args(json!({"steps": SLOW_STEPS})),
            RequestOptions::default(),
            tx,
        )
        .await
        .expect("tools/call slow with progress");
    let mut progress = Vec::new();
    while let Ok(p) = rx.try_recv() {
        progress.push(p);
    }

    // Cancellation: once the call reports its first step it runs on the server; cancel it.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut watch = CallWatch::default();
    watch.progress = Some(tx);
    let (handle, pending) = client.start(
        CallTool::NAME,
        Some(call_params("slow", json!({"steps": CANCELLED_STEPS}))),
        RequestOptions::default().with_progress(),
        watch,
    );
    let pending = tokio::spawn(pending);
    let first = tokio::time::timeout(WAIT, rx.recv()).await;
    assert!(
        matches!(first, Ok(Some(_))),
        "the slow call reports progress before it is cancelled: {first:?}"
    );
    handle.cancel();
    let outcome = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the cancelled call ends")
        .expect("the call's task");
    let cancelled = ending(outcome.and_then(|raw| {
        decode_call(&raw).map_err(|e| ClientError::Call(CallError::InvalidResult(e)))
    }));
    let mut cancelled_progress = 1;
    while rx.try_recv().is_ok() {
        cancelled_progress += 1;
    }

    let ask_name = call(&client, "ask_name", json!({})).await;

    // A task-backed call on 2026: the client follows the task to its result.
    let (tx, mut statuses) = mpsc::unbounded_channel();
    let mut watch = CallWatch::default();
    watch.task_status = Some(tx);
    let (_handle, pending) = client.start(
        CallTool::NAME,
        Some(call_params("long_job", json!({"ms": LONG_JOB_MS}))),
        RequestOptions::default(),
        watch,
    );
    let raw = pending.await.expect("tools/call long_job");
    let long_job = decode_call(&raw).expect("long_job result");
    let mut long_job_statuses = Vec::new();
    while let Ok(update) = statuses.try_recv() {
        long_job_statuses.push(update.status);
    }

    let static_resource = contents(
        &client
            .read_resource("test://static-text")
            .await
            .expect("resources/read static"),
    );
    let template = contents(
        &client
            .read_resource("test://template/42/data")
            .await
            .expect("resources/read template"),
    );
    let prompt = messages(&client.get_prompt(greeting()).await.expect("prompts/get"));
    let unknown_tool = ending(
        client
            .call_tool("no-such-tool", args(json!({})))
            .await
            .map(|r| Call::from(&r)),
    );
    client.close().await;

    Summary {
        version: peer.version,
        server_name: peer.info.map(|i| i.name),
        tools,
        echo,
        add,
        slow: Call::from(&slow),
        progress,
        cancelled,
        cancelled_progress,
        ask_name,
        long_job,
        long_job_statuses,
        static_resource,
        template,
        prompt,
        unknown_tool,
    }
}

/// Runs the scenario on a tokio runtime of its own
pub(crate) fn run(case: Case) -> Summary {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(scenario(case))
}
