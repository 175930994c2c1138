//! Every error path of the boundary: NULL pointers, bad UTF-8, bad JSON, unknown keys and
//! handles, and a panic caught and poisoning its handle

// The tests call the C functions, which are unsafe by nature (common/mod.rs wraps them).
#![allow(unsafe_code)]

mod common;

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use common::{Client, Pair, Server, last_error};
use mcp_capi::mcp_status::*;
use mcp_capi::*;

fn p(s: &[u8]) -> *const c_char {
    s.as_ptr().cast()
}

#[test]
fn last_error_starts_empty_and_version_is_static() {
    // A fresh thread has no error yet.
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
    // SAFETY: mcp_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(mcp_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn constructors_refuse_bad_configs_with_a_message() {
    let cases: [(&[u8], &str); 7] = [
        (b"{\"name\":\"s\",\"version\":\"1\",\"colour\":1}", "colour"),
        (b"{\"name\":\"s\"", "EOF"),
        (b"[]", "expected"),
        (b"{\"version\":\"1\"}", "name"),
        (
            b"{\"name\":\"s\",\"version\":\"1\",\"era\":\"medieval\"}",
            "medieval",
        ),
        (b"{\"name\":\"\xff\",\"version\":\"1\"}", "UTF-8"),
        (b"", "EOF"),
    ];
    for (config, needle) in cases {
        // SAFETY: valid buffers of the given lengths.
        let server = unsafe { mcp_server_new(p(config), config.len(), 0) };
        assert!(server.is_null());
        assert!(last_error().contains(needle), "{needle}: {}", last_error());
    }
    let client_cases: [(&[u8], &str); 3] = [
        (
            b"{\"name\":\"c\",\"version\":\"1\",\"protocolVersion\":\"1999\"}",
            "1999",
        ),
        (
            b"{\"name\":\"c\",\"version\":\"1\",\"era\":\"both\"}",
            "era",
        ),
        (b"{\"name\":\"c\",\"version\":\"\xc3\x28\"}", "UTF-8"),
    ];
    for (config, needle) in client_cases {
        // SAFETY: valid buffers of the given lengths.
        let client = unsafe { mcp_client_new(p(config), config.len(), 0) };
        assert!(client.is_null());
        assert!(last_error().contains(needle), "{needle}: {}", last_error());
    }
    // SAFETY: NULL is checked.
    unsafe {
        assert!(mcp_server_new(null(), 0, 0).is_null());
        assert!(
            last_error().contains("config_json is NULL"),
            "{}",
            last_error()
        );
        assert!(mcp_client_new(null(), 5, 0).is_null());
        assert!(last_error().contains("NULL"));
    }
}

#[test]
fn null_handles_are_refused_everywhere() {
    let mut out_u64 = 0u64;
    let mut data = null();
    let mut text = null();
    let mut len = 0usize;
    let tool = b"{}";
    // SAFETY: every handle is NULL, which every function checks first.
    unsafe {
        let s: *mut McpServer = null_mut();
        let c: *mut McpClient = null_mut();
        let statuses = [
            mcp_server_add_tool(s, p(tool), 2),
            mcp_server_handle_bytes(s, 0, null(), 0),
            mcp_server_handle_eof(s, 0),
            mcp_server_handle_timeout(s, 0),
            mcp_server_poll_timeout(s, &mut out_u64),
            mcp_server_poll_transmit(s, &mut data, &mut len),
            mcp_server_poll_event(s, &mut text, &mut len),
            mcp_server_respond(s, 0, 1, p(tool), 2),
            mcp_server_respond_error(s, 0, 1, 1, null(), 0),
            mcp_server_progress(s, 0, 1, 1.0, f64::NAN, null(), 0),
            mcp_server_notify(s, 0, p(b"x"), 1, null(), 0),
            mcp_server_close(s, 0),
            mcp_client_handle_bytes(c, 0, null(), 0),
            mcp_client_handle_eof(c, 0),
            mcp_client_handle_timeout(c, 0),
            mcp_client_poll_timeout(c, &mut out_u64),
            mcp_client_poll_transmit(c, &mut data, &mut len),
            mcp_client_poll_event(c, &mut text, &mut len),
            mcp_client_request(c, 0, p(b"ping"), 4, null(), 0, &mut out_u64),
            mcp_client_request_timeout(c, 0, p(b"ping"), 4, null(), 0, 0, &mut out_u64),
            mcp_client_cancel(c, 0, 1),
            mcp_client_respond(c, 0, 1, p(tool), 2),
            mcp_client_respond_error(c, 0, 1, 1, null(), 0),
            mcp_client_provide_input(c, 0, 1, p(tool), 2),
            mcp_client_refuse_input(c, 0, 1, 1, null(), 0),
            mcp_client_close(c, 0),
        ];
        for (i, status) in statuses.into_iter().enumerate() {
            assert_eq!(status, MCP_ERR_NULL, "call {i}");
        }
        assert!(last_error().contains("client is NULL"), "{}", last_error());
        assert_eq!(mcp_server_is_closed(s), MCP_ERR_NULL as i32);
        assert_eq!(mcp_client_is_closed(c), MCP_ERR_NULL as i32);
        assert_eq!(mcp_server_wants_read(s), MCP_ERR_NULL as i32);
        assert_eq!(mcp_client_wants_read(c), MCP_ERR_NULL as i32);
        // Freeing NULL is a no-op.
        mcp_server_free(s);
        mcp_client_free(c);
    }
}

