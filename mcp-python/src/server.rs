//! The server side: routing of inbound requests through the catalog, the table of requests
//! the application still has to answer, and the `ServerSession` class
//!
//! [`ServerCore`] is shared by `ServerSession` (one connection) and `HttpServer` (every
//! session of an endpoint): it turns the core's events into Python events, answers what the
//! catalog can answer itself (lists, unknown tools, bad arguments), and runs the
//! application's commands against the right session. Every decision around the requests the
//! application answers is the core's [`Runs`], one per session, as in the Rust bindings:
//! `logging/setLevel` and which log filter applies, the live answers gathered for an
//! `ask_input`, whether a result answers its request or completes the task it became, which
//! request a cancellation or a closed session ends. A request handed to Python is a run
//! whose handle and waiter are its request id; stopping a run is an event (`Cancelled`).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::http::{HttpServer, SessionKey};
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, CompleteResult, GetPromptResult, InputRequests, LoggingLevel,
    LoggingMessageNotificationParams, ReadResourceResult,
};
use mcp_sansio::server::{AskFailure, Catalog, Effects, Ending, LogFilter, Route, Runs, respond};
use mcp_sansio::session::Caller;
use mcp_sansio::{
    AskError, CallError, Era, InboundId, InboundRequest, Progress, ProgressError, Responder,
    ServerEvent, ServerSession, TaskError, TaskId, TaskOptions, TaskUpdate,
};
use pyo3::PyTraverseError;
use pyo3::exceptions::PyValueError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;

use crate::catalog::Handlers;
use crate::clock::Clock;
use crate::config::PyServerConfig;
use crate::convert;
use crate::convert::variables_to_py;
use crate::events::{self, classes};
use crate::identity::{PyPrincipal, PyRequestInfo};

/// Where the sessions of a server live: one owned session, or an HTTP endpoint's table
pub(crate) trait Sessions {
    /// The session behind `key`, if it still exists
    fn get(&mut self, key: SessionKey) -> Option<&mut ServerSession>;
}

impl Sessions for ServerSession {
    fn get(&mut self, _key: SessionKey) -> Option<&mut ServerSession> {
        Some(self)
    }
}

impl Sessions for HttpServer {
    fn get(&mut self, key: SessionKey) -> Option<&mut ServerSession> {
        self.session_mut(key)
    }
}

/// What a request's answer is, so `respond` can check and fit it
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tool,
    Resource,
    Prompt,
    Complete,
    Other,
}

/// A request the application has not answered yet
struct Pending {
    key: SessionKey,
    inbound: InboundId,
    responder: Responder,
    kind: Kind,
    wants_progress: bool,
    /// Modern requests carry their own log level; legacy ones use the connection's
    log_filter: Option<LogFilter>,
}

/// The runs of one session: a run's handle and an `ask_input`'s waiter are the request id
/// Python knows
type SessionRuns = Runs<u64, u64>;

/// What [`Runs`] asks of Python after a call
type PyEffects = Effects<u64, u64>;

/// The server-side bookkeeping shared by `ServerSession` and `HttpServer`
pub(crate) struct ServerCore {
    catalog: Arc<Catalog>,
    /// The handlers of `catalog`'s entries (one snapshot with it): a routed event carries
    /// its entry's
    handlers: Handlers,
    route: bool,
    completions: bool,
    /// Whether the requests the catalog answers itself go to the application as
    /// `CatalogAnswer` events (a server with middleware) instead of being answered here
    catalog_answers: bool,
    next_id: u64,
    /// Python's request ids: what each stands for
    pending: HashMap<u64, Pending>,
    /// The core's bookkeeping around the requests of each session
    runs: HashMap<SessionKey, SessionRuns>,
    next_task: u64,
    /// Python's task ids: the task each names (and back), for `task_status`, `update_task`
    /// and the task events
    tasks: HashMap<u64, (SessionKey, TaskId)>,
    by_task: HashMap<(SessionKey, TaskId), u64>,
    /// Events to hand out before polling the session again (a closed session's abandoned
    /// requests, then its `Closed`)
    queued: VecDeque<Py<PyAny>>,
}

