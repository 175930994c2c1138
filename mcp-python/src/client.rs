//! The client side: the `ClientSession` class

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::schema::method::{
    CallTool, CancelTask, Complete, GetPrompt, GetTask, ListPrompts, ListResourceTemplates,
    ListResources, ListTools, Method, Ping, ReadResource, SetLevel, Subscribe, SubscriptionsListen,
    Unsubscribe,
};
use mcp_sansio::schema::{
    CallToolParams, CompleteArgument, CompleteParams, GetPromptParams, MetaParams, PaginatedParams,
    ReadResourceParams, SetLevelParams, SubscribeParams, SubscriptionsListenParams, TaskIdParams,
    UnsubscribeParams,
};
use mcp_sansio::{
    CallError, ClientConfig, ClientEvent, ClientSession, CloseReason, EraMode, Implementation,
    InboundId, InputId, OutboundId, Pending, ProtocolVersion, RequestOptions, Responder, SendError,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::clock::Clock;
use crate::config::random_u64;
use crate::convert;
use crate::events::{self, classes};

/// One MCP connection, client side, in the sans-IO style
///
/// The handshake (or discovery) is queued at once: write `data_to_send()` first. Requests
/// sent before `Ready` raise `LocalProtocolError`.
#[pyclass(module = "mcp_sansio._core", name = "ClientSession")]
pub(crate) struct PyClientSession {
    pub(crate) session: ClientSession,
    pub(crate) clock: Clock,
    buf: Vec<u8>,
    outbound: HashMap<u64, OutboundId>,
    next_input: u64,
    inputs: HashMap<u64, InputId>,
    next_request: u64,
    inbound: HashMap<u64, Responder>,
    by_inbound: HashMap<InboundId, u64>,
    /// The last 401 or 403 the HTTP transport saw (set by `HttpClientTransport`)
    pub(crate) auth_note: Option<AuthNote>,
    /// The sentence of the `AuthorizationError` the session closed with, if that is why it
    /// closed
    close_error: Option<(AuthNote, String)>,
    /// `_meta` entries for the next request sent (`set_request_meta`): trace context,
    /// what a client middleware adds; the params' own entries win
    next_meta: Option<serde_json::Map<String, Value>>,
}

/// The last 401 or 403 an HTTP transport saw: a request that fails for want of
/// authorization raises `AuthorizationError`, one sentence naming the URL, the status and the
/// challenge (the core's words, with the URL and what to pass)
#[derive(Clone)]
pub(crate) struct AuthNote {
    /// 401 or 403
    pub(crate) status: u16,
    /// The `WWW-Authenticate` values, joined (empty: none)
    pub(crate) challenge: String,
    /// The server URL
    pub(crate) url: String,
    /// The application's headers carry an `Authorization` (a static token)
    pub(crate) static_authorization: bool,
}

/// The core's words for a request the authorization flow could not satisfy
const AUTH_FAILED: &str = "authorization failed: ";
/// The core's words for a 401 or 403 without OAuth configured
const NOT_CONFIGURED: &str = "this client has no authorization configured";

impl AuthNote {
    /// The sentence for a transport failure that is this refusal's, if it is one: the
    /// core's "the server answered HTTP 401 with WWW-Authenticate: ..." (no OAuth
    /// configured, or a challenge no flow answers) naming the URL and, without OAuth, what
    /// to pass; or its "authorization failed: ..." after the status and the challenge
    fn explain(&self, why: &str) -> Option<String> {
        let answered = format!("the server answered HTTP {}", self.status);
        let at = format!("the server at {} answered HTTP {}", self.url, self.status);
        if let Some(rest) = why.strip_prefix(&answered) {
            let hint = match (why.ends_with(NOT_CONFIGURED), self.static_authorization) {
                (false, _) => "",
                (true, false) => " (pass auth=OAuth(...) to connect_http)",
                (true, true) => {
                    " (it refused the Authorization given in headers=; pass auth=OAuth(...) to \
                     connect_http)"
                }
            };
            Some(format!("{at}{rest}{hint}"))
        } else if why.starts_with(AUTH_FAILED) {
            let challenge = if self.challenge.is_empty() {
                String::new()
            } else {
                format!(" with WWW-Authenticate: {}", self.challenge)
            };
            Some(format!("{at}{challenge}; {why}"))
        } else {
            None
        }
    }

    /// The `AuthorizationError` for the sentence `text`
    fn error<'py>(&self, py: Python<'py>, text: String) -> PyResult<Bound<'py, PyAny>> {
        let challenge = (!self.challenge.is_empty()).then_some(self.challenge.as_str());
        classes(py)?.authorization_error.bind(py).call1((
            text,
            self.status,
            challenge,
            self.url.as_str(),
        ))
    }
}

