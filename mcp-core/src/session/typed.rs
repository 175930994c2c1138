//! Typed requests and answers on top of the raw session API
//!
//! The raw API moves JSON text; these wrappers take and return the types of
//! [`schema`](crate::schema), fit what is sent to the protocol version in use
//! ([`FitVersion`]), and decode what comes back, so a misnamed method or a missing field is a
//! compile error or a clear decode error.

use std::fmt;
use std::marker::PhantomData;
use std::time::Instant;

use serde::Serialize;
use serde_json::value::RawValue;

use super::{
    CallError, InboundRequest, OutboundId, RequestOptions, RespondError, Responder, Role,
    SendError, Session,
};
use crate::jsonrpc::ErrorObject;
use crate::schema::FitVersion;
use crate::schema::method::{Method, Notification};

/// A typed handle to a request in flight; match it against
/// `Response` event and decode the outcome with
/// [`decode`](Self::decode)
pub struct Pending<M> {
    id: OutboundId,
    method: PhantomData<fn() -> M>,
}

impl<M> Pending<M> {
    /// The request's id
    pub fn id(self) -> OutboundId {
        self.id
    }
}

impl<M: Method> Pending<M> {
    /// Decodes the request's outcome into the method's result type
    ///
    /// # Errors
    /// The outcome's own [`CallError`], or [`CallError::InvalidResult`] when the result does
    /// not match the method's result type.
    pub fn decode(self, outcome: Result<Box<RawValue>, CallError>) -> Result<M::Result, CallError> {
        let raw = outcome?;
        serde_json::from_str(raw.get())
            .map_err(|e| CallError::InvalidResult(format!("invalid {} result: {e}", M::NAME)))
    }
}

impl<M> Clone for Pending<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Pending<M> {}

impl<M> PartialEq for Pending<M> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<M> Eq for Pending<M> {}

impl<M> PartialEq<OutboundId> for Pending<M> {
    fn eq(&self, other: &OutboundId) -> bool {
        self.id == *other
    }
}

impl<M> fmt::Debug for Pending<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pending({}, {})", self.id, std::any::type_name::<M>())
    }
}

impl<R: Role> Session<R> {
    /// Sends a typed request, fitted to the version in use
    ///
    /// ```
    /// # use mcp_sansio::testing::Pair;
    /// # use mcp_sansio::{ProtocolVersion, RequestOptions};
    /// use mcp_sansio::schema::{CallToolParams, method::CallTool};
    /// # let mut pair = Pair::legacy(std::time::Instant::now(), ProtocolVersion::V2025_11_25);
    /// # pair.drive();
    /// let call = pair.client.send_request::<CallTool>(
    ///     pair.now,
    ///     CallToolParams::new("echo"),
    ///     RequestOptions::default(),
    /// )?;
    /// # Ok::<(), mcp_sansio::SendError>(())
    /// ```
    ///
    /// # Errors
    /// As [`send_request_raw`](Self::send_request_raw).
    pub fn send_request<M: Method>(
        &mut self,
        now: Instant,
        mut params: M::Params,
        options: RequestOptions,
    ) -> Result<Pending<M>, SendError> {
        if let Some(version) = self.version() {
            params.fit_to(version);
        }
        let raw =
            serde_json::value::to_raw_value(&params).map_err(|_| SendError::ParamsNotAnObject)?;
        let id = self.send_request_raw(now, M::NAME, Some(raw), options)?;
        Ok(Pending {
            id,
            method: PhantomData,
        })
    }

    /// Sends a typed notification, fitted to the version in use
    ///
    /// # Errors
    /// As [`send_notification_raw`](Self::send_notification_raw).
    pub fn send_notification<N: Notification>(
        &mut self,
        mut params: N::Params,
    ) -> Result<(), SendError> {
        if let Some(version) = self.version() {
            params.fit_to(version);
        }
        let raw =
            serde_json::value::to_raw_value(&params).map_err(|_| SendError::ParamsNotAnObject)?;
        self.send_notification_raw(N::NAME, Some(&raw))
    }

    /// Answers an inbound request with a typed result, fitted to the request's version
    ///
    /// A no-op returning `Ok` if the request already ended (cancelled by the peer, or the
    /// session closed).
    ///
    /// # Errors
    /// As [`respond_raw`](Self::respond_raw).
    pub fn respond<T: Serialize + FitVersion>(
        &mut self,
        responder: Responder,
        mut result: T,
    ) -> Result<(), RespondError> {
        let Some(version) = self.core.inbound.version_of(responder.id) else {
            return Ok(());
        };
        result.fit_to(version);
        match serde_json::value::to_raw_value(&result) {
            Ok(raw) => self.respond_raw(responder, &raw),
            Err(_) => Err(RespondError::ResultNotAnObject(responder)),
        }
    }
}

impl InboundRequest {
    /// Whether this is a request of method `M`
    pub fn is<M: Method>(&self) -> bool {
        self.method == M::NAME
    }

    /// Decodes the params as method `M`'s params (absent params decode from `{}`)
    ///
    /// # Errors
    /// An `invalid params` (-32602) error naming what is wrong (for example a missing
    /// required field), ready to send with [`Session::respond_error`].
    pub fn params<M: Method>(&self) -> Result<M::Params, ErrorObject> {
        serde_json::from_str(self.params.as_deref().map_or("{}", RawValue::get))
            .map_err(|e| ErrorObject::invalid_params(format!("invalid {} params: {e}", M::NAME)))
    }
}
