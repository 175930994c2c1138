//! The async bindings' server: register tools, resources and prompts as async functions; the
//! handlers' [`Context`], the builder, and the dispatcher that starts handler runs
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-sansio`; this only runs the handlers, on the binding's [`Runtime`].

use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

use mcp_sansio::TaskOptions;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::has_capability;
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptResult, InputRequests, InputResponses,
    LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use mcp_sansio::server::uri_template::Variables;
use mcp_sansio::server::{AskFailure, Catalog, CatalogError, EntryKind, LogFilter, Route};
use mcp_sansio::session::Principal;
use mcp_sansio::{
    InboundId, InboundRequest, ListKind, Progress, ServerConfig, ServerSession, TaskError,
};

use crate::request::RequestInfo;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::chan;
use crate::elicit;
#[cfg(feature = "schemars")]
use crate::elicit::{ElicitError, Elicited};
use crate::middleware::method::{CALL_TOOL, COMPLETE, GET_PROMPT, READ_RESOURCE};
use crate::middleware::{self, Call, Chain, Middleware, Outcome};
use crate::peer::{App, HandlerMsg, Handlers, Plumbing, Reports, StartedTask};
use crate::push::{Hub, Push};
use crate::runtime::Runtime;
use crate::sample::{self, SampleError};
use crate::store::{Subscription, TaskStore};
use mcp_sansio::store::{SharedTasks, Signal, StoreOp};

pub use crate::arguments::decode_arguments;
#[cfg(feature = "schemars")]
pub use crate::arguments::typed_tool;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type ToolFn<R> = Arc<
    dyn Fn(Context<R>, Map<String, Value>) -> BoxFuture<Result<CallToolResult, ErrorObject>>
        + Send
        + Sync,
>;
type ResourceFn<R> = Arc<
    dyn Fn(Context<R>, String, Variables) -> BoxFuture<Result<ReadResourceResult, ErrorObject>>
        + Send
        + Sync,
>;
type CompleteFn<R> = Arc<
    dyn Fn(Context<R>, CompleteParams) -> BoxFuture<Result<CompleteResult, ErrorObject>>
        + Send
        + Sync,
>;
type PromptFn<R> = Arc<
    dyn Fn(Context<R>, BTreeMap<String, String>) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;

/// What a handler can do besides returning its result: report progress, log, ask the client
/// for input, run as a task
///
/// Every handler run gets a `Context` for its request, as its first argument. It is cheap to
/// clone and `Send`, so a task the handler spawns can report for it too. Its methods (their
/// full docs follow below, under *Implementations*; `R` is the binding's runtime):
///
/// | method | what it does |
/// |---|---|
/// | [`progress`](#method.progress)`(Progress)` | reports progress, if the client asked for it (a no-op otherwise) |
/// | [`log`](#method.log)`(LoggingLevel, data)` | sends `notifications/message` if the level passes the client's filter: the connection's `logging/setLevel` on legacy sessions (`info` until set), the request's own `_meta` log level on modern ones (nothing unless it asked) |
/// | [`ask`](#method.ask)`(InputRequests).await` | asks the client for input (elicitation, sampling, roots) in either era; on a modern request the handler runs again with the answers, so ask before work that must not run twice |
/// | [`task_offered`](#method.task_offered)`()` | whether the client allows this request to run as a task |
/// | [`run_as_task`](#method.run_as_task)`(TaskOptions).await` | answers with a task now and keeps working; the result completes the task, `tasks/cancel` aborts the handler |
///
/// A cancelled request (the client's `notifications/cancelled` or `tasks/cancel`, or its
/// connection closing) aborts the handler's task: its future is dropped at the next `.await`.
///
/// # Example
///
/// A tool that runs as a task when the client allows it, reporting progress and logging as it
/// goes:
///
/// ```
/// use std::time::Duration;
///
/// use mcp_sansio_tokio::mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
/// use mcp_sansio_tokio::mcp_sansio::{
///     ErrorObject, Implementation, Progress, ServerConfig, TASKS_EXTENSION, TaskOptions,
/// };
/// use mcp_sansio_tokio::{Context, Server};
/// use serde_json::{Map, Value, json};
///
/// async fn crunch(
///     cx: Context,
///     args: Map<String, Value>,
/// ) -> Result<CallToolResult, ErrorObject> {
///     if cx.task_offered() {
///         cx.run_as_task(TaskOptions::default()).await.map_err(|e| e.to_error())?;
///     }
///     let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
///     for step in 1..=steps {
///         tokio::time::sleep(Duration::from_millis(10)).await;
///         cx.progress(Progress::new(step as f64).total(steps as f64));
///     }
///     cx.log(LoggingLevel::Info, format!("crunched in {steps} steps"));
///     Ok(CallToolResult::text("done"))
/// }
///
/// # fn main() -> Result<(), mcp_sansio_tokio::mcp_sansio::server::CatalogError> {
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
///
/// The guide (`guide/` in the repository) has a complete example where a client answers the
/// handler's question and watches its progress.
///
/// Each binding names it `Context` (this type for its runtime).
pub struct Context<R: Plumbing> {
    id: InboundId,
    wants_progress: bool,
    /// A modern request's own log level (from its `_meta`); legacy uses the connection's
    log_filter: Option<LogFilter>,
    task_offered: bool,
    messages: Handlers<R>,
    /// The run's reports waiting for the actor (bounded)
    reports: Reports,
    /// The keys of the run's typed questions (elicitations, samplings)
    elicits: elicit::Keys,
    /// Who sent the request, and over what
    request: RequestInfo,
}

impl<R: Plumbing> Clone for Context<R> {
    fn clone(&self) -> Self {
        Self {
            request: self.request.clone(),
            id: self.id,
            wants_progress: self.wants_progress,
            log_filter: self.log_filter,
            task_offered: self.task_offered,
            messages: self.messages.clone(),
            reports: self.reports.clone(),
            elicits: self.elicits.clone(),
        }
    }
}

impl<R: Plumbing> std::fmt::Debug for Context<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.id)
            .field("wants_progress", &self.wants_progress)
            .field("log_filter", &self.log_filter)
            .field("task_offered", &self.task_offered)
            .finish_non_exhaustive()
    }
}

impl<R: Plumbing> Context<R> {
    /// The context of a handler run for `request` in `session`, whose messages go through
    /// `messages` (takes the request's params: the handler's arguments were read already)
    #[doc(hidden)]
    pub fn new(
        request: &mut InboundRequest,
        session: &ServerSession,
        messages: &Handlers<R>,
    ) -> Self {
        let log_filter = LogFilter::for_request(request);
        let (reports, elicits) = elicit::run_counters();
        Self {
            id: request.responder.id(),
            wants_progress: request.wants_progress,
            log_filter,
            task_offered: request.task_offered,
            messages: messages.clone(),
            reports,
            elicits,
            request: RequestInfo::new(request, session),
        }
    }

    /// The request this handler serves: who sent it (the verified principal of a protected
    /// server: subject, client id, scopes, claims), its HTTP headers, its `_meta`, the
    /// client's info and capabilities, the protocol version and the 2025 session id
    ///
    /// ```
    /// use mcp_sansio::jsonrpc::ErrorObject;
    /// use mcp_sansio::schema::CallToolResult;
    /// use mcp_sansio_runtime::Runtime;
    /// use mcp_sansio_runtime::server::Context;
    ///
    /// async fn whoami<R: Runtime>(cx: Context<R>) -> Result<CallToolResult, ErrorObject> {
    ///     let who = cx.principal().and_then(|p| p.subject.clone());
    ///     Ok(CallToolResult::text(who.unwrap_or_else(|| "anonymous".into())))
    /// }
    /// ```
    pub fn request(&self) -> &RequestInfo {
        &self.request
    }

