//! The client over Streamable HTTP: the kernel's actor owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (`mcp_sansio_shared::http_client`);
//! hyper tasks carry each request the transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_sansio::ClientConfig;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
#[cfg(feature = "auth")]
use mcp_sansio_shared::http::client_transport;
use mcp_sansio_shared::http::{Requests, header_list};
use mcp_sansio_shared::http_client::net_channel;
use tokio::task::AbortHandle;

use crate::client::ConnectError;
use crate::runtime::{ClientOptions, Tokio};

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// The client's connector: `TCP_NODELAY` on every connection (a request written in pieces
/// must not wait for the server's delayed ACK)
pub(crate) fn nodelay_connector() -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector
}

/// From the request tasks to the actor
type FromNet = mcp_sansio_shared::http::FromNet<Bytes>;
/// Where the request tasks report
type NetTx = mcp_sansio_shared::chan::Sender<FromNet>;

/// Connects to `url` (`http://` only) and waits for the handshake or discovery
pub(crate) async fn connect(
    url: &str,
    config: ClientConfig,
    options: &ClientOptions,
) -> Result<mcp_sansio_shared::client::Client<Tokio>, ConnectError> {
    let uri: hyper::Uri = url
        .parse()
        .map_err(|e| ConnectError::Url(format!("{url}: {e}")))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        return Err(ConnectError::Url(format!(
            "{url}: only http:// URLs are supported"
        )));
    }
    let (from_net, net_rx) = net_channel();
    #[cfg(feature = "auth")]
    let (transport, user_agent) =
        client_transport(options.auth.as_ref(), &uri.to_string(), "mcp-sansio-tokio");
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let tasks = Tasks {
        net: Hyper::builder(TokioExecutor::new()).build(nodelay_connector()),
        uri,
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
        Ok(tokio::spawn(async move {
            let response = match request {
                Ok(request) => net.request(request).await.map_err(|e| e.to_string()),
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
