//! JSON-RPC 2.0 envelope
//!
//! This layer sits between the framing ([`codec`](crate::codec)) and the session. It turns one
//! frame into [`Message`]s with [`decode`] and writes messages with the `write_*` encoders.
//!
//! Parse once: [`decode`] makes a single pass over the frame, classifies it by the JSON-RPC 2.0
//! and MCP rules, and keeps `params`, `result` and error `data` as raw JSON text
//! ([`RawValue`](serde_json::value::RawValue)), byte for byte, until someone asks for the typed
//! value. The encoders append compact JSON to a buffer and copy raw values through unchanged.
//!
//! Decoding never fails and never panics: what is not a valid message becomes an [`Invalid`]
//! carrying the [`ErrorObject`] to reply with, the request id when it could be recovered, and
//! whether JSON-RPC allows a reply at all.

mod decode;
mod encode;
mod error;
mod id;
mod message;
mod raw;

pub use decode::{Decoded, Invalid, decode};
pub use encode::{ErrorId, write_error, write_notification, write_request, write_result};
pub use error::{ErrorObject, code};
pub use id::RequestId;
pub use message::{Message, Notification, Request, Response};
