//! The client over Streamable HTTP: the kernel's actor owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (`mcp_sansio_runtime::http_client`);
//! hyper tasks carry each request the transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_sansio::ClientConfig;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
#[cfg(feature = "auth")]
use mcp_sansio_runtime::http::client_transport;
use mcp_sansio_runtime::http::{Requests, header_list};
use mcp_sansio_runtime::http_client::net_channel;
use mcp_sansio_runtime::http_options::ProxyTarget;
use mcp_sansio_runtime::net_error;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::task::AbortHandle;

use crate::client::ConnectError;
use crate::runtime::{ClientOptions, Tokio};
#[cfg(feature = "auth")]
use http_body_util::Limited;
#[cfg(feature = "auth")]
use mcp_sansio::auth::{AuthRequest, AuthResponse};
#[cfg(feature = "auth")]
use mcp_sansio_runtime::auth::{MAX_RESPONSE_BODY, REQUEST_TIMEOUT};

/// The hyper client every request goes through
pub(crate) type Net = hyper_util::client::legacy::Client<Connector, Full<Bytes>>;

/// Opens the client's connections: TCP with `TCP_NODELAY` (to the server, or to the proxy
/// the options name), for an `https://` URI through a proxy a `CONNECT` tunnel, then TLS
/// (the kernel's client configuration: SNI, the server's certificate and name verified),
/// all within the connect timeout; every failure is one sentence ([`Worded`])
#[derive(Clone)]
pub(crate) struct Connector {
    /// The endpoint's URL, for messages (empty: the request's URI)
    url: Arc<str>,
    /// The forward proxy, if the options name one for this URL
    proxy: Option<ProxyTarget>,
    connect_timeout: Duration,
    #[cfg(feature = "tls")]
    tls: Option<tokio_rustls::TlsConnector>,
}

impl Connector {
    /// A connector for `http://` only
    pub(crate) fn plain() -> Self {
        Self {
            url: Arc::from(""),
            proxy: None,
            connect_timeout: mcp_sansio_runtime::http_options::DEFAULT_CONNECT_TIMEOUT,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// The connector of the headless user agent: `https://` too (with the `tls` feature),
    /// trusting the platform's roots
    #[cfg(feature = "auth")]
    pub(crate) fn platform() -> Self {
        #[cfg(feature = "tls")]
        if let Ok(connector) = Self::with_tls(&Default::default()) {
            return connector;
        }
        Self::plain()
    }

    /// A connector for both schemes, trusting what `options` say
    #[cfg(feature = "tls")]
    fn with_tls(options: &mcp_sansio_runtime::http_options::HttpOptions) -> Result<Self, String> {
        let config = mcp_sansio_runtime::tls::client_config(options)?;
        Ok(Self {
            tls: Some(tokio_rustls::TlsConnector::from(config)),
            ..Self::plain()
        })
    }

    /// This connector for `url` (named in its errors), through `proxy`, within `limit`
    fn reaching(mut self, url: &str, proxy: Option<ProxyTarget>, limit: Duration) -> Self {
        self.url = Arc::from(url);
        self.proxy = proxy;
        self.connect_timeout = limit;
        self
    }

    /// Opens a connection for `uri`, without the time limit
    async fn open(self, uri: hyper::Uri, url: String) -> io::Result<Stream> {
        let https = uri.scheme_str() == Some("https");
        let host = uri.host().unwrap_or_default();
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = if bare.contains(':') {
            format!("[{bare}]:{port}")
        } else {
            format!("{bare}:{port}")
        };
        let stream = match &self.proxy {
            Some(proxy) => {
                tcp(&proxy.host, proxy.port, |e| {
                    net_error::proxy_unreachable(proxy, &url, e)
                })
                .await?
            }
            None => tcp(&bare, port, |e| net_error::could_not_connect(&url, e)).await?,
        };
        if !https {
            return Ok(Stream::Plain(stream, self.proxy.is_some()));
        }
        #[cfg(feature = "tls")]
        {
            let mut stream = stream;
            if let Some(proxy) = &self.proxy {
                tunnel(&mut stream, proxy, &authority).await?;
            }
            let tls = self
                .tls
                .ok_or_else(|| io::Error::other("https:// is not set up"))?;
            let name = rustls_pki_types::ServerName::try_from(bare)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            match tls.connect(name, stream).await {
                Ok(session) => Ok(Stream::Tls(Box::new(session))),
                Err(e) => {
                    let why = mcp_sansio_runtime::tls::explain(&e, &authority)
                        .unwrap_or_else(|| format!("TLS with {authority}: {e}"));
                    Err(net_error::io_worded(e.kind(), why))
                }
            }
        }
        #[cfg(not(feature = "tls"))]
        {
            let _ = (stream, authority);
            Err(io::Error::other(NEEDS_TLS))
        }
    }
}

/// A TCP connection to `host:port` with `TCP_NODELAY`, trying each of its addresses; a
/// failure worded by `refused` (given the OS's cause), or `could not resolve HOST`
async fn tcp(
    host: &str,
    port: u16,
    refused: impl Fn(&dyn std::fmt::Display) -> String,
) -> io::Result<TcpStream> {
    let addrs = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| net_error::io_worded(e.kind(), net_error::could_not_resolve(host, &e)))?;
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(tcp) => {
                let _ = tcp.set_nodelay(true);
                return Ok(tcp);
            }
            Err(e) => last = Some(e),
        }
    }
    let e = last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"));
    Err(net_error::io_worded(e.kind(), refused(&e)))
}

