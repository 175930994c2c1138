//! An HTTP server and a scripted application around it, on a fake clock, without sockets

#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::codec::sse::{SseDecoder, SseEvent};
use mcp_sansio::http::{
    ExchangeId, HttpConfig, HttpResponse, HttpServer, Output, Reply, ResponseHead, SessionKey,
    Source,
};
use mcp_sansio::schema::{InputRequest, InputRequests};
use mcp_sansio::testing::Pair;
use mcp_sansio::{
    ErrorObject, InboundId, Progress, Responder, ServerConfig, ServerEvent, ServerSession,
};
use serde_json::{Value, json};

/// What one exchange produced so far
#[derive(Debug, Default, Clone)]
pub struct Collected {
    pub head: Option<ResponseHead>,
    pub body: Vec<u8>,
    pub ended: bool,
}

impl Collected {
    pub fn status(&self) -> u16 {
        self.head.as_ref().expect("a head was sent").status
    }

    pub fn is_sse(&self) -> bool {
        self.head
            .as_ref()
            .and_then(|h| h.header("Content-Type"))
            .is_some_and(|c| c.starts_with("text/event-stream"))
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    pub fn events(&self) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new(1 << 20);
        decoder.push(&self.body);
        let mut events = Vec::new();
        while let Some(e) = decoder.next_event() {
            events.push(e.unwrap());
        }
        events
    }

    /// The JSON-RPC messages of an SSE body (empty priming events left out)
    pub fn messages(&self) -> Vec<Value> {
        if !self.is_sse() {
            return vec![self.json()];
        }
        self.events()
            .into_iter()
            .filter(|e| !e.data.is_empty())
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect()
    }
}

pub struct Kit {
    pub http: HttpServer,
    pub now: Instant,
    next_id: u128,
    pub exchanges: HashMap<ExchangeId, Collected>,
    /// Requests the application holds: (session, responder, tool name)
    pub held: Vec<(SessionKey, Responder, String)>,
    /// Requests cancelled by the client
    pub cancelled: Vec<InboundId>,
    /// Notifications the server sessions received
    pub notifications: Vec<String>,
    pub closed: Vec<SessionKey>,
    /// Where the next requests come from (unknown until a test sets it)
    pub source: Source,
}

pub fn server_config() -> ServerConfig {
    let mut config = Pair::server_config();
    config.state_key = Some([7; 32]);
    config
}

impl Kit {
    pub fn new() -> Self {
        Self::with_config(HttpConfig::default())
    }

    pub fn with_config(config: HttpConfig) -> Self {
        #[allow(clippy::disallowed_methods)] // the fake clock starts at any instant
        let now = Instant::now();
        Self {
            http: HttpServer::new(Arc::new(config), Arc::new(server_config()), now),
            now,
            next_id: 0,
            exchanges: HashMap::new(),
            held: Vec::new(),
            cancelled: Vec::new(),
            notifications: Vec::new(),
            closed: Vec::new(),
            source: Source::unknown(),
        }
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.http.handle_timeout(self.now);
        self.pump();
    }

    /// Any HTTP request, with the `Host` every HTTP/1.1 stack sends (unless `headers` have
    /// one); a complete reply is returned, an open one is pumped
    pub fn request(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<HttpResponse, ExchangeId> {
        let mut with_host = headers.to_vec();
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("Host")) {
            with_host.push(("Host", "127.0.0.1:3000"));
        }
        let headers = with_host.as_slice();
        let counter = &mut self.next_id;
        let mut ids = || {
            *counter += 1;
            (0xABCD_0000_0000_0000_0000_0000_0000_0000u128 + *counter).to_be_bytes()
        };
        let reply = self.http.handle_request(
            self.now,
            &self.source,
            method,
            headers,
            body.as_bytes(),
            &mut ids,
        );
        let out = match reply {
            Reply::Complete(response) => Ok(response),
            Reply::Open(exchange) => {
                self.exchanges.entry(exchange).or_default();
                Err(exchange)
            }
            _ => unreachable!(),
        };
        self.pump();
        out
    }

    pub fn post(
        &mut self,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Result<HttpResponse, ExchangeId> {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Host", "127.0.0.1:3000"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", &all, &body.to_string())
    }

    pub fn collected(&self, exchange: ExchangeId) -> &Collected {
        &self.exchanges[&exchange]
    }

    pub fn close(&mut self, exchange: ExchangeId) {
        self.http.handle_closed(self.now, exchange);
        self.pump();
    }

    /// Runs the application and collects outputs until both are quiet
    pub fn pump(&mut self) {
        loop {
            let mut busy = false;
            while let Some((key, event)) = self.http.poll_event() {
                busy = true;
                self.on_event(key, event);
            }
            while let Some(output) = self.http.poll_output() {
                busy = true;
                match output {
                    Output::Head { exchange, head } => {
                        let c = self.exchanges.entry(exchange).or_default();
                        assert!(c.head.is_none(), "one head per exchange");
                        c.head = Some(head);
                    }
                    Output::Body { exchange, data } => {
                        let c = self.exchanges.entry(exchange).or_default();
                        assert!(c.head.is_some() && !c.ended, "body after the head");
                        c.body.extend_from_slice(&data);
                    }
                    Output::End { exchange } => {
                        let c = self.exchanges.entry(exchange).or_default();
                        assert!(!c.ended, "one end per exchange");
                        c.ended = true;
                    }
                    _ => unreachable!(),
                }
            }
            if !busy {
                return;
            }
        }
    }

