//! Framing: newline-delimited JSON and server-sent events
//!
//! Both framers are push/pull state machines: feed them the bytes the transport read with
//! `push`, then pull complete frames or events until they answer `None`. They never do IO,
//! and they hold at most about one maximum-size frame plus one pushed chunk of unframed data.

mod error;
pub mod ndjson;
mod skim;
pub mod sse;

pub use error::FrameError;
pub(crate) use error::too_long_told;
pub use ndjson::{LineCodec, encode_frame};
pub use sse::{SseDecoder, SseEvent, encode_comment, encode_event};
