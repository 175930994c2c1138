//! `mcp_client_*`: a client session over a byte stream (a server started as a child process)

use std::collections::HashMap;
use std::ffi::{c_char, c_int};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::schema::InputResponses;
use mcp_sansio::{
    ClientEvent, ClientSession, ErrorObject, InboundId, InputError, InputId, OutboundId,
    RequestOptions, Responder,
};
use serde_json::{Value, json};

use crate::boundary::{
    Failure, Guarded, Outcome, bytes, guard, guard_value, handle_mut, handle_ref, mcp_status,
    optional_text, raw_json, require_out, send_failure, text, unknown_request, write_out,
};
use crate::clock::Clock;
use crate::config;
use crate::outputs::{
    Outputs, Retire, closed_event, notification_event, other_event, params_value, progress_event,
    response_event,
};
use crate::stream;

/// A client session (opaque to C): create it with `mcp_client_new`, free it with
/// `mcp_client_free`
pub struct McpClient(Guarded<Client>);

/// The glue of one client handle
#[derive(Debug)]
pub(crate) struct Client {
    session: ClientSession,
    clock: Clock,
    /// Our requests in flight, by the number `mcp_client_request` gave
    requests: HashMap<u64, OutboundId>,
    /// The server's requests handed to the application, by their event's number
    open: HashMap<u64, Responder>,
    handles: HashMap<InboundId, u64>,
    /// Input the server asked for, by the number of its `input_required` event
    inputs: HashMap<u64, InputId>,
    next_handle: u64,
    outputs: Outputs,
    max_events: usize,
}

impl Client {
    fn new(config_json: &str, now_ms: u64) -> Result<Self, Failure> {
        let config = config::client(config_json)?;
        let max_events = config.limits.max_queued_events;
        let mut clock = Clock::new(now_ms);
        let now = clock.at(now_ms);
        Ok(Self {
            session: ClientSession::new(Arc::new(config), now),
            clock,
            requests: HashMap::new(),
            open: HashMap::new(),
            handles: HashMap::new(),
            inputs: HashMap::new(),
            next_handle: 1,
            outputs: Outputs::default(),
            max_events,
        })
    }

    fn pump(&mut self) {
        while self.outputs.queued() < self.max_events {
            let Some(event) = self.session.poll_event() else {
                break;
            };
            if let Some(json) = self.convert(event) {
                let retire = match json["kind"].as_str() {
                    Some("cancelled") => json["request"]
                        .as_u64()
                        .map_or(Retire::Nothing, Retire::Request),
                    Some("closed") => Retire::All,
                    _ => Retire::Nothing,
                };
                self.outputs.push(&json, retire);
            }
        }
    }

    fn next(&mut self) -> u64 {
        let handle = self.next_handle;
        self.next_handle += 1;
        handle
    }

    fn convert(&mut self, event: ClientEvent) -> Option<Value> {
        Some(match event {
            ClientEvent::Ready { version } => {
                let peer = self.session.peer();
                json!({
                    "kind": "ready",
                    "protocolVersion": version.as_str(),
                    "serverInfo": peer.and_then(|p| p.info.as_ref()),
                    "capabilities": peer.map(|p| p.capabilities.as_ref()),
                    "instructions": peer.and_then(|p| p.instructions.as_ref()),
                })
            }
            ClientEvent::Request(request) => {
                let handle = self.next();
                let event = json!({
                    "kind": "request",
                    "request": handle,
                    "method": request.method,
                    "params": params_value(request.params.as_deref()),
                });
                self.handles.insert(request.responder.id(), handle);
                self.open.insert(handle, request.responder);
                event
            }
            ClientEvent::Notification(n) => notification_event(&n.method, n.params.as_deref()),
            ClientEvent::Response { id, outcome } => {
                let handle = id.wire_id();
                self.requests.remove(&handle);
                response_event(handle, &outcome)
            }
            ClientEvent::Progress { id, progress } => progress_event(id.wire_id(), &progress),
            ClientEvent::Cancelled { id, reason } => {
                // The request stays open (an answer is dropped by the core) until the
                // application is handed this event.
                let handle = *self.handles.get(&id)?;
                let mut event = json!({"kind": "cancelled", "request": handle});
                if let Some(reason) = reason {
                    event["reason"] = json!(reason);
                }
                event
            }
            ClientEvent::InputRequired { id, requests } => {
                let handle = self.next();
                self.inputs.insert(handle, id);
                let mut event = json!({
                    "kind": "input_required",
                    "input": handle,
                    "requests": serde_json::to_value(&requests).unwrap_or(Value::Null),
                });
                if let InputId::Retry(out) = id {
                    event["request"] = json!(out.wire_id());
                }
                event
            }
            ClientEvent::TaskStatus {
                id,
                status,
                message,
            } => {
                let mut event = json!({
                    "kind": "task_status",
                    "request": id.wire_id(),
                    "status": serde_json::to_value(status).unwrap_or(Value::Null),
                });
                if let Some(message) = message {
                    event["message"] = json!(message);
                }
                event
            }
            ClientEvent::TaskCancelled { task } => other_event("task_cancelled", &task),
            ClientEvent::Unblocked => json!({"kind": "unblocked"}),
            ClientEvent::SessionRenewed { version } => {
                json!({"kind": "session_renewed", "protocolVersion": version.as_str()})
            }
            // Open requests and inputs stay open (answers are dropped) until this event is
            // handed out.
            ClientEvent::Closed { reason } => closed_event(&reason),
            other => other_event("other", &other),
        })
    }

