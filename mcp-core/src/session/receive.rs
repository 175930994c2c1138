//! What comes in: frames, batches, requests (lifecycle, era rules, gating, delivery),
//! notifications (cancellation, progress) and responses

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::gating::{self, Capability, Gate};
use super::inbound_table::{Answers, InEntry};
use super::outbound_table::{OutEntry, Owner, WireId};
use super::outgoing::{Answer, cacheable};
use super::params::{CallSpans, ParamsWithMeta, RequestMeta};
use super::phase::Phase;
use super::task_table::{TaskParam, task_offered};
use super::{
    CallError, CloseReason, Core, Event, InboundNotification, InboundRequest, OutboundId, Progress,
    Responder, Side, ask,
};
use crate::codec::FrameError;
use crate::jsonrpc::{self, Decoded, ErrorObject, Invalid, Message, RequestId};
use crate::raw;
use crate::schema::{LoggingLevel, has_capability, meta};
use crate::version::{Era, ProtocolVersion};

/// How an inbound request reaches the application
pub(super) struct Delivery {
    version: ProtocolVersion,
    peer_caps: Arc<Value>,
    progress_token: Option<RequestId>,
    batch: Option<u32>,
    /// A modern request to a server
    modern: bool,
    answers: Option<Box<Answers>>,
    task_param: Option<TaskParam>,
    log_level: Option<LoggingLevel>,
    call: Option<CallSpans>,
}

impl Core {
    // --- input ---------------------------------------------------------------------------

    /// A frame the codec rejected. One too large to read is told by what its bytes said as
    /// they were dropped: an answer to a request of ours fails that request at once
    /// ([`CallError::TooLarge`]); a request is answered with an error under its id; a
    /// notification is dropped; anything else is answered with an error without an id, or,
    /// on a client waiting for answers (one of them may be this one), closes the session.
    pub(super) fn frame_error(&mut self, e: &FrameError) {
        self.stats.invalid_messages += 1;
        let error = match e {
            FrameError::TooLong {
                limit,
                size,
                id,
                request,
            } => {
                let (limit, size) = (*limit, *size);
                match (id, request) {
                    (Some(id), false) => {
                        if !self.fail_outbound(id, CallError::TooLarge { size, limit }) {
                            self.stats.unknown_responses += 1;
                        }
                        return;
                    }
                    (Some(id), true) => {
                        let why = super::event::too_large("request", size, limit);
                        let error = ErrorObject::invalid_request(why);
                        return self.answer(Some(id), None, Answer::Error(&error));
                    }
                    (None, true) => return,
                    (None, false) if self.role.is_client() && !self.outbound.is_empty() => {
                        let why = super::event::too_large("message", size, limit);
                        return self.close(CloseReason::Transport(format!(
                            "{why}, and which request it answers could not be told"
                        )));
                    }
                    (None, false) => ErrorObject::invalid_request(super::event::too_large(
                        "message", size, limit,
                    )),
                }
            }
            FrameError::InvalidUtf8 => ErrorObject::parse_error("the message is not valid UTF-8"),
        };
        self.answer(None, None, Answer::Error(&error));
    }

    pub(super) fn handle_frame(&mut self, frame: &str) {
        match jsonrpc::decode(frame) {
            Decoded::Single(Ok(message)) => self.handle_msg(message, None),
            Decoded::Single(Err(invalid)) => self.handle_invalid(invalid, None),
            Decoded::Batch(items) => self.handle_batch(items),
        }
    }

    pub(super) fn handle_invalid(&mut self, invalid: Invalid, batch: Option<u32>) {
        self.stats.invalid_messages += 1;
        if invalid.answerable {
            self.answer(invalid.id.as_ref(), batch, Answer::Error(&invalid.error));
        }
    }

    pub(super) fn handle_batch(&mut self, items: Vec<Result<Message, Invalid>>) {
        let allowed = self
            .phase
            .version()
            .is_some_and(ProtocolVersion::allows_batches);
        if !allowed {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(
                "JSON-RPC batches are only allowed on sessions using protocol version 2025-03-26",
            );
            self.answer(None, None, Answer::Error(&error));
            return;
        }
        if items.len() > self.limits().max_batch_len {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(format!(
                "the batch has {} messages; the limit is {}",
                items.len(),
                self.limits().max_batch_len
            ));
            self.answer(None, None, Answer::Error(&error));
            return;
        }
        let batch = self.batches.open();
        for item in items {
            match item {
                Ok(message) => self.handle_msg(message, Some(batch)),
                Err(invalid) => self.handle_invalid(invalid, Some(batch)),
            }
        }
        self.batches.close(batch);
        self.flush_batch(batch);
    }

