//! The server: register tools, resources and prompts as async functions, then serve over
//! stdio or any byte stream
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-sansio`; the builder, the handlers' [`Context`] and the dispatcher are the async
//! bindings' shared ones (`mcp-sansio-runtime`); this module only serves connections.

use std::io;
#[cfg(feature = "http")]
use std::net::SocketAddr;

use futures_lite::{AsyncRead, AsyncWrite};
use std::collections::BTreeMap;
use std::future::Future;

#[cfg(feature = "http")]
use mcp_sansio::http::HttpConfig;
use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{
    CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use mcp_sansio::server::CatalogError;
use mcp_sansio::server::uri_template::Variables;
use mcp_sansio::{ListKind, ServerConfig};
use mcp_sansio_runtime::server::NotDeclared;
use mcp_sansio_runtime::server::ServerCore;
use serde_json::{Map, Value};

#[cfg(feature = "http")]
use crate::http_server::HttpServerHandle;
use crate::runtime::AsyncStd;

/// What a handler can do besides returning its result: report progress, log, ask the client
/// for input, run as a task
///
/// Every handler run gets a `Context` for its request, as its first argument. It is cheap to
/// clone and `Send`, so a task the handler spawns can report for it too. Its methods (their
/// full docs follow below, under *Implementations*; `R` there is this crate's runtime):
///
/// | method | what it does |
/// |---|---|
/// | [`progress`](#method.progress)`(Progress)` | reports progress, if the client asked for it (a no-op otherwise) |
/// | [`log`](#method.log)`(LoggingLevel, data)` | sends `notifications/message` if the level passes the client's filter: the connection's `logging/setLevel` on legacy sessions (`info` until set), the request's own `_meta` log level on modern ones (nothing unless it asked) |
/// | [`ask`](#method.ask)`(InputRequests).await` | asks the client for input (elicitation, sampling, roots) in either era; on a modern request the handler runs again with the answers, so ask before work that must not run twice |
/// | [`task_offered`](#method.task_offered)`()` | whether the client allows this request to run as a task |
/// | [`run_as_task`](#method.run_as_task)`(TaskOptions).await` | answers with a task now and keeps working; the result completes the task, `tasks/cancel` drops the handler |
///
/// A cancelled request (the client's `notifications/cancelled` or `tasks/cancel`, or its
/// connection closing) drops the handler's task: its future stops at its next `.await`.
///
/// # Example
///
/// A tool that runs as a task when the client allows it, reporting progress and logging as it
/// goes:
///
/// ```
/// use std::time::Duration;
///
/// use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, LoggingLevel, Tool};
/// use mcp_sansio_async_std::mcp_sansio::{
///     ErrorObject, Implementation, Progress, ServerConfig, TASKS_EXTENSION, TaskOptions,
/// };
/// use mcp_sansio_async_std::{Context, Server};
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
///         smol::Timer::after(Duration::from_millis(10)).await;
///         cx.progress(Progress::new(step as f64).total(steps as f64));
///     }
///     cx.log(LoggingLevel::Info, format!("crunched in {steps} steps"));
///     Ok(CallToolResult::text("done"))
/// }
///
/// # fn main() -> Result<(), mcp_sansio_async_std::mcp_sansio::server::CatalogError> {
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
/// The crate's docs have a [complete example](crate#handlers-and-their-context) where a client
/// answers the handler's question and watches its progress.
pub type Context = mcp_sansio_runtime::server::Context<AsyncStd>;

/// Builds a [`Server`]: its tools, resources, resource templates, prompts and completion
/// handler, each with an async handler, and the capabilities they need
///
/// Start with [`Server::builder`]. Each registration checks its entry (a valid and unique name
/// or URI, an `inputSchema` that compiles, a template that parses) and returns the builder, or
/// a [`CatalogError`]; registering declares the capability
/// (`tools`, `resources`, `prompts`, `completions`), keeping what the
/// [`ServerConfig`] already declares (such as `listChanged`). Then
/// [`build`](#method.build) makes the server. Its methods (their full docs follow below, under
/// *Implementations*; `R` there is this crate's runtime, `S` is [`Server`] and `Context<R>`
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
/// | [`build`](#method.build)`()` | nothing more: returns the [`Server`] | |
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
/// use mcp_sansio_async_std::mcp_sansio::schema::{
///     CallToolResult, CompleteResult, GetPromptResult, Prompt, PromptArgument, PromptMessage,
///     ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Tool,
/// };
/// use mcp_sansio_async_std::mcp_sansio::server::uri_template::Variables;
/// use mcp_sansio_async_std::mcp_sansio::{ErrorObject, Implementation, ServerConfig};
/// use mcp_sansio_async_std::{Context, Server};
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
/// # fn main() -> Result<(), mcp_sansio_async_std::mcp_sansio::server::CatalogError> {
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
/// The crate's docs show the [handlers' `Context`](crate#handlers-and-their-context),
/// [typed tools](crate#typed-tools) and how to serve the built server.
pub type ServerBuilder = mcp_sansio_runtime::server::ServerBuilder<AsyncStd, Server>;

