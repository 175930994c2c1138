"""Traces and metrics: OpenTelemetry when it is installed, nothing when it is not.

**Traces** (SEP-414). When ``opentelemetry-api`` is importable (``pip install
mcp-sansio[otel]``), every request a :class:`~mcp_sansio.aio.Client` (or
:class:`~mcp_sansio.sync.Client`) sends runs in a ``CLIENT`` span named
``"{method} {target}"`` (``"tools/call echo"``) and carries the current trace context in its
``params._meta`` (``traceparent``, ``tracestate``, ``baggage``: whatever the global
propagator, W3C by default, writes), merged with the ``_meta`` already there (a
``traceparent`` you set yourself is kept). Every request a server's application handles
(``tools/call``, ``resources/read``, ``prompts/get``, ``completion/complete``) runs in a
``SERVER`` span of the same name whose parent is the context extracted from the request's
``_meta``; what the handler does (its own spans, logs with trace ids) is inside it.
Malformed values are ignored (the span then continues the ambient context). Spans go to the
global tracer provider (``opentelemetry.trace.set_tracer_provider``), or the one given to
:func:`configure`. Without OpenTelemetry nothing is imported, nothing is added to
``_meta``, and a request pays one ``if``.

**Metrics**, in the OpenTelemetry MCP semantic conventions' names (Prometheus's in
parentheses):

- ``mcp.server.operation.duration`` (``mcp_server_operation_duration_seconds``), a histogram
  in seconds of the requests a server's application handled, by ``mcp.method.name``,
  ``gen_ai.tool.name``, ``outcome`` (``ok``, ``error``, ``tool_error``, ``cancelled``,
  ``input_required``) and ``error.type`` (the JSON-RPC code of an error);
- ``mcp.server.requests.active`` (``mcp_server_requests_active``), requests in flight by
  ``mcp.method.name``;
- ``mcp.server.connections.active`` (``mcp_server_connections_active``), open connections by
  ``transport``: ``stream`` (byte-stream connections: stdio, in-process ones too) and ``http``
  (the TCP connections of ``serve_http``);
- ``mcp.server.sessions.active`` (``mcp_server_sessions_active``), sessions open: a
  byte-stream connection is one; over HTTP each 2025-11-25 session (``Mcp-Session-Id``)
  from ``initialize`` to its end (``DELETE``, expiry, eviction), and the 2026 wire's
  stateless requests share one session for the endpoint's life (as the Rust bindings);
- ``mcp.bytes.received``, ``mcp.bytes.sent`` (``mcp_bytes_received_total``,
  ``mcp_bytes_sent_total``), counters in bytes of the MCP messages a server read and wrote,
  by ``transport``: ``stream`` (stdio, in-process connections) and ``http`` (request and
  response bodies, SSE events included; ``serve_http`` and the ASGI app alike);
- ``mcp.server.refusals`` (``mcp_server_refusals_total``), refused requests by ``reason``:
  ``method_not_found`` (no handler), and over HTTP the Rust bindings' words: ``auth`` (401,
  403), ``scope`` (403 ``insufficient_scope``), ``session`` (404), ``deadline`` (408),
  ``too_large`` (413), ``rate`` (429), ``busy`` (503), ``invalid`` (other 4xx),
  ``unavailable`` (other 5xx);
- ``mcp.client.operation.duration`` (``mcp_client_operation_duration_seconds``), a histogram
  of the requests a client sent, by ``mcp.method.name``, ``gen_ai.tool.name``, ``outcome``.

The OpenTelemetry metrics API is the primary backend: the same dependency as
the traces, the names other MCP SDKs use, and the application picks the exporter with its
``MeterProvider`` (OTLP, Prometheus, console, ...). When OpenTelemetry is not installed but
``prometheus_client`` is, the instruments are ``prometheus_client`` ones in its default
registry (serve them with ``prometheus_client.start_http_server``). ``configure(metrics=
"prometheus")`` picks it even with OpenTelemetry installed; ``metrics="off"`` turns metrics
off. With neither installed, nothing is recorded and nothing is imported.
"""

