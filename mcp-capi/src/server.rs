//! `mcp_server_*`: a server session over a byte stream (stdio), its tool catalog, and the
//! requests the application answers

use std::collections::HashMap;
use std::ffi::{c_char, c_int};
use std::sync::Arc;

use mcp_sansio::schema::{ListKind, LoggingMessageNotificationParams, Tool};
use mcp_sansio::server::{Catalog, CatalogConfig, CatalogError, LogFilter, Route, respond};
use mcp_sansio::{
    ErrorObject, InboundId, InboundRequest, Progress, ProgressError, Responder, ServerEvent,
    ServerSession,
};
use serde_json::{Value, json};

use crate::boundary::{
    Failure, Guarded, Outcome, bytes, guard_value, handle_mut, handle_ref, mcp_status,
    optional_text, raw_json, send_failure, text, unknown_request,
};
use crate::clock::Clock;
use crate::config;
use crate::outputs::{
    Outputs, Retire, closed_event, notification_event, other_event, params_value, progress_event,
    response_event,
};
use crate::stream;

/// A server session (opaque to C): create it with `mcp_server_new`, free it with
/// `mcp_server_free`
pub struct McpServer(Guarded<Server>);

/// One request the application was told about and has not answered
#[derive(Debug)]
struct Open {
    responder: Responder,
    wants_progress: bool,
}

/// The glue of one server handle
#[derive(Debug)]
pub(crate) struct Server {
    session: ServerSession,
    clock: Clock,
    catalog: Catalog,
    /// The connection's `notifications/message` filter (`logging/setLevel`)
    log_filter: LogFilter,
    /// Requests handed to the application, by the handle its events carry
    open: HashMap<u64, Open>,
    /// The handle of each open request, by the core's id (for `Cancelled`)
    handles: HashMap<InboundId, u64>,
    next_handle: u64,
    outputs: Outputs,
    /// How many converted events may wait before the rest stay in the core (which then
    /// pushes back on the peer)
    max_events: usize,
}

impl Server {
    fn new(config_json: &str, now_ms: u64) -> Result<Self, Failure> {
        let config = config::server(config_json)?;
        let max_events = config.limits.max_queued_events;
        let mut clock = Clock::new(now_ms);
        let now = clock.at(now_ms);
        Ok(Self {
            session: ServerSession::new(Arc::new(config), now),
            clock,
            catalog: Catalog::new(CatalogConfig::new()),
            log_filter: LogFilter::legacy(),
            open: HashMap::new(),
            handles: HashMap::new(),
            next_handle: 1,
            outputs: Outputs::default(),
            max_events,
        })
    }

    /// Pulls the core's events into the handle's queue, answering what the library answers
    /// itself (`tools/list`, a `tools/call` of an unknown tool or with invalid arguments,
    /// `logging/setLevel`)
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

    /// One core event as the C API's JSON, or `None` when the library handled it
    fn convert(&mut self, event: ServerEvent) -> Option<Value> {
        Some(match event {
            ServerEvent::Ready { version } => {
                let peer = self.session.peer();
                json!({
                    "kind": "ready",
                    "protocolVersion": version.as_str(),
                    "clientInfo": peer.and_then(|p| p.info.as_ref()),
                    "clientCapabilities": peer.map(|p| p.capabilities.as_ref()),
                })
            }
            ServerEvent::Request(request) => return self.request(request),
            ServerEvent::Notification(n) => notification_event(&n.method, n.params.as_deref()),
            ServerEvent::Response { id, outcome } => response_event(id.wire_id(), &outcome),
            ServerEvent::Progress { id, progress } => progress_event(id.wire_id(), &progress),
            ServerEvent::Cancelled { id, reason } => {
                // A request the library answered itself was never the application's.
                // The request stays open (an answer is dropped by the core) until the
                // application is handed this event.
                let handle = *self.handles.get(&id)?;
                let mut event = json!({"kind": "cancelled", "request": handle});
                if let Some(reason) = reason {
                    event["reason"] = json!(reason);
                }
                event
            }
            ServerEvent::Unblocked => json!({"kind": "unblocked"}),
            // Open requests stay open (answers are dropped) until this event is handed out.
            ServerEvent::Closed { reason } => closed_event(&reason),
            // The C API starts no tasks and asks no input, so these do not arise; they are
            // reported rather than dropped should a future core emit them.
            ServerEvent::InputAnswered { request, key, .. } => {
                other_event("input_answered", &(request, key))
            }
            ServerEvent::TaskInput { task, .. } => other_event("task_input", &task),
            ServerEvent::TaskCancelled { task } => other_event("task_cancelled", &task),
            ServerEvent::TaskStatus { id, status, .. } => {
                other_event("task_status", &(id.wire_id(), status))
            }
            other => other_event("other", &other),
        })
    }

