//! Sampling with a typed answer: `Context::sample_text` asks the client's model one user
//! message and returns the text of its answer, in both eras (2025-11-25 live
//! `sampling/createMessage`, 2026-07-28 `input_required` and a retry)

use std::sync::{Arc, Mutex};

use mcp_sansio::schema::{CallToolResult, InputRequests, Tool};
use mcp_sansio::{CallError, ClientConfig, EraMode, Implementation, ServerConfig};
use serde_json::{Map, Value, json};

use super::support::LEGACY;
use crate::binding::{Client, ClientError, ClientOptions, Server};
use crate::{dialect, rt};

fn server() -> Server {
    let mut config = ServerConfig::new(Implementation::new("sample-server", "1.0"));
    config.state_key = Some([7; 32]);
    Server::builder(config)
        .tool(
            Tool::new("haiku", Map::new()),
            handler!(|cx, _args| {
                let poem = aw!(cx.sample_text("Write a haiku about the sea", 100))?;
                Ok(CallToolResult::text(format!("model says: {poem}")))
            }),
        )
        .unwrap()
        .build()
}

#[test]
fn sample_text_returns_the_models_text_in_both_eras() {
    rt::block_on(async {
        for era in [LEGACY, EraMode::Modern] {
            let (r, w) = super::serve(server());
            let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
            let log = Arc::clone(&asked);
            let answering = dialect::input_handler(move |requests: &InputRequests| {
                log.lock()
                    .unwrap()
                    .push(serde_json::to_value(requests).unwrap());
                let answer = json!({"role": "assistant", "model": "m", "content": [
                    {"type": "text", "text": "Waves fold into foam"},
                    {"type": "text", "text": "(and so on)"}
                ]});
                let answer: mcp_sansio::schema::InputResponse =
                    serde_json::from_value(answer).unwrap();
                Ok(requests
                    .keys()
                    .map(|k| (k.clone(), answer.clone()))
                    .collect())
            });
            let mut config = ClientConfig::new(Implementation::new("c", "1"));
            config.era = era;
            config.capabilities = json!({"sampling": {}});
            let options = ClientOptions::default().input(answering);
            let client = aw!(Client::connect_with(r, w, config, options)).unwrap();
            let result = aw!(client.call_tool("haiku", Map::new())).unwrap();
            assert_eq!(
                result.content[0].as_text(),
                Some("model says: Waves fold into foam\n\n(and so on)"),
                "{era:?}"
            );
            let asked = asked.lock().unwrap();
            assert_eq!(asked.len(), 1, "{era:?}");
            let key = if era == EraMode::Modern {
                "sample-0"
            } else {
                "sampling/createMessage"
            };
            assert_eq!(
                asked[0][key]["params"],
                json!({"messages": [{"role": "user", "content":
                    {"type": "text", "text": "Write a haiku about the sea"}}], "maxTokens": 100}),
                "{era:?}: {}",
                asked[0]
            );
        }
    });
}

#[test]
fn without_the_capability_sample_text_is_the_spec_error() {
    rt::block_on(async {
        let (r, w) = super::serve(server());
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = EraMode::Modern;
        let client = aw!(Client::connect(r, w, config)).unwrap();
        match aw!(client.call_tool("haiku", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32021),
            other => panic!("{other:?}"),
        }
    });
}
