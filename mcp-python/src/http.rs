//! The `HttpServer` class: the Streamable HTTP rules of `mcp_sansio::http::HttpServer` (both
//! wires, every session of one endpoint) for a Python HTTP front end to drive

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_sansio::http::{
    ExchangeId, HostPolicy, HttpConfig, HttpResponse, HttpServer, Output, Reply, RequiredScopes,
    SessionIdSource, Source, session_id_from_bytes,
};
use mcp_sansio::session::HeaderFields;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::clock::Clock;
use crate::config::PyServerConfig;
use crate::convert::FieldValue;
use crate::events;
use crate::identity::{PyPrincipal, PyResourceServer};
use crate::numbers::Numbers;
use crate::server::ServerCore;
use crate::store::{Attached, Inbox, PyTaskStore};

/// Session ids from the standard library's random hasher keys and a counter
struct Ids {
    keys: [RandomState; 2],
    counter: u64,
}

impl SessionIdSource for Ids {
    fn next_session_id(&mut self) -> String {
        self.counter += 1;
        let hi = self.keys[0].hash_one(self.counter);
        let lo = self.keys[1].hash_one(self.counter);
        session_id_from_bytes(((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes())
    }
}

/// The scopes the entries of `config`'s catalog require, for the check before a session
fn required_scopes(config: &PyServerConfig) -> Option<Arc<dyn RequiredScopes>> {
    config
        .catalog
        .access()
        .map(|a| -> Arc<dyn RequiredScopes> { a })
}

/// The Streamable HTTP rules and every session of one MCP endpoint, sans IO
///
/// The front end parses HTTP; for each request it calls `handle_request` and writes the
/// complete response, or, for an open one, what `next_output()` yields. Application events
/// and commands are those of `ServerSession`.
#[pyclass(module = "mcp_sansio._core", name = "HttpServer")]
pub(crate) struct PyHttpServer {
    http: HttpServer,
    core: ServerCore,
    clock: Clock,
    ids: Ids,
    exchanges: Numbers<ExchangeId>,
    /// The task store the sessions share their tasks through (`attach_store`)
    store: Option<Attached>,
}

type Headers = Vec<(&'static str, String)>;

/// Header fields as received
type RawFields = Vec<(String, Vec<u8>)>;

/// A request's fields as text, in one buffer; `Err` with them as bytes when a value is not
/// UTF-8
fn text_fields(fields: Vec<(String, FieldValue)>) -> Result<HeaderFields, RawFields> {
    let pairs = fields.iter().map(|(n, v)| (n, v.as_bytes()));
    HeaderFields::from_utf8(pairs).ok_or_else(|| {
        fields
            .into_iter()
            .map(|(n, v)| (n, v.into_bytes()))
            .collect()
    })
}

fn complete<'py>(py: Python<'py>, r: HttpResponse) -> PyResult<Bound<'py, PyTuple>> {
    let headers: Headers = r.headers;
    PyTuple::new(
        py,
        [
            "complete".into_pyobject(py)?.into_any(),
            r.status.into_pyobject(py)?.into_any(),
            headers.into_pyobject(py)?.into_any(),
            PyBytes::new(py, &r.body).into_any(),
        ],
    )
}

impl PyHttpServer {
    /// The connection edge's settings (deadlines, caps) for the Rust front end
    pub(crate) fn edge(&self) -> HttpConfig {
        self.http.config().clone()
    }
}

server_pymethods!(pymethods_block, PyHttpServer, http, {
    #[new]
    #[pyo3(signature = (config, *, now=None, allowed_hosts=None, allow_any_host=false,
        max_body_size=None, idle_timeout=None, retry=None, keepalive=None,
        header_read_timeout=None, body_read_timeout=None, keep_alive_timeout=None,
        max_connections=None, accept_backoff=None, max_sessions=None,
        max_in_flight=None, max_in_flight_per_peer=None, max_in_flight_per_connection=None,
        max_unwritten=None, node=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        config: &PyServerConfig,
        now: Option<f64>,
        allowed_hosts: Option<Vec<String>>,
        allow_any_host: bool,
        max_body_size: Option<usize>,
        idle_timeout: Option<f64>,
        retry: Option<f64>,
        keepalive: Option<f64>,
        header_read_timeout: Option<f64>,
        body_read_timeout: Option<f64>,
        keep_alive_timeout: Option<f64>,
        max_connections: Option<usize>,
        accept_backoff: Option<f64>,
        max_sessions: Option<usize>,
        max_in_flight: Option<usize>,
        max_in_flight_per_peer: Option<usize>,
        max_in_flight_per_connection: Option<usize>,
        max_unwritten: Option<usize>,
        node: Option<&str>,
    ) -> PyResult<Self> {
        let clock = Clock::new(py, now)?;
        let mut http_config = HttpConfig::default();
        if let Some(name) = node {
            http_config = http_config
                .with_node(name)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        if allow_any_host {
            http_config.hosts = HostPolicy::allow_all();
        }
        for host in allowed_hosts.unwrap_or_default() {
            http_config.hosts = http_config.hosts.allow_host(host);
        }
        if let Some(size) = max_body_size {
            http_config.max_body_size = size;
        }
        if let Some(t) = idle_timeout.filter(|t| t.is_finite() && *t >= 0.0) {
            http_config.idle_timeout = Duration::from_secs_f64(t);
        }
        if let Some(t) = retry.filter(|t| t.is_finite() && *t >= 0.0) {
            http_config.retry_ms =
                u64::try_from(Duration::from_secs_f64(t).as_millis()).unwrap_or(u64::MAX);
        }
        if let Some(t) = keepalive.filter(|t| t.is_finite() && *t >= 0.0) {
            // 0 turns it off
            http_config.keepalive = (t > 0.0).then(|| Duration::from_secs_f64(t));
        }
        let seconds = |t: Option<f64>| {
            t.filter(|t| t.is_finite() && *t >= 0.0)
                .map(Duration::from_secs_f64)
        };
        if let Some(t) = seconds(header_read_timeout) {
            http_config.header_read_timeout = t;
        }
        if let Some(t) = seconds(body_read_timeout) {
            http_config.body_read_timeout = t;
        }
        if let Some(t) = seconds(keep_alive_timeout) {
            http_config.keep_alive_timeout = t;
        }
        if let Some(t) = seconds(accept_backoff) {
            http_config.accept_backoff = t;
        }
        if let Some(n) = max_connections {
            http_config.max_connections = n.max(1);
        }
        let caps = [
            (max_sessions, &mut http_config.max_sessions),
            (max_in_flight, &mut http_config.max_in_flight),
            (
                max_in_flight_per_peer,
                &mut http_config.max_in_flight_per_peer,
            ),
            (
                max_in_flight_per_connection,
                &mut http_config.max_in_flight_per_connection,
            ),
            (max_unwritten, &mut http_config.max_unwritten),
        ];
        for (given, field) in caps {
            if let Some(n) = given {
                *field = n;
            }
        }
        let start = clock.instant(now);
        let mut http = HttpServer::new(Arc::new(http_config), Arc::clone(&config.config), start);
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        http.anchor_wall_clock(start, unix_ms);
        for tool in config.catalog.tools() {
            http.set_tool(tool);
        }
        http.set_required_scopes(required_scopes(config));
        Ok(Self {
            http,
            core: ServerCore::new(py, config),
            clock,
            ids: Ids {
                keys: [RandomState::new(), RandomState::new()],
                counter: 0,
            },
            exchanges: Numbers::new(),
            store: None,
        })
    }

    /// Shares the sessions' tasks through `store` (the config's `node` says how); a reply
    /// arriving (from any thread) calls `wake()` once until `drive_store` takes it, so
    /// `wake` must only schedule the driver (`loop.call_soon_threadsafe`)
    fn attach_store(&mut self, store: &PyTaskStore, wake: Py<PyAny>) {
        self.store = Some(Attached {
            store: Arc::clone(&store.store),
            inbox: Inbox::new(wake),
        });
    }

    /// Feeds the store's replies to the sessions and runs their operations, in order, until
    /// none is left; whether there was any (the sessions may then have output and events)
    #[pyo3(signature = (now=None))]
    fn drive_store(&mut self, now: Option<f64>) -> bool {
        let now = self.clock.instant(now);
        let mut busy = false;
        loop {
            let mut any = false;
            if let Some(store) = &self.store {
                for (key, ticket, reply) in store.replies() {
                    any = true;
                    self.http.handle_store_reply(now, key, ticket, reply);
                }
            }
            while let Some((key, op)) = self.http.poll_store() {
                any = true;
                // Without a store (none attached) an operation has nowhere to go.
                if let Some(store) = &self.store {
                    store.run(key, op);
                }
            }
            if !any {
                return busy;
            }
            busy = true;
        }
    }

    /// A message another process (or this one) published to the store: task signals
    /// reach the sessions they concern
    #[pyo3(signature = (message, now=None))]
    fn handle_store_signal(&mut self, message: &str, now: Option<f64>) {
        self.http
            .handle_store_signal(self.clock.instant(now), message);
    }

    /// Serves the tools, resources and prompts of `config` from now on, in every session
    /// (each keeps the identity and capabilities it started with); tell the clients with
    /// `notify_list_changed`
    fn set_catalog(&mut self, py: Python<'_>, config: &PyServerConfig) {
        let gone: Vec<String> = self
            .core
            .catalog()
            .tools()
            .filter(|t| config.catalog.tool(&t.name).is_none())
            .map(|t| t.name.clone())
            .collect();
        for name in gone {
            self.http.remove_tool(&name);
        }
        for tool in config.catalog.tools() {
            self.http.set_tool(tool);
        }
        self.http.set_required_scopes(required_scopes(config));
        self.core.set_catalog(py, config);
    }

    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        self.core.traverse(&visit)
    }

    /// Protects the endpoint with `rules`: a request for a tool, resource or prompt whose
    /// scopes its principal lacks gets 403 with the step-up challenge naming them and the
    /// metadata (`None`: the challenge names the scopes only). The front end verifies the
    /// tokens (`ResourceServer.gate`, `verdict`) and passes each request's `principal`.
    fn set_resource_server(&mut self, rules: Option<PyRef<'_, PyResourceServer>>) {
        self.http
            .set_resource_server(rules.map(|r| Arc::clone(&r.rules)));
    }

    /// The largest POST body to read; past it, answer with `reject_oversize()`
    #[getter]
    fn max_body_size(&self) -> usize {
        self.http.config().max_body_size
    }

    /// How long (seconds) a connection's request head may take: from the connection's
    /// accept, or from the first byte of a later request; then 408 and close
    #[getter]
    fn header_read_timeout(&self) -> f64 {
        self.http.config().header_read_timeout.as_secs_f64()
    }

    /// How long (seconds) a request's body may take after its head; then 408 and close
    #[getter]
    fn body_read_timeout(&self) -> f64 {
        self.http.config().body_read_timeout.as_secs_f64()
    }

    /// How long (seconds) a kept-alive connection may wait for its next request; then it
    /// closes
    #[getter]
    fn keep_alive_timeout(&self) -> f64 {
        self.http.config().keep_alive_timeout.as_secs_f64()
    }

    /// The most connections the front end holds open at once
    #[getter]
    fn max_connections(&self) -> usize {
        self.http.config().max_connections
    }

    /// The most bytes of one open response held for a client that does not read them; past
    /// it the front end drops the response and calls `handle_closed`
    #[getter]
    fn max_unwritten(&self) -> usize {
        self.http.config().max_unwritten
    }

    /// How long (seconds) the accept loop pauses when the process is out of descriptors
    #[getter]
    fn accept_backoff(&self) -> f64 {
        self.http.config().accept_backoff.as_secs_f64()
    }

    /// The response to a request the HTTP parser refused (`reason`: what was wrong, such as
    /// two `Host` fields): `("complete", 400, headers, body)` with a JSON-RPC error
    fn reject_malformed<'py>(
        &self,
        py: Python<'py>,
        reason: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let error = mcp_sansio::ErrorObject::invalid_request(reason.to_owned());
        complete(py, HttpResponse::json_error(400, None, &error))
    }