    /// An inbound request: answered by the library, or handed to the application
    fn request(&mut self, request: InboundRequest) -> Option<Value> {
        let request = self
            .log_filter
            .handle_set_level(&mut self.session, request)?;
        let mut extra = None;
        if matches!(request.method.as_str(), "tools/list" | "tools/call") {
            match self.catalog.route(&request, false) {
                Route::Answer(answer) => {
                    respond(&mut self.session, request.responder, &answer);
                    return None;
                }
                Route::Tool { name, arguments } => extra = Some((name, arguments)),
                // Nothing else is registered, so nothing else is routed to.
                _ => {}
            }
        }
        let handle = self.next_handle;
        self.next_handle += 1;
        let mut event = json!({
            "kind": "request",
            "request": handle,
            "method": request.method,
            "params": params_value(request.params.as_deref()),
            "protocolVersion": request.version.as_str(),
            "wantsProgress": request.wants_progress,
        });
        if let Some((name, arguments)) = extra {
            event["name"] = json!(name);
            event["arguments"] = Value::Object(arguments);
        }
        self.handles.insert(request.responder.id(), handle);
        self.open.insert(
            handle,
            Open {
                responder: request.responder,
                wants_progress: request.wants_progress,
            },
        );
        Some(event)
    }

    /// The application was handed a `cancelled` or `closed` event: what it concerns is no
    /// longer open
    fn retire(&mut self, retire: Retire) {
        match retire {
            Retire::Nothing => {}
            Retire::Request(handle) => {
                if let Some(open) = self.open.remove(&handle) {
                    self.handles.remove(&open.responder.id());
                }
            }
            Retire::All => {
                self.open.clear();
                self.handles.clear();
            }
        }
    }

    /// Takes the open request `handle` off the books for an answer
    fn take(&mut self, handle: u64) -> Result<Open, Failure> {
        let open = self
            .open
            .remove(&handle)
            .ok_or_else(|| unknown_request(handle))?;
        self.handles.remove(&open.responder.id());
        Ok(open)
    }

