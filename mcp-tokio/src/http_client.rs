//! The client over Streamable HTTP: one actor owns the client `Session` and the
//! [`HttpClient`] rules; hyper tasks carry each POST and GET
//!
//! Every message the session transmits is POSTed with [`HttpClient::post_headers`]; each
//! response is read as [`HttpClient::handle_response`] says (a JSON body, or SSE decoded
//! with [`SseDecoder`]) and fed to the session. After a 2025 `initialize` the standalone GET
//! stream is opened (405 is fine); an interrupted stream is resumed with `Last-Event-ID`
//! when [`HttpClient::stream_ended`] arms it; closing sends DELETE.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_core::codec::sse::SseDecoder;
use mcp_core::http::{HttpClient, MCP_METHOD, ResponseKind};
use mcp_core::schema::ListToolsResult;
use mcp_core::{Event, Session};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::driver::{self, ClientOptions, Command, Handlers, Peer, Ready};

type Net = hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>;

/// The largest SSE event (or JSON body) accepted from the server
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// From the request tasks to the actor
enum FromNet {
    Head {
        stream: u64,
        status: u16,
        headers: Vec<(String, String)>,
    },
    Chunk {
        stream: u64,
        data: Bytes,
    },
    End {
        stream: u64,
    },
    Failed {
        stream: u64,
        error: String,
    },
}

/// One request or response stream in flight
struct Stream {
    /// The JSON-RPC id of the request whose answer this stream carries
    awaits: Option<Value>,
    kind: Option<ResponseKind>,
    decoder: SseDecoder,
    json: Vec<u8>,
    complete: bool,
    /// Later POSTs wait for this one's head (2025 wire: keeps the server's view in order)
    blocking: bool,
    task: AbortHandle,
}

