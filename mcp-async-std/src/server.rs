//! The server: register tools, resources and prompts as async functions, then serve over
//! stdio or any byte stream
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-core`; this module only runs the handlers.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use futures_lite::{AsyncRead, AsyncWrite};
use mcp_core::http::HttpConfig;
use mcp_core::jsonrpc::ErrorObject;
use mcp_core::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptResult, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, Tool,
};
use mcp_core::schema::{
    InputRequests, InputResponses, LoggingLevel, LoggingMessageNotificationParams,
};
use mcp_core::server::LogFilter;
use mcp_core::server::{Catalog, CatalogError, Route};
use mcp_core::uri_template::Variables;
use mcp_core::{
    InboundId, InboundRequest, Progress, ServerConfig, Session, TaskError, TaskId, TaskOptions,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smol::Task;

use crate::driver::{self, AskFailure, Dispatch, HandlerMsg, Handlers, oneshot};
use crate::http_server::HttpServerHandle;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type ToolFn = Arc<
    dyn Fn(Context, Map<String, Value>) -> BoxFuture<Result<CallToolResult, ErrorObject>>
        + Send
        + Sync,
>;
type ResourceFn = Arc<
    dyn Fn(Context, String, Variables) -> BoxFuture<Result<ReadResourceResult, ErrorObject>>
        + Send
        + Sync,
>;
type CompleteFn = Arc<
    dyn Fn(Context, CompleteParams) -> BoxFuture<Result<CompleteResult, ErrorObject>> + Send + Sync,
>;
type PromptFn = Arc<
    dyn Fn(Context, BTreeMap<String, String>) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;

/// What a handler can do besides returning its result
#[derive(Clone, Debug)]
pub struct Context {
    id: InboundId,
    wants_progress: bool,
    /// A modern request's own log level (from its `_meta`); legacy uses the connection's
    log_filter: Option<LogFilter>,
    task_offered: bool,
    messages: Handlers,
}

impl Context {
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
        let (reply, rx) = oneshot::channel();
        let msg = HandlerMsg::Ask {
            id: self.id,
            requests,
            reply,
        };
        self.messages.send(msg).map_err(|_| AskFailure::Closed)?;
        rx.recv().await.map_err(|_| AskFailure::Closed)?
    }

    /// Logs a message to the client (`notifications/message`) if its level passes the
    /// client's filter: the connection's `logging/setLevel` (legacy, `info` until set) or the
    /// request's `_meta` log level (2026, nothing unless it asked)
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        let params = LoggingMessageNotificationParams::new(level, data);
        let _ = self.messages.send(HandlerMsg::Log {
            id: self.id,
            filter: self.log_filter,
            params,
        });
    }

    /// Whether the client allows this request to run as a task (2025-11-25 `params.task`, or
    /// the 2026 tasks extension in this request's capabilities)
    pub fn task_offered(&self) -> bool {
        self.task_offered
    }

    /// Answers the request with a task handle now and keeps working: the handler's result
    /// (or error) then completes (or fails) the task; a client's `tasks/cancel` aborts the
    /// handler
    ///
    /// # Errors
    /// [`TaskError::NotOffered`] (the handler can go on and answer directly, or fail with
    /// [`TaskError::to_error`] if it needs a task), [`TaskError::TableFull`].
    pub async fn run_as_task(&self, options: TaskOptions) -> Result<TaskId, TaskError> {
        let (reply, rx) = oneshot::channel();
        self.messages
            .send(HandlerMsg::StartTask {
                id: self.id,
                options,
                reply,
            })
            .map_err(|_| TaskError::NotInFlight)?;
        rx.recv().await.map_err(|_| TaskError::NotInFlight)?
    }

    /// Reports progress, if the client asked for it (a no-op otherwise)
    pub fn progress(&self, progress: Progress) {
        if self.wants_progress {
            let _ = self.messages.send(HandlerMsg::Progress {
                id: self.id,
                progress,
            });
        }
    }
}

/// Builds a [`Server`]
pub struct ServerBuilder {
    config: ServerConfig,
    catalog: Catalog,
    tools: BTreeMap<String, ToolFn>,
    resources: Vec<(String, ResourceFn)>,
    prompts: BTreeMap<String, PromptFn>,
    completion: Option<CompleteFn>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Declares the `logging` capability, so handlers' [`Context::log`] messages reach
    /// legacy clients (2026 clients opt in per request)
    pub fn logging(mut self) -> Self {
        declare(&mut self.config.capabilities, "logging");
        self
    }

    /// Declares `resources.subscribe`: the session then answers `resources/subscribe` and
    /// `resources/unsubscribe` and keeps each connection's subscriptions (publish changes
    /// with the session's `notify_resource_updated`)
    pub fn resource_subscriptions(mut self) -> Self {
        declare(&mut self.config.capabilities, "resources");
        self.config.capabilities["resources"]["subscribe"] = Value::Bool(true);
        self
    }

    /// Sets the `completion/complete` handler and declares `completions`
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Context, CompleteParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CompleteResult, ErrorObject>> + Send + 'static,
    {
        self.completion = Some(Arc::new(move |cx, params| Box::pin(handler(cx, params))));
        declare(&mut self.config.capabilities, "completions");
        self
    }

    /// Adds a tool and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for an invalid name, a duplicate, or an invalid `inputSchema`.
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context, Map<String, Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        let name = tool.name.clone();
        self.catalog.add_tool(tool)?;
        self.tools
            .insert(name, Arc::new(move |cx, args| Box::pin(handler(cx, args))));
        declare(&mut self.config.capabilities, "tools");
        Ok(self)
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
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ErrorObject>> + Send + 'static,
    {
        let schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or_default();
        let Value::Object(mut schema) = schema else {
            return Err(CatalogError::InputSchemaNotObject {
                tool: name.to_owned(),
            });
        };
        schema
            .entry("type")
            .or_insert_with(|| Value::from("object"));
        let handler = Arc::new(handler);
        let tool = Tool::new(name, schema).with_description(description);
        self.tool(tool, move |cx, args| {
            let handler = Arc::clone(&handler);
            async move {
                let typed: A = serde_json::from_value(Value::Object(args))
                    .map_err(|e| ErrorObject::invalid_params(format!("invalid arguments: {e}")))?;
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
        F: Fn(Context, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        let uri = resource.uri.clone();
        self.catalog.add_resource(resource)?;
        self.resources.push((
            uri,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        ));
        declare(&mut self.config.capabilities, "resources");
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
        F: Fn(Context, String, Variables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        let key = template.uri_template.clone();
        self.catalog.add_template(template)?;
        self.resources.push((
            key,
            Arc::new(move |cx, uri, vars| Box::pin(handler(cx, uri, vars))),
        ));
        declare(&mut self.config.capabilities, "resources");
        Ok(self)
    }

    /// Adds a prompt and its handler
    ///
    /// # Errors
    /// [`CatalogError`] for a duplicate name.
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Result<Self, CatalogError>
    where
        F: Fn(Context, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        let name = prompt.name.clone();
        self.catalog.add_prompt(prompt)?;
        self.prompts
            .insert(name, Arc::new(move |cx, args| Box::pin(handler(cx, args))));
        declare(&mut self.config.capabilities, "prompts");
        Ok(self)
    }

    /// The server, ready to serve connections
    pub fn build(self) -> Server {
        Server {
            config: Arc::new(self.config),
            dispatch: Arc::new(Dispatcher {
                catalog: self.catalog,
                tools: self.tools,
                resources: self.resources,
                prompts: self.prompts,
                completion: self.completion,
            }),
        }
    }
}

/// A built server; serve as many connections as you like
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
            config,
            catalog: Catalog::default(),
            tools: BTreeMap::new(),
            resources: Vec::new(),
            prompts: BTreeMap::new(),
            completion: None,
        }
    }

    /// Serves one connection until the client closes it
    pub async fn serve<R, W>(&self, reader: R, writer: W)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let session = Session::server(Arc::clone(&self.config), driver::now());
        let (_keep, commands) = async_channel::bounded(1);
        let dispatch: Arc<dyn Dispatch> = self.dispatch.clone();
        driver::run(
            session,
            reader,
            writer,
            commands,
            Some(dispatch),
            driver::ClientOptions::default(),
            None,
        )
        .await;
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
    pub async fn serve_http(&self, addr: SocketAddr) -> io::Result<HttpServerHandle> {
        self.serve_http_with(addr, HttpConfig::default()).await
    }

    /// [`serve_http`](Self::serve_http) with the HTTP rules' limits and host policy
    ///
    /// # Errors
    /// Binding the socket failed.
    pub async fn serve_http_with(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
    ) -> io::Result<HttpServerHandle> {
        let dispatch: Arc<dyn Dispatch> = self.dispatch.clone();
        let tools = self.dispatch.catalog.tools().cloned().collect();
        crate::http_server::serve(addr, config, Arc::clone(&self.config), dispatch, tools).await
    }

    /// Serves one connection over this process's stdin and stdout
    pub async fn serve_stdio(&self) {
        let stdin = blocking::Unblock::new(io::stdin());
        let stdout = blocking::Unblock::new(io::stdout());
        self.serve(stdin, stdout).await;
    }
}

struct Dispatcher {
    catalog: Catalog,
    tools: BTreeMap<String, ToolFn>,
    resources: Vec<(String, ResourceFn)>,
    prompts: BTreeMap<String, PromptFn>,
    completion: Option<CompleteFn>,
}

/// Declares a capability as `{}` unless the configuration already declares it (so flags such
/// as `listChanged` or `subscribe` set by the user survive)
fn declare(capabilities: &mut Value, name: &str) {
    if let Value::Object(caps) = capabilities {
        caps.entry(name)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn to_raw<T: Serialize>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value).map_err(ErrorObject::internal_error)
}

impl Dispatcher {
    /// Answers a request routed to a handler this server does not hold (the catalog and the
    /// handlers are built together, so this does not happen)
    fn unregistered<T>(session: &mut Session, request: InboundRequest) -> Option<T> {
        let error = ErrorObject::internal_error(format!("no handler for {}", request.method));
        session.respond_error(request.responder, &error);
        None
    }

    /// Runs a handler in its own task (dropping the task cancels it); its result goes back
    /// to the actor
    fn spawn<T>(
        request: InboundRequest,
        messages: &Handlers,
        work: impl FnOnce(Context) -> BoxFuture<Result<T, ErrorObject>>,
    ) -> Task<()>
    where
        T: Serialize + mcp_core::schema::FitVersion + Send + 'static,
    {
        let modern = request.version.era() == mcp_core::Era::Modern;
        let log_filter = modern.then(|| {
            LogFilter::from_params(request.params.as_deref()).unwrap_or_else(|_| LogFilter::off())
        });
        let cx = Context {
            id: request.responder.id(),
            wants_progress: request.wants_progress,
            log_filter,
            task_offered: request.task_offered,
            messages: messages.clone(),
        };
        let version = request.version;
        let responder = request.responder;
        let messages = messages.clone();
        let future = work(cx);
        smol::spawn(async move {
            let result = future.await.and_then(|mut r| {
                r.fit_to(version);
                to_raw(&r)
            });
            let _ = messages.send(HandlerMsg::Done { responder, result });
        })
    }
}

impl Dispatch for Dispatcher {
    fn dispatch(
        &self,
        session: &mut Session,
        request: InboundRequest,
        messages: &Handlers,
    ) -> Option<Task<()>> {
        // The catalog decides; this only runs the handler the route names.
        match self.catalog.route(&request, self.completion.is_some()) {
            Route::Tool { name, arguments } => {
                let Some(handler) = self.tools.get(&name).cloned() else {
                    return Self::unregistered(session, request);
                };
                Some(Self::spawn(request, messages, move |cx| {
                    handler(cx, arguments)
                }))
            }
            Route::Resource {
                key,
                uri,
                variables,
            } => {
                let found = self.resources.iter().find(|(k, _)| *k == key);
                let Some(handler) = found.map(|(_, h)| Arc::clone(h)) else {
                    return Self::unregistered(session, request);
                };
                Some(Self::spawn(request, messages, move |cx| {
                    handler(cx, uri, variables)
                }))
            }
            Route::Prompt { name, arguments } => {
                let Some(handler) = self.prompts.get(&name).cloned() else {
                    return Self::unregistered(session, request);
                };
                Some(Self::spawn(request, messages, move |cx| {
                    handler(cx, arguments)
                }))
            }
            Route::Complete(params) => {
                let Some(handler) = self.completion.clone() else {
                    return Self::unregistered(session, request);
                };
                Some(Self::spawn(request, messages, move |cx| {
                    handler(cx, params)
                }))
            }
            Route::Answer(answer) => {
                mcp_core::server::respond(session, request.responder, &answer);
                None
            }
            _ => {
                let error = ErrorObject::method_not_found(&request.method);
                session.respond_error(request.responder, &error);
                None
            }
        }
    }
}
