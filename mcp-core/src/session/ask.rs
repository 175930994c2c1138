//! Input from the user during a request (elicitation, sampling, roots), the same for the
//! application in both eras
//!
//! Server side, a handler asks once with [`Inbound::ask_input`](super::Inbound::ask_input):
//! - on a modern (2026-07-28) request the core answers the request with an
//!   `InputRequiredResult` (`inputRequests` plus a sealed `requestState`), and the client's
//!   retry (a new request carrying `inputResponses` and the state back) runs the handler
//!   again, this time with the answers at hand: a multi-round-trip request (MRTR);
//! - on a legacy session the core sends a live `elicitation/create`, `sampling/createMessage`
//!   or `roots/list` request to the client, and its answer arrives as
//!   [`ServerEvent::InputAnswered`](super::ServerEvent::InputAnswered).
//!
//! Client side, both eras surface as [`ClientEvent::InputRequired`](super::ClientEvent::InputRequired); [`Session::provide_input`]
//! answers: the core retries the request (modern) or answers the live request (legacy).
//!
//! `requestState` is untrusted input on its way back: it is sealed with HMAC-SHA256 under
//! [`ServerConfig::state_key`](super::ServerConfig::state_key), bound to the method, and
//! carries an expiry; a forged, altered, foreign or expired state is refused with -32602.

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::ids::{InboundId, InputId, Responder};
use super::inbound_table::Answers;
use super::outbound_table::{OutEntry, Owner, WireId};
use super::seal::{self, SealError};
use super::{Answer, CallError, ClientSession, Core, Event, Principal, Role, Session, Side};
use crate::jsonrpc::{self, ErrorObject};
use crate::schema::{
    FitVersion, InputRequest, InputRequests, InputRequiredResult, InputResponse, InputResponses,
    ResultType, has_capability,
};
use crate::version::Era;

/// What [`Inbound::ask_input`](super::Inbound::ask_input) did
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Asked {
    /// Every answer is already here (a modern retry carried them): go on
    Answered(InputResponses),
    /// Legacy: the requests went to the client; each answer arrives as
    /// [`ServerEvent::InputAnswered`](super::ServerEvent::InputAnswered)
    Sent,
    /// Modern: the request was answered with `input_required` and has ended; stop the
    /// handler. The client's retry arrives as a new [`ServerEvent::Request`](super::ServerEvent::Request) with the answers.
    Suspended,
}

/// Errors from [`Inbound::ask_input`](super::Inbound::ask_input); the session and the request are unchanged
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The request already ended (answered, cancelled, or the session closed)
    #[error("the request is no longer in flight")]
    NotInFlight,
    /// The client did not declare the capability this input needs; answer the request with
    /// [`AskError::to_error`]
    #[error("the client did not declare the `{capability}` capability")]
    NotDeclared {
        /// `elicitation`, `sampling` or `roots`
        capability: &'static str,
    },
    /// Input cannot be asked for this request: in the modern era only `tools/call`,
    /// `prompts/get` and `resources/read` may return `input_required`
    #[error("input cannot be asked during `{method}` in this era")]
    NotAllowed {
        /// The request's method
        method: String,
    },
    /// Modern input needs [`ServerConfig::state_key`](super::ServerConfig::state_key)
    #[error("no state key is configured to seal requestState")]
    NoStateKey,
    /// The client's answer under `key` does not decode as an input response
    #[error("the client's answer `{key}` is invalid: {reason}")]
    InvalidAnswer {
        /// The input key
        key: String,
        /// Why it did not decode
        reason: String,
    },
    /// The send queue is full; retry after `Unblocked` event
    #[error("the send queue is full")]
    Blocked,
    /// The client closed its side of the connection: no answer could come
    #[error("the client closed the connection; no input can come")]
    PeerClosed,
}

