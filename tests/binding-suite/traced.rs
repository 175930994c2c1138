//! What a `tracing` subscriber sees of one session (the kernel's `trace` module): the
//! connection, session and request spans with their fields, the error event of a failing
//! tool, handlers running inside their request's span, HTTP exchanges and refusals, and no
//! argument value above TRACE nor any secret header value at all

use std::time::Duration;

use mcp_sansio::Era;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{CallToolResult, Tool};
use mcp_sansio::{ClientConfig, EraMode, Implementation, ProtocolVersion, ServerConfig};
use serde_json::Map;
use tracing::Level;

use super::support::capture::{self, Record};
use super::support::{LEGACY, echo_schema, text};
use crate::binding::{Client, ClientOptions, Server};
use crate::rt;

/// An argument value the test sends: it may show at TRACE only
const ARGUMENT: &str = "argument-value-7f3a";
/// A header value the client sends: it shows at no level
#[cfg(feature = "http")]
const SECRET: &str = "Bearer secret-token-91c2";

/// `echo` (which logs from inside its handler) and `broken` (an internal error)
fn server(name: &str) -> Server {
    Server::builder(ServerConfig::new(Implementation::new(name, "2.5")))
        .tool(
            Tool::new("echo", echo_schema()),
            handler!(|_cx, args| {
                tracing::info!(target: "suite_trace", "inside the handler");
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            }),
        )
        .unwrap()
        .tool(
            Tool::new("broken", Map::new()),
            handler!(|_cx, _args| { Err(ErrorObject::internal_error("the handler broke")) }),
        )
        .unwrap()
        .build()
}

fn config(name: &str, era: EraMode) -> ClientConfig {
    let mut config = ClientConfig::new(Implementation::new(name, "0.7"));
    config.era = era;
    config
}

/// The one closed span named `name` on `side` whose own fields include `field = value`
fn span<'a>(records: &'a [Record], side: &str, field: &str, value: &str) -> &'a Record {
    let found: Vec<&Record> = records
        .iter()
        .filter(|r| r.span && r.name == "mcp.request")
        .filter(|r| r.field("side") == Some(side) && r.field(field) == Some(value))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {side} request with {field}={value}: {found:#?}"
    );
    found[0]
}

