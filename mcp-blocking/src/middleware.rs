//! Middleware around every request, on threads: the same chains as the async bindings'
//! (see the runtime layer's [`middleware`](mcp_sansio_runtime::middleware) for what a chain
//! sees, which requests stay outside it, and what a task-backed call looks like), with plain
//! functions
//!
//! A server middleware is `Fn(&Call, Next) -> Outcome` ([`ServerBuilder::middleware`](crate::ServerBuilder::middleware)):
//! it answers the call itself ([`Outcome::error`], [`Call::answer`]) or returns
//! `next.run(call)`, the outcome of the rest of the chain and the handler (with
//! [`Outcome::elapsed`]). It runs on the handler's worker thread, before the handler. The
//! first added is the outermost; a panic in a middleware (or in the handler under it)
//! answers the request with `-32603`, and the server goes on.
//!
//! A client middleware is `Fn(ClientCall, &ClientNext) -> ClientOutcome`
//! ([`ClientOptions::middleware`](crate::ClientOptions#method.middleware) for every handle
//! of a connection, [`Client::with_middleware`](crate::Client::with_middleware) for one
//! handle): it may change the call
//! (add `_meta` with [`ClientCall::set_meta`]), call `next.run(call)` once, again (a
//! retry), or not at all.
//!
//! ```
//! use mcp_sansio_blocking::middleware::{Call, Next, Outcome};
//! use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, Tool};
//! use mcp_sansio_blocking::mcp_sansio::{ErrorObject, Implementation, ServerConfig};
//! use mcp_sansio_blocking::Server;
//!
//! # fn main() -> Result<(), mcp_sansio_blocking::mcp_sansio::server::CatalogError> {
//! let server = Server::builder(ServerConfig::new(Implementation::new("audited", "1.0")))
//!     .middleware(|call: &Call, next: Next| {
//!         let outcome = next.run(call);
//!         eprintln!("{} {:?} took {:?}", call.method(), call.name(), outcome.elapsed());
//!         outcome
//!     })
//!     .middleware(|call: &Call, next: Next| {
//!         if call.name() == Some("wipe") && call.request().header("x-confirm").is_none() {
//!             return Outcome::error(ErrorObject::invalid_params("wipe needs X-Confirm"));
//!         }
//!         next.run(call)
//!     })
//!     .tool(Tool::new("wipe", Default::default()), |_cx, _args| {
//!         Ok(CallToolResult::text("wiped"))
//!     })?
//!     .build();
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use mcp_sansio_runtime::middleware::run_sync_step;
pub use mcp_sansio_runtime::middleware::{Call, ClientCall, ClientOutcome, Outcome, method};

/// A server middleware of the blocking binding (see the [module](self) docs); a closure
/// `|call: &Call, next: Next| next.run(call)` is one
pub trait Middleware: Send + Sync + 'static {
    /// Handles `call`: answers it, or returns `next.run(call)` (or another outcome)
    fn handle(&self, call: &Call, next: Next<'_>) -> Outcome;
}

impl<F> Middleware for F
where
    F: Fn(&Call, Next<'_>) -> Outcome + Send + Sync + 'static,
{
    fn handle(&self, call: &Call, next: Next<'_>) -> Outcome {
        self(call, next)
    }
}

/// The middleware of a blocking server, in order (the first is the outermost)
pub(crate) type Chain = Arc<[Arc<dyn Middleware>]>;

/// The rest of a blocking server chain, then the handler: [`run`](Self::run) it once
pub struct Next<'a> {
    chain: &'a [Arc<dyn Middleware>],
    at: usize,
    handler: Box<dyn FnOnce() -> Outcome + 'a>,
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("left", &(self.chain.len() - self.at))
            .finish_non_exhaustive()
    }
}

impl<'a> Next<'a> {
    /// The whole `chain`, then `handler`
    pub(crate) fn new(
        chain: &'a [Arc<dyn Middleware>],
        handler: impl FnOnce() -> Outcome + 'a,
    ) -> Self {
        Self {
            chain,
            at: 0,
            handler: Box::new(handler),
        }
    }

    /// Runs the rest of the chain and the handler with `call`; the outcome carries how long
    /// they took. A panic in them is the outcome `-32603`.
    pub fn run(self, call: &Call) -> Outcome {
        let (at, len) = (self.at, self.chain.len());
        run_sync_step(at, len, move || match self.chain.get(at) {
            Some(middleware) => {
                let next = Next {
                    chain: self.chain,
                    at: at + 1,
                    handler: self.handler,
                };
                middleware.handle(call, next)
            }
            None => (self.handler)(),
        })
    }
}

/// A client middleware of the blocking binding (see the [module](self) docs); a closure
/// `|call: ClientCall, next: &ClientNext| next.run(call)` is one
pub trait ClientMiddleware: Send + Sync + 'static {
    /// Handles `call`: answers it, or returns what `next.run` gives (it may run it again)
    fn handle(&self, call: ClientCall, next: &ClientNext<'_>) -> ClientOutcome;
}

impl<F> ClientMiddleware for F
where
    F: Fn(ClientCall, &ClientNext<'_>) -> ClientOutcome + Send + Sync + 'static,
{
    fn handle(&self, call: ClientCall, next: &ClientNext<'_>) -> ClientOutcome {
        self(call, next)
    }
}

impl std::fmt::Debug for dyn ClientMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientMiddleware")
    }
}

impl<M: ClientMiddleware> mcp_sansio_runtime::middleware::FromMiddleware<M>
    for dyn ClientMiddleware
{
    fn from_middleware(middleware: M) -> Arc<Self> {
        Arc::new(middleware)
    }
}

/// The middleware of a blocking client, in order (the first is the outermost)
pub(crate) type ClientChain = Arc<[Arc<dyn ClientMiddleware>]>;

/// The rest of a blocking client chain, then the wire; run it as often as you like
pub struct ClientNext<'a> {
    chain: &'a [Arc<dyn ClientMiddleware>],
    send: &'a dyn Fn(ClientCall) -> ClientOutcome,
}

impl std::fmt::Debug for ClientNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientNext")
            .field("left", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl<'a> ClientNext<'a> {
    /// The whole `chain`, then `send`
    pub(crate) fn new(
        chain: &'a [Arc<dyn ClientMiddleware>],
        send: &'a dyn Fn(ClientCall) -> ClientOutcome,
    ) -> Self {
        Self { chain, send }
    }

    /// Runs the rest of the chain and sends `call`
    pub fn run(&self, call: ClientCall) -> ClientOutcome {
        match self.chain.split_first() {
            Some((middleware, rest)) => middleware.handle(
                call,
                &ClientNext {
                    chain: rest,
                    send: self.send,
                },
            ),
            None => (self.send)(call),
        }
    }
}
