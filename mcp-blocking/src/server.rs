//! The server: register tools, resources and prompts as plain functions, then serve over
//! stdio, any byte stream, or Streamable HTTP
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-sansio`; this module only runs the handlers, on a bounded pool of worker threads.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
#[cfg(feature = "http")]
use std::net::SocketAddr;
use std::sync::Arc;

use mcp_sansio::ListKind;
#[cfg(feature = "http")]
use mcp_sansio::http::HttpConfig;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptResult, InputRequests, InputResponses,
    LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use mcp_sansio::server::CatalogError;
use mcp_sansio::server::uri_template::Variables;
use mcp_sansio::{InboundRequest, Progress, ServerConfig, ServerSession, TaskError, TaskOptions};
use mcp_sansio_runtime::peer::StartedTask;
use mcp_sansio_runtime::request::RequestInfo;
use mcp_sansio_runtime::server::{Job, Live, NotDeclared, Registry};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::cancel::{CancellationToken, Cancelled};
use crate::driver::{self, Connection};
#[cfg(feature = "http")]
use crate::endpoint::HttpEndpoint;
#[cfg(feature = "http")]
use crate::http_server;
#[cfg(feature = "http")]
use crate::http_server::HttpServerHandle;
use crate::middleware::method::{CALL_TOOL, COMPLETE, GET_PROMPT, READ_RESOURCE};
use crate::middleware::{Call, Chain, Middleware, Next, Outcome};
use crate::pool::{Limits, Pool, Turn};
use crate::threads::{AskFailure, Blocking, ClientOptions, Dispatch, Handlers, now};
#[cfg(feature = "schemars")]
use mcp_sansio_runtime::elicit::{self, ElicitError, Elicited};
use mcp_sansio_runtime::sample::{self, SampleError};
use mcp_sansio_runtime::server::finish;

type ToolFn =
    Arc<dyn Fn(Context, Map<String, Value>) -> Result<CallToolResult, ErrorObject> + Send + Sync>;
type ResourceFn = Arc<
    dyn Fn(Context, String, Variables) -> Result<ReadResourceResult, ErrorObject> + Send + Sync,
>;
type CompleteFn =
    Arc<dyn Fn(Context, CompleteParams) -> Result<CompleteResult, ErrorObject> + Send + Sync>;
type PromptFn = Arc<
    dyn Fn(Context, BTreeMap<String, String>) -> Result<GetPromptResult, ErrorObject> + Send + Sync,
>;

/// How many handlers start at once unless [`ServerBuilder::workers`] says otherwise
pub const DEFAULT_WORKERS: usize = 16;
/// How many handler threads a server may have unless [`ServerBuilder::max_threads`] says
/// otherwise
pub const DEFAULT_MAX_THREADS: usize = crate::pool::DEFAULT_MAX_THREADS;
/// How long a request waits for a worker before its handler gets a thread of its own, unless
/// [`ServerBuilder::start_within`] says otherwise
pub const DEFAULT_START_WITHIN: std::time::Duration = crate::pool::DEFAULT_START_WITHIN;

/// What a handler can do besides returning its result: report progress, log, ask the client
/// for input, run as a task, and see that its request was cancelled
///
/// Every handler run gets a `Context` for its request, as its first argument. It is cheap to
/// clone and `Send`, so a thread the handler starts can report for it too. The crate's docs
/// have a [complete example](crate#handlers-and-their-context) where a client answers the
/// handler's question and watches its progress.
///
/// A thread cannot be aborted: a cancelled request (the client's `notifications/cancelled` or
/// `tasks/cancel`, a 2026 `input_required` answer that ends this run, the connection's close)
/// cancels the [`CancellationToken`] of its handler, which [`is_cancelled`](Self::is_cancelled)
/// reads and [`sleep`](Self::sleep) wakes up on; [`cancellation`](Self::cancellation) hands it
/// to other threads. Whatever a cancelled handler returns is dropped.
///
/// # Example
///
/// A tool that runs as a task when the client allows it, working in steps until done or
/// cancelled:
///
/// ```
/// use std::time::Duration;
///
/// use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
/// use mcp_sansio_blocking::mcp_sansio::{
///     ErrorObject, Implementation, Progress, ServerConfig, TASKS_EXTENSION, TaskOptions,
/// };
/// use mcp_sansio_blocking::{Context, Server};
/// use serde_json::{Map, Value, json};
///
/// fn crunch(cx: Context, args: Map<String, Value>) -> Result<CallToolResult, ErrorObject> {
///     if cx.task_offered() {
///         cx.run_as_task(TaskOptions::default()).map_err(|e| e.to_error())?;
///     }
///     let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
///     for step in 1..=steps {
///         cx.sleep(Duration::from_millis(10))?; // returns early, with an error, if cancelled
///         cx.progress(Progress::new(step as f64).total(steps as f64));
///     }
///     cx.log(LoggingLevel::Info, format!("crunched in {steps} steps"));
///     Ok(CallToolResult::text("done"))
/// }
///
/// # fn main() -> Result<(), mcp_sansio_blocking::mcp_sansio::server::CatalogError> {
/// let mut config = ServerConfig::new(Implementation::new("cruncher", "1.0"));
/// config.capabilities["extensions"] = json!({ (TASKS_EXTENSION): {} }); // 2026 tasks
/// let server = Server::builder(config)
///     .logging()
///     .tool(Tool::new("crunch", Map::new()), crunch)?
///     .build();
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Context {
    /// The runtime layer's context of the run: the request, its reports, its questions
    run: mcp_sansio_runtime::server::Context<Blocking>,
    cancel: CancellationToken,
}