    /// The verified principal of the request's access token (shorthand for
    /// `request().principal()`); `None` on an unprotected server
    pub fn principal(&self) -> Option<&Principal> {
        self.request.principal()
    }

    /// Logs a message to the client (`notifications/message`) if its level passes the
    /// client's filter: the connection's `logging/setLevel` (legacy, `info` until set) or the
    /// request's `_meta` log level (2026, nothing unless it asked); best effort, as
    /// [`progress`](Self::progress) is
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        let msg = self
            .reports
            .log(self.id, self.log_filter, level, data.into());
        if let Some(msg) = msg {
            let _ = self.messages.send(msg);
        }
    }

    /// Whether the client allows this request to run as a task (2025-11-25 `params.task`, or
    /// the 2026 tasks extension in this request's capabilities)
    pub fn task_offered(&self) -> bool {
        self.task_offered
    }

    /// Reports progress, if the client asked for it (a no-op otherwise)
    ///
    /// Reports are best effort: with [`MAX_WAITING_REPORTS`](crate::peer::MAX_WAITING_REPORTS)
    /// of this run's reports (progress and log messages) still waiting for the connection, a
    /// new one is dropped, so a handler reporting faster than its client reads cannot grow
    /// the server without bound.
    pub fn progress(&self, progress: Progress) {
        if let Some(msg) = self
            .reports
            .progress(self.id, self.wants_progress, progress)
        {
            let _ = self.messages.send(msg);
        }
    }

    /// The context of a handler run for `request` in `session`, whose messages go through
    /// `messages`, and where the run's result goes (see [`Respond`])
    #[doc(hidden)]
    pub fn start(
        mut request: InboundRequest,
        session: &ServerSession,
        messages: &Handlers<R>,
    ) -> (Self, Respond<R>) {
        let cx = Self::new(&mut request, session, messages);
        let respond = Respond {
            responder: request.responder,
            version: request.version,
            messages: messages.clone(),
        };
        (cx, respond)
    }

    /// Sends the run's input request to the actor; the answers come through `reply` (the
    /// binding's `ask` waits for them)
    ///
    /// # Errors
    /// [`AskFailure::Closed`] once the connection is gone.
    #[doc(hidden)]
    pub fn send_ask(
        &self,
        requests: InputRequests,
        reply: R::Reply<Result<InputResponses, AskFailure>>,
    ) -> Result<(), AskFailure> {
        let msg = HandlerMsg::Ask {
            id: self.id,
            requests,
            reply,
        };
        self.messages.send(msg).map_err(|_| AskFailure::Closed)
    }

    /// Asks the actor to turn the run's request into a task; the task's ids come through
    /// `reply` (the binding's `run_as_task` waits for them)
    ///
    /// # Errors
    /// [`TaskError::NotInFlight`] once the connection is gone.
    #[doc(hidden)]
    pub fn send_start_task(
        &self,
        options: TaskOptions,
        reply: R::Reply<Result<StartedTask, TaskError>>,
    ) -> Result<(), TaskError> {
        let msg = HandlerMsg::StartTask {
            id: self.id,
            options,
            reply,
        };
        self.messages.send(msg).map_err(|_| TaskError::NotInFlight)
    }

    /// The keys of the run's typed questions (for the binding's `elicit` and `sample_text`)
    #[doc(hidden)]
    pub fn questions(&self) -> &elicit::Keys {
        &self.elicits
    }
}

/// Where a handler run's result goes: fitted to the request's protocol version, to the
/// actor, which answers the request (from [`Context::start`])
pub struct Respond<R: Plumbing> {
    responder: mcp_sansio::Responder,
    version: mcp_sansio::ProtocolVersion,
    messages: Handlers<R>,
}

impl<R: Plumbing> std::fmt::Debug for Respond<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Respond")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl<R: Plumbing> Respond<R> {
    /// Sends the handler's result (or error); a connection that is gone is no error
    pub fn send<T>(self, result: Result<T, ErrorObject>)
    where
        T: Serialize + mcp_sansio::schema::FitVersion,
    {
        let result = finish(result, self.version);
        self.send_raw(result);
    }

    /// Sends a result already fitted and serialized (what a middleware chain returns)
    pub fn send_raw(self, result: Result<Box<RawValue>, ErrorObject>) {
        self.done(result, false);
    }

    /// Sends what a middleware chain made of an answer of the catalog's own (a list, an
    /// unknown tool, arguments that fail the schema): its span ends as `answered`
    pub fn send_answer(self, result: Result<Box<RawValue>, ErrorObject>) {
        self.done(result, true);
    }

    fn done(self, result: Result<Box<RawValue>, ErrorObject>, answered: bool) {
        let _ = self.messages.send(HandlerMsg::Done {
            responder: self.responder,
            result,
            answered,
        });
    }

    /// The protocol version of the request (a result is fitted to it)
    pub fn version(&self) -> mcp_sansio::ProtocolVersion {
        self.version
    }
}

impl<R: Runtime> Context<R> {
    /// Asks the client for input (elicitation, sampling, roots), whatever the era
    ///
    /// Legacy sessions send live requests and this waits for every answer. On a modern
    /// (2026-07-28) request the core answers with `input_required` and this handler run is
    /// stopped; the client's retry runs the handler again, and then this returns the answers
    /// at once. So write handlers to ask before doing work that must not run twice.
    ///
    /// # Errors
    /// [`AskFailure`]: answer the request with [`AskFailure::to_error`].
    pub async fn ask(&self, requests: InputRequests) -> Result<InputResponses, AskFailure> {
        let (reply, rx) = chan::oneshot();
        self.send_ask(requests, reply)?;
        chan::reply(rx).await.ok_or(AskFailure::Closed)?
    }

    /// Asks the user to fill in a form derived from `T` and returns what they did: the
    /// values decoded into `T`, or that they declined or dismissed it; whatever the era, as
    /// [`ask`](Self::ask) does (on a 2026 request the handler runs again with the answer)
    ///
    /// The form is `T`'s `schemars` JSON Schema restricted to what an elicitation form
    /// holds (see
    /// [`ElicitationSchema::from_json_schema`](mcp_sansio::schema::ElicitationSchema::from_json_schema)):
    /// a struct whose fields are strings (`#[schemars(email)]`, `#[schemars(url)]` and date
    /// types keep their format), numbers, integers, booleans, unit-variant enums (titled
    /// when their variants have doc comments or `#[schemars(title)]`) and `Vec`s of such
    /// enums (multi-selects, 2025-11-25 and later; earlier versions leave them out of the
    /// form, so give them `#[serde(default)]`). `Option` fields and `#[serde(default)]`
    /// ones are not required. The request's key is `elicit-<n>`, counted in the order the run asks
    /// its typed questions (`elicit`, [`sample_text`](Self::sample_text)).
    ///
    /// # Errors
    /// [`ElicitError::Form`] before anything is sent when `T` cannot be a form (a nested
    /// struct, a `Vec<String>`, a map: the error names the field);
    /// [`ElicitError::Ask`] when the client cannot be asked (without the `elicitation`
    /// capability: -32021) or did not answer; [`ElicitError::Answer`] when accepted values
    /// do not decode into `T`. `?` turns each into the request's error
    /// ([`ElicitError::to_error`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mcp_sansio::jsonrpc::ErrorObject;
    /// use mcp_sansio::schema::CallToolResult;
    /// use mcp_sansio_runtime::Runtime;
    /// use mcp_sansio_runtime::elicit::Elicited;
    /// use mcp_sansio_runtime::server::Context;
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
    /// async fn book<R: Runtime>(cx: Context<R>) -> Result<CallToolResult, ErrorObject> {
    ///     Ok(match cx.elicit::<Booking>("Book a table").await? {
    ///         Elicited::Accepted(b) => {
    ///             let outside = matches!(b.area, Some(Area::Terrace));
    ///             CallToolResult::text(format!("{} seats for {}, outside: {outside}", b.seats, b.name))
    ///         }
    ///         _ => CallToolResult::text("Nothing booked."),
    ///     })
    /// }
    /// ```
    #[cfg(feature = "schemars")]
    pub async fn elicit<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, ElicitError>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema,
    {
        let form = elicit::form_of::<T>()?;
        let (key, requests) = elicit::question(&self.elicits, message, form);
        let answers = self.ask(requests).await?;
        elicit::answer(&key, answers)
    }

