//! The client over Streamable HTTP: one driver thread owns the client `Session` and its
//! [`ClientTransport`](mcp_sansio::http::ClientTransport) (in a [`ClientFront`]); a `ureq` call on a thread of its own carries each request the
//! transport plans
//!
//! Every protocol decision (headers, ordering, cancellation by closing a response, what a
//! status or a broken stream means, resumption, the GET stream, DELETE on close, and with
//! OAuth every step of authorizing) is the transport's; this file performs HTTP (and the
//! user agent step) and reports what came back.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use mcp_sansio::ClientSession;
use mcp_sansio::auth::AuthAction;
use mcp_sansio::http::{HttpRequest, StreamId};
#[cfg(feature = "auth")]
use mcp_sansio_runtime::http::client_transport;
use mcp_sansio_runtime::http::{ClientFront, Requests, header_list};
use mcp_sansio_runtime::http_options::ProxyTarget;
use mcp_sansio_runtime::net_error;
use ureq::http::Uri;

#[cfg(feature = "auth")]
use crate::auth;
use crate::client_tls::Tls;
use crate::proxy_form;
use crate::threads::{
    self, ClientOptions, FromNet, Handlers, Input, Peer, Ready, Route, now, recv_until, unix_ms,
};

/// How long closing waits for the DELETE that ends a 2025-wire session
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// Performs requests on threads of their own
struct Threads {
    agent: ureq::Agent,
    uri: Uri,
    reach: Arc<Reach>,
    inbox: Sender<Input>,
    /// With OAuth: the agent for authorization requests, and the user agent
    #[cfg(feature = "auth")]
    auth: Option<(ureq::Agent, auth::UserAgent)>,
}

impl Requests for Threads {
    /// Setting the flag aborts the request: it stops reporting, and its thread drops the
    /// response (closing its connection) as soon as its read returns
    type Task = Arc<AtomicBool>;

    fn start(&mut self, planned: HttpRequest) -> Result<Arc<AtomicBool>, String> {
        let stream = planned.stream;
        let abort = Arc::new(AtomicBool::new(false));
        let agent = self.agent.clone();
        let uri = self.uri.clone();
        let reach = Arc::clone(&self.reach);
        let tx = self.inbox.clone();
        let aborted = Arc::clone(&abort);
        thread::Builder::new()
            .name("mcp-http-request".into())
            .spawn(move || {
                let send =
                    |msg| tx.send(Input::Net(msg)).is_ok() && !aborted.load(Ordering::SeqCst);
                match perform(&agent, &uri, &reach, planned) {
                    Ok(response) => forward(stream, response, &send),
                    Err(error) => {
                        let _ = send(FromNet::Failed { stream, error });
                    }
                }
            })
            .map_err(|e| format!("no thread for the request: {e}"))?;
        Ok(abort)
    }

    #[cfg(not(feature = "auth"))]
    fn start_auth(&mut self, _: AuthAction) -> Result<(), String> {
        Err("OAuth needs the `auth` feature of mcp-sansio-blocking".into())
    }

    #[cfg(feature = "auth")]
    fn start_auth(&mut self, action: AuthAction) -> Result<(), String> {
        let Some((agent, user_agent)) = self.auth.clone() else {
            return Ok(());
        };
        let tx = self.inbox.clone();
        let work: Box<dyn FnOnce() -> FromNet + Send> = match action {
            AuthAction::Fetch(request) => {
                Box::new(move || FromNet::Auth(auth::perform(&agent, request)))
            }
            AuthAction::Authorize { url } => Box::new(move || FromNet::Redirect(user_agent(url))),
            _ => return Ok(()),
        };
        thread::Builder::new()
            .name("mcp-http-auth".into())
            .spawn(move || {
                let _ = tx.send(Input::Net(work()));
            })
            .map_err(|e| format!("no thread for the authorization step: {e}"))?;
        Ok(())
    }

    fn abort(&mut self, task: Arc<AtomicBool>) {
        task.store(true, Ordering::SeqCst);
    }
}

struct Actor {
    front: ClientFront<Threads>,
    peer: Peer,
    app: threads::App,
    handlers: Handlers,
}

/// The proxy the options name for `uri`, if any
///
/// # Errors
/// A proxy setting that cannot be used.
pub(crate) fn proxy(
    uri: &Uri,
    http: &mcp_sansio_runtime::http_options::HttpOptions,
) -> Result<Option<ProxyTarget>, String> {
    let host = uri.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    http.proxy
        .for_target(uri.scheme_str().unwrap_or("http"), host)
        .map_err(|e| e.to_string())
}

