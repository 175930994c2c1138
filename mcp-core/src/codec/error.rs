//! Why a frame was rejected

use super::skim;
use crate::jsonrpc::RequestId;

fn too_long(limit: usize, size: Option<u64>) -> String {
    match size {
        Some(size) => format!("message of {size} bytes is larger than the limit of {limit} bytes"),
        None => format!("message larger than {limit} bytes"),
    }
}

/// The error for `message`, over `limit` bytes, with what it tells of itself
pub(crate) fn too_long_told(limit: usize, message: &[u8]) -> FrameError {
    let mut skim = skim::Skim::default();
    skim.feed(message);
    let told = skim.finish();
    FrameError::TooLong {
        limit,
        size: Some(told.size),
        id: told.id,
        request: told.method,
    }
}

impl FrameError {
    /// A frame over `limit` bytes about which nothing else is known
    pub(crate) fn too_long(limit: usize) -> Self {
        Self::TooLong {
            limit,
            size: None,
            id: None,
            request: false,
        }
    }
}

/// Why one frame (a line of JSON, or one server-sent event) was rejected.
///
/// The framer has already skipped the bad frame when it reports this; the frames after it
/// still arrive, so a caller may log the error and keep reading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame was longer than the configured maximum; its bytes were dropped unread
    /// (and, for a line, skimmed as they passed: its size, top-level `id` and `method`).
    #[error("{}", too_long(*.limit, *.size))]
    TooLong {
        /// The configured maximum frame size in bytes.
        limit: usize,
        /// The frame's size in bytes, when its end was seen (newline-delimited JSON)
        size: Option<u64>,
        /// The frame's top-level JSON-RPC `id`, when it had a number or a short string there
        id: Option<RequestId>,
        /// Whether the frame had a top-level `method` (a request or a notification)
        request: bool,
    },
    /// The frame contained bytes that are not valid UTF-8.
    #[error("message is not valid UTF-8")]
    InvalidUtf8,
}