    /// Asks the client's model to answer `prompt` (one user message, at most `max_tokens`:
    /// `sampling/createMessage`) and returns the text of its answer; whatever the era, as
    /// [`ask`](Self::ask) does (on a 2026 request the handler runs again with the answer)
    ///
    /// For a system prompt, model preferences, several messages or non-text content, build
    /// the `CreateMessageParams` and [`ask`](Self::ask). The requests' key is `sample-<n>`,
    /// counted with the run's other typed questions.
    ///
    /// # Errors
    /// [`SampleError::Ask`] when the client cannot be asked (without the `sampling`
    /// capability: -32021) or did not answer; [`SampleError::Answer`] when the answer has
    /// no text. `?` turns each into the request's error ([`SampleError::to_error`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mcp_sansio::jsonrpc::ErrorObject;
    /// use mcp_sansio::schema::CallToolResult;
    /// use mcp_sansio_runtime::Runtime;
    /// use mcp_sansio_runtime::server::Context;
    ///
    /// async fn haiku<R: Runtime>(cx: Context<R>) -> Result<CallToolResult, ErrorObject> {
    ///     let poem = cx.sample_text("Write a haiku about the sea", 100).await?;
    ///     Ok(CallToolResult::text(poem))
    /// }
    /// ```
    pub async fn sample_text(
        &self,
        prompt: impl Into<String>,
        max_tokens: u64,
    ) -> Result<String, SampleError> {
        let (key, requests) = sample::question(&self.elicits, prompt, max_tokens);
        let answers = self.ask(requests).await?;
        sample::answer(&key, answers)
    }

    /// Answers the request with a task handle now and keeps working: the handler's result
    /// (or error) then completes (or fails) the task; a client's `tasks/cancel` aborts the
    /// handler
    ///
    /// # Errors
    /// [`TaskError::NotOffered`] (the handler can go on and answer directly, or fail with
    /// [`TaskError::to_error`] if it needs a task), [`TaskError::TableFull`].
    pub async fn run_as_task(&self, options: TaskOptions) -> Result<StartedTask, TaskError> {
        let (reply, rx) = chan::oneshot();
        self.send_start_task(options, reply)?;
        chan::reply(rx).await.ok_or(TaskError::NotInFlight)?
    }
}

/// Builds a `Server`: its tools, resources, resource templates, prompts and completion
/// handler, each with an async handler, and the capabilities they need
///
/// Start with `Server::builder`. Each registration checks its entry (a valid and unique name
/// or URI, an `inputSchema` that compiles, a template that parses) and returns the builder, or
/// a [`CatalogError`]; registering declares the capability
/// (`tools`, `resources`, `prompts`, `completions`), keeping what the
/// [`ServerConfig`] already declares (such as `listChanged`). Then
/// [`build`](#method.build) makes the server. Its methods (their full docs follow below, under
/// *Implementations*; `R` is the binding's runtime, `S` its `Server` and `Context<R>`
/// is [`Context`]):
///
/// | method | registers | the handler gets, and returns |
/// |---|---|---|
/// | [`tool`](#method.tool)`(Tool, handler)` | a tool | `(Context, Map<String, Value>)`, the arguments; `CallToolResult` |
/// | [`typed_tool::<A>`](#method.typed_tool)`(name, description, handler)` | a tool whose `inputSchema` is derived from `A` (feature `schemars`) | `(Context, A)`; `CallToolResult` |
/// | [`resource`](#method.resource)`(Resource, handler)` | a resource | `(Context, String, Variables)`, the URI; `ReadResourceResult` |
/// | [`resource_template`](#method.resource_template)`(ResourceTemplate, handler)` | a template and the reader of the URIs it matches | `(Context, String, Variables)`, the URI and the template's values; `ReadResourceResult` |
/// | [`prompt`](#method.prompt)`(Prompt, handler)` | a prompt | `(Context, BTreeMap<String, String>)`, the arguments; `GetPromptResult` |
/// | [`completion`](#method.completion)`(handler)` | the `completion/complete` handler | `(Context, CompleteParams)`; `CompleteResult` |
/// | [`logging`](#method.logging)`()` | the `logging` capability, so [`Context::log`](Context#method.log) reaches legacy clients | |
/// | [`resource_subscriptions`](#method.resource_subscriptions)`()` | `resources.subscribe`: the session keeps each connection's subscriptions | |
/// | [`list_changed`](#method.list_changed)`()` | `listChanged` for tools, resources and prompts: the server's `add_*` and `remove_*` tell connected clients | |
/// | [`build`](#method.build)`()` | nothing more: returns the `Server` | |
///
/// A handler is an async closure or `async fn` (`Fn(..) -> impl Future + Send + 'static`, itself
/// `Send + Sync + 'static`) whose future returns `Result<_, ErrorObject>`: an
/// [`ErrorObject`] is a JSON-RPC error; a tool that fails in the
/// domain sense returns `Ok(CallToolResult::error(..))`. The catalog validates a tool's
/// arguments against its `inputSchema` before the handler runs.
///
/// # Example
///
/// ```
/// use mcp_sansio_tokio::mcp_sansio::schema::{
///     CallToolResult, CompleteResult, GetPromptResult, Prompt, PromptArgument, PromptMessage,
///     ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
/// };
/// use mcp_sansio_tokio::mcp_sansio::server::uri_template::Variables;
/// use mcp_sansio_tokio::mcp_sansio::{ErrorObject, Implementation, ServerConfig};
/// use mcp_sansio_tokio::{Context, Server};
/// use serde_json::{Map, json};
///
/// async fn read_note(
///     _cx: Context,
///     uri: String,
///     vars: Variables,
/// ) -> Result<ReadResourceResult, ErrorObject> {
///     let id = vars.get_str("id").unwrap_or_default();
///     Ok(ReadResourceResult::new(vec![ResourceContents::text(&uri, format!("Note {id}"))]))
/// }
///
/// # fn main() -> Result<(), mcp_sansio_tokio::mcp_sansio::server::CatalogError> {
/// let schema = json!({"type": "object", "properties": {"query": {"type": "string"}}});
/// let server = Server::builder(ServerConfig::new(Implementation::new("notes", "1.0")))
///     .tool(
///         Tool::new("search", schema.as_object().cloned().unwrap_or_default())
///             .with_description("Finds notes"),
///         |_cx, args| async move {
///             let query = args["query"].as_str().unwrap_or_default().to_owned();
///             Ok(CallToolResult::text(format!("notes://1 matches {query:?}")))
///         },
///     )?
///     .resource(
///         Resource::new("notes://index", "index").with_mime_type("text/plain"),
///         |_cx, uri, _vars| async move {
///             Ok(ReadResourceResult::new(vec![ResourceContents::text(uri, "notes://1")]))
///         },
///     )?
///     .resource_template(ResourceTemplate::new("notes://{id}", "note"), read_note)?
///     .prompt(
///         Prompt::new("summarize").with_arguments(vec![PromptArgument::new("id").required(true)]),
///         |_cx, args| async move {
///             let id = args.get("id").cloned().unwrap_or_default();
///             Ok(GetPromptResult::new(vec![PromptMessage::user(format!("Summarize note {id}"))]))
///         },
///     )?
///     .completion(|_cx, _params| async { Ok(CompleteResult::new(vec!["1".into()])) })
///     .logging()
///     .build();
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
///
/// The guide (`guide/` in the repository) shows the handlers' [`Context`], typed tools and
/// how to serve the built server.
///
/// Each binding names it `ServerBuilder` (this type for its runtime and its `Server`).
pub struct ServerBuilder<R: Runtime, S> {
    registry: AsyncRegistry<R>,
    middleware: Vec<Arc<dyn Middleware>>,
    server: PhantomData<fn() -> S>,
}