impl Context {
    /// The request this handler serves: who sent it (the verified principal of a protected
    /// server: subject, client id, scopes, claims), its HTTP headers, its `_meta`, the
    /// client's info and capabilities, the protocol version and the 2025 session id
    ///
    /// ```
    /// use mcp_sansio_blocking::Context;
    /// use mcp_sansio_blocking::mcp_sansio::jsonrpc::ErrorObject;
    /// use mcp_sansio_blocking::mcp_sansio::schema::CallToolResult;
    ///
    /// fn whoami(cx: Context) -> Result<CallToolResult, ErrorObject> {
    ///     let who = cx.principal().and_then(|p| p.subject.clone());
    ///     Ok(CallToolResult::text(who.unwrap_or_else(|| "anonymous".into())))
    /// }
    /// ```
    pub fn request(&self) -> &RequestInfo {
        self.run.request()
    }

    /// The verified principal of the request's access token (shorthand for
    /// `request().principal()`); `None` on an unprotected server
    pub fn principal(&self) -> Option<&mcp_sansio::session::Principal> {
        self.run.principal()
    }

    /// Asks the client for input (elicitation, sampling, roots), whatever the era, and
    /// blocks until the answers
    ///
    /// Legacy sessions send live requests and this waits for every answer. On a modern
    /// (2026-07-28) request the core answers with `input_required` and this run ends: `ask`
    /// returns [`AskFailure::Cancelled`] (return any error; it is dropped), and the client's
    /// retry runs the handler again, when this returns the answers at once. So write
    /// handlers to ask before doing work that must not run twice.
    ///
    /// # Errors
    /// [`AskFailure`]: answer the request with [`AskFailure::to_error`].
    pub fn ask(&self, requests: InputRequests) -> Result<InputResponses, AskFailure> {
        let (reply, rx) = crate::one::channel();
        self.run.send_ask(requests, reply)?;
        rx.recv().map_err(|_| AskFailure::Closed)?
    }

