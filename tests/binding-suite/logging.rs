//! Handlers log with `Context::log`; legacy clients get what passes the connection's level
//! (`info` until `logging/setLevel`), modern clients only what a request opted into

use mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
use mcp_sansio::{
    ClientConfig, EraMode, Implementation, InboundNotification, RequestOptions, ServerConfig,
};
use serde_json::value::RawValue;
use serde_json::{Map, json};

use super::support::{LEGACY, log_levels};
use crate::binding::{Client, ClientOptions, Server};
use crate::rt;

dialect_fn! {
    async fn connect(era: EraMode) -> (Client, rt::Receiver<InboundNotification>) {
        let server = Server::builder(ServerConfig::new(Implementation::new("log-server", "1.0")))
            .logging()
            .tool(
                Tool::new("chatty", Map::new()),
                handler!(|cx, _args| {
                    cx.log(LoggingLevel::Debug, "debug detail");
                    cx.log(LoggingLevel::Info, "info note");
                    cx.log(LoggingLevel::Error, json!({"error": "bad"}));
                    Ok(CallToolResult::text("done"))
                }),
            )
            .unwrap()
            .build();
        let (r, w) = super::serve(server);
        let mut config = ClientConfig::new(Implementation::new("c", "1"));
        config.era = era;
        let (tx, rx) = rt::channel();
        let options = ClientOptions::default().notifications(tx);
        let client = aw!(Client::connect_with(r, w, config, options)).unwrap();
        (client, rx)
    }
}

/// The levels of the log messages received so far
fn levels(rx: &mut rt::Receiver<InboundNotification>) -> Vec<String> {
    log_levels(std::iter::from_fn(|| rx.try_recv()))
}

#[test]
fn legacy_levels_follow_set_level() {
    rt::block_on(async {
        let (client, mut rx) = aw!(connect(LEGACY));
        aw!(client.call_tool("chatty", Map::new())).unwrap();
        assert_eq!(levels(&mut rx), ["info", "error"]);
        let raw = RawValue::from_string(r#"{"level":"error"}"#.into()).unwrap();
        let options = RequestOptions::default();
        aw!(client.request_raw("logging/setLevel", Some(raw), options, None)).unwrap();
        aw!(client.call_tool("chatty", Map::new())).unwrap();
        assert_eq!(levels(&mut rx), ["error"]);
    });
}

#[test]
fn modern_requests_get_no_logs_unless_they_ask() {
    rt::block_on(async {
        let (client, mut rx) = aw!(connect(EraMode::Modern));
        aw!(client.call_tool("chatty", Map::new())).unwrap();
        assert!(levels(&mut rx).is_empty());
        let raw = RawValue::from_string(
            r#"{"name":"chatty","_meta":{"io.modelcontextprotocol/logLevel":"debug"}}"#.into(),
        )
        .unwrap();
        aw!(client.request_raw("tools/call", Some(raw), RequestOptions::default(), None)).unwrap();
        assert_eq!(levels(&mut rx), ["debug", "info", "error"]);
    });
}
