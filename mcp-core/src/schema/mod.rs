//! Typed MCP messages
//!
//! For now this holds the lifecycle messages the session engine itself reads and writes
//! (`initialize`, `server/discover`, the `_meta` keys of the modern era). Capabilities stay
//! JSON objects so that nothing a peer declares is lost; [`has_capability`] reads them.

mod lifecycle;

pub use lifecycle::{
    DiscoverResult, Implementation, InitializeParams, InitializeResult, has_capability, meta,
};