impl AskError {
    /// The JSON-RPC error to answer the request with: -32021 with `requiredCapabilities` for
    /// an undeclared capability, -32602 for a bad answer, -32603 otherwise
    pub fn to_error(&self) -> ErrorObject {
        match self {
            Self::NotDeclared { capability } => ErrorObject::new(
                jsonrpc::code::MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!("Missing required client capability: {capability}"),
            )
            .with_data(&serde_json::json!({ "requiredCapabilities": { *capability: {} } })),
            Self::InvalidAnswer { .. } => ErrorObject::invalid_params(self),
            _ => ErrorObject::internal_error(self),
        }
    }
}

/// Errors from [`Session::provide_input`] and [`Session::refuse_input`]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Nothing waits for input under this id (it ended, or never asked)
    #[error("no request is waiting for input under this id")]
    NotWaiting,
    /// The answers lack a key the server asked for
    #[error("no answer for input `{0}`")]
    Missing(String),
    /// The session is closed
    #[error("the session is closed")]
    Closed,
}

/// The client capability an input request needs
fn capability_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        InputRequest::Elicit(_) => "elicitation",
    }
}

/// The methods whose modern requests may end in `input_required`
pub(crate) fn mrtr_method(method: &str) -> Option<&'static str> {
    ["tools/call", "prompts/get", "resources/read"]
        .into_iter()
        .find(|m| *m == method)
}

/// The sealed state's payload
#[derive(Serialize, Deserialize)]
struct StatePayload {
    /// Format version
    v: u8,
    /// The method the state belongs to
    m: String,
    /// Expiry, in the session's clock milliseconds (see `Core::clock_ms`)
    x: u64,
    /// Answers gathered in earlier rounds
    a: Answers,
    /// Who it was issued to: a digest of the caller's principal (absent without one); a
    /// retry from another principal is refused
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
}

impl<R: Role> Session<R> {
    /// Anchors the wall clock: `now` corresponds to `unix_ms` milliseconds since the Unix
    /// epoch
    ///
    /// Sealed multi-round-trip state carries an expiry. Without an anchor it is measured from
    /// this session's creation, which only works while retries come back to the same session
    /// (stdio); a server that serves retries from other sessions (stateless HTTP) anchors
    /// every session.
    pub fn anchor_wall_clock(&mut self, now: Instant, unix_ms: u64) {
        self.core.tick(now);
        self.core.wall_anchor = Some((now, unix_ms));
    }
}

impl ClientSession {
    /// Answers an [`ClientEvent::InputRequired`](super::ClientEvent::InputRequired)
    ///
    /// `Retry`: the core sends the original request again under a new id, with these
    /// answers and the server's `requestState`; the outcome still arrives as one
    /// `Response` event for the original [`OutboundId`](super::OutboundId). `Live`: the core answers the
    /// server's request with the one response given.
    ///
    /// # Errors
    /// [`InputError::NotWaiting`] if nothing waits under `id`; [`InputError::Missing`] if an
    /// asked key has no answer.
    pub fn provide_input(
        &mut self,
        now: Instant,
        id: InputId,
        responses: InputResponses,
    ) -> Result<(), InputError> {
        self.core.tick(now);
        let result = self.core.provide_input(id, responses);
        self.pump(false);
        result
    }

    /// Refuses an [`ClientEvent::InputRequired`](super::ClientEvent::InputRequired): a `Retry` request is cancelled (its
    /// `Response` event carries [`CallError::Cancelled`]); a `Live` request is answered
    /// with `error`
    ///
    /// # Errors
    /// [`InputError::NotWaiting`] if nothing waits under `id`.
    pub fn refuse_input(
        &mut self,
        now: Instant,
        id: InputId,
        error: &ErrorObject,
    ) -> Result<(), InputError> {
        self.core.tick(now);
        match id {
            InputId::Retry(out) => {
                let waiting = self.core.outbound.call_mut(out);
                if !waiting.is_some_and(|c| c.awaiting_input) {
                    return Err(InputError::NotWaiting);
                }
                self.core
                    .cancel(out, Some(&error.message))
                    .map_err(|_| InputError::NotWaiting)
            }
            InputId::Live(inbound) => {
                if !self
                    .core
                    .inbound
                    .get_mut(inbound)
                    .is_some_and(|e| e.live_input)
                {
                    return Err(InputError::NotWaiting);
                }
                self.respond_error(Responder { id: inbound }, error);
                Ok(())
            }
        }
    }
}