    pub(super) fn handle_msg(&mut self, message: Message, batch: Option<u32>) {
        // A message earlier in the same batch may have closed the session.
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        match message {
            Message::Request(r) => self.handle_request(r, None, batch),
            Message::Notification(n) => self.handle_notification(n),
            Message::Response(r) => self.handle_response(r),
        }
    }

    /// A request, with its params as [`ParamsView`](super::ParamsView) read them when the HTTP rules did
    /// already (`parsed`), else read here
    pub(super) fn handle_request(
        &mut self,
        request: jsonrpc::Request,
        parsed: Option<ParamsWithMeta>,
        batch: Option<u32>,
    ) {
        if self.inbound.contains_wire(&request.id) || self.subscriptions.is_listener(&request.id) {
            self.stats.invalid_messages += 1;
            let error = ErrorObject::invalid_request(format!(
                "request id {} is already in use by a request in progress",
                request.id
            ));
            self.answer(Some(&request.id), batch, Answer::Error(&error));
            return;
        }
        let params = request.params.as_deref().map(RawValue::get);
        let parsed = match (parsed, params) {
            (Some(p), _) => Ok(p),
            (None, None) => Ok(ParamsWithMeta::default()),
            (None, Some(params)) => serde_json::from_str::<ParamsWithMeta>(params),
        };
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => {
                let error = ErrorObject::invalid_params(format!("invalid _meta: {e}"));
                self.answer(Some(&request.id), batch, Answer::Error(&error));
                return;
            }
        };
        match self.role {
            Side::Server(_) => self.server_request(request, parsed, batch),
            Side::Client(_) => {
                let meta = parsed.meta.unwrap_or_default();
                self.client_request(request, &meta, parsed.task, batch);
            }
        }
    }

    pub(super) fn server_request(
        &mut self,
        request: jsonrpc::Request,
        parsed: ParamsWithMeta,
        batch: Option<u32>,
    ) {
        let meta = parsed.meta.unwrap_or_default();
        let id = &request.id;
        match self.phase {
            Phase::Initialized { version } | Phase::Ready { version } => {
                if request.method == "initialize" {
                    let error = ErrorObject::invalid_request("the session is already initialized");
                    return self.answer(Some(id), batch, Answer::Error(&error));
                }
                if request.method == "ping" {
                    return self.answer(Some(id), batch, Answer::Result("{}"));
                }
                let peer_caps = self.peer.as_ref().map_or_else(
                    || Arc::new(Value::Object(serde_json::Map::new())),
                    |p| Arc::clone(&p.capabilities),
                );
                let delivery = Delivery {
                    version,
                    peer_caps,
                    progress_token: meta.progress_token,
                    batch,
                    modern: false,
                    answers: None,
                    task_param: parsed.task,
                    log_level: meta.log_level,
                    call: parsed.call,
                };
                self.gate_and_deliver(request, delivery);
            }
            Phase::Fresh => {
                // A request naming a protocol version in `_meta` is modern, whatever its
                // method: a modern `initialize` is a removed method, not a handshake.
                if request.method == "initialize" && meta.version.is_none() {
                    return self.server_initialize(request, batch);
                }
                let Some(requested) = meta.version else {
                    if request.method == "ping" {
                        return self.answer(Some(id), batch, Answer::Result("{}"));
                    }
                    let error = ErrorObject::invalid_params(format!(
                        "missing _meta[\"{}\"]: send `initialize` first (protocol versions up to \
                         2025-11-25) or name the protocol version in every request (2026-07-28 \
                         and later)",
                        meta::PROTOCOL_VERSION
                    ));
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let Some(caps) = meta.capabilities.filter(|c| raw::is_object(c.get())) else {
                    let error = ErrorObject::invalid_params(format!(
                        "missing _meta[\"{}\"]: every request must declare the client's \
                         capabilities (an object, {{}} for none)",
                        meta::CLIENT_CAPABILITIES
                    ));
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let modern = self
                    .server_config()
                    .into_iter()
                    .flat_map(|c| c.versions.iter().copied())
                    .find(|v| v.era() == Era::Modern && v.as_str() == requested);
                let Some(version) = modern else {
                    let error = self.unsupported_version_error(&requested);
                    return self.answer(Some(id), batch, Answer::Error(&error));
                };
                let caps = self.modern_caps(&caps);
                if request.method == "server/discover" {
                    return self.server_discover(&request.id, batch);
                }
                let answers = match ask::mrtr_method(&request.method) {
                    Some(method) => self.retry_answers(
                        method,
                        parsed.input_responses,
                        parsed.request_state.as_deref(),
                    ),
                    None => Ok(None),
                };
                let answers = match answers {
                    Ok(a) => a,
                    Err(error) => return self.answer(Some(id), batch, Answer::Error(&error)),
                };
                let delivery = Delivery {
                    version,
                    peer_caps: caps,
                    progress_token: meta.progress_token,
                    batch,
                    modern: true,
                    answers,
                    task_param: None,
                    log_level: meta.log_level,
                    call: parsed.call,
                };
                self.gate_and_deliver(request, delivery);
            }
            _ => {}
        }
    }

    pub(super) fn client_request(
        &mut self,
        request: jsonrpc::Request,
        meta: &RequestMeta,
        task_param: Option<TaskParam>,
        batch: Option<u32>,
    ) {
        match self.phase {
            Phase::Ready { version } if version.era() == Era::Legacy => {
                if request.method == "ping" {
                    return self.answer(Some(&request.id), batch, Answer::Result("{}"));
                }
                let peer_caps = self.peer.as_ref().map_or_else(
                    || Arc::new(Value::Object(serde_json::Map::new())),
                    |p| Arc::clone(&p.capabilities),
                );
                let delivery = Delivery {
                    version,
                    peer_caps,
                    progress_token: meta.progress_token.clone(),
                    batch,
                    modern: false,
                    answers: None,
                    task_param,
                    log_level: meta.log_level,
                    call: None,
                };
                self.gate_and_deliver(request, delivery);
            }
            Phase::Ready { .. } => {
                // Servers send no requests in the modern era, and clients send no responses.
                self.stats.dropped_messages += 1;
            }
            Phase::Closed => {}
            _ if request.method == "ping" => {
                self.answer(Some(&request.id), batch, Answer::Result("{}"));
            }
            _ => {
                let error = ErrorObject::invalid_request(
                    "the client has not finished initializing; only ping is allowed before that",
                );
                self.answer(Some(&request.id), batch, Answer::Error(&error));
            }
        }
    }

    /// Checks that the method is known and its capability declared, then hands the request
    /// to the application
    pub(super) fn gate_and_deliver(&mut self, request: jsonrpc::Request, delivery: Delivery) {
        let Delivery {
            version,
            peer_caps,
            progress_token,
            batch,
            modern,
            answers,
            task_param,
            log_level,
            call,
        } = delivery;
        let gate = match self.role {
            Side::Server(_) => gating::request(gating::Sender::Client, &request.method, version),
            Side::Client(_) => gating::request(gating::Sender::Server, &request.method, version),
        };
        let refusal = match gate {
            Gate::Known(Some(Capability { path, name }))
                if !has_capability(self.own_caps(), path) =>
            {
                Some(format!(
                    "Method not found: {} (the {} capability was not declared)",
                    request.method, name
                ))
            }
            Gate::Known(_) => None,
            Gate::NotInEra => Some(format!(
                "Method not found: {} is not part of protocol version {version}",
                request.method
            )),
            Gate::Unknown if self.extra_methods().contains(&request.method) => None,
            Gate::Unknown => Some(format!("Method not found: {}", request.method)),
        };
        if let Some(message) = refusal {
            let error = ErrorObject::new(jsonrpc::code::METHOD_NOT_FOUND, message);
            return self.answer(Some(&request.id), batch, Answer::Error(&error));
        }
        // Task methods are served by whichever side runs tasks (a 2025-11-25 client runs
        // task-augmented sampling and elicitation); subscriptions only by servers.
        if self.serve_task_method(&request, version, &peer_caps, batch)
            || !self.role.is_client()
                && self.serve_subscription(&request, version.era(), &peer_caps, batch)
        {
            return;
        }
        if self.overloaded() {
            let error = ErrorObject::internal_error(format!(
                "too many requests in progress (limit {}); retry later",
                self.limits().max_in_flight_inbound
            ));
            return self.answer(Some(&request.id), batch, Answer::Error(&error));
        }
        let wants_progress = progress_token.is_some();
        let live_input = self.role.is_client()
            && matches!(
                request.method.as_str(),
                "elicitation/create" | "sampling/createMessage" | "roots/list"
            );
        let task_offered = task_offered(
            &request.method,
            version,
            self.own_caps(),
            &peer_caps,
            task_param.as_ref(),
        );
        let id = self.inbound.insert(InEntry {
            wire_id: request.id,
            progress_token,
            last_progress: None,
            batch,
            modern,
            version,
            peer_caps: modern.then(|| Arc::clone(&peer_caps)),
            mrtr_method: ask::mrtr_method(&request.method).filter(|_| modern),
            answers,
            asks: 0,
            task_offered,
            live_input,
            cacheable: modern && cacheable(&request.method),
            caller: self.caller.clone(),
        });
        if let Some(b) = batch {
            self.batches.add_pending(b);
        }
        if live_input {
            return self.client_live_input(id, &request.method, request.params.as_deref());
        }
        self.events.push_back(Event::Request(InboundRequest {
            responder: Responder { id },
            method: request.method,
            params: request.params,
            version,
            peer_capabilities: peer_caps,
            wants_progress,
            task_offered: task_offered.is_some(),
            caller: self.caller.clone(),
            log_level,
            call,
        }));
    }

    pub(super) fn handle_notification(&mut self, n: jsonrpc::Notification) {
        match n.method.as_str() {
            "notifications/cancelled" => self.peer_cancelled(n.params.as_deref()),
            "notifications/progress" => self.peer_progress(n.params.as_deref()),
            "notifications/tasks/status" | "notifications/tasks"
                if self.task_notified(n.params.as_deref()) => {}
            "notifications/initialized" => {
                if let (Side::Server(_), Phase::Initialized { version }) = (&self.role, self.phase)
                {
                    self.phase = Phase::Ready { version };
                    self.events.push_back(Event::Ready { version });
                }
            }
            _ if self.overloaded() => self.stats.dropped_messages += 1,
            _ => self
                .events
                .push_back(Event::Notification(InboundNotification {
                    method: n.method,
                    params: n.params,
                })),
        }
    }

    pub(super) fn peer_cancelled(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cancelled {
            request_id: RequestId,
            #[serde(default)]
            reason: Option<String>,
        }
        let Some(Ok(c)) = params.map(|p| serde_json::from_str::<Cancelled>(p.get())) else {
            self.stats.invalid_messages += 1;
            return;
        };
        // A cancellation for a request that already ended is the normal race: ignore it.
        let Some(id) = self.inbound.by_wire(&c.request_id) else {
            // It may end a listen stream or a waiting `tasks/result` instead.
            if !self.subscriptions.cancel(&c.request_id)
                && !self.server_tasks.cancel_waiter(&c.request_id)
            {
                self.shared.cancel_waiter(&c.request_id);
            }
            return;
        };
        let entry = self.inbound.remove(id).expect("found by wire id");
        self.inbound_ended(id, &entry);
        if let Some(b) = entry.batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
        self.events.push_back(Event::Cancelled {
            id,
            reason: c.reason,
        });
        self.close_if_drained();
    }

    pub(super) fn peer_progress(&mut self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            progress_token: RequestId,
            progress: f64,
            #[serde(default)]
            total: Option<f64>,
            #[serde(default)]
            message: Option<String>,
        }
        let Some(Ok(p)) = params.map(|p| serde_json::from_str::<P>(p.get())) else {
            self.stats.invalid_messages += 1;
            return;
        };
        let RequestId::Number(n) = p.progress_token else {
            self.stats.dropped_messages += 1;
            return;
        };
        let now = self.now;
        // Tokens are application ids; a retried request travels under a newer wire id.
        let Ok(id) = u64::try_from(n).map(OutboundId) else {
            self.stats.dropped_messages += 1;
            return;
        };
        let wire = self.outbound.wire_of(id);
        let Some(entry) = self.outbound.get_mut(wire) else {
            self.stats.dropped_messages += 1;
            return;
        };
        let timeout = entry.timeout;
        let Some(call) = entry
            .app_mut()
            .filter(|c| c.progress && c.last_progress.is_none_or(|last| p.progress > last))
        else {
            self.stats.dropped_messages += 1;
            return;
        };
        call.last_progress = Some(p.progress);
        let reset = call
            .reset_on_progress
            .then(|| timeout.map(|t| now + t))
            .flatten()
            .map(|d| call.cap.map_or(d, |cap| d.min(cap)));
        if let Some(deadline) = reset {
            self.outbound.set_deadline(wire, Some(deadline));
        }
        // Past the overload limit the report is dropped (the timeout was still reset): a
        // later one supersedes it, and the event queue stays bounded.
        if self.overloaded() {
            self.stats.dropped_messages += 1;
        } else {
            self.events.push_back(Event::Progress {
                id,
                progress: Progress {
                    progress: p.progress,
                    total: p.total,
                    message: p.message,
                },
            });
        }
    }

    pub(super) fn handle_response(&mut self, response: jsonrpc::Response) {
        let entry = match &response.id {
            Some(RequestId::Number(n)) => u64::try_from(*n)
                .ok()
                .map(WireId)
                .and_then(|n| self.outbound.remove(n).map(|e| (n, e))),
            _ => None,
        };
        let Some((wire, entry)) = entry else {
            self.stats.unknown_responses += 1;
            return;
        };
        let outcome = response.outcome.map_err(CallError::Remote);
        self.settle(wire, entry, outcome);
    }

    /// Ends the request `id` of ours without an answer from the peer: the transport could
    /// not carry it, or dropped an answer too large to read; `false` when no such request
    /// is in flight
    pub(crate) fn fail_outbound(&mut self, id: &RequestId, error: CallError) -> bool {
        let entry = match id {
            RequestId::Number(n) => u64::try_from(*n)
                .ok()
                .map(WireId)
                .and_then(|n| self.outbound.remove(n).map(|e| (n, e))),
            RequestId::String(_) => None,
        };
        let Some((wire, entry)) = entry else {
            return false;
        };
        self.settle(wire, entry, Err(error));
        true
    }

    /// Hands a request's outcome to the machine that owns the request
    fn settle(&mut self, wire: WireId, entry: OutEntry, outcome: Result<Box<RawValue>, CallError>) {
        match &entry.owner {
            Owner::App(_) => {
                let modern = self.phase.version().is_some_and(|v| v.era() == Era::Modern);
                let client = self.role.is_client();
                let (entry, outcome) = match outcome {
                    // Cheap test first: only a result that mentions the word is parsed.
                    Ok(raw) if modern && client && raw.get().contains("input_required") => {
                        match self.client_input_required(wire, entry, &raw) {
                            None => return,
                            Some(back) => back,
                        }
                    }
                    other => (entry, other),
                };
                let (entry, outcome) = match outcome {
                    Ok(raw)
                        if entry.app().is_some_and(|c| c.task_requested)
                            || client && modern && raw.get().contains("\"task\"") =>
                    {
                        match self.client_task_created(wire, entry, &raw) {
                            None => return,
                            Some(back) => back,
                        }
                    }
                    other => (entry, other),
                };
                if let Some(call) = entry.app() {
                    self.events.push_back(Event::Response {
                        id: call.id,
                        outcome,
                    });
                }
            }
            Owner::Input { request, .. } => {
                let request = *request;
                self.input_answered(request, &entry, outcome);
            }
            Owner::TaskInput { task, .. } => {
                let task = *task;
                self.task_input_answered(task, &entry, outcome);
            }
            Owner::Task { call, op } => self.task_op_answered(*call, *op, outcome),
            Owner::Initialize => self.client_initialize_answered(outcome),
            Owner::Discover => self.client_discover_answered(outcome),
        }
        self.close_if_drained();
    }
}
