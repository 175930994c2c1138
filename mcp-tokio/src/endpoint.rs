//! A server's Streamable HTTP endpoint, to mount in an existing web app: a
//! [`tower::Service`](tower_service::Service) (and so a hyper service and an axum route)
//! over the kernel's [`Endpoint`], the same entry
//! point [`Server::serve_http`](crate::Server::serve_http) drives
//!
//! ```no_run
//! # async fn run(server: mcp_sansio_tokio::Server) -> std::io::Result<()> {
//! use mcp_sansio_tokio::mcp_sansio::http::HttpConfig;
//!
//! let endpoint = server.http_endpoint(HttpConfig::default());
//! // axum: Router::new().route("/health", get(health)).nest_service("/mcp", endpoint.clone())
//! // hyper: serve_connection(io, hyper_util::service::TowerToHyperService::new(endpoint))
//! # let _ = endpoint;
//! # Ok(()) }
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body as HttpBodyTrait, Frame};
use hyper::{Request, Response};
use mcp_sansio::http::{HttpConfig, Source};
pub use mcp_sansio_runtime::endpoint::Dropped;
use mcp_sansio_runtime::endpoint::{self, Endpoint};
use mcp_sansio_runtime::http::{request_fields, response};

pub use mcp_sansio_runtime::endpoint::{BodyStream, Next};

/// The endpoint's answer to one request, from [`HttpEndpoint::handle`]
pub type EndpointResponse = endpoint::Response<BodyStream<Bytes>>;
/// Its body: whole, or a stream of pieces
pub type EndpointBody = endpoint::Body<BodyStream<Bytes>>;

/// A server's Streamable HTTP endpoint (both wires), from
/// [`Server::http_endpoint`](crate::Server::http_endpoint): a `tower::Service` for
/// `http::Request`s of any body, answering wherever it is mounted
///
/// Clones serve the same sessions. Its actor runs on a tokio task until
/// [`shutdown`](Self::shutdown), or until every clone and every open response is gone.
/// The request's peer address is taken from the request's extensions when a `SocketAddr`
/// is there (insert it from the connection, or with axum's `ConnectInfo` layer copy it in);
/// the `Host`/`Origin` policy and the limits are the [`HttpConfig`]'s. Authorization is the
/// app's middleware (or [`Server::serve_http_protected`](crate::Server) for a server of
/// its own).
#[derive(Clone, Debug)]
pub struct HttpEndpoint {
    inner: Endpoint<Bytes>,
    body_timeout: Duration,
}

impl HttpEndpoint {
    /// The endpoint for `server` under `config`, its actor spawned on the current runtime
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub(crate) fn start(
        server: &mcp_sansio_runtime::server::ServerCore<crate::Tokio>,
        config: HttpConfig,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let body_timeout = config.body_read_timeout;
        let (inner, run) = Endpoint::new(config, server);
        let actor = tokio::spawn(run);
        (
            Self {
                inner,
                body_timeout,
            },
            actor,
        )
    }

    /// The largest request body it takes
    pub fn body_limit(&self) -> usize {
        self.inner.body_limit()
    }

    /// The sans-IO entry point itself, for any other HTTP stack: answers a request whose
    /// body was read whole (see [`Endpoint::handle`])
    pub async fn handle(
        &self,
        source: Source,
        method: String,
        headers: impl Into<mcp_sansio_runtime::http::Fields>,
        body: Bytes,
    ) -> EndpointResponse {
        self.inner
            .handle(source, method, headers.into(), body)
            .await
    }

    /// Ends every open response and session; later requests get 503 (call it before an
    /// app's graceful shutdown waits for its connections: open event streams end)
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }

    /// Serves one `http` request: reads its body (up to the limit, within the body read
    /// timeout) and answers
    pub(crate) async fn respond<B>(self, req: Request<B>, source: Source) -> Response<HttpBody>
    where
        B: HttpBodyTrait + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let method = req.method().as_str().to_owned();
        let headers = request_fields(req.headers());
        let limit = self.inner.body_limit();
        let body = tokio::time::timeout(
            self.body_timeout,
            Limited::new(req.into_body(), limit).collect(),
        );
        let answer = match body.await {
            Ok(Ok(body)) => {
                self.inner
                    .handle(source, method, headers, body.to_bytes())
                    .await
            }
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => self.inner.oversize().await,
            // The client broke off the body: nobody reads the answer.
            Ok(Err(_)) => return plain(400),
            // The body did not arrive in time: 408, and the connection closes.
            Err(_) => {
                let mut response = plain(408);
                response.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
                return response;
            }
        };
        let body = match answer.body {
            endpoint::Body::Whole(data) => HttpBody::whole(data),
            endpoint::Body::Stream(stream) => HttpBody {
                inner: Inner::Stream(stream),
                guard: None,
            },
            _ => HttpBody::whole(Vec::new()),
        };
        response(answer.status, answer.headers, body).unwrap_or_else(|_| plain(500))
    }
}

impl<B> tower_service::Service<Request<B>> for HttpEndpoint
where
    B: HttpBodyTrait + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<HttpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let source = match req.extensions().get::<Source>() {
            Some(source) => source.clone(),
            None => req
                .extensions()
                .get::<SocketAddr>()
                .map_or_else(Source::unknown, |peer| Source::from_peer(*peer)),
        };
        let endpoint = self.clone();
        Box::pin(async move { Ok(endpoint.respond(req, source).await) })
    }
}

/// A response with no body
pub(crate) fn plain(status: u16) -> Response<HttpBody> {
    let mut response = Response::new(HttpBody::whole(Vec::new()));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response
}

/// The body of an [`HttpEndpoint`]'s response: whole, or the pieces of an open response
/// (SSE events, or a JSON body written when its handler is done); dropped before its end,
/// it tells the server the client went away
pub struct HttpBody {
    inner: Inner,
    /// Dropped with the body (the binding's own server marks its connection idle again)
    guard: Option<Box<dyn std::any::Any + Send>>,
}

impl std::fmt::Debug for HttpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBody").finish_non_exhaustive()
    }
}

enum Inner {
    Full(Option<Bytes>),
    Stream(BodyStream<Bytes>),
}

impl HttpBody {
    pub(crate) fn whole(data: Vec<u8>) -> Self {
        Self {
            inner: Inner::Full((!data.is_empty()).then(|| Bytes::from(data))),
            guard: None,
        }
    }

    /// Keeps `guard` until the body is dropped
    pub(crate) fn with_guard(mut self, guard: impl Send + 'static) -> Self {
        self.guard = Some(Box::new(guard));
        self
    }
}

impl HttpBodyTrait for HttpBody {
    type Data = Bytes;
    type Error = Dropped;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Dropped>>> {
        match &mut self.get_mut().inner {
            Inner::Full(data) => Poll::Ready(data.take().map(|b| Ok(Frame::data(b)))),
            Inner::Stream(stream) => stream
                .poll_piece(cx)
                .map(|piece| piece.map(|p| p.map(|data| Frame::data(Bytes::from(data))))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.inner, Inner::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match &self.inner {
            Inner::Full(data) => {
                hyper::body::SizeHint::with_exact(data.as_ref().map_or(0, |b| b.len() as u64))
            }
            Inner::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}