import os
from typing import Any, Dict, Optional

__all__ = ["configure", "tracing_enabled", "metrics_backend", "TRACE_KEYS"]

TRACE_KEYS = ("traceparent", "tracestate", "baggage")
"""The ``_meta`` keys SEP-414 reserves for the trace context."""

try:  # Traces: only when the OpenTelemetry API is installed.
    from opentelemetry import context as _otel_context
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind as _SpanKind
    from opentelemetry.trace import StatusCode as _StatusCode
except ImportError:  # pragma: no cover - exercised by the "not installed" test
    _trace = None

TRACING: bool = _trace is not None
"""Whether requests are traced (OpenTelemetry importable, not turned off)."""

# Read once: a provider named in the environment is the API's to load (on first use).
_PROVIDER_FROM_ENV: bool = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ

_tracer_provider: Any = None
_tracer: Any = None


def tracing_enabled() -> bool:
    """Whether requests are traced: ``opentelemetry-api`` is installed and
    :func:`configure` did not turn tracing off."""
    return TRACING


def _get_tracer() -> Any:
    global _tracer
    if _tracer is None:
        provider = _tracer_provider
        if provider is None:
            _tracer = _trace.get_tracer("mcp_sansio")
        else:
            _tracer = provider.get_tracer("mcp_sansio")
    return _tracer


def _nothing_to_trace() -> bool:
    """Whether a span would record nothing and carry nothing: no tracer provider was given
    (neither to :func:`configure` nor globally: the API's proxy records nothing) and the
    current context is empty (no span to continue, no baggage to pass on). Then no span is
    made at all: a request of an untraced application pays a few lookups, not a span, a
    context attach and a propagator run (a sixth of a stdio client's call)."""
    return _tracer_provider is None and not _otel_context.get_current() and not _global_provider()


_NO_PROVIDER = object()


def _global_provider() -> bool:
    """Whether a global tracer provider is set (or named by ``OTEL_PYTHON_TRACER_PROVIDER``,
    which the API loads on first use). The API's own ``get_tracer_provider()`` reads
    ``os.environ`` on every call while none is set (a few microseconds); its module global,
    when there is one, says the same without that."""
    provider = getattr(_trace, "_TRACER_PROVIDER", _NO_PROVIDER)
    if provider is None and not _PROVIDER_FROM_ENV:
        return False
    return not isinstance(_trace.get_tracer_provider(), _trace.ProxyTracerProvider)


def _untraced() -> bool:
    """Whether a request made now would have no span: tracing is off (or OpenTelemetry is
    not installed), or nothing would be recorded nor carried (:func:`_nothing_to_trace`)."""
    return not TRACING or _nothing_to_trace()


def _target(method: str, params: Any) -> Optional[str]:
    if isinstance(params, dict):
        if method in ("tools/call", "prompts/get"):
            name = params.get("name")
            return name if isinstance(name, str) else None
        if method == "resources/read":
            uri = params.get("uri")
            return uri if isinstance(uri, str) else None
    return None


def _span_name(method: str, target: Optional[str]) -> str:
    return f"{method} {target}" if target else method


def _attributes(method: str, target: Optional[str]) -> Dict[str, Any]:
    attributes: Dict[str, Any] = {"mcp.method.name": method}
    if target is not None:
        if method == "tools/call":
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get":
            attributes["gen_ai.prompt.name"] = target
        elif method == "resources/read":
            attributes["mcp.resource.uri"] = target
    return attributes


def _extract(meta: Any) -> Any:
    """The trace context of a request's ``_meta``, or ``None`` (absent or malformed: the
    span continues the ambient context)."""
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None
    carrier = {k: v for k, v in meta.items() if isinstance(k, str) and isinstance(v, str)}
    try:
        ctx = _propagate.extract(carrier)
    except Exception:
        return None
    if not _trace.get_current_span(ctx).get_span_context().is_valid:
        return None
    return ctx


