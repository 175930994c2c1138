//! The handler runs of one server session, and every decision taken around them
//!
//! A binding runs handlers (tasks, threads, ...) and the core cannot; but what happens around
//! a run is protocol: `logging/setLevel` and which log filter applies to a message, whether
//! a message is tied to its request, how a handler's input request becomes live requests
//! (legacy) or a task's `input_required` status, how the live answers come together, which
//! run a `notifications/cancelled` or `tasks/cancel` stops, and whether a handler's result
//! answers its request or completes its task. [`Runs`] keeps that bookkeeping for one
//! [`Session`]; the binding only spawns, passes messages and stops what it is told to stop
//! ([`Effects`]).
//!
//! `Runs` is generic over the binding's own types, which it only stores and hands back:
//! `R`, a handle on one running handler (an abort handle, a task, a cancellation token), and
//! `W`, whatever delivers one answer to a handler waiting in its `ask` (a channel's sender).

use std::time::Instant;

use crate::id_map::{IdMap, id_map, shrink};

use serde_json::value::RawValue;

use super::LogFilter;
use crate::jsonrpc::ErrorObject;
use crate::schema::{
    InputRequests, InputResponse, InputResponses, LoggingMessageNotificationParams,
};
use crate::{
    AskError, Asked, CallError, InboundId, InboundRequest, Responder, SendError, ServerEvent,
    ServerSession, TaskError, TaskId, TaskOptions, TaskUpdate,
};

/// What a handler's `ask` gets back: the answers, keyed like its requests, or why not
pub type AskReply = Result<InputResponses, AskFailure>;

/// Why a handler's input request got no answers
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskFailure {
    /// The core refused the ask (undeclared capability, wrong method, ...); answer the
    /// request with [`AskError::to_error`]
    #[error(transparent)]
    Ask(#[from] AskError),
    /// The client's answer to one input request was an error, or it timed out
    #[error("input `{key}` failed: {error}")]
    Failed {
        /// The input key
        key: String,
        /// Why
        error: CallError,
    },
    /// An answer did not decode as an input response
    #[error("input `{key}` is not a valid response: {reason}")]
    Invalid {
        /// The input key
        key: String,
        /// Why
        reason: String,
    },
    /// The request was cancelled, or this run of the handler ended: on a 2026 request the
    /// core answered `input_required` and the client's retry runs the handler again. Return
    /// (any error); the answer is dropped.
    #[error("the request was cancelled, or answered with input_required")]
    Cancelled,
    /// The connection closed
    #[error("the connection closed")]
    Closed,
    /// The request runs as a task and the task could not ask (it ended, or cannot ask)
    #[error(transparent)]
    Task(#[from] TaskError),
}

impl AskFailure {
    /// The JSON-RPC error to answer the request with
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::Ask(e) => e.to_error(),
            other => ErrorObject::internal_error(other),
        }
    }
}

/// What the binding must do after a call on [`Runs`]: deliver each reply to its waiting
/// handler, and stop each run (abort it, cancel its token)
#[derive(Debug)]
#[must_use = "deliver the replies and stop the runs"]
#[non_exhaustive]
pub struct Effects<R, W> {
    /// Answers for handlers waiting in their `ask`
    pub replies: Vec<(W, AskReply)>,
    /// Handler runs that must stop
    pub stop: Vec<R>,
}

impl<R, W> Effects<R, W> {
    fn none() -> Self {
        Self {
            replies: Vec::new(),
            stop: Vec::new(),
        }
    }

    fn reply(waiter: W, reply: AskReply) -> Self {
        Self {
            replies: vec![(waiter, reply)],
            stop: Vec::new(),
        }
    }

    /// Whether there is nothing to do
    pub fn is_empty(&self) -> bool {
        self.replies.is_empty() && self.stop.is_empty()
    }
}

/// What a handler's result is for, decided by [`Runs::end`]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "answer the request, complete the task, or drop the result"]
#[non_exhaustive]
pub enum Ending {
    /// The run was stopped (cancelled, ended by `input_required`, its session closed) or
    /// was never started: drop the result
    Dropped,
    /// Answer the request with it
    Respond,
    /// The request became this task: the result completes it (an error fails it) with
    /// [`TaskUpdate::Completed`] or [`TaskUpdate::Failed`]
    Task(TaskId),
}

