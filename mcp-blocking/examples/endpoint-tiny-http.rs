//! The server's Streamable HTTP endpoint served by an HTTP stack of the user's own:
//! tiny_http, with a handler written against the endpoint's entry point (request in;
//! status, headers and a whole or streamed body out), a thread per request
//!
//! `cargo run -p mcp-sansio-blocking --example endpoint-tiny-http -- 127.0.0.1:PORT`, then
//! point an MCP client at `http://127.0.0.1:PORT/mcp`; any path reaches the endpoint, except
//! `/health`, which the app answers itself. `RUST_LOG` chooses what it logs (to stderr).

use std::io::{Read, Write};
use std::time::Duration;

use mcp_sansio::http::{HttpConfig, Source};
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_blocking::endpoint::{Body, Fields};
use mcp_sansio_blocking::{HttpEndpoint, Server};
use serde_json::{Value, json};

/// A server with `echo`, and `slow`, which reports progress (the endpoint streams it as SSE)
pub(crate) fn server() -> Server {
    let Value::Object(echo) = json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!("an object")
    };
    let Value::Object(slow) =
        json!({"type": "object", "properties": {"steps": {"type": "integer"}}})
    else {
        unreachable!("an object")
    };
    Server::builder(ServerConfig::new(Implementation::new(
        "tiny-http-app",
        "1.0",
    )))
    .tool(Tool::new("echo", echo), |_cx, args| {
        Ok(CallToolResult::text(
            args["text"].as_str().unwrap_or_default(),
        ))
    })
    .and_then(|b| {
        b.tool(Tool::new("slow", slow), |cx, args| {
            let steps = args["steps"].as_u64().unwrap_or(3);
            for step in 1..=steps {
                #[allow(clippy::cast_precision_loss)]
                cx.progress(Progress::new(step as f64).total(steps as f64));
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(CallToolResult::text(format!("done after {steps} steps")))
        })
    })
    .expect("the catalog accepts these tools")
    .build()
}

/// Serves `endpoint` (and `/health`) with tiny_http, a thread per request, until the
/// server is unblocked
pub(crate) fn serve(http: &tiny_http::Server, endpoint: &HttpEndpoint) {
    for request in http.incoming_requests() {
        let endpoint = endpoint.clone();
        std::thread::spawn(move || handle(&endpoint, request));
    }
}

/// One request: the app's own route, or the endpoint's answer
fn handle(endpoint: &HttpEndpoint, mut request: tiny_http::Request) {
    if request.url() == "/health" {
        let _ = request.respond(tiny_http::Response::from_string("ok"));
        return;
    }
    // The endpoint takes every header field, in order, and the whole body (up to its limit).
    let method = request.method().as_str().to_owned();
    let headers: Fields = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_owned(),
                h.value.as_bytes().to_vec(),
            )
        })
        .collect();
    let limit = endpoint.body_limit();
    let mut body = Vec::new();
    if request
        .as_reader()
        .take(limit as u64 + 1)
        .read_to_end(&mut body)
        .is_err()
    {
        return;
    }
    let source = request
        .remote_addr()
        .map_or_else(Source::unknown, |peer| Source::from_peer(*peer));
    let response = if body.len() > limit {
        endpoint.oversize()
    } else {
        endpoint.handle(source, method, headers, body)
    };
    let fields = response.headers.iter().filter_map(|(name, value)| {
        tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
    });
    match response.body {
        Body::Whole(data) => {
            let mut whole = tiny_http::Response::from_data(data).with_status_code(response.status);
            for field in fields {
                whole.add_header(field);
            }
            let _ = request.respond(whole);
        }
        // Pieces as they come, each flushed at once (an event stream must not wait in a
        // buffer): written as a chunked response on the connection itself.
        Body::Stream(pieces) => {
            let mut head = format!("HTTP/1.1 {} OK\r\n", response.status);
            for (name, value) in &response.headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
            let mut out = request.into_writer();
            if out
                .write_all(head.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                return; // dropping `pieces` tells the server the client went away
            }
            for piece in pieces {
                let Ok(piece) = piece else {
                    return; // the server gave the response up: close the connection
                };
                let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), &piece, b"\r\n"].concat();
                if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
                    return;
                }
            }
            let _ = out.write_all(b"0\r\n\r\n").and_then(|()| out.flush());
        }
        _ => {}
    }
}

#[allow(dead_code)] // used by `main` only
/// Logs to stderr as `RUST_LOG` says, nothing without it: `RUST_LOG=mcp_sansio=debug` shows
/// every session and request
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

#[allow(dead_code)] // the test includes this file for `server`, `serve`
fn main() {
    init_logging();
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let http = tiny_http::Server::http(&addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
    let endpoint = server()
        .http_endpoint(HttpConfig::default())
        .expect("a thread for the endpoint's actor");
    eprintln!(
        "serving MCP at http://{}/mcp",
        http.server_addr().to_ip().expect("an IP address")
    );
    serve(&http, &endpoint);
}
