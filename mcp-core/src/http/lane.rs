//! The 2026 wire's fast path: a stateless request served where it arrived
//!
//! A 2026 request is self-contained, so it needs no session of the server's: a [`Lane`]
//! is a server session of its own that one connection (or one task) uses for one request
//! at a time, with the endpoint's rules ([`Lanes`], shared by every lane and the
//! [`HttpServer`](super::HttpServer)). The binding keeps a lane beside each connection and
//! runs the request's handler there, with no hop to the task that owns the 2025 sessions.
//!
//! The rules are the server's: the same first look ([`classify`](super::classify)), the same
//! validation (FIXTURES §2.1.2), the same scope check, the same in-flight caps (one set of
//! counters for the endpoint, [`SharedLoad`]), the same answer (a JSON body when the answer
//! is the first message, with the status of its error code; SSE after progress and logs;
//! a keepalive comment that opens the stream on a quiet long request), and closing the
//! response cancels the request.
//!
//! What a lane does not take ([`Taken::Elsewhere`]) goes to the [`HttpServer`]: GET and
//! DELETE, the 2025 wire, and the 2026 requests that need the server's shared session:
//! `tasks/*`, `subscriptions/listen`, and a `tools/call` that may become a task (both the
//! server and the client declare the tasks extension): tasks outlive their request.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::classify::{self, Classified, Wire};
use super::config::HttpConfig;
use super::headers::Headers;
use super::load::{self, SharedLoad};
use super::modern;
use super::protected::{RequiredScopes, ResourceServer};
use super::response::{HttpResponse, ResponseHead, error_code, is_request, modern_error_status};
use super::source::{Source, Ticket};
use super::{HeaderParam, validate_tool_headers};
use crate::codec::sse::{encode_comment, encode_event};
use crate::jsonrpc::{self, Message, RequestId};
use crate::schema::Tool;
use crate::schema::has_capability;
use crate::session::{
    ParamsWithMeta, Relation, ServerConfig, ServerEvent, ServerSession, TASKS_EXTENSION,
};

/// What the endpoint's lanes share: the HTTP rules, the shared 2026 session configuration,
/// the tools' header mirrors and scopes, and the in-flight counters; cheap to clone
///
/// Made by [`HttpServer::lanes`](super::HttpServer::lanes), so its counters are the
/// server's. Changes (a tool set or removed, new scopes) take effect for the next request
/// of every lane.
#[derive(Debug, Clone)]
pub struct Lanes {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: Arc<HttpConfig>,
    session_config: Arc<ServerConfig>,
    modern_versions: Vec<&'static str>,
    /// Whether the server declares the tasks extension (a 2026 `tools/call` may then
    /// become a task, which only the shared session keeps)
    tasks: bool,
    load: SharedLoad,
    rules: Mutex<Arc<Rules>>,
    /// Counts the changes of `rules`: a lane reads them again only after one
    generation: AtomicU64,
    wall_anchor: Mutex<Option<(Instant, u64)>>,
}

/// What changes while the server runs
#[derive(Debug, Default, Clone)]
pub(crate) struct Rules {
    pub(crate) tool_params: HashMap<String, Vec<HeaderParam>>,
    pub(crate) scopes: Option<Arc<dyn RequiredScopes>>,
    pub(crate) resource_server: Option<Arc<ResourceServer>>,
}

impl Rules {
    /// The `403` for a request whose principal lacks the scopes of the entry it names
    pub(crate) fn scope_denied(
        &self,
        source: &Source,
        request: &jsonrpc::Request,
    ) -> Option<HttpResponse> {
        let rules = self.scopes.as_ref()?;
        let member = modern::name_member(&request.method)?;
        let params: serde_json::Value =
            serde_json::from_str(request.params.as_deref()?.get()).ok()?;
        let name = params.get(member)?.as_str()?;
        let needed = rules.required(&request.method, name)?;
        let granted = source.principal.as_ref().map_or(&[][..], |p| &p.scopes[..]);
        let denial = match &self.resource_server {
            Some(rs) => rs.check_scopes(granted, needed)?,
            None if needed.iter().all(|n| granted.contains(n)) => return None,
            None => super::protected::insufficient_scope(needed),
        };
        Some(denial.into())
    }

    /// Records a tool's `Mcp-Param-*` mirrors (none for a tool with invalid annotations)
    pub(crate) fn set_tool(&mut self, tool: &Tool) {
        match validate_tool_headers(tool) {
            Ok(params) if !params.is_empty() => {
                self.tool_params.insert(tool.name.clone(), params);
            }
            _ => {
                self.tool_params.remove(&tool.name);
            }
        }
    }
}

