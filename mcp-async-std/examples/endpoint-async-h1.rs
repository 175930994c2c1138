//! The server's Streamable HTTP endpoint served by an HTTP stack of the user's own:
//! async-h1 (async-std's HTTP/1.1 crate), with a handler written against the endpoint's
//! entry point (request in; status, headers and a whole or streamed body out)
//!
//! `cargo run -p mcp-sansio-async-std --example endpoint-async-h1 -- 127.0.0.1:PORT`, then
//! point an MCP client at `http://127.0.0.1:PORT/mcp`; any path reaches the endpoint, except
//! `/health`, which the app answers itself. `RUST_LOG` chooses what it logs (to stderr).

use std::time::Duration;

use async_std::net::TcpListener;
use async_std::prelude::*;
use futures_lite::io::AsyncBufRead;
use mcp_sansio::http::{HttpConfig, Source};
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{Implementation, Progress, ServerConfig};
use mcp_sansio_async_std::endpoint::{Body, BodyStream, Fields};
use mcp_sansio_async_std::{HttpEndpoint, Server};
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
        "async-h1-app",
        "1.0",
    )))
    .tool(Tool::new("echo", echo), |_cx, args| async move {
        Ok(CallToolResult::text(
            args["text"].as_str().unwrap_or_default(),
        ))
    })
    .and_then(|b| {
        b.tool(Tool::new("slow", slow), |cx, args| async move {
            let steps = args["steps"].as_u64().unwrap_or(3);
            for step in 1..=steps {
                #[allow(clippy::cast_precision_loss)]
                cx.progress(Progress::new(step as f64).total(steps as f64));
                async_std::task::sleep(Duration::from_millis(20)).await;
            }
            Ok(CallToolResult::text(format!("done after {steps} steps")))
        })
    })
    .expect("the catalog accepts these tools")
    .build()
}

/// Serves `endpoint` (and `/health`) on `listener` with async-h1, until the listener fails
pub(crate) async fn serve(listener: TcpListener, endpoint: HttpEndpoint) {
    let mut incoming = listener.incoming();
    while let Some(Ok(stream)) = incoming.next().await {
        let endpoint = endpoint.clone();
        let peer = stream.peer_addr().ok();
        async_std::task::spawn(async move {
            let serve = async_h1::accept(stream, |req| handle(endpoint.clone(), peer, req));
            let _ = serve.await;
        });
    }
}

/// One request: the app's own route, or the endpoint's answer
async fn handle(
    endpoint: HttpEndpoint,
    peer: Option<std::net::SocketAddr>,
    mut req: http_types::Request,
) -> http_types::Result<http_types::Response> {
    if req.url().path() == "/health" {
        let mut res = http_types::Response::new(200);
        res.set_body("ok");
        return Ok(res);
    }
    // The endpoint takes every header field, in order, and the whole body (up to its limit).
    let method = req.method().to_string();
    let headers: Fields = req
        .iter()
        .flat_map(|(name, values)| {
            let name = name.as_str().to_owned();
            values
                .iter()
                .map(move |v| (name.clone(), v.as_str().as_bytes().to_vec()))
        })
        .collect();
    let limit = endpoint.body_limit();
    let mut body = Vec::new();
    req.take_body()
        .take(limit as u64 + 1)
        .read_to_end(&mut body)
        .await?;
    let source = peer.map_or_else(Source::unknown, Source::from_peer);
    let response = if body.len() > limit {
        endpoint.oversize().await
    } else {
        endpoint.handle(source, method, headers, body).await
    };
    let mut res = http_types::Response::new(response.status);
    for (name, value) in &response.headers {
        res.append_header(*name, value.as_str());
    }
    match response.body {
        Body::Whole(data) => res.set_body(data),
        // Pieces as they come: async-h1 writes each as a chunk.
        Body::Stream(stream) => {
            res.set_body(http_types::Body::from_reader(Pieces::new(stream), None))
        }
        _ => {}
    }
    Ok(res)
}

/// An open response's pieces as the reader async-h1 takes a streamed body from; dropped
/// (the client went away), it tells the server
struct Pieces {
    stream: BodyStream<Vec<u8>>,
    piece: Vec<u8>,
    at: usize,
}

impl Pieces {
    fn new(stream: BodyStream<Vec<u8>>) -> Self {
        Self {
            stream,
            piece: Vec::new(),
            at: 0,
        }
    }
}

impl futures_lite::io::AsyncRead for Pieces {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let available = std::task::ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        std::task::Poll::Ready(Ok(n))
    }
}

impl AsyncBufRead for Pieces {
    fn poll_fill_buf(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        while this.at == this.piece.len() {
            match std::task::ready!(this.stream.poll_piece(cx)) {
                Some(Ok(piece)) => (this.piece, this.at) = (piece, 0),
                // The end of the body
                None => return std::task::Poll::Ready(Ok(&[])),
                // The server gave the response up: fail it, so the connection closes.
                Some(Err(dropped)) => {
                    return std::task::Poll::Ready(Err(std::io::Error::other(dropped)));
                }
            }
        }
        std::task::Poll::Ready(Ok(&this.piece[this.at..]))
    }

    fn consume(self: std::pin::Pin<&mut Self>, amt: usize) {
        self.get_mut().at += amt;
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
    async_std::task::block_on(async {
        init_logging();
        let addr = std::env::args()
            .nth(1)
            .unwrap_or_else(|| "127.0.0.1:3000".into());
        let listener = TcpListener::bind(&addr)
            .await
            .unwrap_or_else(|e| panic!("{addr}: {e}"));
        eprintln!(
            "serving MCP at http://{}/mcp",
            listener.local_addr().expect("bound")
        );
        let endpoint = server().http_endpoint(HttpConfig::default());
        serve(listener, endpoint).await;
    });
}