    fn add_tool(&mut self, json: &str) -> Outcome {
        let tool: Tool =
            serde_json::from_str(json).map_err(|e| Failure::json(format!("tool: {e}")))?;
        self.catalog.add_tool(tool).map_err(|e| match e {
            CatalogError::Duplicate { .. } => Failure::state(e.to_string()),
            other => Failure::json(other.to_string()),
        })?;
        if self.catalog.take_changes().tools {
            // Only when the server declared `tools.listChanged` and a client listens.
            let _ = self.session.notify_list_changed(ListKind::Tools);
        }
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn respond(&mut self, now_ms: u64, handle: u64, result: &str) -> Outcome {
        let raw = raw_json(result, "result")?;
        self.clock.at(now_ms);
        let open = self.take(handle)?;
        if let Err(refused) = self.session.respond_raw(open.responder, &raw) {
            let responder = refused.into_responder();
            self.handles.insert(responder.id(), handle);
            self.open.insert(
                handle,
                Open {
                    responder,
                    wants_progress: open.wants_progress,
                },
            );
            return Err(Failure::json("a result must be a JSON object"));
        }
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn respond_error(&mut self, now_ms: u64, handle: u64, code: i64, message: &str) -> Outcome {
        self.clock.at(now_ms);
        let open = self.take(handle)?;
        self.session
            .respond_error(open.responder, &ErrorObject::new(code, message));
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn progress(&mut self, now_ms: u64, handle: u64, progress: Progress) -> Outcome {
        self.clock.at(now_ms);
        let open = self
            .open
            .get(&handle)
            .ok_or_else(|| unknown_request(handle))?;
        let id = open.responder.id();
        if !open.wants_progress {
            return Err(Failure::state(format!(
                "request {handle}: the client did not ask for progress (its event says \
                 \"wantsProgress\": false)"
            )));
        }
        self.session
            .inbound(id)
            .report_progress(&progress)
            .map_err(|e| match e {
                ProgressError::NotRequested => Failure::state(e.to_string()),
                other => Failure::state(format!("request {handle}: {other}")),
            })?;
        self.pump();
        Ok(mcp_status::MCP_OK)
    }

    fn notify(&mut self, now_ms: u64, method: &str, params: Option<&str>) -> Outcome {
        let raw = params.map(|p| raw_json(p, "params")).transpose()?;
        self.clock.at(now_ms);
        if method == "notifications/message" {
            let parsed = raw
                .as_deref()
                .map(|r| serde_json::from_str::<LoggingMessageNotificationParams>(r.get()))
                .transpose()
                .map_err(|e| Failure::json(format!("notifications/message params: {e}")))?;
            let Some(parsed) = parsed else {
                return Err(Failure::json("notifications/message needs params"));
            };
            if !self.log_filter.allows(parsed.level) {
                // Held back by the client's `logging/setLevel`: not an error.
                return Ok(mcp_status::MCP_OK);
            }
        }
        // Change notifications go to whoever subscribed, as the core decides (a legacy
        // session, a 2026 listen stream, a resource's subscribers).
        let list = match method {
            "notifications/tools/list_changed" => Some(ListKind::Tools),
            "notifications/prompts/list_changed" => Some(ListKind::Prompts),
            "notifications/resources/list_changed" => Some(ListKind::Resources),
            _ => None,
        };
        if let Some(kind) = list {
            self.session
                .notify_list_changed(kind)
                .map_err(send_failure)?;
        } else if method == "notifications/resources/updated" {
            #[derive(serde::Deserialize)]
            struct Updated {
                uri: String,
            }
            let updated: Updated = raw
                .as_deref()
                .map(|r| serde_json::from_str(r.get()))
                .transpose()
                .map_err(|e| Failure::json(format!("{method} params: {e}")))?
                .ok_or_else(|| Failure::json(format!("{method} needs params with a uri")))?;
            self.session
                .notify_resource_updated(&updated.uri)
                .map_err(send_failure)?;
        } else {
            self.session
                .send_notification_raw(method, raw.as_deref())
                .map_err(send_failure)?;
        }
        self.pump();
        Ok(mcp_status::MCP_OK)
    }
}

impl stream::End for Server {
    type Role = mcp_sansio::session::role::Server;

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

/// Runs `body` on the server behind `server`
///
/// # Safety
/// `server` is NULL or a live handle (see the header).
unsafe fn with(server: *mut McpServer, body: impl FnOnce(&mut Server) -> Outcome) -> mcp_status {
    crate::boundary::guard(|| {
        // SAFETY: forwarded from this function's caller.
        let handle = unsafe { handle_mut(server, "server") }?;
        Ok(handle.0.run(body))
    })
}

// --- the exported functions ------------------------------------------------------------------

/// Creates a server session.
///
/// `config_json` (`len` bytes of UTF-8, not necessarily NUL-terminated; borrowed for the call
/// only) is a JSON object: `{"name": "..", "version": "..", "title"?: "..", "instructions"?:
/// "..", "capabilities"?: {..}, "era"?: "both" | "legacy" | "modern", "extraMethods"?:
/// ["..."], "requestTimeoutMs"?: N}`. `capabilities` defaults to `{"tools": {}, "logging":
/// {}}`; `era` defaults to `"both"` (one session serves a 2025 client's `initialize` and a
/// 2026 client's per-request `_meta`); `extraMethods` are methods outside the spec the
/// application answers (others get -32601); `requestTimeoutMs` (0: none) applies to requests
/// the server sends. An unknown key is an error naming it.
///
/// `now_ms` is the caller's monotonic clock in milliseconds (any origin); every later
/// `now_ms` of this handle uses the same clock.
///
/// Returns a new handle owned by the caller (free it with `mcp_server_free`), or NULL on
/// error (`mcp_last_error()` says why: NULL config, bad UTF-8, bad JSON, an unknown key).
///
/// # Safety
/// `config_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_new(
    config_json: *const c_char,
    len: usize,
    now_ms: u64,
) -> *mut McpServer {
    guard_value(|| {
        if config_json.is_null() {
            return Err(Failure::null("config_json"));
        }
        // SAFETY: the caller passes `len` readable bytes at `config_json`.
        let json = unsafe { text(config_json, len, "config_json") }?;
        Server::new(json, now_ms)
    })
    .map_or(std::ptr::null_mut(), |server| {
        Box::into_raw(Box::new(McpServer(Guarded::new(server))))
    })
}

/// Frees a server session and everything it lent out (the pointers from `poll_transmit` and
/// `poll_event` become invalid). NULL is a no-op. The handle must not be used afterwards.
///
/// # Safety
/// `server` is NULL or a handle from `mcp_server_new` not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_free(server: *mut McpServer) {
    if server.is_null() {
        return;
    }
    // SAFETY: a non-NULL handle comes from `mcp_server_new` (`Box::into_raw`) and is freed
    // once, by the caller's contract.
    let boxed = unsafe { Box::from_raw(server) };
    // A panic while dropping (a bug) must not cross the boundary: the memory leaks instead.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(boxed)));
}

/// Registers a tool: `tool_json` (`len` bytes of UTF-8, borrowed for the call) is a `Tool` of
/// the MCP schema: `{"name": "..", "description"?: "..", "inputSchema": {"type": "object",
/// ..}, ..}`.
///
/// The library answers `tools/list` itself (paginated), refuses a `tools/call` of an unknown
/// tool and answers arguments that fail the tool's `inputSchema` with an `isError` result; a
/// valid `tools/call` arrives as a `request` event with `"name"` and `"arguments"`.
///
/// Returns `MCP_OK`; `MCP_ERR_JSON` for a malformed tool, an invalid name or input schema;
/// `MCP_ERR_STATE` for a name already registered; `MCP_ERR_NULL`, `MCP_ERR_UTF8`.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `tool_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_add_tool(
    server: *mut McpServer,
    tool_json: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            if tool_json.is_null() {
                return Err(Failure::null("tool_json"));
            }
            let json = text(tool_json, len, "tool_json")?;
            s.add_tool(json)
        })
    }
}

