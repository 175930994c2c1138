//! Starts an MCP server as a child process and walks through a session, printing what
//! happens: discovery or handshake, tools, a call, a call with a progress bar, a cancelled
//! call, a resource, a template and a prompt, the server's read-only tools, an unknown tool
//!
//! `cargo run -p mcp-sansio-tokio --example demo` runs it against this crate's
//! `everything-server` example (built next to it);
//! `cargo run -p mcp-sansio-tokio --example demo -- <command> [args...]` against any stdio MCP
//! server (such as `-- npx -y @modelcontextprotocol/server-everything` or
//! `-- python server.py`), or `-- http://127.0.0.1:PORT/mcp` against a Streamable HTTP server
//! (such as `everything-server -- --http 127.0.0.1:PORT`), `-- https://HOST:PORT/mcp` over
//! TLS (the server's certificate must chain to a root of the platform's, or of the PEM file
//! `SSL_CERT_FILE` names: `SSL_CERT_FILE=ca.pem cargo run ... -- https://127.0.0.1:PORT/mcp`
//! against `everything-server -- --https 127.0.0.1:PORT chain.pem key.pem`). Set
//! `MCP_ERA=legacy` to use the `initialize` handshake only, `MCP_ERA=modern` for
//! `server/discover` only.
//!
//! Answers are shown as a person reads them (see `demo/show.rs`): text as text, images,
//! audio, links and embedded resources as a line each, `isError` results as `error: ..`,
//! JSON-RPC errors as `error <code>: <message>`.

#[path = "demo/show.rs"]
mod show;

use std::io::Write;
use std::time::Duration;

use mcp_sansio::schema::method::ListResourceTemplates;
use mcp_sansio::schema::{GetPromptParams, PaginatedParams, Tool};
use mcp_sansio::server::uri_template::{UriTemplate, Variables};
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

/// Prints an answer: `  → ` before its first line, its other lines indented below
fn say(answer: &str) {
    let mut lines = answer.lines();
    println!("  → {}", lines.next().unwrap_or_default());
    for line in lines {
        println!("    {line}");
    }
}

/// A value for a property of this JSON Schema: its default, its first enum value, or one
/// of its type (`"hello world"`, 2, true, [], {})
fn sample_value(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.as_array()?.first()) {
        return first.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::Array(types)) => types.first().and_then(Value::as_str),
        Some(ty) => ty.as_str(),
        None => None,
    };
    match ty {
        Some("number" | "integer") => json!(2),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("hello world"),
    }
}

/// Arguments for a tool, made up from its input schema: a sample value for every required
/// property
fn sample_arguments(tool: &Tool) -> Map<String, Value> {
    let properties = tool.input_schema.get("properties");
    let required = tool.input_schema.get("required").and_then(Value::as_array);
    required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| {
            let schema = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
            (name.to_owned(), sample_value(schema))
        })
        .collect()
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

