//! The client over Streamable HTTP: one actor owns the client `Session` and its
//! [`ClientTransport`]; a task per request carries what the transport plans over hyper's
//! HTTP/1.1 client connection on `async-net`
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_channel::{Receiver, Sender};
use bytes::Bytes;
use futures_lite::FutureExt;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use mcp_core::Session;
use mcp_core::http::{ClientTransport, HttpRequest, StreamId};
use smol::Task;
use smol_hyper::rt::FuturesIo;

use crate::driver::{self, ClientOptions, Command, HandlerMsg, Handlers, Peer, Ready};

/// How long closing waits for the server to answer DELETE
const DELETE_WAIT: Duration = Duration::from_secs(2);

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
}

/// HTTP/1.1 connections to one server: idle ones are kept for the next request
#[derive(Clone)]
struct Net {
    uri: hyper::Uri,
    idle: Arc<Mutex<Vec<SendRequest<Full<Bytes>>>>>,
}

impl Net {
    fn new(uri: hyper::Uri) -> Self {
        Self {
            uri,
            idle: Arc::default(),
        }
    }

    /// An idle connection that is still open, or a new one
    async fn connection(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        loop {
            let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
            let Some(mut sender) = idle else { break };
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        let host = self.uri.host().unwrap_or("127.0.0.1");
        let port = self.uri.port_u16().unwrap_or(80);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let stream = async_net::TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("connecting to {host}:{port}: {e}"))?;
        let (sender, conn) = hyper::client::conn::http1::handshake(FuturesIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        // The connection runs until both sides are done with it.
        smol::spawn(async move {
            let _ = conn.await;
        })
        .detach();
        Ok(sender)
    }

    /// Keeps a connection whose exchange ended cleanly for the next request
    fn release(&self, sender: SendRequest<Full<Bytes>>) {
        if !sender.is_closed()
            && let Ok(mut idle) = self.idle.lock()
        {
            idle.push(sender);
        }
    }

    /// The hyper request for a planned one: origin-form target and a `Host` header
    fn request(&self, planned: HttpRequest) -> Result<Request<Full<Bytes>>, String> {
        let target = self
            .uri
            .path_and_query()
            .map_or("/", hyper::http::uri::PathAndQuery::as_str);
        let mut builder = Request::builder()
            .method(planned.method.as_str())
            .uri(target);
        if let Some(authority) = self.uri.authority() {
            builder = builder.header("host", authority.as_str());
        }
        for (name, value) in planned.headers {
            builder = builder.header(name, value);
        }
        builder
            .body(Full::new(Bytes::from(planned.body)))
            .map_err(|e| e.to_string())
    }

    /// Performs one request; the head and the body pieces go to the actor as they come
    async fn perform(self, planned: HttpRequest, tx: Sender<FromNet>) {
        let stream = planned.stream;
        let outcome = async {
            let request = self.request(planned)?;
            let mut sender = self.connection().await?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((sender, response))
        }
        .await;
        match outcome {
            Ok((sender, response)) => {
                if forward(stream, response, &tx).await {
                    self.release(sender);
                }
            }
            Err(error) => {
                let _ = tx.try_send(FromNet::Failed { stream, error });
            }
        }
    }
}

/// Sends a response's head and body pieces to the actor; `true` when the body was read to
/// its end
async fn forward(
    stream: StreamId,
    response: hyper::Response<Incoming>,
    tx: &Sender<FromNet>,
) -> bool {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    if tx
        .try_send(FromNet::Head {
            stream,
            status,
            headers,
        })
        .is_err()
    {
        return false;
    }
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            // A broken body is the end the transport must know about.
            let _ = tx.try_send(FromNet::End { stream });
            return false;
        };
        if let Ok(data) = frame.into_data()
            && tx.try_send(FromNet::Chunk { stream, data }).is_err()
        {
            return false;
        }
    }
    let _ = tx.try_send(FromNet::End { stream });
    true
}

/// What woke the actor
enum Wake {
    Command(Option<Command>),
    Net(FromNet),
    Handler(HandlerMsg),
    Timeout,
}

