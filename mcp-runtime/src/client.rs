//! The client handles every binding shares: errors, and the async bindings' typed calls over
//! the actor's command channel, with what a connection does with the server's notifications
//! and input requests ([`ClientOptions`])

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mcp_sansio::schema::method::Method;
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptParams, GetPromptResult, Prompt,
    ReadResourceResult, Resource, Tool,
};
use mcp_sansio::{CallError, PeerInfo, Progress, RequestOptions};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use mcp_sansio::jsonrpc::ErrorObject;
use mcp_sansio::schema::{InputRequests, InputResponses};
use mcp_sansio::{ClientSession, InboundNotification, InputId};

use crate::calls::{self, Exchange, Request};
use crate::chan;
use crate::middleware::{
    ClientCall, ClientChain, ClientMiddleware, ClientNext, FromMiddleware, Wire,
};
use crate::peer::{self, App, Command, HandlerMsg, Handlers, Plumbing, Ready, TaskStatusUpdate};
use crate::runtime::Runtime;

pub use crate::error::{ClientError, ConnectError};

/// The sending half of a connection actor's commands
///
/// Unbounded and lock-free: every command but a cancel waits for its reply, so the queue
/// holds at most one command per waiting caller (plus one cancel per request), and a cancel
/// is never lost to a full queue.
pub type Commands<R> = chan::QueueSender<Command<R>>;

/// The client application's answer to the server's input requests
pub type InputHandler = Arc<
    dyn Fn(
            InputRequests,
        )
            -> std::pin::Pin<Box<dyn Future<Output = Result<InputResponses, ErrorObject>> + Send>>
        + Send
        + Sync,
>;

/// A client's configuration with the input capabilities its input handler answers for
///
/// A client with an input handler (`ClientOptions::input`, every binding's) declares
/// `elicitation`, `sampling` and `roots` itself: each of them that the configuration does
/// not declare already is added as `{}`. A configuration that declares one of them by hand
/// is taken as the exact set (a client that only elicits declares `{"elicitation": {}}`
/// and gets no sampling requests). Without an input handler nothing is added: such a client
/// refuses every input request, so it must not invite them.
pub fn declare_input(
    mut config: mcp_sansio::ClientConfig,
    has_input: bool,
) -> mcp_sansio::ClientConfig {
    const INPUT: [&str; 3] = ["elicitation", "sampling", "roots"];
    if !has_input {
        return config;
    }
    if !config.capabilities.is_object() {
        config.capabilities = Value::Object(Map::new());
    }
    let declared = INPUT
        .iter()
        .any(|name| config.capabilities.get(name).is_some());
    if !declared {
        for name in INPUT {
            crate::server::declare(&mut config.capabilities, name);
        }
    }
    config
}

/// What a binding's client application hands a connection besides the [`Plumbing`]'s
/// channels: its input handler (an async function for the async bindings, a plain one on
/// threads) and its OAuth options
///
/// Every async [`Runtime`] has it; the blocking binding implements it for its threads, so
/// both name one [`ClientOptions`].
pub trait ClientTypes: Plumbing {
    /// Answers the server's input requests (elicitation, sampling, roots)
    type InputHandler: Clone + Send + Sync + 'static;
    /// The OAuth options of an HTTP client (the `auth` feature's)
    type Auth: Clone + Send + Sync + 'static;
    /// A client middleware (`dyn` the binding's middleware trait)
    type Middleware: ?Sized + Send + Sync + 'static;
}

/// An async runtime's: an [`InputHandler`] returning a future, the async OAuth options
impl<R: Runtime> ClientTypes for R {
    type InputHandler = InputHandler;
    #[cfg(feature = "auth")]
    type Auth = crate::auth::asynchronous::OAuthOptions;
    #[cfg(not(feature = "auth"))]
    type Auth = ();
    type Middleware = dyn ClientMiddleware;
}

