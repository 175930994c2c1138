//! Middleware: code that runs around every request a server's handlers serve, and around
//! every request a client sends, written once instead of in every tool
//!
//! # Server side
//!
//! A server's chain sees each request the server's catalog serves: the ones it routes to
//! one of the application's handlers (`tools/call`, `resources/read`, `prompts/get` and
//! `completion/complete`, after the catalog accepted them and before the handler runs),
//! and the ones it answers itself, which with a chain it answers through the chain (the
//! lists, and the calls it refuses: an unknown tool, arguments that fail the schema, a
//! missing scope over stdio; `next` returns the catalog's answer). Each middleware gets the
//! request as a [`Call`] (the method, the target's name or URI, the params as raw JSON with
//! cheap accessors, and the caller as a [`RequestInfo`]: principal, headers, session id,
//! `_meta`)
//! and a `Next` (the rest of the chain, then the handler). It may
//!
//! - answer the request itself, without calling `next` ([`Outcome::error`], or
//!   [`Call::answer`] with a result);
//! - call `next` and see the [`Outcome`] (the result as JSON, or the [`ErrorObject`]) and
//!   how long the rest of the chain and the handler took ([`Outcome::elapsed`]), and return
//!   it, or another one.
//!
//! The first middleware added is the outermost: it sees the request first and the outcome
//! last. A middleware (or, under a chain, a handler) that panics answers that request with
//! `-32603` (internal error), which the middleware outside it sees as the outcome; the
//! server goes on serving.
//!
//! What the chain does not see: the requests the server session answers itself
//! (`initialize`, `ping`, `logging/setLevel`, `tasks/*`, `resources/subscribe` and
//! `unsubscribe`), a method nobody serves (`-32601`), and over HTTP the `403` of a
//! missing scope, which comes before any session sees the request.
//!
//! A tool that turns its call into a task ([`Context::run_as_task`](crate::server::Context::run_as_task),
//! on a server built with `.tasks()`) runs under the chain as any other call: the chain
//! sees the `tools/call` when it comes in, and its outcome is the handler's final result
//! (the task's result, or its error) when the handler returns, with the whole run's
//! duration; the client has had the task handle (`CreateTaskResult`) since the handler
//! called `run_as_task`, which the chain does not see. A middleware that answers the call
//! itself answers it directly (no task).
//!
//! Each binding has the same chain: the async ones take a [`Middleware`] (an
//! `async` closure `|call, next| async move { next.run(call).await }` or a type of yours) in
//! `ServerBuilder::middleware`; the blocking binding a plain closure
//! `|call: &Call, next| next.run(call)` (its own `middleware` module).
//!
//! With no middleware added, a request costs exactly what it did without this module: no
//! [`Call`] is built, nothing is boxed or timed, and the catalog answers on the spot.
//!
//! # Client side
//!
//! A client's chain ([`ClientMiddleware`]) sees each request the client sends through
//! `request_raw`, which every typed call (`call_tool`, `list_tools`, ... each page of a
//! list) goes through: the method and the params ([`ClientCall`]), which it may change
//! (add `_meta` entries with [`ClientCall::set_meta`]); it then calls `next` (the rest of
//! the chain, then the wire) and sees the result or the [`ClientError`], and may call
//! `next` again (a retry), or answer without sending. Add it to the client's options
//! (`ClientOptions::middleware`: every handle of the connection has it), or to one handle
//! (`Client::with_middleware`: a handle to the same connection whose requests also go
//! through it, inside the options' chain); the first added is the outermost.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::FitVersion;
use mcp_sansio::{ProtocolVersion, RequestOptions};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::ClientError;
use crate::request::RequestInfo;

/// A boxed `Send` future, as a middleware returns
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The method of a request the server chain sees
pub mod method {
    /// `tools/call`
    pub const CALL_TOOL: &str = "tools/call";
    /// `resources/read`
    pub const READ_RESOURCE: &str = "resources/read";
    /// `prompts/get`
    pub const GET_PROMPT: &str = "prompts/get";
    /// `completion/complete`
    pub const COMPLETE: &str = "completion/complete";
    /// `tools/list` (answered by the catalog)
    pub const LIST_TOOLS: &str = "tools/list";
    /// `resources/list` (answered by the catalog)
    pub const LIST_RESOURCES: &str = "resources/list";
    /// `resources/templates/list` (answered by the catalog)
    pub const LIST_RESOURCE_TEMPLATES: &str = "resources/templates/list";
    /// `prompts/list` (answered by the catalog)
    pub const LIST_PROMPTS: &str = "prompts/list";
}

