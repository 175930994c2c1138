//! Starts an MCP server as a child process and walks through a session, printing what
//! happens: discovery or handshake, tools, a call, a call with a progress bar, a cancelled
//! call, a resource and a prompt
//!
//! `cargo run -p mcp-sansio-tokio --example demo` runs it against this crate's `everything-server`
//! example (built next to it); `cargo run -p mcp-sansio-tokio --example demo -- <command> [args...]`
//! against any stdio MCP server, or `-- http://127.0.0.1:PORT/mcp` against a Streamable
//! HTTP server (such as `everything-server -- --http 127.0.0.1:PORT`). Set `MCP_ERA=legacy` to use the `initialize` handshake.

use std::io::Write;
use std::time::Duration;

use mcp_sansio::schema::GetPromptParams;
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions};
use mcp_sansio_tokio::Client;
use serde_json::{Map, Value, json};
use tokio::process::Command;

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn server_command() -> Command {
    let mut argv = std::env::args().skip(1);
    if let Some(program) = argv.next() {
        let mut command = Command::new(program);
        command.args(argv);
        return command;
    }
    let exe = std::env::current_exe().expect("the demo knows where it is");
    let server = exe.with_file_name(format!("everything-server{}", std::env::consts::EXE_SUFFIX));
    if !server.exists() {
        // Build the sibling example once (fast when up to date).
        let status = std::process::Command::new(env!("CARGO"))
            .args([
                "build",
                "-q",
                "-p",
                "mcp-sansio-tokio",
                "--example",
                "everything-server",
            ])
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "building the everything-server example failed"
        );
    }
    Command::new(server)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = ClientConfig::new(Implementation::new(
        "mcp-tokio-demo",
        env!("CARGO_PKG_VERSION"),
    ));
    if std::env::var("MCP_ERA").is_ok_and(|e| e == "legacy") {
        config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25);
    }
    // The demo can answer elicitation and lets 2026 servers run calls as tasks.
    config.capabilities = json!({
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    });
    // A "user" who answers every question the server asks
    let answer_user: mcp_sansio_tokio::InputHandler = std::sync::Arc::new(|requests| {
        Box::pin(async move {
            let mut responses = mcp_sansio::schema::InputResponses::new();
            for (key, request) in requests {
                println!(
                    "  ? the server asks ({}): answering \"Ada\"",
                    request.method()
                );
                let answer =
                    serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                        .expect("a valid elicitation result");
                responses.insert(key, answer);
            }
            Ok(responses)
        })
    });
    let options = mcp_sansio_tokio::ClientOptions::default().input(answer_user);
    println!(
        "▶ starting the server and connecting ({:?} era selection)",
        config.era
    );
    let client = match std::env::args().nth(1).filter(|a| a.starts_with("http://")) {
        Some(url) => Client::connect_http(&url, config, options).await?,
        None => Client::spawn_with(server_command(), config, options).await?,
    };
    let peer = client.peer();
    let name = peer.info.as_ref().map_or("?", |i| i.name.as_str());
    println!("  connected to {name} on protocol {}", peer.version);
    if let Some(text) = &peer.instructions {
        println!("  instructions: {text}");
    }

    println!("\n▶ tools/list");
    let tools = client.list_tools().await?;
    for tool in &tools {
        println!(
            "  • {:<8} {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }
    let has = |n: &str| tools.iter().any(|t| t.name == n);

    if has("echo") {
        println!("\n▶ tools/call echo {{\"text\": \"hello world\"}}");
        let result = client
            .call_tool("echo", args(json!({"text": "hello world"})))
            .await?;
        println!(
            "  → {}",
            result.content[0].as_text().unwrap_or("(not text)")
        );
    }

    if has("slow") {
        println!("\n▶ tools/call slow {{\"steps\": 10}} with progress");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let call = client.call_tool_with(
            "slow",
            args(json!({"steps": 10})),
            RequestOptions::default(),
            tx,
        );
        let bar = async {
            while let Some(p) = rx.recv().await {
                let total = p.total.unwrap_or(1.0);
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let filled = ((p.progress / total) * 20.0).round() as usize;
                print!(
                    "\r  [{:<20}] {}",
                    "#".repeat(filled.min(20)),
                    p.message.unwrap_or_default()
                );
                let _ = std::io::stdout().flush();
            }
        };
        let (result, ()) = tokio::join!(call, bar);
        println!(
            "\n  → {}",
            result?.content[0].as_text().unwrap_or("(not text)")
        );

        println!("\n▶ tools/call slow {{\"steps\": 50}}, abandoned after 300 ms");
        let call = client.call_tool("slow", args(json!({"steps": 50})));
        match tokio::time::timeout(Duration::from_millis(300), call).await {
            Ok(r) => println!("  finished early: {r:?}"),
            Err(_) => println!(
                "  dropped the call: the client sent notifications/cancelled and the server aborted its handler"
            ),
        }
    }

    let resources = client.list_resources().await.unwrap_or_default();
    if let Some(resource) = resources.first() {
        println!("\n▶ resources/read {}", resource.uri);
        let read = client.read_resource(&resource.uri).await?;
        println!("  → {:?}", serde_json::to_value(&read.contents[0])?["text"]);
    }
    if has("echo") {
        println!("\n▶ resources/read test://template/42/data (a template)");
        match client.read_resource("test://template/42/data").await {
            Ok(read) => println!("  → {:?}", serde_json::to_value(&read.contents[0])?["text"]),
            Err(e) => println!("  → {e}"),
        }
    }

    let prompts = client.list_prompts().await.unwrap_or_default();
    if prompts.iter().any(|p| p.name == "greeting") {
        println!("\n▶ prompts/get greeting {{\"name\": \"Ada\"}}");
        let mut params = GetPromptParams::new("greeting");
        params.arguments = Some([("name".to_owned(), "Ada".to_owned())].into());
        let prompt = client.get_prompt(params).await?;
        println!(
            "  → {}",
            serde_json::to_value(&prompt.messages[0])?["content"]["text"]
        );
    }

    if has("ask_name") {
        println!("\n▶ tools/call ask_name: the tool needs input from the user");
        let result = client.call_tool("ask_name", Map::new()).await?;
        println!(
            "  → {}",
            result.content[0].as_text().unwrap_or("(not text)")
        );
    }

    if has("long_job") {
        println!("\n▶ tools/call long_job {{\"ms\": 500}}: the server may run it as a task");
        let started = std::time::Instant::now();
        let result = client
            .call_tool("long_job", args(json!({"ms": 500})))
            .await?;
        println!(
            "  → {} (one call from here, {} ms; on 2026 the client polled tasks/get meanwhile)",
            result.content[0].as_text().unwrap_or("(not text)"),
            started.elapsed().as_millis()
        );
    }

    println!("\n▶ unknown tool");
    match client.call_tool("no-such-tool", Map::new()).await {
        Ok(r) => println!("  → {r:?}"),
        Err(e) => println!("  → {e}"),
    }
    client.close().await;
    println!("\n✔ done");
    Ok(())
}