impl Core {
    /// Milliseconds on the session's clock: Unix time when anchored, else since creation
    pub(super) fn clock_ms(&self) -> u64 {
        let (at, base) = self.wall_anchor.unwrap_or((self.created, 0));
        let since = self.now.saturating_duration_since(at).as_millis();
        base.saturating_add(u64::try_from(since).unwrap_or(u64::MAX))
    }

    fn server_state_settings(&self) -> (Option<[u8; 32]>, std::time::Duration) {
        match &self.role {
            Side::Server(s) => (s.state_key, s.state_ttl),
            Side::Client(_) => (None, std::time::Duration::ZERO),
        }
    }

    /// Server: reads a modern retry's `requestState` and `inputResponses` into the answers
    /// the handler will see
    pub(super) fn retry_answers(
        &self,
        method: &str,
        responses: Option<Answers>,
        state: Option<&str>,
    ) -> Result<Option<Box<Answers>>, ErrorObject> {
        if responses.is_none() && state.is_none() {
            return Ok(None);
        }
        let mut answers = Answers::new();
        if let Some(state) = state {
            let (key, _) = self.server_state_settings();
            let Some(key) = key else {
                return Err(ErrorObject::invalid_params(
                    "requestState cannot be verified: this server issues none",
                ));
            };
            let payload = seal::unseal(&key, state).map_err(|e| {
                ErrorObject::invalid_params(match e {
                    SealError::Malformed => "requestState is malformed",
                    SealError::Forged => "requestState was altered or not issued by this server",
                })
            })?;
            let payload: StatePayload = serde_json::from_slice(&payload)
                .map_err(|_| ErrorObject::invalid_params("requestState is malformed"))?;
            if payload.m != method {
                return Err(ErrorObject::invalid_params(format!(
                    "requestState belongs to {}, not {method}",
                    payload.m
                )));
            }
            let caller = super::caller::principal_of(self.caller.as_ref()).map(Principal::digest);
            if payload.p != caller {
                return Err(ErrorObject::invalid_params(
                    "requestState was issued to another caller",
                ));
            }
            if payload.x < self.clock_ms() {
                return Err(ErrorObject::invalid_params(
                    "requestState has expired; send the request again without it",
                ));
            }
            answers = payload.a;
        }
        answers.extend(responses.unwrap_or_default());
        Ok(Some(Box::new(answers)))
    }