impl Lanes {
    /// What a 2026 request passes before its session sees it, on a lane or on the
    /// server's shared session alike: the FIXTURES §2.1.2 validation against `rules`' header
    /// mirrors, the scopes of the entry it names, and the in-flight caps (the place it holds
    /// is `Ok`'s ticket, released when it ends, beside the params as the session reads them
    /// when the validation read them already); `Err` is the answer
    pub(crate) fn admit(
        &self,
        rules: &Rules,
        source: &Source,
        headers: &(impl Headers + ?Sized),
        request: &jsonrpc::Request,
    ) -> Result<(Ticket, Option<ParamsWithMeta>), HttpResponse> {
        let shared = &self.inner;
        let tool_params = |name: &str| rules.tool_params.get(name).cloned();
        let parsed = modern::validate(request, headers, &shared.modern_versions, &tool_params)?;
        if let Some(response) = rules.scope_denied(source, request) {
            return Err(response);
        }
        let ticket = source.ticket();
        let mut load = shared.load.lock();
        load.take(&shared.config, &ticket, None, Some(&request.id))?;
        Ok((ticket, parsed))
    }

    pub(crate) fn new(
        config: Arc<HttpConfig>,
        session_config: Arc<ServerConfig>,
        modern_versions: Vec<&'static str>,
        load: SharedLoad,
        rules: Rules,
    ) -> Self {
        let tasks = has_capability(
            &session_config.capabilities,
            &["extensions", TASKS_EXTENSION],
        );
        Self {
            inner: Arc::new(Shared {
                config,
                session_config,
                modern_versions,
                tasks,
                load,
                rules: Mutex::new(Arc::new(rules)),
                generation: AtomicU64::new(0),
                wall_anchor: Mutex::new(None),
            }),
        }
    }