class _ServerSpan:
    """The span of one inbound request, current while the application runs."""

    __slots__ = ("span", "token")

    def __init__(self, method: str, target: Optional[str], meta: Any, request_id: Any, info: Any) -> None:
        attributes = _attributes(method, target)
        attributes["jsonrpc.request.id"] = str(request_id)
        if info is not None:
            version = info.protocol_version
            if version:
                attributes["mcp.protocol.version"] = version
            session = info.session_id
            if session:
                attributes["mcp.session.id"] = session
        self.span = _get_tracer().start_span(
            _span_name(method, target),
            context=_extract(meta),
            kind=_SpanKind.SERVER,
            attributes=attributes,
        )
        self.token = _otel_context.attach(_trace.set_span_in_context(self.span))

    def end(self, outcome: str, code: Optional[int] = None, message: Optional[str] = None) -> None:
        span = self.span
        if outcome == "error" or outcome == "tool_error":
            span.set_attribute("error.type", str(code) if code is not None else outcome)
            if code is not None:
                span.set_attribute("rpc.response.status_code", str(code))
            span.set_status(_StatusCode.ERROR, message)
        try:
            _otel_context.detach(self.token)
        except Exception:
            pass
        span.end()


def server_span(method: str, target: Optional[str], meta: Any, request_id: Any, info: Any) -> Optional[_ServerSpan]:
    """Starts the span of an inbound request (``None`` when not tracing, or when there is
    nothing to trace: no provider, no trace context in ``meta`` nor in the current one)."""
    if not TRACING:
        return None
    try:
        if not (isinstance(meta, dict) and "traceparent" in meta) and _nothing_to_trace():
            return None
        return _ServerSpan(method, target, meta, request_id, info)
    except Exception:
        return None


class _ClientSpan:
    """The span of one outbound request; its context goes into the request's ``_meta``."""

    __slots__ = ("span", "token", "meta")

    def __init__(self, method: str, params: Any) -> None:
        target = _target(method, params)
        self.span = _get_tracer().start_span(
            _span_name(method, target), kind=_SpanKind.CLIENT, attributes=_attributes(method, target)
        )
        self.token = _otel_context.attach(_trace.set_span_in_context(self.span))
        carrier: Dict[str, str] = {}
        try:
            _propagate.inject(carrier)
        except Exception:
            carrier = {}
        self.meta = carrier

    def end(self, error: Optional[BaseException] = None) -> None:
        span = self.span
        if error is not None:
            code = getattr(error, "code", None)
            span.set_attribute("error.type", str(code) if isinstance(code, int) else type(error).__qualname__)
            span.set_status(_StatusCode.ERROR, str(error))
        try:
            _otel_context.detach(self.token)
        except Exception:
            pass
        span.end()


def client_span(method: str, params: Any) -> Optional[_ClientSpan]:
    """Starts the span of an outbound request (``None`` when not tracing, or when there is
    nothing to trace: no provider and an empty current context)."""
    if not TRACING:
        return None
    try:
        if _nothing_to_trace():
            return None
        return _ClientSpan(method, params)
    except Exception:
        return None


# --- metrics -------------------------------------------------------------------------------


