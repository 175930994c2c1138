//! What a client checks in a server's answers, beyond the session's envelope rules
//!
//! Pure functions and small caches over the typed [`schema`](crate::schema) messages, for a
//! binding (or an application) to apply between the session and the user:
//!
//! - [`OutputValidator`]: `structuredContent` of tool results against the tool's
//!   `outputSchema` (2025-06-18 and later), with [`check_call_result`] to decode and check a
//!   `tools/call` outcome in one step.
//! - [`ResultCache`]: results the server marked cacheable (`ttlMs`, `cacheScope`; 2026-07-28),
//!   kept while fresh and dropped on list-changed and resource-updated notifications.

mod cache;
mod call;
mod output;

pub use cache::ResultCache;
pub use call::{ToolCallError, check_call_result};
pub use output::{
    ObserveWarning, OutputError, OutputLimits, OutputValidator, SchemaProblem, SchemaViolation,
};