/// One inbound request on its way to its handler, as a server middleware sees it
///
/// Cheap to clone (one shared allocation). The params are kept as the client sent them;
/// [`name`](Self::name) and [`arguments`](Self::arguments) are decoded from them the first
/// time one is asked for.
#[derive(Debug, Clone)]
pub struct Call {
    inner: Arc<CallInner>,
}

#[derive(Debug)]
struct CallInner {
    method: &'static str,
    request: RequestInfo,
    decoded: OnceLock<Target>,
}

/// What the params name, decoded once
#[derive(Debug, Default, Deserialize)]
struct Target {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

impl Call {
    /// The request `method` (one of [`method`]'s) of a handler run, from its context's
    /// request info
    #[doc(hidden)]
    pub fn new(method: &'static str, request: RequestInfo) -> Self {
        Self {
            inner: Arc::new(CallInner {
                method,
                request,
                decoded: OnceLock::new(),
            }),
        }
    }

    /// The request's method: `tools/call`, `resources/read`, `prompts/get`,
    /// `completion/complete` or one of the lists (the constants of [`method`])
    pub fn method(&self) -> &str {
        self.inner.method
    }

    /// Who sent the request and over what: principal, headers, session id, `_meta`,
    /// client info, protocol version (the handler's `cx.request()`)
    pub fn request(&self) -> &RequestInfo {
        &self.inner.request
    }

    /// The request's params as the client sent them (raw JSON)
    pub fn params(&self) -> Option<&RawValue> {
        self.inner.request.params()
    }

    fn target(&self) -> &Target {
        self.inner.decoded.get_or_init(|| {
            self.params()
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default()
        })
    }

    /// What the request names: the tool's or prompt's name, the resource's URI; `None` for
    /// `completion/complete`
    pub fn name(&self) -> Option<&str> {
        let target = self.target();
        target.name.as_deref().or(target.uri.as_deref())
    }

    /// The arguments of a `tools/call` or `prompts/get` (decoded once, when first asked for)
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        self.target().arguments.as_ref()
    }

    /// One argument, by name
    pub fn argument(&self, key: &str) -> Option<&Value> {
        self.arguments()?.get(key)
    }

    /// The protocol version of the request (a result is fitted to it)
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.request.protocol_version()
    }

    /// An answer to this request that a middleware gives itself, without the handler: the
    /// result fitted to the request's protocol version (a `CallToolResult`, a
    /// `ReadResourceResult`, ...)
    pub fn answer<T: Serialize + FitVersion>(&self, mut result: T) -> Outcome {
        result.fit_to(self.protocol_version());
        Outcome::of(serde_json::value::to_raw_value(&result).map_err(ErrorObject::internal_error))
    }
}

/// How a request ended, as a middleware sees it: the result (raw JSON, as it goes on the
/// wire) or the JSON-RPC error, and how long it took
#[derive(Debug, Clone)]
pub struct Outcome {
    result: Result<Box<RawValue>, ErrorObject>,
    elapsed: Duration,
}

impl Outcome {
    /// A handler's (or a middleware's) result or error
    pub fn of(result: Result<Box<RawValue>, ErrorObject>) -> Self {
        Self {
            result,
            elapsed: Duration::ZERO,
        }
    }

    /// A JSON-RPC error answers the request (`ErrorObject::invalid_params(..)`,
    /// `ErrorObject::new(code, message)`, ...)
    pub fn error(error: ErrorObject) -> Self {
        Self::of(Err(error))
    }

    /// The result, or the error
    pub fn result(&self) -> Result<&RawValue, &ErrorObject> {
        self.result.as_deref()
    }

    /// The error, if the request ended with one
    pub fn error_object(&self) -> Option<&ErrorObject> {
        self.result.as_ref().err()
    }

    /// Whether the request ended with a JSON-RPC error
    pub fn is_error(&self) -> bool {
        self.result.is_err()
    }

    /// Whether the result is a tool's domain failure (`CallToolResult` with
    /// `isError: true`)
    pub fn is_tool_error(&self) -> bool {
        #[derive(Deserialize)]
        struct IsError {
            #[serde(rename = "isError", default)]
            is_error: bool,
        }
        match &self.result {
            Ok(raw) => serde_json::from_str::<IsError>(raw.get()).is_ok_and(|r| r.is_error),
            Err(_) => false,
        }
    }

    /// How long the rest of the chain and the handler took, as measured by the `next.run`
    /// that returned this outcome (zero for an outcome a middleware made and nobody timed)
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The result or the error, for the wire
    pub fn into_result(self) -> Result<Box<RawValue>, ErrorObject> {
        self.result
    }
}