type AsyncRegistry<R> = Registry<ToolFn<R>, ResourceFn<R>, PromptFn<R>, CompleteFn<R>>;

impl<R: Runtime, S> std::fmt::Debug for ServerBuilder<R, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("config", self.registry.config())
            .field("middleware", &self.middleware.len())
            .finish_non_exhaustive()
    }
}

impl<R: Runtime, S: From<ServerCore<R>>> ServerBuilder<R, S> {
    /// Starts building a server (the bindings' `Server::builder`)
    #[doc(hidden)]
    pub fn new(config: ServerConfig) -> Self {
        Self {
            registry: Registry::new(config),
            middleware: Vec::new(),
            server: PhantomData,
        }
    }

    /// Declares the `logging` capability, so handlers' [`Context::log`] messages reach
    /// legacy clients (2026 clients opt in per request)
    #[must_use]
    pub fn logging(mut self) -> Self {
        self.registry.logging();
        self
    }

    /// Declares `resources.subscribe`: the session then answers `resources/subscribe` and
    /// `resources/unsubscribe` and keeps each connection's subscriptions (publish changes
    /// with the server's `notify_resource_updated`, which reaches every connection)
    #[must_use]
    pub fn resource_subscriptions(mut self) -> Self {
        self.registry.resource_subscriptions();
        self
    }

    /// Declares `listChanged` for tools, resources and prompts (and so each of those
    /// capabilities): the server's `add_*` and `remove_*` then tell every connected client
    /// (`notifications/*/list_changed`), as its `notify_list_changed` does
    #[must_use]
    pub fn list_changed(mut self) -> Self {
        self.registry.list_changed();
        self
    }

    /// Shares tasks and changes with the server's other processes through `store` (see
    /// [`store`](crate::store)): a task started here is read, given input and cancelled
    /// through any of them, and `list_changed` and resource updates raised on one reach
    /// the clients of all. `shared` names this process and sets the lease after which a
    /// task whose process died reads `failed`. Only the HTTP sessions share (a byte
    /// stream's tasks have one client); every process must register the same tools and
    /// share one [`ServerConfig::state_key`].
    #[must_use]
    pub fn task_store(mut self, store: Arc<dyn TaskStore>, shared: SharedTasks) -> Self {
        self.registry.task_store(store, shared);
        self
    }

    /// Requires `scopes` of every caller of the registered `kind` entry `key`: a caller
    /// whose verified principal lacks one is refused (HTTP: `403` with the
    /// `insufficient_scope` step-up challenge, before any handler runs; other transports:
    /// the JSON-RPC error [`mcp_sansio::server::insufficient_scope`])
    ///
    /// ```
    /// use mcp_sansio::schema::{CallToolResult, Tool};
    /// use mcp_sansio::server::{CatalogError, EntryKind};
    /// use mcp_sansio_runtime::Runtime;
    /// use mcp_sansio_runtime::server::{ServerBuilder, ServerCore};
    ///
    /// fn admin<R: Runtime>(
    ///     b: ServerBuilder<R, ServerCore<R>>,
    /// ) -> Result<ServerBuilder<R, ServerCore<R>>, CatalogError> {
    ///     b.tool(Tool::new("wipe", serde_json::Map::new()), |_cx, _args| async {
    ///         Ok(CallToolResult::text("wiped"))
    ///     })?
    ///     .require_scopes(EntryKind::Tool, "wipe", ["mcp:admin"])
    /// }
    /// ```
    ///
    /// # Errors
    /// [`CatalogError::NotRegistered`] when no such entry is registered yet.
    pub fn require_scopes<I: IntoIterator<Item = impl Into<String>>>(
        mut self,
        kind: EntryKind,
        key: &str,
        scopes: I,
    ) -> Result<Self, CatalogError> {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.registry.require_scopes(kind, key, scopes)?;
        Ok(self)
    }

    /// Leaves out of the lists (`tools/list`, ...) the entries the caller may not use
    /// (their [required scopes](Self::require_scopes) are not all granted to it)
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

    /// Adds `middleware` around every request the catalog serves (`tools/call`,
    /// `resources/read`, `prompts/get`, `completion/complete`, and the lists and refusals
    /// it answers itself): the first added is the outermost (it sees the request first and the outcome last). An `async` closure
    /// `|call: Call, next: Next| async move { next.run(call).await }` is one; see
    /// [`middleware`] for what it sees and may do, and which requests
    /// stay outside the chain
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Sets the `completion/complete` handler and declares `completions`
    #[must_use]
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Context<R>, CompleteParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CompleteResult, ErrorObject>> + Send + 'static,
    {
        self.registry
            .completion(Arc::new(move |cx, params| Box::pin(handler(cx, params))));
        self
    }

    /// Adds a tool and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context<R>, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        self.registry
            .tool(tool, Arc::new(move |cx, args| Box::pin(handler(cx, args))))?;
        Ok(self)
    }

    /// Adds what `#[tool]` made (the binding's `macros` feature): one tool, or a tuple of
    /// them (`tools![a, b]`)
    ///
    /// # Errors
    /// [`CatalogError`] as [`tool`](Self::tool).
    #[cfg(feature = "schemars")]
    pub fn register(self, tools: impl crate::typed::Register<Self>) -> Result<Self, CatalogError> {
        tools.register(self)
    }

    /// Adds a tool whose arguments are a Rust type: its `inputSchema` is derived with
    /// `schemars`, and the handler gets the decoded value (the catalog has already checked
    /// the arguments against the schema; a value that still does not decode is -32602)
    ///
    /// # Errors
    /// [`CatalogError`] as [`tool`](Self::tool).
    #[cfg(feature = "schemars")]
    pub fn typed_tool<A, F, Fut>(
        self,
        name: &str,
        description: &str,
        handler: F,
    ) -> Result<Self, CatalogError>
    where
        A: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
        F: Fn(Context<R>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        let tool = typed_tool::<A>(name, description)?;
        let handler = Arc::new(handler);
        self.tool(tool, move |cx, args| {
            let handler = Arc::clone(&handler);
            async move {
                let typed: A = decode_arguments(args)?;
                handler(cx, typed).await
            }
        })
    }

    /// Adds a resource and its reader
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn resource<F, Fut>(mut self, resource: Resource, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context<R>, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.registry.resource(
            resource,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        )?;
        Ok(self)
    }

    /// Adds a resource template and the reader for the URIs it matches
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn resource_template<F, Fut>(
        mut self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<Self, CatalogError>
    where
        F: Fn(Context<R>, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.registry.resource_template(
            template,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        )?;
        Ok(self)
    }

    /// Adds a prompt and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context<R>, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        self.registry.prompt(
            prompt,
            Arc::new(move |cx, args| Box::pin(handler(cx, args))),
        )?;
        Ok(self)
    }

    /// The server, ready to serve connections
    ///
    /// Without a [`ServerConfig::state_key`] the server gets a random one (see
    /// [`Registry::build`]).
    pub fn build(self) -> S {
        let live = self.registry.build_live();
        S::from(ServerCore {
            config: Arc::clone(live.config()),
            dispatch: Arc::new(Dispatcher {
                live,
                middleware: self.middleware.into(),
            }),
        })
    }
}

