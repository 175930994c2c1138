//! The client: connect over any byte stream or to a child process, then make blocking typed
//! calls

use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, Command as ProcessCommand, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;

#[cfg(doc)]
use mcp_sansio::CallError;
use mcp_sansio::ClientSession;
use mcp_sansio::schema::method::Method;
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptParams, GetPromptResult, Prompt,
    ReadResourceResult, Resource, Tool,
};
use mcp_sansio::{ClientConfig, PeerInfo, Progress, RequestOptions, SendError};
use mcp_sansio_runtime::calls::{self, Exchange, Request};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

#[cfg(feature = "http")]
use crate::client_tls;
use crate::driver::{self, Connection};
#[cfg(feature = "http")]
use crate::http_client;
use crate::middleware::{ClientCall, ClientChain, ClientMiddleware, ClientNext};
use crate::server::Server;
use crate::threads::{ClientOptions, Command, Outcome, Route, TaskStatusUpdate, now};

pub use mcp_sansio_runtime::client::{ClientError, ConnectError};

/// A connected MCP client; cheap to clone, every clone talks to the same connection, and
/// every method blocks the calling thread until its answer
///
/// The connection closes when the last clone is dropped (or [`close`](Self::close)d); a
/// child server is then killed and reaped.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
    /// HTTP only: headers on every request of this handle ([`with_headers`](Self::with_headers))
    headers: Arc<[(String, String)]>,
    /// Around every request of this handle ([`with_middleware`](Self::with_middleware))
    middleware: Option<ClientChain>,
}

/// Shared by the clones of a [`Client`]; its drop closes the connection
#[derive(Debug)]
struct Inner {
    link: Route,
    peer: PeerInfo,
    tokens: AtomicU64,
    _child: Option<ChildGuard>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = self.link.command(Command::Close);
    }
}

/// Cancels one request from any thread (dropping its [`PendingCall`] does the same)
#[derive(Clone, Debug)]
pub struct CancelHandle {
    link: Route,
    token: u64,
}

impl CancelHandle {
    /// Cancels the request (`notifications/cancelled`, or `tasks/cancel` for a task-backed
    /// call); its [`PendingCall::wait`] then ends with [`CallError::Cancelled`] or the
    /// connection's close. A no-op once the request has ended.
    pub fn cancel(&self) {
        let _ = self.link.command(Command::Cancel { token: self.token });
    }
}

/// What a started request reports while it runs
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CallWatch {
    /// Progress reports (ask for them with [`RequestOptions::with_progress`])
    pub progress: Option<mpsc::Sender<Progress>>,
    /// Status changes of the task behind a task-backed call
    pub task_status: Option<mpsc::Sender<TaskStatusUpdate>>,
}

/// A request in flight, from [`Client::start`]; dropping it before [`wait`](Self::wait)
/// returns cancels the request
#[derive(Debug)]
#[must_use = "wait for the outcome; dropping a pending call cancels it"]
pub struct PendingCall {
    outcome: crate::one::OneReceiver<Result<Outcome, SendError>>,
    cancel: CancelHandle,
    done: bool,
}

impl PendingCall {
    /// Blocks until the request's outcome
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn wait(mut self) -> Result<Box<RawValue>, ClientError> {
        let outcome = self.outcome.recv();
        self.done = true;
        Ok(outcome.map_err(|_| ClientError::Closed)???)
    }

    /// A handle that cancels this request from another thread
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        if !self.done {
            self.cancel.cancel();
        }
    }
}

/// Keeps a spawned server alive as long as a client handle exists; kills and reaps it on drop
#[derive(Debug)]
pub(crate) struct ChildGuard(Mutex<Child>, String);