impl ServerCore {
    /// Serves from `config`'s catalog from now on: tools, resources and prompts added or
    /// removed at run time (requests already handed out are answered as they are)
    pub(crate) fn set_catalog(&mut self, py: Python<'_>, config: &PyServerConfig) {
        self.catalog = Arc::clone(&config.catalog);
        self.handlers = config.handlers.clone_ref(py);
        self.completions = config.completions;
    }

    /// What `uri` names in the catalog served now, for a caller with `principal`: its
    /// handler and the template's variables (see [`Handlers::resolve_resource`])
    pub(crate) fn resolve_resource<'py>(
        &self,
        py: Python<'py>,
        uri: &str,
        principal: Option<&mcp_sansio::session::Principal>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        self.handlers
            .resolve_resource(py, &self.catalog, uri, principal)
    }

    /// The catalog served now
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub(crate) fn new(py: Python<'_>, config: &PyServerConfig) -> Self {
        Self {
            catalog: Arc::clone(&config.catalog),
            handlers: config.handlers.clone_ref(py),
            route: config.route,
            completions: config.completions,
            catalog_answers: false,
            next_id: 1,
            pending: HashMap::new(),
            runs: HashMap::new(),
            next_task: 1,
            tasks: HashMap::new(),
            by_task: HashMap::new(),
            queued: VecDeque::new(),
        }
    }

    /// Reports the Python objects it holds to the garbage collector: the handlers and the
    /// queued events
    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.handlers.traverse(visit)?;
        for event in &self.queued {
            visit.call(event)?;
        }
        Ok(())
    }

    /// An event queued by an earlier one, handed out first
    pub(crate) fn queued<'py>(&mut self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.queued.pop_front().map(|e| e.into_bound(py))
    }

    /// Requests waiting for the application's answer
    pub(crate) fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Whether the catalog's own answers go to the application first (`CatalogAnswer`)
    pub(crate) fn catalog_answers(&self) -> bool {
        self.catalog_answers
    }

    /// Hands the catalog's own answers to the application first (`CatalogAnswer`), or
    /// answers with them at once (the default)
    pub(crate) fn set_catalog_answers(&mut self, on: bool) {
        self.catalog_answers = on;
    }

    /// The runs of the session behind `key`
    fn runs(&mut self, key: SessionKey) -> &mut SessionRuns {
        self.runs.entry(key).or_default()
    }

    /// Drops what a closed session left: its runs stop; returns the requests it abandoned,
    /// in order
    fn forget_session(&mut self, key: SessionKey) -> Vec<u64> {
        let mut gone = self.runs.remove(&key).map_or_else(Vec::new, |mut runs| {
            // The waits end with the runs: the `Cancelled` of each request says it all.
            runs.close().stop
        });
        gone.sort_unstable();
        for &id in &gone {
            self.pending.remove(&id);
        }
        self.tasks.retain(|_, (k, _)| *k != key);
        self.by_task.retain(|(k, _), _| *k != key);
        gone
    }

    /// Hands request `request` to the application: its run starts
    fn track(&mut self, key: SessionKey, request: InboundRequest, kind: Kind) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let inbound = request.responder.id();
        let log_filter = LogFilter::for_request(&request);
        self.runs(key).started(inbound, id);
        self.pending.insert(
            id,
            Pending {
                key,
                inbound,
                responder: request.responder,
                kind,
                wants_progress: request.wants_progress,
                log_filter,
            },
        );
        id
    }

    /// Queues the Python events for what [`Runs`] decided: each stopped run is forgotten
    /// and, when `stopped` makes an event for it, reported; each answer to an `ask_input`
    /// is an `InputAnswered` or an `InputFailed` (a wait that a stop ended is reported by
    /// the stop's event, if any)
    fn apply<'py>(
        &mut self,
        py: Python<'py>,
        effects: PyEffects,
        stopped: impl Fn(u64) -> PyResult<Option<Bound<'py, PyAny>>>,
    ) -> PyResult<()> {
        let c = classes(py)?;
        for rid in effects.stop {
            if self.pending.remove(&rid).is_some()
                && let Some(event) = stopped(rid)?
            {
                self.queued.push_back(event.unbind());
            }
        }
        for (rid, reply) in effects.replies {
            let event = match reply {
                Ok(answers) => c
                    .input_answered
                    .bind(py)
                    .call1((rid, convert::typed_to_py(py, &answers)?))?,
                Err(AskFailure::Cancelled | AskFailure::Closed) => continue,
                Err(failure) => {
                    let exc = events::mcp_error(py, &input_error(failure))?;
                    c.input_failed.bind(py).call1((rid, exc))?
                }
            };
            self.queued.push_back(event.unbind());
        }
        Ok(())
    }

    /// The Python event for a core event; `None` when it was handled here
    pub(crate) fn event<'py>(
        &mut self,
        py: Python<'py>,
        sessions: &mut dyn Sessions,
        key: SessionKey,
        event: ServerEvent,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let c = classes(py)?;
        Ok(Some(match event {
            ServerEvent::Ready { version } => {
                let peer = sessions.get(key).and_then(|s| s.peer().cloned());
                let (info, caps) = match &peer {
                    Some(p) => (
                        convert::typed_to_py(py, &p.info)?,
                        convert::to_py(py, &p.capabilities)?,
                    ),
                    None => (py.None().into_bound(py), PyDict::new(py).into_any()),
                };
                c.ready.bind(py).call1((
                    version.as_str(),
                    info,
                    caps,
                    py.None(),
                    crate::rules::era_name(version.era()),
                ))?
            }
            ServerEvent::Request(request) => return self.request(py, sessions, key, request),
            ServerEvent::Notification(n) => c.notification.bind(py).call1((
                n.method.as_str(),
                convert::opt_raw_to_py(py, n.params.as_deref())?,
            ))?,
            ServerEvent::Cancelled { id, reason } => {
                // The request's run stops (a request that became a task goes on).
                let event = ServerEvent::Cancelled {
                    id,
                    reason: reason.clone(),
                };
                if let Ok(effects) = self.runs(key).handle_event(event) {
                    self.apply(py, effects, |rid| {
                        c.cancelled.bind(py).call1((rid, reason.clone())).map(Some)
                    })?;
                }
                return Ok(self.queued(py));
            }
            ServerEvent::InputAnswered {
                request,
                key: input_key,
                outcome,
            } => {
                let event = ServerEvent::InputAnswered {
                    request,
                    key: input_key,
                    outcome,
                };
                if let Ok(effects) = self.runs(key).handle_event(event) {
                    self.apply(py, effects, |_| Ok(None))?;
                }
                return Ok(self.queued(py));
            }
            ServerEvent::TaskInput { task, responses } => {
                let Some(tid) = self.by_task.get(&(key, task)).copied() else {
                    return Ok(None);
                };
                // The answers go to the `ask_input` that asked through the task, if one
                // did (an `InputAnswered`), else to the application, which asked with
                // `update_task`.
                let answers = convert::typed_to_py(py, &responses)?;
                let event = ServerEvent::TaskInput { task, responses };
                match self.runs(key).handle_event(event) {
                    Ok(effects) if !effects.is_empty() => self.apply(py, effects, |_| Ok(None))?,
                    _ => return Ok(Some(c.task_input.bind(py).call1((tid, answers))?)),
                }
                return Ok(self.queued(py));
            }
            ServerEvent::TaskCancelled { task } => {
                // The task's run stops, silently: the event names the task.
                let event = ServerEvent::TaskCancelled { task };
                if let Ok(effects) = self.runs(key).handle_event(event) {
                    self.apply(py, effects, |_| Ok(None))?;
                }
                if let Some(tid) = self.by_task.get(&(key, task)).copied() {
                    let cancelled = c.task_cancelled.bind(py).call1((tid,))?;
                    self.queued.push_back(cancelled.unbind());
                }
                return Ok(self.queued(py));
            }
            ServerEvent::Unblocked => c.unblocked.bind(py).call0()?,
            ServerEvent::Closed { reason } => {
                // The handlers of the session's unanswered requests are told to stop (a
                // `Cancelled` each), then the session's `Closed`.
                let closed = c.closed.bind(py).call1((events::close_reason(&reason),))?;
                for id in self.forget_session(key) {
                    let cancelled = c.cancelled.bind(py).call1((id, "the session closed"))?;
                    self.queued.push_back(cancelled.unbind());
                }
                self.queued.push_back(closed.unbind());
                return Ok(self.queued(py));
            }
            // A server sends no application requests of its own through this class.
            _ => return Ok(None),
        }))
    }

    /// Routes one request: the session's runs answer `logging/setLevel` (the session's log
    /// filter), the catalog what it can (lists, unknown tools, bad arguments), the application gets
    /// the handler event the route names, or a plain `Request` for what the catalog does not
    /// serve (and for every request when routing is off)
    fn request<'py>(
        &mut self,
        py: Python<'py>,
        sessions: &mut dyn Sessions,
        key: SessionKey,
        request: InboundRequest,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let c = classes(py)?;
        let session = if self.route { sessions.get(key) } else { None };
        let (request, route) = match session {
            None => (request, None),
            Some(session) => {
                let runs = self.runs.entry(key).or_default();
                let Some(request) = runs.handle_request(session, request) else {
                    return Ok(None);
                };
                match self.catalog.try_route(&request, self.completions) {
                    Some(Route::Answer(answer)) => {
                        if self.catalog_answers {
                            // Python logs it as it logs a handler's run (once it is answered).
                            return self.catalog_answer(py, sessions, key, request, answer);
                        }
                        crate::log::catalog_answer(py, &request, &answer);
                        respond(session, request.responder, &answer);
                        return Ok(None);
                    }
                    route => (request, route),
                }
            }
        };
        let params = || convert::opt_raw_to_py(py, request.params.as_deref());
        let handler = match &route {
            Some(route) => self.handlers.for_route(py, route),
            None => py.None().into_bound(py),
        };
        let (kind, class, args) = match route {
            Some(Route::Tool { name, arguments }) => (
                Kind::Tool,
                &c.tool_call,
                vec![
                    name.into_pyobject(py)?.into_any(),
                    convert::to_py(py, &Value::Object(arguments))?,
                ],
            ),
            Some(Route::Resource {
                key: entry,
                uri,
                variables,
            }) => (
                Kind::Resource,
                &c.resource_read,
                vec![
                    uri.into_pyobject(py)?.into_any(),
                    entry.into_pyobject(py)?.into_any(),
                    variables_to_py(py, &variables)?,
                ],
            ),
            Some(Route::Prompt { name, arguments }) => (
                Kind::Prompt,
                &c.prompt_get,
                vec![
                    name.into_pyobject(py)?.into_any(),
                    arguments.into_pyobject(py)?.into_any(),
                ],
            ),
            // The handler gets the params as the client sent them.
            Some(Route::Complete(_)) => (Kind::Complete, &c.completion, vec![params()?]),
            _ => (
                Kind::Other,
                &c.request,
                vec![
                    request.method.as_str().into_pyobject(py)?.into_any(),
                    params()?,
                ],
            ),
        };
        let mut request = request;
        let info = request_info(sessions, key, &mut request);
        let id = self.track(key, request, kind);
        let mut call = vec![id.into_pyobject(py)?.into_any()];
        call.extend(args);
        call.push(Bound::new(py, info)?.into_any());
        if kind != Kind::Other {
            call.push(handler);
        }
        Ok(Some(class.bind(py).call1(PyTuple::new(py, call)?)?))
    }

    /// Hands a request the catalog answered to the application (a `CatalogAnswer` event:
    /// its middleware sees it); the answer goes out when the application answers, with the
    /// catalog's answer or one of its own
    fn catalog_answer<'py>(
        &mut self,
        py: Python<'py>,
        sessions: &mut dyn Sessions,
        key: SessionKey,
        mut request: InboundRequest,
        answer: mcp_sansio::server::Answer,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let c = classes(py)?;
        let params = convert::opt_raw_to_py(py, request.params.as_deref())?;
        let (result, error) = match &answer {
            Ok(raw) => (convert::raw_to_py(py, raw)?, py.None().into_bound(py)),
            Err(e) => (py.None().into_bound(py), events::mcp_error(py, e)?),
        };
        // What the application answers in its stead is checked as the handler's would be.
        let kind = match request.method.as_str() {
            "tools/call" => Kind::Tool,
            "resources/read" => Kind::Resource,
            "prompts/get" => Kind::Prompt,
            "completion/complete" => Kind::Complete,
            _ => Kind::Other,
        };
        let method = request.method.clone();
        let info = request_info(sessions, key, &mut request);
        let id = self.track(key, request, kind);
        let event = c.catalog_answer.bind(py).call1((
            id,
            method,
            params,
            result,
            error,
            Bound::new(py, info)?,
        ))?;
        Ok(Some(event))
    }

    // --- commands ------------------------------------------------------------------------

    /// Ends a request with the application's result or error: the request is answered, or
    /// the task it became completes (fails), as the session's runs say; `False` once it was
    /// answered or cancelled
    pub(crate) fn answer(
        &mut self,
        py: Python<'_>,
        sessions: &mut dyn Sessions,
        now: Instant,
        request_id: u64,
        outcome: Result<&Bound<'_, PyAny>, ErrorObject>,
    ) -> PyResult<bool> {
        let Some(p) = self.pending.remove(&request_id) else {
            return Ok(false);
        };
        let ending = self.runs(p.key).end(p.inbound);
        let Some(session) = sessions.get(p.key) else {
            return Ok(false);
        };
        let result = match ending {
            Ending::Respond => match outcome {
                Ok(result) => result,
                Err(error) => {
                    session.respond_error(p.responder, &error);
                    return Ok(true);
                }
            },
            Ending::Task(task) => {
                // A result that cannot be JSON fails the task (the request is no longer
                // pending: a later `respond_error` would be a no-op), then raises.
                let (update, invalid) = match outcome.map(convert::to_raw) {
                    Ok(Ok(raw)) => (TaskUpdate::Completed(raw), None),
                    Ok(Err(e)) => (TaskUpdate::Failed(invalid_result(py, &e)), Some(e)),
                    Err(error) => (TaskUpdate::Failed(error), None),
                };
                let updated = task_updated(py, session.update_task(now, task, update));
                return match invalid {
                    Some(e) => Err(e),
                    None => updated,
                };
            }
            _ => return Ok(false),
        };
        // Converted before the answer: a result that cannot be one answers -32603 here (the
        // request is no longer pending, so the caller's `respond_error` would be a no-op and
        // the client would wait forever), then raises.
        let converted = match p.kind {
            Kind::Tool => {
                convert::from_py::<CallToolResult>(result, "tool result").map(Typed::Tool)
            }
            Kind::Resource => convert::from_py::<ReadResourceResult>(result, "resource contents")
                .map(Typed::Resource),
            Kind::Prompt => {
                convert::from_py::<GetPromptResult>(result, "prompt result").map(Typed::Prompt)
            }
            Kind::Complete => {
                convert::from_py::<CompleteResult>(result, "completion result").map(Typed::Complete)
            }
            Kind::Other => convert::to_raw(result).map(Typed::Raw),
        };
        let converted = match converted {
            Ok(c) => c,
            Err(e) => {
                session.respond_error(p.responder, &invalid_result(py, &e));
                return Err(e);
            }
        };
        let sent = match converted {
            Typed::Tool(r) => session.respond(p.responder, r),
            Typed::Resource(r) => session.respond(p.responder, self.catalog.with_read_cache(r)),
            Typed::Prompt(r) => session.respond(p.responder, r),
            Typed::Complete(r) => session.respond(p.responder, r),
            Typed::Raw(raw) => session.respond_raw(p.responder, &raw),
        };
        if let Err(refused) = sent {
            return Err(events::refused_result(py, session, refused));
        }
        Ok(true)
    }

    /// Moves a task on (working, input_required; completed or failed through `answer`);
    /// `False` once it ended
    pub(crate) fn update_task(
        &mut self,
        py: Python<'_>,
        sessions: &mut dyn Sessions,
        now: Instant,
        task: u64,
        update: TaskUpdate,
    ) -> PyResult<bool> {
        let Some((key, tid)) = self.tasks.get(&task).copied() else {
            return Ok(false);
        };
        let Some(session) = sessions.get(key) else {
            return Ok(false);
        };
        task_updated(py, session.update_task(now, tid, update))
    }

    /// A request the application still has to answer, its session and the session's runs
    fn in_flight<'s>(
        &'s mut self,
        sessions: &'s mut dyn Sessions,
        request_id: u64,
    ) -> Option<(&'s Pending, &'s mut ServerSession, &'s mut SessionRuns)> {
        let p = self.pending.get(&request_id)?;
        let runs = self.runs.entry(p.key).or_default();
        Some((p, sessions.get(p.key)?, runs))
    }

    /// Reports progress; `False` when the client did not ask for it or the request ended
    pub(crate) fn report_progress(
        &mut self,
        py: Python<'_>,
        sessions: &mut dyn Sessions,
        request_id: u64,
        progress: Progress,
    ) -> PyResult<bool> {
        let Some((p, session, _)) = self.in_flight(sessions, request_id) else {
            return Ok(false);
        };
        if !p.wants_progress {
            return Ok(false);
        }
        match session.inbound(p.inbound).report_progress(&progress) {
            Ok(()) => Ok(true),
            Err(ProgressError::NotRequested) => Ok(false),
            Err(e) => Err(events::local_error(py, e)),
        }
    }

    /// Sends a log message tied to a request if the client's level lets it through (the
    /// session's runs choose the filter and whether it is tied)
    pub(crate) fn log(
        &mut self,
        py: Python<'_>,
        sessions: &mut dyn Sessions,
        request_id: u64,
        level: LoggingLevel,
        data: Value,
        logger: Option<String>,
    ) -> PyResult<bool> {
        let Some((p, session, runs)) = self.in_flight(sessions, request_id) else {
            return Ok(false);
        };
        let mut params = LoggingMessageNotificationParams::new(level, data);
        params.logger = logger;
        runs.log(session, p.inbound, p.log_filter, &params)
            .map_err(|e| events::local_error(py, e))
    }

    /// Asks the client for input on behalf of a request, through the session's runs: the
    /// answers at hand (a 2026 retry), live requests whose answers come as one
    /// `InputAnswered` (legacy; a task asks through its status), or the request answered
    /// with `input_required` (2026: the run ends, the retry is a new request)
    pub(crate) fn ask_input<'py>(
        &mut self,
        py: Python<'py>,
        sessions: &mut dyn Sessions,
        now: Instant,
        request_id: u64,
        requests: &Bound<'py, PyAny>,
    ) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
        let requests: InputRequests = convert::from_py(requests, "input requests")?;
        let Some((p, session, runs)) = self.in_flight(sessions, request_id) else {
            return Err(events::local_error(py, AskError::NotInFlight));
        };
        let mut effects = runs.ask(session, now, p.inbound, requests, request_id);
        for rid in effects.stop.drain(..) {
            // Modern: the request was answered with input_required; the retry comes as a
            // new request.
            self.pending.remove(&rid);
        }
        let Some((_, reply)) = effects.replies.pop() else {
            return Ok(("sent", py.None().into_bound(py)));
        };
        match reply {
            Ok(answers) => Ok(("answered", convert::typed_to_py(py, &answers)?)),
            Err(AskFailure::Cancelled) => Ok(("suspended", py.None().into_bound(py))),
            Err(AskFailure::Ask(
                e @ (AskError::NotDeclared { .. } | AskError::InvalidAnswer { .. }),
            )) => Err(events::mcp_exception(py, &e.to_error())),
            Err(e) => Err(events::local_error(py, e)),
        }
    }

    /// Answers a request with a task and keeps it open for its result
    pub(crate) fn start_task(
        &mut self,
        py: Python<'_>,
        sessions: &mut dyn Sessions,
        now: Instant,
        request_id: u64,
        options: TaskOptions,
    ) -> PyResult<u64> {
        let Some((p, session, runs)) = self.in_flight(sessions, request_id) else {
            return Err(events::local_error(py, TaskError::NotInFlight));
        };
        let key = p.key;
        match runs.start_task(session, now, p.inbound, options) {
            Ok(tid) => {
                let id = self.next_task;
                self.next_task += 1;
                self.tasks.insert(id, (key, tid));
                self.by_task.insert((key, tid), id);
                Ok(id)
            }
            Err(e @ TaskError::NotOffered) => Err(events::mcp_exception(py, &e.to_error())),
            Err(e) => Err(events::local_error(py, e)),
        }
    }

    /// The task status of a task id, as the spec names it
    pub(crate) fn task_status(&self, sessions: &mut dyn Sessions, task: u64) -> Option<String> {
        let (key, tid) = self.tasks.get(&task).copied()?;
        let status = sessions.get(key)?.task_status(tid)?;
        serde_json::to_value(status)
            .ok()?
            .as_str()
            .map(str::to_owned)
    }
}

