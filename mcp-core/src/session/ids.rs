//! Handles: `Copy` ids to look things up, and the linear [`Responder`] obligation

use std::fmt;

/// A request we sent; matches the `Response` and `Progress` events
///
/// Ids are allocated by the session in increasing order and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutboundId(pub(crate) u64);

impl OutboundId {
    /// The JSON-RPC id the request carries on the wire
    pub fn wire_id(self) -> u64 {
        self.0
    }
}

impl fmt::Display for OutboundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "out#{}", self.0)
    }
}

/// A request the peer sent us; matches `Cancelled` event
///
/// A slot index plus a generation, so a stale id never matches a later request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InboundId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for InboundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in#{}.{}", self.slot, self.generation)
    }
}

/// The obligation to answer one inbound request
///
/// Consumed by [`Session::respond`](super::Session::respond). It is plain `Send` data: move it
/// to the task or thread that handles the request and hand it back with the answer. If the
/// peer cancels the request or the session closes first, responding is a harmless no-op.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "answer the request with Session::respond"]
pub struct Responder {
    pub(crate) id: InboundId,
}

impl Responder {
    /// The request's id, to match a later `Cancelled` event
    pub fn id(&self) -> InboundId {
        self.id
    }
}

/// Which request needs input: one of ours waiting to be retried (modern), or a live request
/// from the server (legacy)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputId {
    /// A request we sent got `input_required`; answering retries it
    Retry(OutboundId),
    /// The server asked directly (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`); answering responds to it
    Live(InboundId),
}

/// A task of this server session
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub(crate) u64);

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task#{}", self.0)
    }
}
