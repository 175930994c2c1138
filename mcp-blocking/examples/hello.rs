//! The README's minimal server and client on plain threads (mcp-sansio-blocking), as one program:
//! run without arguments, it starts itself with `serve` as a child process (the server, on
//! stdio), calls its tool, and prints the answer
//!
//! `cargo run -p mcp-sansio-blocking --example hello`

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, Implementation, ServerConfig};
use mcp_sansio_blocking::{Client, Server};

/// Logs to stderr (stdout may be the stdio transport) as `RUST_LOG` says, nothing without it:
/// `RUST_LOG=mcp_sansio=debug` shows every session and request
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    if std::env::args().nth(1).as_deref() == Some("serve") {
        // A server over stdio; handlers are plain functions run on a pool of worker threads
        let schema =
            serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let server = Server::builder(ServerConfig::new(Implementation::new("echo-server", "1.0")))
            .tool(
                Tool::new("echo", schema.as_object().cloned().unwrap_or_default()),
                |_cx, args| {
                    Ok(CallToolResult::text(
                        args["text"].as_str().unwrap_or_default(),
                    ))
                },
            )?
            .build();
        server.serve_stdio();
        return Ok(());
    }
    // A client that starts the server as a child process (killed and reaped on drop)
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command.arg("serve");
    let client = Client::spawn(
        command,
        ClientConfig::new(Implementation::new("my-client", "1.0")),
    )?;
    let tools = client.list_tools()?;
    let mut args = serde_json::Map::new();
    args.insert("text".into(), "hello from a thread".into());
    let result = client.call_tool("echo", args)?;
    let said = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or("(no text)");
    println!("{} tool(s); echo says {said}", tools.len());
    Ok(())
}
