//! The everything-server's catalog (the demo one, or with the conformance fixtures), shared
//! with the `axum-app` example

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Tool,
};
use mcp_sansio::server::EntryKind;
use mcp_sansio::session::Principal;
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_tokio::store::{SharedTasks, TaskStore};
use mcp_sansio_tokio::{Server, ServerBuilder};
use serde_json::{Map, Value, json};

pub(crate) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// 64 random bits from the OS-seeded hasher keys, without another dependency
fn random_u64() -> u64 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    for chunk in key.chunks_mut(8) {
        chunk.copy_from_slice(&random_u64().to_le_bytes());
    }
    key
}

/// The everything-server: the demo catalog, and the conformance fixtures with `fixtures`;
/// `requestState` sealed with `state_key`, else with a random key
pub(crate) fn server(
    fixtures: bool,
    state_key: Option<[u8; 32]>,
    store: Option<(Arc<dyn TaskStore>, SharedTasks)>,
) -> Server {
    let mut config = ServerConfig::new(Implementation::new(
        "mcp-tokio-everything",
        env!("CARGO_PKG_VERSION"),
    ));
    config.instructions = Some("A demonstration server: echo, add, slow (with progress).".into());
    config.state_key = Some(state_key.unwrap_or_else(random_key));
    config.task_id_seed = random_u64();
    // The tasks extension (SEP-2663): `long_job` runs as a task for 2026 clients that allow it
    // (and the conformance `tasks-*` scenarios drive it)
    config.capabilities["extensions"] = json!({ (mcp_sansio::TASKS_EXTENSION): {} });
    let builder = Server::builder(config)
        // The conformance suite reads `resources[0]`: the catalog lists by URI, so that is
        // `test://static-binary` with --conformance, else this one
        .resource(
            Resource::new("test://static-text", "static-text")
                .with_description("A fixed text")
                .with_mime_type("text/plain"),
            |_cx, uri, _vars| async move {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(uri, "Hello from a static resource")
                        .with_mime_type("text/plain"),
                ]))
            },
        );
    let builder = if fixtures {
        builder.and_then(|b| crate::conformance::register(b.logging()))
    } else {
        builder
    };
    let mut builder = builder
        .and_then(demo)
        .expect("the catalog accepts these entries");
    let handle = Arc::new(OnceLock::<Server>::new());
    if let Some((store, shared)) = store {
        // Behind a load balancer: tasks and changes shared with the other processes, and a
        // tool that raises a change (the scale-out tests hear it through another process)
        let me = Arc::clone(&handle);
        builder = builder
            .task_store(store, shared)
            .list_changed()
            .tool(
                Tool::new("notify_tools_changed", object(json!({"type": "object"})))
                    .with_description("Tells every client of every process that the tools changed"),
                move |_cx, _args| {
                    let me = Arc::clone(&me);
                    async move {
                        if let Some(server) = me.get() {
                            let _ = server.notify_list_changed(mcp_sansio::ListKind::Tools);
                        }
                        Ok(CallToolResult::text("told"))
                    }
                },
            )
            .expect("a new name");
    }
    let server = builder.build();
    let _ = handle.set(server.clone());
    server
}

/// `whoami`'s answer: the caller's verified principal as JSON, `null` where unknown (no
/// principal on stdio or on a server without `--jwt-secret`)
fn whoami(principal: Option<&Principal>) -> CallToolResult {
    let who = json!({
        "subject": principal.and_then(|p| p.subject.as_deref()),
        "client_id": principal.and_then(|p| p.client_id.as_deref()),
        "scopes": principal.map(|p| &p.scopes),
    });
    CallToolResult::text(who.to_string())
}

/// The demo catalog: tools `echo`, `add`, `slow`, `ask_name` (input), `long_job` (a task),
/// `whoami` (the caller), `admin_echo` (`echo` for callers granted `mcp:admin`), a template
/// and the `greeting` prompt
fn demo(b: ServerBuilder) -> Result<ServerBuilder, mcp_sansio::server::CatalogError> {
    b.tool(
            Tool::new("echo", object(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})))
                .with_description("Echoes the text back"),
            |_cx, args| async move {
                // The tool's own work, in a span of its own (a child of the request's)
                let _work = tracing::info_span!("tool.echo").entered();
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
            },
        )
        .and_then(|b| {
            b.tool(
                Tool::new("admin_echo", object(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})))
                    .with_description("Echoes the text back, for callers granted the scope `mcp:admin`"),
                |_cx, args| async move { Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())) },
            )
        })
        .and_then(|b| b.require_scopes(EntryKind::Tool, "admin_echo", ["mcp:admin"]))
        .and_then(|b| {
            b.tool(
                Tool::new("whoami", object(json!({"type": "object"})))
                    .with_description("Who is calling: the verified subject, client id and scopes (JSON, null where unknown)"),
                |cx, _args| async move { Ok(whoami(cx.principal())) },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("add", object(json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]})))
                    .with_description("Adds two numbers"),
                |_cx, args| async move {
                    let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                    Ok(CallToolResult::text(sum.to_string()))
                },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("slow", object(json!({"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 50}}})))
                    .with_description("Works for `steps` tenths of a second, reporting progress"),
                |cx, args| async move {
                    let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(5);
                    // Report each step as it starts, then work: the last report is well ahead
                    // of the result (some clients drop progress that arrives with the result).
                    for step in 1..=steps {
                        #[allow(clippy::cast_precision_loss)]
                        cx.progress(Progress::new(step as f64).total(steps as f64).message(format!("step {step} of {steps}")));
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Ok(CallToolResult::text(format!("done after {steps} steps")))
                },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("ask_name", object(json!({"type": "object"})))
                    .with_description("Asks the user for their name (elicitation), then greets them"),
                |cx, _args| async move {
                    let request: mcp_sansio::schema::InputRequest = serde_json::from_value(json!({
                        "method": "elicitation/create",
                        "params": {"message": "What is your name?", "requestedSchema": {
                            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
                    }))
                    .expect("a valid elicitation");
                    let answers = cx.ask([("name".to_owned(), request)].into()).await.map_err(|e| e.to_error())?;
                    let name = answers
                        .get("name")
                        .and_then(|a| serde_json::to_value(a).ok())
                        .and_then(|v| v["content"]["name"].as_str().map(str::to_owned));
                    Ok(match name {
                        Some(name) => CallToolResult::text(format!("Hello, {name}!")),
                        None => CallToolResult::text("No name given."),
                    })
                },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("long_job", object(json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000}}})))
                    .with_description("Runs as a task when the client allows it, for `ms` milliseconds"),
                |cx, args| async move {
                    if cx.task_offered() {
                        let options = mcp_sansio::TaskOptions::default().poll_interval(Duration::from_millis(100));
                        cx.run_as_task(options).await.map_err(|e| e.to_error())?;
                    }
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(300);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(CallToolResult::text(format!("finished after {ms} ms")))
                },
            )
        })
        .and_then(|b| {
            b.resource_template(ResourceTemplate::new("test://template/{id}/data", "template-data"), |_cx, uri, vars| async move {
                let id = vars.get_str("id").unwrap_or_default().to_owned();
                Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, format!("Data for {id}"))]))
            })
        })
        .and_then(|b| {
            b.prompt(
                Prompt::new("greeting").with_description("Asks to greet `name`").with_arguments(vec![PromptArgument::new("name").with_description("Who to greet").required(true)]),
                |_cx, args: BTreeMap<String, String>| async move {
                    let name = args.get("name").cloned().unwrap_or_default();
                    Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user(format!("Say hello to {name}."))]))
                },
            )
        })
}