fn era(era: &str) -> PyResult<EraMode> {
    match era {
        "auto" => Ok(EraMode::Auto),
        "modern" => Ok(EraMode::Modern),
        "legacy" => Ok(EraMode::Legacy(ProtocolVersion::LATEST_LEGACY)),
        v => match ProtocolVersion::parse(v) {
            Some(ProtocolVersion::V2026_07_28) => Ok(EraMode::Modern),
            Some(v) => Ok(EraMode::Legacy(v)),
            None => Err(PyValueError::new_err(format!(
                "unknown era {v:?} (auto, modern, legacy or a protocol version)"
            ))),
        },
    }
}

impl PyClientSession {
    /// The core's id of the request in flight numbered `request_id`, if any
    pub(crate) fn outbound_id(&self, request_id: u64) -> Option<OutboundId> {
        self.outbound.get(&request_id).copied()
    }

    /// The exception for why a request of ours has no result: `AuthorizationError` for a
    /// 401 or 403 that could not be satisfied
    fn call_error<'py>(&self, py: Python<'py>, e: &CallError) -> PyResult<Bound<'py, PyAny>> {
        if let (CallError::Transport(why), Some(note)) = (e, &self.auth_note)
            && let Some(text) = note.explain(why)
        {
            return note.error(py, text);
        }
        events::call_error(py, e)
    }

    /// Sends a typed request (its params fitted to the version in use); its id
    fn request<M: Method>(
        &mut self,
        py: Python<'_>,
        params: M::Params,
        options: RequestOptions,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let params = match self.next_meta.take() {
            None => params,
            Some(extra) => with_meta::<M::Params>(params, extra)?,
        };
        let now = self.clock.instant(now);
        let sent = self.session.send_request::<M>(now, params, options);
        self.sent(py, sent.map(Pending::id))
    }

    /// Records a request that was sent; its id
    fn sent(&mut self, py: Python<'_>, sent: Result<OutboundId, SendError>) -> PyResult<u64> {
        let id = sent.map_err(|e| events::local_error(py, e))?;
        self.outbound.insert(id.wire_id(), id);
        Ok(id.wire_id())
    }
}

/// `params` with `extra` merged into its `_meta` (entries already there win); only when
/// `set_request_meta` gave entries, so a plain request pays nothing
fn with_meta<P: serde::Serialize + DeserializeOwned>(
    params: P,
    extra: serde_json::Map<String, Value>,
) -> PyResult<P> {
    let value = serde_json::to_value(params)
        .map_err(|e| PyValueError::new_err(format!("request params: {e}")))?;
    let value = merge_meta(Some(value), extra);
    serde_json::from_value(value).map_err(|e| PyValueError::new_err(format!("request _meta: {e}")))
}