    pub(crate) fn rules(&self) -> Arc<Rules> {
        Arc::clone(
            &self
                .inner
                .rules
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn change(&self, f: impl FnOnce(&mut Rules)) {
        let mut rules = self
            .inner
            .rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(Arc::make_mut(&mut rules));
        self.inner.generation.fetch_add(1, Ordering::Release);
    }

    /// The rules as a lane holds them: read again only when they changed since `held`
    fn refresh(&self, held: &mut (u64, Arc<Rules>)) {
        let generation = self.inner.generation.load(Ordering::Acquire);
        if held.0 != generation {
            // Read under the lock: a change made meanwhile bumps the count again after it.
            let rules = self.rules();
            *held = (generation, rules);
        }
    }

    /// Records the `Mcp-Param-*` headers a tool's calls must carry (see
    /// [`HttpServer::set_tool`](super::HttpServer::set_tool))
    pub fn set_tool(&self, tool: &Tool) {
        self.change(|r| r.set_tool(tool));
    }

    /// Forgets a tool's header mirrors
    pub fn remove_tool(&self, name: &str) {
        self.change(|r| {
            r.tool_params.remove(name);
        });
    }

    /// The scopes particular entries need (see
    /// [`HttpServer::set_required_scopes`](super::HttpServer::set_required_scopes))
    pub fn set_required_scopes(&self, scopes: Option<Arc<dyn RequiredScopes>>) {
        self.change(|r| r.scopes = scopes);
    }

    /// The protection that words the `403` of a missing scope
    pub fn set_resource_server(&self, rules: Option<Arc<ResourceServer>>) {
        self.change(|r| r.resource_server = rules);
    }

    /// The wall-clock anchor every lane's session gets (task timestamps, sealed-state
    /// expiry), as [`HttpServer::anchor_wall_clock`](super::HttpServer::anchor_wall_clock)
    pub fn anchor_wall_clock(&self, now: Instant, unix_ms: u64) {
        *self
            .inner
            .wall_anchor
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((now, unix_ms));
    }

    /// The HTTP rules
    pub fn config(&self) -> &HttpConfig {
        &self.inner.config
    }

    /// A lane, made at `now`
    pub fn lane(&self, now: Instant) -> Lane {
        let mut session = ServerSession::new(Arc::clone(&self.inner.session_config), now);
        let anchor = *self
            .inner
            .wall_anchor
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((at, unix_ms)) = anchor {
            session.anchor_wall_clock(at, unix_ms);
        }
        Lane {
            rules: (self.inner.generation.load(Ordering::Acquire), self.rules()),
            lanes: self.clone(),
            session,
            current: None,
            outputs: VecDeque::new(),
            dirty: false,
            now,
            buf: Vec::new(),
        }
    }
}

/// What [`Lane::handle_request`] did with a request
#[derive(Debug)]
#[non_exhaustive]
pub enum Taken {
    /// Write this response; the lane is free again
    Complete(HttpResponse),
    /// The request runs on the lane: its session has events ([`Lane::poll_event`]) and the
    /// response comes from [`Lane::poll_output`]
    Open,
    /// Not a request for a lane: give it to the [`HttpServer`](super::HttpServer) (nothing
    /// was counted or changed)
    Elsewhere,
}

/// A piece of a lane's response, from [`Lane::poll_output`]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaneOutput {
    /// The whole response (the answer alone, as JSON); the lane is free again
    Complete(HttpResponse),
    /// The status and headers of an event stream; always first
    Head(ResponseHead),
    /// Body bytes (the JSON answer, or whole SSE events)
    Body(Vec<u8>),
    /// The event stream is complete; the lane is free again
    End,
}

/// How the request's response writes
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No head yet: the answer alone goes as JSON, anything before it opens SSE (if the
    /// client accepts it; else it is dropped)
    Deferred {
        sse: bool,
    },
    Sse,
}

/// The request a lane serves
#[derive(Debug)]
struct Current {
    id: RequestId,
    ticket: Ticket,
    mode: Mode,
    quiet_since: Instant,
}

/// One server session serving 2026 requests one at a time, for one connection or task
///
/// The binding's loop, while a request is [`Open`](Taken::Open): hand the session's events
/// to the application ([`poll_event`](Self::poll_event),
/// [`session_mut`](Self::session_mut) to answer), write what
/// [`poll_output`](Self::poll_output) gives until [`LaneOutput::End`], sleep until
/// [`poll_timeout`](Self::poll_timeout), and call [`handle_closed`](Self::handle_closed)
/// if the client goes away first. Dropping a lane with a request open releases its place
/// in the in-flight caps.
#[derive(Debug)]
pub struct Lane {
    lanes: Lanes,
    /// The rules as of the count of changes that came with them
    rules: (u64, Arc<Rules>),
    session: ServerSession,
    current: Option<Current>,
    outputs: VecDeque<LaneOutput>,
    /// The application touched the session: drain it before the next output
    dirty: bool,
    now: Instant,
    buf: Vec<u8>,
}

impl Lane {
    /// Serves one HTTP request, as [`HttpServer::handle_request`](super::HttpServer::handle_request)
    /// would (a lane with a request open sends every other one [`Elsewhere`](Taken::Elsewhere))
    pub fn handle_request(
        &mut self,
        now: Instant,
        source: &Source,
        method: &str,
        headers: &(impl Headers + ?Sized),
        body: &[u8],
    ) -> Taken {
        if method != "POST" || self.current.is_some() {
            return Taken::Elsewhere;
        }
        self.tick(now);
        let shared = &self.lanes.inner;
        let (request, accepts) = match classify::classify(&shared.config, method, headers, body) {
            Err(response) => return Taken::Complete(response),
            Ok(Classified::Post {
                wire: Wire::Stateless,
                message,
                accepts,
            }) => match message {
                Message::Request(request) => (request, accepts),
                // A 2026 client has nothing to notify or answer.
                _ => return Taken::Complete(HttpResponse::empty(202)),
            },
            Ok(_) => return Taken::Elsewhere,
        };
        if self.needs_shared(&request) {
            return Taken::Elsewhere;
        }
        self.lanes.refresh(&mut self.rules);
        let (ticket, parsed) = match self.lanes.admit(&self.rules.1, source, headers, &request) {
            Ok(admitted) => admitted,
            Err(response) => return Taken::Complete(response),
        };
        self.current = Some(Current {
            id: request.id.clone(),
            ticket,
            mode: Mode::Deferred { sse: accepts.sse },
            quiet_since: self.now,
        });
        self.session
            .handle_request_as(self.now, body, request, parsed, source.caller(None));
        self.drain();
        Taken::Open
    }

    /// Whether the request needs the server's shared session: its tasks and listen streams
    fn needs_shared(&self, request: &jsonrpc::Request) -> bool {
        match request.method.as_str() {
            "subscriptions/listen" => true,
            m if m.starts_with("tasks/") => true,
            // A call the client lets become a task (the text test is conservative: the
            // shared session decides).
            "tools/call" => {
                self.lanes.inner.tasks
                    && request
                        .params
                        .as_deref()
                        .is_some_and(|p| p.get().contains(TASKS_EXTENSION))
            }
            _ => false,
        }
    }

    /// The lane's session, for the application to answer its events (the lane drains what
    /// it writes before the next [`poll_output`](Self::poll_output))
    pub fn session_mut(&mut self) -> &mut ServerSession {
        self.dirty = true;
        &mut self.session
    }

    /// The next event of the session (the request for a handler, a cancellation)
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.session.poll_event()
    }

    /// The next piece of the response
    pub fn poll_output(&mut self) -> Option<LaneOutput> {
        if self.dirty {
            self.drain();
        }
        self.outputs.pop_front()
    }

    /// Whether a request is open on the lane
    pub fn is_open(&self) -> bool {
        self.current.is_some()
    }