    pub(super) fn ask_input(
        &mut self,
        id: InboundId,
        mut requests: InputRequests,
    ) -> Result<Asked, AskError> {
        let peer_caps = self.peer.as_ref().map(|p| Arc::clone(&p.capabilities));
        let (state_key, ttl) = self.server_state_settings();
        let now_ms = self.clock_ms();
        let Some(entry) = self.inbound.get_mut(id) else {
            return Err(AskError::NotInFlight);
        };
        let version = entry.version;
        let caps = entry
            .peer_caps
            .clone()
            .or(peer_caps)
            .unwrap_or_else(|| Arc::new(Value::Object(serde_json::Map::new())));
        for request in requests.values() {
            let capability = capability_of(request);
            if !has_capability(&caps, &[capability]) {
                return Err(AskError::NotDeclared { capability });
            }
        }
        if version.era() == Era::Legacy {
            return self.ask_live(id, requests);
        }
        let Some(method) = entry.mrtr_method else {
            return Err(AskError::NotAllowed {
                method: "a method other than tools/call, prompts/get or resources/read".into(),
            });
        };
        // Everything answered already?
        let answers = entry.answers.as_deref();
        if let Some(answers) = answers.filter(|a| requests.keys().all(|k| a.contains_key(k))) {
            let mut typed = InputResponses::new();
            for key in requests.keys() {
                let raw = &answers[key];
                let response = serde_json::from_str::<InputResponse>(raw.get()).map_err(|e| {
                    AskError::InvalidAnswer {
                        key: key.clone(),
                        reason: e.to_string(),
                    }
                })?;
                typed.insert(key.clone(), response);
            }
            return Ok(Asked::Answered(typed));
        }
        let Some(key) = state_key else {
            return Err(AskError::NoStateKey);
        };
        // Ask for what is missing; carry what is known in the sealed state.
        let known = answers.cloned().unwrap_or_default();
        requests.retain(|k, _| !known.contains_key(k));
        requests.fit_to(version);
        let expiry = now_ms.saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        let payload = StatePayload {
            v: 1,
            m: method.to_owned(),
            x: expiry,
            a: known,
            p: super::caller::principal_of(entry.caller.as_ref()).map(Principal::digest),
        };
        let payload = serde_json::to_vec(&payload).expect("a state payload serializes");
        let result =
            InputRequiredResult::new(requests).with_request_state(seal::seal(&key, &payload));
        let result = serde_json::to_string(&result).expect("a result serializes");
        let entry = self.inbound.remove(id).expect("looked up above");
        self.answer(
            Some(&entry.wire_id),
            entry.batch,
            Answer::ModernResult(&result),
        );
        self.inbound_ended(id, &entry);
        // After the peer's EOF, the last answered request closes the session.
        self.close_if_drained();
        Ok(Asked::Suspended)
    }

    /// Legacy: one live request to the client per input
    fn ask_live(&mut self, id: InboundId, requests: InputRequests) -> Result<Asked, AskError> {
        if self.eof {
            // The client sends nothing more: no answer could ever come.
            return Err(AskError::PeerClosed);
        }
        if self.out.len() > self.limits().max_queued_bytes {
            self.blocked = true;
            return Err(AskError::Blocked);
        }
        let version = self.inbound.version_of(id).expect("in flight");
        let timeout = self.role.timeouts().request;
        for (key, mut request) in requests {
            request.fit_to(version);
            let method = request.method();
            let params = match serde_json::to_value(&request) {
                Ok(Value::Object(mut m)) => m.remove("params"),
                _ => None,
            };
            let params = params.map(|p| serde_json::value::to_raw_value(&p).expect("a Value"));
            let owner = Owner::Input {
                request: id,
                key: key.into(),
            };
            let entry = OutEntry::with_timeout(owner, method, params, self.now, timeout);
            let wire = self.outbound.insert(entry);
            self.transmit_outbound(wire, &[]);
            if let Some(e) = self.inbound.get_mut(id) {
                e.asks += 1;
            }
        }
        Ok(Asked::Sent)
    }

    /// The answer to a legacy input ask
    pub(super) fn input_answered(
        &mut self,
        inbound: InboundId,
        entry: &OutEntry,
        outcome: Result<Box<RawValue>, CallError>,
    ) {
        let Some(e) = self.inbound.get_mut(inbound) else {
            // The request it served already ended: nobody waits for this answer.
            self.stats.dropped_messages += 1;
            return;
        };
        e.asks = e.asks.saturating_sub(1);
        self.events.push_back(Event::InputAnswered {
            request: inbound,
            key: entry.input_key().to_owned(),
            outcome,
        });
    }