    fn request(
        &mut self,
        now_ms: u64,
        method: &str,
        params: Option<&str>,
        timeout_ms: i64,
    ) -> Result<u64, Failure> {
        let raw = params.map(|p| raw_json(p, "params")).transpose()?;
        let now = self.clock.at(now_ms);
        // Every request asks for progress, so a server may report it (a `progress` event).
        let mut options = RequestOptions::default().with_progress();
        match u64::try_from(timeout_ms) {
            Err(_) => {}
            Ok(0) => options = options.no_timeout(),
            Ok(ms) => options = options.timeout(Duration::from_millis(ms)),
        }
        let id = self
            .session
            .send_request_raw(now, method, raw, options)
            .map_err(send_failure)?;
        let handle = id.wire_id();
        self.requests.insert(handle, id);
        self.pump();
        Ok(handle)
    }

    fn cancel(&mut self, now_ms: u64, handle: u64) -> Outcome {
        let now = self.clock.at(now_ms);
        let id = *self.requests.get(&handle).ok_or_else(|| {
            Failure::state(format!(
                "request {handle} is not in flight: unknown, or its response event was polled"
            ))
        })?;
        self.session
            .cancel(now, id, None)
            .map_err(|e| Failure::state(format!("request {handle}: {e}")))?;
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    /// The application was handed a `cancelled` or `closed` event: what it concerns is no
    /// longer open
    fn retire(&mut self, retire: Retire) {
        match retire {
            Retire::Nothing => {}
            Retire::Request(handle) => {
                if let Some(responder) = self.open.remove(&handle) {
                    self.handles.remove(&responder.id());
                }
            }
            Retire::All => {
                self.open.clear();
                self.handles.clear();
                self.inputs.clear();
            }
        }
    }

    fn take(&mut self, handle: u64) -> Result<Responder, Failure> {
        let responder = self
            .open
            .remove(&handle)
            .ok_or_else(|| unknown_request(handle))?;
        self.handles.remove(&responder.id());
        Ok(responder)
    }

    fn respond(&mut self, now_ms: u64, handle: u64, result: &str) -> Outcome {
        let raw = raw_json(result, "result")?;
        self.clock.at(now_ms);
        let responder = self.take(handle)?;
        if let Err(refused) = self.session.respond_raw(responder, &raw) {
            let responder = refused.into_responder();
            self.handles.insert(responder.id(), handle);
            self.open.insert(handle, responder);
            return Err(Failure::json("a result must be a JSON object"));
        }
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn respond_error(&mut self, now_ms: u64, handle: u64, code: i64, message: &str) -> Outcome {
        self.clock.at(now_ms);
        let responder = self.take(handle)?;
        self.session
            .respond_error(responder, &ErrorObject::new(code, message));
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn input_id(&self, handle: u64) -> Result<InputId, Failure> {
        self.inputs.get(&handle).copied().ok_or_else(|| {
            Failure::state(format!(
                "input {handle} is not waiting: unknown, answered already, or the session closed"
            ))
        })
    }

    fn provide_input(&mut self, now_ms: u64, handle: u64, responses: &str) -> Outcome {
        let responses: InputResponses = serde_json::from_str(responses)
            .map_err(|e| Failure::json(format!("input responses: {e}")))?;
        let id = self.input_id(handle)?;
        let now = self.clock.at(now_ms);
        self.session
            .provide_input(now, id, responses)
            .map_err(input_failure)?;
        self.inputs.remove(&handle);
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn refuse_input(&mut self, now_ms: u64, handle: u64, code: i64, message: &str) -> Outcome {
        let id = self.input_id(handle)?;
        let now = self.clock.at(now_ms);
        self.session
            .refuse_input(now, id, &ErrorObject::new(code, message))
            .map_err(input_failure)?;
        self.inputs.remove(&handle);
        self.pump();
        Ok(mcp_status::MCP_OK)
    }
}

fn input_failure(e: InputError) -> Failure {
    match e {
        InputError::Missing(_) => Failure::json(e.to_string()),
        other => Failure::state(other.to_string()),
    }
}

impl stream::End for Client {
    type Role = mcp_sansio::session::role::Client;

    fn parts(&mut self) -> stream::Parts<'_, Self::Role> {
        stream::Parts {
            session: &mut self.session,
            clock: &mut self.clock,
            outputs: &mut self.outputs,
        }
    }

    fn pump(&mut self) {
        Self::pump(self);
    }

    fn retire(&mut self, retire: Retire) {
        Self::retire(self, retire);
    }
}

/// Runs `body` on the client behind `client`
///
/// # Safety
/// `client` is NULL or a live handle (see the header).
unsafe fn with(client: *mut McpClient, body: impl FnOnce(&mut Client) -> Outcome) -> mcp_status {
    guard(|| {
        // SAFETY: forwarded from this function's caller.
        let handle = unsafe { handle_mut(client, "client") }?;
        Ok(handle.0.run(body))
    })
}

// --- the exported functions ------------------------------------------------------------------

/// Creates a client session; its first message (`initialize` or `server/discover`) is
/// queued at once: poll transmits and write them to the server.
///
/// `config_json` (`len` bytes of UTF-8; borrowed for the call) is a JSON object:
/// `{"name": "..", "version": "..", "title"?: "..", "protocolVersion"?: "auto" | "legacy" |
/// "modern" | "2025-11-25" | "2026-07-28" | .., "capabilities"?: {..}, "extraMethods"?:
/// ["..."], "requestTimeoutMs"?: N}`. `protocolVersion` defaults to `"auto"`: ask
/// `server/discover` (2026) and fall back to `initialize` when the server does not answer it
/// (within 3 s); a 2024/2025 version string means that version's `initialize` handshake
/// only, `"legacy"` the latest of them, `"modern"` or `"2026-07-28"` discovery only.
/// `requestTimeoutMs` (default 60000; 0: none) bounds each request. `capabilities` defaults
/// to `{}`; declaring `sampling`, `elicitation` or `roots` makes the server's requests of
/// them arrive as `input_required` events. An unknown key is an error naming it.
///
/// `now_ms`: the caller's monotonic clock, as for `mcp_server_new`. Returns a handle owned by
/// the caller (free it with `mcp_client_free`), or NULL on error (see `mcp_last_error()`).
///
/// # Safety
/// `config_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_new(
    config_json: *const c_char,
    len: usize,
    now_ms: u64,
) -> *mut McpClient {
    guard_value(|| {
        if config_json.is_null() {
            return Err(Failure::null("config_json"));
        }
        // SAFETY: the caller passes `len` readable bytes at `config_json`.
        let json = unsafe { text(config_json, len, "config_json") }?;
        let mut client = Client::new(json, now_ms)?;
        client.pump();
        Ok(client)
    })
    .map_or(std::ptr::null_mut(), |client| {
        Box::into_raw(Box::new(McpClient(Guarded::new(client))))
    })
}

/// Frees a client session and everything it lent out. NULL is a no-op. The handle must not
/// be used afterwards.
///
/// # Safety
/// `client` is NULL or a handle from `mcp_client_new` not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_free(client: *mut McpClient) {
    if client.is_null() {
        return;
    }
    // SAFETY: a non-NULL handle comes from `mcp_client_new` (`Box::into_raw`) and is freed
    // once, by the caller's contract.
    let boxed = unsafe { Box::from_raw(client) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(boxed)));
}

