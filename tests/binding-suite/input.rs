//! A handler asks for input with `Context::ask`; the client's input handler answers; the same
//! handler code works on a legacy session (live elicitation) and a modern one (MRTR retry)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_sansio::{CallError, ClientConfig, EraMode, Implementation, ServerConfig};
use serde_json::{Map, json};

use super::greet_tool;
use super::support::{LEGACY, answer_ada};
use crate::binding::{Client, ClientError, ClientOptions, Server};
use crate::{dialect, rt};

fn server(runs: Arc<AtomicUsize>) -> Server {
    let mut config = ServerConfig::new(Implementation::new("ask-server", "1.0"));
    config.state_key = Some([7; 32]);
    greet_tool(Server::builder(config), runs).build()
}

#[test]
fn the_same_handler_asks_in_both_eras() {
    rt::block_on(async {
        for (era, expected_runs) in [
            (LEGACY, 1),
            // Modern: the first run ends in input_required; the retry runs the handler again.
            (EraMode::Modern, 2),
        ] {
            let runs = Arc::new(AtomicUsize::new(0));
            let (r, w) = super::serve(server(Arc::clone(&runs)));
            let mut config = ClientConfig::new(Implementation::new("c", "1"));
            config.era = era;
            config.capabilities = json!({"elicitation": {}});
            let answering = dialect::input_handler(|requests| Ok(answer_ada(requests)));
            let options = ClientOptions::default().input(answering);
            let client = aw!(Client::connect_with(r, w, config, options)).unwrap();
            let result = aw!(client.call_tool("greet", Map::new())).unwrap();
            assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"), "{era:?}");
            assert_eq!(runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
        }
    });
}

#[test]
fn without_the_capability_the_handler_gets_a_clear_error() {
    rt::block_on(async {
        let (r, w) = super::serve(server(Arc::default()));
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = EraMode::Modern;
        let client = aw!(Client::connect(r, w, config)).unwrap();
        match aw!(client.call_tool("greet", Map::new())) {
            Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32021),
            other => panic!("{other:?}"),
        }
    });
}
