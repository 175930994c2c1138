//! What the bindings count (feature `metrics`): requests, their durations and outcomes,
//! requests in flight, open sessions and connections, bytes, and refusals, through the
//! [`metrics`](https://docs.rs/metrics) facade
//!
//! Like `tracing` for spans, the `metrics` crate is only a facade: the library records, the
//! application installs the recorder it exports with (Prometheus with
//! `metrics-exporter-prometheus`, OpenTelemetry, StatsD, ...). With no recorder installed
//! each record is a no-op call; without the `metrics` feature nothing here is compiled in
//! (every function below is empty and the request span is not even made when no subscriber
//! wants it). `metrics` rather than OpenTelemetry's metrics API: it is the facade the Rust
//! ecosystem's exporters implement, costs nothing until a recorder is installed, and does
//! not pull an OpenTelemetry SDK into a server that only wants a Prometheus scrape (an
//! OpenTelemetry exporter for `metrics` exists for those who want OTLP).
//!
//! Every Rust binding (tokio, async-std and smol, plain threads) records the same names,
//! here, so a dashboard does not care which one serves. The names and attributes are the
//! OpenTelemetry semantic conventions' for MCP where they have one (as mcp-python's
//! metrics); a Prometheus exporter writes their dots as underscores
//! (`mcp_server_operation_duration`, label `mcp_method_name`):
//!
//! | name | kind | labels | what |
//! | --- | --- | --- | --- |
//! | `mcp.server.operation.duration`, `mcp.client.operation.duration` | histogram (s) | `mcp.method.name`, `gen_ai.tool.name` or `gen_ai.prompt.name`, `outcome`, `error.type` | each request that ended (its count is the request count), from its arrival (server: a peer's request) or sending (client: ours) to its end |
//! | `mcp.server.requests.active`, `mcp.client.requests.active` | gauge | `mcp.method.name` | requests started and not ended yet |
//! | `mcp.server.sessions.active`, `mcp.client.sessions.active` | gauge | | sessions open (an HTTP server's 2026 requests share one) |
//! | `mcp.server.connections.active`, `mcp.client.connections.active` | gauge | `transport` (`stream`, `http`) | byte-stream connections (stdio, a child process, any stream) and the connections of `serve_http*` (a mounted endpoint's are its host's) |
//! | `mcp.bytes.received`, `mcp.bytes.sent` | counter (bytes) | `transport` | bytes of MCP messages read and written (HTTP: request and response bodies) |
//! | `mcp.server.refusals` | counter | `reason` | requests refused before any handler: `auth` (401, 403 of a protected server's gate), `scope` (403 insufficient scope), `busy` (every handler thread taken: 503), `rate` (429), `too_large` (413), `session` (404, an unknown or expired session), `deadline` (408: the request was not read in time), `invalid` (other 4xx), `unavailable` (other 5xx) |
//!
//! Labels:
//! - `mcp.method.name`: the MCP method (`tools/call`, `resources/read`, ...); a method this
//!   library does not know is counted as `other`, so a peer cannot grow the label set;
//! - `gen_ai.tool.name` (`tools/call`), `gen_ai.prompt.name` (`prompts/get`): only when a
//!   handler of this server took the request (or, client side, we sent it); otherwise the
//!   label is left out. Resource URIs are never labels (unbounded);
//! - `outcome`: as the request span's (see [`trace`](crate::trace)): `ok`, `error`,
//!   `answered`, `task`, `input_required`, `cancelled`, `timed_out`, `closed`, `failed`;
//! - `error.type`: the JSON-RPC error code of an `error` outcome.
//!
//! [`describe`] registers each name's unit and description with the recorder installed
//! (call it once after installing one; optional).
//!
//! ```ignore
//! // Prometheus: install the exporter's recorder (and its scrape endpoint), then serve.
//! metrics_exporter_prometheus::PrometheusBuilder::new().install()?;
//! mcp_sansio_tokio::meter::describe();
//! ```

#[cfg(feature = "metrics")]
use std::borrow::Cow;
#[cfg(feature = "metrics")]
use std::time::Instant;