    /// The session's requests whose handlers have not answered (a request whose client
    /// left counts until its handler stops)
    pub fn in_flight(&self) -> usize {
        self.session.inbound_in_flight()
    }

    /// The client closed the response before its end: the request is cancelled (the
    /// session emits [`ServerEvent::Cancelled`]) and the lane is free again
    pub fn handle_closed(&mut self, now: Instant) {
        self.tick(now);
        let Some(current) = self.current.take() else {
            return;
        };
        self.lanes.inner.load.lock().release(&current.ticket);
        self.outputs.clear();
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": current.id,
                "reason": "the client closed the response stream",
            },
        })
        .to_string();
        self.session.handle_message(self.now, message.as_bytes());
        self.drain();
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due: the session's timers, and the
    /// keepalive of a quiet request
    pub fn poll_timeout(&self) -> Option<Instant> {
        let keepalive = self.current.as_ref().and_then(|c| {
            let can_sse = matches!(c.mode, Mode::Sse | Mode::Deferred { sse: true });
            self.lanes
                .inner
                .config
                .keepalive
                .filter(|_| can_sse)
                .map(|k| c.quiet_since + k)
        });
        [self.session.poll_timeout(), keepalive]
            .into_iter()
            .flatten()
            .min()
    }

    /// A deadline passed
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tick(now);
        if self.session.poll_timeout().is_some_and(|t| t <= self.now) {
            self.session.handle_timeout(self.now);
            self.drain();
        }
        let keepalive = self.lanes.inner.config.keepalive;
        let now = self.now;
        let Some(current) = self.current.as_mut() else {
            return;
        };
        let sse = matches!(current.mode, Mode::Sse | Mode::Deferred { sse: true });
        if let Some(k) = keepalive.filter(|_| sse)
            && current.quiet_since + k <= now
        {
            if current.mode != Mode::Sse {
                self.outputs.push_back(LaneOutput::Head(sse_head()));
                current.mode = Mode::Sse;
            }
            let mut data = Vec::new();
            encode_comment(&mut data, "keepalive");
            self.outputs.push_back(LaneOutput::Body(data));
            current.quiet_since = now;
        }
    }

    /// Routes what the session wrote to the response
    fn drain(&mut self) {
        self.dirty = false;
        loop {
            self.buf.clear();
            let Some(t) = self.session.poll_transmit(&mut self.buf) else {
                break;
            };
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
            }
            let answer = match t.relation {
                Relation::Answer(_) => true,
                Relation::During(_) => false,
                // Nowhere to go: list changes travel on listen streams.
                _ => continue,
            };
            if self.current.is_none() || (!answer && is_request(&self.buf)) {
                // Late (the client left), or a server request: never on a 2026 response.
                continue;
            }
            let message = std::mem::take(&mut self.buf);
            self.write(message, answer);
        }
    }

    /// Writes one message of the request's on its response
    fn write(&mut self, message: Vec<u8>, answer: bool) {
        let config = &self.lanes.inner.config;
        let current = self.current.as_mut().expect("checked by the caller");
        current.quiet_since = self.now;
        if let Mode::Deferred { sse } = current.mode {
            if answer {
                // The answer alone: a JSON body, its status by error code.
                let status = error_code(&message).map_or(200, modern_error_status);
                let mut headers = vec![("Content-Type", "application/json".to_owned())];
                if status == 503 {
                    headers.push(("Retry-After", load::retry_after(config)));
                }
                self.outputs.push_back(LaneOutput::Complete(HttpResponse {
                    status,
                    headers,
                    body: message,
                }));
                self.release();
                return;
            }
            if !sse {
                // A JSON-only response cannot carry it.
                return;
            }
            current.mode = Mode::Sse;
            self.outputs.push_back(LaneOutput::Head(sse_head()));
        }
        let text = String::from_utf8(message).expect("the session writes UTF-8 JSON");
        let mut data = Vec::new();
        encode_event(&mut data, None, None, &text, None);
        self.outputs.push_back(LaneOutput::Body(data));
        if answer {
            self.release();
            self.outputs.push_back(LaneOutput::End);
        }
    }

    /// The answer went out: the lane is free
    fn release(&mut self) {
        if let Some(current) = self.current.take() {
            self.lanes.inner.load.lock().release(&current.ticket);
        }
    }

    fn tick(&mut self, now: Instant) {
        if now > self.now {
            self.now = now;
        }
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        if let Some(current) = self.current.take() {
            self.lanes.inner.load.lock().release(&current.ticket);
        }
    }
}

fn sse_head() -> ResponseHead {
    ResponseHead {
        status: 200,
        headers: vec![
            ("Content-Type", "text/event-stream".to_owned()),
            ("Cache-Control", "no-cache".to_owned()),
        ],
    }
}