/// Opens a `CONNECT` tunnel to `authority` through `proxy` on `stream`
#[cfg(feature = "tls")]
async fn tunnel(stream: &mut TcpStream, proxy: &ProxyTarget, authority: &str) -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let worded = |text: String| net_error::io_worded(io::ErrorKind::Other, text);
    let request = mcp_sansio_runtime::tunnel::connect_request(authority, proxy);
    stream
        .write_all(&request)
        .await
        .map_err(|e| worded(format!("the proxy {}: {e}", proxy.url)))?;
    // Byte by byte: nothing after the reply's head may be taken from the target's bytes.
    let mut reply = Vec::new();
    loop {
        let mut byte = [0u8; 1];
        let n = stream
            .read(&mut byte)
            .await
            .map_err(|e| worded(format!("the proxy {}: {e}", proxy.url)))?;
        if n == 0 {
            return Err(worded(mcp_sansio_runtime::tunnel::closed(proxy, authority)));
        }
        reply.push(byte[0]);
        if reply.ends_with(b"\r\n\r\n") || reply.ends_with(b"\n\n") {
            return match mcp_sansio_runtime::tunnel::read_reply(&reply, proxy, authority) {
                Ok(Some(_)) => Ok(()),
                Ok(None) => continue,
                Err(why) => Err(worded(why)),
            };
        }
    }
}

/// A connection of the client: plain TCP, or TLS over it
pub(crate) enum Stream {
    /// TCP, and whether it goes to a forward proxy (then requests are in absolute form)
    Plain(TcpStream, bool),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match self {
            Self::Plain(tcp, proxied) => tcp.connected().proxy(*proxied),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.get_ref().0.connected(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp, _) => Pin::new(tcp).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(tcp, _) => Pin::new(tcp).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(tcp, _) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(tcp, _) => tcp.is_write_vectored(),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp, _) => Pin::new(tcp).poll_flush(cx),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp, _) => Pin::new(tcp).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

/// How a connection is opened: what hyper's client needs of a connector
type Connecting = Pin<Box<dyn Future<Output = io::Result<TokioIo<Stream>>> + Send>>;

impl tower_service::Service<hyper::Uri> for Connector {
    type Response = TokioIo<Stream>;
    type Error = io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: hyper::Uri) -> Connecting {
        let connector = self.clone();
        let url = match &*self.url {
            "" => uri.to_string(),
            url => url.to_owned(),
        };
        let limit = self.connect_timeout;
        Box::pin(async move {
            match tokio::time::timeout(limit, connector.open(uri, url.clone())).await {
                Ok(stream) => Ok(TokioIo::new(stream?)),
                Err(_) => Err(net_error::io_worded(
                    io::ErrorKind::TimedOut,
                    net_error::connect_timed_out(&url, limit),
                )),
            }
        })
    }
}

