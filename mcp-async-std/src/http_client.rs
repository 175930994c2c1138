//! The client over Streamable HTTP: the kernel's actor owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (`mcp_sansio_runtime::http_client`);
//! a task per request carries what the transport plans over HTTP/1.1 ([`crate::h1`]) on
//! `async-net`, keeping idle connections for the next request
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use async_channel::Sender;
use async_net::TcpStream;
use mcp_sansio::ClientConfig;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
use mcp_sansio_runtime::http::Requests;
#[cfg(feature = "auth")]
use mcp_sansio_runtime::http::client_transport;
use mcp_sansio_runtime::http_client::net_channel;
use mcp_sansio_runtime::http_options::ProxyTarget;
use mcp_sansio_runtime::net_error;
use smol::Task;

use crate::client::ConnectError;
use crate::h1::{self, Body, Conn, Framing, ReadError, Target};
use crate::runtime::{AsyncStd, ClientOptions};
#[cfg(feature = "auth")]
use mcp_sansio::auth::{AuthRequest, AuthResponse};
#[cfg(feature = "auth")]
use mcp_sansio_runtime::auth::{MAX_RESPONSE_BODY, REQUEST_TIMEOUT};

/// From the request tasks to the actor
type FromNet = mcp_sansio_runtime::http::FromNet<Vec<u8>>;

/// Connects to `target` and waits for the handshake or discovery
pub(crate) async fn connect_client(
    url: &str,
    target: Target,
    config: ClientConfig,
    options: &ClientOptions,
) -> Result<mcp_sansio_runtime::client::Client<AsyncStd>, ConnectError> {
    #[cfg(feature = "tls")]
    let tls = match target.tls {
        true => Some(
            mcp_sansio_runtime::tls::client_config(&options.http)
                .map(futures_rustls::TlsConnector::from)
                .map_err(ConnectError::Options)?,
        ),
        false => None,
    };
    let scheme = if target.tls { "https" } else { "http" };
    let proxy = options
        .http
        .proxy
        .for_target(scheme, &target.host)
        .map_err(|e| ConnectError::Options(e.to_string()))?;
    let (from_net, net_rx) = net_channel();
    #[cfg(feature = "auth")]
    let (transport, user_agent) =
        client_transport(options.auth.as_ref(), &target.url(), "mcp-sansio-async-std");
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let tasks = Tasks {
        net: Net::new(
            target,
            Reach {
                url: url.to_owned(),
                proxy,
                connect_timeout: options.http.connect_timeout,
                request_timeout: options.http.request_timeout,
            },
            #[cfg(feature = "tls")]
            tls,
        ),
        #[cfg(feature = "auth")]
        auth_tasks: Vec::new(),
        from_net,
        #[cfg(feature = "auth")]
        user_agent,
    };
    mcp_sansio_runtime::http_client::connect(config, transport, tasks, net_rx, options).await
}

/// How the connections reach the server, and the time limits on the way
struct Reach {
    /// The endpoint's URL, for messages
    url: String,
    /// The forward proxy, if the options name one for this URL
    proxy: Option<ProxyTarget>,
    /// TCP, the proxy tunnel and TLS
    connect_timeout: Duration,
    /// From a request's last byte sent to its response head
    request_timeout: Duration,
}

/// How long writing a request may take
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a request failed, and whether it may be sent again on a fresh connection
struct Failure {
    error: String,
    /// A reused connection failed before any of the response arrived (the server had
    /// closed it while idle)
    retry: bool,
}

/// HTTP/1.1 connections to one server: idle ones are kept for the next request
#[derive(Clone)]
struct Net {
    target: Arc<Target>,
    reach: Arc<Reach>,
    /// For an `https://` target
    #[cfg(feature = "tls")]
    tls: Option<futures_rustls::TlsConnector>,
    idle: Arc<Mutex<Vec<Conn<Stream>>>>,
}

impl Net {
    fn new(
        target: Target,
        reach: Reach,
        #[cfg(feature = "tls")] tls: Option<futures_rustls::TlsConnector>,
    ) -> Self {
        Self {
            target: Arc::new(target),
            reach: Arc::new(reach),
            #[cfg(feature = "tls")]
            tls,
            idle: Arc::default(),
        }
    }

