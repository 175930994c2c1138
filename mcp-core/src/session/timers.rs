//! Timers and the peer's end, routed to the sub-machines: each request past its deadline,
//! and each request still in flight when the peer closes, goes to the sub-machine its
//! [`Owner`] names. Like `receive.rs` (messages from the peer), this file is at the top of
//! the session's layers (see `tests/session/layers.rs`): it may call every sub-machine, none calls it.

use super::outbound_table::Owner;
use super::phase::Phase;
use super::{CallError, CloseReason, Core, Event};

impl Core {
    /// Fires what is due: task expiry, then each request past its deadline, routed by its
    /// owner (a followed task is polled or times out, an input or task operation tells its
    /// sub-machine)
    pub(super) fn fire_timers(&mut self) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        self.expire_tasks();
        self.store_timers();
        while let Some(wire) = self.outbound.expired(self.now) {
            let entry = self.outbound.remove(wire).expect("listed in deadlines");
            match &entry.owner {
                Owner::App(call)
                    if call.task.is_some() && call.cap.is_none_or(|c| self.now < c) =>
                {
                    self.poll_task(wire, entry);
                }
                Owner::App(call) if call.task.is_some() => {
                    let id = call.id;
                    self.cancel_followed_task(&entry);
                    self.events.push_back(Event::Response {
                        id,
                        outcome: Err(CallError::TimedOut),
                    });
                }
                Owner::Task { call, op } => {
                    let (call, op) = (*call, *op);
                    self.write_cancelled(wire, "the request timed out");
                    self.task_op_answered(call, op, Err(CallError::TimedOut));
                }
                Owner::App(call) => {
                    let id = call.id;
                    self.write_cancelled(wire, "the request timed out");
                    self.events.push_back(Event::Response {
                        id,
                        outcome: Err(CallError::TimedOut),
                    });
                }
                Owner::Input { request, .. } => {
                    let request = *request;
                    self.write_cancelled(wire, "the request timed out");
                    self.input_answered(request, &entry, Err(CallError::TimedOut));
                }
                Owner::TaskInput { .. } => {
                    // The task stays input_required; its handler may fail it.
                    self.write_cancelled(wire, "the request timed out");
                }
                Owner::Initialize => {
                    self.close(CloseReason::Handshake(
                        "the server did not answer initialize in time".into(),
                    ));
                }
                Owner::Discover => {
                    self.client_discover_failed("the server did not answer server/discover in time")
                }
            }
        }
    }

    /// The peer closed its side: every request in flight ends, by its owner
    pub(super) fn peer_eof(&mut self) {
        self.eof = true;
        for (_, entry) in self.outbound.drain() {
            match &entry.owner {
                Owner::App(call) => self.events.push_back(Event::Response {
                    id: call.id,
                    outcome: Err(CallError::SessionClosed),
                }),
                // The handler that asked may still answer its request: tell it no input comes.
                Owner::Input { request, .. } => {
                    let request = *request;
                    self.input_answered(request, &entry, Err(CallError::SessionClosed));
                }
                Owner::TaskInput { .. }
                | Owner::Task { .. }
                | Owner::Initialize
                | Owner::Discover => {}
            }
        }
        if !matches!(
            self.phase,
            Phase::Ready { .. } | Phase::Initialized { .. } | Phase::Fresh
        ) && self.role.is_client()
        {
            // The connection went away: a transport failure, not a refusal.
            self.close(CloseReason::Transport(
                "the server closed the connection before the handshake was done".into(),
            ));
            return;
        }
        self.close_if_drained();
    }
}
