//! The client side of Streamable HTTP: the headers of each request, what a response means,
//! and when to reconnect an interrupted event stream
//!
//! [`HttpClient`] holds what the headers depend on: the negotiated version (2025 wire), the
//! session id the server assigned, and the `Mcp-Param-*` mirrors of each tool (2026 wire,
//! from `x-mcp-header`). For each message the client session transmits, send a POST with
//! [`HttpClient::post_headers`]; read the response with
//! [`HttpClient::handle_response`]; feed JSON bodies and SSE `data` payloads (decoded with
//! [`SseDecoder`]) to
//! [`Session::handle_message`](crate::Session::handle_message). When an event stream ends
//! before its answer, [`HttpClient::stream_ended`] arms a reconnection: at
//! [`HttpClient::poll_timeout`], GET with [`HttpClient::get_headers`] and the returned
//! `Last-Event-ID`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::headers::{
    Headers, LAST_EVENT_ID, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
};
use super::modern::name_member;
use super::{HeaderParam, encode_header_value, filter_tools_list, validate_tool_headers};
use crate::codec::sse::SseDecoder;
use crate::schema::{ListToolsResult, Tool, meta};
use crate::version::ProtocolVersion;

/// The reconnection delay when the server sent no `retry:` field
pub const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// What an HTTP response to a POST, GET or DELETE means
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseKind {
    /// 202: the notification or response was accepted; no body
    Accepted,
    /// A JSON body holding one message (also the error bodies of 400 and 404 on the 2026
    /// wire): feed it to the session
    Json,
    /// An event stream: feed each event's non-empty `data` to the session
    EventStream,
    /// 404 on a session: the server ended it; start over with `initialize` (the session id
    /// is forgotten). [`ClientTransport`](super::ClientTransport) does so itself.
    SessionExpired,
    /// 405: the server offers no GET stream (or no DELETE); not an error
    NotAllowed,
    /// Any other status: the request failed at the HTTP level
    Failed {
        /// The status
        status: u16,
    },
}

/// A planned reconnection of an interrupted event stream
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reconnect {
    at: Instant,
    last_event_id: String,
}

/// Client-side Streamable HTTP state: headers to send and reconnections to make
#[derive(Debug, Default, Clone)]
pub struct HttpClient {
    version: Option<ProtocolVersion>,
    session_id: Option<String>,
    tool_params: HashMap<String, Vec<HeaderParam>>,
    reconnects: Vec<Reconnect>,
}

impl HttpClient {
    /// A client with nothing negotiated yet
    pub fn new() -> Self {
        Self::default()
    }

    /// The session id the server assigned (2025 wire), once known
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The version set with [`set_version`](Self::set_version)
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// Sets the negotiated version (2025 wire: after `initialize`, from
    /// [`Session::version`](crate::Session::version)); sent as `MCP-Protocol-Version` on every
    /// later request
    pub fn set_version(&mut self, version: ProtocolVersion) {
        self.version = Some(version);
    }

    /// Reads a `tools/list` result: drops tools whose `x-mcp-header` annotations are invalid
    /// (returned, to log) and remembers which arguments the others mirror into headers
    pub(crate) fn observe_tools(&mut self, list: &mut ListToolsResult) -> Vec<super::ToolWarning> {
        let warnings = filter_tools_list(list);
        for tool in &list.tools {
            self.observe_tool(tool);
        }
        warnings
    }

    /// Remembers the `Mcp-Param-*` mirrors of one valid tool
    pub fn observe_tool(&mut self, tool: &Tool) {
        match validate_tool_headers(tool) {
            Ok(params) if !params.is_empty() => {
                self.tool_params.insert(tool.name.clone(), params);
            }
            _ => {
                self.tool_params.remove(&tool.name);
            }
        }
    }

