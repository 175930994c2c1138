//! Handlers log with `Context::log`; legacy clients get what passes the connection's level
//! (`info` until `logging/setLevel`), modern clients only what a request opted into

use mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_sansio::{
    ClientConfig, EraMode, Implementation, ProtocolVersion, RequestOptions, ServerConfig,
};
use mcp_sansio_tokio::{Client, ClientOptions, Server};
use serde_json::{Map, Value, json};

async fn connect(
    era: EraMode,
) -> (
    Client,
    tokio::sync::mpsc::UnboundedReceiver<mcp_sansio::InboundNotification>,
) {
    let server = Server::builder(ServerConfig::new(Implementation::new("log-server", "1.0")))
        .logging()
        .tool(Tool::new("chatty", Map::new()), |cx, _args| async move {
            cx.log(LoggingLevel::Debug, "debug detail");
            cx.log(LoggingLevel::Info, "info note");
            cx.log(LoggingLevel::Error, json!({"error": "bad"}));
            Ok(CallToolResult::text("done"))
        })
        .unwrap()
        .build();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (r, w) = tokio::io::split(server_io);
        server.serve(r, w).await;
    });
    let (r, w) = tokio::io::split(client_io);
    let mut config = ClientConfig::new(Implementation::new("c", "1"));
    config.era = era;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::connect_with(r, w, config, ClientOptions::default().notifications(tx))
        .await
        .unwrap();
    (client, rx)
}

fn levels(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<mcp_sansio::InboundNotification>,
) -> Vec<String> {
    let mut got = Vec::new();
    while let Ok(n) = rx.try_recv() {
        assert_eq!(n.method, "notifications/message");
        let params: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        got.push(params["level"].as_str().unwrap().to_owned());
    }
    got
}

#[tokio::test]
async fn legacy_levels_follow_set_level() {
    let (client, mut rx) = connect(EraMode::Legacy(ProtocolVersion::V2025_11_25)).await;
    client.call_tool("chatty", Map::new()).await.unwrap();
    assert_eq!(levels(&mut rx), ["info", "error"]);
    let raw = serde_json::value::RawValue::from_string(r#"{"level":"error"}"#.into()).unwrap();
    client
        .request_raw(
            "logging/setLevel",
            Some(raw),
            RequestOptions::default(),
            None,
        )
        .await
        .unwrap();
    client.call_tool("chatty", Map::new()).await.unwrap();
    assert_eq!(levels(&mut rx), ["error"]);
}

#[tokio::test]
async fn modern_requests_get_no_logs_unless_they_ask() {
    let (client, mut rx) = connect(EraMode::Modern).await;
    client.call_tool("chatty", Map::new()).await.unwrap();
    assert!(levels(&mut rx).is_empty());
    let raw = serde_json::value::RawValue::from_string(
        r#"{"name":"chatty","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}"#.into(),
    )
    .unwrap();
    client
        .request_raw("tools/call", Some(raw), RequestOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(levels(&mut rx), ["debug", "info", "error"]);
}
