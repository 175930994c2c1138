//! Server-side bookkeeping: what a server offers and what each client asked for
//!
//! Pure data structures, like the rest of the crate: no I/O, no clock, no async and no
//! handler closures. A binding (tokio, threads, Python, ...) owns the handlers; it asks these
//! types what to answer around them.
//!
//! - [`Catalog`]: tools, resources, resource templates and prompts. It answers the list
//!   requests (paginated, with caching hints), checks `tools/call` arguments against the
//!   tool's `inputSchema` ([`Catalog::check_call`]), finds what a `resources/read` URI names
//!   ([`Catalog::resolve`]), checks `prompts/get` arguments, helps with
//!   `completion/complete` ([`complete`]) and tracks list changes ([`ListChanges`]).
//!   [`Catalog::route`] makes all of those decisions for one inbound request: the answer to
//!   send now, or the handler (tool, resource reader, prompt, completion) to run;
//!   [`Catalog::try_route`] does the same but leaves the methods the catalog does not serve
//!   to a server that answers them itself.
//! - [`Runs`]: the handler runs of one session and every decision around them
//!   (`logging/setLevel` and which log filter applies, live input answers gathered for a
//!   handler's `ask`, a task's input, which run a cancellation stops, whether a result
//!   answers the request or completes its task). The binding spawns and stops; `Runs` decides.
//! - Subscriptions (legacy `resources/subscribe` and modern `subscriptions/listen`) are kept
//!   by the session itself: see [`Session::notify_resource_updated`](crate::Session::notify_resource_updated).
//! - [`LogFilter`]: which `notifications/message` a client wants, per legacy connection
//!   (`logging/setLevel`, answered by [`LogFilter::handle_set_level`]) or per modern request
//!   (`_meta` log level).
//! - [`SchemaValidator`]: JSON Schema validation with bounded work and no retrieval, also
//!   usable on the client side.
//!
//! # A dispatch step
//!
//! How a binding answers `tools/call` (`tests/server/end_to_end.rs` has the whole loop):
//!
//! ```
//! use mcp_sansio::server::Catalog;
//! use mcp_sansio::schema::method::CallTool;
//! use mcp_sansio::schema::CallToolResult;
//! use mcp_sansio::{InboundRequest, RespondError, ServerSession};
//!
//! fn call_tool(session: &mut ServerSession, catalog: &Catalog, request: InboundRequest) -> Result<(), RespondError> {
//!     let outcome = request.params::<CallTool>().and_then(|params| match catalog.check_call(&params) {
//!         // The binding runs the tool's handler here.
//!         Ok(tool) => Ok(CallToolResult::text(format!("ran {}", tool.name))),
//!         // Unknown tool (an error) or invalid arguments (an `isError` result).
//!         Err(refused) => refused.into_response(),
//!     });
//!     match outcome {
//!         Ok(result) => session.respond(request.responder, result),
//!         Err(error) => Ok(session.respond_error(request.responder, &error)),
//!     }
//! }
//! ```

mod access;
mod call;
mod catalog;
mod changes;
mod completion;
mod error;
mod log_filter;
mod names;
mod prompts;
mod registry;
mod route;
mod runs;
mod templates;
mod validate;

/// The RFC 6570 engine, now at [`crate::uri_template`]; this path stays for existing code
#[doc(no_inline)]
pub use crate::uri_template;

pub use access::{Access, INSUFFICIENT_SCOPE, insufficient_scope};
pub use call::CallCheck;
pub use catalog::{CachePolicy, Catalog, CatalogConfig};
pub use changes::{ListChanges, Revisions};
pub use completion::complete;
pub use error::{CatalogError, EntryKind};
pub use log_filter::LogFilter;
pub use names::check_tool_name;
pub use registry::Order;
pub use route::{Answer, Route, respond};
pub use runs::{AskFailure, AskReply, Effects, Ending, Runs};
pub use templates::{ResourceMatch, resource_not_found};
pub use validate::{SchemaError, SchemaLimits, SchemaValidator};