    /// An idle connection the server has not closed, or `None`
    async fn idle(&self) -> Option<Conn<Stream>> {
        loop {
            let mut conn = self.idle.lock().ok()?.pop()?;
            // An idle connection has nothing to read: data or the end means it is done.
            if futures_lite::future::poll_once(conn.fill()).await.is_none() {
                return Some(conn);
            }
        }
    }

    /// Keeps a connection whose exchange ended cleanly for the next request
    fn release(&self, conn: Conn<Stream>) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(conn);
        }
    }

    /// Performs one request; the head and the body pieces go to the actor as they come
    async fn perform(self, planned: HttpRequest, tx: Sender<FromNet>) {
        let stream = planned.stream;
        let method = planned.method.as_str();
        // Plain HTTP through a proxy: the absolute form, and the proxy's credentials
        let proxied = self.reach.proxy.as_ref().filter(|_| !self.target.tls);
        let mut headers = planned.headers.clone();
        if let Some(authorization) = proxied.and_then(|p| p.authorization.clone()) {
            headers.push(("Proxy-Authorization".into(), authorization));
        }
        let head = match self
            .target
            .head(method, &headers, planned.body.len(), false)
        {
            Ok(head) if proxied.is_some() => {
                let origin = format!("{method} {} ", self.target.path);
                let absolute = format!("{method} {} ", self.target.absolute());
                head.replacen(&origin, &absolute, 1)
            }
            Ok(head) => head,
            Err(error) => {
                let _ = tx.try_send(FromNet::Failed { stream, error });
                return;
            }
        };
        let mut message = head.into_bytes();
        message.extend_from_slice(&planned.body);
        let mut reused = self.idle().await;
        loop {
            let fresh = reused.is_none();
            let conn = match reused.take() {
                Some(conn) => conn,
                None => match self.connect().await {
                    Ok(conn) => conn,
                    Err(error) => {
                        let _ = tx.try_send(FromNet::Failed { stream, error });
                        return;
                    }
                },
            };
            match exchange(conn, method, &message, stream, &tx, &self.reach).await {
                Ok(Some(conn)) => {
                    self.release(conn);
                    return;
                }
                Ok(None) => return,
                Err(failure) if failure.retry && !fresh => {}
                Err(failure) => {
                    let error = failure.error;
                    let _ = tx.try_send(FromNet::Failed { stream, error });
                    return;
                }
            }
        }
    }
}

impl Net {
    /// A new connection to the target: TCP (to the proxy, if any), the proxy's tunnel and
    /// TLS for `https://`, within the connect timeout
    async fn connect(&self) -> Result<Conn<Stream>, String> {
        let reach = &self.reach;
        let limit = reach.connect_timeout;
        match h1::within(limit, self.open()).await {
            Some(Ok(stream)) => Ok(Conn::new(stream)),
            Some(Err(e)) => Err(e),
            None => Err(net_error::connect_timed_out(&reach.url, limit)),
        }
    }

    async fn open(&self) -> Result<Stream, String> {
        let (proxy, url) = (self.reach.proxy.as_ref(), self.reach.url.as_str());
        #[cfg(feature = "tls")]
        return open(&self.target, proxy, url, self.tls.as_ref()).await;
        #[cfg(not(feature = "tls"))]
        open(&self.target, proxy, url).await
    }
}

/// A TCP connection to `host:port` with `TCP_NODELAY`, trying each of its addresses; a
/// failure worded by `refused` (given the OS's cause), or `could not resolve HOST`
async fn tcp(
    host: &str,
    port: u16,
    refused: impl Fn(&dyn std::fmt::Display) -> String,
) -> Result<TcpStream, String> {
    let addrs = async_net::resolve((host, port))
        .await
        .map_err(|e| net_error::could_not_resolve(host, &e))?;
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(tcp) => {
                // A request goes out in one write, but must not wait for a delayed ACK either
                let _ = tcp.set_nodelay(true);
                return Ok(tcp);
            }
            Err(e) => last = Some(e),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"));
    Err(refused(&e))
}