/// What a client connection does with what the server sends besides responses
///
/// Every binding's `ClientOptions` (this type for its [`ClientTypes`]); the channels are the
/// binding's ([`Plumbing::Stream`]: an async runtime's unbounded ones, `std`'s on threads).
#[non_exhaustive]
pub struct ClientOptions<R: ClientTypes> {
    /// Answers the server's input requests (elicitation, sampling, roots) in both eras;
    /// without it they are refused
    pub input: Option<R::InputHandler>,
    /// Receives the server's notifications (log messages, list changes, resource updates,
    /// subscription traffic); without it they are dropped
    pub notifications: Option<R::Stream<InboundNotification>>,
    /// Child processes only: receives the server's stderr line by line instead of passing
    /// it through
    pub stderr: Option<R::Stream<String>>,
    /// HTTP only: authorize with OAuth when the server challenges (401, or 403
    /// `insufficient_scope`)
    #[cfg(feature = "auth")]
    pub auth: Option<R::Auth>,
    /// HTTP only: headers, root certificates, proxy and timeouts
    #[cfg(feature = "http")]
    pub http: crate::http_options::HttpOptions,
    /// Around every request the client sends, in order (the first is the outermost; see
    /// [`middleware`](crate::middleware))
    pub middleware: Vec<Arc<R::Middleware>>,
}

impl<R: ClientTypes> Default for ClientOptions<R> {
    fn default() -> Self {
        Self {
            input: None,
            notifications: None,
            stderr: None,
            #[cfg(feature = "auth")]
            auth: None,
            #[cfg(feature = "http")]
            http: crate::http_options::HttpOptions::default(),
            middleware: Vec::new(),
        }
    }
}

impl<R: ClientTypes> Clone for ClientOptions<R> {
    fn clone(&self) -> Self {
        Self {
            input: self.input.clone(),
            notifications: self.notifications.clone(),
            stderr: self.stderr.clone(),
            #[cfg(feature = "auth")]
            auth: self.auth.clone(),
            #[cfg(feature = "http")]
            http: self.http.clone(),
            middleware: self.middleware.clone(),
        }
    }
}

impl<R: ClientTypes> std::fmt::Debug for ClientOptions<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("ClientOptions");
        f.field("input", &self.input.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("stderr", &self.stderr.is_some());
        #[cfg(feature = "auth")]
        f.field("auth", &self.auth.is_some());
        #[cfg(feature = "http")]
        f.field("http", &self.http);
        f.field("middleware", &self.middleware.len());
        f.finish()
    }
}

impl<R: ClientTypes> ClientOptions<R> {
    /// With an input handler, which also declares the input capabilities (`elicitation`,
    /// `sampling`, `roots`) unless the client's configuration declares one of them itself
    pub fn input(mut self, handler: R::InputHandler) -> Self {
        self.input = Some(handler);
        self
    }

    /// Authorizes HTTP connections with OAuth
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: R::Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// HTTP only: how to reach the server (headers, root certificates, proxy, timeouts);
    /// replaces the HTTP options set so far, so call [`header`](Self::header) after it
    #[cfg(feature = "http")]
    pub fn http(mut self, http: crate::http_options::HttpOptions) -> Self {
        self.http = http;
        self
    }

    /// HTTP only: adds a header to every request (an `Authorization: Bearer` or
    /// `X-API-Key` key the server issued)
    #[cfg(feature = "http")]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http = std::mem::take(&mut self.http).header(name, value);
        self
    }

    /// Captures a child server's stderr, line by line
    pub fn stderr(mut self, sender: R::Stream<String>) -> Self {
        self.stderr = Some(sender);
        self
    }

    /// With a channel for the server's notifications
    pub fn notifications(mut self, sender: R::Stream<InboundNotification>) -> Self {
        self.notifications = Some(sender);
        self
    }

    /// Adds `middleware` around every request the client sends (each typed call and
    /// `request_raw`), after those added so far: the first added is the outermost. The
    /// async bindings take an `async` closure
    /// `|call: ClientCall, next: ClientNext| async move { next.run(call).await }`, the
    /// blocking one `|call: ClientCall, next: &ClientNext| next.run(call)`; see
    /// [`middleware`](crate::middleware)
    #[must_use]
    pub fn middleware<M>(mut self, middleware: M) -> Self
    where
        R::Middleware: FromMiddleware<M>,
    {
        self.middleware
            .push(<R::Middleware as FromMiddleware<M>>::from_middleware(
                middleware,
            ));
        self
    }

    /// The chain of [`middleware`](Self::middleware), `None` when there is none
    #[doc(hidden)]
    pub fn chain(&self) -> Option<Arc<[Arc<R::Middleware>]>> {
        (!self.middleware.is_empty()).then(|| self.middleware.iter().cloned().collect())
    }
}