/// What a built server holds: its configuration and its dispatcher
///
/// A binding's IO serves connections of it ([`Server::core`](crate::Server::core),
/// [`RuntimeIo::serve_stdio`](crate::RuntimeIo::serve_stdio), the HTTP actors); users never
/// name it.
pub struct ServerCore<R: Runtime> {
    /// The sessions' configuration
    pub config: Arc<ServerConfig>,
    /// The catalog and the handlers
    pub dispatch: Arc<Dispatcher<R>>,
}

impl<R: Runtime> Clone for ServerCore<R> {
    fn clone(&self) -> Self {
        Self {
            config: Arc::clone(&self.config),
            dispatch: Arc::clone(&self.dispatch),
        }
    }
}

/// The catalog and the handlers of a built server, and its live connections
#[doc(hidden)]
pub struct Dispatcher<R: Runtime> {
    live: Live<ToolFn<R>, ResourceFn<R>, PromptFn<R>, CompleteFn<R>>,
    /// Around every handler run (empty: the handler runs as it is)
    middleware: Chain,
}

/// A server's catalog and handlers, whatever a handler is (an async binding's future maker,
/// a blocking binding's plain function), with the configuration whose capabilities they
/// declare: what every binding's `ServerBuilder` fills
pub struct Registry<T, S, P, C> {
    config: ServerConfig,
    table: Table<T, S, P, C>,
    store: Option<Arc<dyn TaskStore>>,
}

impl<T, S, P, C> std::fmt::Debug for Registry<T, S, P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<T, S, P, C> Registry<T, S, P, C> {
    /// Nothing registered yet
    pub fn new(config: ServerConfig) -> Self {
        Self {
            config,
            table: Table {
                catalog: Catalog::default(),
                tools: BTreeMap::new(),
                resources: Vec::new(),
                prompts: BTreeMap::new(),
                completion: None,
            },
            store: None,
        }
    }

    /// Shares the server's tasks and changes with other processes through `store`, as
    /// `shared` says (this process's name in records, the lease)
    pub fn task_store(&mut self, store: Arc<dyn TaskStore>, shared: SharedTasks) {
        self.config.shared_tasks = Some(shared);
        self.store = Some(store);
    }

    /// The built registry as a live server: [`build`](Self::build), then the store's
    /// subscription
    pub fn build_live(mut self) -> Live<T, S, P, C> {
        let store = self.store.take();
        let (config, table) = self.build();
        let mut live = Live::new(config, table);
        if let Some(store) = store {
            live.attach_store(store);
        }
        live
    }

    /// The configuration so far
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Declares the `logging` capability
    pub fn logging(&mut self) {
        declare(&mut self.config.capabilities, "logging");
    }

    /// Declares `resources.subscribe`
    pub fn resource_subscriptions(&mut self) {
        declare(&mut self.config.capabilities, "resources");
        self.config.capabilities["resources"]["subscribe"] = Value::Bool(true);
    }

    /// Declares `tools`, `resources` and `prompts`, each with `listChanged: true`
    pub fn list_changed(&mut self) {
        for list in ["tools", "resources", "prompts"] {
            declare(&mut self.config.capabilities, list);
            self.config.capabilities[list]["listChanged"] = Value::Bool(true);
        }
    }

    /// Sets the `completion/complete` handler and declares `completions`
    pub fn completion(&mut self, handler: C) {
        self.table.completion = Some(handler);
        declare(&mut self.config.capabilities, "completions");
    }

    /// Adds a tool and its handler, and declares `tools`
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn tool(&mut self, tool: Tool, handler: T) -> Result<(), CatalogError> {
        self.table.add_tool(tool, handler)?;
        declare(&mut self.config.capabilities, "tools");
        Ok(())
    }

    /// Adds a resource and its reader, and declares `resources`
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn resource(&mut self, resource: Resource, handler: S) -> Result<(), CatalogError> {
        self.table.add_resource(resource, handler)?;
        declare(&mut self.config.capabilities, "resources");
        Ok(())
    }

    /// Adds a resource template and its reader, and declares `resources`
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn resource_template(
        &mut self,
        template: ResourceTemplate,
        handler: S,
    ) -> Result<(), CatalogError> {
        self.table.add_resource_template(template, handler)?;
        declare(&mut self.config.capabilities, "resources");
        Ok(())
    }

    /// Adds a prompt and its handler, and declares `prompts`
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn prompt(&mut self, prompt: Prompt, handler: P) -> Result<(), CatalogError> {
        self.table.add_prompt(prompt, handler)?;
        declare(&mut self.config.capabilities, "prompts");
        Ok(())
    }

    /// Requires `scopes` of every caller of the registered `kind` entry `key` (see
    /// [`Catalog::require_scopes`]): a caller whose verified principal lacks one is refused
    /// (HTTP: `403` with the `insufficient_scope` challenge before any handler runs; other
    /// transports: the JSON-RPC error [`mcp_sansio::server::insufficient_scope`])
    ///
    /// # Errors
    /// [`CatalogError::NotRegistered`] when no such entry is registered (yet).
    pub fn require_scopes(
        &mut self,
        kind: EntryKind,
        key: &str,
        scopes: Vec<String>,
    ) -> Result<(), CatalogError> {
        if self.table.catalog.require_scopes(kind, key, scopes) {
            Ok(())
        } else {
            Err(CatalogError::NotRegistered {
                kind,
                key: key.to_owned(),
            })
        }
    }

    /// Leaves out of `tools/list` (and the other lists) what the caller may not use
    pub fn hide_forbidden(&mut self) {
        self.table.catalog.hide_forbidden(true);
    }

    /// Declares tasks for `tools/call` in both forms: the 2025-11-25 `tasks` capability
    /// (`list`, `cancel`, `requests.tools.call`) and the 2026-07-28 tasks extension; a
    /// handler then runs as a task with `run_as_task` when the client allows it
    pub fn tasks(&mut self) {
        let caps = &mut self.config.capabilities;
        declare(caps, "tasks");
        caps["tasks"]["list"] = Value::Object(Map::new());
        caps["tasks"]["cancel"] = Value::Object(Map::new());
        caps["tasks"]["requests"] = serde_json::json!({"tools": {"call": {}}});
        declare(caps, "extensions");
        caps["extensions"][mcp_sansio::TASKS_EXTENSION] = Value::Object(Map::new());
    }

    /// The configuration and the table, built
    ///
    /// A configuration without a [`ServerConfig::state_key`] gets 32 random bytes from the
    /// operating system, so 2026 requests can ask for input (sealed `requestState`) with no
    /// setting; several processes behind one endpoint must share a key set by hand. A
    /// [`ServerConfig::task_id_seed`] left at 0 gets random bits too, so task ids differ
    /// between processes (which share one id space through a task store), and a
    /// [`ServerConfig::task_id_key`] left at zero gets a random key, so nobody can guess
    /// another caller's task ids.
    pub fn build(mut self) -> (ServerConfig, Table<T, S, P, C>) {
        if self.config.state_key.is_none() {
            self.config.state_key = Some(random_key());
        }
        if self.config.task_id_key == [0; 32] {
            self.config.task_id_key = random_key();
        }
        if self.config.task_id_seed == 0 {
            let mut seed = [0u8; 8];
            seed.copy_from_slice(&random_key()[..8]);
            self.config.task_id_seed = u64::from_le_bytes(seed);
        }
        (self.config, self.table)
    }
}

/// 32 random bytes from the operating system (from the OS-seeded SipHash keys of
/// `RandomState`s should the OS refuse)
pub fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        use std::hash::{BuildHasher, RandomState};
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            chunk.copy_from_slice(&RandomState::new().hash_one(i).to_le_bytes());
        }
    }
    key
}

/// A built server's catalog and handlers
pub struct Table<T, S, P, C> {
    catalog: Catalog,
    tools: BTreeMap<String, T>,
    resources: Vec<(String, S)>,
    prompts: BTreeMap<String, P>,
    completion: Option<C>,
}

