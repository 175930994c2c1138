//! What the layer asks of a runtime's IO, beside [`Runtime`]: its byte streams, stdin and
//! stdout, child processes ([`RuntimeIo`]), and its HTTP stack ([`HttpIo`], [`TlsIo`])
//!
//! A binding implements these for the same unit type as [`Runtime`]; the layer's
//! [`Server`](crate::Server) and [`Client`](crate::Client) serve and connect through them.

use std::future::Future;

use crate::runtime::Runtime;

/// The IO of a runtime: its byte streams, this process's stdin and stdout, and child
/// processes
///
/// A binding implements it for the same unit type as [`Runtime`]; the layer's
/// [`Server`](crate::Server) and [`Client`](crate::Client) then serve and connect through
/// it (`Server::serve`, `serve_stdio`, `Client::connect`, `spawn`). What the layer asks is
/// only the IO: everything done with the bytes once they arrive is the layer's.
pub trait RuntimeIo: Runtime {
    /// One of the runtime's byte streams (a reader or a writer) as the layer's
    /// (`futures-io`'s [`AsyncRead`](crate::driver::AsyncRead) and
    /// [`AsyncWrite`](crate::driver::AsyncWrite)): an adapter for tokio's, `T` itself for
    /// runtimes that use `futures-io`
    type Io<T>;
    /// Wraps one of the runtime's byte streams
    fn io<T>(stream: T) -> Self::Io<T>;

    /// Serves one connection of `server` over this process's stdin and stdout
    fn serve_stdio(server: &crate::server::ServerCore<Self>) -> impl Future<Output = ()> + Send;

    /// The runtime's description of a process to start (`tokio::process::Command`)
    type Command: Send + 'static;
    /// A started child process; dropping it kills the process
    type Child: Send + 'static;
    /// The child's stdin, as the layer's writer
    type ChildIn: crate::driver::AsyncWrite + Unpin + Send + 'static;
    /// The child's stdout, as the layer's reader
    type ChildOut: crate::driver::AsyncRead + Unpin + Send + 'static;

    /// Starts `command` with its stdin and stdout piped, killed when the [`Child`](Self::Child)
    /// is dropped; its stderr passes through unless `stderr` is given, which then gets its
    /// lines one by one until it closes
    ///
    /// # Errors
    /// The process did not start.
    fn start_child(
        command: Self::Command,
        stderr: Option<Self::Sender<String>>,
    ) -> std::io::Result<StartedChild<Self>>;

    /// The program `command` starts, for messages and the child's span
    fn program(command: &Self::Command) -> String;

    /// Waits up to `wait` for the child to exit; its exit status in words if it did
    fn child_exit(
        child: &mut Self::Child,
        wait: std::time::Duration,
    ) -> impl Future<Output = Option<String>> + Send;
}

/// A child process [`RuntimeIo::start_child`] started
#[derive(Debug)]
pub struct StartedChild<R: RuntimeIo> {
    /// The process itself (dropping it kills it)
    pub child: R::Child,
    /// Its process id, when the OS gave one
    pub pid: Option<u32>,
    /// Its stdin
    pub stdin: R::ChildIn,
    /// Its stdout
    pub stdout: R::ChildOut,
}

/// Streamable HTTP serving and connecting of a runtime: the binding's HTTP stack
///
/// Implemented next to [`RuntimeIo`] by a binding with an HTTP stack; the layer's
/// `Server::serve_http*`, `Server::http_endpoint` and `Client::connect_http` go through it.
/// The rules of the protocol are the core's and the actors are the layer's
/// ([`http_server`](crate::http_server), [`http_client`](crate::http_client)): a binding
/// moves bytes between its sockets and those actors.
#[cfg(feature = "http")]
pub trait HttpIo: RuntimeIo {
    /// A running HTTP server: its address, and the way to stop it
    type HttpServerHandle: Send + 'static;
    /// The Streamable HTTP endpoint of a server, to mount in an app of the user's own
    type HttpEndpoint;
    /// What an HTTPS server accepts its connections with (an uninhabited type without TLS)
    type Tls: Send + 'static;

    /// Starts serving `server` at `addr` (with the protected server's gate and TLS when
    /// given); returns once the socket is bound
    ///
    /// # Errors
    /// Binding the socket failed.
    fn serve_http(
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
        server: &crate::server::ServerCore<Self>,
        gate: Option<crate::http::Gate>,
        tls: Option<Self::Tls>,
    ) -> impl Future<Output = std::io::Result<Self::HttpServerHandle>> + Send;

    /// The endpoint of `server` under `config`, its actor started on the runtime
    fn http_endpoint(
        server: &crate::server::ServerCore<Self>,
        config: mcp_sansio::http::HttpConfig,
    ) -> Self::HttpEndpoint;

    /// Connects to a Streamable HTTP endpoint and waits for the handshake or discovery
    ///
    /// # Errors
    /// As [`Client::connect_http`](crate::Client::connect_http).
    fn connect_http(
        url: &str,
        config: mcp_sansio::ClientConfig,
        options: &crate::client::ClientOptions<Self>,
    ) -> impl Future<Output = Result<crate::Client<Self>, crate::client::ConnectError>> + Send;
}

/// HTTPS serving of a runtime's HTTP stack
#[cfg(feature = "tls")]
pub trait TlsIo: HttpIo {
    /// The acceptor of an HTTPS server presenting `identity`
    fn tls(identity: &crate::tls::TlsIdentity) -> Self::Tls;
}

/// What a binding built without TLS names as its [`HttpIo::Tls`]: no value exists, so no
/// server of it serves HTTPS
#[cfg(feature = "http")]
#[derive(Clone, Debug)]
pub enum NoTls {}