/// A handler waiting for live (legacy) answers to its input requests
#[derive(Debug)]
struct Gathering<W> {
    missing: usize,
    answers: InputResponses,
    waiter: W,
}

/// The handler runs of one [`ServerSession`] and what they wait for
///
/// The binding's loop, for every session it serves:
/// - [`ServerEvent::Request`]: pass it through [`handle_request`](Self::handle_request); if it
///   comes back, dispatch it (`Catalog::route`), and for a handler it starts, call
///   [`started`](Self::started) with the run's handle.
/// - [`ServerEvent::Cancelled`], [`ServerEvent::TaskCancelled`], [`ServerEvent::TaskInput`] and
///   [`ServerEvent::InputAnswered`]: [`handle_event`](Self::handle_event).
/// - The handler's messages: [`finish`](Self::finish) (its result; or
///   [`end`](Self::end), for a binding that answers itself), [`log`](Self::log),
///   [`start_task`](Self::start_task), [`ask`](Self::ask).
/// - The session is gone: [`close`](Self::close).
///
/// Every call that can wake a waiting handler or stop a run returns [`Effects`].
#[derive(Debug)]
pub struct Runs<R, W> {
    /// The handlers running, by the request they serve
    running: IdMap<InboundId, R>,
    /// Handlers waiting for live answers (legacy input)
    gathering: IdMap<InboundId, Gathering<W>>,
    /// Requests whose handler turned them into tasks: the result completes the task
    tasks: IdMap<InboundId, TaskId>,
    /// Task handlers waiting for the input their task asked for
    task_asks: IdMap<TaskId, W>,
    /// The connection's filter for `notifications/message` (legacy), set by
    /// `logging/setLevel`
    log_filter: LogFilter,
}

impl<R, W> Default for Runs<R, W> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R, W> Runs<R, W> {
    /// Nothing running; the legacy log filter at [`LogFilter::legacy`]
    pub fn new() -> Self {
        Self {
            running: id_map(),
            gathering: id_map(),
            tasks: id_map(),
            task_asks: id_map(),
            log_filter: LogFilter::legacy(),
        }
    }

    /// The connection's log filter (legacy era; what `logging/setLevel` set)
    pub fn log_filter(&self) -> LogFilter {
        self.log_filter
    }