/// What a handler reads of `request` (its params move into it: the handler got its
/// arguments already)
fn request_info(
    sessions: &mut dyn Sessions,
    key: SessionKey,
    request: &mut InboundRequest,
) -> PyRequestInfo {
    let peer_info = match request.version.era() {
        Era::Legacy => sessions
            .get(key)
            .and_then(|s| s.peer())
            .and_then(|p| p.info.as_ref())
            .and_then(|i| serde_json::to_value(i).ok()),
        _ => None,
    };
    PyRequestInfo::new(
        request.method.clone(),
        request.caller.clone(),
        request.version,
        request.params.take(),
        Arc::clone(&request.peer_capabilities),
        peer_info,
    )
}

/// What `update_task` tells Python: `False` once the task ended
fn task_updated(py: Python<'_>, outcome: Result<(), TaskError>) -> PyResult<bool> {
    match outcome {
        Ok(()) => Ok(true),
        Err(TaskError::Terminal(_) | TaskError::UnknownTask) => Ok(false),
        Err(e) => Err(events::local_error(py, e)),
    }
}

/// The exception an `InputFailed` carries: the client's error as it sent it, else why
/// there is no answer
fn input_error(failure: AskFailure) -> ErrorObject {
    match failure {
        AskFailure::Failed {
            error: CallError::Remote(e),
            ..
        } => e,
        AskFailure::Failed { key, error } => {
            ErrorObject::internal_error(format!("no answer for input `{key}`: {error}"))
        }
        AskFailure::Invalid { key, reason } => {
            ErrorObject::invalid_params(format!("the client's answer `{key}` is invalid: {reason}"))
        }
        other => other.to_error(),
    }
}

