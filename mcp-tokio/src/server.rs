//! The server: register tools, resources and prompts as async functions, then serve over
//! stdio or any byte stream
//!
//! The catalog, argument validation, pagination, caching hints and every protocol rule come
//! from `mcp-sansio`; the builder, the handlers' [`Context`] and the dispatcher are the async
//! bindings' shared ones (`mcp-sansio-shared`); this module only serves connections.

#[cfg(feature = "http")]
use std::io;
#[cfg(feature = "http")]
use std::net::SocketAddr;
use std::sync::Arc;

#[cfg(feature = "http")]
use mcp_sansio::http::HttpConfig;
use mcp_sansio::{ServerConfig, Session};
use mcp_sansio_shared::server::{AsyncRuntime, ServerCore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use crate::driver::{self, Dispatch, Tokio};
#[cfg(feature = "http")]
use crate::http_server::HttpServerHandle;

/// What a handler can do besides returning its result
pub type Context = mcp_sansio_shared::server::Context<Tokio>;

/// Builds a [`Server`]
pub type ServerBuilder = mcp_sansio_shared::server::ServerBuilder<Tokio>;

impl AsyncRuntime for Tokio {
    type ReplyRx<T: Send + 'static> = oneshot::Receiver<T>;
    type HandlerRx = driver::HandlerRx;
    type Server = Server;

    fn handler_channel() -> (Self::HandlerTx, driver::HandlerRx) {
        mpsc::unbounded_channel()
    }

    fn oneshot<T: Send + 'static>() -> (oneshot::Sender<T>, oneshot::Receiver<T>) {
        oneshot::channel()
    }
    async fn recv<T: Send + 'static>(rx: oneshot::Receiver<T>) -> Option<T> {
        rx.await.ok()
    }
    fn spawn_run<F: Future<Output = ()> + Send + 'static>(future: F) -> Self::Run {
        tokio::spawn(future).abort_handle()
    }
}

/// A built server; serve as many connections as you like
#[derive(Clone)]
pub struct Server {
    core: ServerCore<Tokio>,
}

impl From<ServerCore<Tokio>> for Server {
    fn from(core: ServerCore<Tokio>) -> Self {
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

    /// Serves one connection until the client closes it
    pub async fn serve<R, W>(&self, reader: R, writer: W)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let session = Session::server(Arc::clone(&self.core.config), driver::now());
        let (_keep, commands) = mpsc::channel(1);
        let dispatch: Arc<dyn Dispatch> = self.core.dispatch.clone();
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
        self.serve_http_inner(addr, config, None).await
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
        self.serve_http_inner(addr, config, Some(protection)).await
    }

    #[cfg(feature = "http")]
    async fn serve_http_inner(
        &self,
        addr: SocketAddr,
        config: HttpConfig,
        protection: Option<crate::http_server::Protection>,
    ) -> io::Result<HttpServerHandle> {
        let dispatch: Arc<dyn Dispatch> = self.core.dispatch.clone();
        let tools = self.core.dispatch.catalog().tools().cloned().collect();
        let server_config = Arc::clone(&self.core.config);
        crate::http_server::serve(addr, config, server_config, dispatch, tools, protection).await
    }

    /// Serves one connection over this process's stdin and stdout
    ///
    /// On Unix, when stdin and stdout are pipes (as when an MCP client starts this process),
    /// they are read and written directly by the runtime's event loop; otherwise (a terminal,
    /// a file) through tokio's `stdin()`/`stdout()`, whose every read and write is a trip to
    /// a blocking thread.
    pub async fn serve_stdio(&self) {
        #[cfg(unix)]
        {
            let (input, output) = stdio::pipes();
            match (input, output) {
                (Some(i), Some(o)) => return self.serve(i, o).await,
                (Some(i), None) => return self.serve(i, tokio::io::stdout()).await,
                (None, Some(o)) => return self.serve(tokio::io::stdin(), o).await,
                (None, None) => {}
            }
        }
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await;
    }
}

/// stdin and stdout as pipes the event loop drives, where they are pipes
#[cfg(unix)]
mod stdio {
    use tokio::net::unix::pipe;

    /// stdin as a pipe receiver and stdout as a pipe sender, each where it is a pipe (see
    /// `mcp_sansio_shared::stdio`); the runtime puts each in non-blocking mode
    pub(super) fn pipes() -> (Option<pipe::Receiver>, Option<pipe::Sender>) {
        let input = mcp_sansio_shared::stdio::stdin_pipe()
            .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
        let output = mcp_sansio_shared::stdio::stdout_pipe()
            .and_then(|fd| pipe::Sender::from_owned_fd(fd).ok());
        (input, output)
    }
}
