//! The client over Streamable HTTP: the kernel's actor owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (`mcp_sansio_shared::http_client`);
//! hyper tasks carry each request the transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_sansio::ClientConfig;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
#[cfg(feature = "auth")]
use mcp_sansio_shared::http::client_transport;
use mcp_sansio_shared::http::{Requests, header_list};
use mcp_sansio_shared::http_client::net_channel;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::task::AbortHandle;

use crate::client::ConnectError;
use crate::runtime::{ClientOptions, Tokio};

/// The hyper client every request goes through
pub(crate) type Net = hyper_util::client::legacy::Client<Connector, Full<Bytes>>;

/// The client's connector: `TCP_NODELAY` on every connection (a request written in pieces
/// must not wait for the server's delayed ACK)
fn nodelay_connector() -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    // `https://` URIs too: the TLS layer below takes them over once TCP is up.
    connector.enforce_http(false);
    connector
}

/// Opens the client's connections: TCP with `TCP_NODELAY`, then for an `https://` URI a
/// TLS session (the kernel's client configuration: SNI, the server's certificate and name
/// verified)
#[derive(Clone)]
pub(crate) struct Connector {
    tcp: HttpConnector,
    #[cfg(feature = "tls")]
    tls: Option<tokio_rustls::TlsConnector>,
}

impl Connector {
    /// A connector for `http://` only
    pub(crate) fn plain() -> Self {
        Self {
            tcp: nodelay_connector(),
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
    fn with_tls(options: &mcp_sansio_shared::http_options::HttpOptions) -> Result<Self, String> {
        let config = mcp_sansio_shared::tls::client_config(options)?;
        Ok(Self {
            tcp: nodelay_connector(),
            tls: Some(tokio_rustls::TlsConnector::from(config)),
        })
    }
}

/// A connection of the client: plain TCP, or TLS over it
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match self {
            Self::Plain(tcp) => tcp.connected(),
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
            Self::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
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
            Self::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
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
            Self::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(tcp) => tcp.is_write_vectored(),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            #[cfg(feature = "tls")]
            Self::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
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

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.tcp.poll_ready(cx).map_err(io::Error::other)
    }

    fn call(&mut self, uri: hyper::Uri) -> Connecting {
        let mut tcp = self.tcp.clone();
        #[cfg(feature = "tls")]
        let tls = self.tls.clone();
        Box::pin(async move {
            let https = uri.scheme_str() == Some("https");
            let host = uri.host().unwrap_or_default().to_owned();
            let stream = tcp.call(uri).await.map_err(io::Error::other)?.into_inner();
            if !https {
                return Ok(TokioIo::new(Stream::Plain(stream)));
            }
            #[cfg(feature = "tls")]
            {
                let tls = tls.ok_or_else(|| io::Error::other("https:// is not set up"))?;
                let bare = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                let name = rustls_pki_types::ServerName::try_from(bare)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let session = tls.connect(name, stream).await?;
                Ok(TokioIo::new(Stream::Tls(Box::new(session))))
            }
            #[cfg(not(feature = "tls"))]
            {
                let _ = (stream, host);
                Err(io::Error::other(NEEDS_TLS))
            }
        })
    }
}

/// The error of an `https://` URL without the `tls` feature
#[cfg(not(feature = "tls"))]
const NEEDS_TLS: &str = "https:// needs the `tls` feature of mcp-sansio-tokio";

/// From the request tasks to the actor
type FromNet = mcp_sansio_shared::http::FromNet<Bytes>;
/// Where the request tasks report
type NetTx = mcp_sansio_shared::chan::Sender<FromNet>;

/// Connects to `url` (`http://`, or `https://` with the `tls` feature) and waits for the
/// handshake or discovery
pub(crate) async fn connect(
    url: &str,
    config: ClientConfig,
    options: &ClientOptions,
) -> Result<mcp_sansio_shared::client::Client<Tokio>, ConnectError> {
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
    let server = format!(
        "{}:{}",
        uri.host().unwrap_or_default(),
        uri.port_u16()
            .unwrap_or(if uri.scheme_str() == Some("https") {
                443
            } else {
                80
            })
    );
    let (from_net, net_rx) = net_channel();
    #[cfg(feature = "auth")]
    let (transport, user_agent) =
        client_transport(options.auth.as_ref(), &uri.to_string(), "mcp-sansio-tokio");
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let tasks = Tasks {
        net: Hyper::builder(TokioExecutor::new()).build(connector),
        uri,
        server,
        from_net,
        #[cfg(feature = "auth")]
        user_agent,
    };
    mcp_sansio_shared::http_client::connect(config, transport, tasks, net_rx, options).await
}

/// Performs requests on hyper tasks
struct Tasks {
    net: Net,
    uri: hyper::Uri,
    /// `host:port`, for errors
    server: String,
    from_net: NetTx,
    #[cfg(feature = "auth")]
    user_agent: Option<crate::auth::UserAgent>,
}

impl Tasks {
    fn request(&self, planned: HttpRequest) -> Result<Request<Full<Bytes>>, hyper::http::Error> {
        let body = Full::new(Bytes::from(planned.body));
        let method = planned.method.as_str();
        mcp_sansio_shared::http::request(method, self.uri.clone(), planned.headers, body)
    }
}

impl Requests for Tasks {
    type Task = AbortHandle;

    fn start(&mut self, planned: HttpRequest) -> Result<AbortHandle, String> {
        let stream = planned.stream;
        let tx = self.from_net.clone();
        let request = self.request(planned);
        let net = self.net.clone();
        let server = self.server.clone();
        Ok(tokio::spawn(async move {
            let response = match request {
                Ok(request) => net.request(request).await.map_err(|e| failure(&e, &server)),
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
                    let response = crate::auth::perform(&net, request).await;
                    let _ = tx.try_send(FromNet::Auth(response));
                });
            }
            AuthAction::Authorize { url } => {
                let agent = self.user_agent.clone();
                tokio::spawn(async move {
                    let result = match agent {
                        Some(agent) => agent(url).await,
                        None => Err("no user agent".into()),
                    };
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

/// Why a request failed, in words: a TLS failure says what the handshake refused
fn failure(error: &hyper_util::client::legacy::Error, server: &str) -> String {
    #[cfg(feature = "tls")]
    if let Some(why) = mcp_sansio_shared::tls::explain(error, server) {
        return why;
    }
    let _ = server;
    error.to_string()
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