/// A task update from its Python spelling
pub(crate) fn task_update(
    status: &str,
    message: Option<String>,
    requests: Option<&Bound<'_, PyAny>>,
) -> PyResult<TaskUpdate> {
    match status {
        "working" => Ok(TaskUpdate::Working(message)),
        "input_required" => {
            let requests =
                requests.ok_or_else(|| PyValueError::new_err("input_required needs requests"))?;
            Ok(TaskUpdate::InputRequired(convert::from_py(
                requests,
                "input requests",
            )?))
        }
        other => Err(PyValueError::new_err(format!(
            "unknown task status {other:?} (use \"working\" or \"input_required\"; finish a \
             task by answering its request)"
        ))),
    }
}

/// Task options from seconds
pub(crate) fn task_options(ttl: Option<f64>, poll_interval: Option<f64>) -> TaskOptions {
    let mut options = TaskOptions::default();
    if let Some(t) = ttl.filter(|t| t.is_finite() && *t >= 0.0) {
        options = options.ttl(Duration::from_secs_f64(t));
    }
    if let Some(t) = poll_interval.filter(|t| t.is_finite() && *t >= 0.0) {
        options = options.poll_interval(Duration::from_secs_f64(t));
    }
    options
}

/// A log level from its name
pub(crate) fn log_level(level: &str) -> PyResult<LoggingLevel> {
    serde_json::from_value(Value::String(level.to_owned()))
        .map_err(|_| PyValueError::new_err(format!("unknown log level {level:?}")))
}

