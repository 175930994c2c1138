//! The wire format: the vendored spec schemas against our types and our output, JSON-RPC decoding and round trips, and the NDJSON and SSE codecs

#[path = "../common/mod.rs"]
mod common;
mod schema_support;

mod codec_ndjson;
mod codec_sse;
mod examples;
mod jsonrpc_decode;
mod jsonrpc_roundtrip;
mod proptests;
mod roundtrip;
mod validate;
mod wire_schema;