#[test]
fn null_buffers_and_outputs_are_checked() {
    let mut pair = Pair::ready("2025-11-25", "");
    let (s, c) = (pair.server.0, pair.client.0);
    let mut data = null();
    let mut text = null();
    let mut len = 0usize;
    let mut id = 0u64;
    // SAFETY: live handles; NULL pointers are what is being checked.
    unsafe {
        // NULL with length 0 is an empty buffer; with a length it is refused.
        assert_eq!(mcp_server_handle_bytes(s, 0, null(), 0), MCP_OK);
        assert_eq!(mcp_server_handle_bytes(s, 0, null(), 3), MCP_ERR_NULL);
        assert!(
            last_error().contains("data is NULL with a length of 3"),
            "{}",
            last_error()
        );
        assert_eq!(mcp_client_handle_bytes(c, 0, null(), 1), MCP_ERR_NULL);
        // A length no object has.
        assert_eq!(
            mcp_server_handle_bytes(s, 0, b"x".as_ptr(), usize::MAX),
            MCP_ERR_NULL
        );
        // Output pointers.
        assert_eq!(mcp_server_poll_timeout(s, null_mut()), MCP_ERR_NULL);
        assert_eq!(
            mcp_server_poll_transmit(s, null_mut(), &mut len),
            MCP_ERR_NULL
        );
        assert_eq!(
            mcp_server_poll_transmit(s, &mut data, null_mut()),
            MCP_ERR_NULL
        );
        assert_eq!(mcp_server_poll_event(s, null_mut(), &mut len), MCP_ERR_NULL);
        assert_eq!(
            mcp_server_poll_event(s, &mut text, null_mut()),
            MCP_ERR_NULL
        );
        assert_eq!(mcp_client_poll_timeout(c, null_mut()), MCP_ERR_NULL);
        assert_eq!(
            mcp_client_poll_transmit(c, null_mut(), &mut len),
            MCP_ERR_NULL
        );
        assert_eq!(
            mcp_client_poll_event(c, &mut text, null_mut()),
            MCP_ERR_NULL
        );
        assert_eq!(
            mcp_client_request(c, 0, p(b"ping"), 4, null(), 0, null_mut()),
            MCP_ERR_NULL
        );
        // Required strings.
        assert_eq!(
            mcp_client_request(c, 0, null(), 0, null(), 0, &mut id),
            MCP_ERR_NULL
        );
        assert_eq!(mcp_server_notify(s, 0, null(), 0, null(), 0), MCP_ERR_NULL);
        assert_eq!(mcp_server_add_tool(s, null(), 0), MCP_ERR_NULL);
        assert_eq!(mcp_server_respond(s, 0, 1, null(), 0), MCP_ERR_NULL);
        assert_eq!(mcp_client_respond(c, 0, 1, null(), 0), MCP_ERR_NULL);
        assert_eq!(mcp_client_provide_input(c, 0, 1, null(), 0), MCP_ERR_NULL);
        // Optional strings: NULL is "none" (an empty error message, no progress message).
        assert_eq!(
            mcp_server_respond_error(s, 0, 99, 1, null(), 0),
            MCP_ERR_STATE
        );
    }
    // The handles still work.
    assert!(pair.client.request(pair.now, "tools/list", None).is_ok());
    pair.exchange();
}

