//! Middleware around every request (the guide's "Middleware" chapter shows this program):
//! the server audits every call with its caller and timing, and refuses `wipe` unless the
//! caller confirms; the client tags every request's `_meta` and retries once after an error
//!
//! `cargo run -p mcp-sansio-tokio --example middleware` (server and client in one process).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{CallError, ClientConfig, Implementation, ServerConfig};
use mcp_sansio_tokio::middleware::{Call, ClientCall, ClientNext, Next, Outcome};
use mcp_sansio_tokio::{Client, ClientError, Server};
use serde_json::Map;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = Server::builder(ServerConfig::new(Implementation::new("audited", "1.0")))
        // First added, outermost: sees every call first and its outcome last.
        .middleware(|call: Call, next: Next| async move {
            let outcome = next.run(call.clone()).await;
            let who = call.request().principal().and_then(|p| p.subject.clone());
            let tag = call
                .request()
                .meta()
                .and_then(|m| m.get("example.com/client"));
            println!(
                "audit: {} {} by {} (tag {tag:?}): {} in {:?}",
                call.method(),
                call.name().unwrap_or("-"),
                who.as_deref().unwrap_or("anonymous"),
                if outcome.is_error() { "error" } else { "ok" },
                outcome.elapsed(),
            );
            outcome
        })
        // Then a rule written once for every tool.
        .middleware(|call: Call, next: Next| async move {
            let confirmed = call.argument("confirm").and_then(|v| v.as_bool()) == Some(true);
            if call.name() == Some("wipe") && !confirmed {
                return Outcome::error(ErrorObject::invalid_params("wipe needs confirm: true"));
            }
            next.run(call).await
        })
        .tool(Tool::new("wipe", Map::new()), |_cx, _args| async {
            Ok(CallToolResult::text("wiped"))
        })?
        .tool(Tool::new("flaky", Map::new()), {
            let runs = Arc::clone(&runs);
            move |_cx, _args| {
                let run = runs.fetch_add(1, Ordering::SeqCst);
                async move {
                    if run == 0 {
                        return Err(ErrorObject::new(-32000, "busy, try again"));
                    }
                    Ok(CallToolResult::text("done"))
                }
            }
        })?
        .build();

    let config = ClientConfig::new(Implementation::new("example", "1.0"));
    let client = Client::in_memory(&server, config)
        .await?
        // Every request carries a tag in its `_meta`, which the server sees.
        .with_middleware(|mut call: ClientCall, next: ClientNext| async move {
            call.set_meta("example.com/client", "middleware-example");
            next.run(call).await
        })
        // A request that fails with -32000 is sent once more.
        .with_middleware(|call: ClientCall, next: ClientNext| async move {
            match next.clone().run(call.clone()).await {
                Err(ClientError::Call(CallError::Remote(e))) if e.code == -32000 => {
                    next.run(call).await
                }
                other => other,
            }
        });

    match client.call_tool("wipe", Map::new()).await {
        Err(ClientError::Call(CallError::Remote(e))) => println!("wipe refused: {}", e.message),
        other => println!("wipe: {other:?}"),
    }
    let args = serde_json::json!({"confirm": true})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let wiped = client.call_tool("wipe", args).await?;
    println!("wipe confirmed: {:?}", wiped.content[0].as_text());
    let flaky = client.call_tool("flaky", Map::new()).await?;
    println!("flaky after a retry: {:?}", flaky.content[0].as_text());
    client.close().await;
    Ok(())
}
