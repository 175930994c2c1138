//! The client handles every binding shares: errors, and the async bindings' typed calls over
//! the actor's command channel

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mcp_sansio::schema::method::Method;
use mcp_sansio::schema::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptParams, GetPromptResult, Prompt,
    ReadResourceResult, Resource, Tool,
};
use mcp_sansio::{CallError, PeerInfo, Progress, RequestOptions, SendError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::calls::{self, Exchange, Next};
use crate::peer::{Command, TaskStatusUpdate};
use crate::server::AsyncRuntime;

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
    /// The connection is gone (its actor or driver ended)
    #[error("the connection is closed")]
    Closed,
}

/// Why connecting failed
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// Starting the child process (or a thread) failed
    #[error("could not start the server: {0}")]
    Spawn(#[from] io::Error),
    /// The URL is not an `http://` URL
    #[error("invalid URL: {0}")]
    Url(String),
    /// The handshake or discovery failed
    #[error("the handshake failed: {0}")]
    Handshake(String),
}

/// A runtime's channel of commands to a connection's actor
pub trait Commands: AsyncRuntime {
    /// The sending half (bounded: a sender waits while the actor is behind)
    type CommandTx: Clone + Send + Sync + 'static;
    /// Sends a command, waiting for room; `false` once the actor is gone
    fn send_command(
        tx: &Self::CommandTx,
        command: Command<Self>,
    ) -> impl Future<Output = bool> + Send;
    /// Sends a command if there is room now; `false` otherwise
    fn try_send_command(tx: &Self::CommandTx, command: Command<Self>) -> bool;
}

/// The typed calls of a connected async client; the bindings' `Client` dereferences to it
pub struct Client<R: Commands> {
    commands: R::CommandTx,
    peer: Arc<PeerInfo>,
    tokens: Arc<AtomicU64>,
}

impl<R: Commands> Clone for Client<R> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            peer: Arc::clone(&self.peer),
            tokens: Arc::clone(&self.tokens),
        }
    }
}

impl<R: Commands> std::fmt::Debug for Client<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

/// Cancels one request from anywhere (dropping the request's future does the same)
///
/// The async bindings' `CancelHandle`, from their `Client::start`.
pub struct CancelHandle<R: Commands> {
    commands: R::CommandTx,
    token: u64,
    /// Set by [`cancel`](Self::cancel), read by the request's future before and after it
    /// sends the request: a cancel that comes first is not lost
    cancelled: Arc<AtomicBool>,
}

impl<R: Commands> Clone for CancelHandle<R> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            token: self.token,
            cancelled: Arc::clone(&self.cancelled),
        }
    }
}

impl<R: Commands> std::fmt::Debug for CancelHandle<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl<R: Commands> CancelHandle<R> {
    /// Cancels the request (`notifications/cancelled`, or `tasks/cancel` for a task-backed
    /// call); its future then ends with [`CallError::Cancelled`] or the connection's close.
    /// A no-op once the request has ended. Before the request was sent (it is sent when its
    /// future first runs), the future ends with [`CallError::Cancelled`] without sending it.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let _ = R::try_send_command(&self.commands, Command::Cancel { token: self.token });
    }
}

/// What a started request reports while it runs
///
/// The async bindings' `CallWatch`, for their `Client::start`.
#[non_exhaustive]
pub struct CallWatch<R: Commands> {
    /// Progress reports (ask for them with [`RequestOptions::with_progress`])
    pub progress: Option<R::Stream<Progress>>,
    /// Status changes of the task behind a task-backed call
    pub task_status: Option<R::Stream<TaskStatusUpdate>>,
}

impl<R: Commands> Default for CallWatch<R> {
    fn default() -> Self {
        Self {
            progress: None,
            task_status: None,
        }
    }
}

impl<R: Commands> std::fmt::Debug for CallWatch<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallWatch")
            .field("progress", &self.progress.is_some())
            .field("task_status", &self.task_status.is_some())
            .finish()
    }
}

/// Cancels a request if its future is dropped before it finishes
struct CancelOnDrop<'a, R: Commands> {
    commands: &'a R::CommandTx,
    token: u64,
    armed: bool,
}

impl<R: Commands> Drop for CancelOnDrop<'_, R> {
    fn drop(&mut self) {
        if self.armed {
            let _ = R::try_send_command(self.commands, Command::Cancel { token: self.token });
        }
    }
}

impl<R: Commands> Client<R> {
    /// A handle once the actor reports the handshake or discovery done
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when it failed or the connection closed first.
    #[doc(hidden)]
    pub async fn when_ready(
        commands: R::CommandTx,
        ready: R::ReplyRx<Result<PeerInfo, String>>,
    ) -> Result<Self, ConnectError> {
        let peer = match R::recv(ready).await {
            Some(Ok(peer)) => peer,
            Some(Err(why)) => return Err(ConnectError::Handshake(why)),
            None => return Err(ConnectError::Handshake("the connection closed".into())),
        };
        Ok(Self {
            commands,
            peer: Arc::new(peer),
            tokens: Arc::new(AtomicU64::new(1)),
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
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        progress: Option<R::Stream<Progress>>,
    ) -> Result<Box<RawValue>, ClientError> {
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
        let commands = self.commands.clone();
        let method = method.to_owned();
        let future = async move {
            if cancelled.load(Ordering::SeqCst) {
                return Err(ClientError::Call(CallError::Cancelled));
            }
            let (reply, rx) = R::oneshot();
            let command = Command::Request {
                method,
                params,
                options,
                token,
                reply,
                progress: watch.progress,
                task_status: watch.task_status,
            };
            if !R::send_command(&commands, command).await {
                return Err(ClientError::Closed);
            }
            let mut guard = CancelOnDrop::<R> {
                commands: &commands,
                token,
                armed: true,
            };
            // A cancel between the check above and the send went ahead of the request and
            // found nothing to cancel: send it again, now behind the request.
            if cancelled.load(Ordering::SeqCst) {
                let _ = R::try_send_command(&commands, Command::Cancel { token });
            }
            let outcome = R::recv(rx).await.ok_or(ClientError::Closed)?;
            guard.armed = false;
            Ok(outcome??)
        };
        (handle, future)
    }

    /// Runs a typed call: sends each of its requests and feeds the results back; the
    /// first request reports progress to `progress`
    async fn exchange<E: Exchange + Send>(
        &self,
        mut call: E,
        mut progress: Option<R::Stream<Progress>>,
    ) -> Result<E::Output, ClientError> {
        let mut answer = None;
        loop {
            match call.step(answer.take())? {
                Next::Done(value) => return Ok(value),
                Next::Send(request) => {
                    let (method, params, options) =
                        (request.method, request.params, request.options);
                    let result = self
                        .request_raw(method, Some(params), options, progress.take())
                        .await?;
                    answer = Some(result);
                }
            }
        }
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
        progress: R::Stream<Progress>,
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
        let (reply, rx) = R::oneshot();
        let command = Command::Notify {
            method: method.to_owned(),
            params,
            reply,
        };
        if !R::send_command(&self.commands, command).await {
            return Err(ClientError::Closed);
        }
        Ok(R::recv(rx).await.ok_or(ClientError::Closed)??)
    }

    /// Asks the actor to close the connection
    #[doc(hidden)]
    pub async fn close(&self) {
        let _ = R::send_command(&self.commands, Command::Close).await;
    }
}
