//! The client over Streamable HTTP: one driver thread owns the client `Session` and its
//! [`ClientTransport`]; a `ureq` call on a thread of its own carries each request the
//! transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close, and with
//! OAuth every step of authorizing) is the transport's; this file performs HTTP (and the
//! user agent step) and reports what came back.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use mcp_core::Session;
use mcp_core::auth::{AuthAction, AuthResponse};
use mcp_core::http::{ClientTransport, HttpRequest, StreamId};
use ureq::http::Uri;

use crate::driver::{self, ClientOptions, Handlers, Input, Peer, Ready, Route};

/// How long closing waits for the DELETE that ends a 2025-wire session
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// From the request threads to the driver
pub(crate) enum FromNet {
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

struct Actor {
    session: Session,
    transport: ClientTransport,
    agent: ureq::Agent,
    uri: Uri,
    peer: Peer,
    options: ClientOptions,
    handlers: Handlers,
    /// The requests in flight; setting the flag aborts one
    streams: HashMap<StreamId, Arc<AtomicBool>>,
    inbox: Sender<Input>,
    /// With OAuth: the agent for authorization requests, and the user agent
    auth: Option<(ureq::Agent, crate::auth::UserAgent)>,
}

/// Runs a client connection over Streamable HTTP until it closes (on the calling thread)
pub(crate) fn run(
    uri: Uri,
    session: Session,
    inbox: Receiver<Input>,
    tx: Sender<Input>,
    options: ClientOptions,
    ready: Ready,
) {
    let config = ureq::Agent::config_builder()
        // Every status is the transport's to judge
        .http_status_as_error(false)
        .max_redirects(0)
        // A fresh connection per request: an aborted response stream closes with its own
        // connection (once its pending read returns), and a server that went away is
        // noticed at once instead of through a kept-alive connection nobody serves
        .max_idle_connections_per_host(0)
        .build();
    let mut transport = ClientTransport::new();
    let mut auth = None;
    if let Some(options) = &options.auth {
        match options.client(&uri.to_string()) {
            Ok(client) => {
                transport = transport.with_auth(client);
                auth = Some((crate::auth::agent(), options.user_agent.clone()));
            }
            Err(e) => eprintln!("mcp-blocking: OAuth is off: {e}"),
        }
    }
    let actor = Actor {
        session,
        transport,
        agent: config.into(),
        uri,
        peer: Peer::new(Some(ready)),
        options,
        handlers: Handlers::new(Route::inbox(tx.clone())),
        streams: HashMap::new(),
        inbox: tx,
        auth,
    };
    actor.run(&inbox);
}

impl Actor {
    fn run(mut self, inbox: &Receiver<Input>) {
        self.session
            .anchor_wall_clock(driver::now(), driver::unix_ms());
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
            let Ok(input) = driver::recv_until(inbox, deadline) else {
                break;
            };
            match input {
                None => {
                    let now = driver::now();
                    if self.session.poll_timeout().is_some_and(|t| t <= now) {
                        self.session.handle_timeout(now);
                    }
                    self.transport.handle_timeout(now);
                }
                Some(Input::Command(command)) if !closing => {
                    closing = self.peer.on_command(&mut self.session, command);
                    if closing {
                        self.close();
                    }
                }
                Some(Input::Net(msg)) => self.on_net(msg),
                Some(Input::Handler(_, msg)) => self.peer.on_handler(&mut self.session, msg),
                Some(_) => {}
            }
        }
        for abort in self.streams.values() {
            abort.store(true, Ordering::SeqCst);
        }
        self.peer.abort_all();
    }