/// Feeds bytes read from the client (stdio: newline-delimited JSON; any chunking, partial
/// lines are kept until their newline). `data` is borrowed for the call; NULL is allowed
/// with `len` 0.
///
/// Never fails on what the peer sent: bad input becomes error replies or events. Returns
/// `MCP_OK`, or `MCP_ERR_NULL` / `MCP_ERR_PANIC`.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `data` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_handle_bytes(
    server: *mut McpServer,
    now_ms: u64,
    data: *const u8,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            stream::handle_bytes(s, now_ms, bytes(data, len, "data")?)
        })
    }
}

/// The client closed its side (EOF on stdin). Requests the client sent may still be
/// answered; a `closed` event follows once the last one is.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_handle_eof(server: *mut McpServer, now_ms: u64) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe { with(server, |s| stream::handle_eof(s, now_ms)) }
}

/// Fires every timer due at or before `now_ms` (call it when the deadline of
/// `mcp_server_poll_timeout` has passed; calling it early or twice is harmless).
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_handle_timeout(
    server: *mut McpServer,
    now_ms: u64,
) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe { with(server, |s| stream::handle_timeout(s, now_ms)) }
}

/// The next deadline, in the caller's milliseconds: `MCP_OK` with `*deadline_ms` set (it may
/// be in the past: call `mcp_server_handle_timeout` at once), or `MCP_NONE` when no timer is
/// armed (`*deadline_ms` untouched). Re-read it after every call that brings `now_ms`.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `deadline_ms` is NULL or valid for writing one `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_poll_timeout(
    server: *mut McpServer,
    deadline_ms: *mut u64,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(server, |s| stream::poll_timeout(s, deadline_ms)) }
}

