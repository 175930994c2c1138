//! [`Inbound`]: what a server does for one request it has not answered yet, besides answering

use std::time::Instant;

use serde_json::value::RawValue;

use super::ask::{AskError, Asked};
use super::ids::InboundId;
use super::ids::TaskId;
use super::task_table::{TaskError, TaskOptions};
use super::{Progress, ProgressError, SendError, ServerSession};
use crate::schema::method::Notification;
use crate::schema::{FitVersion, InputRequests};

impl ServerSession {
    /// The handle of an inbound request still to be answered: report progress on it, ask the
    /// client for input, turn it into a task, send notifications that belong to it
    ///
    /// Any id works: once the request has ended (answered, cancelled by the client, or the
    /// session closed) the handle's commands are no-ops or say so in their errors. The
    /// [`Responder`](super::Responder) stays with the handler and is consumed only by the
    /// answer.
    ///
    /// ```
    /// # use mcp_sansio::testing::Pair;
    /// # use mcp_sansio::{ServerEvent, Progress, ProtocolVersion, RequestOptions};
    /// # use mcp_sansio::schema::{CallToolParams, CallToolResult, method::CallTool};
    /// # let mut pair = Pair::legacy(std::time::Instant::now(), ProtocolVersion::V2025_11_25);
    /// # pair.drive();
    /// # pair.client.send_request::<CallTool>(pair.now, CallToolParams::new("slow"), RequestOptions::default().with_progress())?;
    /// # pair.drive();
    /// # let Some(ServerEvent::Request(request)) = pair.server_events().pop() else { unreachable!() };
    /// let id = request.responder.id();
    /// pair.server.inbound(id).report_progress(&Progress::new(0.5).total(1.0))?;
    /// pair.server.respond(request.responder, CallToolResult::text("done"))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inbound(&mut self, id: InboundId) -> Inbound<'_> {
        Inbound { session: self, id }
    }
}

/// One inbound request of a [`ServerSession`], borrowed: from
/// [`ServerSession::inbound`](super::Session::inbound)
#[derive(Debug)]
pub struct Inbound<'a> {
    session: &'a mut ServerSession,
    id: InboundId,
}

impl Inbound<'_> {
    /// Reports progress, if the client asked for it
    ///
    /// A no-op returning `Ok` if the request already ended. While more than
    /// [`Limits::max_queued_bytes`](super::Limits::max_queued_bytes) wait to be transmitted
    /// the report is dropped (counted in [`Stats::dropped_messages`](super::Stats)): a later
    /// report supersedes it, and a client that does not read cannot grow the queue.
    ///
    /// # Errors
    /// [`ProgressError::NotRequested`] if the client gave no progress token;
    /// [`ProgressError::NotIncreasing`] if `progress` does not exceed the last value sent;
    /// [`ProgressError::NotFinite`] if `progress` or `total` is NaN or infinite.
    pub fn report_progress(&mut self, progress: &Progress) -> Result<(), ProgressError> {
        self.session.core.report_progress(self.id, progress)
    }

    /// Asks the client for input on behalf of the request's handler, in either era
    ///
    /// `requests` maps keys of the handler's choosing to input requests. On a modern request
    /// the core answers it with `input_required` (a sealed `requestState` carries what is
    /// known) and the client's retry runs the handler again with the answers; on a legacy
    /// session it sends live requests whose answers arrive as
    /// [`ServerEvent::InputAnswered`](super::ServerEvent::InputAnswered). [`Asked`] says
    /// which happened.
    ///
    /// # Errors
    /// [`AskError`]: the request ended, the client lacks the capability (answer with
    /// [`AskError::to_error`]), the method cannot take input in this era, no state key, or
    /// an invalid answer from the client.
    pub fn ask_input(&mut self, now: Instant, requests: InputRequests) -> Result<Asked, AskError> {
        self.session.core.tick(now);
        let result = self.session.core.ask_input(self.id, requests);
        self.session.pump(false);
        result
    }

    /// Answers the request with a task handle instead of a result, and keeps the work going
    ///
    /// The client offered a task; the handler reports
    /// with [`update_task`](super::Session::update_task). The task is in the table before the
    /// handle is sent, so `tasks/get` finds it at once. On success the request has ended and
    /// answering it later is a no-op; on an error it is still in flight.
    ///
    /// # Errors
    /// [`TaskError::NotOffered`] (the request is left as it was: answer it directly),
    /// [`TaskError::NotInFlight`], [`TaskError::TableFull`] (answer it directly, e.g. with
    /// [`TaskError::to_error`]).
    pub fn start_task(&mut self, now: Instant, options: TaskOptions) -> Result<TaskId, TaskError> {
        self.session.core.tick(now);
        self.session.core.start_task(self.id, options)
    }

    /// Sends a typed notification that belongs to this request (a `notifications/message`
    /// log line its handler writes, say), fitted to the request's version
    ///
    /// On a byte stream it is an ordinary notification; the frame's
    /// [`Transmit::relation`](super::Transmit::relation) names the request, so Streamable
    /// HTTP sends it on that request's response stream (in 2026-07-28 there is nowhere else
    /// for it to go). A no-op returning `Ok` if the request already ended.
    ///
    /// # Errors
    /// As [`Session::send_notification`](super::Session::send_notification), except that it
    /// may be used before a legacy client's `notifications/initialized`.
    pub fn send_notification<N: Notification>(
        &mut self,
        mut params: N::Params,
    ) -> Result<(), SendError> {
        if let Some(version) = self.session.core.inbound.version_of(self.id) {
            params.fit_to(version);
        }
        let raw =
            serde_json::value::to_raw_value(&params).map_err(|_| SendError::ParamsNotAnObject)?;
        self.send_notification_raw(N::NAME, Some(&raw))
    }

    /// [`send_notification`](Self::send_notification) by method name with raw JSON params
    ///
    /// # Errors
    /// As [`send_notification`](Self::send_notification).
    pub fn send_notification_raw(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), SendError> {
        self.session
            .core
            .send_notification_for(self.id, method, params)
    }
}