class _Otel:
    name = "otel"

    def __init__(self, provider: Any) -> None:
        # The API's module whose global says whether a meter provider is set, when the
        # instruments are its proxies (no provider given here); see `idle`.
        self._api: Any = None
        if provider is None:
            import sys

            from opentelemetry import metrics

            meter = metrics.get_meter("mcp_sansio")
            self._api = sys.modules.get("opentelemetry.metrics._internal")
        else:
            meter = provider.get_meter("mcp_sansio")
        self.duration = meter.create_histogram(
            "mcp.server.operation.duration", unit="s", description="Duration of the MCP requests a server's application handled"
        )
        self.active = meter.create_up_down_counter(
            "mcp.server.requests.active", description="MCP requests the server's application is handling"
        )
        self.connections = meter.create_up_down_counter(
            "mcp.server.connections.active", description="Open byte-stream and HTTP connections of a server"
        )
        self.sessions = meter.create_up_down_counter("mcp.server.sessions.active", description="MCP sessions open")
        self.bytes_received = meter.create_counter("mcp.bytes.received", unit="By", description="Bytes of MCP messages read")
        self.bytes_sent = meter.create_counter("mcp.bytes.sent", unit="By", description="Bytes of MCP messages written")
        self.refusals = meter.create_counter("mcp.server.refusals", description="Requests a server refused, by reason")
        self.client = meter.create_histogram(
            "mcp.client.operation.duration", unit="s", description="Duration of the MCP requests a client sent"
        )

    def idle(self) -> bool:
        """Whether nothing would be recorded now: the instruments are the API's proxies and
        no global meter provider is set (the proxies record nothing until one is; then they
        forward, and this says ``False``). A request then skips its metrics altogether, as
        an untraced one skips its span: the proxies' calls were a few microseconds of every
        call of an application that never configured metrics."""
        api = self._api
        return api is not None and getattr(api, "_METER_PROVIDER", self) is None

    def started(self, method: str) -> None:
        self.active.add(1, {"mcp.method.name": method})

    def ended(self, method: str, tool: Optional[str], outcome: str, code: Optional[int], seconds: float) -> None:
        self.active.add(-1, {"mcp.method.name": method})
        attributes: Dict[str, Any] = {"mcp.method.name": method, "outcome": outcome}
        if tool is not None:
            attributes["gen_ai.tool.name"] = tool
        if code is not None:
            attributes["error.type"] = str(code)
        self.duration.record(seconds, attributes)

    def connection(self, transport: str, delta: int) -> None:
        self.connections.add(delta, {"transport": transport})

    def session(self, delta: int) -> None:
        self.sessions.add(delta)

    def received(self, transport: str, n: int) -> None:
        if not self.idle():
            self.bytes_received.add(n, {"transport": transport})

    def sent(self, transport: str, n: int) -> None:
        if not self.idle():
            self.bytes_sent.add(n, {"transport": transport})

    def refused(self, reason: str) -> None:
        self.refusals.add(1, {"reason": reason})

    def client_ended(self, method: str, tool: Optional[str], outcome: str, seconds: float) -> None:
        attributes: Dict[str, Any] = {"mcp.method.name": method, "outcome": outcome}
        if tool is not None:
            attributes["gen_ai.tool.name"] = tool
        self.client.record(seconds, attributes)


class _Prometheus:
    name = "prometheus"

    def __init__(self, registry: Any) -> None:
        import prometheus_client as p

        kw: Dict[str, Any] = {} if registry is None else {"registry": registry}
        self.duration = p.Histogram(
            "mcp_server_operation_duration_seconds",
            "Duration of the MCP requests a server's application handled",
            ["method", "tool", "outcome", "error_type"],
            **kw,
        )
        self.active = p.Gauge("mcp_server_requests_active", "MCP requests the server's application is handling", ["method"], **kw)
        self.connections = p.Gauge(
            "mcp_server_connections_active", "Open byte-stream and HTTP connections of a server", ["transport"], **kw
        )
        self.sessions = p.Gauge("mcp_server_sessions_active", "MCP sessions open", **kw)
        self.bytes_received = p.Counter("mcp_bytes_received", "Bytes of MCP messages read", ["transport"], **kw)
        self.bytes_sent = p.Counter("mcp_bytes_sent", "Bytes of MCP messages written", ["transport"], **kw)
        self.refusals = p.Counter("mcp_server_refusals", "Requests a server refused, by reason", ["reason"], **kw)
        self.client = p.Histogram(
            "mcp_client_operation_duration_seconds", "Duration of the MCP requests a client sent", ["method", "tool", "outcome"], **kw
        )

    def idle(self) -> bool:
        return False

    def started(self, method: str) -> None:
        self.active.labels(method).inc()

    def ended(self, method: str, tool: Optional[str], outcome: str, code: Optional[int], seconds: float) -> None:
        self.active.labels(method).dec()
        self.duration.labels(method, tool or "", outcome, "" if code is None else str(code)).observe(seconds)

    def connection(self, transport: str, delta: int) -> None:
        self.connections.labels(transport).inc(delta)

    def session(self, delta: int) -> None:
        self.sessions.inc(delta)

    def received(self, transport: str, n: int) -> None:
        self.bytes_received.labels(transport).inc(n)

    def sent(self, transport: str, n: int) -> None:
        self.bytes_sent.labels(transport).inc(n)

    def refused(self, reason: str) -> None:
        self.refusals.labels(reason).inc()

    def client_ended(self, method: str, tool: Optional[str], outcome: str, seconds: float) -> None:
        self.client.labels(method, tool or "", outcome).observe(seconds)