    /// The headers of a POST carrying `message` (one JSON-RPC message as the session wrote
    /// it)
    ///
    /// Always `Content-Type` and `Accept` (both response types). A message naming its
    /// version in `params._meta` is on the 2026 wire: `MCP-Protocol-Version` equal to it,
    /// `Mcp-Method`, `Mcp-Name` for `tools/call`, `prompts/get`, `resources/read` and the
    /// task methods, and `Mcp-Param-*` for the tool's mirrored arguments (base64 where
    /// needed; none for null or absent ones). Otherwise the 2025 wire:
    /// `MCP-Protocol-Version` once negotiated and `Mcp-Session-Id` once assigned.
    pub fn post_headers(&self, message: &[u8]) -> Vec<(String, String)> {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
        ];
        let parsed: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
        let method = parsed.get("method").and_then(Value::as_str);
        let params = parsed.get("params");
        let modern = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .and_then(Value::as_str);
        match modern {
            Some(version) => {
                headers.push((MCP_PROTOCOL_VERSION.to_owned(), version.to_owned()));
                if let Some(method) = method {
                    headers.push((MCP_METHOD.to_owned(), method.to_owned()));
                    let name = name_member(method)
                        .and_then(|member| params?.get(member))
                        .and_then(Value::as_str);
                    if let Some(name) = name {
                        let value = encode_header_value(&Value::String(name.to_owned()));
                        headers.push((MCP_NAME.to_owned(), value.unwrap_or_default()));
                    }
                    if method == "tools/call"
                        && let Some(name) = name
                    {
                        self.param_headers(name, params, &mut headers);
                    }
                }
            }
            None => {
                if let Some(v) = self.version {
                    headers.push((MCP_PROTOCOL_VERSION.to_owned(), v.as_str().to_owned()));
                }
                if let Some(sid) = &self.session_id {
                    headers.push((MCP_SESSION_ID.to_owned(), sid.clone()));
                }
            }
        }
        headers
    }

    fn param_headers(&self, tool: &str, params: Option<&Value>, out: &mut Vec<(String, String)>) {
        let Some(mirrors) = self.tool_params.get(tool) else {
            return;
        };
        let arguments = params.and_then(|p| p.get("arguments"));
        for mirror in mirrors {
            let value = arguments.and_then(|a| a.get(&mirror.property));
            if let Some(encoded) = value.and_then(encode_header_value) {
                out.push((mirror.header.clone(), encoded));
            }
        }
    }

    /// The headers of the standalone GET stream, or of a resumption after `Last-Event-ID`
    pub fn get_headers(&self, last_event_id: Option<&str>) -> Vec<(String, String)> {
        let mut headers = vec![("Accept".to_owned(), "text/event-stream".to_owned())];
        self.session_headers(&mut headers);
        if let Some(id) = last_event_id {
            headers.push((LAST_EVENT_ID.to_owned(), id.to_owned()));
        }
        headers
    }

    /// The headers of the DELETE that ends the session; `None` without a session
    pub fn delete_headers(&self) -> Option<Vec<(String, String)>> {
        self.session_id.as_ref()?;
        let mut headers = Vec::new();
        self.session_headers(&mut headers);
        Some(headers)
    }

    fn session_headers(&self, headers: &mut Vec<(String, String)>) {
        if let Some(v) = self.version {
            headers.push((MCP_PROTOCOL_VERSION.to_owned(), v.as_str().to_owned()));
        }
        if let Some(sid) = &self.session_id {
            headers.push((MCP_SESSION_ID.to_owned(), sid.clone()));
        }
    }

    /// Reads a response's status and headers: learns the session id (from the `initialize`
    /// answer), forgets it on 404, and says how to read the body
    pub fn handle_response(
        &mut self,
        status: u16,
        headers: &(impl Headers + ?Sized),
    ) -> ResponseKind {
        let carried = self.session_id.is_some();
        self.response_to(status, headers, carried)
    }

    /// [`handle_response`](Self::handle_response) for a request that `carried` a session id
    /// or not: only a response to a request without one teaches the session id (a late
    /// answer on a session already forgotten does not bring it back)
    pub(crate) fn response_to(
        &mut self,
        status: u16,
        headers: &(impl Headers + ?Sized),
        carried: bool,
    ) -> ResponseKind {
        if status == 404 && carried && self.session_id.is_some() {
            self.forget_session();
            return ResponseKind::SessionExpired;
        }
        if let Some(sid) = headers.get(MCP_SESSION_ID)
            && !carried
            && self.session_id.is_none()
            && (200..300).contains(&status)
        {
            self.session_id = Some(sid.trim().to_owned());
        }
        let content = headers
            .get("Content-Type")
            .and_then(|c| c.split(';').next())
            .map(|c| c.trim().to_ascii_lowercase());
        match (status, content.as_deref()) {
            (202, _) => ResponseKind::Accepted,
            (405, _) => ResponseKind::NotAllowed,
            (200..=299, Some("text/event-stream")) => ResponseKind::EventStream,
            (_, Some("application/json")) => ResponseKind::Json,
            (200..=299, None) => ResponseKind::Accepted,
            (status, _) => ResponseKind::Failed { status },
        }
    }

    /// Forgets the session id and the reconnections armed on it (the server ended it)
    pub(crate) fn forget_session(&mut self) {
        self.session_id = None;
        self.reconnects.clear();
    }

    /// An event stream's body ended; `complete` says whether everything expected arrived
    /// (the answer of a POST stream; never for the standalone GET stream)
    ///
    /// If not, and the server gave the stream event ids, a reconnection is armed: after the
    /// server's `retry:` delay ([`DEFAULT_RETRY`] without one), GET with `Last-Event-ID`.
    /// Returns when.
    pub fn stream_ended(
        &mut self,
        now: Instant,
        decoder: &SseDecoder,
        complete: bool,
    ) -> Option<Instant> {
        if complete || self.session_id.is_none() {
            return None;
        }
        let last_event_id = decoder.last_event_id()?.to_owned();
        let delay = decoder.retry().map_or(DEFAULT_RETRY, Duration::from_millis);
        let at = now + delay;
        self.reconnects.push(Reconnect { at, last_event_id });
        Some(at)
    }

    /// When the next reconnection is due
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.reconnects.iter().map(|r| r.at).min()
    }

    /// The `Last-Event-ID` of a reconnection due at `now`, once per reconnection: GET with
    /// [`get_headers`](Self::get_headers) of it
    #[must_use]
    pub fn poll_reconnect(&mut self, now: Instant) -> Option<String> {
        let due = self.reconnects.iter().position(|r| r.at <= now)?;
        Some(self.reconnects.remove(due).last_event_id)
    }
}
