//! What every binding's users see that does not depend on the runtime, written once: each
//! async binding re-exports it whole (`pub use mcp_sansio_runtime::api::*;`) beside its own
//! `Client`, `Server`, `Context` and `ClientOptions` (this layer's types for its runtime)

pub use mcp_sansio::server::AskFailure;
pub use mcp_sansio::session::{Caller, Principal};

pub use crate::client::{ClientError, ConnectError, InputHandler};
pub use crate::elicit::{ElicitError, Elicited};
#[cfg(feature = "http")]
pub use crate::http_options::{HttpOptions, Proxy};
/// The metrics the bindings record (feature `metrics`): names, labels, and
/// [`describe`](meter::describe)
pub use crate::meter;
pub use crate::peer::{StartedTask, TaskStatusUpdate};
pub use crate::request::RequestInfo;
pub use crate::sample::SampleError;
pub use crate::server::NotDeclared;
#[cfg(feature = "tls")]
pub use crate::tls::{TlsError, TlsIdentity};

/// Several server processes sharing tasks and changes (see `ServerBuilder::task_store` and
/// the rules in [`mcp_sansio::store`])
pub mod store {
    pub use mcp_sansio::store::SharedTasks;

    #[cfg(feature = "redis")]
    pub use crate::redis_store::RedisTaskStore;
    pub use crate::store::{MemoryTaskStore, TaskStore};
}