impl ChildGuard {
    /// The program and how it ended, if it exits within `wait`
    fn exited_within(&self, wait: std::time::Duration) -> Option<(String, String)> {
        let deadline = std::time::Instant::now() + wait;
        let mut child = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some((self.1.clone(), status.to_string()));
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let child = self.0.get_mut().unwrap_or_else(PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Client {
    /// Connects over a reader and a writer (a socket and its clone, a pipe pair, a child's
    /// stdout and stdin) and waits for the handshake or discovery; a driver thread owns the
    /// connection and a reader thread reads
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when the server refuses or speaks no common version.
    pub fn connect<R, W>(reader: R, writer: W, config: ClientConfig) -> Result<Self, ConnectError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        Self::connect_with(reader, writer, config, ClientOptions::default())
    }

    /// [`connect`](Self::connect), with an input handler and a notification channel
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub fn connect_with<R, W>(
        reader: R,
        writer: W,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        Self::over(reader, writer, config, options, None)
    }

    /// Connects to `server` in memory, in this process, and waits for the handshake or
    /// discovery: a test client for a built server, with no process, socket, port or file
    /// descriptor
    ///
    /// The server's side of the connection runs on a thread of its own (its handlers on the
    /// server's worker pool) and ends when the last clone of this client is dropped (or
    /// [`close`](Self::close)d). Everything else is as over a pipe: the same sessions, both
    /// eras (`config.era`), the handlers' [`Context`](crate::Context), the server's pushes.
    /// Threads have no paused clock: the handlers' sleeps and the requests' timeouts run on
    /// the real monotonic clock, so a test keeps its durations short (a timeout of some
    /// milliseconds against a handler that sleeps with [`Context::sleep`](crate::Context::sleep),
    /// which a cancelled request wakes at once). The crate's docs have an
    /// [example](crate#testing-your-server).
    ///
    /// # Errors
    /// [`ConnectError::Spawn`] when the server's thread cannot start;
    /// [`ConnectError::Handshake`] when the server refuses (a client configured for a
    /// protocol version the server does not speak).
    pub fn in_memory(server: &Server, config: ClientConfig) -> Result<Self, ConnectError> {
        Self::in_memory_with(server, config, ClientOptions::default())
    }

    /// [`in_memory`](Self::in_memory), with an input handler (which answers the server's
    /// elicitation, sampling and roots requests) and a notification channel
    ///
    /// # Errors
    /// As [`in_memory`](Self::in_memory).
    pub fn in_memory_with(
        server: &Server,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let ((client_reads, client_writes), (server_reads, server_writes)) =
            mcp_sansio_runtime::memory::connection();
        let server = server.clone();
        thread::Builder::new()
            .name("mcp-in-memory-server".into())
            .spawn(move || server.serve(server_reads, server_writes))
            .map_err(|e| ConnectError::spawn("the mcp-in-memory-server thread", e))?;
        Self::connect_with(client_reads, client_writes, config, options)
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/path`, or `https://` with
    /// the `tls` feature) and waits for the handshake (2025) or discovery (2026); the same
    /// API as the stdio client
    ///
    /// `options.http` says how: `HttpOptions::proxy` (by
    /// default `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` unless `NO_PROXY` names the host;
    /// `https://` tunnels through the proxy with `CONNECT`, `http://` requests go to it in
    /// absolute form, with `Proxy-Authorization` from the proxy URL's user and password),
    /// `connect_timeout` (10 s: TCP, the proxy's tunnel and TLS) and `request_timeout` (60 s:
    /// from a request sent to its response head; an event stream may then last).
    ///
    /// # Errors
    /// [`ConnectError::Url`] for a URL that is not `http://` or `https://` (or `https://`
    /// without the `tls` feature); [`ConnectError::Options`] for a header the transport owns,
    /// a root certificate that does not parse or a proxy setting that cannot be used;
    /// [`ConnectError::Transport`] when the server is unreachable, in one sentence (`could
    /// not connect to http://127.0.0.1:9/mcp: Connection refused (os error 111)`, `could not
    /// resolve HOST: ..`, `could not connect to the proxy ..`, `the proxy .. refused CONNECT
    /// to host:port: HTTP 403 Forbidden`, `connecting to URL timed out after 10 s`, `no
    /// response head from URL within 60 s`; a TLS failure says what the handshake refused: a
    /// certificate that is not trusted, is for another name or has expired);
    /// [`ConnectError::Handshake`] when the server refuses or speaks no common version.
    #[cfg(feature = "http")]
    pub fn connect_http(
        url: &str,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let uri = http_client::parse_url(url).map_err(ConnectError::Url)?;
        let tls = client_tls::tls(&uri, &options.http).map_err(ConnectError::Options)?;
        let proxy = http_client::proxy(&uri, &options.http).map_err(ConnectError::Options)?;
        for (name, value) in &options.http.headers {
            mcp_sansio::http::check_header(name, value)
                .map_err(|e| ConnectError::Options(e.to_string()))?;
        }
        let config = mcp_sansio_runtime::client::declare_input(config, options.input.is_some());
        let chain = options.chain();
        let session = ClientSession::new(Arc::new(config), now());
        let (tx, inbox) = crossbeam_channel::unbounded();
        let (ready_tx, ready_rx) = crate::one::channel();
        let net = tx.clone();
        thread::Builder::new()
            .name("mcp-http-client".into())
            .spawn(move || {
                http_client::run(uri, tls, proxy, session, inbox, net, options, ready_tx)
            })
            .map_err(|e| ConnectError::spawn("the mcp-http-client thread", e))?;
        Self::when_ready(Route::inbox(tx), &ready_rx, None, chain)
    }

    /// Starts a server as a child process and connects to it over its stdin and stdout
    ///
    /// The child's stderr passes through to ours. It is killed and reaped when the last
    /// clone of this client is dropped.
    ///
    /// # Errors
    /// [`ConnectError`] when the process does not start or the handshake fails.
    pub fn spawn(command: ProcessCommand, config: ClientConfig) -> Result<Self, ConnectError> {
        Self::spawn_with(command, config, ClientOptions::default())
    }

    /// [`spawn`](Self::spawn), with an input handler, a notification channel, and the
    /// child's stderr captured line by line if [`ClientOptions::stderr`] is set (else it
    /// passes through)
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_with(
        mut command: ProcessCommand,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let stderr = if options.stderr.is_some() {
            Stdio::piped()
        } else {
            Stdio::inherit()
        };
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let program = command.get_program().to_string_lossy().into_owned();
        let mut child = command
            .spawn()
            .map_err(|e| ConnectError::spawn(&program, e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ConnectError::spawn(
                &program,
                io::Error::other("no stdio pipes"),
            ));
        };
        if let (Some(lines), Some(err)) = (options.stderr.clone(), child.stderr.take()) {
            // The server's log lines, one per message, until it closes stderr
            thread::Builder::new()
                .name("mcp-stderr".into())
                .spawn(move || {
                    for line in BufReader::new(err).lines() {
                        let Ok(line) = line else { break };
                        if lines.send(line).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| ConnectError::spawn("the stderr reader thread", e))?;
        }
        let _span = mcp_sansio_runtime::trace::child(&program, Some(child.id())).entered();
        let guard = ChildGuard(Mutex::new(child), program);
        Self::over(stdout, stdin, config, options, Some(guard))
    }

    /// Runs a connection over `reader` and `writer` on a driver thread of its own and waits
    /// for the handshake or discovery; `child` is the server process behind them, if any
    fn over<R, W>(
        reader: R,
        writer: W,
        config: ClientConfig,
        options: ClientOptions,
        child: Option<ChildGuard>,
    ) -> Result<Self, ConnectError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let config = mcp_sansio_runtime::client::declare_input(config, options.input.is_some());
        let chain = options.chain();
        let session = ClientSession::new(Arc::new(config), now());
        let (ready_tx, ready_rx) = crate::one::channel();
        let conn = Connection {
            session,
            dispatch: None,
            options,
            ready: Some(ready_tx),
            hub: None,
        };
        let (link, driver) = driver::open(conn, reader, writer);
        thread::Builder::new()
            .name("mcp-client".into())
            .spawn(move || driver.run())
            .map_err(|e| ConnectError::spawn("the mcp-client thread", e))?;
        // On failure a child's guard drops here: the child is killed and reaped.
        Self::when_ready(link, &ready_rx, child, chain)
    }

    /// A handle once the driver reports the handshake or discovery done, whose requests go
    /// through `middleware`
    pub(crate) fn when_ready(
        link: Route,
        ready: &crate::one::OneReceiver<Result<PeerInfo, mcp_sansio::CloseReason>>,
        child: Option<ChildGuard>,
        middleware: Option<ClientChain>,
    ) -> Result<Self, ConnectError> {
        let peer = match ready.recv() {
            Ok(Ok(peer)) => peer,
            Ok(Err(why)) => {
                let error = ConnectError::from_close(why);
                // A server that exits at once reads as such, with its status.
                let wait = match error {
                    ConnectError::Transport(_) => std::time::Duration::from_secs(1),
                    _ => std::time::Duration::ZERO,
                };
                return Err(match child.as_ref().and_then(|c| c.exited_within(wait)) {
                    Some((program, status)) => ConnectError::Exited { program, status },
                    None => error,
                });
            }
            Err(_) => return Err(ConnectError::Transport("the connection closed".into())),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                link,
                peer,
                tokens: AtomicU64::new(1),
                _child: child,
            }),
            headers: Arc::new([]),
            middleware,
        })
    }

    /// What the server declared about itself
    pub fn peer(&self) -> &PeerInfo {
        &self.inner.peer
    }

    /// HTTP only: a handle to the same connection whose every request also carries
    /// `headers` (a trace id, a per-user key), on the POSTs of the request and its retries;
    /// the connection's own headers ([`ClientOptions::header`]) still go on every request
    ///
    /// # Errors
    /// [`HeaderError`](mcp_sansio::http::HeaderError) for a header the transport owns or
    /// an invalid one. Over a byte stream (stdio) the requests fail with
    /// [`SendError::NotAllowed`].
    #[cfg(feature = "http")]
    pub fn with_headers<I, N, V>(&self, headers: I) -> Result<Self, mcp_sansio::http::HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        Ok(Self {
            inner: Arc::clone(&self.inner),
            headers: mcp_sansio_runtime::http_options::with_more_headers(&self.headers, headers)?,
            middleware: self.middleware.clone(),
        })
    }

