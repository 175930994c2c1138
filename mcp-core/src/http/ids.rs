//! The handles an HTTP server gives its exchanges and sessions

use std::fmt;

/// One open HTTP response the binding is writing; from [`Reply::Open`](super::Reply::Open), in every
/// [`Output`](super::Output), and given back to [`HttpServer::handle_closed`](super::HttpServer::handle_closed)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub(super) u64);

impl fmt::Display for ExchangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exchange#{}", self.0)
    }
}

/// Which session of an [`HttpServer`](super::HttpServer) an event came from, or a command goes to
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey(pub(super) u64);

impl SessionKey {
    /// The one session serving every 2026 (stateless) request
    pub const STATELESS: Self = Self(0);
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "session#{}", self.0)
    }
}
