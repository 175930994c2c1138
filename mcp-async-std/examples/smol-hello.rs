//! A server and a client on smol: the server serves Streamable HTTP on 127.0.0.1, the
//! client connects, lists and calls a tool, and both shut down
//!
//! `cargo run -p mcp-sansio-async-std --example smol-hello`. The guide shows this file.

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
use mcp_sansio_async_std::{Client, ClientOptions, Server};
use serde_json::{Map, Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    smol::block_on(async {
        // A server with one tool (`server.serve_stdio().await` would serve stdin/stdout)
        let Value::Object(schema) =
            json!({"type": "object", "properties": {"text": {"type": "string"}}})
        else {
            unreachable!("an object")
        };
        let server = Server::builder(ServerConfig::new(Implementation::new("echo-server", "1.0")))
            .tool(Tool::new("echo", schema), |_cx, args| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            })?
            .build();
        let handle = server.serve_http("127.0.0.1:0".parse()?).await?;
        let url = format!("http://{}/mcp", handle.local_addr());

        // A client (`Client::spawn(async_process::Command::new("my-server"), config)` would
        // start a server as a child process and talk to it over stdio)
        let config = ClientConfig::new(Implementation::new("my-client", "1.0"));
        let client = Client::connect_http(&url, config, ClientOptions::default()).await?;
        let tools = client.list_tools().await?;
        println!(
            "{} speaks {}; tools: {:?}",
            url,
            client.peer().version,
            tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
        let mut args = Map::new();
        args.insert("text".into(), json!("hello from smol"));
        let result = client.call_tool("echo", args).await?;
        println!("echo: {}", result.content[0].as_text().unwrap_or_default());

        client.close().await;
        handle.shutdown().await;
        Ok(())
    })
}