/// Registers the unit and description of every metric with the installed recorder (a
/// no-op without the `metrics` feature or without a recorder)
pub fn describe() {
    #[cfg(feature = "metrics")]
    {
        use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
        for side in ["server", "client"] {
            let (duration, active, sessions, connections) = names(side);
            describe_histogram!(
                duration,
                Unit::Seconds,
                "Duration of MCP requests, arrival (or sending) to end"
            );
            describe_gauge!(active, "MCP requests started and not ended yet");
            describe_gauge!(sessions, "MCP sessions open");
            describe_gauge!(connections, "MCP connections open");
        }
        describe_counter!(
            "mcp.bytes.received",
            Unit::Bytes,
            "Bytes of MCP messages read"
        );
        describe_counter!(
            "mcp.bytes.sent",
            Unit::Bytes,
            "Bytes of MCP messages written"
        );
        describe_counter!(
            "mcp.server.refusals",
            "MCP requests refused before any handler, by reason"
        );
    }
}

/// The names of a side's duration, requests, sessions and connections
#[cfg(feature = "metrics")]
fn names(side: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    if side == "client" {
        (
            "mcp.client.operation.duration",
            "mcp.client.requests.active",
            "mcp.client.sessions.active",
            "mcp.client.connections.active",
        )
    } else {
        (
            "mcp.server.operation.duration",
            "mcp.server.requests.active",
            "mcp.server.sessions.active",
            "mcp.server.connections.active",
        )
    }
}

/// One request in flight: counted in `mcp.{side}.requests.active` until it ends (or is
/// dropped), then in `mcp.{side}.operation.duration`
#[derive(Debug)]
pub(crate) struct Meter {
    #[cfg(feature = "metrics")]
    side: &'static str,
    #[cfg(feature = "metrics")]
    method: &'static str,
    #[cfg(feature = "metrics")]
    name: Option<String>,
    #[cfg(feature = "metrics")]
    start: Instant,
    #[cfg(feature = "metrics")]
    ended: bool,
}

impl Meter {
    /// Whether requests are metered at all (the `metrics` feature)
    pub(crate) const ON: bool = cfg!(feature = "metrics");

    /// A request of `method` starts, on `side` (`server` or `client`), about the tool or
    /// prompt `name`
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn start(side: &'static str, method: &str, name: Option<&str>) -> Self {
        #[cfg(feature = "metrics")]
        {
            let method = known_method(method);
            metrics::gauge!(names(side).1, "mcp.method.name" => method).increment(1.0);
            Self {
                side,
                method,
                name: name.map(str::to_owned),
                start: Instant::now(),
                ended: false,
            }
        }
        #[cfg(not(feature = "metrics"))]
        Self {}
    }

    /// The request's name is not a label after all (the catalog answered: the name is
    /// the peer's, not one of ours)
    pub(crate) fn unnamed(&mut self) {
        #[cfg(feature = "metrics")]
        {
            self.name = None;
        }
    }

    /// The request ended with `outcome`, and the JSON-RPC error `code` when it is an error
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(crate) fn end(&mut self, outcome: &'static str, code: Option<i64>) {
        #[cfg(feature = "metrics")]
        {
            if self.ended {
                return;
            }
            self.ended = true;
            self.left();
            let seconds = self.start.elapsed().as_secs_f64();
            let mut labels = Vec::with_capacity(4);
            labels.push(metrics::Label::from_static_parts(
                "mcp.method.name",
                self.method,
            ));
            if let Some(name) = self.name.take() {
                let key = if self.method == "prompts/get" {
                    "gen_ai.prompt.name"
                } else {
                    "gen_ai.tool.name"
                };
                labels.push(metrics::Label::new(key, name));
            }
            labels.push(metrics::Label::from_static_parts("outcome", outcome));
            if let Some(code) = code {
                labels.push(metrics::Label::new(
                    "error.type",
                    Cow::Owned(code.to_string()),
                ));
            }
            metrics::histogram!(names(self.side).0, labels).record(seconds);
        }
    }

    #[cfg(feature = "metrics")]
    fn left(&self) {
        metrics::gauge!(names(self.side).1, "mcp.method.name" => self.method).decrement(1.0);
    }
}

#[cfg(feature = "metrics")]
impl Drop for Meter {
    fn drop(&mut self) {
        if !self.ended {
            self.left();
        }
    }
}

