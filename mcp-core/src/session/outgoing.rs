//! What goes out: answers (with the modern result envelope), batches, requests and
//! notifications, and the commands that write them

use serde_json::value::RawValue;

use super::gating::{Capability, Gate};
use super::ids::InboundId;
use super::outbound_table::{AppCall, OutEntry, Owner, WireId};
use super::phase::Phase;
use super::task_table::task_capability;
use super::transmit_queue::Relation;
use super::{
    Core, OutboundId, Progress, ProgressError, RequestOptions, RespondError, Responder, SendError,
    Side, gating,
};
use crate::jsonrpc::{self, ErrorId, ErrorObject, RequestId};
use crate::raw::{self, Patch};
use crate::schema::{has_capability, meta};
use crate::version::Era;

/// An answer on its way out: a result (patched on modern servers) or an error
pub(super) enum Answer<'a> {
    Result(&'a str),
    /// A result to a modern request: gets `resultType` and the server's info when absent
    ModernResult(&'a str),
    /// A modern result of a cacheable method: also gets caching hints when absent
    CacheableResult(&'a str),
    Error(&'a ErrorObject),
}

/// Methods whose modern results are `CacheableResult`s
pub(super) fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

impl Core {
    // --- output --------------------------------------------------------------------------

    /// Queues an answer to a request (or to an invalid message, when `id` is unknown)
    pub(super) fn answer(
        &mut self,
        id: Option<&RequestId>,
        batch: Option<u32>,
        answer: Answer<'_>,
    ) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        let error_id = id.map_or_else(|| self.unknown_error_id(), ErrorId::Known);
        let out = match batch {
            Some(b) => self.batches.next_entry(b),
            None => self.out.start(),
        };
        match answer {
            Answer::Result(result) => {
                let id = id.expect("results answer a known request");
                write_result_envelope(out, id, |out| out.extend_from_slice(result.as_bytes()));
            }
            Answer::ModernResult(result) | Answer::CacheableResult(result) => {
                let id = id.expect("results answer a known request");
                let info = &self.own_info_json;
                // The conservative default hints: stale at once, never shared across
                // authorization contexts. A handler (or the catalog) that knows better sets its
                // own, which are kept.
                let members: &[(&str, &[u8])] = match answer {
                    Answer::CacheableResult(_) => &[
                        ("resultType", b"\"complete\""),
                        ("ttlMs", b"0"),
                        ("cacheScope", b"\"private\""),
                    ],
                    _ => &[("resultType", b"\"complete\"")],
                };
                write_result_envelope(out, id, |out| {
                    raw::write_patched(
                        out,
                        Some(result),
                        &Patch {
                            members,
                            meta: &[(meta::SERVER_INFO, info.as_bytes())],
                            meta_wins: false,
                        },
                    );
                });
            }
            Answer::Error(error) => jsonrpc::write_error(out, error_id, error),
        }
        if batch.is_none() {
            let relation = id.map_or(Relation::Unrelated, |id| Relation::Answer(id.clone()));
            self.out.finish_as(relation);
        }
    }

    pub(super) fn flush_batch(&mut self, batch: u32) {
        if let Some(bytes) = self.batches.take_if_done(batch)
            && !bytes.is_empty()
            && !matches!(self.phase, Phase::Closed)
        {
            let out = self.out.start();
            out.push(b'[');
            out.extend_from_slice(&bytes);
            out.push(b']');
            self.out.finish();
        }
    }

    /// Writes a request; `token` is the progress token (the application id) when progress
    /// was asked for, `members` are top-level params added for a retry
    pub(super) fn write_request(
        &mut self,
        wire: WireId,
        method: &str,
        params: Option<&RawValue>,
        token: Option<u64>,
        members: &[(&str, &[u8])],
        relation: Relation,
    ) {
        let id = RequestId::Number(i64::try_from(wire.0).expect("ids stay far below i64::MAX"));
        let progress = token.is_some();
        let token = token.map_or(String::new(), |t| t.to_string());
        let modern = self
            .phase
            .version()
            .filter(|v| v.era() == Era::Modern && self.role.is_client());
        let version_json = modern.map_or(String::new(), |v| format!("\"{}\"", v.as_str()));
        let entries: [(&str, &[u8]); 4] = [
            (meta::PROGRESS_TOKEN, token.as_bytes()),
            (meta::PROTOCOL_VERSION, version_json.as_bytes()),
            (meta::CLIENT_CAPABILITIES, self.own_caps_json.as_bytes()),
            (meta::CLIENT_INFO, self.own_info_json.as_bytes()),
        ];
        // A modern client names its version, capabilities and info on every request; any
        // request that asks for progress carries the core-minted token.
        let meta = match (modern.is_some(), progress) {
            (true, true) => &entries[..],
            (true, false) => &entries[1..],
            (false, true) => &entries[..1],
            (false, false) => &[],
        };
        let out = self.out.start();
        if meta.is_empty() && members.is_empty() {
            jsonrpc::write_request(out, &id, method, params);
        } else {
            write_request_envelope(out, &id, method, |out| {
                let patch = Patch {
                    members,
                    meta,
                    meta_wins: true,
                };
                raw::write_patched(out, params.map(RawValue::get), &patch);
            });
        }
        self.out.finish_as(relation);
    }

    pub(super) fn write_notification(&mut self, method: &str, params: Option<&RawValue>) {
        self.write_notification_as(method, params, Relation::Unrelated);
    }

    /// Writes a notification that belongs to an inbound request as `relation` says
    pub(super) fn write_notification_as(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
        relation: Relation,
    ) {
        let out = self.out.start();
        jsonrpc::write_notification(out, method, params);
        self.out.finish_as(relation);
    }

    pub(super) fn write_cancelled(&mut self, wire: WireId, reason: &str) {
        let params = serde_json::json!({ "requestId": wire.0, "reason": reason }).to_string();
        let params = RawValue::from_string(params).expect("valid JSON");
        self.write_notification("notifications/cancelled", Some(&params));
    }

    // --- commands ------------------------------------------------------------------------

    pub(super) fn check_can_send(&mut self) -> Result<(), SendError> {
        if matches!(self.phase, Phase::Closed) || self.eof {
            return Err(SendError::Closed);
        }
        if self.out.len() > self.limits().max_queued_bytes {
            self.blocked = true;
            return Err(SendError::Blocked);
        }
        Ok(())
    }

    pub(super) fn send_request(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        self.check_can_send()?;
        let version = match self.phase {
            Phase::Ready { version } => version,
            // Pings may cross the legacy handshake: a client's before the initialize result,
            // a server's before `notifications/initialized`.
            Phase::Initializing { .. } | Phase::Initialized { .. } if method == "ping" => {
                return self.send_app_request(method, params, options);
            }
            _ => return Err(SendError::NotReady),
        };
        let gate = match self.role {
            Side::Client(_) => gating::request(gating::Sender::Client, method, version),
            Side::Server(_) => gating::request(gating::Sender::Server, method, version),
        };
        match gate {
            _ if method == "initialize" => {
                return Err(SendError::NotAllowed {
                    method: method.to_owned(),
                    reason: "the session sends initialize itself",
                });
            }
            Gate::NotInEra => {
                return Err(SendError::NotAllowed {
                    method: method.to_owned(),
                    reason: "this side may not send it in this protocol version",
                });
            }
            Gate::Known(Some(Capability { path, name })) => {
                self.require_peer_capability(method, path, name)?;
            }
            _ => {}
        }
        self.send_app_request(method, params, options)
    }

    /// `SendError::MissingCapability` unless the peer declared the capability at `path`
    pub(super) fn require_peer_capability(
        &self,
        method: &str,
        path: &[&str],
        name: &'static str,
    ) -> Result<(), SendError> {
        let declared = self
            .peer
            .as_ref()
            .is_some_and(|p| has_capability(&p.capabilities, path));
        if declared {
            Ok(())
        } else {
            Err(SendError::MissingCapability {
                method: method.to_owned(),
                capability: name,
            })
        }
    }

    /// Registers and writes an application request that passed the lifecycle and gating checks
    pub(super) fn send_app_request(
        &mut self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<OutboundId, SendError> {
        if params.as_deref().is_some_and(|p| !raw::is_object(p.get())) {
            return Err(SendError::ParamsNotAnObject);
        }
        let legacy = self.phase.version().is_some_and(|v| v.era() == Era::Legacy);
        let task_param = match (options.task, task_capability(method)) {
            (Some(ttl), Some((path, name))) if legacy => {
                self.require_peer_capability(method, path, name)?;
                let ttl = ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
                Some(serde_json::json!({ "ttl": ttl }).to_string())
            }
            _ => None,
        };
        let params = match &task_param {
            Some(task) => {
                let mut out = Vec::new();
                let patch = Patch {
                    members: &[("task", task.as_bytes())],
                    meta: &[],
                    meta_wins: false,
                };
                raw::write_patched(&mut out, params.as_deref().map(RawValue::get), &patch);
                let text = String::from_utf8(out).expect("JSON is UTF-8");
                Some(RawValue::from_string(text).expect("valid JSON"))
            }
            None => params,
        };
        if self.outbound.app_len() >= self.limits().max_in_flight_outbound {
            return Err(SendError::TooManyRequests);
        }
        let defaults = self.role.timeouts();
        let timeout = options.timeout.unwrap_or(defaults.request);
        let cap = options
            .max_total
            .unwrap_or(defaults.max_total)
            .map(|d| self.now + d);
        let deadline = timeout
            .map(|t| self.now + t)
            .map(|d| cap.map_or(d, |c| d.min(c)))
            .or(cap);
        let call = AppCall {
            task_requested: task_param.is_some(),
            progress: options.progress,
            reset_on_progress: options
                .reset_on_progress
                .unwrap_or(defaults.reset_on_progress),
            cap,
            ..AppCall::new()
        };
        let mut entry = OutEntry::new(Owner::App(call), method, params);
        entry.timeout = timeout;
        entry.deadline = deadline;
        let wire = self.outbound.insert(entry);
        self.transmit_outbound(wire, &[]);
        Ok(OutboundId(wire.0))
    }

    /// Writes the request stored under `wire`
    pub(super) fn transmit_outbound(&mut self, wire: WireId, members: &[(&str, &[u8])]) {
        let entry = self.outbound.get_mut(wire).expect("just inserted");
        let method = std::mem::take(&mut entry.method);
        let params = entry.params.take();
        let token = entry.app().filter(|c| c.progress).map(|c| c.id.0);
        // A handler's input ask travels with the request that asked.
        let relation = match entry.owner {
            Owner::Input { request, .. } => self
                .inbound
                .get(request)
                .map_or(Relation::Unrelated, |e| Relation::During(e.wire_id.clone())),
            _ => Relation::Unrelated,
        };
        self.write_request(wire, &method, params.as_deref(), token, members, relation);
        let entry = self.outbound.get_mut(wire).expect("still there");
        entry.method = method;
        entry.params = params;
    }

    pub(super) fn send_notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.check_can_send()?;
        if gating::core_owned_notification(method) {
            return Err(SendError::NotAllowed {
                method: method.to_owned(),
                reason: "the session sends it itself",
            });
        }
        if self.role.is_client() && !matches!(self.phase, Phase::Ready { .. }) {
            return Err(SendError::NotReady);
        }
        if params.is_some_and(|p| !raw::is_object(p.get())) {
            return Err(SendError::ParamsNotAnObject);
        }
        self.write_notification(method, params);
        Ok(())
    }

    pub(super) fn send_notification_for(
        &mut self,
        id: InboundId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.check_can_send()?;
        if gating::core_owned_notification(method) {
            return Err(SendError::NotAllowed {
                method: method.to_owned(),
                reason: "the session sends it itself",
            });
        }
        if params.is_some_and(|p| !raw::is_object(p.get())) {
            return Err(SendError::ParamsNotAnObject);
        }
        // The request already ended: there is nothing to attach the notification to.
        let Some(entry) = self.inbound.get(id) else {
            return Ok(());
        };
        let relation = Relation::During(entry.wire_id.clone());
        self.write_notification_as(method, params, relation);
        Ok(())
    }

    pub(super) fn respond(
        &mut self,
        responder: Responder,
        answer: Result<&RawValue, &ErrorObject>,
    ) -> Result<(), RespondError> {
        if self.inbound.get(responder.id).is_none() {
            return Ok(());
        }
        if answer.is_ok_and(|r| !raw::is_object(r.get())) {
            return Err(RespondError::ResultNotAnObject(responder));
        }
        let entry = self
            .inbound
            .remove(responder.id)
            .expect("in flight, checked above");
        self.inbound_ended(responder.id, &entry);
        let answer = match answer {
            Ok(r) if entry.modern && entry.cacheable => Answer::CacheableResult(r.get()),
            Ok(r) if entry.modern => Answer::ModernResult(r.get()),
            Ok(r) => Answer::Result(r.get()),
            Err(e) => Answer::Error(e),
        };
        self.answer(Some(&entry.wire_id), entry.batch, answer);
        if let Some(b) = entry.batch {
            self.batches.remove_pending(b);
            self.flush_batch(b);
        }
        self.close_if_drained();
        Ok(())
    }

    pub(super) fn report_progress(
        &mut self,
        id: InboundId,
        progress: &Progress,
    ) -> Result<(), ProgressError> {
        let over_limit = self.out.len() > self.limits().max_queued_bytes;
        let Some(entry) = self.inbound.get_mut(id) else {
            return Ok(());
        };
        let Some(token) = &entry.progress_token else {
            return Err(ProgressError::NotRequested);
        };
        if !progress.progress.is_finite() || progress.total.is_some_and(|t| !t.is_finite()) {
            return Err(ProgressError::NotFinite);
        }
        if let Some(last) = entry.last_progress
            && progress.progress <= last
        {
            return Err(ProgressError::NotIncreasing {
                last,
                given: progress.progress,
            });
        }
        entry.last_progress = Some(progress.progress);
        if over_limit {
            // Progress is advisory and the next report supersedes this one: rather than
            // queue past the limit (a peer that does not read), drop it.
            self.stats.dropped_messages += 1;
            return Ok(());
        }
        let relation = Relation::During(entry.wire_id.clone());
        let mut params =
            serde_json::json!({ "progressToken": token, "progress": progress.progress });
        if let Some(total) = progress.total {
            params["total"] = total.into();
        }
        if let Some(message) = &progress.message {
            params["message"] = message.clone().into();
        }
        let params = serde_json::value::to_raw_value(&params).expect("a Value serializes");
        if !matches!(self.phase, Phase::Closed) {
            self.write_notification_as("notifications/progress", Some(&params), relation);
        }
        Ok(())
    }

    /// An inbound request ended: its live input asks are withdrawn
    pub(super) fn inbound_ended(&mut self, id: InboundId, entry: &super::inbound_table::InEntry) {
        if entry.asks == 0 {
            return;
        }
        for wire in self.outbound.inputs_of(id) {
            self.outbound.remove(wire);
            self.write_cancelled(wire, "the request this input was for has ended");
        }
    }
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<written by f>}`
fn write_result_envelope(out: &mut Vec<u8>, id: &RequestId, f: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    serde_json::to_writer(&mut *out, id).expect("writing to a Vec cannot fail");
    out.extend_from_slice(b",\"result\":");
    f(out);
    out.push(b'}');
}

/// `{"jsonrpc":"2.0","id":<id>,"method":<method>,"params":<written by f>}`
fn write_request_envelope(
    out: &mut Vec<u8>,
    id: &RequestId,
    method: &str,
    f: impl FnOnce(&mut Vec<u8>),
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    serde_json::to_writer(&mut *out, id).expect("writing to a Vec cannot fail");
    out.extend_from_slice(b",\"method\":");
    raw::write_json_str(out, method);
    out.extend_from_slice(b",\"params\":");
    f(out);
    out.push(b'}');
}