    /// Asks the user to fill in a form derived from `T` and blocks until they did: the
    /// values decoded into `T`, or that they declined or dismissed it; whatever the era, as
    /// [`ask`](Self::ask) does (on a 2026 request this run ends and the retry runs the
    /// handler again, when this returns the answer at once)
    ///
    /// The form is `T`'s `schemars` JSON Schema restricted to what an elicitation form
    /// holds (see [`ElicitationSchema::from_json_schema`](mcp_sansio::schema::ElicitationSchema::from_json_schema)):
    /// a struct whose fields are strings (`#[schemars(email)]`, `#[schemars(url)]` and date
    /// types keep their format), numbers, integers, booleans, unit-variant enums (titled
    /// when their variants have doc comments or `#[schemars(title)]`) and `Vec`s of such
    /// enums (multi-selects, 2025-11-25 and later; earlier versions leave them out of the
    /// form, so give them `#[serde(default)]`). `Option` fields and `#[serde(default)]` ones
    /// are not required. The request's key is `elicit-<n>`, counted in the order the run
    /// asks its typed questions (`elicit`, [`sample_text`](Self::sample_text)).
    ///
    /// # Errors
    /// [`ElicitError::Form`] before anything is sent when `T` cannot be a form (a nested
    /// struct, a `Vec<String>`, a map: the error names the field); [`ElicitError::Ask`]
    /// when the client cannot be asked (without the `elicitation` capability: -32021), did
    /// not answer, or this 2026 run ended ([`AskFailure::Cancelled`]: return the error, it
    /// is dropped); [`ElicitError::Answer`] when accepted values do not decode into `T`.
    /// `?` turns each into the request's error ([`ElicitError::to_error`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mcp_sansio_blocking::mcp_sansio::ErrorObject;
    /// use mcp_sansio_blocking::mcp_sansio::schema::CallToolResult;
    /// use mcp_sansio_blocking::{Context, Elicited};
    /// use serde_json::{Map, Value};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Booking {
    ///     /// Who is coming
    ///     name: String,
    ///     /// How many seats
    ///     seats: u8,
    ///     /// Where to sit
    ///     area: Option<Area>,
    /// }
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// #[serde(rename_all = "lowercase")]
    /// enum Area {
    ///     Inside,
    ///     Terrace,
    /// }
    ///
    /// fn book(cx: Context, _args: Map<String, Value>) -> Result<CallToolResult, ErrorObject> {
    ///     Ok(match cx.elicit::<Booking>("Book a table")? {
    ///         Elicited::Accepted(b) => {
    ///             let outside = matches!(b.area, Some(Area::Terrace));
    ///             CallToolResult::text(format!("{} seats for {}, outside: {outside}", b.seats, b.name))
    ///         }
    ///         _ => CallToolResult::text("Nothing booked."),
    ///     })
    /// }
    /// ```
    #[cfg(feature = "schemars")]
    pub fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, ElicitError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        let form = elicit::form_of::<T>()?;
        let (key, requests) = elicit::question(self.run.questions(), message, form);
        let answers = self.ask(requests)?;
        elicit::answer(&key, answers)
    }

    /// Asks the client's model to answer `prompt` (one user message, at most `max_tokens`:
    /// `sampling/createMessage`) and blocks until the text of its answer; whatever the era,
    /// as [`ask`](Self::ask) does (on a 2026 request this run ends and the retry runs the
    /// handler again, when this returns the text at once)
    ///
    /// For a system prompt, model preferences, several messages or non-text content, build
    /// the `CreateMessageParams` and [`ask`](Self::ask). The requests' key is `sample-<n>`,
    /// counted with the run's other typed questions.
    ///
    /// # Errors
    /// [`SampleError::Ask`] when the client cannot be asked (without the `sampling`
    /// capability: -32021), did not answer, or this 2026 run ended
    /// ([`AskFailure::Cancelled`]: return the error, it is dropped); [`SampleError::Answer`]
    /// when the answer has no text. `?` turns each into the request's error
    /// ([`SampleError::to_error`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mcp_sansio_blocking::Context;
    /// use mcp_sansio_blocking::mcp_sansio::ErrorObject;
    /// use mcp_sansio_blocking::mcp_sansio::schema::CallToolResult;
    /// use serde_json::{Map, Value};
    ///
    /// fn haiku(cx: Context, _args: Map<String, Value>) -> Result<CallToolResult, ErrorObject> {
    ///     let poem = cx.sample_text("Write a haiku about the sea", 100)?;
    ///     Ok(CallToolResult::text(poem))
    /// }
    /// ```
    pub fn sample_text(
        &self,
        prompt: impl Into<String>,
        max_tokens: u64,
    ) -> Result<String, SampleError> {
        let (key, requests) = sample::question(self.run.questions(), prompt, max_tokens);
        let answers = self.ask(requests)?;
        sample::answer(&key, answers)
    }

    /// Logs a message to the client (`notifications/message`) if its level passes the
    /// client's filter: the connection's `logging/setLevel` (legacy, `info` until set) or the
    /// request's `_meta` log level (2026, nothing unless it asked); best effort, as
    /// [`progress`](Self::progress) is
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        self.run.log(level, data);
    }

    /// Whether the client allows this request to run as a task (2025-11-25 `params.task`, or
    /// the 2026 tasks extension in this request's capabilities)
    pub fn task_offered(&self) -> bool {
        self.run.task_offered()
    }

    /// Answers the request with a task handle now and keeps working: the handler's result
    /// (or error) then completes (or fails) the task; a client's `tasks/cancel` cancels the
    /// handler's token
    ///
    /// # Errors
    /// [`TaskError::NotOffered`] (the handler can go on and answer directly, or fail with
    /// [`TaskError::to_error`] if it needs a task), [`TaskError::TableFull`].
    pub fn run_as_task(&self, options: TaskOptions) -> Result<StartedTask, TaskError> {
        let (reply, rx) = crate::one::channel();
        self.run.send_start_task(options, reply)?;
        rx.recv().map_err(|_| TaskError::NotInFlight)?
    }

    /// Reports progress, if the client asked for it (a no-op otherwise)
    ///
    /// Reports are best effort: with [`MAX_WAITING_REPORTS`](mcp_sansio_runtime::peer::MAX_WAITING_REPORTS)
    /// of this run's reports (progress and log messages) still waiting for the connection, a
    /// new one is dropped, so a handler reporting faster than its client reads cannot grow
    /// the server without bound.
    pub fn progress(&self, progress: Progress) {
        self.run.progress(progress);
    }

    /// Whether the request was cancelled (by the client, `tasks/cancel`, or the connection's
    /// close): stop working; whatever the handler returns is dropped
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Sleeps, waking up early if the request is cancelled
    ///
    /// # Errors
    /// [`Cancelled`] (which converts to an `ErrorObject` with `?`) on cancellation.
    pub fn sleep(&self, duration: std::time::Duration) -> Result<(), Cancelled> {
        self.cancel.sleep(duration)
    }

    /// The request's cancellation token, to hand to other threads
    pub fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }
}