/// How the client picks the protocol era, in words
fn era_selection(era: EraMode) -> String {
    match era {
        EraMode::Auto => "era: auto, server/discover falling back to initialize".to_owned(),
        EraMode::Modern => "era: modern, server/discover only".to_owned(),
        EraMode::Legacy(version) => format!("era: legacy, initialize offering {version}"),
        _ => "era: another selection".to_owned(),
    }
}

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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    let mut config = ClientConfig::new(Implementation::new(
        "mcp-tokio-demo",
        env!("CARGO_PKG_VERSION"),
    ));
    match std::env::var("MCP_ERA").as_deref() {
        Ok("legacy") => config.era = EraMode::Legacy(ProtocolVersion::V2025_11_25),
        Ok("modern") => config.era = EraMode::Modern,
        _ => {}
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
    let url = std::env::args()
        .nth(1)
        .filter(|a| a.starts_with("http://") || a.starts_with("https://"));
    let era = era_selection(config.era);
    let client = match url {
        Some(url) => {
            println!("▶ connecting to {url} ({era})");
            Client::connect_http(&url, config, options).await?
        }
        None => {
            println!("▶ starting the server and connecting ({era})");
            Client::spawn_with(server_command(), config, options).await?
        }
    };
    let peer = client.peer();
    let name = peer.info.as_ref().map_or("?", |i| i.name.as_str());
    println!("  connected to {name} on protocol {}", peer.version);
    if let Some(text) = &peer.instructions {
        let text = show::clip(text, 200).replace('\n', "\n    ");
        println!("  instructions: {text}");
    }

    println!("\n▶ tools/list");
    let tools = client.list_tools().await?;
    let width = tools
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0)
        .min(24);
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or("");
        let first_line = description.lines().next().unwrap_or_default();
        println!("  • {:<width$} {}", tool.name, show::clip(first_line, 72));
    }
    let find = |n: &str| tools.iter().find(|t| t.name == n);
    let has = |n: &str| find(n).is_some();

    if let Some(echo) = find("echo") {
        let arguments = sample_arguments(echo);
        println!("\n▶ tools/call echo {}", Value::Object(arguments.clone()));
        say(&show::outcome(&client.call_tool("echo", arguments).await));
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
        println!();
        say(&show::outcome(&result));

        println!("\n▶ tools/call slow {{\"steps\": 50}}, abandoned after 300 ms");
        let call = client.call_tool("slow", args(json!({"steps": 50})));
        match tokio::time::timeout(Duration::from_millis(300), call).await {
            Ok(r) => println!("  finished early: {}", show::outcome(&r)),
            Err(_) => println!(
                "  dropped the call: the client sent notifications/cancelled and the server aborted its handler"
            ),
        }
    }

    let resources = client.list_resources().await.unwrap_or_default();
    if let Some(resource) = resources.first() {
        println!("\n▶ resources/read {}", resource.uri);
        match client.read_resource(&resource.uri).await {
            Ok(read) => read
                .contents
                .iter()
                .for_each(|c| say(&show::resource_contents(c))),
            Err(e) => say(&show::error(&e)),
        }
    }
    let templates = client
        .request::<ListResourceTemplates>(PaginatedParams::default(), RequestOptions::default())
        .await
        .map(|page| page.resource_templates)
        .unwrap_or_default();
    if let Some(template) = templates.first() {
        // Every variable of the template set to 42
        if let Ok(parsed) = UriTemplate::parse(&template.uri_template) {
            let vars: Variables = parsed.variables().map(|v| (v, "42")).collect();
            let uri = parsed.expand(&vars);
            println!(
                "\n▶ resources/read {uri} (from the template {})",
                template.uri_template
            );
            match client.read_resource(&uri).await {
                Ok(read) => read
                    .contents
                    .iter()
                    .for_each(|c| say(&show::resource_contents(c))),
                Err(e) => say(&show::error(&e)),
            }
        }
    }

    let prompts = client.list_prompts().await.unwrap_or_default();
    let prompt = prompts
        .iter()
        .find(|p| p.name == "greeting")
        .or(prompts.first());
    if let Some(prompt) = prompt {
        let mut params = GetPromptParams::new(&prompt.name);
        // Every required argument is "Ada"
        let arguments: std::collections::BTreeMap<String, String> = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| (a.name.clone(), "Ada".to_owned()))
            .collect();
        let shown = serde_json::to_string(&arguments)?;
        if !arguments.is_empty() {
            params.arguments = Some(arguments.into_iter().collect());
        }
        println!("\n▶ prompts/get {} {shown}", prompt.name);
        match client.get_prompt(params).await {
            Ok(got) if got.messages.is_empty() => say("(no messages)"),
            Ok(got) => got
                .messages
                .iter()
                .for_each(|m| say(&show::prompt_message(m))),
            Err(e) => say(&show::error(&e)),
        }
    }

    if has("ask_name") {
        println!("\n▶ tools/call ask_name: the tool needs input from the user");
        say(&show::outcome(
            &client.call_tool("ask_name", Map::new()).await,
        ));
    }

    if has("long_job") {
        println!("\n▶ tools/call long_job {{\"ms\": 500}}: the server may run it as a task");
        let started = std::time::Instant::now();
        let result = client.call_tool("long_job", args(json!({"ms": 500}))).await;
        say(&show::outcome(&result));
        println!(
            "    (one call from here, {} ms; on 2026 the client polled tasks/get meanwhile)",
            started.elapsed().as_millis()
        );
    }

    // Tools the server marks read-only are safe to try: each with arguments made up from its
    // input schema, given 3 seconds. Tools named for the environment are left out: what they
    // show may hold secrets.
    let walked = ["echo", "slow", "ask_name", "long_job"];
    let read_only = tools.iter().filter(|t| {
        !walked.contains(&t.name.as_str())
            && !t.name.to_lowercase().contains("env")
            && t.annotations
                .as_ref()
                .is_some_and(|a| a.read_only_hint == Some(true))
    });
    for tool in read_only.take(8) {
        let arguments = sample_arguments(tool);
        println!(
            "\n▶ tools/call {} {} (read-only)",
            tool.name,
            Value::Object(arguments.clone())
        );
        let call = client.call_tool(&tool.name, arguments);
        match tokio::time::timeout(Duration::from_secs(3), call).await {
            Ok(outcome) => say(&show::outcome(&outcome)),
            Err(_) => say("no answer within 3 s: dropped the call, which cancels it"),
        }
    }

    println!("\n▶ tools/call no-such-tool (an unknown tool)");
    say(&show::outcome(
        &client.call_tool("no-such-tool", Map::new()).await,
    ));
    client.close().await;
    println!("\n✔ done");
    Ok(())
}