/// The error of an `https://` URL without the `tls` feature
#[cfg(not(feature = "tls"))]
const NEEDS_TLS: &str = "https:// needs the `tls` feature of mcp-sansio-tokio";

/// From the request tasks to the actor
type FromNet = mcp_sansio_runtime::http::FromNet<Bytes>;
/// Where the request tasks report
type NetTx = mcp_sansio_runtime::chan::Sender<FromNet>;

/// Connects to `url` (`http://`, or `https://` with the `tls` feature) and waits for the
/// handshake or discovery
pub(crate) async fn connect(
    url: &str,
    config: ClientConfig,
    options: &ClientOptions,
) -> Result<mcp_sansio_runtime::client::Client<Tokio>, ConnectError> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| ConnectError::Url(format!("{url}: {e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(ConnectError::Url(format!(
            "{url}: only http:// and https:// URLs are supported"
        )));
    }
    #[cfg(not(feature = "tls"))]
    if uri.scheme_str() == Some("https") {
        return Err(ConnectError::Url(format!("{url}: {NEEDS_TLS}")));
    }
    #[cfg(feature = "tls")]
    let connector = match uri.scheme_str() {
        Some("https") => Connector::with_tls(&options.http).map_err(ConnectError::Options)?,
        _ => Connector::plain(),
    };
    #[cfg(not(feature = "tls"))]
    let connector = Connector::plain();
    let scheme = uri.scheme_str().unwrap_or("http");
    let host = uri.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let proxy = options
        .http
        .proxy
        .for_target(scheme, host)
        .map_err(|e| ConnectError::Options(e.to_string()))?;
    // Plain HTTP through a proxy: every request carries the proxy's credentials.
    let proxy_authorization = proxy
        .as_ref()
        .filter(|_| scheme == "http")
        .and_then(|p| p.authorization.clone());
    // A forward proxy may close a connection after each answer, racing hyper's reuse of it
    // from the pool (`SendRequest` errors): through a proxy, a connection per request, as
    // the other bindings do.
    let proxied = proxy.is_some();
    let connector = connector.reaching(url, proxy, options.http.connect_timeout);
    let (from_net, net_rx) = net_channel();
    #[cfg(feature = "auth")]
    let (transport, user_agent) =
        client_transport(options.auth.as_ref(), &uri.to_string(), "mcp-sansio-tokio");
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let tasks = Tasks {
        net: {
            let mut builder = Hyper::builder(TokioExecutor::new());
            if proxied {
                builder.pool_max_idle_per_host(0);
            }
            builder.build(connector)
        },
        uri,
        url: url.to_owned(),
        proxy_authorization,
        request_timeout: options.http.request_timeout,
        from_net,
        #[cfg(feature = "auth")]
        user_agent,
    };
    mcp_sansio_runtime::http_client::connect(config, transport, tasks, net_rx, options).await
}

/// Performs requests on hyper tasks
struct Tasks {
    net: Net,
    uri: hyper::Uri,
    /// The endpoint's URL, for errors
    url: String,
    /// `Proxy-Authorization` on every request (plain HTTP through a proxy)
    proxy_authorization: Option<String>,
    /// How long a request may wait for its response head
    request_timeout: Duration,
    from_net: NetTx,
    #[cfg(feature = "auth")]
    user_agent: Option<mcp_sansio_runtime::auth::asynchronous::UserAgent>,
}

impl Tasks {
    fn request(&self, planned: HttpRequest) -> Result<Request<Full<Bytes>>, hyper::http::Error> {
        let body = Full::new(Bytes::from(planned.body));
        let method = planned.method.as_str();
        let mut headers = planned.headers;
        if let Some(authorization) = &self.proxy_authorization {
            headers.push(("Proxy-Authorization".into(), authorization.clone()));
        }
        mcp_sansio_runtime::http::request(method, self.uri.clone(), headers, body)
    }
}

impl Requests for Tasks {
    type Task = AbortHandle;