/// Builds a [`Server`]: its tools, resources, resource templates, prompts and completion
/// handler, each with a plain function run on the server's worker pool, and the capabilities
/// they need
///
/// Start with [`Server::builder`]. Each registration checks its entry (a valid and unique name
/// or URI, an `inputSchema` that compiles, a template that parses) and returns the builder, or
/// a [`CatalogError`]; registering declares the capability (`tools`, `resources`, `prompts`,
/// `completions`), keeping what the [`ServerConfig`] already declares (such as `listChanged`).
/// Then [`build`](Self::build) makes the server. A handler is a closure or `fn`
/// (`Fn(Context, ..) -> Result<_, ErrorObject> + Send + Sync + 'static`): an [`ErrorObject`]
/// is a JSON-RPC error; a tool that fails in the domain sense returns
/// `Ok(CallToolResult::error(..))`. The catalog validates a tool's arguments against its
/// `inputSchema` before the handler runs. [`workers`](Self::workers) handlers whose calls
/// are still wanted start at once, over every connection: a call cancelled while it waits
/// for a worker never runs, a handler cancelled while it runs lends its worker to the next
/// call until it returns (at most three times `workers` such extra threads), and a call that
/// waited [`start_within`](Self::start_within) gets a thread of its own, up to
/// [`max_threads`](Self::max_threads); past that cap a call is refused at once, "busy".
///
/// # Example
///
/// ```
/// use mcp_sansio_blocking::mcp_sansio::schema::{
///     CallToolResult, CompleteResult, GetPromptResult, Prompt, PromptArgument, PromptMessage,
///     ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
/// };
/// use mcp_sansio_blocking::mcp_sansio::server::uri_template::Variables;
/// use mcp_sansio_blocking::mcp_sansio::{ErrorObject, Implementation, ServerConfig};
/// use mcp_sansio_blocking::{Context, Server};
/// use serde_json::{Map, json};
///
/// fn read_note(
///     _cx: Context,
///     uri: String,
///     vars: Variables,
/// ) -> Result<ReadResourceResult, ErrorObject> {
///     let id = vars.get_str("id").unwrap_or_default();
///     Ok(ReadResourceResult::new(vec![ResourceContents::text(&uri, format!("Note {id}"))]))
/// }
///
/// # fn main() -> Result<(), mcp_sansio_blocking::mcp_sansio::server::CatalogError> {
/// let schema = json!({"type": "object", "properties": {"query": {"type": "string"}}});
/// let server = Server::builder(ServerConfig::new(Implementation::new("notes", "1.0")))
///     .workers(4)
///     .tool(
///         Tool::new("search", schema.as_object().cloned().unwrap_or_default())
///             .with_description("Finds notes"),
///         |_cx, args| {
///             let query = args["query"].as_str().unwrap_or_default();
///             Ok(CallToolResult::text(format!("notes://1 matches {query:?}")))
///         },
///     )?
///     .resource(
///         Resource::new("notes://index", "index").with_mime_type("text/plain"),
///         |_cx, uri, _vars| {
///             Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, "notes://1")]))
///         },
///     )?
///     .resource_template(ResourceTemplate::new("notes://{id}", "note"), read_note)?
///     .prompt(
///         Prompt::new("summarize").with_arguments(vec![PromptArgument::new("id").required(true)]),
///         |_cx, args| {
///             let id = args.get("id").cloned().unwrap_or_default();
///             Ok(GetPromptResult::new(vec![PromptMessage::user(format!("Summarize note {id}"))]))
///         },
///     )?
///     .completion(|_cx, _params| Ok(CompleteResult::new(vec!["1".into()])))
///     .logging()
///     .build();
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
pub struct ServerBuilder {
    registry: Registry<ToolFn, ResourceFn, PromptFn, CompleteFn>,
    limits: Limits,
    middleware: Vec<Arc<dyn Middleware>>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("config", self.registry.config())
            .field("workers", &self.limits.workers)
            .field("max_threads", &self.limits.max_threads)
            .field("start_within", &self.limits.start_within)
            .field("middleware", &self.middleware.len())
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Adds `middleware` around every request the catalog serves (`tools/call`,
    /// `resources/read`, `prompts/get`, `completion/complete`, and the lists and refusals
    /// it answers itself), on a worker thread: the first added is the outermost. A closure
    /// `|call: &Call, next: Next| next.run(call)` is one; see
    /// [`middleware`](crate::middleware)
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// How many handlers may start at once, over every connection of the server
    /// ([`DEFAULT_WORKERS`] unless set); more requests wait for a free worker, at most
    /// [`start_within`](Self::start_within)
    pub fn workers(mut self, workers: usize) -> Self {
        self.limits.workers = workers.max(1);
        self
    }

    /// How many handler threads the server may have at once, whatever their handlers do
    /// (block for long, ignore their cancellation): [`DEFAULT_MAX_THREADS`] unless set, at
    /// least [`workers`](Self::workers). A request whose handler would need one more is
    /// refused at once with [`SERVER_BUSY`](mcp_sansio::jsonrpc::code::SERVER_BUSY) (on the
    /// 2026 HTTP wire `503` with `Retry-After`), never queued behind a full house
    pub fn max_threads(mut self, max_threads: usize) -> Self {
        self.limits.max_threads = max_threads.max(1);
        self
    }

    /// How long a request waits for one of the [`workers`](Self::workers) (all busy) before
    /// its handler gets a thread of its own, up to [`max_threads`](Self::max_threads):
    /// [`DEFAULT_START_WITHIN`] unless set. Handlers that block for long then hold quick
    /// calls up no longer than this
    pub fn start_within(mut self, wait: std::time::Duration) -> Self {
        self.limits.start_within = wait;
        self
    }

    /// Declares the `logging` capability, so handlers' [`Context::log`] messages reach
    /// legacy clients (2026 clients opt in per request)
    pub fn logging(mut self) -> Self {
        self.registry.logging();
        self
    }

    /// Requires `scopes` of every caller of the registered `kind` entry `key`: a caller
    /// whose verified principal lacks one is refused (HTTP: `403` with the
    /// `insufficient_scope` step-up challenge, before any handler runs; other transports:
    /// the JSON-RPC error [`mcp_sansio::server::insufficient_scope`])
    ///
    /// # Errors
    /// [`CatalogError::NotRegistered`] when no such entry is registered yet.
    pub fn require_scopes<I: IntoIterator<Item = impl Into<String>>>(
        mut self,
        kind: mcp_sansio::server::EntryKind,
        key: &str,
        scopes: I,
    ) -> Result<Self, CatalogError> {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.registry.require_scopes(kind, key, scopes)?;
        Ok(self)
    }

    /// Leaves out of the lists (`tools/list`, ...) the entries the caller may not use
    #[must_use]
    pub fn hide_forbidden(mut self) -> Self {
        self.registry.hide_forbidden();
        self
    }

    /// Declares tasks for `tools/call`, in both forms (the 2025-11-25 `tasks` capability
    /// and the 2026-07-28 tasks extension): a tool handler then answers with a task handle
    /// through [`Context::run_as_task`] when the client allows it
    #[must_use]
    pub fn tasks(mut self) -> Self {
        self.registry.tasks();
        self
    }

    /// Declares `resources.subscribe`: the session then answers `resources/subscribe` and
    /// `resources/unsubscribe` and keeps each connection's subscriptions (publish changes
    /// with [`Server::notify_resource_updated`], which reaches every connection)
    pub fn resource_subscriptions(mut self) -> Self {
        self.registry.resource_subscriptions();
        self
    }

    /// Sets the `completion/complete` handler and declares `completions`
    pub fn completion<F>(mut self, handler: F) -> Self
    where
        F: Fn(Context, CompleteParams) -> Result<CompleteResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.registry.completion(Arc::new(handler));
        self
    }

