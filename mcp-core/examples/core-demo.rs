//! Drives an MCP client session and an MCP server session against each other, in memory, and
//! prints the exchange
//!
//! Run with `cargo run -p mcp-sansio --example core-demo`. No I/O, no runtime and no real clock
//! beyond one origin instant: time moves only when the demo says so, which is how the
//! library's own tests run.

use mcp_sansio::testing::Side;
use std::time::{Duration, Instant};

use mcp_sansio::testing::Pair;
use mcp_sansio::{CallError, ClientEvent, EraMode, ProtocolVersion, RequestOptions, ServerEvent};
use serde_json::json;
use serde_json::value::RawValue;

fn raw(v: serde_json::Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).expect("valid JSON")
}

/// Prints the messages moved since the last call
fn show(pair: &mut Pair) {
    for (side, line) in pair.take_transcript() {
        let arrow = match side {
            Side::Client => "client → server",
            _ => "server → client",
        };
        println!("  {arrow}  {line}");
    }
}

/// Moves the messages, lets the server answer, and prints what happened, in order
fn step(pair: &mut Pair, held: &mut Vec<mcp_sansio::Responder>) {
    pair.drive();
    show(pair);
    serve(pair, held);
    show(pair);
    client_events(pair);
}

/// Answers every pending server request the way a small tool server would
fn serve(pair: &mut Pair, held: &mut Vec<mcp_sansio::Responder>) {
    for event in pair.server_events() {
        match event {
            ServerEvent::Request(request) => {
                let name = request
                    .params_as::<serde_json::Value>()
                    .ok()
                    .and_then(|p| p["name"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                match (request.method.as_str(), name.as_str()) {
                    ("tools/list", _) => {
                        let tools = json!({"tools": [
                            {"name": "echo", "inputSchema": {"type": "object"}},
                            {"name": "slow", "inputSchema": {"type": "object"}}
                        ]});
                        pair.server
                            .respond_raw(request.responder, &raw(tools))
                            .expect("object");
                    }
                    ("tools/call", "echo") => {
                        let result = json!({"content": [{"type": "text", "text": "hello world"}]});
                        pair.server
                            .respond_raw(request.responder, &raw(result))
                            .expect("object");
                    }
                    ("tools/call", "slow") => {
                        // Report progress and keep the request open: the client will cancel it.
                        for step in 1..=3 {
                            let p = mcp_sansio::Progress::new(f64::from(step)).total(10.0);
                            pair.server
                                .inbound(request.responder.id())
                                .report_progress(&p)
                                .expect("asked");
                        }
                        println!(
                            "  (server keeps `slow` running; responder {})",
                            request.responder.id()
                        );
                        held.push(request.responder);
                    }
                    _ => {
                        let error = mcp_sansio::ErrorObject::method_not_found(&request.method);
                        pair.server.respond_error(request.responder, &error);
                    }
                }
            }
            ServerEvent::Cancelled { id, reason } => {
                println!("  (server: request {id} cancelled by the client: {reason:?})");
            }
            ServerEvent::Ready { version } => {
                println!("  (server: client initialized on {version})")
            }
            other => println!("  (server event: {other:?})"),
        }
    }
    pair.drive();
}

fn client_events(pair: &mut Pair) {
    for event in pair.client_events() {
        match event {
            ClientEvent::Ready { version } => println!("  (client ready on {version})"),
            ClientEvent::Progress { id, progress } => println!(
                "  (client: progress on {id}: {} of {})",
                progress.progress,
                progress.total.unwrap_or(f64::NAN)
            ),
            ClientEvent::Response {
                id,
                outcome: Ok(result),
            } => println!("  (client: {id} → {})", result.get()),
            ClientEvent::Response {
                id,
                outcome: Err(CallError::Remote(e)),
            } => println!("  (client: {id} failed: {e})"),
            ClientEvent::Response {
                id,
                outcome: Err(e),
            } => println!("  (client: {id} ended: {e})"),
            other => println!("  (client event: {other:?})"),
        }
    }
}

fn session(title: &str, era: EraMode, origin: Instant) {
    println!("\n=== {title} ===");
    let mut pair = Pair::new(origin, Pair::client_config(era), Pair::server_config());
    let mut held = Vec::new();
    step(&mut pair, &mut held);

    println!("\n-- list tools, call `echo`");
    let c = &mut pair.client;
    c.send_request_raw(pair.now, "tools/list", None, RequestOptions::default())
        .expect("ready");
    let echo = raw(json!({"name": "echo", "arguments": {"text": "hello world"}}));
    c.send_request_raw(
        pair.now,
        "tools/call",
        Some(echo),
        RequestOptions::default(),
    )
    .expect("ready");
    step(&mut pair, &mut held);

    println!("\n-- call `slow` with progress, then cancel it");
    let slow = raw(json!({"name": "slow", "arguments": {}}));
    let opts = RequestOptions::default().with_progress();
    let id = pair
        .client
        .send_request_raw(pair.now, "tools/call", Some(slow), opts)
        .expect("ready");
    step(&mut pair, &mut held);
    pair.client
        .cancel(pair.now, id, Some("the user pressed stop"))
        .expect("in flight");
    step(&mut pair, &mut held);

    println!("\n-- a request nobody answers times out after 5 s (fake clock, no sleeping)");
    pair.pause(Side::Server);
    let opts = RequestOptions::default().timeout(Duration::from_secs(5));
    pair.client
        .send_request_raw(pair.now, "prompts/list", None, opts)
        .expect("ready");
    pair.drive();
    pair.discard_held(Side::Server);
    pair.resume(Side::Server);
    pair.advance(Duration::from_secs(5));
    step(&mut pair, &mut held);
}

#[allow(clippy::disallowed_methods)] // the one real instant: the fake clock's origin
fn origin() -> Instant {
    Instant::now()
}

fn main() {
    let origin = origin();
    session(
        "modern era (2026-07-28): server/discover, per-request _meta",
        EraMode::Modern,
        origin,
    );
    session(
        "legacy era (2025-11-25): initialize handshake",
        EraMode::Legacy(ProtocolVersion::V2025_11_25),
        origin,
    );
}