struct Actor {
    session: Session,
    transport: ClientTransport,
    net: Net,
    peer: Peer,
    options: ClientOptions,
    handlers: Handlers,
    /// The task of each request in flight; dropping it closes its response
    tasks: HashMap<StreamId, Task<()>>,
    from_net: Sender<FromNet>,
}

/// Runs a client connection over Streamable HTTP until it closes
pub(crate) async fn run(
    uri: hyper::Uri,
    session: Session,
    commands: Receiver<Command>,
    options: ClientOptions,
    ready: Ready,
) {
    let (from_net, net_rx) = async_channel::unbounded();
    let (handlers, handler_rx) = Handlers::channel();
    let actor = Actor {
        session,
        transport: ClientTransport::new(),
        net: Net::new(uri),
        peer: Peer::new(Some(ready)),
        options,
        handlers,
        tasks: HashMap::new(),
        from_net,
    };
    actor.run(commands, net_rx, handler_rx).await;
}

impl Actor {
    async fn run(
        mut self,
        commands: Receiver<Command>,
        net_rx: Receiver<FromNet>,
        handler_rx: driver::HandlerRx,
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
                .min();
            let command = async {
                if closing {
                    std::future::pending().await
                } else {
                    Wake::Command(commands.recv().await.ok())
                }
            };
            // The actor holds a sender of both: they never close while it runs.
            let net = async {
                match net_rx.recv().await {
                    Ok(msg) => Wake::Net(msg),
                    Err(_) => std::future::pending().await,
                }
            };
            let handler = async {
                match handler_rx.recv().await {
                    Ok((_, msg)) => Wake::Handler(msg),
                    Err(_) => std::future::pending().await,
                }
            };
            let timeout = async {
                driver::sleep_until(deadline).await;
                Wake::Timeout
            };
            match command.race(net).race(handler).race(timeout).await {
                Wake::Command(command) => {
                    closing = match command {
                        Some(command) => self.peer.on_command(&mut self.session, command),
                        None => true,
                    };
                    if closing {
                        self.close().await;
                    }
                }
                Wake::Net(msg) => self.on_net(msg),
                Wake::Handler(msg) => self.peer.on_handler(&mut self.session, msg),
                Wake::Timeout => {
                    let now = driver::now();
                    if self.session.poll_timeout().is_some_and(|t| t <= now) {
                        self.session.handle_timeout(now);
                    }
                    self.transport.handle_timeout(now);
                }
            }
        }
        // Dropping the tasks closes every response still open.
        self.tasks.clear();
        self.peer.abort_all();
        driver::close_and_drain(&commands);
        driver::close_and_drain(&handler_rx);
    }

    /// Ends the session: DELETE (2025 wire), then close
    async fn close(&mut self) {
        let delete = self.transport.close();
        self.perform_aborts();
        if let Some(delete) = delete {
            let (tx, _rx) = async_channel::unbounded();
            let _ = self
                .net
                .clone()
                .perform(delete, tx)
                .or(async {
                    async_io::Timer::after(DELETE_WAIT).await;
                })
                .await;
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

    /// Closes the responses the transport gave up on (dropping a task cancels it)
    fn perform_aborts(&mut self) {
        while let Some(stream) = self.transport.poll_abort() {
            self.tasks.remove(&stream);
        }
    }

    /// Starts one HTTP request whose response comes back as [`FromNet`] messages
    fn start(&mut self, planned: HttpRequest) {
        let stream = planned.stream;
        let task = smol::spawn(self.net.clone().perform(planned, self.from_net.clone()));
        self.tasks.insert(stream, task);
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
                if let Some(task) = self.tasks.remove(&stream) {
                    // The task is past its last message: let it hand its connection back.
                    task.detach();
                }
                self.transport.handle_end(now, stream, session);
            }
            FromNet::Failed { stream, error } => {
                self.tasks.remove(&stream);
                self.transport.handle_failed(now, stream, &error, session);
            }
        }
    }
}