/// A built server; serve as many connections as you like
#[derive(Clone)]
pub struct Server {
    core: ServerCore<AsyncStd>,
}

impl From<ServerCore<AsyncStd>> for Server {
    fn from(core: ServerCore<AsyncStd>) -> Self {
        Self { core }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.core.config)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server
    pub fn builder(config: ServerConfig) -> ServerBuilder {
        ServerBuilder::new(config)
    }

    /// What the kernel serves connections of this server with
    pub(crate) fn core(&self) -> &ServerCore<AsyncStd> {
        &self.core
    }

    /// Serves one connection until the client closes it
    pub async fn serve<R, W>(&self, reader: R, writer: W)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        mcp_sansio_runtime::driver::serve(&self.core, reader, writer).await;
    }

    /// Serves Streamable HTTP at `addr` (both wires: 2025 sessions and 2026 stateless
    /// requests) with the default [`HttpConfig`]: only
    /// `localhost`, `127.0.0.1` and `[::1]` may be named by `Host` and `Origin`
    ///
    /// Returns once the socket is bound; the server runs in the background until
    /// [`HttpServerHandle::shutdown`] (or the handle is dropped).
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "http")]
    pub async fn serve_http(&self, addr: SocketAddr) -> io::Result<HttpServerHandle> {
        self.serve_http_with(addr, HttpConfig::default()).await
    }

    /// [`serve_http`](Self::serve_http) with the HTTP rules' limits and host policy
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "http")]
    pub async fn serve_http_with(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
    ) -> io::Result<HttpServerHandle> {
        crate::http_server::serve(addr, config, &self.core, None, None).await
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
    pub async fn serve_https(
        &self,
        addr: SocketAddr,
        identity: crate::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        self.serve_https_with(addr, HttpConfig::default(), identity)
            .await
    }

    /// [`serve_http_with`](Self::serve_http_with) over TLS (`https://`), presenting
    /// `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "tls")]
    pub async fn serve_https_with(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        identity: crate::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        let tls = Some(crate::http_server::tls(&identity));
        crate::http_server::serve(addr, config, &self.core, None, tls).await
    }

    /// [`serve_http_with`](Self::serve_http_with) as an OAuth-protected resource: the
    /// Protected Resource Metadata is served, and requests without a valid bearer token
    /// (or without the required scopes) are answered 401 or 403 before any MCP processing
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(feature = "auth")]
    pub async fn serve_http_protected(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: crate::auth::Protection,
    ) -> io::Result<HttpServerHandle> {
        crate::http_server::serve(addr, config, &self.core, Some(protection), None).await
    }

    /// [`serve_http_protected`](Self::serve_http_protected) over TLS (`https://`),
    /// presenting `identity` (see [`serve_https`](Self::serve_https))
    ///
    /// # Errors
    /// Binding the socket failed.
    #[cfg(all(feature = "auth", feature = "tls"))]
    pub async fn serve_https_protected(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: crate::auth::Protection,
        identity: crate::TlsIdentity,
    ) -> io::Result<HttpServerHandle> {
        let tls = Some(crate::http_server::tls(&identity));
        crate::http_server::serve(addr, config, &self.core, Some(protection), tls).await
    }

    /// The Streamable HTTP endpoint of this server under `config`, for an HTTP stack of
    /// your own (see [`crate::endpoint`]); its actor runs on a smol task until
    /// [`HttpEndpoint::shutdown`](crate::HttpEndpoint::shutdown), or until every clone and
    /// open response is gone
    ///
    /// Its sessions are its own (another endpoint, or [`serve_http`](Self::serve_http), has
    /// others).
    #[cfg(feature = "http")]
    pub fn http_endpoint(&self, config: HttpConfig) -> crate::HttpEndpoint {
        let (endpoint, run) = crate::HttpEndpoint::new(config, &self.core);
        smol::spawn(run).detach();
        endpoint
    }

    /// Serves one connection over this process's stdin and stdout
    ///
    /// On Unix, when stdin and stdout are pipes (as when an MCP client starts this process),
    /// they are read and written directly by the reactor; otherwise (a terminal, a file)
    /// through a blocking thread.
    pub async fn serve_stdio(&self) {
        #[cfg(unix)]
        {
            use async_io::Async;
            use std::fs::File;
            let input = mcp_sansio_runtime::stdio::stdin_pipe()
                .and_then(|fd| Async::new(File::from(fd)).ok());
            let output = mcp_sansio_runtime::stdio::stdout_pipe()
                .and_then(|fd| Async::new(File::from(fd)).ok());
            match (input, output) {
                (Some(i), Some(o)) => return self.serve(i, o).await,
                (Some(i), None) => {
                    return self.serve(i, blocking::Unblock::new(io::stdout())).await;
                }
                (None, Some(o)) => return self.serve(blocking::Unblock::new(io::stdin()), o).await,
                (None, None) => {}
            }
        }
        let stdin = blocking::Unblock::new(io::stdin());
        let stdout = blocking::Unblock::new(io::stdout());
        self.serve(stdin, stdout).await;
    }
}