impl<T, S, P, C> Table<T, S, P, C> {
    /// Adds a tool and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`; the
    /// table is unchanged.
    pub fn add_tool(&mut self, tool: Tool, handler: T) -> Result<(), CatalogError> {
        let name = tool.name.clone();
        self.catalog.add_tool(tool)?;
        self.tools.insert(name, handler);
        Ok(())
    }

    /// Removes a tool and its handler; whether it was there
    pub fn remove_tool(&mut self, name: &str) -> bool {
        self.tools.remove(name);
        self.catalog.remove_tool(name)
    }

    /// Adds a resource and its reader
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI; the table is unchanged.
    pub fn add_resource(&mut self, resource: Resource, handler: S) -> Result<(), CatalogError> {
        let uri = resource.uri.clone();
        self.catalog.add_resource(resource)?;
        self.resources.push((uri, handler));
        Ok(())
    }

    /// Removes a resource and its reader; whether it was there
    pub fn remove_resource(&mut self, uri: &str) -> bool {
        let removed = self.catalog.remove_resource(uri);
        if removed {
            self.forget_reader(uri);
        }
        removed
    }

    /// Adds a resource template and its reader
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template; the table is unchanged.
    pub fn add_resource_template(
        &mut self,
        template: ResourceTemplate,
        handler: S,
    ) -> Result<(), CatalogError> {
        let key = template.uri_template.clone();
        self.catalog.add_template(template)?;
        self.resources.push((key, handler));
        Ok(())
    }

    /// Removes a resource template (by its URI template) and its reader; whether it was there
    pub fn remove_resource_template(&mut self, uri_template: &str) -> bool {
        let removed = self.catalog.remove_template(uri_template);
        if removed {
            self.forget_reader(uri_template);
        }
        removed
    }

    /// Adds a prompt and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name; the table is unchanged.
    pub fn add_prompt(&mut self, prompt: Prompt, handler: P) -> Result<(), CatalogError> {
        let name = prompt.name.clone();
        self.catalog.add_prompt(prompt)?;
        self.prompts.insert(name, handler);
        Ok(())
    }

    /// Removes a prompt and its handler; whether it was there
    pub fn remove_prompt(&mut self, name: &str) -> bool {
        self.prompts.remove(name);
        self.catalog.remove_prompt(name)
    }

    /// Drops the reader registered under `key` (a resource's URI or a template), the last
    /// one registered when a resource and a template share the key
    fn forget_reader(&mut self, key: &str) {
        if let Some(at) = self.resources.iter().rposition(|(k, _)| k == key) {
            self.resources.remove(at);
        }
    }
}

/// The handler the catalog routed a request to, with what it gets
#[derive(Debug)]
pub enum Job<T, S, P, C> {
    /// A tool's handler, with the arguments
    Tool(T, Map<String, Value>),
    /// A resource's (or template's) reader, with the URI and the template's variables
    Resource(S, String, Variables),
    /// A prompt's handler, with the arguments
    Prompt(P, BTreeMap<String, String>),
    /// The completion handler, with the params
    Complete(C, Box<CompleteParams>),
    /// The catalog's own answer to a request of `method` (a list; a call of an unknown
    /// tool, with arguments that fail its schema, or without the scopes it requires), for
    /// a middleware chain to see ([`Table::route_with`] with `answers`)
    Answered(&'static str, mcp_sansio::server::Answer),
}

impl<T: Clone, S: Clone, P: Clone, C: Clone> Table<T, S, P, C> {
    /// The server's catalog
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Routes a request with the catalog: the handler to run for it, or `None` when the
    /// request has been answered already (the catalog's own answers, errors)
    pub fn route(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
    ) -> Option<(InboundRequest, Job<T, S, P, C>)> {
        self.route_with(session, request, false)
    }

    /// [`route`](Self::route); with `answers` (a server with middleware), the catalog's own
    /// answer to a method it serves is not sent but returned as [`Job::Answered`], so the
    /// chain sees that request too (a method it does not serve is still answered at once)
    pub fn route_with(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
        answers: bool,
    ) -> Option<(InboundRequest, Job<T, S, P, C>)> {
        // The catalog decides; this only names the handler the route names.
        let job = match self.catalog.route(&request, self.completion.is_some()) {
            Route::Tool { name, arguments } => match self.tools.get(&name) {
                Some(handler) => Job::Tool(handler.clone(), arguments),
                None => return unregistered(session, request),
            },
            Route::Resource {
                key,
                uri,
                variables,
            } => match self.resources.iter().find(|(k, _)| *k == key) {
                Some((_, handler)) => Job::Resource(handler.clone(), uri, variables),
                None => return unregistered(session, request),
            },
            Route::Prompt { name, arguments } => match self.prompts.get(&name) {
                Some(handler) => Job::Prompt(handler.clone(), arguments),
                None => return unregistered(session, request),
            },
            Route::Complete(params) => match &self.completion {
                Some(handler) => Job::Complete(handler.clone(), Box::new(params)),
                None => return unregistered(session, request),
            },
            Route::Answer(answer) => match catalog_method(&request.method).filter(|_| answers) {
                Some(method) => Job::Answered(method, answer),
                None => {
                    mcp_sansio::server::respond(session, request.responder, &answer);
                    return None;
                }
            },
            _ => {
                let error = ErrorObject::method_not_found(&request.method);
                session.respond_error(request.responder, &error);
                return None;
            }
        };
        Some((request, job))
    }
}

/// The methods the catalog answers or routes, by their static names (others: `None`)
fn catalog_method(method: &str) -> Option<&'static str> {
    use mcp_sansio::schema::method::{
        CallTool, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources,
        ListTools, Method, ReadResource,
    };
    [
        ListTools::NAME,
        ListResources::NAME,
        ListResourceTemplates::NAME,
        ListPrompts::NAME,
        CallTool::NAME,
        ReadResource::NAME,
        GetPrompt::NAME,
        Complete::NAME,
    ]
    .into_iter()
    .find(|name| *name == method)
}

/// Declares a capability as `{}` unless the configuration already declares it (so flags such
/// as `listChanged` or `subscribe` set by the user survive)
pub fn declare(capabilities: &mut Value, name: &str) {
    if let Value::Object(caps) = capabilities {
        caps.entry(name)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// A handler's result for the wire: fitted to the request's version, then serialized
pub fn finish<T>(
    result: Result<T, ErrorObject>,
    version: mcp_sansio::ProtocolVersion,
) -> Result<Box<RawValue>, ErrorObject>
where
    T: Serialize + mcp_sansio::schema::FitVersion,
{
    result.and_then(|mut r| {
        r.fit_to(version);
        serde_json::value::to_raw_value(&r).map_err(ErrorObject::internal_error)
    })
}

/// Answers a request routed to a handler a server does not hold (the catalog and the
/// handlers are built together, so this does not happen)
pub(crate) fn unregistered<T>(session: &mut ServerSession, request: InboundRequest) -> Option<T> {
    let error = ErrorObject::internal_error(format!("no handler for {}", request.method));
    session.respond_error(request.responder, &error);
    None
}

/// Why a list-changed notification was not sent: the server does not declare `listChanged`
/// for that list (build it with `ServerBuilder::list_changed`)
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server does not declare {list}.listChanged (build it with ServerBuilder::list_changed)"
)]
#[non_exhaustive]
pub struct NotDeclared {
    /// The list: `tools`, `resources` or `prompts`
    pub list: &'static str,
}

