//! `Client::in_memory` on tokio's paused clock (`start_paused`): a server's slow tools, a
//! user who takes 30 s to answer an elicitation and the timeouts of both sides run in no wall
//! time, and each deadline fires at its exact instant. The binding suite
//! (`tests/binding-suite/in_memory.rs`) runs the same client on the real clock on every
//! binding

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::schema::{InputRequest, InputRequests, InputResponse};
use mcp_sansio::{
    CallError, ClientConfig, EraMode, Implementation, Progress, ProtocolVersion, RequestOptions,
    ServerConfig,
};
use mcp_sansio_tokio::{AskFailure, Client, ClientError, ClientOptions, InputHandler, Server};
use serde_json::{Map, json};
use tokio::time::Instant;

const ERAS: [EraMode; 2] = [
    EraMode::Legacy(ProtocolVersion::V2025_11_25),
    EraMode::Modern,
];

/// Sets its flag when dropped (the handler's run was stopped, or ended)
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `count`: 30 seconds, a progress report each second; `stuck`: a minute, setting `stopped`
/// when its run ends
fn server(stopped: Arc<AtomicBool>) -> Server {
    Server::builder(ServerConfig::new(Implementation::new(
        "clock-server",
        "1.0",
    )))
    .tool(Tool::new("count", Map::new()), |cx, _args| async move {
        for second in 1..=30 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            cx.progress(Progress::new(f64::from(second)).total(30.0));
        }
        Ok(CallToolResult::text("counted to 30"))
    })
    .unwrap()
    .tool(Tool::new("stuck", Map::new()), move |_cx, _args| {
        let flag = Flag(Arc::clone(&stopped));
        async move {
            let _flag = flag;
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(CallToolResult::text("a minute later"))
        }
    })
    .unwrap()
    .build()
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("clock-test", "1.0"));
    config.era = era;
    config
}

#[tokio::test(start_paused = true)]
async fn a_30_second_tool_with_progress_runs_on_the_paused_clock() {
    for era in ERAS {
        let client = Client::in_memory(&server(Arc::default()), config(era))
            .await
            .unwrap();
        let start = Instant::now();
        let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let options = RequestOptions::default();
        let result = client
            .call_tool_with("count", Map::new(), options, progress)
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("counted to 30"));
        // Exactly the tool's own 30 s of (paused) time: every sleep jumped ahead
        assert_eq!(start.elapsed(), Duration::from_secs(30), "{era:?}");
        let mut seen = Vec::new();
        while let Ok(report) = reports.try_recv() {
            seen.push(report.progress);
        }
        let expected: Vec<f64> = (1..=30).map(f64::from).collect();
        assert_eq!(seen, expected, "{era:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_5_second_timeout_against_a_60_second_tool_fires_at_5_seconds() {
    for era in ERAS {
        let stopped = Arc::new(AtomicBool::new(false));
        let client = Client::in_memory(&server(Arc::clone(&stopped)), config(era))
            .await
            .unwrap();
        let start = Instant::now();
        let (progress, _reports) = tokio::sync::mpsc::unbounded_channel();
        let options = RequestOptions::default().timeout(Duration::from_secs(5));
        let outcome = client
            .call_tool_with("stuck", Map::new(), options, progress)
            .await;
        assert!(
            matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
            "{era:?}: {outcome:?}"
        );
        assert_eq!(start.elapsed(), Duration::from_secs(5), "{era:?}");
        // The timeout cancelled the request, which stops the handler's run at once
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(stopped.load(Ordering::SeqCst), "{era:?}");
        // and the connection goes on
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 2);
    }
}

