//! Safe wrappers over the C functions for the tests: each call goes through the exported
//! `extern "C"` function, exactly as C calls it
#![allow(dead_code, unreachable_pub)]

use std::ffi::{CStr, c_char};

use mcp_capi::*;
use serde_json::Value;

/// This thread's last error message
pub fn last_error() -> String {
    // SAFETY: mcp_last_error returns a NUL-terminated string valid until the next call.
    unsafe { CStr::from_ptr(mcp_last_error()) }
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

fn ptr(s: &str) -> *const c_char {
    s.as_ptr().cast()
}

/// A server handle, freed on drop
pub struct Server(pub *mut McpServer);

impl Server {
    pub fn new(config: &str, now: u64) -> Self {
        // SAFETY: a valid buffer of config.len() bytes.
        let handle = unsafe { mcp_server_new(ptr(config), config.len(), now) };
        assert!(!handle.is_null(), "mcp_server_new: {}", last_error());
        Self(handle)
    }

    pub fn add_tool(&mut self, tool: &str) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_server_add_tool(self.0, ptr(tool), tool.len()) }
    }

    pub fn bytes(&mut self, now: u64, data: &[u8]) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_server_handle_bytes(self.0, now, data.as_ptr(), data.len()) }
    }

    pub fn eof(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_server_handle_eof(self.0, now) }
    }

    pub fn timeout(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_server_handle_timeout(self.0, now) }
    }

    pub fn deadline(&mut self) -> Option<u64> {
        let mut at = 0;
        // SAFETY: a live handle and a valid out pointer.
        match unsafe { mcp_server_poll_timeout(self.0, &mut at) } {
            mcp_status::MCP_OK => Some(at),
            mcp_status::MCP_NONE => None,
            other => panic!("poll_timeout: {other:?} {}", last_error()),
        }
    }

    /// Every byte queued (polled until MCP_NONE)
    pub fn transmit(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        for _ in 0..1000 {
            let mut data = std::ptr::null();
            let mut len = 0;
            // SAFETY: a live handle and valid out pointers.
            match unsafe { mcp_server_poll_transmit(self.0, &mut data, &mut len) } {
                // SAFETY: the library lends `len` bytes at `data` until the next call.
                mcp_status::MCP_OK => {
                    all.extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) })
                }
                mcp_status::MCP_NONE => {
                    assert!(data.is_null() && len == 0);
                    return all;
                }
                other => panic!("poll_transmit: {other:?} {}", last_error()),
            }
        }
        panic!("poll_transmit never said MCP_NONE");
    }

    /// Every event queued, parsed
    pub fn events(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        for _ in 0..10_000 {
            let mut json = std::ptr::null();
            let mut len = 0;
            // SAFETY: a live handle and valid out pointers.
            match unsafe { mcp_server_poll_event(self.0, &mut json, &mut len) } {
                mcp_status::MCP_OK => all.push(event_at(json, len)),
                mcp_status::MCP_NONE => return all,
                other => panic!("poll_event: {other:?} {}", last_error()),
            }
        }
        panic!("poll_event never said MCP_NONE");
    }

    pub fn respond(&mut self, now: u64, request: u64, result: &str) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_server_respond(self.0, now, request, ptr(result), result.len()) }
    }

    pub fn respond_error(
        &mut self,
        now: u64,
        request: u64,
        code: i64,
        message: &str,
    ) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_server_respond_error(self.0, now, request, code, ptr(message), message.len()) }
    }

    pub fn progress(
        &mut self,
        now: u64,
        request: u64,
        progress: f64,
        total: f64,
        message: Option<&str>,
    ) -> mcp_status {
        let (m, n) = message.map_or((std::ptr::null(), 0), |m| (ptr(m), m.len()));
        // SAFETY: a live handle and a valid (or NULL) buffer.
        unsafe { mcp_server_progress(self.0, now, request, progress, total, m, n) }
    }

    pub fn notify(&mut self, now: u64, method: &str, params: Option<&str>) -> mcp_status {
        let (p, n) = params.map_or((std::ptr::null(), 0), |p| (ptr(p), p.len()));
        // SAFETY: a live handle and valid buffers.
        unsafe { mcp_server_notify(self.0, now, ptr(method), method.len(), p, n) }
    }

    pub fn close(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_server_close(self.0, now) }
    }

    pub fn is_closed(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { mcp_server_is_closed(self.0) }
    }

    pub fn wants_read(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { mcp_server_wants_read(self.0) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: the handle is freed once, here.
        unsafe { mcp_server_free(self.0) }
    }
}

