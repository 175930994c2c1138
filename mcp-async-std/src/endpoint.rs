pub use mcp_sansio_runtime::endpoint::{BodyStream, Dropped, Next};
pub use mcp_sansio_runtime::http::Fields;

/// The endpoint's answer to one request
pub type Response = mcp_sansio_runtime::endpoint::Response<BodyStream<Vec<u8>>>;
/// A response's body: whole, or a stream of pieces
pub type Body = mcp_sansio_runtime::endpoint::Body<BodyStream<Vec<u8>>>;

/// A server's Streamable HTTP endpoint (both wires), from
/// [`Server::http_endpoint`](crate::Server::http_endpoint); request bodies are `Vec<u8>`
pub type HttpEndpoint = mcp_sansio_runtime::endpoint::Endpoint<Vec<u8>>;