    /// How many handler runs are in flight
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Takes one inbound request of a server: answers `logging/setLevel` itself (the
    /// connection's log filter changes), and hands back every other request for the binding
    /// to dispatch
    pub fn handle_request(
        &mut self,
        session: &mut ServerSession,
        request: InboundRequest,
    ) -> Option<InboundRequest> {
        self.log_filter.handle_set_level(session, request)
    }

    /// Records the handler run the binding started for request `id`
    pub fn started(&mut self, id: InboundId, run: R) {
        self.running.insert(id, run);
    }

    /// Takes the events that concern handler runs: a cancelled request or task stops its
    /// run and ends its waits, and input answers reach the handler that asked; hands back
    /// every other event
    pub fn handle_event(&mut self, event: ServerEvent) -> Result<Effects<R, W>, ServerEvent> {
        match event {
            ServerEvent::Cancelled { id, .. } => Ok(self.stop(id, Effects::none())),
            ServerEvent::TaskCancelled { task } => {
                let mut effects = Effects::none();
                if let Some(waiter) = self.task_asks.remove(&task) {
                    effects.replies.push((waiter, Err(AskFailure::Cancelled)));
                }
                let inbound = self
                    .tasks
                    .iter()
                    .find(|(_, t)| **t == task)
                    .map(|(i, _)| *i);
                if let Some(id) = inbound {
                    self.tasks.remove(&id);
                    effects = self.stop(id, effects);
                }
                Ok(effects)
            }
            ServerEvent::TaskInput { task, responses } => Ok(match self.task_asks.remove(&task) {
                Some(waiter) => Effects::reply(waiter, Ok(responses)),
                None => Effects::none(),
            }),
            ServerEvent::InputAnswered {
                request,
                key,
                outcome,
            } => Ok(self.answered(request, key, outcome)),
            other => Err(other),
        }
    }

    /// One live answer arrived: the handler gets every answer once the last is in, or the
    /// first failure
    fn answered(
        &mut self,
        request: InboundId,
        key: String,
        outcome: Result<Box<RawValue>, CallError>,
    ) -> Effects<R, W> {
        let Some(mut g) = self.gathering.remove(&request) else {
            return Effects::none();
        };
        let parsed = outcome
            .map_err(|error| AskFailure::Failed {
                key: key.clone(),
                error,
            })
            .and_then(|raw| {
                serde_json::from_str::<InputResponse>(raw.get()).map_err(|e| AskFailure::Invalid {
                    key: key.clone(),
                    reason: e.to_string(),
                })
            });
        match parsed {
            Ok(response) => {
                // A key answered twice (a confused peer) does not count twice.
                if g.answers.insert(key, response).is_none() {
                    g.missing = g.missing.saturating_sub(1);
                }
                if g.missing == 0 {
                    Effects::reply(g.waiter, Ok(g.answers))
                } else {
                    self.gathering.insert(request, g);
                    Effects::none()
                }
            }
            Err(failure) => Effects::reply(g.waiter, Err(failure)),
        }
    }

    /// Stops the run serving `id`: its live wait ends with [`AskFailure::Cancelled`]
    fn stop(&mut self, id: InboundId, mut effects: Effects<R, W>) -> Effects<R, W> {
        if let Some(g) = self.gathering.remove(&id) {
            effects.replies.push((g.waiter, Err(AskFailure::Cancelled)));
        }
        if let Some(run) = self.running.remove(&id) {
            effects.stop.push(run);
        }
        shrink(&mut self.running);
        effects
    }

    /// A handler of request `id` ended: takes its run off the books and says what its result
    /// is for (answer the request, complete the task the request became, or nothing)
    ///
    /// [`finish`](Self::finish) does this and then answers; a binding that answers itself
    /// (with a typed result it checks first, say) calls this and does what it says.
    pub fn end(&mut self, id: InboundId) -> Ending {
        if self.running.remove(&id).is_none() {
            return Ending::Dropped;
        }
        shrink(&mut self.running);
        match self.tasks.remove(&id) {
            Some(task) => Ending::Task(task),
            None => Ending::Respond,
        }
    }

    /// A handler ended with `result`: it answers the request, or completes (fails) the task
    /// the request became ([`end`](Self::end) decides which)
    ///
    /// A run that was stopped (cancelled, or ended by `input_required`) has nothing more to
    /// say: its result is dropped.
    pub fn finish(
        &mut self,
        session: &mut ServerSession,
        now: Instant,
        responder: Responder,
        result: Result<Box<RawValue>, ErrorObject>,
    ) {
        match self.end(responder.id()) {
            Ending::Dropped => {}
            Ending::Task(task) => {
                let update = match result {
                    Ok(raw) => TaskUpdate::Completed(raw),
                    Err(error) => TaskUpdate::Failed(error),
                };
                let _ = session.update_task(now, task, update);
            }
            Ending::Respond => match result {
                Ok(raw) => {
                    if let Err(refused) = session.respond_raw(responder, &raw) {
                        let error =
                            ErrorObject::internal_error("the server produced an invalid result");
                        session.respond_error(refused.into_responder(), &error);
                    }
                }
                Err(error) => session.respond_error(responder, &error),
            },
        }
    }

    /// A handler of request `id` logs: the message is sent if its level passes the filter
    /// (`filter`, the request's own on 2026 ([`LogFilter::for_request`]), else the
    /// connection's), tied to the request (Streamable HTTP sends it on the request's own
    /// stream) unless the request became a task and was answered already
    ///
    /// Returns whether it was sent (`Ok(false)`: the filter held it back). A binding whose
    /// handlers log best effort ignores the outcome.
    ///
    /// # Errors
    /// What [`Session::send_notification_raw`](crate::Session::send_notification_raw)
    /// refuses (the session closed, its queue is full).
    pub fn log(
        &self,
        session: &mut ServerSession,
        id: InboundId,
        filter: Option<LogFilter>,
        params: &LoggingMessageNotificationParams,
    ) -> Result<bool, SendError> {
        const METHOD: &str = "notifications/message";
        if !filter.unwrap_or(self.log_filter).allows(params.level) {
            return Ok(false);
        }
        let Ok(raw) = serde_json::value::to_raw_value(params) else {
            return Ok(false);
        };
        if self.tasks.contains_key(&id) {
            session.send_notification_raw(METHOD, Some(&raw))?;
        } else {
            session
                .inbound(id)
                .send_notification_raw(METHOD, Some(&raw))?;
        }
        Ok(true)
    }

    /// A handler turns request `id` into a task and keeps working; its result then completes
    /// the task ([`finish`](Self::finish))
    ///
    /// # Errors
    /// What [`Inbound::start_task`](crate::session::Inbound::start_task) refuses.
    pub fn start_task(
        &mut self,
        session: &mut ServerSession,
        now: Instant,
        id: InboundId,
        options: TaskOptions,
    ) -> Result<TaskId, TaskError> {
        let task = session.inbound(id).start_task(now, options)?;
        self.tasks.insert(id, task);
        Ok(task)
    }

    /// A handler of request `id` asks the client for input; `waiter` gets the answers
    ///
    /// - A task asks through its status (`input_required` with the requests: on 2026
    ///   `tasks/get` shows them and `tasks/update` answers; on 2025-11-25 live requests); the
    ///   answers arrive as [`ServerEvent::TaskInput`].
    /// - Otherwise the session asks: answers already at hand (a 2026 retry) are replied at
    ///   once; live requests (legacy) are gathered from [`ServerEvent::InputAnswered`]; a 2026
    ///   request answered with `input_required` ends this run (it is stopped, and the
    ///   waiter gets [`AskFailure::Cancelled`]), since the client's retry runs the handler
    ///   again.
    pub fn ask(
        &mut self,
        session: &mut ServerSession,
        now: Instant,
        id: InboundId,
        requests: InputRequests,
        waiter: W,
    ) -> Effects<R, W> {
        if let Some(&task) = self.tasks.get(&id) {
            return match session.update_task(now, task, TaskUpdate::InputRequired(requests)) {
                Ok(()) => {
                    self.task_asks.insert(task, waiter);
                    Effects::none()
                }
                Err(e) => Effects::reply(waiter, Err(AskFailure::Task(e))),
            };
        }
        let missing = requests.len();
        match session.inbound(id).ask_input(now, requests) {
            Ok(Asked::Answered(answers)) => Effects::reply(waiter, Ok(answers)),
            Ok(Asked::Sent) => {
                self.gathering.insert(
                    id,
                    Gathering {
                        missing,
                        answers: InputResponses::new(),
                        waiter,
                    },
                );
                Effects::none()
            }
            Ok(_) => self.stop(id, Effects::reply(waiter, Err(AskFailure::Cancelled))),
            Err(e) => Effects::reply(waiter, Err(AskFailure::Ask(e))),
        }
    }

    /// The session is gone: every waiting handler gets [`AskFailure::Closed`] and every run
    /// stops
    pub fn close(&mut self) -> Effects<R, W> {
        let mut effects = Effects::none();
        for (_, g) in self.gathering.drain() {
            effects.replies.push((g.waiter, Err(AskFailure::Closed)));
        }
        for (_, waiter) in self.task_asks.drain() {
            effects.replies.push((waiter, Err(AskFailure::Closed)));
        }
        effects
            .stop
            .extend(self.running.drain().map(|(_, run)| run));
        self.tasks.clear();
        effects
    }
}

impl LogFilter {
    /// The filter a request carries itself: on a 2026 request its `_meta` log level as the
    /// session read it when the request came (as [`from_params`](Self::from_params) reads it;
    /// an invalid one lets nothing through), on a legacy one `None` (the connection's filter
    /// applies, see [`Runs::log`])
    pub fn for_request(request: &InboundRequest) -> Option<Self> {
        (request.version.era() == crate::Era::Modern)
            .then(|| request.log_level.map_or_else(Self::off, Self::at))
    }
}
