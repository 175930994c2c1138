//! Streamable HTTP serving: `tiny_http` owns the sockets, one actor thread owns the
//! [`HttpServer`] rules and every session behind them (no lock around the core)
//!
//! Each request gets a thread that reads its body (up to the core's
//! [`HttpConfig::max_body_size`]) and hands it to the actor with a channel for the answer.
//! The actor feeds [`HttpServer::handle_request`], writes what [`HttpServer::poll_output`]
//! yields to each exchange's channel, runs the application on [`HttpServer::poll_event`]
//! with the same dispatcher and [`Context`](crate::Context) as stdio, tells the core when a
//! client goes away ([`HttpServer::handle_closed`]), and sleeps until
//! [`HttpServer::poll_timeout`]. An open exchange (an event stream) is written through the
//! request's raw writer with chunked transfer coding, flushed after every piece, so each
//! event reaches the client as soon as the core emits it.
//!
//! A protected server ([`crate::auth::Protection`]) checks each request on its own thread
//! before the body is read: the Protected Resource Metadata, 401 and 403 are answered there
//! (by [`mcp_sansio::http::protected`]'s rules), and only admitted requests reach the actor.

use std::io::{self, Cursor, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};

use crossbeam_channel::{Receiver, Sender};
use mcp_sansio::ServerConfig;
use mcp_sansio::http::{HttpConfig, ResponseHead, Source};
use mcp_sansio_shared::http::{Channels, Piece, ServerFront};

#[cfg(feature = "auth")]
pub(crate) use crate::auth::Protection;
/// Without the `auth` feature no server is protected: there is no `Protection` to give
#[cfg(not(feature = "auth"))]
#[derive(Clone)]
pub(crate) enum Protection {}

#[cfg(not(feature = "auth"))]
impl Protection {
    /// What `auth`'s protection answers instead of serving the request; never called here
    fn admit_blocking(
        &self,
        _: &str,
        _: &str,
        _: &[(String, String)],
    ) -> Result<mcp_sansio::http::Principal, mcp_sansio::http::HttpResponse> {
        match *self {}
    }
}
use crate::driver::{self, ClientOptions, Dispatch, Handlers, Input, Peer, Route};

/// A running HTTP server: its address, and the way to stop it
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    stop: Option<Stop>,
    accept: Option<JoinHandle<()>>,
    actor: Option<JoinHandle<()>>,
}

/// What stops the server's threads
struct Stop {
    http: Arc<tiny_http::Server>,
    stopping: Arc<AtomicBool>,
    inbox: Sender<Input>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop").finish_non_exhaustive()
    }
}

impl Stop {
    fn signal(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.http.unblock();
        let _ = self.inbox.send(Input::Http(ToActor::Stop));
    }
}

impl HttpServerHandle {
    /// The address the server listens on (with the port the OS chose for port 0)
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, ends every open response and session, and waits for the server's
    /// threads to finish
    pub fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.signal();
        }
        self.join();
    }

    /// Blocks the calling thread while the server runs; nothing stops it then, so this is
    /// for a `main` that serves until the process is interrupted or killed
    pub fn wait(mut self) {
        self.join();
    }

    fn join(&mut self) {
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        if let Some(t) = self.actor.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.signal();
        }
    }
}

/// Starts serving `config`'s sessions with `dispatch` at `addr`
pub(crate) fn serve(
    addr: SocketAddr,
    http_config: HttpConfig,
    server_config: Arc<ServerConfig>,
    dispatch: Arc<dyn Dispatch>,
    tools: Vec<mcp_sansio::schema::Tool>,
    protection: Option<Protection>,
) -> io::Result<HttpServerHandle> {
    let http = tiny_http::Server::http(addr).map_err(io::Error::other)?;
    let addr = http
        .server_addr()
        .to_ip()
        .ok_or_else(|| io::Error::other("not an IP listener"))?;
    let http = Arc::new(http);
    let limit = http_config.max_body_size;
    let (tx, inbox) = crossbeam_channel::unbounded();
    let app = App {
        app: driver::app(Some(dispatch), &ClientOptions::default()),
        handlers: Handlers::new(Route::inbox(tx.clone())),
    };
    let clock = (driver::now(), driver::unix_ms());
    let actor = Actor {
        front: ServerFront::new(http_config, server_config, &tools, app, clock),
    };
    let actor = thread::Builder::new()
        .name("mcp-http-actor".into())
        .spawn(move || actor.run(&inbox))?;
    let stopping = Arc::new(AtomicBool::new(false));
    let accept = {
        let http = Arc::clone(&http);
        let stopping = Arc::clone(&stopping);
        let to_actor = tx.clone();
        thread::Builder::new()
            .name("mcp-http-accept".into())
            .spawn(move || {
                loop {
                    match http.recv() {
                        Ok(request) => {
                            let to_actor = to_actor.clone();
                            let protection = protection.clone();
                            let _ = thread::Builder::new()
                                .name("mcp-http-exchange".into())
                                .spawn(move || {
                                    exchange(request, &to_actor, limit, protection.as_ref());
                                });
                        }
                        Err(_) if stopping.load(Ordering::SeqCst) => return,
                        // An accept error: the listener goes on
                        Err(_) => {}
                    }
                }
            })?
    };
    Ok(HttpServerHandle {
        addr,
        stop: Some(Stop {
            http,
            stopping,
            inbox: tx,
        }),
        accept: Some(accept),
        actor: Some(actor),
    })
}

/// The actor's channels: crossbeam's
pub(crate) struct Chans;

impl Channels for Chans {
    type Body = Vec<u8>;
    type Reply = Sender<Answer>;
    type Frames = Sender<Piece>;
    type FramesRx = Receiver<Piece>;