/// A built server's catalog and handlers, changeable while it serves, with the hub of its
/// live connections: what every binding's `Server` handle holds
///
/// Each change takes effect for the next request of every connection (the next
/// `tools/list` shows it) and, when the configuration declares `listChanged` for the list,
/// sends `notifications/<list>/list_changed` to every connection (which sessions get it is
/// the core's rule: legacy sessions once initialized, 2026 listen streams that asked).
/// Tool changes also reach the HTTP core's header-mirror cache.
pub struct Live<T, S, P, C> {
    config: Arc<ServerConfig>,
    table: RwLock<Table<T, S, P, C>>,
    hub: Arc<Hub>,
    /// The task store, and this server's subscription to what other processes publish
    store: Option<(Arc<dyn TaskStore>, Subscription)>,
    /// The configuration of byte-stream sessions: their tasks stay theirs (one client)
    local_config: Arc<ServerConfig>,
    /// Whether any entry required scopes at the last change
    scoped: std::sync::atomic::AtomicBool,
}

impl<T, S, P, C> std::fmt::Debug for Live<T, S, P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("config", &self.config)
            .field("hub", &self.hub)
            .finish_non_exhaustive()
    }
}

impl<T, S, P, C> Live<T, S, P, C> {
    /// A built server's configuration and table, with no connection yet
    pub fn new(config: ServerConfig, table: Table<T, S, P, C>) -> Self {
        let config = Arc::new(config);
        let scoped = table.catalog.has_scoped_entries().into();
        Self {
            local_config: Arc::clone(&config),
            config,
            scoped,
            table: RwLock::new(table),
            hub: Hub::new(),
            store: None,
        }
    }

    /// Hears what every process publishes to `store`: changes raised elsewhere reach this
    /// server's connections, task signals its HTTP sessions
    fn attach_store(&mut self, store: Arc<dyn TaskStore>) {
        let origin = self
            .config
            .shared_tasks
            .as_ref()
            .map(|s| s.node.clone())
            .unwrap_or_default();
        let hub = Arc::downgrade(&self.hub);
        let subscription = store.subscribe(Arc::new(move |text: &str| {
            let Some(hub) = hub.upgrade() else {
                return;
            };
            match Signal::decode(text) {
                Some(Signal::ListChanged { origin: from, kind }) if from != origin => {
                    hub.broadcast(&Push::ListChanged(kind));
                }
                Some(Signal::ResourceUpdated { origin: from, uri }) if from != origin => {
                    hub.broadcast(&Push::ResourceUpdated(uri));
                }
                Some(Signal::ListChanged { .. } | Signal::ResourceUpdated { .. }) | None => {}
                Some(_) => hub.broadcast(&Push::Signal(Arc::from(text))),
            }
        }));
        let mut local = (*self.config).clone();
        local.shared_tasks = None;
        self.local_config = Arc::new(local);
        self.store = Some((store, subscription));
    }

    /// The task store, when the server shares its tasks
    pub fn store(&self) -> Option<&Arc<dyn TaskStore>> {
        self.store.as_ref().map(|(store, _)| store)
    }

    /// The configuration of byte-stream sessions (stdio, in-memory pipes): the server's,
    /// without [`ServerConfig::shared_tasks`] (a byte stream's tasks have one client)
    pub fn local_config(&self) -> &Arc<ServerConfig> {
        &self.local_config
    }

    /// Tells the other processes, when there is a store
    fn publish(&self, signal: impl FnOnce(String) -> Signal) {
        if let (Some((store, _)), Some(shared)) = (&self.store, &self.config.shared_tasks) {
            let message = signal(shared.node.clone()).encode();
            store.run(StoreOp::Publish { message }, Box::new(|_| {}));
        }
    }

    /// The sessions' configuration
    pub fn config(&self) -> &Arc<ServerConfig> {
        &self.config
    }

    /// The live connections: each connection's actor registers here while it runs
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The table as it is now (hold it briefly: changes wait for it)
    pub fn table(&self) -> RwLockReadGuard<'_, Table<T, S, P, C>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every tool as it is now (an HTTP actor's header mirrors, when it starts)
    pub fn tools(&self) -> Vec<Tool> {
        self.table().catalog.tools().cloned().collect()
    }

    /// The scopes the entries require as they are now (an HTTP actor's check, when it
    /// starts; changes come as [`Push::Access`])
    pub fn access(&self) -> Option<Arc<mcp_sansio::server::Access>> {
        self.table().catalog.access()
    }

    /// After a change of the catalog: the HTTP actors learn the entries' scopes again,
    /// when any entry requires some (or did)
    fn access_changed(&self) {
        let access = self.access();
        let was = self
            .scoped
            .swap(access.is_some(), std::sync::atomic::Ordering::Relaxed);
        if access.is_some() || was {
            self.hub.broadcast(&Push::Access(access));
        }
    }

    /// Requires `scopes` of every caller of the registered `kind` entry `key` while the
    /// server runs (see `ServerBuilder::require_scopes`); `false` if no such entry exists
    pub fn require_scopes(&self, kind: EntryKind, key: &str, scopes: Vec<String>) -> bool {
        let done = self.change(|table| table.catalog.require_scopes(kind, key, scopes));
        if done {
            self.access_changed();
        }
        done
    }

    fn change<O>(&self, edit: impl FnOnce(&mut Table<T, S, P, C>) -> O) -> O {
        let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
        edit(&mut table)
    }

    /// Tells every connection that `kind` changed, if the server declares `listChanged` for it
    fn changed(&self, kind: ListKind) {
        self.access_changed();
        let _ = self.notify_list_changed(kind);
    }

    /// Adds a tool and its handler while the server runs (see the type's docs)
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn add_tool(&self, tool: Tool, handler: T) -> Result<(), CatalogError> {
        let mirror = Push::ToolSet(Box::new(tool.clone()));
        self.change(|table| table.add_tool(tool, handler))?;
        self.hub.broadcast(&mirror);
        self.changed(ListKind::Tools);
        Ok(())
    }

    /// Removes a tool; whether it was there (only then are clients told)
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.change(|table| table.remove_tool(name));
        if removed {
            self.hub.broadcast(&Push::ToolRemoved(name.to_owned()));
            self.changed(ListKind::Tools);
        }
        removed
    }

    /// Adds a resource and its reader while the server runs
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn add_resource(&self, resource: Resource, handler: S) -> Result<(), CatalogError> {
        self.change(|table| table.add_resource(resource, handler))?;
        self.changed(ListKind::Resources);
        Ok(())
    }

    /// Removes a resource; whether it was there
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.change(|table| table.remove_resource(uri));
        if removed {
            self.changed(ListKind::Resources);
        }
        removed
    }

    /// Adds a resource template and its reader while the server runs
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: S,
    ) -> Result<(), CatalogError> {
        self.change(|table| table.add_resource_template(template, handler))?;
        self.changed(ListKind::Resources);
        Ok(())
    }

    /// Removes a resource template by its URI template; whether it was there
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        let removed = self.change(|table| table.remove_resource_template(uri_template));
        if removed {
            self.changed(ListKind::Resources);
        }
        removed
    }

    /// Adds a prompt and its handler while the server runs
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn add_prompt(&self, prompt: Prompt, handler: P) -> Result<(), CatalogError> {
        self.change(|table| table.add_prompt(prompt, handler))?;
        self.changed(ListKind::Prompts);
        Ok(())
    }

    /// Removes a prompt; whether it was there
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.change(|table| table.remove_prompt(name));
        if removed {
            self.changed(ListKind::Prompts);
        }
        removed
    }

    /// Tells every connected client that a list changed (`notifications/<list>/list_changed`
    /// to legacy sessions and to the 2026 listen streams that asked for it)
    ///
    /// # Errors
    /// [`NotDeclared`] when the server does not declare `listChanged` for the list.
    pub fn notify_list_changed(&self, kind: ListKind) -> Result<(), NotDeclared> {
        let list = match kind {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            _ => "prompts",
        };
        if !has_capability(&self.config.capabilities, &[list, "listChanged"]) {
            return Err(NotDeclared { list });
        }
        self.hub.broadcast(&Push::ListChanged(kind));
        self.publish(|origin| Signal::ListChanged { origin, kind });
        Ok(())
    }

    /// Tells every connected client subscribed to `uri` that it changed
    /// (`notifications/resources/updated` to legacy sessions that subscribed to it, or to a
    /// parent, with `resources/subscribe`, and to the 2026 listen streams that name it)
    pub fn notify_resource_updated(&self, uri: &str) {
        self.hub.broadcast(&Push::ResourceUpdated(uri.to_owned()));
        self.publish(|origin| Signal::ResourceUpdated {
            origin,
            uri: uri.to_owned(),
        });
    }
}