    fn on_event(&mut self, key: SessionKey, event: ServerEvent) {
        let now = self.now;
        match event {
            ServerEvent::Request(request) => {
                let session = self.http.session_mut(key).unwrap();
                let params: Value = request.params_as().unwrap_or(json!({}));
                let name = params["name"].as_str().unwrap_or("").to_owned();
                let responder = request.responder;
                match (request.method.as_str(), name.as_str()) {
                    ("tools/call", "echo") => {
                        let text = params["arguments"]["text"]
                            .as_str()
                            .unwrap_or("hi")
                            .to_owned();
                        respond(
                            session,
                            responder,
                            json!({"content": [{"type": "text", "text": text}]}),
                        );
                    }
                    ("tools/call", "progress") => {
                        session
                            .inbound(responder.id())
                            .report_progress(&Progress::new(1.0).total(2.0))
                            .unwrap();
                        let log = raw(json!({"level": "info", "data": "working"}));
                        session
                            .inbound(responder.id())
                            .send_notification_raw("notifications/message", Some(&log))
                            .unwrap();
                        session
                            .inbound(responder.id())
                            .report_progress(&Progress::new(2.0).total(2.0))
                            .unwrap();
                        respond(session, responder, json!({"content": []}));
                    }
                    ("tools/call", "needs_sampling") => {
                        let error = ErrorObject::new(
                            -32021,
                            "Missing required client capability: sampling",
                        )
                        .with_data(&json!({"requiredCapabilities": {"sampling": {}}}));
                        session.respond_error(responder, &error);
                    }
                    ("tools/call", "busy") => {
                        let error = ErrorObject::server_busy("no handler thread left");
                        session.respond_error(responder, &error);
                    }
                    ("tools/call", "ask") => {
                        match session
                            .inbound(responder.id())
                            .ask_input(now, one_elicitation())
                            .unwrap()
                        {
                            mcp_sansio::Asked::Sent => self.held.push((key, responder, name)),
                            mcp_sansio::Asked::Suspended => {}
                            mcp_sansio::Asked::Answered(_) => {
                                respond(
                                    session,
                                    responder,
                                    json!({"content": [{"type": "text", "text": "answered"}]}),
                                );
                            }
                            _ => unreachable!(),
                        }
                    }
                    ("tools/call", _) => self.held.push((key, responder, name)),
                    ("tools/list", _) => respond(session, responder, json!({"tools": []})),
                    _ => respond(session, responder, json!({})),
                }
            }
            ServerEvent::InputAnswered { request, .. } => {
                let at = self
                    .held
                    .iter()
                    .position(|(_, r, _)| r.id() == request)
                    .unwrap();
                let (key, responder, _) = self.held.remove(at);
                let session = self.http.session_mut(key).unwrap();
                respond(
                    session,
                    responder,
                    json!({"content": [{"type": "text", "text": "Ada"}]}),
                );
            }
            ServerEvent::Cancelled { id, .. } => self.cancelled.push(id),
            ServerEvent::Notification(n) => self.notifications.push(n.method),
            ServerEvent::Closed { .. } => self.closed.push(key),
            _ => {}
        }
    }

    /// Answers a held request
    pub fn finish(&mut self, name: &str, text: &str) {
        let at = self.held.iter().position(|(_, _, n)| n == name).unwrap();
        let (key, responder, _) = self.held.remove(at);
        let session = self.http.session_mut(key).unwrap();
        respond(
            session,
            responder,
            json!({"content": [{"type": "text", "text": text}]}),
        );
        self.pump();
    }

    /// The 2025 handshake: returns the session id
    pub fn initialize(&mut self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}, "elicitation": {}},
            "clientInfo": {"name": "conformance-test-client", "version": "1.0.0"}}});
        let exchange = self.post(&[], &init).unwrap_err();
        let c = self.collected(exchange).clone();
        assert!(c.ended);
        let sid = c
            .head
            .as_ref()
            .unwrap()
            .header("Mcp-Session-Id")
            .unwrap()
            .to_owned();
        let result = &c.messages()[0];
        assert_eq!(result["result"]["protocolVersion"], "2025-11-25");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self
            .post(
                &[
                    ("Mcp-Session-Id", &sid),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
                &initialized,
            )
            .unwrap();
        assert_eq!(r.status, 202);
        sid
    }
}

pub fn respond(session: &mut ServerSession, responder: Responder, result: Value) {
    session.respond_raw(responder, &raw(result)).unwrap();
}

pub use mcp_sansio::testing::raw;

pub fn one_elicitation() -> InputRequests {
    let request: InputRequest = serde_json::from_value(json!({"method": "elicitation/create", "params": {
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    }}))
    .unwrap();
    let mut map = BTreeMap::new();
    map.insert("name".to_owned(), request);
    map
}

/// A modern request body with the envelope `_meta`
pub fn modern(id: i64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "conformance-test-client", "version": "1.0.0"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