#[test]
fn bad_utf8_and_bad_json_are_refused() {
    let mut pair = Pair::ready("2025-11-25", "");
    let (s, c) = (pair.server.0, pair.client.0);
    let bad = b"\xff\xfe";
    let mut id = 0u64;
    // SAFETY: live handles and valid buffers.
    unsafe {
        assert_eq!(mcp_server_add_tool(s, p(bad), 2), MCP_ERR_UTF8);
        assert!(
            last_error().contains("tool_json is not valid UTF-8"),
            "{}",
            last_error()
        );
        assert_eq!(mcp_server_notify(s, 0, p(bad), 2, null(), 0), MCP_ERR_UTF8);
        assert_eq!(
            mcp_server_respond_error(s, 0, 1, 1, p(bad), 2),
            MCP_ERR_UTF8
        );
        assert_eq!(
            mcp_server_progress(s, 0, 1, 1.0, 2.0, p(bad), 2),
            MCP_ERR_UTF8
        );
        assert_eq!(
            mcp_client_request(c, 0, p(bad), 2, null(), 0, &mut id),
            MCP_ERR_UTF8
        );
        assert_eq!(
            mcp_client_request(c, 0, p(b"ping"), 4, p(bad), 2, &mut id),
            MCP_ERR_UTF8
        );
        assert_eq!(
            mcp_client_respond_error(c, 0, 1, 1, p(bad), 2),
            MCP_ERR_UTF8
        );
        assert_eq!(mcp_client_refuse_input(c, 0, 1, 1, p(bad), 2), MCP_ERR_UTF8);
        // Bad JSON.
        assert_eq!(mcp_server_add_tool(s, p(b"{\"name\":"), 8), MCP_ERR_JSON);
        assert_eq!(
            mcp_server_add_tool(s, p(b"{\"name\":\"t\"}"), 12),
            MCP_ERR_JSON
        );
        assert!(last_error().contains("inputSchema"), "{}", last_error());
        let bad_name = br#"{"name":"no spaces allowed","inputSchema":{"type":"object"}}"#;
        assert_eq!(
            mcp_server_add_tool(s, p(bad_name), bad_name.len()),
            MCP_ERR_JSON
        );
        assert_eq!(
            mcp_client_request(c, 0, p(b"ping"), 4, p(b"[1]"), 3, &mut id),
            MCP_ERR_JSON
        );
        assert_eq!(
            mcp_client_request(c, 0, p(b"ping"), 4, p(b"{"), 1, &mut id),
            MCP_ERR_JSON
        );
        assert_eq!(
            mcp_server_notify(s, 0, p(b"n/x"), 3, p(b"nope"), 4),
            MCP_ERR_JSON
        );
        let log = b"notifications/message";
        assert_eq!(
            mcp_server_notify(s, 0, p(log), log.len(), null(), 0),
            MCP_ERR_JSON
        );
        assert_eq!(
            mcp_server_notify(s, 0, p(log), log.len(), p(b"{}"), 2),
            MCP_ERR_JSON
        );
        assert_eq!(mcp_client_provide_input(c, 0, 1, p(b"]"), 1), MCP_ERR_JSON);
    }
    // A tool registered twice.
    assert_eq!(pair.server.add_tool(common::ECHO_TOOL), MCP_ERR_STATE);
    assert!(
        last_error().contains("already registered"),
        "{}",
        last_error()
    );
    pair.exchange();
}

#[test]
fn unknown_handles_are_refused() {
    let mut pair = Pair::ready("2025-11-25", "");
    let now = pair.now;
    assert_eq!(pair.server.respond(now, 12345, "{}"), MCP_ERR_STATE);
    assert!(
        last_error().contains("request 12345 is not open"),
        "{}",
        last_error()
    );
    assert_eq!(
        pair.server.respond_error(now, 12345, -1, "x"),
        MCP_ERR_STATE
    );
    assert_eq!(
        pair.server.progress(now, 12345, 1.0, f64::NAN, None),
        MCP_ERR_STATE
    );
    assert_eq!(pair.client.cancel(now, 777), MCP_ERR_STATE);
    assert!(
        last_error().contains("request 777 is not in flight"),
        "{}",
        last_error()
    );
    assert_eq!(pair.client.respond(now, 1, "{}"), MCP_ERR_STATE);
    assert_eq!(pair.client.respond_error(now, 1, -1, "x"), MCP_ERR_STATE);
    assert_eq!(pair.client.provide_input(now, 1, "{}"), MCP_ERR_STATE);
    assert!(
        last_error().contains("input 1 is not waiting"),
        "{}",
        last_error()
    );
    assert_eq!(pair.client.refuse_input(now, 1, -1, "no"), MCP_ERR_STATE);
}

