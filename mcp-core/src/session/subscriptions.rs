//! Subscriptions, server side, in both eras, kept by the core so the application only says
//! what changed
//!
//! - 2026-07-28: `subscriptions/listen` opens a long-lived request. The core intersects the
//!   requested filter with what the server offers (`listChanged` flags, `resources.subscribe`,
//!   the tasks extension), sends `notifications/subscriptions/acknowledged` first, then tags
//!   every notification it routes there with `_meta["io.modelcontextprotocol/subscriptionId"]`
//!   (the listen request's id). The client ends it with `notifications/cancelled`; the server
//!   ends all with [`Session::end_subscriptions`], which answers each listen request.
//! - Legacy era: `resources/subscribe` / `resources/unsubscribe` are answered by the core;
//!   list_changed notifications go to the client when the server declared `listChanged`.
//!
//! The application calls [`Session::notify_list_changed`] and
//! [`Session::notify_resource_updated`]; modern task status changes are routed to the
//! subscriptions that name the task automatically.
//!
//! Bounded: at most [`Limits::max_subscriptions`](super::Limits::max_subscriptions) listen
//! streams and as many resource URIs per stream or legacy session. A stream whose
//! notifications cannot be queued (the transmit queue is past
//! [`Limits::max_queued_bytes`](super::Limits::max_queued_bytes)) is ended with a -32603
//! error telling the client that it missed notifications and should listen again.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::subscription_table::{ListenFilter, Listener, subscription_covers};
use super::task_table::TASKS_EXTENSION;
use super::transmit_queue::Relation;
use super::{Answer, Core, SendError, ServerSession};
use crate::jsonrpc::{self, ErrorObject, RequestId};
use crate::raw::{self, Patch};
use crate::schema::{ListKind, has_capability, meta};
use crate::version::Era;

#[derive(Deserialize, Default)]
struct ListenParams {
    #[serde(default)]
    notifications: ListenFilter,
}

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

impl ServerSession {
    /// Tells subscribed clients that a list changed
    ///
    /// Legacy: `notifications/<kind>/list_changed` when the server declared `listChanged`
    /// for it and the session is initialized. Modern: to every listen stream that asked for
    /// it, tagged with its subscription id.
    ///
    /// # Errors
    /// [`SendError::Closed`] after close; [`SendError::NotAllowed`] when the server did not
    /// declare `listChanged` for this list.
    pub fn notify_list_changed(&mut self, kind: ListKind) -> Result<(), SendError> {
        self.core.notify_list_changed(kind)
    }

    /// Tells subscribed clients that a resource changed
    ///
    /// Sent to legacy subscribers of `uri` (or of a parent `uri/...` prefix) and to modern
    /// listen streams that name it. Returns how many notifications were queued.
    ///
    /// # Errors
    /// [`SendError::Closed`] after close.
    pub fn notify_resource_updated(&mut self, uri: &str) -> Result<usize, SendError> {
        self.core.notify_resource_updated(uri)
    }

    /// Ends every modern listen stream gracefully (server shutdown): each listen request is
    /// answered with its subscription id
    pub fn end_subscriptions(&mut self) {
        let listeners = std::mem::take(&mut self.core.subscriptions.listeners);
        for l in listeners {
            let result = listen_result(&l.id);
            self.core
                .answer(Some(&l.id), None, Answer::ModernResult(&result));
        }
    }

    /// Open modern listen streams
    pub fn subscription_count(&self) -> usize {
        self.core.subscriptions.listeners.len()
    }
}

fn listen_result(id: &RequestId) -> String {
    json!({"_meta": {meta::SUBSCRIPTION_ID: id}}).to_string()
}

