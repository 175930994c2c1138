//! The client over Streamable HTTP: one actor owns the client `Session` and its
//! [`ClientTransport`]; hyper tasks carry each request the transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_core::Session;
use mcp_core::auth::{AuthAction, AuthResponse};
use mcp_core::http::{ClientTransport, HttpRequest, StreamId};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::driver::{self, ClientOptions, Command, Handlers, Peer, Ready};

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// From the request tasks to the actor
enum FromNet {
    Head {
        stream: StreamId,
        status: u16,
        headers: Vec<(String, String)>,
    },
    Chunk {
        stream: StreamId,
        data: Bytes,
    },
    End {
        stream: StreamId,
    },
    Failed {
        stream: StreamId,
        error: String,
    },
    /// The response to an authorization request
    Auth(AuthResponse),
    /// Where the user agent ended up (or why it could not)
    Redirect(Result<String, String>),
}

struct Actor {
    session: Session,
    transport: ClientTransport,
    net: Net,
    uri: hyper::Uri,
    peer: Peer,
    options: ClientOptions,
    handlers: Handlers,
    tasks: HashMap<StreamId, AbortHandle>,
    from_net: mpsc::UnboundedSender<FromNet>,
    user_agent: Option<crate::auth::UserAgent>,
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
    let mut transport = ClientTransport::new();
    let mut user_agent = None;
    if let Some(auth) = &options.auth {
        match auth.client(&uri.to_string()) {
            Ok(client) => {
                transport = transport.with_auth(client);
                user_agent = Some(auth.user_agent.clone());
            }
            Err(e) => eprintln!("mcp-tokio: OAuth is off: {e}"),
        }
    }
    let actor = Actor {
        session,
        transport,
        net: Hyper::builder(TokioExecutor::new()).build_http(),
        uri,
        peer: Peer::new(Some(ready)),
        options,
        handlers,
        tasks: HashMap::new(),
        from_net,
        user_agent,
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
        loop {
            self.pump();
            if self.session.is_closed() {
                break;
            }
            let deadline = [self.session.poll_timeout(), self.transport.poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .map(Instant::from_std);
            tokio::select! {
                command = commands.recv(), if !closing => {
                    closing = match command {
                        Some(command) => self.peer.on_command(&mut self.session, command),
                        None => true,
                    };
                    if closing {
                        self.close().await;
                    }
                }
                Some(msg) = net_rx.recv() => self.on_net(msg),
                Some((_, msg)) = handler_rx.recv() => self.peer.on_handler(&mut self.session, msg),
                () = driver::sleep_until(deadline) => {
                    let now = driver::now();
                    if self.session.poll_timeout().is_some_and(|t| t <= now) {
                        self.session.handle_timeout(now);
                    }
                    self.transport.handle_timeout(now);
                }
            }
        }
        for task in self.tasks.values() {
            task.abort();
        }
        self.peer.abort_all();
    }

    /// Ends the session: DELETE (2025 wire), then close
    async fn close(&mut self) {
        let delete = self.transport.close();
        self.perform_aborts();
        if let Some(delete) = delete
            && let Ok(request) = self.request(delete)
        {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.net.request(request)).await;
        }
        self.session.close(driver::now());
    }

    /// Moves what the session transmits into HTTP requests and delivers its events until
    /// both are quiet
    fn pump(&mut self) {
        loop {
            self.transport.pull(&mut self.session);
            self.perform_aborts();
            while let Some(request) = self.transport.poll_request() {
                self.start(request);
            }
            while let Some(action) = self.transport.poll_auth_action() {
                self.start_auth(action);
            }
            let mut busy = false;
            while let Some(event) = self.session.poll_event() {
                busy = true;
                self.peer.on_event(
                    &mut self.session,
                    event,
                    None,
                    &self.options,
                    &self.handlers,
                );
            }
            if !busy {
                return;
            }
        }
    }

    fn perform_aborts(&mut self) {
        while let Some(stream) = self.transport.poll_abort() {
            if let Some(task) = self.tasks.remove(&stream) {
                task.abort();
            }
        }
    }

    fn request(&self, planned: HttpRequest) -> Result<Request<Full<Bytes>>, hyper::http::Error> {
        let mut builder = Request::builder()
            .method(planned.method.as_str())
            .uri(self.uri.clone());
        for (name, value) in planned.headers {
            builder = builder.header(name, value);
        }
        builder.body(Full::new(Bytes::from(planned.body)))
    }

    /// Starts one HTTP request whose response comes back as [`FromNet`] messages
    fn start(&mut self, planned: HttpRequest) {
        let stream = planned.stream;
        let tx = self.from_net.clone();
        let request = self.request(planned);
        let net = self.net.clone();
        let task = tokio::spawn(async move {
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
        .abort_handle();
        self.tasks.insert(stream, task);
    }

    /// Performs one step of the authorization flow in its own task
    fn start_auth(&mut self, action: AuthAction) {
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
    }

    fn on_net(&mut self, msg: FromNet) {
        let now = driver::now();
        let session = &mut self.session;
        match msg {
            FromNet::Head {
                stream,
                status,
                headers,
            } => self
                .transport
                .handle_head(now, stream, status, &headers, session),
            FromNet::Chunk { stream, data } => {
                self.transport.handle_body(now, stream, &data, session);
            }
            FromNet::End { stream } => {
                self.tasks.remove(&stream);
                self.transport.handle_end(now, stream, session);
            }
            FromNet::Failed { stream, error } => {
                self.tasks.remove(&stream);
                self.transport.handle_failed(now, stream, &error, session);
            }
            FromNet::Auth(response) => {
                self.transport.handle_auth_response(now, response, session);
            }
            FromNet::Redirect(Ok(url)) => self.transport.handle_auth_redirect(now, &url, session),
            FromNet::Redirect(Err(e)) => self.transport.handle_auth_error(now, &e, session),
        }
    }
}

/// Sends a response's head and body pieces to the actor
async fn forward(
    no: StreamId,
    response: hyper::Response<Incoming>,
    tx: &mpsc::UnboundedSender<FromNet>,
) {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
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