/// Asserts what both transports show of a session between `client` and `server` (names)
/// in `version`
fn assert_session(records: &[Record], client: &str, server: &str, version: ProtocolVersion) {
    let era = match version.era() {
        Era::Modern => "modern",
        _ => "legacy",
    };
    // The session spans, with era, version and the peer's name and version
    let sessions: Vec<&Record> = records
        .iter()
        .filter(|r| r.span && r.name == "mcp.session")
        .collect();
    assert_eq!(
        sessions.len(),
        2,
        "a client and a server session: {sessions:#?}"
    );
    for (role, peer, peer_version) in [("server", client, "0.7"), ("client", server, "2.5")] {
        let s = sessions
            .iter()
            .find(|s| s.field("role") == Some(role))
            .unwrap_or_else(|| panic!("a {role} session: {sessions:#?}"));
        assert_eq!(s.level, Level::INFO);
        assert_eq!(s.field("era"), Some(era), "{s:#?}");
        assert_eq!(s.field("version"), Some(version.as_str()), "{s:#?}");
        assert_eq!(s.field("peer.name"), Some(peer), "{s:#?}");
        assert_eq!(s.field("peer.version"), Some(peer_version), "{s:#?}");
    }
    assert!(
        records.iter().any(|r| !r.span && r.name == "session ready"),
        "a session ready event"
    );

    // The server's request span: method, JSON-RPC id, tool name, outcome, duration
    let echo = span(records, "server", "name", "echo");
    assert_eq!(echo.field("method"), Some("tools/call"));
    assert_eq!(echo.field("outcome"), Some("ok"));
    let id: u64 = echo.field("id").expect("an id").parse().expect("a number");
    let duration: f64 = echo
        .field("duration_ms")
        .expect("a duration")
        .parse()
        .unwrap();
    assert!(duration >= 0.0);
    assert_eq!(echo.within("mcp.session").unwrap()["role"], "server");
    // The client's span of the same call: the same id
    let call = span(records, "client", "name", "echo");
    assert_eq!(call.field("method"), Some("tools/call"));
    assert_eq!(call.field("outcome"), Some("ok"));
    assert_eq!(call.field("id"), Some(id.to_string().as_str()));
    assert!(call.field("duration_ms").is_some());

    // The handler ran inside its request's span.
    let inside = records
        .iter()
        .find(|r| r.name == "inside the handler")
        .expect("the handler's own event");
    let request = inside.within("mcp.request").expect("inside a request span");
    assert_eq!(request["name"], "echo");
    assert_eq!(request["side"], "server");

    // The failing tool: an error event in its request span, its code on the span
    let broken = span(records, "server", "name", "broken");
    assert_eq!(broken.field("outcome"), Some("error"));
    assert_eq!(broken.field("error.code"), Some("-32603"));
    let failed = records
        .iter()
        .find(|r| !r.span && r.name == "request failed" && r.level == Level::ERROR)
        .expect("an error event for the failing tool");
    assert_eq!(failed.field("code"), Some("-32603"));
    assert_eq!(failed.within("mcp.request").unwrap()["name"], "broken");
    let client_side = span(records, "client", "name", "broken");
    assert_eq!(client_side.field("outcome"), Some("error"));

    // The argument's value shows at TRACE only (and does show there: the check can fail).
    let with_argument: Vec<&Record> = records
        .iter()
        .filter(|r| r.text().contains(ARGUMENT))
        .collect();
    assert!(!with_argument.is_empty(), "TRACE shows the params");
    for r in with_argument {
        assert_eq!(
            r.level,
            Level::TRACE,
            "an argument value above TRACE: {r:#?}"
        );
    }
}

dialect_fn! {
    /// The records of the sessions of `peers` once `done` holds (5 s at most)
    async fn records_when(peers: &[&str], sessions: usize) -> Vec<Record> {
        let mut records = capture::of_sessions(peers);
        for _ in 0..500 {
            let closed = records.iter().filter(|r| r.span && r.name == "mcp.session").count();
            if closed >= sessions {
                break;
            }
            aw!(rt::sleep(Duration::from_millis(10)));
            records = capture::of_sessions(peers);
        }
        records
    }
}

#[test]
fn a_session_over_a_stream_shows_its_spans_fields_and_errors_in_both_eras() {
    capture::install();
    rt::block_on(async {
        for (era, version, client_name, server_name) in [
            (
                LEGACY,
                ProtocolVersion::V2025_11_25,
                "trace-stream-client",
                "trace-stream-server",
            ),
            (
                EraMode::Modern,
                ProtocolVersion::V2026_07_28,
                "trace-modern-client",
                "trace-modern-server",
            ),
        ] {
            aw!(one_stream_session(era, version, client_name, server_name));
        }
    });
}

dialect_fn! {
    async fn one_stream_session(
        era: EraMode,
        version: ProtocolVersion,
        client_name: &str,
        server_name: &str,
    ) {
        let (r, w) = super::serve(server(server_name));
        let options = ClientOptions::default();
        let client = aw!(Client::connect_with(r, w, config(client_name, era), options)).unwrap();
        aw!(client.call_tool("echo", text(ARGUMENT))).unwrap();
        assert!(aw!(client.call_tool("broken", Map::new())).is_err());
        aw!(client.close());

        let records = aw!(records_when(&[client_name, server_name], 2));
        assert_session(&records, client_name, server_name, version);
        // Both sessions ran in their connection's span.
        for role in ["client", "server"] {
            let session = records
                .iter()
                .find(|r| r.span && r.name == "mcp.session" && r.field("role") == Some(role))
                .unwrap();
            let connection = session.within("mcp.connection").expect("in a connection");
            assert_eq!(connection["role"], role);
            assert_eq!(connection["transport"], "stream");
        }
    }
}