/// A client handle, freed on drop
pub struct Client(pub *mut McpClient);

impl Client {
    pub fn new(config: &str, now: u64) -> Self {
        // SAFETY: a valid buffer.
        let handle = unsafe { mcp_client_new(ptr(config), config.len(), now) };
        assert!(!handle.is_null(), "mcp_client_new: {}", last_error());
        Self(handle)
    }

    pub fn bytes(&mut self, now: u64, data: &[u8]) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_client_handle_bytes(self.0, now, data.as_ptr(), data.len()) }
    }

    pub fn eof(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_client_handle_eof(self.0, now) }
    }

    pub fn timeout(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_client_handle_timeout(self.0, now) }
    }

    pub fn deadline(&mut self) -> Option<u64> {
        let mut at = 0;
        // SAFETY: a live handle and a valid out pointer.
        match unsafe { mcp_client_poll_timeout(self.0, &mut at) } {
            mcp_status::MCP_OK => Some(at),
            mcp_status::MCP_NONE => None,
            other => panic!("poll_timeout: {other:?} {}", last_error()),
        }
    }

    pub fn transmit(&mut self) -> Vec<u8> {
        let mut all = Vec::new();
        for _ in 0..1000 {
            let mut data = std::ptr::null();
            let mut len = 0;
            // SAFETY: a live handle and valid out pointers.
            match unsafe { mcp_client_poll_transmit(self.0, &mut data, &mut len) } {
                // SAFETY: the library lends `len` bytes at `data` until the next call.
                mcp_status::MCP_OK => {
                    all.extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) })
                }
                mcp_status::MCP_NONE => return all,
                other => panic!("poll_transmit: {other:?} {}", last_error()),
            }
        }
        panic!("poll_transmit never said MCP_NONE");
    }

    pub fn events(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        for _ in 0..10_000 {
            let mut json = std::ptr::null();
            let mut len = 0;
            // SAFETY: a live handle and valid out pointers.
            match unsafe { mcp_client_poll_event(self.0, &mut json, &mut len) } {
                mcp_status::MCP_OK => all.push(event_at(json, len)),
                mcp_status::MCP_NONE => return all,
                other => panic!("poll_event: {other:?} {}", last_error()),
            }
        }
        panic!("poll_event never said MCP_NONE");
    }

    /// Sends a request; its number, or the failure status
    pub fn request(
        &mut self,
        now: u64,
        method: &str,
        params: Option<&str>,
    ) -> Result<u64, mcp_status> {
        let (p, n) = params.map_or((std::ptr::null(), 0), |p| (ptr(p), p.len()));
        let mut id = 0;
        // SAFETY: a live handle, valid buffers and out pointer.
        match unsafe { mcp_client_request(self.0, now, ptr(method), method.len(), p, n, &mut id) } {
            mcp_status::MCP_OK => Ok(id),
            other => Err(other),
        }
    }

    pub fn cancel(&mut self, now: u64, request: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_client_cancel(self.0, now, request) }
    }

    pub fn respond(&mut self, now: u64, request: u64, result: &str) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_client_respond(self.0, now, request, ptr(result), result.len()) }
    }

    pub fn respond_error(
        &mut self,
        now: u64,
        request: u64,
        code: i64,
        message: &str,
    ) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_client_respond_error(self.0, now, request, code, ptr(message), message.len()) }
    }

    pub fn provide_input(&mut self, now: u64, input: u64, responses: &str) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_client_provide_input(self.0, now, input, ptr(responses), responses.len()) }
    }

    pub fn refuse_input(&mut self, now: u64, input: u64, code: i64, message: &str) -> mcp_status {
        // SAFETY: a live handle and a valid buffer.
        unsafe { mcp_client_refuse_input(self.0, now, input, code, ptr(message), message.len()) }
    }

    pub fn close(&mut self, now: u64) -> mcp_status {
        // SAFETY: a live handle.
        unsafe { mcp_client_close(self.0, now) }
    }

    pub fn is_closed(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { mcp_client_is_closed(self.0) }
    }

    pub fn wants_read(&self) -> i32 {
        // SAFETY: a live handle.
        unsafe { mcp_client_wants_read(self.0) }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: the handle is freed once, here.
        unsafe { mcp_client_free(self.0) }
    }
}