    fn start(&mut self, planned: HttpRequest) -> Result<AbortHandle, String> {
        let stream = planned.stream;
        let tx = self.from_net.clone();
        let request = self.request(planned);
        let net = self.net.clone();
        let url = self.url.clone();
        let limit = self.request_timeout;
        Ok(tokio::spawn(async move {
            let response = match request {
                // The limit runs from the request's start: a fresh connection for it comes
                // first, within its own connect timeout.
                Ok(request) => match tokio::time::timeout(limit, net.request(request)).await {
                    Ok(response) => response.map_err(|e| failure(&e, &url)),
                    Err(_) => Err(net_error::no_response_head(&url, limit)),
                },
                Err(e) => Err(e.to_string()),
            };
            match response {
                Ok(response) => forward(stream, response, &tx).await,
                Err(error) => {
                    let _ = tx.try_send(FromNet::Failed { stream, error });
                }
            }
        })
        .abort_handle())
    }

    #[cfg(not(feature = "auth"))]
    fn start_auth(&mut self, _: AuthAction) -> Result<(), String> {
        Err("OAuth needs the `auth` feature of mcp-sansio-tokio".into())
    }

    #[cfg(feature = "auth")]
    fn start_auth(&mut self, action: AuthAction) -> Result<(), String> {
        let tx = self.from_net.clone();
        match action {
            AuthAction::Fetch(request) => {
                let net = self.net.clone();
                tokio::spawn(async move {
                    let response = perform(&net, request).await;
                    let _ = tx.try_send(FromNet::Auth(response));
                });
            }
            AuthAction::Authorize { url } => {
                let agent = self.user_agent.clone();
                tokio::spawn(async move {
                    let result =
                        mcp_sansio_runtime::auth::asynchronous::authorize(agent, url).await;
                    let _ = tx.try_send(FromNet::Redirect(result));
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn abort(&mut self, task: AbortHandle) {
        task.abort();
    }
}

/// Why a request failed, in one sentence: the connector's words (the OS's cause, the proxy's
/// refusal, what the TLS handshake refused, the time limit), else the OS's cause under
/// hyper's wrappers
fn failure(error: &hyper_util::client::legacy::Error, url: &str) -> String {
    if let Some(why) = net_error::worded(error) {
        return why;
    }
    #[cfg(feature = "tls")]
    if let Some(why) = mcp_sansio_runtime::tls::explain(error, url) {
        return why;
    }
    match net_error::io_cause(error) {
        Some(io) if error.is_connect() => net_error::could_not_connect(url, io),
        _ => error.to_string(),
    }
}

/// Sends a response's head and body pieces to the actor
async fn forward(no: StreamId, response: hyper::Response<Incoming>, tx: &NetTx) {
    let status = response.status().as_u16();
    let headers = header_list(response.headers());
    if tx
        .try_send(FromNet::Head {
            stream: no,
            status,
            headers,
        })
        .is_err()
    {
        return;
    }
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        if let Ok(data) = frame.into_data()
            && tx.try_send(FromNet::Chunk { stream: no, data }).is_err()
        {
            return;
        }
    }
    let _ = tx.try_send(FromNet::End { stream: no });
}

/// Performs one authorization request (HTTPS too, with the `tls` feature); a transport failure or timeout
/// becomes [`AuthResponse::failed`]
#[cfg(feature = "auth")]
pub(crate) async fn perform(net: &Net, request: AuthRequest) -> AuthResponse {
    let body = Full::new(Bytes::from(request.body));
    let Ok(http_request) = mcp_sansio_runtime::http::request(
        request.method.as_str(),
        request.url.as_str(),
        request.headers,
        body,
    ) else {
        return AuthResponse::failed();
    };
    let fetch = async {
        let response = net.request(http_request).await.ok()?;
        let status = response.status().as_u16();
        let headers = header_list(response.headers());
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BODY)
            .collect()
            .await
            .ok()?
            .to_bytes()
            .to_vec();
        Some(AuthResponse::new(status, headers, body))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, fetch)
        .await
        .ok()
        .flatten()
        .unwrap_or_else(AuthResponse::failed)
}