    /// Adds a tool and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn tool<F>(mut self, tool: Tool, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context, Map<String, Value>) -> Result<CallToolResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.registry.tool(tool, Arc::new(handler))?;
        Ok(self)
    }

    /// Adds what `#[tool]` made (the `macros` feature): one tool, or a tuple of them
    /// (`tools![a, b]`)
    ///
    /// # Errors
    /// [`CatalogError`] as [`tool`](Self::tool).
    #[cfg(feature = "schemars")]
    pub fn register(
        self,
        tools: impl mcp_sansio_runtime::typed::Register<Self>,
    ) -> Result<Self, CatalogError> {
        tools.register(self)
    }

    /// Adds a tool whose arguments are a Rust type: its `inputSchema` is derived with
    /// `schemars`, and the handler gets the decoded value (the catalog has already checked
    /// the arguments against the schema; a value that still does not decode is -32602)
    ///
    /// # Errors
    /// [`CatalogError`] as [`tool`](Self::tool).
    #[cfg(feature = "schemars")]
    pub fn typed_tool<A, F>(
        self,
        name: &str,
        description: &str,
        handler: F,
    ) -> Result<Self, CatalogError>
    where
        A: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
        F: Fn(Context, A) -> Result<CallToolResult, ErrorObject> + Send + Sync + 'static,
    {
        let tool = mcp_sansio_runtime::server::typed_tool::<A>(name, description)?;
        self.tool(tool, move |cx, args| {
            handler(cx, mcp_sansio_runtime::server::decode_arguments(args)?)
        })
    }

    /// Adds a resource and its reader
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn resource<F>(mut self, resource: Resource, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context, String, Variables) -> Result<ReadResourceResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.registry.resource(resource, Arc::new(handler))?;
        Ok(self)
    }

    /// Adds a resource template and the reader for the URIs it matches
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn resource_template<F>(
        mut self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<Self, CatalogError>
    where
        F: Fn(Context, String, Variables) -> Result<ReadResourceResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.registry
            .resource_template(template, Arc::new(handler))?;
        Ok(self)
    }

    /// Adds a prompt and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn prompt<F>(mut self, prompt: Prompt, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context, BTreeMap<String, String>) -> Result<GetPromptResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.registry.prompt(prompt, Arc::new(handler))?;
        Ok(self)
    }

    /// Declares `listChanged` for tools, resources and prompts (and so each of those
    /// capabilities): the server's `add_*` and `remove_*` then tell every connected client
    /// (`notifications/*/list_changed`), as its `notify_list_changed` does
    pub fn list_changed(mut self) -> Self {
        self.registry.list_changed();
        self
    }

    /// Shares tasks and changes with the server's other processes through `store` (see
    /// [`mcp_sansio_runtime::store`]): a task started here is read, given input and
    /// cancelled through any of them, and `list_changed` and resource updates raised on one
    /// reach the clients of all. `shared` names this process and sets the lease after
    /// which a task whose process died reads `failed`. Only the HTTP sessions share (a
    /// byte stream's tasks have one client); every process must register the same tools
    /// and share one [`ServerConfig::state_key`].
    pub fn task_store(
        mut self,
        store: Arc<dyn mcp_sansio_runtime::store::TaskStore>,
        shared: mcp_sansio::store::SharedTasks,
    ) -> Self {
        self.registry.task_store(store, shared);
        self
    }

    /// The server, ready to serve connections
    ///
    /// Without a [`ServerConfig::state_key`] the server gets a random one, so 2026 requests
    /// can ask for input; several server processes behind one endpoint must share a key
    /// set by hand.
    pub fn build(self) -> Server {
        let live = self.registry.build_live();
        Server {
            config: Arc::clone(live.config()),
            dispatch: Arc::new(Dispatcher {
                live,
                pool: Pool::with_limits(self.limits),
                middleware: self.middleware.into(),
            }),
        }
    }
}