    /// Ends the session: DELETE (2025 wire, waited for briefly), then close
    fn close(&mut self) {
        let delete = self.transport.close();
        self.perform_aborts();
        if let Some(delete) = delete {
            let (done, finished) = crossbeam_channel::bounded::<()>(1);
            let agent = self.agent.clone();
            let uri = self.uri.clone();
            let spawned = thread::Builder::new()
                .name("mcp-http-delete".into())
                .spawn(move || {
                    let _ = perform(&agent, &uri, delete);
                    let _ = done.send(());
                });
            if spawned.is_ok() {
                let _ = finished.recv_timeout(DELETE_WAIT);
            }
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

    /// Aborted requests stop reporting; their thread drops the response (closing its
    /// connection) as soon as its read returns
    fn perform_aborts(&mut self) {
        while let Some(stream) = self.transport.poll_abort() {
            if let Some(abort) = self.streams.remove(&stream) {
                abort.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Starts one HTTP request whose response comes back as [`FromNet`] messages
    fn start(&mut self, planned: HttpRequest) {
        let stream = planned.stream;
        let abort = Arc::new(AtomicBool::new(false));
        let agent = self.agent.clone();
        let uri = self.uri.clone();
        let tx = self.inbox.clone();
        let aborted = Arc::clone(&abort);
        let spawned = thread::Builder::new()
            .name("mcp-http-request".into())
            .spawn(move || {
                let send =
                    |msg| tx.send(Input::Net(msg)).is_ok() && !aborted.load(Ordering::SeqCst);
                match perform(&agent, &uri, planned) {
                    Ok(response) => forward(stream, response, &send),
                    Err(error) => {
                        let _ = send(FromNet::Failed { stream, error });
                    }
                }
            });
        match spawned {
            Ok(_) => {
                self.streams.insert(stream, abort);
            }
            Err(e) => {
                let now = driver::now();
                let error = format!("no thread for the request: {e}");
                self.transport
                    .handle_failed(now, stream, &error, &mut self.session);
            }
        }
    }

    /// Performs one step of the authorization flow on a thread of its own
    fn start_auth(&mut self, action: AuthAction) {
        let Some((agent, user_agent)) = self.auth.clone() else {
            return;
        };
        let tx = self.inbox.clone();
        let work: Box<dyn FnOnce() -> FromNet + Send> = match action {
            AuthAction::Fetch(request) => {
                Box::new(move || FromNet::Auth(crate::auth::perform(&agent, request)))
            }
            AuthAction::Authorize { url } => Box::new(move || FromNet::Redirect(user_agent(url))),
            _ => return,
        };
        let spawned = thread::Builder::new()
            .name("mcp-http-auth".into())
            .spawn(move || {
                let _ = tx.send(Input::Net(work()));
            });
        if let Err(e) = spawned {
            let now = driver::now();
            let why = format!("no thread for the authorization step: {e}");
            self.transport
                .handle_auth_error(now, &why, &mut self.session);
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
            } if self.streams.contains_key(&stream) => {
                self.transport
                    .handle_head(now, stream, status, &headers, session);
            }
            FromNet::Chunk { stream, data } if self.streams.contains_key(&stream) => {
                self.transport.handle_body(now, stream, &data, session);
            }
            FromNet::End { stream } if self.streams.remove(&stream).is_some() => {
                self.transport.handle_end(now, stream, session);
            }
            FromNet::Failed { stream, error } if self.streams.remove(&stream).is_some() => {
                self.transport.handle_failed(now, stream, &error, session);
            }
            FromNet::Auth(response) => {
                self.transport.handle_auth_response(now, response, session);
            }
            FromNet::Redirect(Ok(url)) => self.transport.handle_auth_redirect(now, &url, session),
            FromNet::Redirect(Err(e)) => self.transport.handle_auth_error(now, &e, session),
            // From a request that was aborted meanwhile
            _ => {}
        }
    }
}

/// Performs one planned request
fn perform(
    agent: &ureq::Agent,
    uri: &Uri,
    planned: HttpRequest,
) -> Result<ureq::http::Response<ureq::Body>, String> {
    let mut builder = ureq::http::Request::builder()
        .method(planned.method.as_str())
        .uri(uri.clone());
    for (name, value) in planned.headers {
        builder = builder.header(name, value);
    }
    let request = builder.body(planned.body).map_err(|e| e.to_string())?;
    agent.run(request).map_err(|e| e.to_string())
}

/// Reports a response's head and body pieces, until its end or until `send` says stop
fn forward(
    stream: StreamId,
    response: ureq::http::Response<ureq::Body>,
    send: &dyn Fn(FromNet) -> bool,
) {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
        .collect();
    if !send(FromNet::Head {
        stream,
        status,
        headers,
    }) {
        return;
    }
    let mut body = response.into_body().into_reader();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match body.read(&mut buf) {
            Ok(0) => {
                let _ = send(FromNet::End { stream });
                return;
            }
            Ok(n) => {
                if !send(FromNet::Chunk {
                    stream,
                    data: buf[..n].to_vec(),
                }) {
                    return;
                }
            }
            Err(e) => {
                let _ = send(FromNet::Failed {
                    stream,
                    error: e.to_string(),
                });
                return;
            }
        }
    }
}

/// The endpoint's URI, if it is an `http://` URL with a host
pub(crate) fn parse_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        return Err(format!("{url}: only http:// URLs are supported"));
    }
    Ok(uri)
}
