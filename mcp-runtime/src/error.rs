//! Why a client call or a connection failed, in every binding's words

use std::io;

use mcp_sansio::{CallError, SendError};

/// Why a call failed
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request could not be sent (local misuse, or the session is closed)
    #[error(transparent)]
    Send(#[from] SendError),
    /// The request was sent and ended without a result
    #[error(transparent)]
    Call(#[from] CallError),
    /// The connection is gone (its actor or driver ended)
    #[error("the connection is closed")]
    Closed,
}

/// Why connecting failed
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// Starting the child process (or a thread) failed
    #[error("could not start the server `{program}`: {source}")]
    Spawn {
        /// The program (or the thread's name)
        program: String,
        /// Why
        source: io::Error,
    },
    /// The child process exited before the handshake was done
    #[error("the server `{program}` exited ({status}) before the handshake was done")]
    Exited {
        /// The program
        program: String,
        /// How it ended (`exit status: 1`, `signal: 9 (SIGKILL)`)
        status: String,
    },
    /// The server could not be reached, or the connection failed before the handshake
    /// was done: a local failure, with the target and the cause
    #[error("{0}")]
    Transport(String),
    /// The URL is not an `http://` or `https://` URL (or `https://` without the `tls` feature)
    #[error("invalid URL: {0}")]
    Url(String),
    /// The handshake or discovery failed
    #[error("the handshake failed: {0}")]
    Handshake(String),
    /// The client's options cannot be used (a header the transport owns, a certificate
    /// that does not parse)
    #[error("invalid client options: {0}")]
    Options(String),
}

impl ConnectError {
    /// Why connecting failed, from why the session closed
    pub fn from_close(reason: mcp_sansio::CloseReason) -> Self {
        match reason {
            mcp_sansio::CloseReason::Handshake(why) => Self::Handshake(why),
            mcp_sansio::CloseReason::Transport(why) => Self::Transport(why),
            other => Self::Transport(format!("the connection closed ({other})")),
        }
    }

    /// Starting `program` failed
    pub fn spawn(program: impl std::fmt::Display, source: io::Error) -> Self {
        Self::Spawn {
            program: program.to_string(),
            source,
        }
    }
}