/// Feeds bytes read from the server (newline-delimited JSON; any chunking). As
/// `mcp_server_handle_bytes`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `data` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_handle_bytes(
    client: *mut McpClient,
    now_ms: u64,
    data: *const u8,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            stream::handle_bytes(c, now_ms, bytes(data, len, "data")?)
        })
    }
}

/// The server closed its output (EOF): requests in flight end with `response` events whose
/// `failure` is `"closed"`, then a `closed` event.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_handle_eof(client: *mut McpClient, now_ms: u64) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe { with(client, |c| stream::handle_eof(c, now_ms)) }
}

/// Fires every timer due at or before `now_ms`: a request past its timeout ends with a
/// `response` event whose `failure` is `"timeout"` (and `notifications/cancelled` goes to the
/// server); `"auto"` discovery falls back to `initialize`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_handle_timeout(
    client: *mut McpClient,
    now_ms: u64,
) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe { with(client, |c| stream::handle_timeout(c, now_ms)) }
}

/// The next deadline in the caller's milliseconds, as `mcp_server_poll_timeout`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `deadline_ms` is NULL or valid for writing one `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_poll_timeout(
    client: *mut McpClient,
    deadline_ms: *mut u64,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(client, |c| stream::poll_timeout(c, deadline_ms)) }
}

