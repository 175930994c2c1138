//! async-std's and smol's IO as the runtime layer asks for it: their byte streams, stdin
//! and stdout, child processes ([`RuntimeIo`](mcp_sansio_runtime::RuntimeIo)), and the
//! binding's HTTP/1.1 stack ([`HttpIo`](mcp_sansio_runtime::HttpIo),
//! [`TlsIo`](mcp_sansio_runtime::TlsIo))

use std::io;
use std::process::Stdio;
use std::time::Duration;

use async_channel::Sender;
use mcp_sansio_runtime::StartedChild;
use mcp_sansio_runtime::server::ServerCore;

use crate::runtime::AsyncStd;

impl mcp_sansio_runtime::RuntimeIo for AsyncStd {
    /// async-std's and smol's streams are `futures-io`'s, as the layer's
    type Io<T> = T;
    fn io<T>(stream: T) -> T {
        stream
    }

    async fn serve_stdio(server: &ServerCore<Self>) {
        let server = crate::Server::from(server.clone());
        #[cfg(unix)]
        {
            use async_io::Async;
            use std::fs::File;
            let input = mcp_sansio_runtime::stdio::stdin_pipe()
                .and_then(|fd| Async::new(File::from(fd)).ok());
            let output = mcp_sansio_runtime::stdio::stdout_pipe()
                .and_then(|fd| Async::new(File::from(fd)).ok());
            match (input, output) {
                (Some(i), Some(o)) => return server.serve(i, o).await,
                (Some(i), None) => {
                    return server.serve(i, blocking::Unblock::new(io::stdout())).await;
                }
                (None, Some(o)) => {
                    return server.serve(blocking::Unblock::new(io::stdin()), o).await;
                }
                (None, None) => {}
            }
        }
        let stdin = blocking::Unblock::new(io::stdin());
        let stdout = blocking::Unblock::new(io::stdout());
        server.serve(stdin, stdout).await;
    }

    type Command = async_process::Command;
    type Child = async_process::Child;
    type ChildIn = async_process::ChildStdin;
    type ChildOut = async_process::ChildStdout;

    fn start_child(
        mut command: async_process::Command,
        stderr: Option<Sender<String>>,
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
        Ok(StartedChild {
            pid: Some(child.id()),
            child,
            stdin,
            stdout,
        })
    }

    fn program(command: &async_process::Command) -> String {
        command.get_program().to_string_lossy().into_owned()
    }

    async fn child_exit(child: &mut async_process::Child, wait: Duration) -> Option<String> {
        futures_lite::future::or(async { child.status().await.ok() }, async {
            smol::Timer::after(wait).await;
            None
        })
        .await
        .map(|status| status.to_string())
    }
}

#[cfg(feature = "http")]
impl mcp_sansio_runtime::HttpIo for AsyncStd {
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

    /// Its actor runs on a smol task
    fn http_endpoint(
        server: &ServerCore<Self>,
        config: mcp_sansio::http::HttpConfig,
    ) -> crate::HttpEndpoint {
        let (endpoint, run) = crate::HttpEndpoint::new(config, server);
        smol::spawn(run).detach();
        endpoint
    }

    async fn connect_http(
        url: &str,
        config: mcp_sansio::ClientConfig,
        options: &crate::ClientOptions,
    ) -> Result<crate::Client, mcp_sansio_runtime::client::ConnectError> {
        use mcp_sansio_runtime::client::ConnectError;
        let target = crate::h1::Target::parse(url).map_err(ConnectError::Url)?;
        #[cfg(not(feature = "tls"))]
        if target.tls {
            return Err(ConnectError::Url(format!(
                "{url}: https:// needs the `tls` feature of mcp-sansio-async-std"
            )));
        }
        crate::http_client::connect_client(url, target, config, options).await
    }
}

#[cfg(feature = "tls")]
impl mcp_sansio_runtime::TlsIo for AsyncStd {
    fn tls(identity: &crate::TlsIdentity) -> Self::Tls {
        futures_rustls::TlsAcceptor::from(identity.server_config())
    }
}