/// `proxy` as ureq's for an `https://` server (ureq tunnels through it with `CONNECT`), its
/// credentials those of our resolution
fn ureq_proxy(proxy: &ProxyTarget) -> Result<ureq::Proxy, String> {
    let mut builder = ureq::Proxy::builder(ureq::ProxyProtocol::Http)
        .host(&proxy.host)
        .port(proxy.port);
    if let Some((user, password)) = proxy.credentials() {
        builder = builder.username(&user).password(&password);
    }
    builder
        .build()
        .map_err(|e| format!("the proxy `{}` cannot be used: {e}", proxy.url))
}

/// How the requests reach the server, and the time limits on the way
struct Reach {
    /// The endpoint's URL, for messages
    url: String,
    /// `host:port` of the server, for messages
    server: String,
    proxy: Option<ProxyTarget>,
    connect_timeout: Duration,
    request_timeout: Duration,
}

/// Runs a client connection over Streamable HTTP until it closes (on the calling thread)
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    uri: Uri,
    tls: Tls,
    proxy: Option<ProxyTarget>,
    session: ClientSession,
    inbox: Receiver<Input>,
    tx: Sender<Input>,
    options: ClientOptions,
    ready: Ready,
) {
    let https = uri.scheme_str() == Some("https");
    let config = ureq::Agent::config_builder()
        // Every status is the transport's to judge
        .http_status_as_error(false)
        .max_redirects(0)
        // TCP_NODELAY: a request must not wait for the server's delayed ACK
        .no_delay(true)
        // A fresh connection per request: an aborted response stream closes with its own
        // connection (once its pending read returns), and a server that went away is
        // noticed at once instead of through a kept-alive connection nobody serves
        .max_idle_connections_per_host(0)
        // Our resolution of the proxy is the one rule: ureq must not read the environment.
        // For `https://` ureq tunnels with `CONNECT`; `http://` goes in absolute form
        // through `proxy_form`.
        .proxy(match proxy.as_ref().filter(|_| https).map(ureq_proxy) {
            Some(Ok(proxy)) => Some(proxy),
            Some(Err(e)) => {
                let _ = ready.send(Err(mcp_sansio::CloseReason::Handshake(e)));
                return;
            }
            None => None,
        })
        // TCP, the proxy's tunnel and TLS
        .timeout_connect(Some(options.http.connect_timeout))
        // From the request sent to its response head; the body may then last
        .timeout_recv_response(Some(options.http.request_timeout));
    #[cfg(feature = "tls")]
    let config = config.tls_config(tls);
    #[cfg(not(feature = "tls"))]
    let Tls = tls;
    let config = config.build();
    let agent: ureq::Agent = match proxy.as_ref().filter(|_| !https) {
        Some(proxy) => proxy_form::agent(config, &uri, proxy),
        None => proxy_form::naming_agent(config),
    };
    #[cfg(feature = "auth")]
    let (transport, user_agent) = client_transport(
        options.auth.as_ref(),
        &uri.to_string(),
        "mcp-sansio-blocking",
    );
    #[cfg(not(feature = "auth"))]
    let transport = mcp_sansio::http::ClientTransport::new();
    let transport = match transport.with_headers(options.http.headers.iter().cloned()) {
        Ok(transport) => transport,
        Err(e) => {
            // `Client::connect_http` checked them already.
            let _ = ready.send(Err(mcp_sansio::CloseReason::Handshake(e.to_string())));
            return;
        }
    };
    let reach = Reach {
        url: uri.to_string(),
        server: format!(
            "{}:{}",
            uri.host().unwrap_or_default(),
            uri.port_u16().unwrap_or(if https { 443 } else { 80 })
        ),
        proxy,
        connect_timeout: options.http.connect_timeout,
        request_timeout: options.http.request_timeout,
    };
    let threads = Threads {
        agent,
        uri,
        reach: Arc::new(reach),
        inbox: tx.clone(),
        #[cfg(feature = "auth")]
        auth: user_agent.map(|user_agent| (auth::agent(), user_agent)),
    };
    let actor = Actor {
        front: ClientFront::new(session, transport, threads, now),
        peer: Peer::new(Some(ready)).over_http(),
        app: threads::app(None, &options),
        handlers: Handlers::new(Route::inbox(tx)),
    };
    actor.run(&inbox);
}

impl Actor {
    fn run(mut self, inbox: &Receiver<Input>) {
        self.front.session.anchor_wall_clock(now(), unix_ms());
        let mut closing = false;
        loop {
            self.pump();
            if self.front.session.is_closed() {
                break;
            }
            let Ok(input) = recv_until(inbox, self.front.poll_timeout()) else {
                break;
            };
            match input {
                None => self.front.handle_timeout(),
                Some(Input::Command(command)) if !closing => {
                    closing = self.peer.on_command(&mut self.front.session, command);
                    if closing {
                        self.close();
                    }
                }
                Some(Input::Net(msg)) => self.front.on_net(msg),
                Some(Input::Handler(_, msg)) => {
                    self.peer.on_client_handler(&mut self.front.session, msg)
                }
                Some(_) => {}
            }
        }
        self.front.abort_all();
        self.peer.abort_all();
    }

