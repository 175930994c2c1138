//! The server's endpoint as a `tower::Service` mounted in an axum app: under a nested path,
//! behind a tower middleware of the app's, beside the app's own routes, on the app's
//! listener and in its graceful shutdown

use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use mcp_sansio_tokio::{Client, ClientOptions, HttpEndpoint, Server};
use serde_json::{Map, Value, json};

/// A server with one tool, `echo`
fn server() -> Server {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    Server::builder(ServerConfig::new(Implementation::new("mounted", "1.0.0")))
        .tool(Tool::new("echo", schema), |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        })
        .unwrap()
        .build()
}

/// The app's own middleware: requests without the app's API key get 401
async fn api_key(request: Request, next: Next) -> Response {
    match request.headers().get("x-api-key") {
        Some(key) if key == "s3cret" => next.run(request).await,
        _ => (StatusCode::UNAUTHORIZED, "no API key").into_response(),
    }
}

/// The app: `/health`, and the MCP endpoint at `/api/v1/mcp` behind the key
fn app(mcp: HttpEndpoint) -> Router {
    let api = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn(api_key));
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .nest("/api/v1", api)
}

fn config(era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new("mounted-test", "1.0.0"));
    config.era = era;
    config
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Serves `app` on 127.0.0.1 until `stop` fires; returns the address and the server task
async fn serve(
    app: Router,
    stop: tokio::sync::oneshot::Receiver<()>,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.await;
            })
            .await
            .unwrap();
    });
    (addr, task)
}

#[tokio::test]
async fn the_endpoint_serves_both_eras_under_a_nested_path_behind_a_middleware() {
    let mcp = server().http_endpoint(HttpConfig::default());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (addr, task) = serve(app(mcp.clone()), stopped).await;
    let url = format!("http://{addr}/api/v1/mcp");
    for (era, version) in [
        (
            EraMode::Legacy(ProtocolVersion::V2025_11_25),
            ProtocolVersion::V2025_11_25,
        ),
        (EraMode::Modern, ProtocolVersion::V2026_07_28),
        (EraMode::Auto, ProtocolVersion::V2026_07_28),
    ] {
        let options = ClientOptions::default().header("x-api-key", "s3cret");
        let client = tokio::time::timeout(
            Duration::from_secs(20),
            Client::connect_http(&url, config(era), options),
        )
        .await
        .expect("connects in time")
        .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        assert_eq!(client.peer().version, version);
        let tools = client.list_tools().await.unwrap();
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["echo"]
        );
        let echoed = client
            .call_tool("echo", args(json!({"text": "through axum"})))
            .await
            .unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("through axum"));
        client.close().await;
    }

    // The middleware in front answers for the app: no key, no MCP.
    let refused = Client::connect_http(&url, config(EraMode::Modern), ClientOptions::default())
        .await
        .expect_err("the middleware refuses a request without the key");
    assert!(refused.to_string().contains("401"), "{refused}");

    // The app's own route beside it.
    let health = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = health.into_split();
    tokio::io::AsyncWriteExt::write_all(
        &mut write,
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let mut response = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut read, &mut response)
        .await
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("ok"), "{response}");

    // A 2025 client holding its GET event stream open: shutting the endpoint down ends the
    // stream, so the app's graceful shutdown finishes.
    let options = ClientOptions::default().header("x-api-key", "s3cret");
    let legacy = Client::connect_http(
        &url,
        config(EraMode::Legacy(ProtocolVersion::V2025_11_25)),
        options,
    )
    .await
    .unwrap();
    legacy.list_tools().await.unwrap();
    mcp.shutdown();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the app shuts down gracefully once the endpoint ended its streams")
        .unwrap();
    drop(legacy);
}

#[tokio::test]
async fn the_endpoint_answers_through_the_sans_io_entry_point() {
    // Any HTTP stack: hand the endpoint a request, write the response it gives.
    let mcp = server().http_endpoint(HttpConfig::default());
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "sans-io"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "by-hand", "version": "1"}
        }}
    });
    let headers = vec![
        ("host".to_owned(), b"127.0.0.1".to_vec()),
        ("content-type".to_owned(), b"application/json".to_vec()),
        (
            "accept".to_owned(),
            b"application/json, text/event-stream".to_vec(),
        ),
        ("mcp-protocol-version".to_owned(), b"2026-07-28".to_vec()),
        ("mcp-method".to_owned(), b"tools/call".to_vec()),
        ("mcp-name".to_owned(), b"echo".to_vec()),
    ];
    let response = mcp
        .handle(
            mcp_sansio::http::Source::unknown(),
            "POST".into(),
            headers,
            serde_json::to_vec(&body).unwrap().into(),
        )
        .await;
    assert_eq!(response.status, 200);
    let mut bytes = Vec::new();
    match response.body {
        mcp_sansio_tokio::endpoint::EndpointBody::Whole(data) => bytes = data,
        mcp_sansio_tokio::endpoint::EndpointBody::Stream(mut stream) => {
            while let Some(piece) = stream.next().await {
                bytes.extend(piece.unwrap());
            }
        }
        _ => unreachable!(),
    }
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains("\"text\":\"sans-io\""), "{text}");
}