/// An event the library lent: checks the NUL after it and parses it
fn event_at(json: *const c_char, len: usize) -> Value {
    assert!(!json.is_null());
    // SAFETY: the library lends `len` bytes and a NUL at `json` until the next call.
    let bytes = unsafe { std::slice::from_raw_parts(json.cast::<u8>(), len + 1) };
    assert_eq!(bytes[len], 0, "the event is NUL-terminated");
    // SAFETY: as above; the NUL is the first one (JSON text has no NUL byte).
    let c = unsafe { CStr::from_ptr(json) };
    assert_eq!(c.to_bytes().len(), len, "no NUL inside the event");
    let text = std::str::from_utf8(&bytes[..len]).expect("an event is UTF-8");
    let event: Value = serde_json::from_str(text).expect("an event is JSON");
    // The header's promise: "kind" first, then the request or input number.
    let kind = event["kind"].as_str().expect("an event has a kind");
    let mut prefix = format!(r#"{{"kind":{}"#, Value::from(kind));
    if let Some(n) = event.get("request").or(event.get("input")) {
        let key = if event.get("request").is_some() {
            "request"
        } else {
            "input"
        };
        prefix.push_str(&format!(r#","{key}":{n}"#));
    }
    assert!(
        text.starts_with(&prefix),
        "{text} does not start with {prefix}"
    );
    event
}

/// A client and a server joined in memory, on a fake clock (milliseconds)
pub struct Pair {
    pub client: Client,
    pub server: Server,
    pub now: u64,
    /// Every event each side produced, in order
    pub client_events: Vec<Value>,
    pub server_events: Vec<Value>,
}

pub const ECHO_TOOL: &str = r#"{"name":"echo","description":"Echoes its text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}"#;

impl Pair {
    /// A server with the echo tool and a client of `protocol_version`, handshake done
    pub fn ready(protocol_version: &str, client_extra: &str) -> Self {
        let now = 1_000;
        let mut server = Server::new(r#"{"name":"test-server","version":"1.0"}"#, now);
        assert_eq!(
            server.add_tool(ECHO_TOOL),
            mcp_status::MCP_OK,
            "{}",
            last_error()
        );
        let client = Client::new(
            &format!(
                r#"{{"name":"test-client","version":"2.0","protocolVersion":"{protocol_version}"{client_extra}}}"#
            ),
            now,
        );
        let mut pair = Self {
            client,
            server,
            now,
            client_events: Vec::new(),
            server_events: Vec::new(),
        };
        pair.exchange();
        assert!(
            pair.client_events.iter().any(|e| e["kind"] == "ready"),
            "no ready event: {:?}",
            pair.client_events
        );
        pair
    }

    /// Moves bytes both ways and collects events until both sides are quiet
    pub fn exchange(&mut self) {
        for _ in 0..50 {
            let mut moved = false;
            let bytes = self.client.transmit();
            if !bytes.is_empty() {
                moved = true;
                assert_eq!(self.server.bytes(self.now, &bytes), mcp_status::MCP_OK);
            }
            let events = self.server.events();
            moved |= !events.is_empty();
            self.server_events.extend(events);
            let bytes = self.server.transmit();
            if !bytes.is_empty() {
                moved = true;
                assert_eq!(self.client.bytes(self.now, &bytes), mcp_status::MCP_OK);
            }
            let events = self.client.events();
            moved |= !events.is_empty();
            self.client_events.extend(events);
            if !moved {
                return;
            }
        }
        panic!("the sessions never went quiet");
    }

    /// Takes the events of `kind` a side produced so far
    pub fn take(events: &mut Vec<Value>, kind: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(events)
            .into_iter()
            .partition(|e| e["kind"] == kind);
        *events = kept;
        taken
    }
}