#[cfg(feature = "http")]
#[test]
fn a_2026_request_over_http_names_its_client_on_its_span() {
    capture::install();
    rt::block_on(async {
        let (client_name, server_name) = ("trace-stateless-client", "trace-stateless-server");
        let localhost: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let http_config = mcp_sansio::http::HttpConfig::default();
        let handle = aw!(server(server_name).serve_http_with(localhost, http_config)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        let config = config(client_name, EraMode::Modern);
        let client = aw!(Client::connect_http(&url, config, ClientOptions::default())).unwrap();
        aw!(client.call_tool("echo", text(ARGUMENT))).unwrap();
        aw!(client.close());
        let records = aw!(records_when(&[client_name, server_name], 1));
        let echo = span(&records, "server", "name", "echo");
        assert_eq!(echo.field("peer.name"), Some(client_name), "{echo:#?}");
        assert_eq!(echo.field("peer.version"), Some("0.7"));
        assert_eq!(echo.field("version"), Some("2026-07-28"));
        // The stateless session many clients share names none of them.
        let session = echo.within("mcp.session").expect("in the server's session");
        assert_eq!(session["era"], "modern");
        assert_eq!(session["session"], "session#0");
        assert!(!session.contains_key("peer.name"), "{session:?}");
        let call = span(&records, "client", "name", "echo");
        assert_eq!(
            call.within("mcp.session").unwrap()["peer.name"],
            server_name
        );
        aw!(handle.shutdown());
    });
}

#[cfg(feature = "http")]
#[test]
fn a_session_over_http_shows_its_exchanges_and_refusals_and_no_secret() {
    use super::support::raw_http::raw;

    capture::install();
    rt::block_on(async {
        let (client_name, server_name) = ("trace-http-client", "trace-http-server");
        let localhost: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let http_config = mcp_sansio::http::HttpConfig::default();
        let handle = aw!(server(server_name).serve_http_with(localhost, http_config)).unwrap();
        let url = format!("http://{}/mcp", handle.local_addr());
        let options = ClientOptions::default().header("Authorization", SECRET);
        let config = config(client_name, LEGACY);
        let client = aw!(Client::connect_http(&url, config, options)).unwrap();
        aw!(client.call_tool("echo", text(ARGUMENT))).unwrap();
        assert!(aw!(client.call_tool("broken", Map::new())).is_err());
        // A refused request: its reason is logged
        let origin = "http://trace-refused.example";
        let raw_url = url.clone();
        let (status, _, _) = aw!(rt::unblock(move || raw(
            &raw_url,
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Origin", origin),
                ("Authorization", SECRET),
            ],
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )));
        assert_eq!(status, 403);
        aw!(client.close());

        let records = aw!(records_when(&[client_name, server_name], 2));
        assert_session(
            &records,
            client_name,
            server_name,
            ProtocolVersion::V2025_11_25,
        );
        let server_session = records
            .iter()
            .find(|r| r.span && r.name == "mcp.session" && r.field("role") == Some("server"))
            .unwrap();
        assert!(
            server_session
                .field("session")
                .is_some_and(|s| s.starts_with("session#")),
            "the HTTP session by its key: {server_session:#?}"
        );
        let all = capture::of_http();
        let refused = all
            .iter()
            .find(|r| {
                r.name == "refused" && r.field("reason").is_some_and(|why| why.contains(origin))
            })
            .expect("the refusal, with its reason");
        assert_eq!(refused.field("status"), Some("403"));
        assert_eq!(refused.level, Level::DEBUG);
        let exchange = refused.within("mcp.http").expect("in its exchange's span");
        assert_eq!(exchange["method"], "POST");
        assert!(
            all.iter().any(|r| r.span
                && r.name == "mcp.http"
                && r.field("mcp.method").is_none()
                && r.field("status") == Some("200")),
            "an exchange answered 200"
        );
        // No record of any level holds the secret header value.
        for r in records.iter().chain(&all) {
            assert!(!r.text().contains("secret-token"), "a secret in {r:#?}");
        }
        aw!(handle.shutdown());
    });
}