impl<R: ClientTypes> ClientOptions<R> {
    /// What a client connection runs the application with: notifications go to
    /// [`notifications`](Self::notifications), input requests to the
    /// [`input`](Self::input) handler through `start_input` (which starts it on a task or
    /// a thread of the binding's, and sends its answer as [`HandlerMsg::Answered`]), and
    /// are refused without one; no requests are served
    pub fn app_with<F>(&self, start_input: F) -> App<R>
    where
        F: Fn(&R::InputHandler, InputId, InputRequests, &Handlers<R>) -> Result<(), ErrorObject>
            + Send
            + Sync
            + 'static,
    {
        let notifications = self.notifications.clone();
        let input = self.input.clone();
        App {
            dispatch: None,
            notification: Box::new(move |notification| {
                if let Some(tx) = &notifications {
                    R::report(tx, notification);
                }
            }),
            input: Box::new(move |id, requests, handlers| match &input {
                Some(handler) => start_input(handler, id, requests, handlers),
                None => Err(peer::no_input_handler()),
            }),
        }
    }
}

impl<R: Runtime> ClientOptions<R> {
    /// What the connection runs the application with: [`app_with`](Self::app_with), the
    /// input handler on a task of its own
    pub fn app(&self) -> App<R> {
        self.app_with(|handler, id, requests, handlers| {
            let future = handler(requests);
            let messages = handlers.clone();
            R::spawn(async move {
                let result = future.await;
                let _ = messages.send(HandlerMsg::Answered { id, result });
            });
            Ok(())
        })
    }
}

/// The typed calls of a connected async client; the bindings' `Client` dereferences to it
pub struct Client<R: Runtime> {
    commands: Commands<R>,
    peer: Arc<PeerInfo>,
    tokens: Arc<AtomicU64>,
    /// HTTP only: headers on every request of this handle ([`with_headers`](Self::with_headers))
    headers: Arc<[(String, String)]>,
    /// The child process a spawned client talks to, killed when the last handle goes
    pub(crate) child: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// Around every request of this handle ([`with_middleware`](Self::with_middleware))
    middleware: Option<ClientChain>,
}

impl<R: Runtime> Clone for Client<R> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            peer: Arc::clone(&self.peer),
            tokens: Arc::clone(&self.tokens),
            headers: Arc::clone(&self.headers),
            child: self.child.clone(),
            middleware: self.middleware.clone(),
        }
    }
}

impl<R: Runtime> std::fmt::Debug for Client<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// Cancels one request from anywhere (dropping the request's future does the same)
///
/// The async bindings' `CancelHandle`, from their `Client::start`.
pub struct CancelHandle<R: Runtime> {
    commands: Commands<R>,
    token: u64,
    /// Set by [`cancel`](Self::cancel), read by the request's future before and after it
    /// sends the request: a cancel that comes first is not lost
    cancelled: Arc<AtomicBool>,
}

impl<R: Runtime> Clone for CancelHandle<R> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            token: self.token,
            cancelled: Arc::clone(&self.cancelled),
        }
    }
}

impl<R: Runtime> std::fmt::Debug for CancelHandle<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> CancelHandle<R> {
    /// Cancels the request (`notifications/cancelled`, or `tasks/cancel` for a task-backed
    /// call); its future then ends with [`CallError::Cancelled`] or the connection's close.
    /// A no-op once the request has ended. Before the request was sent (it is sent when its
    /// future first runs), the future ends with [`CallError::Cancelled`] without sending it.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let _ = self
            .commands
            .unbounded_send(Command::Cancel { token: self.token });
    }
}