/// The bytes to write to the server, as `mcp_server_poll_transmit` (borrowed until the next
/// `mcp_client_poll_transmit` or `mcp_client_free` on it).
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `data` is NULL or valid for writing one `*const u8`.
/// `len` is NULL or valid for writing one `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_poll_transmit(
    client: *mut McpClient,
    data: *mut *const u8,
    len: *mut usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(client, |c| stream::poll_transmit(c, data, len)) }
}

/// The next event as one JSON object, as `mcp_server_poll_event` (NUL-terminated, borrowed
/// until the next `mcp_client_poll_event` or `mcp_client_free` on it).
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `json` is NULL or valid for writing one `*const c_char`.
/// `len` is NULL or valid for writing one `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_poll_event(
    client: *mut McpClient,
    json: *mut *const c_char,
    len: *mut usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(client, |c| stream::poll_event(c, json, len)) }
}

/// Sends request `method` (`method_len` bytes of UTF-8, e.g. `tools/list`, `tools/call`)
/// with `params_json` (`params_len` bytes, a JSON object; NULL: no params), asking the server
/// for progress. On `MCP_OK`, `*request_out` is the request's number: its outcome arrives as
/// exactly one `response` event with that `"request"` (and any `progress` events before it).
///
/// Returns `MCP_ERR_STATE` before the `ready` event, after close, or for a method the era or
/// the server's capabilities do not allow; `MCP_ERR_BLOCKED` when too many requests are in
/// flight or bytes wait; `MCP_ERR_JSON` for params that are not an object. The library adds
/// what the era needs (`_meta` of 2026 requests, the progress token).
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `method` is NULL or points to `method_len` readable bytes.
/// `params_json` is NULL or points to `params_len` readable bytes.
/// `request_out` is NULL or valid for writing one `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_request(
    client: *mut McpClient,
    now_ms: u64,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    request_out: *mut u64,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            if method.is_null() {
                return Err(Failure::null("method"));
            }
            require_out(request_out, "request_out")?;
            let method = text(method, method_len, "method")?;
            let params = optional_text(params_json, params_len, "params_json")?;
            let handle = c.request(now_ms, method, params, -1)?;
            write_out(request_out, handle, "request_out")?;
            Ok(mcp_status::MCP_OK)
        })
    }
}

/// `mcp_client_request` with this request's own timeout: `timeout_ms` milliseconds, 0 for
/// none (a long-lived request such as a 2026 `subscriptions/listen`), negative for the
/// config's `requestTimeoutMs`. Statuses as `mcp_client_request`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `method` is NULL or points to `method_len` readable bytes.
/// `params_json` is NULL or points to `params_len` readable bytes.
/// `request_out` is NULL or valid for writing one `u64`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mcp_client_request_timeout(
    client: *mut McpClient,
    now_ms: u64,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    timeout_ms: i64,
    request_out: *mut u64,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            if method.is_null() {
                return Err(Failure::null("method"));
            }
            require_out(request_out, "request_out")?;
            let method = text(method, method_len, "method")?;
            let params = optional_text(params_json, params_len, "params_json")?;
            let handle = c.request(now_ms, method, params, timeout_ms)?;
            write_out(request_out, handle, "request_out")?;
            Ok(mcp_status::MCP_OK)
        })
    }
}

