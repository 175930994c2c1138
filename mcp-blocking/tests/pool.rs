//! The worker pool under the binding's glue, over OS pipes: a panicking handler is an
//! internal error and its worker survives; a server whose session stops reading (too many
//! requests in flight for one worker) is woken as handlers finish and answers every
//! pipelined call. What every binding's glue does (calls, progress, cancellation, input,
//! logging, tasks, child processes, HTTP, OAuth) is the binding suite's (`tests/suite.rs`).

mod common;

use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{CallError, Implementation, RequestOptions, ServerConfig};
use mcp_sansio_blocking::{CallWatch, ClientError, ClientOptions, Server};
use serde_json::{Map, json};

use common::connect;
use common::support::{LEGACY, object};

#[test]
fn a_panicking_handler_is_an_internal_error_and_the_server_goes_on() {
    let server = Server::builder(ServerConfig::new(Implementation::new("p", "1.0")))
        .workers(1)
        .tool(Tool::new("boom", Map::new()), |_cx, _args| panic!("boom"))
        .unwrap()
        .tool(Tool::new("ok", Map::new()), |_cx, _args| {
            Ok(CallToolResult::text("ok"))
        })
        .unwrap()
        .build();
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    match client.call_tool("boom", Map::new()) {
        Err(ClientError::Call(CallError::Remote(e))) => assert_eq!(e.code, -32603),
        other => panic!("{other:?}"),
    }
    // The one worker survived the panic.
    let result = client.call_tool("ok", Map::new()).unwrap();
    assert_eq!(result.content[0].as_text(), Some("ok"));
}

#[test]
fn a_server_that_stops_reading_resumes_and_answers_every_pipelined_call() {
    // Two requests in flight at most: the server's session stops wanting bytes after two,
    // so its reader waits, and must be woken as handlers finish, or the calls never end.
    let mut config = ServerConfig::new(Implementation::new("test-server", "1.0"));
    config.limits.max_in_flight_inbound = 2;
    let server = Server::builder(config)
        .workers(1)
        .tool(
            Tool::new("echo", object(json!({"type": "object"}))),
            |_cx, args| {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .unwrap()
        .build();
    let client = connect(server, common::config(LEGACY), ClientOptions::default());
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let params = json!({"name": "echo", "arguments": {"text": format!("call {i}")}});
            let params = serde_json::value::to_raw_value(&params).unwrap();
            client.start(
                "tools/call",
                Some(params),
                RequestOptions::default(),
                CallWatch::default(),
            )
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let result: CallToolResult = serde_json::from_str(call.wait().unwrap().get()).unwrap();
        assert_eq!(result, CallToolResult::text(format!("call {i}")));
    }
}
