//! The client over Streamable HTTP: one actor owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (in a [`ClientFront`]); hyper tasks
//! carry each request the transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_sansio::Session;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
#[cfg(feature = "auth")]
use mcp_sansio_shared::http::client_transport;
use mcp_sansio_shared::http::{ClientFront, Requests, header_list};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::driver::{self, ClientOptions, Command, Handlers, Peer, Ready};

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// From the request tasks to the actor
type FromNet = mcp_sansio_shared::http::FromNet<Bytes>;

/// Performs requests on hyper tasks
struct Tasks {
    net: Net,
    uri: hyper::Uri,
    from_net: mpsc::UnboundedSender<FromNet>,
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
                    let _ = tx.send(FromNet::Failed { stream, error });
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
                    let _ = tx.send(FromNet::Auth(response));
                });
            }
            AuthAction::Authorize { url } => {
                let agent = self.user_agent.clone();
                tokio::spawn(async move {
                    let result = match agent {
                        Some(agent) => agent(url).await,
                        None => Err("no user agent".into()),
                    };
                    let _ = tx.send(FromNet::Redirect(result));
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

struct Actor {
    front: ClientFront<Tasks>,
    peer: Peer,
    options: ClientOptions,
    handlers: Handlers,
}

/// Runs a client connection over Streamable HTTP until it closes
pub(crate) async fn run(
    uri: hyper::Uri,
    session: Session,
    commands: mpsc::Receiver<Command>,
    options: ClientOptions,
    ready: Ready,
) {
    let (from_net, net_rx) = mpsc::unbounded_channel();
    let (handlers, handler_rx) = Handlers::channel();
    #[cfg(feature = "auth")]
    let (transport, user_agent) =
        client_transport(options.auth.as_ref(), &uri.to_string(), "mcp-sansio-tokio");
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let tasks = Tasks {
        net: Hyper::builder(TokioExecutor::new()).build_http(),
        uri,
        from_net,
        #[cfg(feature = "auth")]
        user_agent,
    };
    let actor = Actor {
        front: ClientFront::new(session, transport, tasks, driver::now),
        peer: Peer::new(Some(ready)),
        options,
        handlers,
    };
    actor.run(commands, net_rx, handler_rx).await;
}

impl Actor {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut net_rx: mpsc::UnboundedReceiver<FromNet>,
        mut handler_rx: driver::HandlerRx,
    ) {
        let mut closing = false;
        let mut timer = driver::Timer::new();
        loop {
            self.pump();
            if self.front.session.is_closed() {
                break;
            }
            let deadline = self.front.poll_timeout();
            let armed = timer.arm(deadline);
            tokio::select! {
                command = commands.recv(), if !closing => {
                    closing = match command {
                        Some(command) => self.peer.on_command(&mut self.front.session, command),
                        None => true,
                    };
                    if closing {
                        self.close().await;
                    }
                }
                Some(msg) = net_rx.recv() => self.front.on_net(msg),
                Some((_, msg)) = handler_rx.recv() => {
                    self.peer.on_handler(&mut self.front.session, msg);
                }
                due = timer.wait(deadline), if armed => {
                    if due {
                        self.front.handle_timeout();
                    }
                }
            }
        }
        self.front.abort_all();
        self.peer.abort_all();
    }

    /// Ends the session: DELETE (2025 wire), then close
    async fn close(&mut self) {
        if let Some(delete) = self.front.close()
            && let Ok(request) = self.front.requests.request(delete)
        {
            let net = &self.front.requests.net;
            let _ = tokio::time::timeout(Duration::from_secs(2), net.request(request)).await;
        }
        self.front.closed();
    }

    /// Moves what the session transmits into HTTP requests and delivers its events until
    /// both are quiet
    fn pump(&mut self) {
        let (peer, options) = (&mut self.peer, &self.options);
        let handlers = &self.handlers;
        self.front
            .pump(|session, event| peer.on_event(session, event, None, options, handlers));
    }
}

/// Sends a response's head and body pieces to the actor
async fn forward(
    no: StreamId,
    response: hyper::Response<Incoming>,
    tx: &mpsc::UnboundedSender<FromNet>,
) {
    let status = response.status().as_u16();
    let headers = header_list(response.headers());
    if tx
        .send(FromNet::Head {
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
            && tx.send(FromNet::Chunk { stream: no, data }).is_err()
        {
            return;
        }
    }
    let _ = tx.send(FromNet::End { stream: no });
}