/// Cancels request `request`: `notifications/cancelled` goes to the server and its
/// `response` event follows with `"failure": "cancelled"`; a late answer is dropped.
///
/// Returns `MCP_ERR_STATE` when the request is not in flight (unknown, or its `response`
/// event was polled or is queued).
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_cancel(
    client: *mut McpClient,
    now_ms: u64,
    request: u64,
) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe { with(client, |c| c.cancel(now_ms, request)) }
}

/// Answers a server's `request` event (a method of `extraMethods`; `ping` is answered by the
/// library) with `result_json`, as `mcp_server_respond`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `result_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_respond(
    client: *mut McpClient,
    now_ms: u64,
    request: u64,
    result_json: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            if result_json.is_null() {
                return Err(Failure::null("result_json"));
            }
            let json = text(result_json, len, "result_json")?;
            c.respond(now_ms, request, json)
        })
    }
}

/// Answers a server's `request` event with a JSON-RPC error, as `mcp_server_respond_error`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `message` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_respond_error(
    client: *mut McpClient,
    now_ms: u64,
    request: u64,
    code: i64,
    message: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            let message = text(message, len, "message")?;
            c.respond_error(now_ms, request, code, message)
        })
    }
}

/// Answers an `input_required` event `input` with `responses_json` (`len` bytes of UTF-8; a
/// JSON object with one answer per key of the event's `"requests"`: an elicitation result
/// `{"action": "accept", "content": {..}}`, a sampling result, or a roots list `{"roots":
/// [..]}`). A 2026 request is retried with the answers; a 2025 server request is answered.
///
/// Returns `MCP_ERR_STATE` when nothing waits under `input`; `MCP_ERR_JSON` when an answer is
/// malformed or a key is missing.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `responses_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_provide_input(
    client: *mut McpClient,
    now_ms: u64,
    input: u64,
    responses_json: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            if responses_json.is_null() {
                return Err(Failure::null("responses_json"));
            }
            let json = text(responses_json, len, "responses_json")?;
            c.provide_input(now_ms, input, json)
        })
    }
}

/// Refuses an `input_required` event `input` with a JSON-RPC error `code` and `message`: a
/// 2026 request is cancelled (its `response` event says `"failure": "cancelled"`), a 2025
/// server request is answered with the error.
///
/// Returns `MCP_ERR_STATE` when nothing waits under `input`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
/// `message` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_refuse_input(
    client: *mut McpClient,
    now_ms: u64,
    input: u64,
    code: i64,
    message: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(client, |c| {
            let message = text(message, len, "message")?;
            c.refuse_input(now_ms, input, code, message)
        })
    }
}

/// Closes the session now: requests in flight end with `response` events (`"failure":
/// "closed"`), then a `closed` event. Bytes already queued can still be polled. Closing a
/// closed session is a no-op returning `MCP_OK`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_close(client: *mut McpClient, now_ms: u64) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe {
        with(client, |c| {
            let now = c.clock.at(now_ms);
            c.session.close(now);
            c.pump();
            Ok(mcp_status::MCP_OK)
        })
    }
}

/// Whether the caller should read more input from the server, as `mcp_server_wants_read`.
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_wants_read(client: *const McpClient) -> c_int {
    // SAFETY: the caller's pointer, as documented above.
    let Some(handle) = (unsafe { handle_ref(client) }) else {
        return mcp_status::MCP_ERR_NULL as c_int;
    };
    handle
        .0
        .read(|c| c_int::from(c.session.wants_read() && c.outputs.queued() < c.max_events))
        .unwrap_or(mcp_status::MCP_ERR_PANIC as c_int)
}

/// Whether the session has closed: 1 closed, 0 open, negative for a NULL or poisoned handle
/// (as `mcp_server_is_closed`).
///
/// # Safety
/// `client` is NULL or a live handle from `mcp_client_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_client_is_closed(client: *const McpClient) -> c_int {
    // SAFETY: the caller's pointer, as documented above.
    let Some(handle) = (unsafe { handle_ref(client) }) else {
        return mcp_status::MCP_ERR_NULL as c_int;
    };
    handle
        .0
        .read(|c| c_int::from(c.session.is_closed()))
        .unwrap_or(mcp_status::MCP_ERR_PANIC as c_int)
}

#[cfg(feature = "test-hooks")]
impl McpClient {
    /// Test hook: panics inside the boundary guard, as a bug would
    pub(crate) fn panic_inside(&mut self) -> mcp_status {
        self.0.run(|_| panic!("test hook: a deliberate panic"))
    }
}