/// Changing what the server offers while it serves, and pushing changes to every connected
/// client
///
/// Every connection the server serves ([`serve`](Self::serve), [`serve_stdio`](Self::serve_stdio),
/// and every session of its HTTP servers, both eras) sees a change from its next request on
/// (the next `tools/list` shows an added tool), and is told what changed:
/// `notifications/<list>/list_changed` after an `add_*` or `remove_*` when the server
/// declares `listChanged` for the list (build it with
/// [`ServerBuilder::list_changed`](ServerBuilder#method.list_changed)),
/// `notifications/resources/updated` after [`notify_resource_updated`](Self::notify_resource_updated)
/// to the clients subscribed to the URI (legacy `resources/subscribe`, which needs
/// [`resource_subscriptions`](ServerBuilder#method.resource_subscriptions);
/// 2026 `subscriptions/listen`). Which session gets what is the core's rule. A list a server
/// changes at run time must be declared when it is built (`list_changed` declares tools,
/// resources and prompts), since clients read the capabilities once.
///
/// # Example
///
/// ```
/// use mcp_sansio_async_std::mcp_sansio::schema::{CallToolResult, Tool};
/// use mcp_sansio_async_std::mcp_sansio::{Implementation, ListKind, ServerConfig};
/// use mcp_sansio_async_std::Server;
/// use serde_json::Map;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder(ServerConfig::new(Implementation::new("live", "1.0")))
///     .list_changed()
///     .resource_subscriptions()
///     .build();
/// // Clones share the catalog: hand one to the code that serves, keep one to change it.
/// server.add_tool(Tool::new("late", Map::new()), |_cx, _args| async {
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
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        self.core.add_tool(tool, handler)
    }

    /// Removes a tool; whether it was there (only then are clients told)
    pub fn remove_tool(&self, name: &str) -> bool {
        self.core.live().remove_tool(name)
    }

    /// Adds a resource and its reader while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate URI.
    pub fn add_resource<F, Fut>(&self, resource: Resource, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.core.add_resource(resource, handler)
    }

    /// Removes a resource by its URI; whether it was there
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.core.live().remove_resource(uri)
    }

    /// Adds a resource template and the reader of the URIs it matches while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate or unparsable template.
    pub fn add_resource_template<F, Fut>(
        &self,
        template: ResourceTemplate,
        handler: F,
    ) -> Result<(), CatalogError>
    where
        F: Fn(Context, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.core.add_resource_template(template, handler)
    }

    /// Removes a resource template by its URI template; whether it was there
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.core.live().remove_resource_template(uri_template)
    }

    /// Adds a prompt and its handler while the server serves
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn add_prompt<F, Fut>(&self, prompt: Prompt, handler: F) -> Result<(), CatalogError>
    where
        F: Fn(Context, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        self.core.add_prompt(prompt, handler)
    }

    /// Removes a prompt; whether it was there
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.core.live().remove_prompt(name)
    }

    /// Tells every connected client that a list changed (`add_*` and `remove_*` do it
    /// themselves): legacy sessions, and 2026 listen streams that asked for it
    ///
    /// # Errors
    /// [`NotDeclared`] when the server does not declare `listChanged` for the list.
    pub fn notify_list_changed(&self, kind: ListKind) -> Result<(), NotDeclared> {
        self.core.live().notify_list_changed(kind)
    }

    /// Tells every connected client subscribed to `uri` (or to a parent of it) that the
    /// resource changed: `notifications/resources/updated`
    pub fn notify_resource_updated(&self, uri: &str) {
        self.core.live().notify_resource_updated(uri);
    }
}