/// A built server; serve as many connections as you like (their handlers share one pool of
/// worker threads)
#[derive(Clone)]
pub struct Server {
    config: Arc<ServerConfig>,
    dispatch: Arc<Dispatcher>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server
    pub fn builder(config: ServerConfig) -> ServerBuilder {
        ServerBuilder {
            middleware: Vec::new(),
            registry: Registry::new(config),
            limits: Limits {
                workers: DEFAULT_WORKERS,
                max_threads: DEFAULT_MAX_THREADS,
                start_within: DEFAULT_START_WITHIN,
            },
        }
    }

    /// Serves one connection on the calling thread until the client closes it (a reader
    /// thread reads; handlers run on the worker pool)
    pub fn serve<R, W>(&self, reader: R, writer: W)
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        // A byte stream's tasks have one client: not shared.
        let session = ServerSession::new(Arc::clone(self.dispatch.live.local_config()), now());
        let dispatch: Arc<dyn Dispatch> = self.dispatch.clone();
        let conn = Connection {
            session,
            dispatch: Some(dispatch),
            options: ClientOptions::default(),
            ready: None,
            // In the server's hub from before its first byte is read until it ends
            hub: Some(Arc::clone(self.dispatch.live.hub())),
        };
        let (_handlers, driver) = driver::open(conn, reader, writer);
        driver.run();
    }

    /// Serves Streamable HTTP at `addr` (both wires: 2025 sessions and 2026 stateless
    /// requests) with the default [`HttpConfig`]: only `localhost`, `127.0.0.1` and `[::1]`
    /// may be named by `Host` and `Origin`
    ///
    /// Returns once the socket is bound; the server runs on threads of its own until
    /// [`HttpServerHandle::shutdown`] (or the handle is dropped).
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "http")]
    pub fn serve_http(&self, addr: SocketAddr) -> io::Result<HttpServerHandle> {
        self.serve_http_with(addr, HttpConfig::default())
    }

    /// [`serve_http`](Self::serve_http) with the HTTP rules' limits and host policy
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "http")]
    pub fn serve_http_with(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
    ) -> io::Result<HttpServerHandle> {
        self.serve_http_inner(addr, config, None, None)
    }

    /// [`serve_http`](Self::serve_http) over TLS (`https://`), presenting `identity`
    ///
    /// The TLS handshake counts toward the connection's
    /// [`header_read_timeout`](HttpConfig::header_read_timeout) and its connection toward
    /// [`max_connections`](HttpConfig::max_connections), as a request head does.
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "tls")]
    pub fn serve_https(
        &self,
        addr: SocketAddr,
        identity: mcp_sansio_runtime::tls::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        self.serve_https_with(addr, HttpConfig::default(), identity)
    }

    /// [`serve_http_with`](Self::serve_http_with) over TLS (`https://`), presenting
    /// `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "tls")]
    pub fn serve_https_with(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        identity: mcp_sansio_runtime::tls::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        self.serve_http_inner(addr, config, None, Some(identity.server_config()))
    }

    /// [`serve_http_with`](Self::serve_http_with) behind OAuth: serves the Protected
    /// Resource Metadata, and lets only requests with a bearer token that `protection`'s
    /// verifier accepts and that grants its required scopes reach the MCP server; the
    /// others get 401 or 403 with the `WWW-Authenticate` challenge
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "auth")]
    pub fn serve_http_protected(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: http_server::Protection,
    ) -> io::Result<HttpServerHandle> {
        self.serve_http_inner(addr, config, Some(protection), None)
    }

    /// [`serve_http_protected`](Self::serve_http_protected) over TLS (`https://`),
    /// presenting `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(all(feature = "auth", feature = "tls"))]
    pub fn serve_https_protected(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: http_server::Protection,
        identity: mcp_sansio_runtime::tls::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        let tls = Some(identity.server_config());
        self.serve_http_inner(addr, config, Some(protection), tls)
    }

    #[cfg(feature = "http")]
    fn serve_http_inner(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: Option<http_server::Protection>,
        tls: Option<http_server::Tls>,
    ) -> io::Result<HttpServerHandle> {
        let dispatch: Arc<dyn Dispatch> = self.dispatch.clone();
        let server_config = Arc::clone(&self.config);
        http_server::serve(
            addr,
            config,
            server_config,
            dispatch,
            (
                self.dispatch.live.hub(),
                &|| (self.dispatch.live.tools(), self.dispatch.live.access()),
                self.dispatch.live.store(),
            ),
            protection,
            tls,
        )
    }

    /// The Streamable HTTP endpoint of this server under `config`, for an HTTP stack of
    /// your own (see [`crate::endpoint`]); its actor thread runs until
    /// [`HttpEndpoint::shutdown`](crate::HttpEndpoint::shutdown), or until the last clone is
    /// dropped
    ///
    /// Its sessions are its own (another endpoint, or [`serve_http`](Self::serve_http), has
    /// others).
    ///
    /// # Errors
    /// The actor's thread could not be started.
    #[cfg(feature = "http")]
    pub fn http_endpoint(&self, config: HttpConfig) -> io::Result<HttpEndpoint> {
        let dispatch: Arc<dyn Dispatch> = self.dispatch.clone();
        let server_config = Arc::clone(&self.config);
        let tools = || (self.dispatch.live.tools(), self.dispatch.live.access());
        let pushes: http_server::Pushes<'_> =
            (self.dispatch.live.hub(), &tools, self.dispatch.live.store());
        let (endpoint, _actor) = http_server::start(config, server_config, dispatch, pushes)?;
        Ok(endpoint)
    }

    /// Serves one connection over this process's stdin and stdout
    pub fn serve_stdio(&self) {
        self.serve(io::stdin(), io::stdout());
    }
}