/// The client's default timeouts (`ClientConfig::timeouts`) on the same clock: a 10 s
/// timeout that progress restarts lets the 30 s tool finish; without the restart it fires at
/// 10 s
#[tokio::test(start_paused = true)]
async fn progress_restarts_the_default_timeout_on_the_paused_clock() {
    for reset_on_progress in [true, false] {
        let mut config = config(EraMode::Modern);
        config.timeouts.request = Some(Duration::from_secs(10));
        config.timeouts.reset_on_progress = reset_on_progress;
        let client = Client::in_memory(&server(Arc::default()), config)
            .await
            .unwrap();
        let start = Instant::now();
        let (progress, _reports) = tokio::sync::mpsc::unbounded_channel();
        let options = RequestOptions::default();
        let outcome = client
            .call_tool_with("count", Map::new(), options, progress)
            .await;
        if reset_on_progress {
            assert_eq!(outcome.unwrap().content[0].as_text(), Some("counted to 30"));
            assert_eq!(start.elapsed(), Duration::from_secs(30));
        } else {
            assert!(
                matches!(outcome, Err(ClientError::Call(CallError::TimedOut))),
                "{outcome:?}"
            );
            assert_eq!(start.elapsed(), Duration::from_secs(10));
        }
    }
}

/// `greet` asks for a name; a legacy ask that times out (the server's `timeouts.request`)
/// ends the call with an error result
fn asking_server(ask_timeout: Duration) -> Server {
    let mut config = ServerConfig::new(Implementation::new("asking-server", "1.0"));
    config.state_key = Some([5; 32]);
    config.timeouts.request = Some(ask_timeout);
    Server::builder(config)
        .tool(Tool::new("greet", Map::new()), |cx, _args| async move {
            let request: InputRequest = serde_json::from_value(json!({
                "method": "elicitation/create",
                "params": {"message": "Your name?", "requestedSchema": {
                    "type": "object", "properties": {"name": {"type": "string"}}}}
            }))
            .unwrap();
            let requests = InputRequests::from([("name".to_owned(), request)]);
            match cx.ask(requests).await {
                Ok(answers) => {
                    let Some(InputResponse::Elicit(answer)) = answers.get("name") else {
                        return Ok(CallToolResult::error("no name"));
                    };
                    let answer = serde_json::to_value(answer).unwrap();
                    let name = answer["content"]["name"].as_str().unwrap_or("?");
                    Ok(CallToolResult::text(format!("Hello, {name}!")))
                }
                Err(AskFailure::Failed {
                    error: CallError::TimedOut,
                    ..
                }) => Ok(CallToolResult::error("no answer in time")),
                Err(e) => Err(e.to_error()),
            }
        })
        .unwrap()
        .build()
}

/// An input handler that thinks for 30 s, then answers Ada
fn slow_user() -> InputHandler {
    Arc::new(|requests: InputRequests| {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            let answer: InputResponse =
                serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                    .unwrap();
            Ok(requests.into_keys().map(|k| (k, answer.clone())).collect())
        })
    })
}

#[tokio::test(start_paused = true)]
async fn a_user_who_answers_in_30_seconds_takes_no_wall_time() {
    for era in ERAS {
        let server = asking_server(Duration::from_secs(60));
        let options = ClientOptions::default().input(slow_user());
        let client = Client::in_memory_with(&server, config(era), options)
            .await
            .unwrap();
        let start = Instant::now();
        let result = client.call_tool("greet", Map::new()).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
        assert_eq!(start.elapsed(), Duration::from_secs(30), "{era:?}");
    }
}

/// A legacy server's ask is a live request with the server's timeout: it fires at 10 s,
/// before the user's answer at 30 s
#[tokio::test(start_paused = true)]
async fn a_legacy_ask_times_out_at_the_servers_deadline() {
    let server = asking_server(Duration::from_secs(10));
    let options = ClientOptions::default().input(slow_user());
    let client = Client::in_memory_with(&server, config(ERAS[0]), options)
        .await
        .unwrap();
    let start = Instant::now();
    let result = client.call_tool("greet", Map::new()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(result.content[0].as_text(), Some("no answer in time"));
    assert_eq!(start.elapsed(), Duration::from_secs(10));
}
