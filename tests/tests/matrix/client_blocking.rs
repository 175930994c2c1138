//! The matrix scenario through mcp-sansio-blocking's client, on plain threads

use std::sync::{Arc, mpsc};

use mcp_sansio::schema::method::{CallTool, Method};
use mcp_sansio::{CallError, RequestOptions};
use mcp_sansio_blocking::{
    CallWatch, Client, ClientError, ClientOptions, HttpOptions, InputHandler,
};
use serde_json::json;

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

fn connect(case: &Case) -> Client {
    let handler: InputHandler = Arc::new(answer_user);
    let options = ClientOptions::default().input(handler);
    let config = config(case.era);
    let connected = match &case.target {
        Target::Stdio(binary) => {
            Client::spawn_with(std::process::Command::new(binary), config, options)
        }
        Target::Http(url) => Client::connect_http(url, config, options),
        Target::Https { url, ca } => {
            let roots = HttpOptions::default().root_certificates_pem(ca.clone());
            Client::connect_http(url, config, options.http(roots))
        }
    };
    connected.unwrap_or_else(|e| panic!("connecting to {:?} failed: {e}", case.target))
}

fn call(client: &Client, name: &str, arguments: serde_json::Value) -> Call {
    let result = client
        .call_tool(name, args(arguments))
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
    Call::from(&result)
}

/// Runs the scenario on this thread, every call blocking it
pub(crate) fn run(case: Case) -> Summary {
    let client = connect(&case);
    let peer = client.peer().clone();

    let mut tools: Vec<String> = client
        .list_tools()
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    tools.sort();

    let echo = call(&client, "echo", json!({"text": "hello from the matrix"}));
    let add = call(&client, "add", json!({"a": 2, "b": 3.5}));

    // Progress: every report reaches the channel before the call's result does.
    let (tx, rx) = mpsc::channel();
    let slow = client
        .call_tool_with(
            "slow",
            args(json!({"steps": SLOW_STEPS})),
            RequestOptions::default(),
            tx,
        )
        .expect("tools/call slow with progress");
    let progress = rx.try_iter().collect();

    // Cancellation: once the call reports its first step it runs on the server; cancel it.
    let (tx, rx) = mpsc::channel();
    let mut watch = CallWatch::default();
    watch.progress = Some(tx);
    let pending = client.start(
        CallTool::NAME,
        Some(call_params("slow", json!({"steps": CANCELLED_STEPS}))),
        RequestOptions::default().with_progress(),
        watch,
    );
    let first = rx.recv_timeout(WAIT);
    assert!(
        first.is_ok(),
        "the slow call reports progress before it is cancelled: {first:?}"
    );
    pending.cancel_handle().cancel();
    let cancelled = ending(pending.wait().and_then(|raw| {
        decode_call(&raw).map_err(|e| ClientError::Call(CallError::InvalidResult(e)))
    }));
    let cancelled_progress = 1 + rx.try_iter().count();

    let ask_name = call(&client, "ask_name", json!({}));

    // A task-backed call on 2026: the client follows the task to its result.
    let (tx, statuses) = mpsc::channel();
    let mut watch = CallWatch::default();
    watch.task_status = Some(tx);
    let raw = client
        .start(
            CallTool::NAME,
            Some(call_params("long_job", json!({"ms": LONG_JOB_MS}))),
            RequestOptions::default(),
            watch,
        )
        .wait()
        .expect("tools/call long_job");
    let long_job = decode_call(&raw).expect("long_job result");
    let long_job_statuses = statuses.try_iter().map(|u| u.status).collect();

    let static_resource = contents(
        &client
            .read_resource("test://static-text")
            .expect("resources/read static"),
    );
    let template = contents(
        &client
            .read_resource("test://template/42/data")
            .expect("resources/read template"),
    );
    let prompt = messages(&client.get_prompt(greeting()).expect("prompts/get"));
    let unknown_tool = ending(
        client
            .call_tool("no-such-tool", args(json!({})))
            .map(|r| Call::from(&r)),
    );
    client.close();

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