/// Changing what the server offers while it serves, and pushing changes to every connected
/// client
///
/// Every connection the server serves ([`serve`](Self::serve), [`serve_stdio`](Self::serve_stdio),
/// and every session of its HTTP servers, both eras) sees a change from its next request on
/// (the next `tools/list` shows an added tool), and is told what changed:
/// `notifications/<list>/list_changed` after an `add_*` or `remove_*` when the server
/// declares `listChanged` for the list (build it with [`ServerBuilder::list_changed`]),
/// `notifications/resources/updated` after [`notify_resource_updated`](Self::notify_resource_updated)
/// to the clients subscribed to the URI (legacy `resources/subscribe`, which needs
/// [`ServerBuilder::resource_subscriptions`]; 2026 `subscriptions/listen`). Which session
/// gets what is the core's rule. A list a server changes at run time must be declared when it
/// is built (`list_changed` declares tools, resources and prompts), since clients read the
/// capabilities once. The methods only queue: they never wait for a client.
///
/// # Example
///
/// ```
/// use mcp_sansio_blocking::mcp_sansio::schema::{CallToolResult, Tool};
/// use mcp_sansio_blocking::mcp_sansio::{Implementation, ListKind, ServerConfig};
/// use mcp_sansio_blocking::Server;
/// use serde_json::Map;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(ServerConfig::new(Implementation::new("live", "1.0")))
///     .list_changed()
///     .resource_subscriptions()
///     .build();
/// // Clones share the catalog: hand one to the thread that serves, keep one to change it.
/// server.add_tool(Tool::new("late", Map::new()), |_cx, _args| {
///     Ok(CallToolResult::text("added at run time"))
/// })?; // every connected client gets notifications/tools/list_changed
/// server.notify_resource_updated("file:///notes.txt"); // to its subscribers
/// server.notify_list_changed(ListKind::Prompts)?; // say so by hand
/// assert!(server.remove_tool("late"));
/// # Ok(())
/// # }
/// ```
impl Server {
    /// Adds a tool and its handler while the server serves; clients are told (see above)
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn add_tool<F>(&self, tool: Tool, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, Map<String, Value>) -> Result<CallToolResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.dispatch.live.add_tool(tool, Arc::new(handler))
    }

    /// Removes a tool; whether it was there (only then are clients told)
    pub fn remove_tool(&self, name: &str) -> bool {
        self.dispatch.live.remove_tool(name)
    }

    /// Adds a resource and its reader while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn add_resource<F>(&self, resource: Resource, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, String, Variables) -> Result<ReadResourceResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.dispatch.live.add_resource(resource, Arc::new(handler))
    }

    /// Removes a resource by its URI; whether it was there
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.dispatch.live.remove_resource(uri)
    }

    /// Adds a resource template and the reader of the URIs it matches while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn add_resource_template<F>(
        &self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<(), CatalogError>
    where
        F: Fn(Context, String, Variables) -> Result<ReadResourceResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.dispatch
            .live
            .add_resource_template(template, Arc::new(handler))
    }

    /// Removes a resource template by its URI template; whether it was there
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.dispatch.live.remove_resource_template(uri_template)
    }

    /// Adds a prompt and its handler while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn add_prompt<F>(&self, prompt: Prompt, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, BTreeMap<String, String>) -> Result<GetPromptResult, ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        self.dispatch.live.add_prompt(prompt, Arc::new(handler))
    }

    /// Removes a prompt; whether it was there
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.dispatch.live.remove_prompt(name)
    }

    /// Tells every connected client that a list changed (`add_*` and `remove_*` do it
    /// themselves): legacy sessions, and 2026 listen streams that asked for it
    ///
    /// # Errors
    /// [`NotDeclared`] when the server does not declare `listChanged` for the list.
    pub fn notify_list_changed(&self, kind: ListKind) -> Result<(), NotDeclared> {
        self.dispatch.live.notify_list_changed(kind)
    }

    /// Tells every connected client subscribed to `uri` (or to a parent of it) that the
    /// resource changed: `notifications/resources/updated`
    pub fn notify_resource_updated(&self, uri: &str) {
        self.dispatch.live.notify_resource_updated(uri);
    }
}