/// The bytes to write to the client: `MCP_OK` with `*data`/`*len` set to everything queued,
/// or `MCP_NONE` (`*data` NULL, `*len` 0).
///
/// The bytes are borrowed from the handle and stay valid until the next
/// `mcp_server_poll_transmit` or `mcp_server_free` on it (other calls leave them alone);
/// write them (or copy what a short write left) before that.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `data` is NULL or valid for writing one `*const u8`.
/// `len` is NULL or valid for writing one `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_poll_transmit(
    server: *mut McpServer,
    data: *mut *const u8,
    len: *mut usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(server, |s| stream::poll_transmit(s, data, len)) }
}

/// The next event: `MCP_OK` with `*json`/`*len` set to one JSON object (UTF-8, `len` bytes,
/// followed by a NUL byte not counted in `len`), or `MCP_NONE` (`*json` NULL, `*len` 0).
///
/// The text is borrowed from the handle and stays valid until the next `mcp_server_poll_event`
/// or `mcp_server_free` on it: other calls (answering the event too) leave it alone.
/// Polling events may queue bytes to transmit (answers the library gives itself): poll
/// transmits after events.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `json` is NULL or valid for writing one `*const c_char`.
/// `len` is NULL or valid for writing one `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_poll_event(
    server: *mut McpServer,
    json: *mut *const c_char,
    len: *mut usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe { with(server, |s| stream::poll_event(s, json, len)) }
}

/// Answers request `request` (the number of its `request` event) with `result_json`
/// (`len` bytes of UTF-8, a JSON object such as `{"content": [{"type": "text", "text":
/// ".."}]}`; borrowed for the call).
///
/// A request stays open until it is answered or until `mcp_server_poll_event` hands out its
/// `cancelled` event (or the `closed` event). Answering a request the client cancelled (or
/// after the session closed) before that event was polled returns `MCP_OK` and sends
/// nothing.
///
/// Returns `MCP_OK`; `MCP_ERR_STATE` when the request is not open (unknown, answered
/// already, its `cancelled` or the `closed` event polled); `MCP_ERR_JSON` when `result_json`
/// is not a JSON object (the request stays open).
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `result_json` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_respond(
    server: *mut McpServer,
    now_ms: u64,
    request: u64,
    result_json: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            if result_json.is_null() {
                return Err(Failure::null("result_json"));
            }
            let json = text(result_json, len, "result_json")?;
            s.respond(now_ms, request, json)
        })
    }
}

/// Answers request `request` with a JSON-RPC error `code` and `message` (`len` bytes of
/// UTF-8; NULL with `len` 0 is an empty message; borrowed for the call).
///
/// Returns `MCP_OK`, or `MCP_ERR_STATE` when the request is not open (as for
/// `mcp_server_respond`).
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `message` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_respond_error(
    server: *mut McpServer,
    now_ms: u64,
    request: u64,
    code: i64,
    message: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            let message = text(message, len, "message")?;
            s.respond_error(now_ms, request, code, message)
        })
    }
}

/// Reports progress on open request `request`: `progress` (finite, increasing with every
/// report), `total` (NaN: none) and an optional `message` (`len` bytes of UTF-8; NULL: none).
///
/// Only when the client asked for progress (its `request` event says `"wantsProgress":
/// true`). Returns `MCP_OK`; `MCP_ERR_STATE` when the request is not open, the client did not
/// ask, or the value does not increase or is not finite; `MCP_ERR_BLOCKED` never (progress is
/// dropped rather than blocking).
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `message` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_progress(
    server: *mut McpServer,
    now_ms: u64,
    request: u64,
    progress: f64,
    total: f64,
    message: *const c_char,
    len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            let message = optional_text(message, len, "message")?;
            let mut report = Progress::new(progress);
            if !total.is_nan() {
                report = report.total(total);
            }
            if let Some(message) = message {
                report = report.message(message);
            }
            s.progress(now_ms, request, report)
        })
    }
}