impl<T: Clone, S: Clone, P: Clone, C: Clone> Live<T, S, P, C> {
    /// Routes a request with the catalog as it is now (see [`Table::route`])
    pub fn route(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
    ) -> Option<(InboundRequest, Job<T, S, P, C>)> {
        self.table().route(session, request)
    }

    /// [`Table::route_with`] with the catalog as it is now
    pub fn route_with(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
        answers: bool,
    ) -> Option<(InboundRequest, Job<T, S, P, C>)> {
        self.table().route_with(session, request, answers)
    }
}

impl<R: Runtime> ServerCore<R> {
    /// What a connection (or an HTTP server's sessions) runs the application with: this
    /// server's dispatcher
    pub fn app(&self) -> App<R> {
        let dispatcher = Arc::clone(&self.dispatch);
        App::server(Box::new(move |session, request, handlers| {
            dispatcher.dispatch(session, request, handlers)
        }))
    }

    /// The catalog and handlers, changeable while the server runs, and its connections
    pub fn live(&self) -> &Live<ToolFn<R>, ResourceFn<R>, PromptFn<R>, CompleteFn<R>> {
        self.dispatch.live()
    }
}

/// A handler's future whose panic is its result, `-32603`
struct Unpanicked<T>(BoxFuture<Result<T, ErrorObject>>);

impl<T> Future for Unpanicked<T> {
    type Output = Result<T, ErrorObject>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.0.as_mut().poll(cx)))
            .unwrap_or_else(|_| std::task::Poll::Ready(Err(middleware::panicked("handler"))))
    }
}

impl<R: Runtime> Dispatcher<R> {
    /// The server's catalog and handlers, changeable while it serves, and its connections
    pub fn live(&self) -> &Live<ToolFn<R>, ResourceFn<R>, PromptFn<R>, CompleteFn<R>> {
        &self.live
    }

    /// Runs a handler in its own task; its result goes back to the actor
    fn spawn<T>(
        &self,
        method: &'static str,
        request: InboundRequest,
        session: &ServerSession,
        messages: &Handlers<R>,
        work: impl FnOnce(Context<R>) -> BoxFuture<Result<T, ErrorObject>> + Send + 'static,
    ) -> R::Run
    where
        T: Serialize + mcp_sansio::schema::FitVersion + Send + 'static,
    {
        let (cx, respond) = Context::start(request, session, messages);
        if !self.middleware.is_empty() {
            return Self::spawn_chain(&self.middleware, method, cx, respond, work);
        }
        // A handler that panics, making its future or polling it, is answered `-32603` like
        // one under a chain (whose steps catch panics): its request must not wait forever.
        let future: BoxFuture<Result<T, ErrorObject>> =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || work(cx)))
                .unwrap_or_else(|_| {
                    Box::pin(std::future::ready(Err(middleware::panicked("handler"))))
                });
        // The dispatcher runs in the request's span: the handler runs in it too.
        R::spawn_run(tracing::Instrument::in_current_span(async move {
            respond.send(Unpanicked(future).await);
        }))
    }

    /// Runs a handler under the middleware chain in its own task; the chain's outcome
    /// goes back to the actor
    fn spawn_chain<T>(
        chain: &Chain,
        method: &'static str,
        cx: Context<R>,
        respond: Respond<R>,
        work: impl FnOnce(Context<R>) -> BoxFuture<Result<T, ErrorObject>> + Send + 'static,
    ) -> R::Run
    where
        T: Serialize + mcp_sansio::schema::FitVersion + Send + 'static,
    {
        let call = Call::new(method, cx.request().clone());
        let version = respond.version();
        let handler = Box::new(move || -> BoxFuture<Outcome> {
            let future = work(cx);
            Box::pin(async move { Outcome::of(finish(future.await, version)) })
        });
        let next = middleware::Next::new(Arc::clone(chain), handler);
        R::spawn_run(tracing::Instrument::in_current_span(async move {
            respond.send_raw(next.run(call).await.into_result());
        }))
    }

    /// Starts the handler the catalog routes `request` to, on a task of its own; `None` when
    /// the request has been answered already
    pub fn dispatch(
        &self,
        session: &mut ServerSession,
        request: InboundRequest,
        messages: &Handlers<R>,
    ) -> Option<R::Run> {
        let chained = !self.middleware.is_empty();
        let (request, job) = self.live.route_with(session, request, chained)?;
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
                let (cx, respond) = Context::start(request, session, messages);
                let call = Call::new(method, cx.request().clone());
                drop(cx);
                let answered = Box::new(move || -> BoxFuture<Outcome> {
                    Box::pin(std::future::ready(Outcome::of(answer)))
                });
                let next = middleware::Next::new(Arc::clone(&self.middleware), answered);
                R::spawn_run(tracing::Instrument::in_current_span(async move {
                    respond.send_answer(next.run(call).await.into_result());
                }))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use mcp_sansio::Implementation;

    use super::*;

    type Plain = Registry<(), (), (), ()>;

    #[test]
    fn a_server_built_without_a_state_key_gets_a_random_one_and_keeps_a_set_one() {
        let config = || ServerConfig::new(Implementation::new("s", "1"));
        let (a, _) = Plain::new(config()).build();
        let (b, _) = Plain::new(config()).build();
        let (a, b) = (a.state_key.expect("a key"), b.state_key.expect("a key"));
        assert_ne!(a, b, "each server draws its own");
        assert_ne!(a, [0; 32]);
        let mut set = config();
        set.state_key = Some([7; 32]);
        let (built, _) = Plain::new(set).build();
        assert_eq!(built.state_key, Some([7; 32]), "a key set by hand is kept");
    }

    #[test]
    fn list_changed_declares_every_list_and_keeps_what_the_config_says() {
        let mut config = ServerConfig::new(Implementation::new("s", "1"));
        config.capabilities = serde_json::json!({"tools": {"extra": 1}});
        let mut registry = Plain::new(config);
        registry.list_changed();
        let (config, _) = registry.build();
        assert_eq!(
            config.capabilities,
            serde_json::json!({
                "tools": {"extra": 1, "listChanged": true},
                "resources": {"listChanged": true},
                "prompts": {"listChanged": true},
            })
        );
    }

    #[test]
    fn a_live_table_changes_and_refuses_duplicates() {
        let (config, table) = Plain::new(ServerConfig::new(Implementation::new("s", "1"))).build();
        let live = Live::new(config, table);
        live.add_tool(Tool::new("t", Map::new()), ()).unwrap();
        assert!(live.add_tool(Tool::new("t", Map::new()), ()).is_err());
        assert_eq!(live.tools().len(), 1);
        assert!(live.remove_tool("t"));
        assert!(!live.remove_tool("t"));
        live.add_resource(Resource::new("a://b", "b"), ()).unwrap();
        assert!(live.remove_resource("a://b"));
        assert!(live.table().resources.is_empty(), "the reader went with it");
        assert_eq!(
            live.notify_list_changed(ListKind::Tools),
            Err(NotDeclared { list: "tools" })
        );
    }
}
