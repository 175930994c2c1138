//! tokio's IO as the runtime layer asks for it: its byte streams, stdin and stdout, child
//! processes ([`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)), and its HTTP stack, hyper
//! ([`HttpIo`](mcp_sansio_runtime::HttpIo), [`TlsIo`](mcp_sansio_runtime::TlsIo))

use std::io;
use std::process::Stdio;
use std::time::Duration;

use mcp_sansio_runtime::StartedChild;
use mcp_sansio_runtime::server::ServerCore;
use tokio::sync::mpsc;

use crate::runtime::{Compat, Tokio};

impl mcp_sansio_runtime::RuntimeIo for Tokio {
    type Io<T> = Compat<T>;
    fn io<T>(stream: T) -> Compat<T> {
        Compat(stream)
    }

    async fn serve_stdio(server: &ServerCore<Self>) {
        let server = crate::Server::from(server.clone());
        #[cfg(unix)]
        {
            let (input, output) = stdio::pipes();
            match (input, output) {
                (Some(i), Some(o)) => return server.serve(i, o).await,
                (Some(i), None) => return server.serve(i, tokio::io::stdout()).await,
                (None, Some(o)) => return server.serve(tokio::io::stdin(), o).await,
                (None, None) => {}
            }
        }
        server.serve(tokio::io::stdin(), tokio::io::stdout()).await;
    }

    type Command = tokio::process::Command;
    type Child = tokio::process::Child;
    type ChildIn = Compat<tokio::process::ChildStdin>;
    type ChildOut = Compat<tokio::process::ChildStdout>;

    fn start_child(
        mut command: tokio::process::Command,
        stderr: Option<mpsc::UnboundedSender<String>>,
    ) -> io::Result<StartedChild<Self>> {
        let piped = if stderr.is_some() {
            Stdio::piped()
        } else {
            Stdio::inherit()
        };
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(piped)
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        if let (Some(lines), Some(err)) = (stderr, child.stderr.take()) {
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
        Ok(StartedChild {
            pid: child.id(),
            child,
            stdin: Compat(stdin),
            stdout: Compat(stdout),
        })
    }

    fn program(command: &tokio::process::Command) -> String {
        command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned()
    }

    async fn child_exit(child: &mut tokio::process::Child, wait: Duration) -> Option<String> {
        match tokio::time::timeout(wait, child.wait()).await {
            Ok(Ok(status)) => Some(status.to_string()),
            _ => None,
        }
    }
}

#[cfg(feature = "http")]
impl mcp_sansio_runtime::HttpIo for Tokio {
    type HttpServerHandle = crate::HttpServerHandle;
    type HttpEndpoint = crate::HttpEndpoint;
    type Tls = crate::http_server::Tls;

    async fn serve_http(
        addr: std::net::SocketAddr,
        config: mcp_sansio::http::HttpConfig,
        server: &ServerCore<Self>,
        gate: Option<mcp_sansio_runtime::http::Gate>,
        tls: Option<Self::Tls>,
    ) -> io::Result<crate::HttpServerHandle> {
        crate::http_server::serve(addr, config, server, gate, tls).await
    }

    fn http_endpoint(
        server: &ServerCore<Self>,
        config: mcp_sansio::http::HttpConfig,
    ) -> crate::HttpEndpoint {
        crate::HttpEndpoint::start(server, config).0
    }

    async fn connect_http(
        url: &str,
        config: mcp_sansio::ClientConfig,
        options: &crate::ClientOptions,
    ) -> Result<crate::Client, mcp_sansio_runtime::client::ConnectError> {
        crate::http_client::connect(url, config, options).await
    }
}

#[cfg(feature = "tls")]
impl mcp_sansio_runtime::TlsIo for Tokio {
    fn tls(identity: &crate::TlsIdentity) -> Self::Tls {
        tokio_rustls::TlsAcceptor::from(identity.server_config())
    }
}

/// stdin and stdout as pipes the event loop drives, where they are pipes
#[cfg(unix)]
mod stdio {
    use tokio::net::unix::pipe;

    /// stdin as a pipe receiver and stdout as a pipe sender, each where it is a pipe (see
    /// `mcp_sansio_runtime::stdio`); the runtime puts each in non-blocking mode
    pub(super) fn pipes() -> (Option<pipe::Receiver>, Option<pipe::Sender>) {
        let input = mcp_sansio_runtime::stdio::stdin_pipe()
            .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
        let output = mcp_sansio_runtime::stdio::stdout_pipe()
            .and_then(|fd| pipe::Sender::from_owned_fd(fd).ok());
        (input, output)
    }
}
