//! An MCP server on plain threads (mcp-sansio-blocking) with a few of everything: tools (one with
//! progress), a resource, a resource template and a prompt
//!
//! `cargo run -p mcp-sansio-blocking --example everything-server-blocking` and speak MCP on stdin/stdout,
//! or let a client start it as a child process. With
//! `-- --http 127.0.0.1:PORT` it serves Streamable HTTP at `http://127.0.0.1:PORT/mcp`
//! instead (any path works); `-- --https 127.0.0.1:PORT CHAIN.pem KEY.pem` serves it over
//! TLS at `https://127.0.0.1:PORT/mcp`, presenting that certificate chain and key, until it is interrupted.
//!
//! `--conformance` adds the fixtures of the official conformance suite (see
//! `conformance.rs`): `--conformance --http 127.0.0.1:PORT` is the server its server legs
//! run against. Without it the catalog is the small demo one the interop tests assert on.
//!
//! Behind a load balancer: `--node NAME` puts `NAME.` before every 2025-wire session id, for
//! sticky routing, and `--state-key HEX` (64 hex digits) is the `requestState` key all the
//! processes share.
//!
//! `--jwt-secret SECRET` (built with `--features auth`) protects it: every request needs an
//! HS256 JWT signed with `SECRET` for `http://127.0.0.1:PORT/mcp` from
//! `http://127.0.0.1:<PORT+1>`; `whoami` then answers the token's subject, client id and
//! scopes, and `admin_echo` needs `mcp:admin`. Flags go in any order; see mcp-tokio's
//! `everything-server/args.rs`.

#[path = "../../../mcp-tokio/examples/everything-server/args.rs"]
mod args;
mod conformance;
#[path = "../../../mcp-tokio/examples/everything-server/telemetry.rs"]
mod telemetry;

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, Tool,
};
use mcp_sansio::server::EntryKind;
use mcp_sansio::session::Principal;
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_blocking::{Server, ServerBuilder};
use serde_json::{Map, Value, json};

use args::Transport;

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

/// Has glibc give every buffer of 128 KiB or more back to the OS when it is freed
/// (`mallopt(M_MMAP_THRESHOLD)`, as `MALLOC_MMAP_THRESHOLD_=131072` in the environment would)
///
/// A server on plain threads reads, parses and writes large messages on many threads; glibc
/// keeps freed memory in a heap per thread group (up to 8 per core), and after the first
/// large buffer is freed it serves large buffers from those heaps too and keeps up to twice
/// their size in each. 30 unread 2 MiB echoes then left +106 MB resident instead of +27 MB
/// (issue 34). A fixed threshold turns that off: a large buffer is its own mapping, gone when
/// freed. See the guide's "The bindings compared".
fn give_large_buffers_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    {
        unsafe extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// glibc's `M_MMAP_THRESHOLD`
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        // SAFETY: mallopt only changes the allocator's tuning; called before any thread
        // starts.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        }
    }
}

