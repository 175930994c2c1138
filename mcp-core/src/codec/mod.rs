//! Framing: newline-delimited JSON and server-sent events
//!
//! Both framers are push/pull state machines: feed them the bytes the transport read with
//! `push`, then pull complete frames or events until they answer `None`. They never do IO,
//! and they hold at most about one maximum-size frame plus one pushed chunk of unframed data.

pub mod ndjson;
pub mod sse;

pub use ndjson::{LineCodec, encode_frame};
pub use sse::{SseDecoder, SseEvent, encode_comment, encode_event};

/// Why one frame (a line of JSON, or one server-sent event) was rejected.
///
/// The framer has already skipped the bad frame when it reports this; the frames after it
/// still arrive, so a caller may log the error and keep reading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame was longer than the configured maximum; its bytes were dropped unread.
    #[error("message larger than {limit} bytes")]
    TooLong {
        /// The configured maximum frame size in bytes.
        limit: usize,
    },
    /// The frame contained bytes that are not valid UTF-8.
    #[error("message is not valid UTF-8")]
    InvalidUtf8,
}