/// Something open (a session, a connection), counted in its gauge until dropped (the
/// default counts nothing)
#[derive(Debug, Default)]
#[must_use = "the count goes down when this is dropped"]
pub struct Open {
    #[cfg(feature = "metrics")]
    gauge: Option<metrics::Gauge>,
}

impl Open {
    /// A session of `role` (`server` or `client`) opened: `mcp.{role}.sessions.active`
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub fn session(role: &'static str) -> Self {
        #[cfg(feature = "metrics")]
        return Self::gauge(metrics::gauge!(names(role).2));
        #[cfg(not(feature = "metrics"))]
        Self {}
    }

    /// A connection of `role` (`server` or `client`) over `transport` (`stream`, `http`)
    /// opened: `mcp.{role}.connections.active`
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub fn connection(role: &'static str, transport: &'static str) -> Self {
        #[cfg(feature = "metrics")]
        return Self::gauge(metrics::gauge!(names(role).3, "transport" => transport));
        #[cfg(not(feature = "metrics"))]
        Self {}
    }

    #[cfg(feature = "metrics")]
    fn gauge(gauge: metrics::Gauge) -> Self {
        gauge.increment(1.0);
        Self { gauge: Some(gauge) }
    }
}

#[cfg(feature = "metrics")]
impl Drop for Open {
    fn drop(&mut self) {
        if let Some(gauge) = self.gauge.take() {
            gauge.decrement(1.0);
        }
    }
}

/// `n` bytes of MCP messages read over `transport` (`stream`, `http`)
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
#[inline]
pub fn received(transport: &'static str, n: usize) {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp.bytes.received", "transport" => transport).increment(n as u64);
}

/// `n` bytes of MCP messages written over `transport` (`stream`, `http`)
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
#[inline]
pub fn sent(transport: &'static str, n: usize) {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp.bytes.sent", "transport" => transport).increment(n as u64);
}

/// A request refused before any handler, for `reason` (see the table above):
/// `mcp.server.refusals`
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
#[inline]
pub fn refused(reason: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("mcp.server.refusals", "reason" => reason).increment(1);
}

/// The reason an HTTP error answer of status `status` counts under in
/// `mcp.server.refusals` (a binding's own answers: a late or malformed request head)
pub fn http_reason(status: u16) -> &'static str {
    reason_of(status, false)
}

/// [`http_reason`]; `insufficient_scope`: a 403 that asks for more scopes
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn reason_of(status: u16, insufficient_scope: bool) -> &'static str {
    match status {
        401 => "auth",
        403 if insufficient_scope => "scope",
        403 => "auth",
        404 => "session",
        408 => "deadline",
        413 => "too_large",
        429 => "rate",
        503 => "busy",
        400..=499 => "invalid",
        _ => "unavailable",
    }
}

/// A `403` that asks for more scopes (`WWW-Authenticate: Bearer error="insufficient_scope"`)
#[cfg(feature = "http")]
pub(crate) fn insufficient_scope(response: &mcp_sansio::http::HttpResponse) -> bool {
    response.status == 403
        && response.headers.iter().any(|(name, value)| {
            name.eq_ignore_ascii_case("www-authenticate") && value.contains("insufficient_scope")
        })
}

