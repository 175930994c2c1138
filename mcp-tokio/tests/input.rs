//! A handler asks for input with `Context::ask`; the client's input handler answers; the same
//! handler code works on a legacy session (live elicitation) and a modern one (MRTR retry)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_sansio::schema::{CallToolResult, InputRequest, InputRequests, InputResponse, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use mcp_sansio_tokio::{Client, InputHandler, Server};
use serde_json::{Map, json};

fn server(runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("ask-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(Tool::new("greet", Map::new()), move |cx, _args| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let request: InputRequest = serde_json::from_value(json!({
                    "method": "elicitation/create",
                    "params": {"message": "Your name?", "requestedSchema": {
                        "type": "object", "properties": {"name": {"type": "string"}}}}
                }))
                .unwrap();
                let mut requests = InputRequests::new();
                requests.insert("name".into(), request);
                let answers = cx.ask(requests).await.map_err(|e| e.to_error())?;
                let Some(InputResponse::Elicit(answer)) = answers.get("name") else {
                    return Ok(CallToolResult::error("no name"));
                };
                let v = serde_json::to_value(answer).unwrap();
                Ok(CallToolResult::text(format!(
                    "Hello, {}!",
                    v["content"]["name"].as_str().unwrap_or("?")
                )))
            }
        })
        .unwrap()
        .build()
}

fn answering() -> InputHandler {
    Arc::new(|requests: InputRequests| {
        Box::pin(async move {
            let responses = requests
                .keys()
                .map(|k| {
                    let r: InputResponse = serde_json::from_value(
                        json!({"action": "accept", "content": {"name": "Ada"}}),
                    )
                    .unwrap();
                    (k.clone(), r)
                })
                .collect();
            Ok(responses)
        })
    })
}

#[tokio::test]
async fn the_same_handler_asks_in_both_eras() {
    for (era, expected_runs) in [
        (EraMode::Legacy(ProtocolVersion::V2025_11_25), 1),
        // Modern: the first run ends in input_required; the retry runs the handler again.
        (EraMode::Modern, 2),
    ] {
        let runs = Arc::new(AtomicUsize::new(0));
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let server = server(Arc::clone(&runs));
        tokio::spawn(async move {
            let (r, w) = tokio::io::split(server_io);
            server.serve(r, w).await;
        });
        let (r, w) = tokio::io::split(client_io);
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = era;
        config.capabilities = json!({"elicitation": {}});
        let client = Client::connect_with(
            r,
            w,
            config,
            mcp_sansio_tokio::ClientOptions::default().input(answering()),
        )
        .await
        .unwrap();
        let result = client.call_tool("greet", Map::new()).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
        assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
    }
}

#[tokio::test]
async fn without_the_capability_the_handler_gets_a_clear_error() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = server(Arc::default());
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(client_io);
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = EraMode::Modern;
    let client = Client::connect(r, w, config).await.unwrap();
    match client.call_tool("greet", Map::new()).await {
        Err(mcp_sansio_tokio::ClientError::Call(mcp_sansio::CallError::Remote(e))) => {
            assert_eq!(e.code, -32021)
        }
        other => panic!("{other:?}"),
    }
}
