//! Bytes through the C API (mcp-capi): into a server or a client handle, every output polled
//! the way a C loop polls it, request events answered with fuzzer-chosen JSON
//!
//! Oracle: no call returns `MCP_ERR_PANIC`, every status is one the header documents for the
//! call, every event is a JSON object with a `kind`, and every poll loop ends.
#![no_main]

use std::ffi::c_char;

use libfuzzer_sys::fuzz_target;
use mcp_capi::mcp_status::{self, *};
use mcp_capi::*;

/// Polls until `MCP_NONE`, at most `limit` times
fn drain(limit: usize, mut poll: impl FnMut() -> mcp_status) {
    for _ in 0..limit {
        match poll() {
            MCP_OK => {}
            MCP_NONE => return,
            other => panic!("a poll returned {other:?}"),
        }
    }
    panic!("a poll loop did not end");
}

fn documented(status: mcp_status) {
    assert!(
        matches!(status, MCP_OK | MCP_ERR_JSON | MCP_ERR_STATE | MCP_ERR_UTF8),
        "{status:?}"
    );
}

/// The request numbers of the events lent at `json`
fn event_numbers(json: *const c_char, len: usize) -> (bool, Option<u64>) {
    // SAFETY: the library lends `len` bytes at `json` until the next call on the handle.
    let bytes = unsafe { std::slice::from_raw_parts(json.cast::<u8>(), len) };
    let event: serde_json::Value = serde_json::from_slice(bytes).expect("an event is JSON");
    let kind = event["kind"].as_str().expect("an event has a kind");
    let number = event["request"].as_u64().or(event["input"].as_u64());
    (matches!(kind, "request" | "input_required"), number)
}

fn fuzz_server(era: &str, chunks: &[&[u8]], answer: &[u8]) {
    let config = format!(r#"{{"name":"fuzz","version":"1","era":"{era}"}}"#);
    let tool = r#"{"name":"echo","inputSchema":{"type":"object"}}"#;
    // SAFETY: valid buffers; the handle lives until the free at the end.
    unsafe {
        let s = mcp_server_new(config.as_ptr().cast(), config.len(), 0);
        assert!(!s.is_null());
        assert_eq!(mcp_server_add_tool(s, tool.as_ptr().cast(), tool.len()), MCP_OK);
        let mut now = 0u64;
        for chunk in chunks {
            now += 5;
            assert_eq!(mcp_server_handle_bytes(s, now, chunk.as_ptr(), chunk.len()), MCP_OK);
            let mut open = Vec::new();
            drain(100_000, || {
                let (mut json, mut len) = (std::ptr::null(), 0);
                let status = mcp_server_poll_event(s, &mut json, &mut len);
                if status == MCP_OK {
                    if let (true, Some(n)) = event_numbers(json, len) {
                        open.push(n);
                    }
                }
                status
            });
            for n in open {
                documented(mcp_server_progress(s, now, n, 1.0, f64::NAN, std::ptr::null(), 0));
                documented(mcp_server_respond(s, now, n, answer.as_ptr().cast(), answer.len()));
            }
            drain(1000, || {
                let (mut data, mut len) = (std::ptr::null(), 0);
                mcp_server_poll_transmit(s, &mut data, &mut len)
            });
            let mut deadline = 0;
            if mcp_server_poll_timeout(s, &mut deadline) == MCP_OK {
                assert_eq!(mcp_server_handle_timeout(s, deadline.max(now)), MCP_OK);
            }
        }
        assert_eq!(mcp_server_handle_eof(s, now), MCP_OK);
        drain(100_000, || {
            let (mut json, mut len) = (std::ptr::null(), 0);
            mcp_server_poll_event(s, &mut json, &mut len)
        });
        assert!(mcp_server_is_closed(s) >= 0);
        mcp_server_free(s);
    }
}

fn fuzz_client(era: &str, chunks: &[&[u8]], answer: &[u8]) {
    let config = format!(
        r#"{{"name":"fuzz","version":"1","protocolVersion":"{era}","capabilities":{{"roots":{{}},"sampling":{{}},"elicitation":{{}}}}}}"#
    );
    // SAFETY: valid buffers; the handle lives until the free at the end.
    unsafe {
        let c = mcp_client_new(config.as_ptr().cast(), config.len(), 0);
        assert!(!c.is_null());
        let mut now = 0u64;
        for chunk in chunks {
            now += 5;
            assert_eq!(mcp_client_handle_bytes(c, now, chunk.as_ptr(), chunk.len()), MCP_OK);
            let mut open = Vec::new();
            drain(100_000, || {
                let (mut json, mut len) = (std::ptr::null(), 0);
                let status = mcp_client_poll_event(c, &mut json, &mut len);
                if status == MCP_OK {
                    if let (true, Some(n)) = event_numbers(json, len) {
                        open.push(n);
                    }
                }
                status
            });
            for n in open {
                documented(mcp_client_provide_input(c, now, n, answer.as_ptr().cast(), answer.len()));
                documented(mcp_client_respond(c, now, n, answer.as_ptr().cast(), answer.len()));
            }
            let mut id = 0;
            let status = mcp_client_request(c, now, c"tools/list".as_ptr(), 10, std::ptr::null(), 0, &mut id);
            assert!(matches!(status, MCP_OK | MCP_ERR_STATE | MCP_ERR_BLOCKED), "{status:?}");
            drain(1000, || {
                let (mut data, mut len) = (std::ptr::null(), 0);
                mcp_client_poll_transmit(c, &mut data, &mut len)
            });
            let mut deadline = 0;
            if mcp_client_poll_timeout(c, &mut deadline) == MCP_OK {
                assert_eq!(mcp_client_handle_timeout(c, deadline.max(now)), MCP_OK);
            }
        }
        assert_eq!(mcp_client_close(c, now), MCP_OK);
        drain(100_000, || {
            let (mut json, mut len) = (std::ptr::null(), 0);
            mcp_client_poll_event(c, &mut json, &mut len)
        });
        assert_eq!(mcp_client_is_closed(c), 1);
        mcp_client_free(c);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    // The input: chunks of bytes separated by 0xFF, the last one is the answer JSON.
    let mut parts: Vec<&[u8]> = data.split(|b| *b == 0xFF).collect();
    let answer = parts.pop().unwrap_or_default();
    if selector & 1 == 0 {
        let era = ["both", "legacy", "modern"][usize::from(selector >> 1) % 3];
        fuzz_server(era, &parts, answer);
    } else {
        let era = ["auto", "2025-11-25", "2026-07-28", "2025-03-26"][usize::from(selector >> 1) % 4];
        fuzz_client(era, &parts, answer);
    }
});