struct Dispatcher {
    live: Live<ToolFn, ResourceFn, PromptFn, CompleteFn>,
    pool: Pool,
    /// Around every handler run (empty: the handler runs as it is)
    middleware: Chain,
}

impl Dispatcher {
    /// Runs a handler on the worker pool; its result goes back to the driver
    fn spawn<T>(
        &self,
        method: &'static str,
        request: InboundRequest,
        session: &ServerSession,
        messages: &Handlers,
        work: impl FnOnce(Context) -> Result<T, ErrorObject> + Send + 'static,
    ) -> CancellationToken
    where
        T: Serialize + mcp_sansio::schema::FitVersion + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let (run, respond) = mcp_sansio_runtime::server::Context::start(request, session, messages);
        let cx = Context {
            run,
            cancel: cancel.clone(),
        };
        // The driver dispatches in the request's span: the handler runs in it too.
        let span = tracing::Span::current();
        // Only a server with middleware pays for them: none, and the closure holds `None`.
        let chain = (!self.middleware.is_empty()).then(|| Arc::clone(&self.middleware));
        self.pool.execute_cancellable(cancel.clone(), move |turn| {
            let _entered = span.enter();
            if turn == Turn::Refused {
                // Every thread the pool may have is taken: refused at once, never queued.
                mcp_sansio_runtime::meter::refused("busy");
                let busy = ErrorObject::server_busy("every handler thread is taken; retry later");
                respond.send::<CallToolResult>(Err(busy));
                return;
            }
            if cx.cancel.is_cancelled() {
                // Cancelled while it waited for a worker: the handler never runs.
                respond.send::<CallToolResult>(Err(Cancelled.into()));
                return;
            }
            if let Some(chain) = chain {
                let call = Call::new(method, cx.run.request().clone());
                let version = respond.version();
                let next = Next::new(&chain, move || Outcome::of(finish(work(cx), version)));
                respond.send_raw(next.run(&call).into_result());
                return;
            }
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(cx)));
            respond.send(
                run.unwrap_or_else(|_| Err(ErrorObject::internal_error("the handler panicked"))),
            );
        });
        cancel
    }
}

impl Dispatcher {
    fn dispatch_route(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
    ) -> Option<(
        InboundRequest,
        Job<ToolFn, ResourceFn, PromptFn, CompleteFn>,
    )> {
        // With middleware, the catalog's own answers go through the chain too.
        self.live
            .route_with(session, request, !self.middleware.is_empty())
    }

    /// Runs the middleware chain around the catalog's own `answer` to a request of
    /// `method`, on the worker pool
    fn spawn_answered(
        &self,
        method: &'static str,
        request: InboundRequest,
        session: &ServerSession,
        messages: &Handlers,
        answer: mcp_sansio::server::Answer,
    ) -> CancellationToken {
        let cancel = CancellationToken::new();
        let (run, respond) = mcp_sansio_runtime::server::Context::start(request, session, messages);
        let call = Call::new(method, run.request().clone());
        drop(run);
        let chain = Arc::clone(&self.middleware);
        let span = tracing::Span::current();
        self.pool.execute_cancellable(cancel.clone(), move |turn| {
            let _entered = span.enter();
            if turn == Turn::Refused {
                mcp_sansio_runtime::meter::refused("busy");
                let busy = ErrorObject::server_busy("every handler thread is taken; retry later");
                respond.send_answer(Err(busy));
                return;
            }
            let next = Next::new(&chain, move || Outcome::of(answer));
            respond.send_answer(next.run(&call).into_result());
        });
        cancel
    }
}

impl Dispatch for Dispatcher {
    fn dispatch(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
        messages: &Handlers,
    ) -> Option<CancellationToken> {
        let (request, job) = self.dispatch_route(session, request)?;
        Some(match job {
            Job::Tool(handler, arguments) => {
                self.spawn(CALL_TOOL, request, session, messages, move |cx| {
                    handler(cx, arguments)
                })
            }
            Job::Resource(handler, uri, variables) => {
                self.spawn(READ_RESOURCE, request, session, messages, move |cx| {
                    handler(cx, uri, variables)
                })
            }
            Job::Prompt(handler, arguments) => {
                self.spawn(GET_PROMPT, request, session, messages, move |cx| {
                    handler(cx, arguments)
                })
            }
            Job::Complete(handler, params) => {
                self.spawn(COMPLETE, request, session, messages, move |cx| {
                    handler(cx, *params)
                })
            }
            Job::Answered(method, answer) => {
                self.spawn_answered(method, request, session, messages, answer)
            }
        })
    }
}