fn main() {
    give_large_buffers_back();
    let name = "everything-server-blocking";
    let args = args::parse(name);
    let _telemetry = telemetry::init(name, args.otlp.as_deref());
    let fixtures = args.fixtures;
    let mut config = ServerConfig::new(Implementation::new(
        "mcp-blocking-everything",
        env!("CARGO_PKG_VERSION"),
    ));
    config.instructions = Some("A demonstration server: echo, add, slow (with progress).".into());
    config.state_key = Some(args.state_key.unwrap_or_else(random_key));
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
            |_cx, uri, _vars| {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(uri, "Hello from a static resource")
                        .with_mime_type("text/plain"),
                ]))
            },
        );
    let builder = if fixtures {
        builder.and_then(|b| conformance::register(b.logging()))
    } else {
        builder
    };
    let mut builder = builder
        .and_then(demo)
        .expect("the catalog accepts these entries");
    if let Some((store, shared)) = args.store(name) {
        // Behind a load balancer: tasks and changes shared with the other processes
        builder = builder.task_store(store, shared).list_changed();
    }
    let server = builder.build();
    let config = args.http_config();
    match args.transport {
        #[cfg(feature = "auth")]
        Transport::Http(addr) if args.jwt_secret.is_some() => {
            let (rules, key, validation) =
                args::jwt_rules(args.jwt_secret.as_deref(), "http", addr).expect("a secret");
            let verifier = mcp_sansio_blocking::jwt_verifier(key, validation);
            let protection = mcp_sansio_blocking::Protection::new(rules, verifier);
            let handle = server
                .serve_http_protected(addr, config, protection)
                .expect("the address binds");
            eprintln!(
                "serving MCP at http://{}/mcp (protected)",
                handle.local_addr()
            );
            handle.wait();
        }
        Transport::Http(addr) => {
            let handle = server
                .serve_http_with(addr, config)
                .expect("the address binds");
            eprintln!("serving MCP at http://{}/mcp", handle.local_addr());
            // Until the process is stopped (Ctrl-C, SIGTERM)
            handle.wait();
        }
        #[cfg(feature = "tls")]
        Transport::Https { addr, chain, key } => {
            let read = |path: &str| std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let identity = mcp_sansio_blocking::TlsIdentity::from_pem(&read(&chain), &read(&key))
                .unwrap_or_else(|e| panic!("{e}"));
            #[cfg(feature = "auth")]
            let handle = match args::jwt_rules(args.jwt_secret.as_deref(), "https", addr) {
                Some((rules, key, validation)) => {
                    let verifier = mcp_sansio_blocking::jwt_verifier(key, validation);
                    let protection = mcp_sansio_blocking::Protection::new(rules, verifier);
                    server.serve_https_protected(addr, config, protection, identity)
                }
                None => server.serve_https_with(addr, config, identity),
            }
            .expect("the address binds");
            #[cfg(not(feature = "auth"))]
            let handle = server
                .serve_https_with(addr, config, identity)
                .expect("the address binds");
            eprintln!("serving MCP at https://{}/mcp", handle.local_addr());
            handle.wait();
        }
        #[cfg(not(feature = "tls"))]
        Transport::Https { .. } => {
            eprintln!(
                "{name}: --https needs the `tls` feature\n{}",
                args::usage(name)
            );
            std::process::exit(2);
        }
        Transport::Stdio => server.serve_stdio(),
    }
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
            |_cx, args| {
                // The tool's own work, in a span of its own (a child of the request's)
                let _work = tracing::info_span!("tool.echo").entered();
                Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
            },
        )
        .and_then(|b| {
            b.tool(
                Tool::new("admin_echo", object(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})))
                    .with_description("Echoes the text back, for callers granted the scope `mcp:admin`"),
                |_cx, args| { Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())) },
            )
        })
        .and_then(|b| b.require_scopes(EntryKind::Tool, "admin_echo", ["mcp:admin"]))
        .and_then(|b| {
            b.tool(
                Tool::new("whoami", object(json!({"type": "object"})))
                    .with_description("Who is calling: the verified subject, client id and scopes (JSON, null where unknown)"),
                |cx, _args| { Ok(whoami(cx.principal())) },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("add", object(json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]})))
                    .with_description("Adds two numbers"),
                |_cx, args| {
                    let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                    Ok(CallToolResult::text(sum.to_string()))
                },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("slow", object(json!({"type": "object", "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 50}}})))
                    .with_description("Works for `steps` tenths of a second, reporting progress"),
                |cx, args| {
                    let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(5);
                    // Report each step as it starts, then work: the last report is well ahead
                    // of the result (some clients drop progress that arrives with the result).
                    for step in 1..=steps {
                        #[allow(clippy::cast_precision_loss)]
                        cx.progress(Progress::new(step as f64).total(steps as f64).message(format!("step {step} of {steps}")));
                        cx.sleep(Duration::from_millis(100))?;
                    }
                    Ok(CallToolResult::text(format!("done after {steps} steps")))
                },
            )
        })
        .and_then(|b| {
            b.tool(
                Tool::new("ask_name", object(json!({"type": "object"})))
                    .with_description("Asks the user for their name (elicitation), then greets them"),
                |cx, _args| {
                    let request: mcp_sansio::schema::InputRequest = serde_json::from_value(json!({
                        "method": "elicitation/create",
                        "params": {"message": "What is your name?", "requestedSchema": {
                            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
                    }))
                    .expect("a valid elicitation");
                    let answers = cx.ask([("name".to_owned(), request)].into()).map_err(|e| e.to_error())?;
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
                |cx, args| {
                    if cx.task_offered() {
                        let options = mcp_sansio::TaskOptions::default().poll_interval(Duration::from_millis(100));
                        cx.run_as_task(options).map_err(|e| e.to_error())?;
                    }
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(300);
                    cx.sleep(Duration::from_millis(ms))?;
                    Ok(CallToolResult::text(format!("finished after {ms} ms")))
                },
            )
        })
        .and_then(|b| {
            b.resource_template(ResourceTemplate::new("test://template/{id}/data", "template-data"), |_cx, uri, vars| {
                let id = vars.get_str("id").unwrap_or_default().to_owned();
                Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, format!("Data for {id}"))]))
            })
        })
        .and_then(|b| {
            b.prompt(
                Prompt::new("greeting").with_description("Asks to greet `name`").with_arguments(vec![PromptArgument::new("name").with_description("Who to greet").required(true)]),
                |_cx, args: BTreeMap<String, String>| {
                    let name = args.get("name").cloned().unwrap_or_default();
                    Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user(format!("Say hello to {name}."))]))
                },
            )
        })
}