struct Actor {
    session: Session,
    http: HttpClient,
    net: Net,
    uri: hyper::Uri,
    peer: Peer,
    options: ClientOptions,
    handlers: Handlers,
    streams: HashMap<u64, Stream>,
    next_stream: u64,
    outbox: VecDeque<Vec<u8>>,
    /// Reconnections armed: `Last-Event-ID` -> the request the stream still owes
    resumes: HashMap<String, Option<Value>>,
    from_net: mpsc::UnboundedSender<FromNet>,
    get_opened: bool,
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
    let actor = Actor {
        session,
        http: HttpClient::new(),
        net: Hyper::builder(TokioExecutor::new()).build_http(),
        uri,
        peer: Peer::new(Some(ready)),
        options,
        handlers,
        streams: HashMap::new(),
        next_stream: 1,
        outbox: VecDeque::new(),
        resumes: HashMap::new(),
        from_net,
        get_opened: false,
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
            let deadline = [self.session.poll_timeout(), self.http.poll_timeout()]
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
                    while let Some(last) = self.http.poll_reconnect(now) {
                        let awaits = self.resumes.remove(&last).flatten();
                        let headers = self.http.get_headers(Some(&last));
                        self.start("GET", headers, Bytes::new(), awaits, false);
                    }
                }
            }
        }
        for stream in self.streams.values() {
            stream.task.abort();
        }
        self.peer.abort_all();
    }

    /// Ends the session: DELETE (2025 wire), then close
    async fn close(&mut self) {
        for stream in self.streams.values() {
            stream.task.abort();
        }
        self.streams.clear();
        if let Some(headers) = self.http.delete_headers() {
            let request = self.request("DELETE", headers, Bytes::new());
            if let Ok(request) = request {
                let _ =
                    tokio::time::timeout(Duration::from_secs(2), self.net.request(request)).await;
            }
        }
        self.session.close(driver::now());
    }

    /// Writes what the session transmits and delivers its events until both are quiet
    fn pump(&mut self) {
        loop {
            let mut busy = false;
            let mut buf = Vec::new();
            while let Some(t) = self.session.poll_transmit(&mut buf) {
                busy = true;
                let start = buf.len() - t.len;
                let mut message = buf.split_off(start);
                if message.last() == Some(&b'\n') {
                    message.pop();
                }
                self.outbox.push_back(message);
            }
            self.send_outbox();
            while let Some(event) = self.session.poll_event() {
                busy = true;
                self.on_event(event);
            }
            if !busy {
                return;
            }
        }
    }

    fn on_event(&mut self, event: Event) {
        match &event {
            Event::Ready { .. } => {
                if let Some(version) = self.session.version() {
                    self.http.set_version(version);
                }
                if self.http.session_id().is_some() && !self.get_opened {
                    // The standalone stream for the server's own messages (405 is fine).
                    self.get_opened = true;
                    let headers = self.http.get_headers(None);
                    self.start("GET", headers, Bytes::new(), None, false);
                }
            }
            Event::Response {
                id,
                outcome: Ok(raw),
            } if self.peer.method_of(*id) == Some("tools/list") => {
                if let Ok(mut list) = serde_json::from_str::<ListToolsResult>(raw.get()) {
                    let _ = self.http.observe_tools(&mut list);
                }
            }
            _ => {}
        }
        self.peer.on_event(
            &mut self.session,
            event,
            None,
            &self.options,
            &self.handlers,
        );
    }

    /// POSTs the queued messages, in order: a 2025-wire POST waits for the one before it to
    /// be answered with a head
    fn send_outbox(&mut self) {
        while !self.streams.values().any(|s| s.blocking) {
            let Some(message) = self.outbox.pop_front() else {
                return;
            };
            let parsed: Value = serde_json::from_slice(&message).unwrap_or(Value::Null);
            let method = parsed.get("method").and_then(Value::as_str);
            if method == Some("notifications/cancelled") && self.http.session_id().is_none() {
                // The 2026 wire cancels by closing the request's response.
                let target = parsed.pointer("/params/requestId").cloned();
                let found = self
                    .streams
                    .iter()
                    .find(|(_, s)| s.awaits.is_some() && s.awaits == target)
                    .map(|(no, _)| *no);
                if let Some(no) = found
                    && let Some(stream) = self.streams.remove(&no)
                {
                    stream.task.abort();
                }
                continue;
            }
            let awaits = method.and_then(|_| parsed.get("id").cloned());
            let headers = self.http.post_headers(&message);
            let blocking = !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(MCP_METHOD));
            self.start("POST", headers, Bytes::from(message), awaits, blocking);
        }
    }

    fn request(
        &self,
        method: &str,
        headers: Vec<(String, String)>,
        body: Bytes,
    ) -> Result<Request<Full<Bytes>>, hyper::http::Error> {
        let mut builder = Request::builder().method(method).uri(self.uri.clone());
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        builder.body(Full::new(body))
    }

    /// Starts one HTTP request whose response comes back as [`FromNet`] messages
    fn start(
        &mut self,
        method: &str,
        headers: Vec<(String, String)>,
        body: Bytes,
        awaits: Option<Value>,
        blocking: bool,
    ) {
        let no = self.next_stream;
        self.next_stream += 1;
        let tx = self.from_net.clone();
        let request = self.request(method, headers, body);
        let net = self.net.clone();
        let task = tokio::spawn(async move {
            let response = match request {
                Ok(request) => net.request(request).await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match response {
                Ok(response) => forward(no, response, &tx).await,
                Err(error) => {
                    let _ = tx.send(FromNet::Failed { stream: no, error });
                }
            }
        })
        .abort_handle();
        self.streams.insert(
            no,
            Stream {
                awaits,
                kind: None,
                decoder: SseDecoder::new(MAX_MESSAGE),
                json: Vec::new(),
                complete: false,
                blocking,
                task,
            },
        );
    }

    fn on_net(&mut self, msg: FromNet) {
        let now = driver::now();
        match msg {
            FromNet::Head {
                stream: no,
                status,
                headers,
            } => {
                let kind = self.http.handle_response(status, &headers);
                let Some(stream) = self.streams.get_mut(&no) else {
                    return;
                };
                stream.kind = Some(kind);
                stream.blocking = false;
                match kind {
                    ResponseKind::Json | ResponseKind::EventStream => {}
                    ResponseKind::Accepted | ResponseKind::NotAllowed => {
                        stream.complete = true;
                    }
                    ResponseKind::SessionExpired => {
                        // The server ended the session: so does this client.
                        self.session.close(now);
                    }
                    ResponseKind::Failed { status } => {
                        let awaits = stream.awaits.take();
                        self.fail(awaits, &format!("the server answered HTTP {status}"));
                    }
                    _ => {}
                }
            }
            FromNet::Chunk { stream: no, data } => {
                let Some(stream) = self.streams.get_mut(&no) else {
                    return;
                };
                match stream.kind {
                    Some(ResponseKind::Json) if stream.json.len() + data.len() <= MAX_MESSAGE => {
                        stream.json.extend_from_slice(&data);
                    }
                    Some(ResponseKind::EventStream) => {
                        stream.decoder.push(&data);
                        let mut messages = Vec::new();
                        while let Some(event) = stream.decoder.next_event() {
                            if let Ok(event) = event
                                && !event.data.is_empty()
                            {
                                messages.push(event.data);
                            }
                        }
                        for message in messages {
                            self.deliver(no, message.as_bytes());
                        }
                    }
                    _ => {}
                }
            }
            FromNet::End { stream: no } => {
                let Some(mut stream) = self.streams.remove(&no) else {
                    return;
                };
                match stream.kind {
                    Some(ResponseKind::Json) => {
                        let json = std::mem::take(&mut stream.json);
                        self.streams.insert(no, stream);
                        self.deliver(no, &json);
                        let Some(stream) = self.streams.remove(&no) else {
                            return;
                        };
                        if !stream.complete {
                            self.fail(stream.awaits, "the response held no answer");
                        }
                    }
                    Some(ResponseKind::EventStream) => {
                        stream.decoder.finish();
                        if self.session.is_closed() {
                            return;
                        }
                        let resume = self
                            .http
                            .stream_ended(now, &stream.decoder, stream.complete);
                        if resume.is_some() {
                            if let Some(last) = stream.decoder.last_event_id() {
                                self.resumes.insert(last.to_owned(), stream.awaits);
                            }
                        } else if !stream.complete {
                            self.fail(stream.awaits, "the event stream ended without an answer");
                        }
                    }
                    _ => {}
                }
            }
            FromNet::Failed { stream: no, error } => {
                if let Some(stream) = self.streams.remove(&no) {
                    self.fail(stream.awaits, &format!("the HTTP request failed: {error}"));
                }
            }
        }
    }

    /// Feeds one message to the session; notes the answer its stream was waiting for
    fn deliver(&mut self, no: u64, message: &[u8]) {
        if let Some(stream) = self.streams.get_mut(&no)
            && let Some(awaits) = &stream.awaits
        {
            let parsed: Value = serde_json::from_slice(message).unwrap_or(Value::Null);
            if parsed.get("method").is_none() && parsed.get("id") == Some(awaits) {
                stream.complete = true;
            }
        }
        self.session.handle_message(driver::now(), message);
    }

    /// A request's answer will not come: the session gets an error answer in its place
    fn fail(&mut self, awaits: Option<Value>, why: &str) {
        let Some(id) = awaits else { return };
        let error = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32603, "message": why},
        });
        self.session
            .handle_message(driver::now(), error.to_string().as_bytes());
    }
}

/// Sends a response's head and body pieces to the actor
async fn forward(
    no: u64,
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
