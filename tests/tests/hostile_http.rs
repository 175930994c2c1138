//! The hostile-input table (`mcp_interop::hostile`) at every layer that serves HTTP: the
//! sans-IO rules (`mcp_sansio::http::HttpServer`, in process), and mcp-sansio-tokio's, mcp-sansio-async-std's
//! and mcp-sansio-blocking's HTTP servers over real HTTP on 127.0.0.1, followed by floods (with an
//! RSS bound on the tokio and async-std ones)
//!
//! Other bindings' servers run the same table: `hostile::run_over_tcp(addr, "/mcp")`.

use std::sync::Arc;
use std::time::Instant;

use mcp_interop::hostile::{self, Got, MAX_BODY};
use mcp_sansio::http::{HttpConfig, HttpServer, Output, Reply, Source};
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{Implementation, ServerConfig, ServerEvent};
use serde_json::{Value, json};

fn http_config() -> HttpConfig {
    let mut c = HttpConfig::default();
    c.max_body_size = MAX_BODY;
    c
}

fn server_config() -> ServerConfig {
    let mut s = ServerConfig::new(Implementation::new("hostile", "1.0"));
    s.capabilities = json!({"tools": {}});
    s
}

/// One case through the sans-IO rules, with an application that answers every request with
/// the echo result
fn core_exchange(http: &mut HttpServer, now: Instant, case: &hostile::Case) -> Got {
    if case.body.len() > http.config().max_body_size {
        let r = http.reject_oversize();
        return Got {
            status: r.status,
            body: r.body,
        };
    }
    let mut headers: Vec<(&str, String)> = case.headers.clone();
    headers.push(("Host", "127.0.0.1:4500".into()));
    let mut n = 0u128;
    let mut ids = || {
        n += 1;
        n.to_be_bytes()
    };
    let exchange = match http.handle_request(
        now,
        &Source::unknown(),
        case.method,
        &headers,
        &case.body,
        &mut ids,
    ) {
        Reply::Complete(r) => {
            return Got {
                status: r.status,
                body: r.body,
            };
        }
        Reply::Open(exchange) => exchange,
        other => panic!("{other:?}"),
    };
    let mut got = Got::default();
    for _ in 0..100 {
        while let Some((key, event)) = http.poll_event() {
            if let ServerEvent::Request(r) = event {
                let result = serde_json::to_string(&CallToolResult::text("hello world")).unwrap();
                let result = serde_json::value::RawValue::from_string(result).unwrap();
                let _ = http
                    .session_mut(key)
                    .unwrap()
                    .respond_raw(r.responder, &result);
            }
        }
        while let Some(output) = http.poll_output() {
            match output {
                Output::Head { exchange: e, head } if e == exchange => got.status = head.status,
                Output::Body { exchange: e, data } if e == exchange => got.body.extend(data),
                Output::End { exchange: e } if e == exchange => return got,
                _ => {}
            }
        }
    }
    panic!("{}: the exchange never ended", case.name);
}

#[test]
fn the_table_at_the_core() {
    #[allow(clippy::disallowed_methods)] // the origin of a fake clock
    let now = Instant::now();
    let mut http = HttpServer::new(Arc::new(http_config()), Arc::new(server_config()), now);
    let failures: Vec<String> = hostile::cases()
        .iter()
        .filter_map(|case| hostile::check(case, &core_exchange(&mut http, now, case)).err())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

fn tokio_server() -> mcp_sansio_tokio::Server {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!()
    };
    mcp_sansio_tokio::Server::builder(ServerConfig::new(Implementation::new("hostile", "1.0")))
        .tool(
            Tool::new(hostile::ECHO_TOOL, schema),
            |_cx, args| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        )
        .expect("a valid tool")
        .build()
}

#[test]
fn the_table_and_floods_at_mcp_tokio_over_http() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let handle = rt.block_on(async {
        tokio_server()
            .serve_http_with("127.0.0.1:0".parse().unwrap(), http_config())
            .await
            .expect("binds 127.0.0.1")
    });
    let addr = handle.local_addr();
    let failures = hostile::run_over_tcp(addr, "/mcp");
    assert!(failures.is_empty(), "{failures:#?}");
    // Floods: a warm-up, then ten times as many; memory must not grow with the count.
    let failures = hostile::flood_over_tcp(addr, "/mcp", 300);
    assert!(failures.is_empty(), "{failures:#?}");
    let before = hostile::rss_kib();
    let failures = hostile::flood_over_tcp(addr, "/mcp", 3000);
    assert!(failures.is_empty(), "{failures:#?}");
    if let (Some(before), Some(after)) = (before, hostile::rss_kib()) {
        assert!(
            after < before + 32 * 1024,
            "RSS grew from {before} KiB to {after} KiB over 3000 flood requests"
        );
    }
    rt.block_on(handle.shutdown());
}

#[test]
fn the_table_and_floods_at_mcp_blocking_over_http() {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!()
    };
    let server = mcp_sansio_blocking::Server::builder(ServerConfig::new(Implementation::new(
        "hostile", "1.0",
    )))
    .tool(Tool::new(hostile::ECHO_TOOL, schema), |_cx, args| {
        Ok(CallToolResult::text(
            args["text"].as_str().unwrap_or_default(),
        ))
    })
    .expect("a valid tool")
    .build();
    let handle = server
        .serve_http_with("127.0.0.1:0".parse().unwrap(), http_config())
        .expect("binds 127.0.0.1");
    let addr = handle.local_addr();
    let failures = hostile::run_over_tcp(addr, "/mcp");
    assert!(failures.is_empty(), "{failures:#?}");
    let failures = hostile::flood_over_tcp(addr, "/mcp", 300);
    assert!(failures.is_empty(), "{failures:#?}");
    handle.shutdown();
}

#[test]
fn the_table_and_floods_at_mcp_async_std_over_http() {
    let Value::Object(schema) =
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    else {
        unreachable!()
    };
    let server = mcp_sansio_async_std::Server::builder(ServerConfig::new(Implementation::new(
        "hostile", "1.0",
    )))
    .tool(
        Tool::new(hostile::ECHO_TOOL, schema),
        |_cx, args| async move {
            Ok(CallToolResult::text(
                args["text"].as_str().unwrap_or_default(),
            ))
        },
    )
    .expect("a valid tool")
    .build();
    // The server's tasks run on smol's global executor, so the blocking table below can
    // drive it from this thread.
    let handle =
        smol::block_on(server.serve_http_with("127.0.0.1:0".parse().unwrap(), http_config()))
            .expect("binds 127.0.0.1");
    let addr = handle.local_addr();
    let failures = hostile::run_over_tcp(addr, "/mcp");
    assert!(failures.is_empty(), "{failures:#?}");
    // Floods: a warm-up, then ten times as many; memory must not grow with the count.
    let failures = hostile::flood_over_tcp(addr, "/mcp", 300);
    assert!(failures.is_empty(), "{failures:#?}");
    let before = hostile::rss_kib();
    let failures = hostile::flood_over_tcp(addr, "/mcp", 3000);
    assert!(failures.is_empty(), "{failures:#?}");
    if let (Some(before), Some(after)) = (before, hostile::rss_kib()) {
        assert!(
            after < before + 32 * 1024,
            "RSS grew from {before} KiB to {after} KiB over 3000 flood requests"
        );
    }
    smol::block_on(handle.shutdown());
}
