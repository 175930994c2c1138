//! The client over Streamable HTTP: one actor owns the client `Session` and its
//! [`ClientTransport`]; a task per request carries what the transport plans over HTTP/1.1
//! ([`crate::h1`]) on `async-net`, keeping idle connections for the next request
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close) is the
//! transport's; this file performs HTTP and reports what came back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_channel::{Receiver, Sender};
use async_net::TcpStream;
use futures_lite::FutureExt;
use mcp_core::Session;
use mcp_core::auth::{AuthAction, AuthResponse};
use mcp_core::http::{ClientTransport, HttpRequest, StreamId};
use smol::Task;

use crate::driver::{self, ClientOptions, Command, HandlerMsg, Handlers, Peer, Ready};
use crate::h1::{self, Body, Conn, Framing, ReadError, Target};

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
        data: Vec<u8>,
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

/// How long connecting may take
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
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
    idle: Arc<Mutex<Vec<Conn<TcpStream>>>>,
}

impl Net {
    fn new(target: Target) -> Self {
        Self {
            target: Arc::new(target),
            idle: Arc::default(),
        }
    }

    /// An idle connection the server has not closed, or `None`
    async fn idle(&self) -> Option<Conn<TcpStream>> {
        loop {
            let mut conn = self.idle.lock().ok()?.pop()?;
            // An idle connection has nothing to read: data or the end means it is done.
            if futures_lite::future::poll_once(conn.fill()).await.is_none() {
                return Some(conn);
            }
        }
    }

    /// Keeps a connection whose exchange ended cleanly for the next request
    fn release(&self, conn: Conn<TcpStream>) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(conn);
        }
    }

    /// Performs one request; the head and the body pieces go to the actor as they come
    async fn perform(self, planned: HttpRequest, tx: Sender<FromNet>) {
        let stream = planned.stream;
        let method = planned.method.as_str();
        let head = match self
            .target
            .head(method, &planned.headers, planned.body.len(), false)
        {
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
                None => match connect(&self.target).await {
                    Ok(conn) => conn,
                    Err(error) => {
                        let _ = tx.try_send(FromNet::Failed { stream, error });
                        return;
                    }
                },
            };
            match exchange(conn, method, &message, stream, &tx).await {
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

/// A new connection to `target`
async fn connect(target: &Target) -> Result<Conn<TcpStream>, String> {
    let host = target.host.as_str();
    let port = target.port;
    match h1::within(CONNECT_TIMEOUT, TcpStream::connect((host, port))).await {
        Some(Ok(stream)) => Ok(Conn::new(stream)),
        Some(Err(e)) => Err(format!("connecting to {host}:{port}: {e}")),
        None => Err(format!("connecting to {host}:{port}: timed out")),
    }
}

/// Sends `message` on `conn` and forwards the response to the actor; the connection back
/// when it can carry another request
async fn exchange(
    mut conn: Conn<TcpStream>,
    method: &str,
    message: &[u8],
    stream: StreamId,
    tx: &Sender<FromNet>,
) -> Result<Option<Conn<TcpStream>>, Failure> {
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
    // No time limit: the server may hold a response until the result is ready, and the
    // transport cancels what it gives up on by dropping this task.
    let head = match conn.read_response().await {
        Ok(head) => head,
        Err(e) => {
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
    /// Authorization steps in flight (dropped, and so cancelled, when the actor ends)
    auth_tasks: Vec<Task<()>>,
    from_net: Sender<FromNet>,
    user_agent: Option<crate::auth::UserAgent>,
}

/// Runs a client connection over Streamable HTTP until it closes
pub(crate) async fn run(
    target: Target,
    session: Session,
    commands: Receiver<Command>,
    options: ClientOptions,
    ready: Ready,
) {
    let (from_net, net_rx) = async_channel::unbounded();
    let (handlers, handler_rx) = Handlers::channel();
    let mut transport = ClientTransport::new();
    let mut user_agent = None;
    if let Some(auth) = &options.auth {
        match auth.client(&target.url()) {
            Ok(client) => {
                transport = transport.with_auth(client);
                user_agent = Some(auth.user_agent.clone());
            }
            Err(e) => eprintln!("mcp-async-std: OAuth is off: {e}"),
        }
    }
    let actor = Actor {
        session,
        transport,
        net: Net::new(target),
        peer: Peer::new(Some(ready)),
        options,
        handlers,
        tasks: HashMap::new(),
        auth_tasks: Vec::new(),
        from_net,
        user_agent,
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
        self.auth_tasks.clear();
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

    /// Performs one step of the authorization flow in its own task
    fn start_auth(&mut self, action: AuthAction) {
        let tx = self.from_net.clone();
        self.auth_tasks.retain(|task| !task.is_finished());
        let task = match action {
            AuthAction::Fetch(request) => smol::spawn(async move {
                let response = crate::auth::perform(request).await;
                let _ = tx.try_send(FromNet::Auth(response));
            }),
            AuthAction::Authorize { url } => {
                let agent = self.user_agent.clone();
                smol::spawn(async move {
                    let result = match agent {
                        Some(agent) => agent(url).await,
                        None => Err("no user agent".into()),
                    };
                    let _ = tx.try_send(FromNet::Redirect(result));
                })
            }
            _ => return,
        };
        self.auth_tasks.push(task);
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
            FromNet::Auth(response) => {
                self.transport.handle_auth_response(now, response, session);
            }
            FromNet::Redirect(Ok(url)) => self.transport.handle_auth_redirect(now, &url, session),
            FromNet::Redirect(Err(e)) => self.transport.handle_auth_error(now, &e, session),
        }
    }
}