def _default_metrics() -> Any:
    try:
        import opentelemetry.metrics  # noqa: F401

        return _Otel(None)
    except ImportError:
        pass
    try:
        return _Prometheus(None)
    except ImportError:
        return None


_UNSET: Any = object()
_metrics: Any = _UNSET


def _get_metrics() -> Any:
    global _metrics
    if _metrics is _UNSET:
        try:
            _metrics = _default_metrics()
        except Exception:
            _metrics = None
    return _metrics


def _recording() -> Any:
    """The metrics backend when a request made now would record something, else ``None``
    (no backend, or OpenTelemetry's proxies with no meter provider set: see ``_Otel.idle``)"""
    m = _get_metrics()
    return None if m is None or m.idle() else m


def metrics_backend() -> Optional[str]:
    """``"otel"``, ``"prometheus"`` or ``None`` (metrics off, or neither installed)."""
    m = _get_metrics()
    return None if m is None else m.name


def configure(
    *,
    tracing: Optional[bool] = None,
    tracer_provider: Any = None,
    metrics: Optional[str] = None,
    meter_provider: Any = None,
    prometheus_registry: Any = None,
) -> None:
    """Changes what is observed, for the whole process (call it before serving or
    connecting; the defaults need no call).

    ``tracing=False`` turns the spans and the ``_meta`` trace context off (``True`` turns
    them back on; needs ``opentelemetry-api``). ``tracer_provider`` makes the spans with
    that provider instead of the global one. ``metrics``: ``"otel"`` (the default when
    ``opentelemetry-api`` is installed), ``"prometheus"`` (the default otherwise, when
    ``prometheus_client`` is) or ``"off"``; ``meter_provider`` records OpenTelemetry metrics
    with that provider instead of the global one, ``prometheus_registry`` registers the
    Prometheus instruments there instead of the default registry. Raises ``ImportError``
    when the backend asked for is not installed."""
    global TRACING, _tracer_provider, _tracer, _metrics
    if tracing is not None:
        if tracing and _trace is None:
            raise ImportError("tracing needs opentelemetry-api (pip install mcp-sansio[otel])")
        TRACING = bool(tracing)
    if tracer_provider is not None:
        _tracer_provider = tracer_provider
        _tracer = None
    if metrics is None and meter_provider is not None:
        metrics = "otel"
    if metrics is None and prometheus_registry is not None:
        metrics = "prometheus"
    if metrics == "off":
        _metrics = None
    elif metrics == "otel":
        _metrics = _Otel(meter_provider)
    elif metrics == "prometheus":
        _metrics = _Prometheus(prometheus_registry)
    elif metrics is not None:
        raise ValueError(f"metrics must be 'otel', 'prometheus' or 'off', not {metrics!r}")