impl Core {
    /// `subscriptions/listen`, `resources/subscribe`, `resources/unsubscribe`; `true` when the
    /// request was one of them (and is answered or registered)
    pub(super) fn serve_subscription(
        &mut self,
        request: &jsonrpc::Request,
        era: Era,
        request_caps: &Value,
        batch: Option<u32>,
    ) -> bool {
        let id = &request.id;
        let params = request.params.as_deref().map_or("{}", RawValue::get);
        match request.method.as_str() {
            "subscriptions/listen" if era == Era::Modern => {
                let Ok(listen) = serde_json::from_str::<ListenParams>(params) else {
                    let error = ErrorObject::invalid_params("invalid subscriptions/listen params");
                    self.answer(Some(id), batch, Answer::Error(&error));
                    return true;
                };
                if self.subscriptions.is_listener(id) {
                    let error = ErrorObject::invalid_request(format!(
                        "request id {id} is already in use by a subscription"
                    ));
                    self.answer(Some(id), batch, Answer::Error(&error));
                    return true;
                }
                if self.subscriptions.listeners.len() >= self.limits().max_subscriptions {
                    let error = ErrorObject::internal_error(format!(
                        "too many subscriptions (limit {})",
                        self.limits().max_subscriptions
                    ));
                    self.answer(Some(id), batch, Answer::Error(&error));
                    return true;
                }
                self.open_listener(id, listen.notifications, request_caps);
                true
            }
            "resources/subscribe" if era == Era::Legacy => {
                let Ok(p) = serde_json::from_str::<UriParams>(params) else {
                    let error = ErrorObject::invalid_params("resources/subscribe needs a `uri`");
                    self.answer(Some(id), batch, Answer::Error(&error));
                    return true;
                };
                let limit = self.limits().max_subscriptions;
                let set = &mut self.subscriptions.legacy_resources;
                if set.len() >= limit && !set.contains(&p.uri) {
                    let error = ErrorObject::invalid_params(format!(
                        "too many resource subscriptions (limit {limit})"
                    ));
                    self.answer(Some(id), batch, Answer::Error(&error));
                    return true;
                }
                set.insert(p.uri);
                self.answer(Some(id), batch, Answer::Result("{}"));
                true
            }
            "resources/unsubscribe" if era == Era::Legacy => {
                if let Ok(p) = serde_json::from_str::<UriParams>(params) {
                    self.subscriptions.legacy_resources.remove(&p.uri);
                }
                self.answer(Some(id), batch, Answer::Result("{}"));
                true
            }
            _ => false,
        }
    }

    /// Registers a listen stream with the granted part of its filter and acknowledges it
    fn open_listener(&mut self, id: &RequestId, filter: ListenFilter, request_caps: &Value) {
        let caps = self.own_caps();
        let offers = |list: &str| has_capability(caps, &[list, "listChanged"]);
        let lists = [
            filter.tools_list_changed && offers("tools"),
            filter.prompts_list_changed && offers("prompts"),
            filter.resources_list_changed && offers("resources"),
        ];
        let limit = self.limits().max_subscriptions;
        let resources: BTreeSet<String> = if has_capability(caps, &["resources", "subscribe"]) {
            filter
                .resource_subscriptions
                .into_iter()
                .take(limit)
                .collect()
        } else {
            BTreeSet::new()
        };
        let tasks_offered = has_capability(caps, &["extensions", TASKS_EXTENSION])
            && has_capability(request_caps, &["extensions", TASKS_EXTENSION]);
        let tasks: BTreeSet<String> = if tasks_offered {
            filter.task_ids.into_iter().take(limit).collect()
        } else {
            BTreeSet::new()
        };
        let mut granted = serde_json::Map::new();
        for (on, key) in lists.iter().zip([
            "toolsListChanged",
            "promptsListChanged",
            "resourcesListChanged",
        ]) {
            if *on {
                granted.insert(key.into(), json!(true));
            }
        }
        if !resources.is_empty() {
            granted.insert("resourceSubscriptions".into(), json!(resources));
        }
        if !tasks.is_empty() {
            granted.insert("taskIds".into(), json!(tasks));
        }
        self.subscriptions.listeners.push(Listener {
            id: id.clone(),
            lists,
            resources,
            tasks,
            principal: super::caller::principal_of(self.caller.as_ref()).cloned(),
        });
        let params = json!({ "notifications": granted });
        self.send_tagged(
            id,
            "notifications/subscriptions/acknowledged",
            &params.to_string(),
        );
    }

