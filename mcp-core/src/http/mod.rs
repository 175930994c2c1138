//! Streamable HTTP, sans IO: the transport's rules as pure functions and state
//!
//! The binding owns the sockets and the HTTP library; this module decides everything the
//! MCP specification says about the transport, for both wires one endpoint serves:
//!
//! - **2025 wire** (protocol versions up to 2025-11-25): stateful sessions named by
//!   `Mcp-Session-Id`, POST/GET/DELETE, 202 for notifications and responses, SSE answers
//!   carrying related messages first, the standalone GET stream, resumability with event
//!   ids, `Last-Event-ID`, a bounded replay buffer, priming events and `retry:`.
//! - **2026 wire** (2026-07-28): stateless POSTs, `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name` and `Mcp-Param-*` checked against the body (-32020), the validation order
//!   and the status mapping, progress and logs on the request's own response, cancellation
//!   by closing it.
//! - DNS-rebinding protection ([`HostPolicy`]) on both; header hygiene (a value that is
//!   not UTF-8, two `Host` fields: 400); requests in progress capped per connection, per
//!   client address and in all (429 and 503 with `Retry-After`), by the [`Source`] the
//!   binding gives with each request; 2025 sessions bound to the [`Principal`] that created
//!   them, the least recently used idle one closed for a new client at `max_sessions`.
//! - [`ReadDeadline`]: the header-read, body-read and idle keep-alive deadlines of one
//!   connection, which every binding's server enforces, beside [`HttpConfig::max_connections`].
//! - [`x_mcp_header`]: which tool arguments a 2026 client mirrors into `Mcp-Param-*` headers,
//!   and which tools it drops for invalid annotations ([`filter_tools_list`]);
//!   [`encode_header_value`] / [`decode_header_value`]: the values of those headers.
//!
//! Server side: [`HttpServer`]. Client side: [`ClientTransport`] is the whole client as one machine (which requests to
//! make, what each response means); [`client`] holds its header rules.
//! Nothing here reads a clock (`now` comes in) or makes randomness (session ids come from
//! a [`SessionIdSource`]).
//!
//! Which wire a POST is on: the 2026 wire when it has no `Mcp-Session-Id` and either a
//! `MCP-Protocol-Version` header that is not a 2025-era version, or a protocol version in
//! `params._meta`; the 2025 wire otherwise.

mod classify;
pub mod client;
mod config;
mod deadline;
mod extra_headers;
mod header_value;
mod headers;
mod ids;
mod lane;
mod load;
mod modern;
mod origin;
pub mod protected;
mod response;
mod server;
mod session_id;
mod source;
mod stream;
mod transport;
pub mod x_mcp_header;

pub use classify::Wire;
pub use client::{HttpClient, ResponseKind};
pub use config::{HttpConfig, UNREAD_SLACK};
pub use deadline::{Expiry, ReadDeadline, ReadPhase};
pub use extra_headers::{HeaderError, check_header};
pub use header_value::{HeaderValueError, decode_header_value, encode_header_value};
pub use headers::Headers;
pub use ids::{ExchangeId, SessionKey};
pub use lane::{Lane, LaneOutput, Lanes, Taken};
pub use origin::HostPolicy;
pub use protected::RequiredScopes;
pub use response::{HttpResponse, ResponseHead};
pub use server::{HttpServer, Output, Reply};
pub use session_id::{InvalidNodeTag, NodeTag, SessionIdSource, session_id_from_bytes};
pub use source::{Principal, Source};
pub use transport::{ClientTransport, HttpMethod, HttpRequest, StreamId};
pub use x_mcp_header::{
    HeaderParam, ToolHeaderError, ToolWarning, filter_tools_list, validate_tool_headers,
};