    /// A handle to the same connection whose every request (each typed call, through
    /// [`request_raw`](Self::request_raw)) goes through `middleware`, after the middleware
    /// this handle has already (the first added is the outermost); a closure
    /// `|call: ClientCall, next: &ClientNext| next.run(call)` is one. See
    /// [`middleware`](crate::middleware).
    ///
    /// [`start`](Self::start) sends without the chain.
    #[must_use]
    pub fn with_middleware(&self, middleware: impl ClientMiddleware) -> Self {
        let middleware: Arc<dyn ClientMiddleware> = Arc::new(middleware);
        let mut handle = self.clone();
        handle.middleware = Some(match &self.middleware {
            Some(chain) => mcp_sansio_runtime::middleware::push(chain, middleware),
            None => Arc::from([middleware]),
        });
        handle
    }

    /// Sends a raw request and waits for its outcome (through the handle's middleware, if
    /// it has any)
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        progress: Option<mpsc::Sender<Progress>>,
    ) -> Result<Box<RawValue>, ClientError> {
        if let Some(chain) = &self.middleware {
            // The first send reports progress.
            let progress = std::cell::Cell::new(progress);
            let send = |call: ClientCall| {
                let watch = CallWatch {
                    progress: progress.take(),
                    task_status: None,
                };
                self.start(&call.method, call.params, call.options, watch)
                    .wait()
            };
            let mut call = ClientCall::new(method, params);
            call.options = options;
            return ClientNext::new(chain, &send).run(call);
        }
        let watch = CallWatch {
            progress,
            task_status: None,
        };
        self.start(method, params, options, watch).wait()
    }

    /// Starts a raw request without waiting: the returned call cancels it from any thread
    /// ([`PendingCall::cancel_handle`]) and waits for its outcome ([`PendingCall::wait`]);
    /// `watch` receives its progress and the status of the task behind it, if the server
    /// runs it as one
    pub fn start(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        watch: CallWatch,
    ) -> PendingCall {
        let token = self.inner.tokens.fetch_add(1, Ordering::Relaxed);
        let (reply, outcome) = crate::one::channel();
        let command = Command::Request {
            method: method.to_owned(),
            params,
            options,
            token,
            reply,
            progress: watch.progress,
            task_status: watch.task_status,
            headers: self.headers.to_vec(),
            parent: mcp_sansio_runtime::otel::Parent::current(),
        };
        // If the driver is gone, `reply` is dropped with the command and `wait` says Closed.
        let _ = self.inner.link.command(command);
        PendingCall {
            outcome,
            cancel: CancelHandle {
                link: self.inner.link.clone(),
                token,
            },
            done: false,
        }
    }

    /// Runs a typed call: sends each of its requests and feeds the results back; the
    /// first request reports progress to `progress`
    fn exchange<E: Exchange>(
        &self,
        call: E,
        mut progress: Option<mpsc::Sender<Progress>>,
    ) -> Result<E::Output, ClientError> {
        calls::run_blocking(call, |r: Request| {
            self.request_raw(r.method, Some(r.params), r.options, progress.take())
        })
    }

    /// Sends a typed request and decodes its result
    ///
    /// # Errors
    /// [`ClientError`]; a result of the wrong shape is [`CallError::InvalidResult`].
    pub fn request<M: Method>(
        &self,
        params: M::Params,
        options: RequestOptions,
    ) -> Result<M::Result, ClientError> {
        self.exchange(calls::request::<M>(&params, options), None)
    }

    /// Every tool, following pagination
    ///
    /// On 2026-07-28 connections, tools whose `x-mcp-header` annotations are invalid are left
    /// out, as the spec requires (they are neither surfaced nor called).
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.exchange(calls::list_tools(self.peer()), None)
    }

    /// Every resource, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.exchange(calls::list_resources(), None)
    }

    /// Every prompt, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.exchange(calls::list_prompts(), None)
    }

    /// Calls a tool
    ///
    /// # Errors
    /// [`ClientError`]. A tool that fails returns `Ok` with `isError: true`.
    pub fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, ClientError> {
        let call = calls::call_tool(name, arguments, RequestOptions::default());
        self.exchange(call, None)
    }

    /// Calls a tool with progress reports sent to `progress`, and request options
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: RequestOptions,
        progress: mpsc::Sender<Progress>,
    ) -> Result<CallToolResult, ClientError> {
        let call = calls::call_tool(name, arguments, options.with_progress());
        self.exchange(call, Some(progress))
    }

    /// Reads a resource
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.exchange(calls::read_resource(uri), None)
    }

    /// Gets a prompt
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn get_prompt(&self, params: GetPromptParams) -> Result<GetPromptResult, ClientError> {
        self.exchange(calls::get_prompt(&params), None)
    }

    /// Asks for completions
    ///
    /// # Errors
    /// [`ClientError`].
    pub fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        self.exchange(calls::complete(&params), None)
    }

    /// Sends a notification
    ///
    /// # Errors
    /// [`ClientError::Send`] for local misuse (for example a core-owned notification).
    pub fn notify(&self, method: &str, params: Option<Box<RawValue>>) -> Result<(), ClientError> {
        let (reply, rx) = crate::one::channel();
        let command = Command::Notify {
            method: method.to_owned(),
            params,
            reply,
        };
        self.inner
            .link
            .command(command)
            .map_err(|()| ClientError::Closed)?;
        Ok(rx.recv().map_err(|_| ClientError::Closed)??)
    }

    /// Closes the connection now, whatever other clones exist (a child process is killed
    /// and reaped when the last clone goes)
    pub fn close(self) {
        let _ = self.inner.link.command(Command::Close);
    }
}
