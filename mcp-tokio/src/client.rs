//! The client: connect over any byte stream or to a child process, then make typed calls

use std::ops::Deref;
use std::process::Stdio;
use std::sync::Arc;

use mcp_sansio::ClientConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, Command as ProcessCommand};

pub use mcp_sansio_runtime::client::{ClientError, ConnectError};

use crate::runtime::{ClientOptions, Compat, Tokio};

/// A connected MCP client; cheap to clone, every clone talks to the same connection
///
/// Dropping a call's future before it finishes cancels the request
/// (`notifications/cancelled`, or `tasks/cancel` for a task-backed call).
///
/// The typed calls ([`call_tool`](mcp_sansio_runtime::client::Client::call_tool),
/// [`list_tools`](mcp_sansio_runtime::client::Client::list_tools), [`start`](mcp_sansio_runtime::client::Client::start), ...)
/// are the async bindings' shared ones, reached through `Deref`.
#[derive(Clone, Debug)]
pub struct Client {
    inner: mcp_sansio_runtime::client::Client<Tokio>,
    _child: Option<Arc<ChildGuard>>,
}

impl Deref for Client {
    type Target = mcp_sansio_runtime::client::Client<Tokio>;

    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl From<mcp_sansio_runtime::client::Client<Tokio>> for Client {
    fn from(inner: mcp_sansio_runtime::client::Client<Tokio>) -> Self {
        Self {
            inner,
            _child: None,
        }
    }
}

/// Cancels one request from anywhere (dropping the request's future does the same)
///
/// [`Client::start`](Client#method.start) returns one with the request's future;
/// [`cancel`](#method.cancel) (documented below, under *Implementations*) sends
/// `notifications/cancelled`, or `tasks/cancel` for a task-backed call, and the future then
/// ends with `ClientError::Call(CallError::Cancelled)`. It is `Clone` and `Send`: hand it to
/// another task. A cancel before the future first runs ends it at once, without sending the
/// request; once the request has ended, `cancel` is a no-op. The crate's docs
/// have an [example](crate#cancellation).
pub type CancelHandle = mcp_sansio_runtime::client::CancelHandle<Tokio>;

/// What a started request reports while it runs: its progress, and the status of the task
/// behind it
///
/// Give one to [`Client::start`](Client#method.start): it is `Default` with both channels unset;
/// set `progress` (and ask for progress with `RequestOptions::with_progress`) or `task_status`
/// to an unbounded sender, and read the receivers while the call runs. The fields are listed
/// below. The crate's docs have an [example](crate#cancellation).
pub type CallWatch = mcp_sansio_runtime::client::CallWatch<Tokio>;

/// Keeps a spawned server alive as long as a client handle exists; kills it on drop
#[derive(Debug)]
struct ChildGuard(std::sync::Mutex<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(child) = self.0.get_mut() {
            let _ = child.start_kill();
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
        let (reader, writer) = (Compat(reader), Compat(writer));
        let inner = mcp_sansio_runtime::driver::connect(reader, writer, config, &options).await?;
        Ok(inner.into())
    }

    /// Connects to `server` in memory, in this process, and waits for the handshake or
    /// discovery: a test client for a built server, with no process, socket or port
    ///
    /// The server's side of the connection runs on a task of its own and ends when the last
    /// clone of this client is dropped (or [`close`](Self::close)d). Everything else is as
    /// over a socket: the same sessions, both eras (`config.era`), the handlers'
    /// [`Context`](crate::Context), the server's pushes. Nothing in it reads the wall clock
    /// or waits on the OS, so under tokio's paused clock (`#[tokio::test(start_paused =
    /// true)]`) time jumps whenever every task is idle: a handler's
    /// `tokio::time::sleep(Duration::from_secs(30))` and a request's timeout take no wall
    /// time and fire in a deterministic order. The crate's docs have an
    /// [example](crate#testing-your-server).
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when the server refuses (a client configured for a
    /// protocol version the server does not speak).
    pub async fn in_memory(
        server: &crate::Server,
        config: ClientConfig,
    ) -> Result<Self, ConnectError> {
        Self::in_memory_with(server, config, ClientOptions::default()).await
    }

    /// [`in_memory`](Self::in_memory), with an input handler (which answers the server's
    /// elicitation, sampling and roots requests) and a notification channel
    ///
    /// # Errors
    /// As [`in_memory`](Self::in_memory).
    pub async fn in_memory_with(
        server: &crate::Server,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let inner = mcp_sansio_runtime::driver::in_memory(server.core(), config, &options).await?;
        Ok(inner.into())
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
    pub async fn connect_http(
        url: &str,
        config: ClientConfig,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let inner = crate::http_client::connect(url, config, &options).await?;
        Ok(inner.into())
    }

    /// Starts a server as a child process and connects to it over its stdin and stdout
    ///
    /// The child's stderr passes through to ours. It is killed when the last clone of this
    /// client is dropped (tokio reaps it).
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
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command
            .spawn()
            .map_err(|e| ConnectError::spawn(&program, e))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        if let (Some(lines), Some(err)) = (options.stderr.clone(), child.stderr.take()) {
            // The server's log lines, one per message, until it closes stderr
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut reader = tokio::io::BufReader::new(err).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if lines.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let span = mcp_sansio_runtime::trace::child(&program, child.id());
        let connect = Self::connect_with(stdout, stdin, config, options);
        match mcp_sansio_runtime::trace::Instrument::instrument(connect, span).await {
            Ok(mut client) => {
                client._child = Some(Arc::new(ChildGuard(std::sync::Mutex::new(child))));
                Ok(client)
            }
            Err(e) => {
                // A server that exits at once reads as such, with its status.
                let wait = exit_wait(&e);
                match tokio::time::timeout(wait, child.wait()).await {
                    Ok(Ok(status)) => Err(ConnectError::Exited {
                        program,
                        status: status.to_string(),
                    }),
                    _ => Err(e),
                }
            }
        }
    }

    /// HTTP only: a handle to the same connection whose every request also carries
    /// `headers` (see the kernel's
    /// [`with_headers`](mcp_sansio_runtime::client::Client::with_headers))
    ///
    /// # Errors
    /// [`HeaderError`](mcp_sansio::http::HeaderError) for a header the transport owns or
    /// an invalid one.
    #[cfg(feature = "http")]
    pub fn with_headers<I, N, V>(&self, headers: I) -> Result<Self, mcp_sansio::http::HeaderError>
    where
        I: IntoIterator<Item = (N, V)>,
        N: Into<String>,
        V: Into<String>,
    {
        Ok(Self {
            inner: self.inner.with_headers(headers)?,
            _child: self._child.clone(),
        })
    }

    /// Closes the connection (the child process, if any, is killed when the last handle
    /// goes)
    pub async fn close(self) {
        self.inner.close().await;
    }
}

/// How long a failed spawn waits for the child to exit before reporting the connection's
/// own error: a moment when the connection broke (the child is probably exiting), no time
/// when the server refused the handshake (it is alive)
fn exit_wait(error: &ConnectError) -> std::time::Duration {
    match error {
        ConnectError::Transport(_) => std::time::Duration::from_secs(1),
        _ => std::time::Duration::ZERO,
    }
}
