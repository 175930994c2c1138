//! Big answers: a 20 MB tool result and a 10 MB resource read succeed with the default
//! limits, over pipes and over Streamable HTTP, in both eras; an answer over the client's
//! limit fails its call at once, naming the limit (and the size, when it is known)

use std::time::{Duration, Instant};

use mcp_sansio::schema::{CallToolResult, ReadResourceResult, Resource, ResourceContents, Tool};
use mcp_sansio::{CallError, ClientConfig, EraMode, Implementation, ServerConfig};
use serde_json::Map;

use crate::binding::{Client, ClientError, Server};
use crate::rt;

const TOOL_BYTES: usize = 20_000_000;
const RESOURCE_BYTES: usize = 10_000_000;
const URI: &str = "file:///big.txt";

fn server() -> Server {
    let config = ServerConfig::new(Implementation::new("big-server", "1.0"));
    Server::builder(config)
        .tool(
            Tool::new("big", Map::new()),
            handler!(|_cx, _args| { Ok(CallToolResult::text("x".repeat(TOOL_BYTES))) }),
        )
        .unwrap()
        .resource(
            Resource::new(URI, "big"),
            handler!(|_cx, uri, _vars| {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(
                    uri,
                    "y".repeat(RESOURCE_BYTES),
                )]))
            }),
        )
        .unwrap()
        .build()
}

fn config(era: EraMode, limit: Option<usize>) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("big-client", "1.0"));
    config.era = era;
    config.timeouts.request = Some(Duration::from_secs(60));
    if let Some(limit) = limit {
        config.limits.max_message_size = limit;
    }
    config
}

dialect_fn! {
    /// Calls `big` and reads the big resource; checks both arrived whole
    async fn both_arrive(client: &Client) {
        let result = aw!(client.call_tool("big", Map::new())).unwrap();
        assert_eq!(result.content[0].as_text().map(str::len), Some(TOOL_BYTES));
        let read = aw!(client.read_resource(URI)).unwrap();
        match &read.contents[0] {
            ResourceContents::Text(t) => assert_eq!(t.text.len(), RESOURCE_BYTES),
            other => panic!("{other:?}"),
        }
    }

    /// Calls `big` on a client whose limit is 1 MB: it fails at once with the limit
    async fn fails_at_once(client: &Client) {
        let started = Instant::now();
        match aw!(client.call_tool("big", Map::new())) {
            Err(ClientError::Call(e @ CallError::TooLarge { limit: 1_000_000, .. })) => {
                let text = e.to_string();
                assert!(text.contains("over the message limit of 1000000 bytes"), "{text}");
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        // Not at the 60 s request timeout.
        assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    }
}

#[test]
fn big_answers_arrive_over_pipes_and_one_over_the_limit_fails_at_once() {
    rt::block_on(async {
        for era in [EraMode::Modern, super::support::LEGACY] {
            let (r, w) = super::serve(server());
            let client = aw!(Client::connect(r, w, config(era, None))).unwrap();
            aw!(both_arrive(&client));
            aw!(client.close());

            let (r, w) = super::serve(server());
            let client = aw!(Client::connect(r, w, config(era, Some(1_000_000)))).unwrap();
            aw!(fails_at_once(&client));
            // The session goes on.
            let tools = aw!(client.list_tools()).unwrap();
            assert_eq!(tools.len(), 1);
            aw!(client.close());
        }
    });
}

#[cfg(feature = "http")]
#[test]
fn big_answers_arrive_over_http_and_one_over_the_limit_fails_at_once() {
    rt::block_on(async {
        let localhost: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let handle = aw!(server().serve_http(localhost)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        for era in [EraMode::Modern, super::support::LEGACY] {
            let options = crate::binding::ClientOptions::default();
            let client = aw!(Client::connect_http(&url, config(era, None), options)).unwrap();
            aw!(both_arrive(&client));
            aw!(client.close());

            let options = crate::binding::ClientOptions::default();
            let limited = config(era, Some(1_000_000));
            let client = aw!(Client::connect_http(&url, limited, options)).unwrap();
            aw!(fails_at_once(&client));
            let tools = aw!(client.list_tools()).unwrap();
            assert_eq!(tools.len(), 1);
            aw!(client.close());
        }
    });
}