    /// Writes a notification tagged with a subscription id; ends the stream when the
    /// transmit queue is full
    fn send_tagged(&mut self, id: &RequestId, method: &str, params: &str) {
        if matches!(self.phase, super::phase::Phase::Closed) {
            return;
        }
        if self.out.len() > self.limits().max_queued_bytes {
            self.stats.dropped_messages += 1;
            if self.subscriptions.cancel(id) {
                let error = ErrorObject::internal_error(
                    "the subscription fell behind and lost notifications; listen again",
                );
                self.answer(Some(id), None, Answer::Error(&error));
            }
            return;
        }
        let subscription = serde_json::to_string(id).expect("an id serializes");
        let out = self.out.start();
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
        raw::write_json_str(out, method);
        out.extend_from_slice(b",\"params\":");
        raw::write_patched(
            out,
            Some(params),
            &Patch {
                members: &[],
                meta: &[(meta::SUBSCRIPTION_ID, subscription.as_bytes())],
                meta_wins: true,
            },
        );
        out.push(b'}');
        self.out.finish_as(Relation::During(id.clone()));
    }

    fn check_open(&self) -> Result<(), SendError> {
        if matches!(self.phase, super::phase::Phase::Closed) || self.eof {
            return Err(SendError::Closed);
        }
        Ok(())
    }

    pub(super) fn notify_list_changed(&mut self, kind: ListKind) -> Result<(), SendError> {
        self.check_open()?;
        if !has_capability(self.own_caps(), &[kind.capability(), "listChanged"]) {
            return Err(SendError::NotAllowed {
                method: kind.method().to_owned(),
                reason: "the server did not declare listChanged for this list",
            });
        }
        let legacy_ready = self.phase.version().is_some_and(|v| v.era() == Era::Legacy);
        if legacy_ready {
            let out = self.out.start();
            jsonrpc::write_notification(out, kind.method(), None);
            self.out.finish();
        }
        let index = kind as usize;
        let ids: Vec<RequestId> = self
            .subscriptions
            .listeners
            .iter()
            .filter(|l| l.lists[index])
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.send_tagged(&id, kind.method(), "{}");
        }
        Ok(())
    }

    pub(super) fn notify_resource_updated(&mut self, uri: &str) -> Result<usize, SendError> {
        self.check_open()?;
        let covers = |subscribed: &String| subscription_covers(subscribed, uri);
        let params = json!({ "uri": uri }).to_string();
        let mut sent = 0;
        let legacy_ready = self.phase.version().is_some_and(|v| v.era() == Era::Legacy);
        if legacy_ready && self.subscriptions.legacy_resources.iter().any(covers) {
            let raw = RawValue::from_string(params.clone()).expect("valid JSON");
            let out = self.out.start();
            jsonrpc::write_notification(out, "notifications/resources/updated", Some(&raw));
            self.out.finish();
            sent += 1;
        }
        let ids: Vec<RequestId> = self
            .subscriptions
            .listeners
            .iter()
            .filter(|l| l.resources.iter().any(covers))
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.send_tagged(&id, "notifications/resources/updated", &params);
            sent += 1;
        }
        Ok(sent)
    }

    /// Routes a modern task's status to the streams that name it
    /// A task's change, to the listeners of its creator that asked for it
    pub(super) fn notify_task_listeners(
        &mut self,
        task_id: &str,
        owner: Option<&super::Principal>,
        detailed: &str,
    ) {
        let ids: Vec<RequestId> = self
            .subscriptions
            .listeners
            .iter()
            .filter(|l| l.tasks.contains(task_id) && l.principal.as_ref() == owner)
            .map(|l| l.id.clone())
            .collect();
        for id in ids {
            self.send_tagged(&id, "notifications/tasks", detailed);
        }
    }
}