/// What a started request reports while it runs
///
/// The async bindings' `CallWatch`, for their `Client::start`.
#[non_exhaustive]
pub struct CallWatch<R: Runtime> {
    /// Progress reports (ask for them with [`RequestOptions::with_progress`])
    pub progress: Option<R::Sender<Progress>>,
    /// Status changes of the task behind a task-backed call
    pub task_status: Option<R::Sender<TaskStatusUpdate>>,
}

impl<R: Runtime> Default for CallWatch<R> {
    fn default() -> Self {
        Self {
            progress: None,
            task_status: None,
        }
    }
}

impl<R: Runtime> std::fmt::Debug for CallWatch<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallWatch")
            .field("progress", &self.progress.is_some())
            .field("task_status", &self.task_status.is_some())
            .finish()
    }
}

/// Cancels a request if its future is dropped before it finishes
struct CancelOnDrop<'a, R: Runtime> {
    commands: &'a Commands<R>,
    token: u64,
    armed: bool,
}

impl<R: Runtime> Drop for CancelOnDrop<'_, R> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self
                .commands
                .unbounded_send(Command::Cancel { token: self.token });
        }
    }
}

impl<R: Runtime> Client<R> {
    /// Starts a connection: `actor` runs it on a task of its own with the client session
    /// (at the runtime's now), the commands' receiving end and who waits for the handshake;
    /// returns the handle once the actor reports the handshake or discovery done
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when it failed or the connection closed first.
    #[doc(hidden)]
    pub async fn start_actor<F>(
        config: mcp_sansio::ClientConfig,
        actor: impl FnOnce(ClientSession, chan::QueueReceiver<Command<R>>, Ready<R>) -> F,
    ) -> Result<Self, ConnectError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let session = ClientSession::new(Arc::new(config), R::now());
        let (commands, rx) = chan::queue();
        let (ready, ready_rx) = chan::oneshot();
        R::spawn(actor(session, rx, ready));
        let peer = match chan::reply(ready_rx).await {
            Some(Ok(peer)) => peer,
            Some(Err(why)) => return Err(ConnectError::from_close(why)),
            None => return Err(ConnectError::Transport("the connection closed".into())),
        };
        Ok(Self {
            commands,
            peer: Arc::new(peer),
            tokens: Arc::new(AtomicU64::new(1)),
            headers: Arc::new([]),
            child: None,
            middleware: None,
        })
    }

    /// What the server declared about itself
    pub fn peer(&self) -> &PeerInfo {
        &self.peer
    }

    /// This handle with `options`' client middleware (a connection just made)
    pub(crate) fn with_options(mut self, options: &ClientOptions<R>) -> Self {
        self.middleware = options.chain();
        self
    }

    /// HTTP only: a handle to the same connection whose every request also carries
    /// `headers` (a trace id, a per-user key), on the POSTs of the request and its retries;
    /// the connection's own headers ([`ClientOptions::header`]) still go on every request
    ///
    /// # Errors
    /// [`HeaderError`](mcp_sansio::http::HeaderError) for a header the transport owns or
    /// an invalid one. Over a byte stream (stdio) the requests fail with
    /// [`SendError::NotAllowed`](mcp_sansio::SendError::NotAllowed).
    #[cfg(feature = "http")]
    pub fn with_headers<I, N, V>(&self, headers: I) -> Result<Self, mcp_sansio::http::HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        let mut handle = self.clone();
        handle.headers = crate::http_options::with_more_headers(&self.headers, headers)?;
        Ok(handle)
    }

    /// A handle to the same connection whose every request (each typed call, through
    /// [`request_raw`](Self::request_raw)) goes through `middleware`, after the middleware
    /// this handle has already (the first added is the outermost); an `async` closure
    /// `|call: ClientCall, next: ClientNext| async move { next.run(call).await }` is one.
    /// See [`middleware`](crate::middleware).
    ///
    /// [`start`](Self::start) sends without the chain.
    #[must_use]
    pub fn with_middleware(&self, middleware: impl ClientMiddleware) -> Self {
        let middleware: Arc<dyn ClientMiddleware> = Arc::new(middleware);
        let mut handle = self.clone();
        handle.middleware = Some(match &self.middleware {
            Some(chain) => crate::middleware::push(chain, middleware),
            None => Arc::from([middleware]),
        });
        handle
    }

    /// Sends a raw request and waits for its outcome (through the handle's middleware,
    /// if it has any)
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        progress: Option<R::Sender<Progress>>,
    ) -> Result<Box<RawValue>, ClientError> {
        if let Some(chain) = &self.middleware {
            // Boxed: a handle without middleware keeps its call futures as small as before.
            let chained = self.request_chained(chain, method, params, options, progress);
            return Box::pin(chained).await;
        }
        let watch = CallWatch {
            progress,
            task_status: None,
        };
        // Nobody holds a cancel handle of this call: it needs no cancel flag.
        let token = self.tokens.fetch_add(1, Ordering::Relaxed);
        self.send(method, params, options, watch, token, None).await
    }

    /// [`request_raw`](Self::request_raw) through `chain`: its last step sends (the first
    /// send reports progress)
    async fn request_chained(
        &self,
        chain: &ClientChain,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        progress: Option<R::Sender<Progress>>,
    ) -> Result<Box<RawValue>, ClientError> {
        let client = self.clone();
        let progress = std::sync::Mutex::new(progress);
        let wire: Wire = Arc::new(move |call: ClientCall| {
            let progress = progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            let watch = CallWatch {
                progress,
                task_status: None,
            };
            Box::pin(
                client
                    .start(&call.method, call.params, call.options, watch)
                    .1,
            )
        });
        let mut call = ClientCall::new(method, params);
        call.options = options;
        ClientNext::new(Arc::clone(chain), wire).run(call).await
    }

    /// Starts a raw request and returns a handle that cancels it from anywhere, with the
    /// future of its outcome; `watch` receives its progress and the status of the task
    /// behind it, if the server runs it as one
    pub fn start(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        watch: CallWatch<R>,
    ) -> (
        CancelHandle<R>,
        impl Future<Output = Result<Box<RawValue>, ClientError>> + Send + 'static,
    ) {
        let token = self.tokens.fetch_add(1, Ordering::Relaxed);
        let cancelled = Arc::new(AtomicBool::new(false));
        let handle = CancelHandle {
            commands: self.commands.clone(),
            token,
            cancelled: Arc::clone(&cancelled),
        };
        let future = self.send(method, params, options, watch, token, Some(cancelled));
        (handle, future)
    }

    /// The future of one raw request under `token`; `cancelled` is the flag of its
    /// [`CancelHandle`], if it has one (a call nobody can cancel but by dropping its future
    /// needs none)
    fn send(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        watch: CallWatch<R>,
        token: u64,
        cancelled: Option<Arc<AtomicBool>>,
    ) -> impl Future<Output = Result<Box<RawValue>, ClientError>> + Send + 'static {
        let is_cancelled = move |flag: &Option<Arc<AtomicBool>>| {
            flag.as_ref().is_some_and(|c| c.load(Ordering::SeqCst))
        };
        let commands = self.commands.clone();
        let method = method.to_owned();
        let headers = self.headers.to_vec();
        // Taken here, on the caller's task: the actor runs under its session's span.
        let parent = crate::otel::Parent::current();
        async move {
            if is_cancelled(&cancelled) {
                return Err(ClientError::Call(CallError::Cancelled));
            }
            let (reply, rx) = chan::oneshot();
            let command = Command::Request {
                method,
                params,
                options,
                token,
                reply,
                progress: watch.progress,
                task_status: watch.task_status,
                headers,
                parent,
            };
            if commands.unbounded_send(command).is_err() {
                return Err(ClientError::Closed);
            }
            let mut guard = CancelOnDrop::<R> {
                commands: &commands,
                token,
                armed: true,
            };
            // A cancel between the check above and the send went ahead of the request and
            // found nothing to cancel: send it again, now behind the request.
            if is_cancelled(&cancelled) {
                let _ = commands.unbounded_send(Command::Cancel { token });
            }
            let outcome = chan::reply(rx).await.ok_or(ClientError::Closed)?;
            guard.armed = false;
            Ok(outcome??)
        }
    }

    /// Runs a typed call: sends each of its requests and feeds the results back; the
    /// first request reports progress to `progress`
    async fn exchange<E: Exchange + Send>(
        &self,
        call: E,
        mut progress: Option<R::Sender<Progress>>,
    ) -> Result<E::Output, ClientError> {
        calls::drive(call, |r: Request| {
            self.request_raw(r.method, Some(r.params), r.options, progress.take())
        })
        .await
    }

    /// Sends a typed request and decodes its result
    ///
    /// # Errors
    /// [`ClientError`]; a result of the wrong shape is [`CallError::InvalidResult`].
    pub async fn request<M: Method>(
        &self,
        params: M::Params,
        options: RequestOptions,
    ) -> Result<M::Result, ClientError> {
        self.exchange(calls::request::<M>(&params, options), None)
            .await
    }

    /// Every tool, following pagination
    ///
    /// On 2026-07-28 connections, tools whose `x-mcp-header` annotations are invalid are left
    /// out, as the spec requires (they are neither surfaced nor called).
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.exchange(calls::list_tools(&self.peer), None).await
    }

    /// Every resource, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.exchange(calls::list_resources(), None).await
    }

    /// Every prompt, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.exchange(calls::list_prompts(), None).await
    }

    /// Calls a tool
    ///
    /// # Errors
    /// [`ClientError`]. A tool that fails returns `Ok` with `isError: true`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, ClientError> {
        let call = calls::call_tool(name, arguments, RequestOptions::default());
        self.exchange(call, None).await
    }

    /// Calls a tool with progress reports sent to `progress`, and request options
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: RequestOptions,
        progress: R::Sender<Progress>,
    ) -> Result<CallToolResult, ClientError> {
        let call = calls::call_tool(name, arguments, options.with_progress());
        self.exchange(call, Some(progress)).await
    }

    /// Reads a resource
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.exchange(calls::read_resource(uri), None).await
    }

    /// Gets a prompt
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn get_prompt(
        &self,
        params: GetPromptParams,
    ) -> Result<GetPromptResult, ClientError> {
        self.exchange(calls::get_prompt(&params), None).await
    }

    /// Asks for completions
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        self.exchange(calls::complete(&params), None).await
    }

    /// Sends a notification
    ///
    /// # Errors
    /// [`ClientError::Send`] for local misuse (for example a core-owned notification).
    pub async fn notify(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), ClientError> {
        let (reply, rx) = chan::oneshot();
        let command = Command::Notify {
            method: method.to_owned(),
            params,
            reply,
        };
        if self.commands.unbounded_send(command).is_err() {
            return Err(ClientError::Closed);
        }
        Ok(chan::reply(rx).await.ok_or(ClientError::Closed)??)
    }

    /// Closes the connection: every clone of this handle then fails with
    /// [`ClientError::Closed`]; a spawned server's process is killed when the last handle goes
    pub async fn close(&self) {
        let _ = self.commands.unbounded_send(Command::Close);
    }
}

#[cfg(test)]
mod tests {
    use mcp_sansio::{ClientConfig, Implementation};
    use serde_json::json;

    use super::declare_input;

    #[test]
    fn an_input_handler_declares_the_input_capabilities_unless_some_are_declared() {
        let config = || ClientConfig::new(Implementation::new("c", "1"));
        let declared = declare_input(config(), true).capabilities;
        assert_eq!(
            declared,
            json!({"elicitation": {}, "sampling": {}, "roots": {}})
        );
        assert_eq!(declare_input(config(), false).capabilities, json!({}));
        let mut only_elicits = config();
        only_elicits.capabilities = json!({"elicitation": {"form": {}}, "experimental": {}});
        assert_eq!(
            declare_input(only_elicits, true).capabilities,
            json!({"elicitation": {"form": {}}, "experimental": {}}),
            "a declaration by hand is the exact set"
        );
    }
}