/// The error that answers a request whose middleware (or handler, under a chain) panicked
pub fn panicked(what: &str) -> ErrorObject {
    ErrorObject::internal_error(format!("the {what} panicked"))
}

/// What panicked at step `at` of a chain of `len`
fn culprit(at: usize, len: usize) -> &'static str {
    if at < len { "middleware" } else { "handler" }
}

/// Runs `step`, timing it; a panic is `-32603` (the blocking bindings' `Next::run`)
#[doc(hidden)]
pub fn run_sync_step(at: usize, len: usize, step: impl FnOnce() -> Outcome) -> Outcome {
    let start = Instant::now();
    let mut outcome = catch_unwind(AssertUnwindSafe(step))
        .unwrap_or_else(|_| Outcome::error(panicked(culprit(at, len))));
    outcome.elapsed = start.elapsed();
    outcome
}

/// A server middleware of the async bindings: runs around each request the chain sees
/// (see the [module](self) docs)
///
/// An `async` closure is one: `|call: Call, next: Next| async move { next.run(call).await }`.
///
/// ```
/// use mcp_sansio::jsonrpc::ErrorObject;
/// use mcp_sansio::schema::{CallToolResult, Tool};
/// use mcp_sansio_runtime::middleware::{Call, Next, Outcome};
/// use mcp_sansio_tokio::Server;
///
/// # fn main() -> Result<(), mcp_sansio::server::CatalogError> {
/// let server = Server::builder(mcp_sansio::ServerConfig::new(
///     mcp_sansio::Implementation::new("audited", "1.0"),
/// ))
/// // Outermost: sees every call and its outcome.
/// .middleware(|call: Call, next: Next| async move {
///     let who = call.request().header("x-user").unwrap_or("anonymous").to_owned();
///     let outcome = next.run(call.clone()).await;
///     eprintln!("{who} {} {:?}: {:?} in {:?}", call.method(), call.name(),
///         outcome.is_error(), outcome.elapsed());
///     outcome
/// })
/// // Then: refuses `wipe` unless the caller says it means it.
/// .middleware(|call: Call, next: Next| async move {
///     if call.name() == Some("wipe") && call.request().header("x-confirm").is_none() {
///         return Outcome::error(ErrorObject::invalid_params("wipe needs X-Confirm"));
///     }
///     next.run(call).await
/// })
/// .tool(Tool::new("wipe", Default::default()), |_cx, _args| async {
///     Ok(CallToolResult::text("wiped"))
/// })?
/// .build();
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles `call`: answers it, or runs `next` with it (once) and returns an outcome
    fn handle(&self, call: Call, next: Next) -> BoxFuture<Outcome>;
}

impl<F, Fut> Middleware for F
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    fn handle(&self, call: Call, next: Next) -> BoxFuture<Outcome> {
        Box::pin(self(call, next))
    }
}

/// The middleware of an async server, in order (the first is the outermost)
pub type Chain = Arc<[Arc<dyn Middleware>]>;

/// The handler at the end of an async chain
type Handler = Box<dyn FnOnce() -> BoxFuture<Outcome> + Send>;

/// The rest of an async server chain, then the handler: [`run`](Self::run) it once
pub struct Next {
    chain: Chain,
    at: usize,
    handler: Handler,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("left", &(self.chain.len() - self.at))
            .finish_non_exhaustive()
    }
}

impl Next {
    /// The whole `chain`, then `handler` (the dispatcher's)
    #[doc(hidden)]
    pub fn new(chain: Chain, handler: Handler) -> Self {
        Self {
            chain,
            at: 0,
            handler,
        }
    }

    /// Runs the rest of the chain and the handler with `call`; the outcome carries how
    /// long they took. A panic in them is the outcome `-32603`.
    pub async fn run(self, call: Call) -> Outcome {
        let start = Instant::now();
        let (at, len) = (self.at, self.chain.len());
        let started = catch_unwind(AssertUnwindSafe(move || match self.chain.get(self.at) {
            Some(middleware) => {
                let middleware = Arc::clone(middleware);
                let next = Self {
                    chain: self.chain,
                    at: self.at + 1,
                    handler: self.handler,
                };
                middleware.handle(call, next)
            }
            None => (self.handler)(),
        }));
        let mut outcome = match started {
            Ok(future) => CatchUnwind { future, at, len }.await,
            Err(_) => Outcome::error(panicked(culprit(at, len))),
        };
        outcome.elapsed = start.elapsed();
        outcome
    }
}