    /// The number of 2025-wire sessions
    #[getter]
    fn session_count(&self) -> usize {
        self.http.session_count()
    }

    /// The response to a body longer than `max_body_size`: `("complete", status, headers,
    /// body)`
    fn reject_oversize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        complete(py, self.http.reject_oversize())
    }

    /// Serves one HTTP request (`method` such as `"POST"`, headers as `(name, value)`
    /// pairs, the whole body; `peer` the client's `(host, port)` on the connection, for the
    /// in-flight caps per connection and per client address): `("complete", status,
    /// headers, body)`, or `("open", exchange)` whose pieces come from `next_output()`
    ///
    /// `principal`: who the request's access token stands for, as the front end verified it
    /// (a protected endpoint); the handlers read it, and the 2025 sessions and the tasks it
    /// creates answer only requests of the same principal. The header fields (when all are
    /// text) go to the handlers too.
    #[pyo3(signature = (method, headers, body, now=None, peer=None, principal=None))]
    #[allow(clippy::too_many_arguments)]
    fn handle_request<'py>(
        &mut self,
        py: Python<'py>,
        method: &str,
        headers: Vec<(String, FieldValue)>,
        body: &[u8],
        now: Option<f64>,
        peer: Option<(String, u16)>,
        principal: Option<PyRef<'_, PyPrincipal>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let now = self.clock.instant(now);
        let mut source = peer
            .and_then(|(host, port)| {
                let ip = host.split('%').next()?.parse::<std::net::IpAddr>().ok()?;
                Some(Source::from_peer(std::net::SocketAddr::new(ip, port)))
            })
            .unwrap_or_else(Source::unknown);
        if let Some(p) = principal {
            source = source.with_principal(Some(p.principal.clone()));
        }
        // Fields that are all text go to the handlers too (one buffer, shared with the
        // source); a value that is not UTF-8 leaves them as bytes, for the rules to refuse.
        let reply = match text_fields(headers) {
            Ok(text) => {
                source = source.with_headers(text.clone());
                self.http
                    .handle_request(now, &source, method, &text, body, &mut self.ids)
            }
            Err(raw) => {
                self.http
                    .handle_request(now, &source, method, raw.as_slice(), body, &mut self.ids)
            }
        };
        match reply {
            Reply::Complete(r) => complete(py, r),
            Reply::Open(ex) => {
                let n = self.exchanges.number(ex);
                PyTuple::new(
                    py,
                    [
                        "open".into_pyobject(py)?.into_any(),
                        n.into_pyobject(py)?.into_any(),
                    ],
                )
            }
            _ => Err(events::local_error(py, "unknown reply from the HTTP rules")),
        }
    }

    /// The client went away before an open response ended
    #[pyo3(signature = (exchange, now=None))]
    fn handle_closed(&mut self, exchange: u64, now: Option<f64>) {
        if let Some(ex) = self.exchanges.id(exchange) {
            self.http.handle_closed(self.clock.instant(now), ex);
            self.exchanges.retire(exchange);
        }
    }

    /// The next piece of an open response: `("head", exchange, status, headers)`,
    /// `("body", exchange, bytes)`, `("end", exchange)`, or `None`
    fn next_output<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(output) = self.http.poll_output() else {
            return Ok(None);
        };
        let t = match output {
            Output::Head { exchange, head } => {
                let n = self.exchanges.number(exchange);
                let headers: Headers = head.headers;
                PyTuple::new(
                    py,
                    [
                        "head".into_pyobject(py)?.into_any(),
                        n.into_pyobject(py)?.into_any(),
                        head.status.into_pyobject(py)?.into_any(),
                        headers.into_pyobject(py)?.into_any(),
                    ],
                )?
            }
            Output::Body { exchange, data } => {
                let n = self.exchanges.number(exchange);
                PyTuple::new(
                    py,
                    [
                        "body".into_pyobject(py)?.into_any(),
                        n.into_pyobject(py)?.into_any(),
                        PyBytes::new(py, &data).into_any(),
                    ],
                )?
            }
            Output::End { exchange } => {
                let n = self.exchanges.number(exchange);
                self.exchanges.retire(n);
                PyTuple::new(
                    py,
                    [
                        "end".into_pyobject(py)?.into_any(),
                        n.into_pyobject(py)?.into_any(),
                    ],
                )?
            }
            _ => return Ok(None),
        };
        Ok(Some(t))
    }

    /// The next application event of any session, or `None`
    fn next_event<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(e) = self.core.queued(py) {
            return Ok(Some(e));
        }
        while let Some((key, event)) = self.http.poll_event() {
            if let Some(e) = self.core.event(py, &mut self.http, key, event)? {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    /// Fires session timers and closes idle sessions
    #[pyo3(signature = (now=None))]
    fn handle_timeout(&mut self, now: Option<f64>) {
        self.http.handle_timeout(self.clock.instant(now));
    }

    /// When `handle_timeout` should next be called, or `None`
    fn next_deadline(&self) -> Option<f64> {
        self.http.poll_timeout().map(|i| self.clock.float(i))
    }

    /// Tells every session's subscribers a resource changed; returns how many
    /// notifications were queued
    fn notify_resource_updated(&mut self, uri: &str) -> usize {
        self.http.notify_resource_updated(uri)
    }
});