    fn reply(reply: Self::Reply, answer: Answer) -> bool {
        reply.send(answer).is_ok()
    }

    fn frames() -> (Self::Frames, Self::FramesRx) {
        crossbeam_channel::unbounded()
    }

    fn send(frames: &Self::Frames, piece: Piece) {
        let _ = frames.send(piece);
    }
}

/// From the connection threads to the actor
pub(crate) type ToActor = mcp_sansio_shared::http::ToActor<Chans>;
type Answer = mcp_sansio_shared::http::Answer<Chans>;

/// What every session's [`Peer`] runs the application with
type App = mcp_sansio_shared::http::PeerApp<driver::Blocking>;

struct Actor {
    front: ServerFront<Chans, Peer>,
}

impl Actor {
    fn run(mut self, inbox: &Receiver<Input>) {
        loop {
            self.front.pump();
            let Ok(input) = driver::recv_until(inbox, self.front.poll_timeout()) else {
                break;
            };
            match input {
                None => self.front.handle_timeout(driver::now()),
                Some(Input::Http(ToActor::Stop)) => break,
                Some(Input::Http(msg)) => self.front.on_conn(driver::now(), msg),
                Some(Input::Handler(key, msg)) => {
                    if let Some((peer, session)) = self.front.peer(key) {
                        peer.on_server_handler(session, msg);
                    }
                }
                Some(_) => {}
            }
        }
        // Shutting down: every open response ends (its channel closes), handlers stop.
        self.front.end_all();
    }
}

/// One HTTP exchange, on a thread of its own
fn exchange(
    mut request: tiny_http::Request,
    to_actor: &Sender<Input>,
    limit: usize,
    protection: Option<&Protection>,
) {
    let method = request.method().as_str().to_owned();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_owned(),
                h.value.as_str().to_owned(),
            )
        })
        .collect();
    let path = request.url().split('?').next().unwrap_or_default();
    // A protected server answers some requests itself: the metadata, a refusal of a missing
    // or bad token.
    let mut source = request
        .remote_addr()
        .map_or_else(Source::unknown, |peer| Source::from_peer(*peer));
    if let Some(protection) = protection {
        match protection.admit_blocking(&method, path, &headers) {
            Ok(principal) => source = source.with_principal(Some(principal)),
            Err(denial) => {
                let _ = request.respond(complete(denial.status, &denial.headers, denial.body));
                return;
            }
        }
    }
    let mut body = Vec::new();
    let read = request
        .as_reader()
        .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut body);
    let (reply, answer) = crossbeam_channel::bounded(1);
    let msg = match read {
        Ok(_) if body.len() > limit => ToActor::Oversize { reply },
        Ok(_) => ToActor::Request {
            source,
            method,
            headers,
            body,
            reply,
        },
        // The client broke off the body: nobody reads the answer.
        Err(_) => {
            let _ = request.respond(plain(400));
            return;
        }
    };
    if to_actor.send(Input::Http(msg)).is_err() {
        let _ = request.respond(plain(503));
        return;
    }
    let Ok(answer) = answer.recv() else {
        let _ = request.respond(plain(503));
        return;
    };
    match answer {
        Answer::Complete(response) => {
            let response = complete(response.status, &response.headers, response.body);
            let _ = request.respond(response);
        }
        Answer::Open { exchange, frames } => {
            let Ok(Piece::Head(head)) = frames.recv() else {
                let _ = request.respond(plain(503));
                return;
            };
            let head_only = request.method() == &tiny_http::Method::Head;
            let writer = request.into_writer();
            if stream(writer, &head, &frames, head_only).is_err() {
                let _ = to_actor.send(Input::Http(ToActor::Closed(exchange)));
            }
        }
    }
}

/// Writes an open exchange: the head, then every piece as one flushed chunk, until the
/// actor ends it (closes the channel)
fn stream(
    mut writer: Box<dyn Write + Send>,
    head: &ResponseHead,
    frames: &Receiver<Piece>,
    head_only: bool,
) -> io::Result<()> {
    let status = tiny_http::StatusCode(head.status);
    let mut text = format!(
        "HTTP/1.1 {} {}\r\n",
        head.status,
        status.default_reason_phrase()
    );
    for (name, value) in &head.headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("Transfer-Encoding: chunked\r\n\r\n");
    writer.write_all(text.as_bytes())?;
    writer.flush()?;
    if head_only {
        return Ok(());
    }
    let mut body = chunked_transfer::Encoder::with_flush_after_write(&mut writer);
    while let Ok(piece) = frames.recv() {
        if let Piece::Body(data) = piece
            && !data.is_empty()
        {
            body.write_all(&data)?;
            body.get_mut().flush()?;
        }
    }
    // The encoder's drop writes the last chunk.
    drop(body);
    writer.flush()
}

/// A whole response with a known length
fn complete<N: AsRef<str>>(
    status: u16,
    headers: &[(N, String)],
    body: Vec<u8>,
) -> tiny_http::Response<Cursor<Vec<u8>>> {
    let length = body.len();
    let headers = headers
        .iter()
        .filter_map(|(name, value)| {
            tiny_http::Header::from_bytes(name.as_ref().as_bytes(), value.as_bytes()).ok()
        })
        .collect();
    tiny_http::Response::new(
        tiny_http::StatusCode(status),
        headers,
        Cursor::new(body),
        Some(length),
        None,
    )
}

fn plain(status: u16) -> tiny_http::Response<io::Empty> {
    tiny_http::Response::new_empty(tiny_http::StatusCode(status))
}
