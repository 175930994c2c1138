//! The client: connect over any byte stream or to a child process, then make typed calls

use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_channel::Sender;
use async_process::{Child, Command as ProcessCommand};
use futures_lite::{AsyncRead, AsyncWrite};
use mcp_core::schema::method::{
    CallTool, Complete, GetPrompt, ListPrompts, ListResources, ListTools, Method, ReadResource,
};
use mcp_core::schema::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, GetPromptParams,
    GetPromptResult, PaginatedParams, Prompt, ReadResourceParams, ReadResourceResult, Resource,
    Tool,
};
use mcp_core::{CallError, ClientConfig, PeerInfo, Progress, RequestOptions, SendError, Session};
use serde_json::{Map, Value};

use crate::driver::{self, ClientOptions, Command, TaskStatusUpdate, oneshot};

/// Why a call failed
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request could not be sent (local misuse, or the session is closed)
    #[error(transparent)]
    Send(#[from] SendError),
    /// The request was sent and ended without a result
    #[error(transparent)]
    Call(#[from] CallError),
    /// The connection's actor is gone
    #[error("the connection is closed")]
    Closed,
}

/// Why connecting failed
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// Starting the child process failed
    #[error("could not start the server: {0}")]
    Spawn(#[from] io::Error),
    /// The URL is not an `http://` URL
    #[error("invalid URL: {0}")]
    Url(String),
    /// The handshake or discovery failed
    #[error("the handshake failed: {0}")]
    Handshake(String),
}

/// A connected MCP client; cheap to clone, every clone talks to the same connection
///
/// Dropping a call's future before it finishes cancels the request
/// (`notifications/cancelled`, or `tasks/cancel` for a task-backed call).
#[derive(Clone, Debug)]
pub struct Client {
    commands: Sender<Command>,
    peer: Arc<PeerInfo>,
    tokens: Arc<AtomicU64>,
    _child: Option<Arc<ChildGuard>>,
}

/// Cancels one request from anywhere (dropping the request's future does the same)
#[derive(Clone, Debug)]
pub struct CancelHandle {
    commands: Sender<Command>,
    token: u64,
}

impl CancelHandle {
    /// Cancels the request (`notifications/cancelled`, or `tasks/cancel` for a task-backed
    /// call); its future then ends with [`CallError::Cancelled`] or the connection's close.
    /// A no-op once the request has ended.
    pub fn cancel(&self) {
        let _ = self
            .commands
            .try_send(Command::Cancel { token: self.token });
    }
}

/// What a started request reports while it runs
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CallWatch {
    /// Progress reports (ask for them with [`RequestOptions::with_progress`])
    pub progress: Option<Sender<Progress>>,
    /// Status changes of the task behind a task-backed call
    pub task_status: Option<Sender<TaskStatusUpdate>>,
}

/// Keeps a spawned server alive as long as a client handle exists; kills it on drop
#[derive(Debug)]
struct ChildGuard(std::sync::Mutex<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(child) = self.0.get_mut() {
            let _ = child.kill();
        }
    }
}

/// Cancels a request if its future is dropped before it finishes
struct CancelOnDrop<'a> {
    commands: &'a Sender<Command>,
    token: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self
                .commands
                .try_send(Command::Cancel { token: self.token });
        }
    }
}