    /// Ends the session: DELETE (2025 wire, waited for briefly), then close
    fn close(&mut self) {
        if let Some(delete) = self.front.close() {
            let (done, finished) = crossbeam_channel::bounded::<()>(1);
            let agent = self.front.requests.agent.clone();
            let uri = self.front.requests.uri.clone();
            let reach = Arc::clone(&self.front.requests.reach);
            let spawned = thread::Builder::new()
                .name("mcp-http-delete".into())
                .spawn(move || {
                    let _ = perform(&agent, &uri, &reach, delete);
                    let _ = done.send(());
                });
            if spawned.is_ok() {
                let _ = finished.recv_timeout(DELETE_WAIT);
            }
        }
        self.front.closed();
    }

    /// Moves what the session transmits into HTTP requests and delivers its events until
    /// both are quiet
    fn pump(&mut self) {
        self.front
            .pump_peer(&mut self.peer, &self.app, &self.handlers);
    }
}

/// Performs one planned request
fn perform(
    agent: &ureq::Agent,
    uri: &Uri,
    reach: &Reach,
    planned: HttpRequest,
) -> Result<ureq::http::Response<ureq::Body>, String> {
    let method = planned.method.as_str();
    let request =
        mcp_sansio_runtime::http::request(method, uri.clone(), planned.headers, planned.body)
            .map_err(|e| e.to_string())?;
    agent.run(request).map_err(|e| failure(&e, reach))
}

/// Why a request failed, in one sentence: the OS's cause, the proxy's refusal, what the
/// TLS handshake refused, the time limit
fn failure(error: &ureq::Error, reach: &Reach) -> String {
    use ureq::Timeout;
    let (url, server) = (reach.url.as_str(), reach.server.as_str());
    #[cfg(feature = "tls")]
    {
        let explained = match error {
            ureq::Error::Rustls(tls) => Some(mcp_sansio_runtime::tls::describe(tls, server)),
            ureq::Error::Io(io) => mcp_sansio_runtime::tls::explain(io, server),
            _ => None,
        };
        if let Some(why) = explained {
            return why;
        }
    }
    match (error, &reach.proxy) {
        (ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve), _) => {
            net_error::connect_timed_out(url, reach.connect_timeout)
        }
        (ureq::Error::Timeout(Timeout::RecvResponse), _) => {
            net_error::no_response_head(url, reach.request_timeout)
        }
        (ureq::Error::Other(e), _) if net_error::worded(e.as_ref()).is_some() => {
            net_error::worded(e.as_ref()).unwrap_or_default()
        }
        (ureq::Error::HostNotFound, Some(proxy)) => {
            net_error::could_not_resolve(&proxy.host, &"host not found")
        }
        (ureq::Error::HostNotFound, None) => {
            let host = server.rsplit_once(':').map_or(server, |(h, _)| h);
            net_error::could_not_resolve(host, &"host not found")
        }
        (ureq::Error::ConnectProxyFailed(reason), Some(proxy)) => {
            // ureq says `proxy server responded 403/403`: the status is what matters.
            let status = reason
                .strip_prefix("proxy server responded ")
                .and_then(|r| r.split('/').next())
                .and_then(|s| s.parse::<u16>().ok());
            match status {
                Some(status) => mcp_sansio_runtime::tunnel::refused(
                    proxy,
                    server,
                    status,
                    mcp_sansio_runtime::h1::reason(status),
                ),
                None => mcp_sansio_runtime::tunnel::closed(proxy, server),
            }
        }
        (ureq::Error::Io(io), proxy) if connect_failure(io) => match proxy {
            Some(proxy) => net_error::proxy_unreachable(proxy, url, io),
            None => net_error::could_not_connect(url, io),
        },
        _ => error.to_string(),
    }
}

/// Whether `io` is a failure to open a TCP connection
fn connect_failure(io: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        io.kind(),
        ConnectionRefused | HostUnreachable | NetworkUnreachable | AddrNotAvailable
    )
}

/// Reports a response's head and body pieces, until its end or until `send` says stop
fn forward(
    stream: StreamId,
    response: ureq::http::Response<ureq::Body>,
    send: &dyn Fn(FromNet) -> bool,
) {
    let status = response.status().as_u16();
    let headers = header_list(response.headers());
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

/// The endpoint's URI, if it is an `http://` URL (or `https://`, with the `tls` feature)
/// with a host
pub(crate) fn parse_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(format!(
            "{url}: only http:// and https:// URLs are supported"
        ));
    }
    if cfg!(not(feature = "tls")) && uri.scheme_str() == Some("https") {
        return Err(format!(
            "{url}: https:// needs the `tls` feature of mcp-sansio-blocking"
        ));
    }
    Ok(uri)
}
