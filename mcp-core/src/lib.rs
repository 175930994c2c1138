//! Sans-IO Model Context Protocol engine
#![forbid(unsafe_code)]
#![deny(clippy::disallowed_methods)]

pub mod codec;
pub mod jsonrpc;
