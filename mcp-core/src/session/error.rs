//! Errors of session commands: local misuse only; the session is unchanged when one is returned

/// Errors from [`Session::send_request`](super::Session::send_request),
/// [`Session::send_notification`](super::Session::send_notification) and their raw forms
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The handshake has not finished; wait for the `Ready` event
    #[error("the session is not ready yet")]
    NotReady,
    /// The session is closing or closed
    #[error("the session is closed")]
    Closed,
    /// Too many bytes wait in `poll_transmit`; wait for the `Unblocked` event
    #[error("the send queue is full")]
    Blocked,
    /// [`Limits::max_in_flight_outbound`](super::Limits::max_in_flight_outbound) requests are in flight
    #[error("too many requests in flight")]
    TooManyRequests,
    /// The peer did not declare the capability this method needs
    #[error("the peer did not declare the `{capability}` capability that `{method}` needs")]
    MissingCapability {
        /// The method
        method: String,
        /// The capability path, e.g. `resources.subscribe`
        capability: &'static str,
    },
    /// The method may not be sent by this side in this era, or the core sends it itself
    #[error("`{method}` cannot be sent here: {reason}")]
    NotAllowed {
        /// The method
        method: String,
        /// Why not
        reason: &'static str,
    },
    /// The params are not a JSON object
    #[error("params must be a JSON object")]
    ParamsNotAnObject,
}

/// Errors from [`Session::respond`](super::Session::respond) and
/// [`Session::respond_raw`](super::Session::respond_raw); nothing was sent
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RespondError {
    /// The result is not a JSON object (or did not serialize to one); the request is still
    /// in flight: answer it through the [`Responder`](super::Responder) handed back, with
    /// [`respond_error`](super::Session::respond_error) say
    #[error("a result must be a JSON object")]
    ResultNotAnObject(super::Responder),
}

impl RespondError {
    /// The responder the failed command handed back, to answer the request otherwise
    pub fn into_responder(self) -> super::Responder {
        match self {
            Self::ResultNotAnObject(responder) => responder,
        }
    }
}

/// Errors from [`Inbound::report_progress`](super::Inbound::report_progress)
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// The peer did not ask for progress on this request
    #[error("the peer did not ask for progress on this request")]
    NotRequested,
    /// Progress must increase with every report
    #[error("progress must increase: {given} does not exceed {last}")]
    NotIncreasing {
        /// The last value sent
        last: f64,
        /// The value refused
        given: f64,
    },
    /// The progress value or the total is not a finite number
    #[error("progress and total must be finite numbers")]
    NotFinite,
}

/// Errors from [`Session::cancel`](super::Session::cancel)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CancelError {
    /// The request already ended (its `Event::Response` is queued or was delivered)
    #[error("the request is not in flight")]
    NotInFlight,
}