    /// Client: a modern result that may ask for input; `None` when it did (and is handled),
    /// else the entry and the outcome to report as the request's response
    pub(super) fn client_input_required(
        &mut self,
        wire: WireId,
        mut entry: OutEntry,
        result: &RawValue,
    ) -> Option<(OutEntry, Result<Box<RawValue>, CallError>)> {
        let parsed = serde_json::from_str::<InputRequiredResult>(result.get());
        let parsed = match parsed {
            Ok(r) if r.result_type == Some(ResultType::InputRequired) => r,
            _ => return Some((entry, Ok(result.to_owned()))),
        };
        let limit = match &self.role {
            Side::Client(c) => c.max_input_rounds,
            Side::Server(_) => 0,
        };
        let Some(call) = entry.app_mut() else {
            return Some((entry, Ok(result.to_owned())));
        };
        let app_id = call.id;
        if call.rounds >= limit {
            let outcome = Err(CallError::TooManyInputRounds { limit });
            return Some((entry, outcome));
        }
        call.rounds += 1;
        call.request_state = parsed.request_state;
        call.awaiting_input = true;
        // No timeout while a person answers; it restarts with the retry.
        entry.deadline = None;
        self.outbound.restore(wire, entry);
        self.events.push_back(Event::InputRequired {
            id: InputId::Retry(app_id),
            requests: parsed.input_requests.unwrap_or_default(),
        });
        None
    }

    /// Client: a legacy input request from the server becomes an `InputRequired` event
    pub(super) fn client_live_input(
        &mut self,
        id: InboundId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let mut message = serde_json::Map::new();
        message.insert("method".into(), method.into());
        if let Some(p) = params
            && let Ok(v) = serde_json::from_str::<Value>(p.get())
        {
            message.insert("params".into(), v);
        }
        match serde_json::from_value::<InputRequest>(Value::Object(message)) {
            Ok(request) => {
                let mut requests = InputRequests::new();
                requests.insert(method.to_owned(), request);
                self.events.push_back(Event::InputRequired {
                    id: InputId::Live(id),
                    requests,
                });
            }
            Err(e) => {
                let error = ErrorObject::invalid_params(format!("invalid {method} params: {e}"));
                let _ = self.respond(Responder { id }, Err(&error));
            }
        }
    }

    fn provide_input(&mut self, id: InputId, responses: InputResponses) -> Result<(), InputError> {
        if matches!(self.phase, super::phase::Phase::Closed) {
            return Err(InputError::Closed);
        }
        match id {
            InputId::Live(inbound) => {
                let Some(version) = self
                    .inbound
                    .get_mut(inbound)
                    .filter(|e| e.live_input)
                    .map(|e| e.version)
                else {
                    return Err(InputError::NotWaiting);
                };
                let Some(mut response) = responses.into_values().next() else {
                    return Err(InputError::Missing("the server's request".into()));
                };
                response.fit_to(version);
                let raw = serde_json::value::to_raw_value(&response).expect("serializes");
                let _ = self.respond(Responder { id: inbound }, Ok(&raw));
                Ok(())
            }
            InputId::Retry(out) => {
                let wire = self.outbound.wire_of(out);
                let now = self.now;
                let Some(entry) = self.outbound.get_mut(wire) else {
                    return Err(InputError::NotWaiting);
                };
                let timeout = entry.timeout;
                let Some(call) = entry.app_mut().filter(|c| c.awaiting_input) else {
                    return Err(InputError::NotWaiting);
                };
                if call.task.is_some() {
                    self.provide_task_input(out, &responses);
                    return Ok(());
                }
                call.awaiting_input = false;
                let deadline = timeout.map(|t| now + t);
                let deadline = deadline
                    .map(|d| call.cap.map_or(d, |c| d.min(c)))
                    .or(call.cap);
                let state = call.request_state.take();
                let new = self.outbound.reissue(wire, deadline).expect("present");
                let responses = serde_json::to_vec(&responses).expect("responses serialize");
                let state = state.map(|s| serde_json::to_vec(&s).expect("a string serializes"));
                let mut members: Vec<(&str, &[u8])> = vec![("inputResponses", &responses)];
                if let Some(s) = &state {
                    members.push(("requestState", s));
                }
                self.transmit_outbound(new, &members);
                Ok(())
            }
        }
    }
}
