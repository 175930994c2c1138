//! Where a session stands: its lifecycle phase, and what the peer declared about itself

use std::sync::Arc;

use serde_json::Value;

use crate::schema::Implementation;
use crate::version::ProtocolVersion;

/// Where a session is in its lifecycle
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Client: waiting for the answer to `server/discover` (sent with `version`)
    Discovering {
        version: ProtocolVersion,
        attempt: u8,
    },
    /// Client: waiting for the answer to `initialize`; `fallback` when `Auto` sent it after
    /// discovery failed (a -32022 answer then means the server is modern after all)
    Initializing { fallback: bool },
    /// Server: no `initialize` yet; modern requests are served one by one
    Fresh,
    /// Server: answered `initialize`; waiting for `notifications/initialized`
    Initialized { version: ProtocolVersion },
    /// Handshake or discovery done
    Ready { version: ProtocolVersion },
    /// Ended; `Event::Closed` was emitted
    Closed,
}

impl Phase {
    /// The version of a negotiated connection
    pub(crate) fn version(self) -> Option<ProtocolVersion> {
        match self {
            Self::Initialized { version } | Self::Ready { version } => Some(version),
            _ => None,
        }
    }
}

/// What the peer declared about itself
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PeerInfo {
    /// The version in use
    pub version: ProtocolVersion,
    /// The peer's name and version (`clientInfo` / `serverInfo`), if it sent them
    pub info: Option<Implementation>,
    /// The peer's capabilities, a JSON object
    pub capabilities: Arc<Value>,
    /// The server's instructions for the model, if any
    pub instructions: Option<String>,
}