/// Sends a notification `method` (`method_len` bytes of UTF-8) with `params_json`
/// (`params_len` bytes, a JSON object; NULL: no params), e.g. `notifications/message` with
/// `{"level": "info", "data": ".."}`. A `notifications/message` below the level the client
/// set with `logging/setLevel` (default `info`) is held back and still returns `MCP_OK`.
/// `notifications/{tools,prompts,resources}/list_changed` (params ignored; the server must
/// declare `listChanged` for that list, else `MCP_ERR_STATE`) and
/// `notifications/resources/updated` (`{"uri": ".."}`) go only to the clients that
/// subscribed: a 2025 session, or the 2026 `subscriptions/listen` streams that asked.
///
/// Returns `MCP_OK`; `MCP_ERR_STATE` when the session is closed or the method is one the
/// library sends itself (`progress`, `cancelled`); `MCP_ERR_BLOCKED` when too many bytes wait
/// in `poll_transmit`; `MCP_ERR_JSON` for params that are not an object.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
/// `method` is NULL or points to `method_len` readable bytes.
/// `params_json` is NULL or points to `params_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_notify(
    server: *mut McpServer,
    now_ms: u64,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
) -> mcp_status {
    // SAFETY: the caller's pointers, as documented above.
    unsafe {
        with(server, |s| {
            if method.is_null() {
                return Err(Failure::null("method"));
            }
            let method = text(method, method_len, "method")?;
            let params = optional_text(params_json, params_len, "params_json")?;
            s.notify(now_ms, method, params)
        })
    }
}

/// Closes the session now (the server shuts down): every open request is dropped
/// unanswered, a `closed` event (`"reason": "local"`) follows. Bytes already queued can
/// still be polled. Closing a closed session is a no-op returning `MCP_OK`.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_close(server: *mut McpServer, now_ms: u64) -> mcp_status {
    // SAFETY: the caller's pointer, as documented above.
    unsafe {
        with(server, |s| {
            let now = s.clock.at(now_ms);
            s.session.close(now);
            s.pump();
            Ok(mcp_status::MCP_OK)
        })
    }
}

/// Whether the caller should read more input from the client: 1 yes, 0 not now (too many
/// events or answers wait: drain them first, and `mcp_server_poll_timeout` becomes due when
/// the session can take more), negative (`MCP_ERR_NULL`, `MCP_ERR_PANIC`) for a NULL or
/// poisoned handle.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_wants_read(server: *const McpServer) -> c_int {
    // SAFETY: the caller's pointer, as documented above.
    let Some(handle) = (unsafe { handle_ref(server) }) else {
        return mcp_status::MCP_ERR_NULL as c_int;
    };
    handle
        .0
        .read(|s| c_int::from(s.session.wants_read() && s.outputs.queued() < s.max_events))
        .unwrap_or(mcp_status::MCP_ERR_PANIC as c_int)
}

/// Whether the session has closed (its `closed` event is queued or was polled): 1 closed,
/// 0 open, negative (`MCP_ERR_NULL`, `MCP_ERR_PANIC`) for a NULL or poisoned handle, which
/// a loop `while (!mcp_server_is_closed(s))` also leaves.
///
/// # Safety
/// `server` is NULL or a live handle from `mcp_server_new`, used by one thread at a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_server_is_closed(server: *const McpServer) -> c_int {
    // SAFETY: the caller's pointer, as documented above.
    let Some(handle) = (unsafe { handle_ref(server) }) else {
        return mcp_status::MCP_ERR_NULL as c_int;
    };
    handle
        .0
        .read(|s| c_int::from(s.session.is_closed()))
        .unwrap_or(mcp_status::MCP_ERR_PANIC as c_int)
}

#[cfg(feature = "test-hooks")]
impl McpServer {
    /// Test hook: panics inside the boundary guard, as a bug would
    pub(crate) fn panic_inside(&mut self) -> mcp_status {
        self.0.run(|_| panic!("test hook: a deliberate panic"))
    }
}