#[test]
fn a_result_that_is_not_an_object_leaves_the_request_open() {
    let mut pair = Pair::ready("2026-07-28", "");
    let params = r#"{"name":"echo","arguments":{"text":"a"}}"#;
    let id = pair
        .client
        .request(pair.now, "tools/call", Some(params))
        .unwrap();
    pair.exchange();
    let request = Pair::take(&mut pair.server_events, "request").remove(0);
    let handle = request["request"].as_u64().unwrap();
    assert_eq!(pair.server.respond(pair.now, handle, "[1,2]"), MCP_ERR_JSON);
    assert!(last_error().contains("JSON object"), "{}", last_error());
    assert_eq!(pair.server.respond(pair.now, handle, "{"), MCP_ERR_JSON);
    assert_eq!(
        pair.server.respond(pair.now, handle, r#"{"content":[]}"#),
        MCP_OK
    );
    pair.exchange();
    assert_eq!(
        Pair::take(&mut pair.client_events, "response")[0]["request"],
        id
    );
}

#[test]
fn requests_before_ready_and_commands_after_close_are_refused() {
    let mut client = Client::new(
        r#"{"name":"c","version":"1","protocolVersion":"2025-11-25"}"#,
        0,
    );
    assert_eq!(client.request(0, "tools/list", None), Err(MCP_ERR_STATE));
    assert!(last_error().contains("not ready"), "{}", last_error());
    let mut server = Server::new(r#"{"name":"s","version":"1"}"#, 0);
    assert_eq!(server.eof(0), MCP_OK);
    assert_eq!(server.is_closed(), 1);
    assert_eq!(
        server.notify(0, "notifications/tools/list_changed", None),
        MCP_ERR_STATE
    );
    assert!(last_error().contains("closed"), "{}", last_error());
    // Input after close is ignored, not an error.
    assert_eq!(
        server.bytes(0, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"),
        MCP_OK
    );
    let kinds: Vec<_> = server
        .events()
        .into_iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(kinds, ["closed"]);
    assert!(server.transmit().is_empty());
}

#[test]
fn garbage_from_the_peer_becomes_error_replies_not_failures() {
    let mut server = Server::new(r#"{"name":"s","version":"1"}"#, 0);
    assert_eq!(
        server.bytes(
            0,
            b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"nope\"}\n"
        ),
        MCP_OK
    );
    let out = String::from_utf8(server.transmit()).unwrap();
    assert!(out.contains("-32700"), "a parse error reply: {out}");
    assert!(server.events().is_empty());
}

#[test]
fn a_panic_is_caught_and_poisons_the_handle() {
    let mut server = Server::new(r#"{"name":"s","version":"1"}"#, 0);
    let mut client = Client::new(r#"{"name":"c","version":"1"}"#, 0);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(test_hooks::panic_inside_server(server.0), MCP_ERR_PANIC);
        assert!(
            last_error().contains("test hook: a deliberate panic"),
            "{}",
            last_error()
        );
        assert_eq!(test_hooks::panic_inside_client(client.0), MCP_ERR_PANIC);
    }
    // Every later call on a poisoned handle says so; the process lives on.
    assert_eq!(server.bytes(0, b"{}\n"), MCP_ERR_PANIC);
    assert!(last_error().contains("poisoned"), "{}", last_error());
    assert_eq!(server.timeout(0), MCP_ERR_PANIC);
    assert_eq!(server.respond(0, 1, "{}"), MCP_ERR_PANIC);
    assert_eq!(server.is_closed(), MCP_ERR_PANIC as i32);
    assert_eq!(server.wants_read(), MCP_ERR_PANIC as i32);
    assert_eq!(client.request(0, "ping", None), Err(MCP_ERR_PANIC));
    assert_eq!(client.close(0), MCP_ERR_PANIC);
    assert_eq!(client.is_closed(), MCP_ERR_PANIC as i32);
    // Other handles are unaffected.
    let mut other = Server::new(r#"{"name":"s","version":"1"}"#, 0);
    assert_eq!(other.bytes(0, b""), MCP_OK);
    // Poisoned handles are freed normally (by Drop).
}