/// A progress report from Python numbers
pub(crate) fn progress(progress: f64, total: Option<f64>, message: Option<String>) -> Progress {
    let mut p = Progress::new(progress);
    if let Some(t) = total {
        p = p.total(t);
    }
    if let Some(m) = message {
        p = p.message(m);
    }
    p
}

/// One MCP connection, server side, in the sans-IO style
///
/// Feed it what the transport read (`receive_data`, `receive_eof`), call `handle_timeout`
/// at `next_deadline()`, and after every call drain `next_event()` and write
/// `data_to_send()`.
#[pyclass(module = "mcp_sansio._core", name = "ServerSession")]
pub(crate) struct PyServerSession {
    session: ServerSession,
    core: ServerCore,
    clock: Clock,
    buf: Vec<u8>,
}

server_pymethods!(connection_pymethods, PyServerSession, session, {
    #[new]
    #[pyo3(signature = (config, *, now=None))]
    fn new(py: Python<'_>, config: &PyServerConfig, now: Option<f64>) -> PyResult<Self> {
        let clock = Clock::new(py, now)?;
        let session = ServerSession::new(Arc::clone(&config.local), clock.instant(now));
        Ok(Self {
            session,
            core: ServerCore::new(py, config),
            clock,
            buf: Vec::new(),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.core.traverse(&visit)
    }

    /// Serves the tools, resources and prompts of `config` from now on (the session keeps
    /// the identity and capabilities it started with); tell the client with
    /// `notify_list_changed`
    fn set_catalog(&mut self, py: Python<'_>, config: &PyServerConfig) {
        self.core.set_catalog(py, config);
    }

    /// The next event, or `None`
    fn next_event<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(e) = self.core.queued(py) {
            return Ok(Some(e));
        }
        while let Some(event) = self.session.poll_event() {
            if let Some(e) = self
                .core
                .event(py, &mut self.session, SessionKey::STATELESS, event)?
            {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    /// A task's status (`working`, `input_required`, `completed`, `failed`, `cancelled`)
    fn task_status(&mut self, task_id: u64) -> Option<String> {
        self.core.task_status(&mut self.session, task_id)
    }

    /// Who sends this connection's requests from now on (a byte stream whose user the
    /// application authenticated itself): its handlers see the principal, its tasks are
    /// bound to it, and scoped tools check its scopes; `None`: nobody in particular
    #[pyo3(signature = (principal))]
    fn set_principal(&mut self, principal: Option<PyRef<'_, PyPrincipal>>) {
        let caller = principal.map(|p| Arc::new(Caller::principal(p.principal.clone())));
        self.session.set_caller(caller);
    }

    /// The principal `set_principal` gave, or `None`
    #[getter]
    fn principal(&self) -> Option<PyPrincipal> {
        let principal = self.session.caller()?.principal.clone()?;
        Some(PyPrincipal { principal })
    }

    /// Tells subscribers a resource changed; returns how many notifications were queued
    fn notify_resource_updated(&mut self, py: Python<'_>, uri: &str) -> PyResult<usize> {
        self.session
            .notify_resource_updated(uri)
            .map_err(|e| events::local_error(py, e))
    }
});

/// Answers with Python data decoded as the typed result `T` (`ValueError` if it is none)
/// A handler's result as the answer of its request's kind
enum Typed {
    Tool(CallToolResult),
    Resource(ReadResourceResult),
    Prompt(GetPromptResult),
    Complete(CompleteResult),
    Raw(Box<serde_json::value::RawValue>),
}

/// The error a request gets when its handler's result cannot be its answer
fn invalid_result(py: Python<'_>, e: &PyErr) -> ErrorObject {
    ErrorObject::internal_error(format!("invalid result: {}", e.value(py)))
}