impl Client {
    /// Connects over a reader and a writer (a socket's halves, a pipe pair, an in-memory
    /// duplex) and waits for the handshake or discovery
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when the server refuses or speaks no common version.
    pub async fn connect<R, W>(
        reader: R,
        writer: W,
        config: ClientConfig,
    ) -> Result<Self, ConnectError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::connect_with(reader, writer, config, ClientOptions::default()).await
    }

    /// [`connect`](Self::connect), with an input handler and a notification channel
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with<R, W>(
        reader: R,
        writer: W,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let session = Session::client(Arc::new(config), driver::now());
        let (tx, rx) = async_channel::bounded(256);
        let (ready_tx, ready_rx) = oneshot::channel();
        smol::spawn(driver::run(
            session,
            reader,
            writer,
            rx,
            None,
            options,
            Some(ready_tx),
        ))
        .detach();
        Self::when_ready(tx, ready_rx).await
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/path`) and waits for the
    /// handshake (2025) or discovery (2026); the same API as the stdio client
    ///
    /// # Errors
    /// [`ConnectError::Url`] for a URL that is not `http://`; [`ConnectError::Handshake`]
    /// when the server refuses, is unreachable or speaks no common version.
    pub async fn connect_http(
        url: &str,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| ConnectError::Url(format!("{url}: {e}")))?;
        if uri.scheme_str() != Some("http") || uri.host().is_none() {
            return Err(ConnectError::Url(format!(
                "{url}: only http:// URLs are supported"
            )));
        }
        let session = Session::client(Arc::new(config), driver::now());
        let (tx, rx) = async_channel::bounded(256);
        let (ready_tx, ready_rx) = oneshot::channel();
        smol::spawn(crate::http_client::run(uri, session, rx, options, ready_tx)).detach();
        Self::when_ready(tx, ready_rx).await
    }

    /// Starts a server as a child process and connects to it over its stdin and stdout
    ///
    /// The child's stderr passes through to ours. It is killed when the last clone of this
    /// client is dropped (async-process reaps it).
    ///
    /// # Errors
    /// [`ConnectError`] when the process does not start or the handshake fails.
    pub async fn spawn(
        command: ProcessCommand,
        config: ClientConfig,
    ) -> Result<Self, ConnectError> {
        Self::spawn_with(command, config, ClientOptions::default()).await
    }

    /// [`spawn`](Self::spawn), with an input handler, a notification channel, and the
    /// child's stderr captured line by line if [`ClientOptions::stderr`] is set (else it
    /// passes through)
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub async fn spawn_with(
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
            .stderr(stderr)
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        if let (Some(lines), Some(err)) = (options.stderr.clone(), child.stderr.take()) {
            // The server's log lines, one per message, until it closes stderr
            smol::spawn(async move {
                use futures_lite::{AsyncBufReadExt, StreamExt};
                let mut reader = futures_lite::io::BufReader::new(err).lines();
                while let Some(Ok(line)) = reader.next().await {
                    if lines.send(line).await.is_err() {
                        break;
                    }
                }
            })
            .detach();
        }
        let mut client = Self::connect_with(stdout, stdin, config, options).await?;
        client._child = Some(Arc::new(ChildGuard(std::sync::Mutex::new(child))));
        Ok(client)
    }

    /// A handle once the actor reports the handshake or discovery done
    async fn when_ready(
        commands: Sender<Command>,
        ready: async_channel::Receiver<Result<PeerInfo, String>>,
    ) -> Result<Self, ConnectError> {
        let peer = match ready.recv().await {
            Ok(Ok(peer)) => peer,
            Ok(Err(why)) => return Err(ConnectError::Handshake(why)),
            Err(_) => return Err(ConnectError::Handshake("the connection closed".into())),
        };
        Ok(Self {
            commands,
            peer: Arc::new(peer),
            tokens: Arc::new(AtomicU64::new(1)),
            _child: None,
        })
    }

    /// What the server declared about itself
    pub fn peer(&self) -> &PeerInfo {
        &self.peer
    }

    /// Sends a raw request and waits for its outcome
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<serde_json::value::RawValue>>,
        options: RequestOptions,
        progress: Option<Sender<Progress>>,
    ) -> Result<Box<serde_json::value::RawValue>, ClientError> {
        let watch = CallWatch {
            progress,
            task_status: None,
        };
        self.start(method, params, options, watch).1.await
    }

    /// Starts a raw request and returns a handle that cancels it from anywhere, with the
    /// future of its outcome; `watch` receives its progress and the status of the task
    /// behind it, if the server runs it as one
    pub fn start(
        &self,
        method: &str,
        params: Option<Box<serde_json::value::RawValue>>,
        options: RequestOptions,
        watch: CallWatch,
    ) -> (
        CancelHandle,
        impl Future<Output = Result<Box<serde_json::value::RawValue>, ClientError>> + Send + 'static,
    ) {
        let token = self.tokens.fetch_add(1, Ordering::Relaxed);
        let handle = CancelHandle {
            commands: self.commands.clone(),
            token,
        };
        let commands = self.commands.clone();
        let method = method.to_owned();
        let future = async move {
            let (reply, rx) = oneshot::channel();
            let command = Command::Request {
                method,
                params,
                options,
                token,
                reply,
                progress: watch.progress,
                task_status: watch.task_status,
            };
            commands
                .send(command)
                .await
                .map_err(|_| ClientError::Closed)?;
            let mut guard = CancelOnDrop {
                commands: &commands,
                token,
                armed: true,
            };
            let outcome = rx.recv().await.map_err(|_| ClientError::Closed)?;
            guard.armed = false;
            Ok(outcome??)
        };
        (handle, future)
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
        let raw =
            serde_json::value::to_raw_value(&params).map_err(|_| SendError::ParamsNotAnObject)?;
        let result = self.request_raw(M::NAME, Some(raw), options, None).await?;
        serde_json::from_str(result.get()).map_err(|e| {
            CallError::InvalidResult(format!("invalid {} result: {e}", M::NAME)).into()
        })
    }

    /// Every page of a paginated list, concatenated
    async fn paginate<M, T>(
        &self,
        page_items: impl Fn(M::Result) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, ClientError>
    where
        M: Method<Params = PaginatedParams>,
    {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor
                .take()
                .map_or_else(PaginatedParams::new, PaginatedParams::at);
            let (items, next) =
                page_items(self.request::<M>(params, RequestOptions::default()).await?);
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
    }

    /// Every tool, following pagination
    ///
    /// On 2026-07-28 connections, tools whose `x-mcp-header` annotations are invalid are left
    /// out, as the spec requires (they are neither surfaced nor called).
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let modern = self.peer.version.era() == mcp_core::Era::Modern;
        self.paginate::<ListTools, _>(|mut page| {
            if modern {
                let _dropped = mcp_core::client::filter_tools_list(&mut page);
            }
            (page.tools, page.next_cursor)
        })
        .await
    }

    /// Every resource, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.paginate::<ListResources, _>(|page| (page.resources, page.next_cursor))
            .await
    }

    /// Every prompt, following pagination
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.paginate::<ListPrompts, _>(|page| (page.prompts, page.next_cursor))
            .await
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
        let params = CallToolParams::new(name).with_arguments(arguments);
        self.request::<CallTool>(params, RequestOptions::default())
            .await
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
        progress: Sender<Progress>,
    ) -> Result<CallToolResult, ClientError> {
        let params = CallToolParams::new(name).with_arguments(arguments);
        let raw =
            serde_json::value::to_raw_value(&params).map_err(|_| SendError::ParamsNotAnObject)?;
        let result = self
            .request_raw(
                CallTool::NAME,
                Some(raw),
                options.with_progress(),
                Some(progress),
            )
            .await?;
        serde_json::from_str(result.get())
            .map_err(|e| CallError::InvalidResult(format!("invalid tools/call result: {e}")).into())
    }

    /// Reads a resource
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request::<ReadResource>(ReadResourceParams::new(uri), RequestOptions::default())
            .await
    }

    /// Gets a prompt
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn get_prompt(
        &self,
        params: GetPromptParams,
    ) -> Result<GetPromptResult, ClientError> {
        self.request::<GetPrompt>(params, RequestOptions::default())
            .await
    }

    /// Asks for completions
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ClientError> {
        self.request::<Complete>(params, RequestOptions::default())
            .await
    }

    /// Sends a notification
    ///
    /// # Errors
    /// [`ClientError::Send`] for local misuse (for example a core-owned notification).
    pub async fn notify(
        &self,
        method: &str,
        params: Option<Box<serde_json::value::RawValue>>,
    ) -> Result<(), ClientError> {
        let (reply, rx) = oneshot::channel();
        let command = Command::Notify {
            method: method.to_owned(),
            params,
            reply,
        };
        self.commands
            .send(command)
            .await
            .map_err(|_| ClientError::Closed)?;
        Ok(rx.recv().await.map_err(|_| ClientError::Closed)??)
    }

    /// Closes the connection (the child process, if any, is killed when the last handle
    /// goes)
    pub async fn close(self) {
        let _ = self.commands.send(Command::Close).await;
    }
}