/// A future whose panic is the outcome `-32603`
struct CatchUnwind {
    future: BoxFuture<Outcome>,
    at: usize,
    len: usize,
}

impl Future for CatchUnwind {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Outcome> {
        let (at, len) = (self.at, self.len);
        match catch_unwind(AssertUnwindSafe(|| self.future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(_) => Poll::Ready(Outcome::error(panicked(culprit(at, len)))),
        }
    }
}

/// One outbound request, as a client middleware sees it: the method and the params, which
/// it may change before calling `next`
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientCall {
    /// The method (`tools/call`, ...)
    pub method: String,
    /// The params (a JSON object), as they will be sent
    pub params: Option<Box<RawValue>>,
    /// The request's options (timeout, ...)
    pub options: RequestOptions,
}

impl ClientCall {
    /// A request of `method` with `params`
    pub fn new(method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        Self {
            method: method.into(),
            params,
            options: RequestOptions::default(),
        }
    }

    /// The params, decoded (`None` without params or when they are not an object)
    pub fn params_object(&self) -> Option<Map<String, Value>> {
        serde_json::from_str(self.params.as_deref()?.get()).ok()
    }

    /// Replaces the params with `params` (a JSON object)
    pub fn set_params(&mut self, params: Map<String, Value>) {
        self.params = serde_json::value::to_raw_value(&params).ok();
    }

    /// Sets the entry `key` of the params' `_meta` to `value` (creating the params and
    /// `_meta` as needed)
    pub fn set_meta(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let mut params = self.params_object().unwrap_or_default();
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            meta.insert(key.into(), value.into());
        }
        self.set_params(params);
    }
}

/// Makes a middleware of a binding's kind (`Self`, `dyn` its middleware trait) out of `M`:
/// what `ClientOptions::middleware` takes
pub trait FromMiddleware<M> {
    /// `middleware`, shared
    fn from_middleware(middleware: M) -> Arc<Self>;
}

impl<M: ClientMiddleware> FromMiddleware<M> for dyn ClientMiddleware {
    fn from_middleware(middleware: M) -> Arc<Self> {
        Arc::new(middleware)
    }
}

/// What a client request ended with: the result (raw JSON) or the client's error
pub type ClientOutcome = Result<Box<RawValue>, ClientError>;

/// A client middleware of the async bindings: runs around each request the client sends
/// (see the [module](self) docs); an `async` closure
/// `|call: ClientCall, next: ClientNext| async move { next.run(call).await }` is one
pub trait ClientMiddleware: Send + Sync + 'static {
    /// Handles `call`: answers it, or runs `next` with it (as often as it likes: a retry)
    fn handle(&self, call: ClientCall, next: ClientNext) -> BoxFuture<ClientOutcome>;
}

impl<F, Fut> ClientMiddleware for F
where
    F: Fn(ClientCall, ClientNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ClientOutcome> + Send + 'static,
{
    fn handle(&self, call: ClientCall, next: ClientNext) -> BoxFuture<ClientOutcome> {
        Box::pin(self(call, next))
    }
}

/// The middleware of an async client, in order (the first is the outermost)
pub type ClientChain = Arc<[Arc<dyn ClientMiddleware>]>;

/// Sends a request on the wire (the end of an async client chain)
pub type Wire = Arc<dyn Fn(ClientCall) -> BoxFuture<ClientOutcome> + Send + Sync>;

/// The rest of an async client chain, then the wire; clone it to run it more than once
#[derive(Clone)]
pub struct ClientNext {
    chain: ClientChain,
    at: usize,
    send: Wire,
}

impl std::fmt::Debug for ClientNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientNext")
            .field("left", &(self.chain.len() - self.at))
            .finish_non_exhaustive()
    }
}

impl ClientNext {
    /// The whole `chain`, then `send`
    #[doc(hidden)]
    pub fn new(chain: ClientChain, send: Wire) -> Self {
        Self { chain, at: 0, send }
    }

    /// Runs the rest of the chain and sends `call`
    pub fn run(self, call: ClientCall) -> BoxFuture<ClientOutcome> {
        match self.chain.get(self.at).cloned() {
            Some(middleware) => {
                let next = Self {
                    at: self.at + 1,
                    ..self
                };
                middleware.handle(call, next)
            }
            None => (self.send)(call),
        }
    }
}

/// Adds `middleware` at the end (innermost) of `chain`
#[doc(hidden)]
pub fn push<M: ?Sized>(chain: &Arc<[Arc<M>]>, middleware: Arc<M>) -> Arc<[Arc<M>]> {
    chain.iter().cloned().chain([middleware]).collect()
}