/// Opens a `CONNECT` tunnel to `authority` through `proxy` on `tcp`
#[cfg(feature = "tls")]
async fn tunnel(tcp: &mut TcpStream, proxy: &ProxyTarget, authority: &str) -> Result<(), String> {
    use futures_lite::{AsyncReadExt, AsyncWriteExt};
    let request = mcp_sansio_runtime::tunnel::connect_request(authority, proxy);
    tcp.write_all(&request)
        .await
        .map_err(|e| format!("the proxy {}: {e}", proxy.url))?;
    // Byte by byte: nothing after the reply's head may be taken from the target's bytes.
    let mut reply = Vec::new();
    loop {
        let mut byte = [0u8; 1];
        let n = tcp
            .read(&mut byte)
            .await
            .map_err(|e| format!("the proxy {}: {e}", proxy.url))?;
        if n == 0 {
            return Err(mcp_sansio_runtime::tunnel::closed(proxy, authority));
        }
        reply.push(byte[0]);
        if (reply.ends_with(b"\r\n\r\n") || reply.ends_with(b"\n\n"))
            && mcp_sansio_runtime::tunnel::read_reply(&reply, proxy, authority)?.is_some()
        {
            return Ok(());
        }
    }
}

/// A new connection to `target` (through `proxy`, if any; `url` names it in errors): TCP
/// with `TCP_NODELAY`, then for `https://` the proxy's tunnel and a TLS session made by
/// `tls`
pub(crate) async fn open(
    target: &Target,
    proxy: Option<&ProxyTarget>,
    url: &str,
    #[cfg(feature = "tls")] tls: Option<&futures_rustls::TlsConnector>,
) -> Result<Stream, String> {
    let server = target.server();
    #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
    let mut tcp = match proxy {
        Some(proxy) => {
            tcp(&proxy.host, proxy.port, |e| {
                net_error::proxy_unreachable(proxy, url, e)
            })
            .await?
        }
        None => {
            tcp(&target.host, target.port, |e| {
                net_error::could_not_connect(url, e)
            })
            .await?
        }
    };
    if !target.tls {
        return Ok(Stream::Plain(tcp));
    }
    #[cfg(feature = "tls")]
    {
        if let Some(proxy) = proxy {
            tunnel(&mut tcp, proxy, &server).await?;
        }
        let tls = tls.ok_or("https:// is not set up")?;
        let name = futures_rustls::pki_types::ServerName::try_from(target.host.clone())
            .map_err(|e| format!("{server}: {e}"))?;
        match tls.connect(name, tcp).await {
            Ok(session) => Ok(Stream::Tls(Box::new(session))),
            Err(e) => Err(mcp_sansio_runtime::tls::explain(&e, &server)
                .unwrap_or_else(|| format!("TLS with {server}: {e}"))),
        }
    }
    #[cfg(not(feature = "tls"))]
    Err(format!("{server}: https:// needs the `tls` feature"))
}

/// A connection to the server: plain TCP, or TLS over it
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<futures_rustls::client::TlsStream<TcpStream>>),
}

impl futures_lite::AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl futures_lite::AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_close(cx),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_close(cx),
        }
    }
}

/// Sends `message` on `conn` and forwards the response to the actor; the connection back
/// when it can carry another request
async fn exchange(
    mut conn: Conn<Stream>,
    method: &str,
    message: &[u8],
    stream: StreamId,
    tx: &Sender<FromNet>,
    reach: &Reach,
) -> Result<Option<Conn<Stream>>, Failure> {
    match h1::within(WRITE_TIMEOUT, conn.send(message)).await {
        Some(Ok(())) => {}
        Some(Err(e)) => {
            return Err(Failure {
                error: e.to_string(),
                retry: true,
            });
        }
        None => {
            return Err(Failure {
                error: "sending the request timed out".into(),
                retry: false,
            });
        }
    }
    // Within the request timeout; the body then has no time limit (the transport cancels
    // what it gives up on by dropping this task).
    let limit = reach.request_timeout;
    let head = match h1::within(limit, conn.read_response()).await {
        Some(Ok(head)) => head,
        None => {
            return Err(Failure {
                error: net_error::no_response_head(&reach.url, limit),
                retry: false,
            });
        }
        Some(Err(e)) => {
            let retry = matches!(&e, ReadError::Io(_)) && !conn.has_buffered();
            return Err(Failure {
                error: e.to_string(),
                retry,
            });
        }
    };
    let keep_alive = h1::keep_alive(head.http11, &head.headers);
    let framing = match h1::response_framing(method, head.status, &head.headers) {
        Ok(framing) => framing,
        Err(e) => {
            return Err(Failure {
                error: e.to_string(),
                retry: false,
            });
        }
    };
    let status = head.status;
    if tx
        .try_send(FromNet::Head {
            stream,
            status,
            headers: head.headers,
        })
        .is_err()
    {
        return Ok(None);
    }
    let mut body = Body::new(framing);
    loop {
        match conn.body_piece(&mut body).await {
            Ok(Some(data)) => {
                if tx.try_send(FromNet::Chunk { stream, data }).is_err() {
                    return Ok(None);
                }
            }
            Ok(None) => break,
            // A broken body is the end the transport must know about.
            Err(_) => {
                let _ = tx.try_send(FromNet::End { stream });
                return Ok(None);
            }
        }
    }
    let _ = tx.try_send(FromNet::End { stream });
    Ok((keep_alive && body.is_done() && framing != Framing::UntilClose).then_some(conn))
}

