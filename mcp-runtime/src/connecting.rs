//! Opening a client connection: over a runtime's byte streams, to a child process, in
//! memory, or to a Streamable HTTP endpoint
//!
//! These are the [`Client`] constructors every async binding shares; the binding's part is
//! its [`RuntimeIo`] (and [`HttpIo`](crate::io::HttpIo)): wrapping its streams,
//! starting a process, its HTTP stack.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::ClientConfig;

use crate::client::{Client, ClientOptions, ConnectError};
use crate::driver::{AsyncRead, AsyncWrite};
use crate::io::RuntimeIo;
use crate::serving::Server;
use crate::trace::Instrument;

impl<R: RuntimeIo> Client<R> {
    /// Connects over a reader and a writer of the runtime (a socket's halves, a pipe pair,
    /// an in-memory duplex) and waits for the handshake or discovery
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when the server refuses or speaks no common version.
    pub async fn connect<Rd, Wr>(
        reader: Rd,
        writer: Wr,
        config: ClientConfig,
    ) -> Result<Self, ConnectError>
    where
        R::Io<Rd>: AsyncRead + Unpin + Send + 'static,
        R::Io<Wr>: AsyncWrite + Unpin + Send + 'static,
    {
        Self::connect_with(reader, writer, config, ClientOptions::default()).await
    }

    /// [`connect`](Self::connect), with an input handler and a notification channel
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with<Rd, Wr>(
        reader: Rd,
        writer: Wr,
        config: ClientConfig,
        options: ClientOptions<R>,
    ) -> Result<Self, ConnectError>
    where
        R::Io<Rd>: AsyncRead + Unpin + Send + 'static,
        R::Io<Wr>: AsyncWrite + Unpin + Send + 'static,
    {
        crate::driver::connect(R::io(reader), R::io(writer), config, &options).await
    }

    /// Connects to `server` in memory, in this process, and waits for the handshake or
    /// discovery: a test client for a built server, with no process, socket or port
    ///
    /// The server's side of the connection runs on a task of its own and ends when the last
    /// clone of this client is dropped (or [`close`](Self::close)d). Everything else is as
    /// over a socket: the same sessions, both eras (`config.era`), the handlers'
    /// `Context`, the server's pushes. Nothing in it reads the wall clock or waits on the OS,
    /// so under tokio's paused clock (`#[tokio::test(start_paused = true)]`) time jumps
    /// whenever every task is idle: a handler's 30-second sleep and a request's timeout take
    /// no wall time and fire in a deterministic order.
    ///
    /// # Errors
    /// [`ConnectError::Handshake`] when the server refuses (a client configured for a
    /// protocol version the server does not speak).
    pub async fn in_memory(server: &Server<R>, config: ClientConfig) -> Result<Self, ConnectError> {
        Self::in_memory_with(server, config, ClientOptions::default()).await
    }

    /// [`in_memory`](Self::in_memory), with an input handler (which answers the server's
    /// elicitation, sampling and roots requests) and a notification channel
    ///
    /// # Errors
    /// As [`in_memory`](Self::in_memory).
    pub async fn in_memory_with(
        server: &Server<R>,
        config: ClientConfig,
        options: ClientOptions<R>,
    ) -> Result<Self, ConnectError> {
        crate::driver::in_memory(server.core(), config, &options).await
    }

    /// Starts a server as a child process and connects to it over its stdin and stdout
    ///
    /// The child's stderr passes through to ours. It is killed when the last clone of this
    /// client is dropped (the runtime reaps it).
    ///
    /// # Errors
    /// [`ConnectError`] when the process does not start or the handshake fails.
    pub async fn spawn(command: R::Command, config: ClientConfig) -> Result<Self, ConnectError> {
        Self::spawn_with(command, config, ClientOptions::default()).await
    }

    /// [`spawn`](Self::spawn), with an input handler, a notification channel, and the
    /// child's stderr captured line by line if [`ClientOptions::stderr`] is set (else it
    /// passes through)
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub async fn spawn_with(
        command: R::Command,
        config: ClientConfig,
        options: ClientOptions<R>,
    ) -> Result<Self, ConnectError> {
        let program = R::program(&command);
        let started = R::start_child(command, options.stderr.clone())
            .map_err(|e| ConnectError::spawn(&program, e))?;
        let mut child = started.child;
        let span = crate::trace::child(&program, started.pid);
        let connect = crate::driver::connect(started.stdout, started.stdin, config, &options);
        match connect.instrument(span).await {
            Ok(mut client) => {
                client.child = Some(Arc::new(Mutex::new(child)));
                Ok(client)
            }
            Err(e) => {
                // A server that exits at once reads as such, with its status: a moment's
                // wait when the connection broke (it is probably exiting), none when it
                // refused the handshake (it is alive).
                let wait = match e {
                    ConnectError::Transport(_) => Duration::from_secs(1),
                    _ => Duration::ZERO,
                };
                match R::child_exit(&mut child, wait).await {
                    Some(status) => Err(ConnectError::Exited { program, status }),
                    None => Err(e),
                }
            }
        }
    }
}

#[cfg(feature = "http")]
impl<R: crate::io::HttpIo> Client<R> {
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
    pub async fn connect_http(
        url: &str,
        config: ClientConfig,
        options: ClientOptions<R>,
    ) -> Result<Self, ConnectError> {
        R::connect_http(url, config, &options).await
    }
}