/// The MCP method as a label: the methods of the spec by name, anything else `other`
#[cfg(feature = "metrics")]
fn known_method(method: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/get",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
        "initialize",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "tasks/get",
        "tasks/result",
        "tasks/cancel",
        "tasks/list",
        "tasks/update",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
    ];
    KNOWN
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("other")
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::*;

    /// Every metric recorded while `f` ran: (name, labels as `k=v`, value)
    fn recorded(f: impl FnOnce()) -> Vec<(String, Vec<String>, DebugValue)> {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::with_local_recorder(&recorder, f);
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<String> = key
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                labels.sort();
                (key.name().to_owned(), labels, value)
            })
            .collect()
    }

    fn find<'a>(
        seen: &'a [(String, Vec<String>, DebugValue)],
        name: &str,
        labels: &[&str],
    ) -> Option<&'a DebugValue> {
        seen.iter()
            .find(|(n, l, _)| n == name && labels.iter().all(|x| l.iter().any(|y| y == x)))
            .map(|(_, _, v)| v)
    }

    #[test]
    fn a_request_is_timed_by_method_tool_and_outcome_and_leaves_the_active_gauge() {
        let seen = recorded(|| {
            let mut meter = Meter::start("server", "tools/call", Some("echo"));
            meter.end("ok", None);
            let mut failed = Meter::start("client", "prompts/get", Some("haiku"));
            failed.end("error", Some(-32602));
        });
        let labels = [
            "mcp.method.name=tools/call",
            "gen_ai.tool.name=echo",
            "outcome=ok",
        ];
        let timed = find(&seen, "mcp.server.operation.duration", &labels);
        assert!(
            matches!(timed, Some(DebugValue::Histogram(v)) if v.len() == 1),
            "{seen:?}"
        );
        let failed = [
            "gen_ai.prompt.name=haiku",
            "outcome=error",
            "error.type=-32602",
        ];
        let timed = find(&seen, "mcp.client.operation.duration", &failed);
        assert!(
            matches!(timed, Some(DebugValue::Histogram(v)) if v.len() == 1),
            "{seen:?}"
        );
        let flying = find(
            &seen,
            "mcp.server.requests.active",
            &["mcp.method.name=tools/call"],
        );
        assert!(
            matches!(flying, Some(DebugValue::Gauge(g)) if g.0 == 0.0),
            "{seen:?}"
        );
    }

    #[test]
    fn a_dropped_request_leaves_the_gauge_and_unknown_methods_are_other() {
        let seen = recorded(|| {
            let mut meter = Meter::start("server", "x/made-up-1234", Some("nope"));
            meter.unnamed();
            meter.end("answered", None);
            let held = Meter::start("client", "tools/call", None);
            let dropped = Meter::start("client", "tools/list", None);
            drop(dropped);
            std::mem::forget(held);
        });
        let other = find(
            &seen,
            "mcp.server.operation.duration",
            &["mcp.method.name=other"],
        );
        assert!(
            matches!(other, Some(DebugValue::Histogram(v)) if v.len() == 1),
            "{seen:?}"
        );
        let held = find(
            &seen,
            "mcp.client.requests.active",
            &["mcp.method.name=tools/call"],
        );
        assert!(
            matches!(held, Some(DebugValue::Gauge(g)) if g.0 == 1.0),
            "{seen:?}"
        );
        let gone = find(
            &seen,
            "mcp.client.requests.active",
            &["mcp.method.name=tools/list"],
        );
        assert!(
            matches!(gone, Some(DebugValue::Gauge(g)) if g.0 == 0.0),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|(_, l, _)| {
            l.iter()
                .any(|x| x.contains("made-up") || x.contains("nope"))
        }));
    }

    #[test]
    fn open_things_count_up_and_down_and_bytes_and_refusals_add_up() {
        let seen = recorded(|| {
            let a = Open::session("server");
            let b = Open::session("server");
            drop(a);
            let c = Open::connection("server", "http");
            let d = Open::connection("server", "http");
            drop(d);
            // Still open when the snapshot is taken.
            std::mem::forget((b, c));
            received("stream", 10);
            received("stream", 5);
            sent("http", 7);
            refused(http_reason(429));
            refused(reason_of(403, true));
        });
        let sessions = find(&seen, "mcp.server.sessions.active", &[]);
        assert!(
            matches!(sessions, Some(DebugValue::Gauge(g)) if g.0 == 1.0),
            "{seen:?}"
        );
        let conns = find(&seen, "mcp.server.connections.active", &["transport=http"]);
        assert!(matches!(conns, Some(DebugValue::Gauge(g)) if g.0 == 1.0));
        let read = find(&seen, "mcp.bytes.received", &["transport=stream"]);
        assert!(matches!(read, Some(DebugValue::Counter(15))));
        let wrote = find(&seen, "mcp.bytes.sent", &["transport=http"]);
        assert!(matches!(wrote, Some(DebugValue::Counter(7))));
        assert!(matches!(
            find(&seen, "mcp.server.refusals", &["reason=rate"]),
            Some(DebugValue::Counter(1))
        ));
        assert!(matches!(
            find(&seen, "mcp.server.refusals", &["reason=scope"]),
            Some(DebugValue::Counter(1))
        ));
    }
}