/// Performs requests on tasks of their own
struct Tasks {
    net: Net,
    /// Authorization steps in flight (dropped, and so cancelled, when the actor ends and
    /// drops this)
    #[cfg(feature = "auth")]
    auth_tasks: Vec<Task<()>>,
    from_net: Sender<FromNet>,
    #[cfg(feature = "auth")]
    user_agent: Option<mcp_sansio_runtime::auth::asynchronous::UserAgent>,
}

impl Requests for Tasks {
    /// Dropping it closes its response
    type Task = Task<()>;

    fn start(&mut self, planned: HttpRequest) -> Result<Task<()>, String> {
        Ok(smol::spawn(
            self.net.clone().perform(planned, self.from_net.clone()),
        ))
    }

    #[cfg(not(feature = "auth"))]
    fn start_auth(&mut self, _: AuthAction) -> Result<(), String> {
        Err("OAuth needs the `auth` feature of mcp-sansio-async-std".into())
    }

    #[cfg(feature = "auth")]
    fn start_auth(&mut self, action: AuthAction) -> Result<(), String> {
        let tx = self.from_net.clone();
        self.auth_tasks.retain(|task| !task.is_finished());
        let task = match action {
            AuthAction::Fetch(request) => smol::spawn(async move {
                let response = perform(request).await;
                let _ = tx.try_send(FromNet::Auth(response));
            }),
            AuthAction::Authorize { url } => {
                let agent = self.user_agent.clone();
                smol::spawn(async move {
                    let result =
                        mcp_sansio_runtime::auth::asynchronous::authorize(agent, url).await;
                    let _ = tx.try_send(FromNet::Redirect(result));
                })
            }
            _ => return Ok(()),
        };
        self.auth_tasks.push(task);
        Ok(())
    }

    fn abort(&mut self, task: Task<()>) {
        drop(task);
    }

    fn finished(&mut self, task: Task<()>) {
        // The task is past its last message: let it hand its connection back.
        task.detach();
    }
}

/// Performs one authorization request (over TLS for `https://`, with the `tls` feature), on
/// its own connection; a transport failure, a malformed response or a timeout becomes
/// [`AuthResponse::failed`]
#[cfg(feature = "auth")]
pub(crate) async fn perform(request: AuthRequest) -> AuthResponse {
    h1::within(REQUEST_TIMEOUT, fetch(request))
        .await
        .flatten()
        .unwrap_or_else(AuthResponse::failed)
}

#[cfg(feature = "auth")]
async fn fetch(request: AuthRequest) -> Option<AuthResponse> {
    let target = Target::parse(&request.url).ok()?;
    let method = request.method.as_str();
    let mut message = target
        .head(method, &request.headers, request.body.len(), true)
        .ok()?
        .into_bytes();
    message.extend_from_slice(&request.body);
    // `https://` trusts the platform's roots (or `SSL_CERT_FILE` / `SSL_CERT_DIR`'s)
    #[cfg(feature = "tls")]
    let tls = match target.tls {
        true => Some(futures_rustls::TlsConnector::from(
            mcp_sansio_runtime::tls::client_config(&Default::default()).ok()?,
        )),
        false => None,
    };
    #[cfg(feature = "tls")]
    let stream = open(&target, None, &request.url, tls.as_ref()).await.ok()?;
    #[cfg(not(feature = "tls"))]
    let stream = open(&target, None, &request.url).await.ok()?;
    let mut conn = Conn::new(stream);
    conn.send(&message).await.ok()?;
    let head = conn.read_response().await.ok()?;
    let framing = h1::response_framing(method, head.status, &head.headers).ok()?;
    let body = conn
        .body_to_end(&mut Body::new(framing), MAX_RESPONSE_BODY)
        .await
        .ok()??;
    Some(AuthResponse::new(head.status, head.headers, body))
}