/// Raw params (an object, or none) with `extra` merged into `_meta` (entries already there win)
fn merge_meta(params: Option<Value>, extra: serde_json::Map<String, Value>) -> Value {
    let mut params = match params {
        Some(Value::Object(m)) => m,
        Some(other) => return other,
        None => serde_json::Map::new(),
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(meta) = meta {
        for (k, v) in extra {
            meta.entry(k).or_insert(v);
        }
    }
    Value::Object(params)
}

/// Request options from the keyword arguments every request command takes
fn options(
    progress: bool,
    timeout: Option<f64>,
    as_task: bool,
    task_ttl: Option<f64>,
) -> RequestOptions {
    let mut o = RequestOptions::default();
    if progress {
        o = o.with_progress();
    }
    match timeout {
        Some(t) if t.is_infinite() && t > 0.0 => o = o.no_timeout(),
        Some(t) if t.is_finite() && t >= 0.0 => o = o.timeout(Duration::from_secs_f64(t)),
        _ => {}
    }
    if as_task {
        o = o.as_task(
            task_ttl
                .filter(|t| t.is_finite() && *t >= 0.0)
                .map(Duration::from_secs_f64),
        );
    }
    o
}

/// One command per request whose params come from (at most) one argument:
/// `name(argument: Type = default) => Method(params)`
macro_rules! with_requests {
    ($block:ident, $class:ty, [$(
        $(#[$doc:meta])*
        $name:ident($($arg:ident: $ty:ty $(= $default:tt)?)?) => $method:ident($params:expr);
    )*], { $($own:tt)* }) => {
        $block!($class, {
            $(
                $(#[$doc])*
                #[pyo3(signature = ($($arg $(= $default)?,)? *, now=None))]
                fn $name(
                    &mut self,
                    py: Python<'_>,
                    $($arg: $ty,)?
                    now: Option<f64>,
                ) -> PyResult<u64> {
                    self.request::<$method>(py, $params, RequestOptions::default(), now)
                }
            )*
            $($own)*
        });
    };
}

with_requests!(connection_pymethods, PyClientSession, [
    /// `tools/list`
    list_tools(cursor: Option<String> = None) => ListTools(page(cursor));
    /// `resources/list`
    list_resources(cursor: Option<String> = None) => ListResources(page(cursor));
    /// `resources/templates/list`
    list_resource_templates(cursor: Option<String> = None) => ListResourceTemplates(page(cursor));
    /// `resources/read`
    read_resource(uri: &str) => ReadResource(ReadResourceParams::new(uri));
    /// `prompts/list`
    list_prompts(cursor: Option<String> = None) => ListPrompts(page(cursor));
    /// `ping`
    ping() => Ping(MetaParams::new());
    /// `logging/setLevel` (legacy era)
    set_logging_level(level: &str) => SetLevel(SetLevelParams::new(crate::server::log_level(level)?));
    /// `resources/subscribe` (legacy era)
    subscribe_resource(uri: &str) => Subscribe(SubscribeParams::new(uri));
    /// `resources/unsubscribe` (legacy era)
    unsubscribe_resource(uri: &str) => Unsubscribe(UnsubscribeParams::new(uri));
    /// `tasks/get`
    get_task(task_id: &str) => GetTask(TaskIdParams::new(task_id));
    // Either era's `tasks/cancel` marker names this request (its result goes to Python
    // undecoded).
    /// `tasks/cancel`
    cancel_task(task_id: &str) => CancelTask(TaskIdParams::new(task_id));
], {
    #[new]
    #[pyo3(signature = (name, version, *, era="auto", capabilities=None, request_timeout=60.0,
        discover_timeout=3.0, max_message_size=None, now=None, tasks=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &str,
        version: &str,
        era: &str,
        capabilities: Option<&Bound<'_, PyAny>>,
        request_timeout: Option<f64>,
        discover_timeout: f64,
        max_message_size: Option<usize>,
        now: Option<f64>,
        tasks: bool,
    ) -> PyResult<Self> {
        let clock = Clock::new(py, now)?;
        let mut config = ClientConfig::new(Implementation::new(name, version));
        config.era = self::era(era)?;
        if let Some(caps) = typed::<Value>(capabilities, "capabilities")? {
            if !caps.is_object() {
                return Err(PyValueError::new_err("capabilities must be a dict"));
            }
            config.capabilities = caps;
        }
        if tasks {
            // The 2026 tasks extension: the server may run any call as a task
            let caps = &mut config.capabilities;
            if !caps["extensions"].is_object() {
                caps["extensions"] = Value::Object(serde_json::Map::new());
            }
            caps["extensions"][mcp_sansio::TASKS_EXTENSION] = Value::Object(serde_json::Map::new());
        }
        config.timeouts.request = request_timeout
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map(Duration::from_secs_f64);
        if discover_timeout.is_finite() && discover_timeout >= 0.0 {
            config.discover_timeout = Duration::from_secs_f64(discover_timeout);
        }
        if let Some(limit) = max_message_size {
            if limit == 0 {
                return Err(PyValueError::new_err("max_message_size must be positive"));
            }
            config.limits.max_message_size = limit;
        }
        config.task_id_seed = random_u64();
        config.task_id_key = crate::config::random_key();
        let session = ClientSession::new(Arc::new(config), clock.instant(now));
        Ok(Self {
            session,
            clock,
            buf: Vec::new(),
            outbound: HashMap::new(),
            next_input: 1,
            inputs: HashMap::new(),
            next_request: 1,
            inbound: HashMap::new(),
            by_inbound: HashMap::new(),
            auth_note: None,
            close_error: None,
            next_meta: None,
        })
    }

    /// The next event, or `None`
    fn next_event<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let c = classes(py)?;
        while let Some(event) = self.session.poll_event() {
            let e = match event {
                ClientEvent::Response { id, outcome } => {
                    self.outbound.remove(&id.wire_id());
                    match outcome {
                        Ok(raw) => c
                            .response
                            .bind(py)
                            .call1((id.wire_id(), convert::raw_to_py(py, &raw)?))?,
                        Err(e) => c
                            .failed
                            .bind(py)
                            .call1((id.wire_id(), self.call_error(py, &e)?))?,
                    }
                }
                ClientEvent::Ready { version } => {
                    let peer = self.session.peer();
                    let info = match peer {
                        Some(p) => convert::typed_to_py(py, &p.info)?,
                        None => py.None().into_bound(py),
                    };
                    let caps = match peer {
                        Some(p) => convert::to_py(py, &p.capabilities)?,
                        None => PyDict::new(py).into_any(),
                    };
                    let instructions = peer.and_then(|p| p.instructions.clone());
                    c.ready
                        .bind(py)
                        .call1((
                            version.as_str(),
                            info,
                            caps,
                            instructions,
                            crate::rules::era_name(version.era()),
                        ))?
                }
                ClientEvent::Progress { id, progress } => c.progress.bind(py).call1((
                    id.wire_id(),
                    progress.progress,
                    progress.total,
                    progress.message,
                ))?,
                ClientEvent::Notification(n) => {
                    let subscription = match n.subscription_id() {
                        Some(mcp_sansio::RequestId::Number(id)) => u64::try_from(id).ok(),
                        _ => None,
                    };
                    c.notification.bind(py).call1((
                        n.method.as_str(),
                        convert::opt_raw_to_py(py, n.params.as_deref())?,
                        subscription,
                    ))?
                }
                ClientEvent::InputRequired { id, requests } => {
                    let input = self.next_input;
                    self.next_input += 1;
                    self.inputs.insert(input, id);
                    c.input_required
                        .bind(py)
                        .call1((input, convert::typed_to_py(py, &requests)?))?
                }
                ClientEvent::TaskStatus {
                    id,
                    status,
                    message,
                } => {
                    let status = serde_json::to_value(status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    c.task_status
                        .bind(py)
                        .call1((id.wire_id(), status, message))?
                }
                ClientEvent::Request(request) => {
                    let rid = self.next_request;
                    self.next_request += 1;
                    let params = convert::opt_raw_to_py(py, request.params.as_deref())?;
                    let method = request.method.clone();
                    self.by_inbound.insert(request.responder.id(), rid);
                    self.inbound.insert(rid, request.responder);
                    c.request.bind(py).call1((rid, method, params))?
                }
                ClientEvent::Cancelled { id, reason } => {
                    let Some(rid) = self.by_inbound.remove(&id) else {
                        continue;
                    };
                    self.inbound.remove(&rid);
                    c.cancelled.bind(py).call1((rid, reason))?
                }
                ClientEvent::Unblocked => c.unblocked.bind(py).call0()?,
                ClientEvent::SessionRenewed { version } => {
                    c.session_renewed.bind(py).call1((version.as_str(),))?
                }
                ClientEvent::Closed { reason } => {
                    self.inputs.clear();
                    self.inbound.clear();
                    self.by_inbound.clear();
                    let mut text = events::close_reason(&reason);
                    if let (CloseReason::Transport(why), Some(note)) = (&reason, &self.auth_note)
                        && let Some(sentence) = note.explain(why)
                    {
                        self.close_error = Some((note.clone(), sentence.clone()));
                        text = sentence;
                    }
                    c.closed.bind(py).call1((text,))?
                }
                _ => continue,
            };
            return Ok(Some(e));
        }
        Ok(None)
    }

    /// Gives the next request sent (any command that sends one) these `_meta` entries (a
    /// dict of str keys, e.g. `traceparent`), merged with its own (its own win); `None`
    /// clears them. One-shot: the request after it has none unless set again.
    #[pyo3(signature = (meta=None))]
    fn set_request_meta(&mut self, meta: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.next_meta = match meta.filter(|m| !m.is_none()) {
            None => None,
            Some(m) => {
                let map: serde_json::Map<String, Value> = convert::from_py(m, "request _meta")?;
                (!map.is_empty()).then_some(map)
            }
        };
        Ok(())
    }

    /// Sends a request; returns its id (its outcome: one `Response` or `RequestFailed`)
    ///
    /// `timeout`: seconds (`math.inf` waits forever; `None` uses the session's default).
    #[pyo3(signature = (method, params=None, *, progress=false, timeout=None, as_task=false,
        task_ttl=None, now=None))]
    #[allow(clippy::too_many_arguments)]
    fn send_request(
        &mut self,
        py: Python<'_>,
        method: &str,
        params: Option<&Bound<'_, PyAny>>,
        progress: bool,
        timeout: Option<f64>,
        as_task: bool,
        task_ttl: Option<f64>,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let params = params
            .filter(|p| !p.is_none())
            .map(convert::to_raw)
            .transpose()?;
        let params = match self.next_meta.take() {
            None => params,
            Some(extra) => {
                let value = params
                    .map(|p| serde_json::from_str::<Value>(p.get()))
                    .transpose()
                    .map_err(|e| PyValueError::new_err(format!("request params: {e}")))?;
                Some(
                    serde_json::value::to_raw_value(&merge_meta(value, extra))
                        .map_err(|e| PyValueError::new_err(format!("request params: {e}")))?,
                )
            }
        };
        let options = options(progress, timeout, as_task, task_ttl);
        let now = self.clock.instant(now);
        let sent = self.session.send_request_raw(now, method, params, options);
        self.sent(py, sent)
    }

    /// `tools/call`
    #[pyo3(signature = (name, arguments=None, *, progress=false, timeout=None, as_task=false,
        task_ttl=None, now=None))]
    #[allow(clippy::too_many_arguments)]
    fn call_tool(
        &mut self,
        py: Python<'_>,
        name: &str,
        arguments: Option<&Bound<'_, PyAny>>,
        progress: bool,
        timeout: Option<f64>,
        as_task: bool,
        task_ttl: Option<f64>,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let mut params = CallToolParams::new(name);
        params.arguments = typed(arguments, "tool arguments")?;
        let options = options(progress, timeout, as_task, task_ttl);
        self.request::<CallTool>(py, params, options, now)
    }

    /// `prompts/get`
    #[pyo3(signature = (name, arguments=None, *, now=None))]
    fn get_prompt(
        &mut self,
        py: Python<'_>,
        name: &str,
        arguments: Option<&Bound<'_, PyAny>>,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let mut params = GetPromptParams::new(name);
        params.arguments = typed(arguments, "prompt arguments")?;
        self.request::<GetPrompt>(py, params, RequestOptions::default(), now)
    }

    /// `completion/complete`: `ref` is `{"type": "ref/prompt", "name": ...}` or
    /// `{"type": "ref/resource", "uri": ...}`, `argument` is `{"name": ..., "value": ...}`
    #[pyo3(signature = (r#ref, argument, context=None, *, now=None))]
    fn complete(
        &mut self,
        py: Python<'_>,
        r#ref: &Bound<'_, PyAny>,
        argument: &Bound<'_, PyAny>,
        context: Option<&Bound<'_, PyAny>>,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let argument: CompleteArgument = convert::from_py(argument, "completion argument")?;
        let reference = convert::from_py(r#ref, "completion ref")?;
        let mut params = CompleteParams::new(reference, argument.name, argument.value);
        params.argument.extra = argument.extra;
        params.context = typed(context, "completion context")?;
        self.request::<Complete>(py, params, RequestOptions::default(), now)
    }

    /// `subscriptions/listen` (modern era): `notifications` is the filter object, e.g.
    /// `{"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}`; the stream's
    /// notifications arrive as `Notification` events until it is cancelled
    #[pyo3(signature = (notifications, *, now=None))]
    fn listen(
        &mut self,
        py: Python<'_>,
        notifications: &Bound<'_, PyAny>,
        now: Option<f64>,
    ) -> PyResult<u64> {
        let filter = convert::from_py(notifications, "subscription filter")?;
        let params = SubscriptionsListenParams::new(filter);
        let options = RequestOptions::default().no_timeout();
        self.request::<SubscriptionsListen>(py, params, options, now)
    }

    /// Cancels a request we sent: the peer gets `notifications/cancelled`, and the request
    /// ends with `RequestFailed(error=RequestCancelled)`. `False` if it already ended.
    #[pyo3(signature = (request_id, reason=None, now=None))]
    fn cancel(&mut self, request_id: u64, reason: Option<&str>, now: Option<f64>) -> bool {
        let Some(id) = self.outbound.get(&request_id).copied() else {
            return false;
        };
        self.session
            .cancel(self.clock.instant(now), id, reason)
            .is_ok()
    }

    /// Answers an `InputRequired` event: `responses` maps each of its keys to the result
    /// (an elicitation result, a sampling result, or a roots list)
    #[pyo3(signature = (input_id, responses, now=None))]
    fn provide_input(
        &mut self,
        py: Python<'_>,
        input_id: u64,
        responses: &Bound<'_, PyAny>,
        now: Option<f64>,
    ) -> PyResult<()> {
        let Some(id) = self.inputs.get(&input_id).copied() else {
            return Err(events::local_error(
                py,
                "no request waits for input under this id",
            ));
        };
        let responses = convert::from_py(responses, "input responses")?;
        self.session
            .provide_input(self.clock.instant(now), id, responses)
            .map_err(|e| events::local_error(py, e))?;
        self.inputs.remove(&input_id);
        Ok(())
    }

    /// Refuses an `InputRequired` event (the request fails, or the server's request gets
    /// this error)
    #[pyo3(signature = (input_id, code=-32603, message="input refused", now=None))]
    fn refuse_input(
        &mut self,
        py: Python<'_>,
        input_id: u64,
        code: i64,
        message: &str,
        now: Option<f64>,
    ) -> PyResult<()> {
        let Some(id) = self.inputs.remove(&input_id) else {
            return Err(events::local_error(
                py,
                "no request waits for input under this id",
            ));
        };
        let error = mcp_sansio::ErrorObject::new(code, message);
        self.session
            .refuse_input(self.clock.instant(now), id, &error)
            .map_err(|e| events::local_error(py, e))
    }

    /// Answers a request the server sent that the core did not turn into `InputRequired`
    #[pyo3(signature = (request_id, result))]
    fn respond(
        &mut self,
        py: Python<'_>,
        request_id: u64,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if !self.inbound.contains_key(&request_id) {
            return Ok(false);
        }
        // Converted while the request is still pending: a result that cannot be JSON
        // raises, and the caller's `respond_error` then answers it.
        let raw = convert::to_raw(result)?;
        let Some(responder) = self.inbound.remove(&request_id) else {
            return Ok(false);
        };
        self.by_inbound.remove(&responder.id());
        if let Err(refused) = self.session.respond_raw(responder, &raw) {
            return Err(events::refused_result(py, &mut self.session, refused));
        }
        Ok(true)
    }

    /// The server: `{"version", "info", "capabilities", "instructions"}`, once ready
    #[getter]
    fn peer<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(p) = self.session.peer() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("version", p.version.as_str())?;
        d.set_item("info", convert::typed_to_py(py, &p.info)?)?;
        d.set_item("capabilities", convert::to_py(py, &p.capabilities)?)?;
        d.set_item("instructions", p.instructions.clone())?;
        Ok(Some(d.into_any()))
    }

    /// Requests in flight
    #[getter]
    fn requests_in_flight(&self) -> usize {
        self.session.outbound_in_flight()
    }

    /// The `AuthorizationError` the session closed with (an HTTP 401 or 403 the client
    /// could not satisfy ended the handshake), else `None`
    #[getter]
    fn close_error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.close_error {
            Some((note, text)) => note.error(py, text.clone()).map(Some),
            None => Ok(None),
        }
    }
});

/// The params of one page of a list
fn page(cursor: Option<String>) -> PaginatedParams {
    cursor.map_or_else(PaginatedParams::new, PaginatedParams::at)
}

/// Optional typed params from Python data (`None` when absent)
fn typed<T: DeserializeOwned>(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<T>> {
    obj.filter(|o| !o.is_none())
        .map(|o| convert::from_py(o, what))
        .transpose()
}
