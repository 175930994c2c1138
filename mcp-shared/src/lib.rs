//! Internal to this workspace: the pieces every binding (mcp-sansio-tokio, mcp-sansio-async-std,
//! mcp-sansio-blocking) needs that are neither protocol logic (that is `mcp-sansio`'s) nor tied to a
//! runtime. Each binding re-exports what its users see.

#![forbid(unsafe_code)]

pub mod alarm;
#[cfg(feature = "auth")]
pub mod auth;
pub mod calls;
pub mod client;
#[cfg(feature = "http")]
pub mod http;
pub mod peer;
pub mod server;
#[cfg(unix)]
pub mod stdio;
