"""Traces (SEP-414) and metrics of mcp_sansio through OpenTelemetry and prometheus_client.

The trace tests cross a real process boundary: tests/everything_server.py runs as its own
process with ``--otlp URL`` and exports its spans over OTLP/HTTP protobuf to a receiver in
this process (otlp_receiver.py); the client (ours, inside a span of this process's tracer
provider, or the official SDK's in its own venv) calls ``echo``, and the test follows one
trace id from the client's span through the server's ``tools/call echo`` span to the
``echo work`` span inside the tool handler, over stdio and Streamable HTTP, both eras.
"""

import asyncio
import signal
import subprocess
import sys
import textwrap

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcp_sansio import McpError, observe, sync
from mcp_sansio.aio import Client, Context, Server

from conftest import EVERYTHING, HERE, free_port, interop_python
from otlp_receiver import SERVER, OtlpReceiver

ERAS = ["legacy", "modern"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def hex_trace(span) -> str:
    return format(span.get_span_context().trace_id, "032x")


def hex_span(span) -> str:
    return format(span.get_span_context().span_id, "016x")


@pytest.fixture
def traced():
    """This process's spans go to an in-memory exporter (mcp_sansio's client spans too)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    saved = (observe._tracer_provider, observe._tracer, observe.TRACING)
    observe.configure(tracer_provider=provider, tracing=True)
    try:
        yield provider, exporter
    finally:
        observe._tracer_provider, observe._tracer, observe.TRACING = saved


@pytest.fixture
def otlp():
    with OtlpReceiver() as receiver:
        yield receiver


def assert_one_trace(otlp, exporter, root, method_span_name="tools/call echo", work="echo work"):
    """root (this process) -> our CLIENT span -> the server's SERVER span -> the tool's own
    span, all in root's trace."""
    trace_id = hex_trace(root)
    inner = otlp.wait_for(lambda s: s.name == work and s.trace_id == trace_id)
    server = otlp.wait_for(lambda s: s.span_id == inner.parent_span_id)
    assert server.name == method_span_name and server.kind == SERVER, server
    assert server.trace_id == trace_id
    assert server.attributes["mcp.method.name"] == "tools/call"
    assert server.attributes["gen_ai.tool.name"] == "echo"
    clients = [
        s for s in exporter.get_finished_spans() if s.kind == SpanKind.CLIENT and s.name == method_span_name
    ]
    assert len(clients) == 1, clients
    client = clients[0]
    assert client.parent is not None and client.parent.span_id == root.get_span_context().span_id
    assert server.parent_span_id == format(client.context.span_id, "016x")


@pytest.mark.parametrize("era", ERAS)
def test_one_trace_over_stdio_with_our_client(traced, otlp, era):
    provider, exporter = traced

    async def main():
        async with Client.connect_stdio(sys.executable, [str(EVERYTHING), "--otlp", otlp.url], era=era) as c:
            with provider.get_tracer("agent").start_as_current_span("agent turn") as root:
                r = await c.call_tool("echo", {"text": "traced"})
        return root, r

    root, r = run(main())
    assert r.content[0].text == "traced"
    assert_one_trace(otlp, exporter, root)


def http_server(otlp_url, env=None):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(EVERYTHING), "--http", str(port), "--otlp", otlp_url],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    assert line.startswith("listening "), line
    return proc, line.split()[1]


@pytest.mark.parametrize("era", ERAS)
def test_one_trace_over_http_with_our_client_and_flush_on_sigterm(traced, otlp, era):
    provider, exporter = traced
    proc, url = http_server(otlp.url)
    try:

        async def main():
            async with Client.connect_http(url, era=era) as c:
                with provider.get_tracer("agent").start_as_current_span("agent turn") as root:
                    r = await c.call_tool("echo", {"text": "traced"})
            return root, r

        root, r = run(main())
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(15)
    # SIGTERM ends the server cleanly (its spans flushed), not by the signal's default.
    assert code == 0, code
    assert r.content[0].text == "traced"
    assert_one_trace(otlp, exporter, root)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_exiting_on_a_signal_flushes_the_batched_spans(otlp, sig):
    """With a batch delay of a minute nothing is exported before the server exits: the
    spans arrive only because the signal's exit flushes them."""
    import os

    proc, url = http_server(otlp.url, env=dict(os.environ, EVERYTHING_OTLP_DELAY_MS="60000"))
    try:

        async def main():
            async with Client.connect_http(url) as c:
                return await c.call_tool("echo", {"text": "flushed"})

        r = run(main())
        assert r.content[0].text == "flushed"
        assert otlp.find(lambda s: s.name == "echo work") == []  # still batched
    finally:
        proc.send_signal(sig)
        code = proc.wait(15)
    assert code == 0, code
    otlp.wait_for(lambda s: s.name == "echo work", timeout=5)
    otlp.wait_for(lambda s: s.name == "tools/call echo" and s.kind == SERVER, timeout=5)


def test_one_trace_with_the_sync_client(traced, otlp):
    """The blocking client runs its loop in another thread: the caller's span goes along."""
    provider, exporter = traced
    with sync.Client.connect_stdio(sys.executable, [str(EVERYTHING), "--otlp", otlp.url]) as c:
        with provider.get_tracer("agent").start_as_current_span("agent turn") as root:
            r = c.call_tool("echo", {"text": "traced"})
    assert r.content[0].text == "traced"
    assert_one_trace(otlp, exporter, root)


TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def official_traced_client(target):
    out = subprocess.run(
        [interop_python(), str(HERE / "sdk_traced_client.py"), TRACE, *target],
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = [l for l in out.stdout.splitlines() if l.startswith("TRACED-SUMMARY ")]
    assert lines, f"no summary\nstdout:{out.stdout}\nstderr:{out.stderr}"
    import json

    summary = json.loads(lines[-1][len("TRACED-SUMMARY ") :])
    assert "fatal" not in summary, summary
    assert summary["texts"] == ["traced"], summary


def assert_official_trace(otlp):
    inner = otlp.wait_for(lambda s: s.name == "echo work" and s.trace_id == TRACE)
    server = otlp.wait_for(lambda s: s.span_id == inner.parent_span_id)
    assert server.name == "tools/call echo" and server.kind == SERVER and server.trace_id == TRACE
    # The SDK's client span (not exported: its venv has no OpenTelemetry SDK) or our
    # made-up parent: either way a span of the client's process, never empty.
    assert server.parent_span_id not in ("", "0" * 16)


def test_one_trace_over_stdio_with_the_official_client(otlp):
    official_traced_client([sys.executable, str(EVERYTHING), "--otlp", otlp.url])
    assert_official_trace(otlp)


def test_one_trace_over_http_with_the_official_client(otlp):
    proc, url = http_server(otlp.url)
    try:
        official_traced_client([url])
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    assert_official_trace(otlp)


def test_a_malformed_traceparent_is_ignored_and_one_of_the_callers_is_kept(traced, otlp):
    provider, exporter = traced
    user_trace, user_parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"

    async def main():
        async with Client.connect_stdio(sys.executable, [str(EVERYTHING), "--otlp", otlp.url]) as c:
            with provider.get_tracer("agent").start_as_current_span("agent turn") as root:
                bad = await c.request(
                    "tools/call",
                    {"name": "echo", "arguments": {"text": "bad"}, "_meta": {"traceparent": "00-not-a-trace-01"}},
                )
                mine = await c.request(
                    "tools/call",
                    {
                        "name": "echo",
                        "arguments": {"text": "mine"},
                        "_meta": {"traceparent": f"00-{user_trace}-{user_parent}-01", "other": 1},
                    },
                )
        return root, bad, mine

    root, bad, mine = run(main())
    # Malformed: the call is answered, not refused.
    assert bad["content"][0]["text"] == "bad" and not bad.get("isError")
    assert mine["content"][0]["text"] == "mine"
    # The caller's own traceparent wins over the one the client would inject.
    server = otlp.wait_for(lambda s: s.name == "tools/call echo" and s.trace_id == user_trace)
    assert server.parent_span_id == user_parent
    # The malformed one starts a trace of its own (a root span), not root's nor the user's.
    other = otlp.wait_for(lambda s: s.name == "tools/call echo" and s.trace_id != user_trace)
    assert other.parent_span_id == ""
    assert other.trace_id != hex_trace(root)


def test_extract_ignores_what_is_not_a_trace_context():
    for meta in (
        None,
        {},
        {"traceparent": "garbage"},
        {"traceparent": 17},
        {"traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"},
        {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"},
        "not a dict",
    ):
        assert observe._extract(meta) is None, meta
    ctx = observe._extract({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
    assert ctx is not None


def test_the_client_injects_trace_context_and_keeps_other_meta(traced):
    """In process: the server's handler reads its _meta; a caller's _meta entries stay."""
    provider, _ = traced
    server = Server("meta")

    @server.tool()
    def meta(ctx: Context) -> dict:
        return dict(ctx.meta or {})

    async def main():
        async with Client.connect_in_process(server) as c:
            with provider.get_tracer("agent").start_as_current_span("turn") as root:
                r = await c.request("tools/call", {"name": "meta", "arguments": {}, "_meta": {"mine": "kept"}})
                plain = await c.call_tool("meta", {})
        return root, r, plain

    root, r, plain = run(main())
    seen = r["structuredContent"]
    assert seen["mine"] == "kept"
    assert seen["traceparent"].split("-")[1] == hex_trace(root)
    assert plain.structured_content["traceparent"].split("-")[1] == hex_trace(root)


# --- metrics --------------------------------------------------------------------------------


@pytest.fixture
def restore_metrics():
    saved = observe._metrics
    try:
        yield
    finally:
        observe._metrics = saved


def metrics_server():
    server = Server("metrics")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def broken() -> str:
        raise RuntimeError("no")

    @server.tool()
    def refused() -> str:
        raise McpError(-32001, "not today")

    return server


async def exercise(server, era="legacy"):
    async with Client.connect_in_process(server, era=era) as c:
        await c.call_tool("echo", {"text": "a"})
        await c.call_tool("echo", {"text": "b"})
        assert (await c.call_tool("broken", {})).is_error
        with pytest.raises(McpError):
            await c.call_tool("refused", {})


def otel_points(reader):
    """{(instrument, frozenset(attributes)): data point}"""
    points = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.data.data_points:
                    points[(m.name, frozenset(p.attributes.items()))] = p
    return points


def test_metrics_through_opentelemetry(restore_metrics):
    reader = InMemoryMetricReader()
    observe.configure(meter_provider=MeterProvider(metric_readers=[reader]))
    assert observe.metrics_backend() == "otel"
    run(exercise(metrics_server()))
    points = otel_points(reader)
    duration = "mcp.server.operation.duration"
    ok = points[(duration, frozenset({"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "outcome": "ok"}.items()))]
    assert ok.count == 2 and ok.sum > 0
    failed = points[
        (duration, frozenset({"mcp.method.name": "tools/call", "gen_ai.tool.name": "broken", "outcome": "tool_error"}.items()))
    ]
    assert failed.count == 1
    refused = points[
        (
            duration,
            frozenset(
                {"mcp.method.name": "tools/call", "gen_ai.tool.name": "refused", "outcome": "error", "error.type": "-32001"}.items()
            ),
        )
    ]
    assert refused.count == 1
    # Nothing in flight once every call was answered; the in-process connection counted
    # as a session and closed.
    assert points[("mcp.server.requests.active", frozenset({"mcp.method.name": "tools/call"}.items()))].value == 0
    assert points[("mcp.server.connections.active", frozenset({"transport": "stream"}.items()))].value == 0
    client = points[
        ("mcp.client.operation.duration", frozenset({"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "outcome": "ok"}.items()))
    ]
    assert client.count == 2


def test_requests_in_flight_and_open_sessions_while_they_run(restore_metrics):
    reader = InMemoryMetricReader()
    observe.configure(meter_provider=MeterProvider(metric_readers=[reader]))
    server = Server("inflight")
    seen = {}

    @server.tool()
    async def wait(ctx: Context) -> str:
        points = otel_points(reader)
        seen["active"] = points[("mcp.server.requests.active", frozenset({"mcp.method.name": "tools/call"}.items()))].value
        seen["sessions"] = points[("mcp.server.connections.active", frozenset({"transport": "stream"}.items()))].value
        return "ok"

    async def main():
        async with Client.connect_in_process(server) as c:
            await c.call_tool("wait", {})

    run(main())
    assert seen == {"active": 1, "sessions": 1}


def test_refusals_by_reason(restore_metrics):
    reader = InMemoryMetricReader()
    observe.configure(meter_provider=MeterProvider(metric_readers=[reader]))
    server = Server("refusals")
    server.catalog.add_tool({"name": "bare", "inputSchema": {"type": "object"}}, None, None)

    async def main():
        async with Client.connect_in_process(server) as c:
            with pytest.raises(McpError):
                await c.call_tool("bare", {})

    run(main())
    points = otel_points(reader)
    assert points[("mcp.server.refusals", frozenset({"reason": "method_not_found"}.items()))].value == 1


def test_metrics_through_prometheus_client(restore_metrics):
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    observe.configure(prometheus_registry=registry)
    assert observe.metrics_backend() == "prometheus"
    run(exercise(metrics_server(), era="modern"))
    value = registry.get_sample_value
    labels = {"method": "tools/call", "tool": "echo", "outcome": "ok", "error_type": ""}
    assert value("mcp_server_operation_duration_seconds_count", labels) == 2
    assert value("mcp_server_operation_duration_seconds_sum", labels) > 0
    labels = {"method": "tools/call", "tool": "broken", "outcome": "tool_error", "error_type": ""}
    assert value("mcp_server_operation_duration_seconds_count", labels) == 1
    labels = {"method": "tools/call", "tool": "refused", "outcome": "error", "error_type": "-32001"}
    assert value("mcp_server_operation_duration_seconds_count", labels) == 1
    assert value("mcp_server_requests_active", {"method": "tools/call"}) == 0
    assert value("mcp_server_connections_active", {"transport": "stream"}) == 0
    assert value("mcp_client_operation_duration_seconds_count", {"method": "tools/call", "tool": "echo", "outcome": "ok"}) == 2


def test_http_refusals_and_connections_through_prometheus(restore_metrics):
    import urllib.error
    import urllib.request

    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    observe.configure(prometheus_registry=registry)
    server = metrics_server()

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        try:
            async with Client.connect_http(handle.url) as c:
                await c.call_tool("echo", {"text": "a"})

            def bad_post():
                request = urllib.request.Request(handle.url, data=b"{}", method="POST", headers={"Content-Type": "text/plain"})
                try:
                    urllib.request.urlopen(request, timeout=10)
                except urllib.error.HTTPError as e:
                    return e.code

            return await asyncio.get_running_loop().run_in_executor(None, bad_post)
        finally:
            await handle.aclose()

    status = run(main())
    assert status == 415
    assert registry.get_sample_value("mcp_server_refusals_total", {"reason": "invalid"}) == 1
    assert registry.get_sample_value("mcp_server_connections_active", {"transport": "http"}) == 0
    labels = {"method": "tools/call", "tool": "echo", "outcome": "ok", "error_type": ""}
    assert registry.get_sample_value("mcp_server_operation_duration_seconds_count", labels) == 1


BIG = "x" * 20000


def test_bytes_and_sessions_over_stdio(tmp_path):
    """A server over real stdin/stdout (a child process) counts the bytes it reads and
    writes (transport ``stream``) and its connection as one session; a tool reports them."""
    script = tmp_path / "counting_server.py"
    script.write_text(
        textwrap.dedent(
            """
            from prometheus_client import CollectorRegistry
            from mcp_sansio import observe
            from mcp_sansio.aio import Server

            registry = CollectorRegistry()
            observe.configure(prometheus_registry=registry)
            server = Server("counting")

            @server.tool()
            def echo(text: str) -> str:
                return text

            @server.tool()
            def counts() -> dict:
                value = registry.get_sample_value
                return {
                    "received": value("mcp_bytes_received_total", {"transport": "stream"}),
                    "sent": value("mcp_bytes_sent_total", {"transport": "stream"}),
                    "sessions": value("mcp_server_sessions_active"),
                    "connections": value("mcp_server_connections_active", {"transport": "stream"}),
                }

            server.run()
            """
        )
    )

    async def main():
        async with Client.connect_stdio(sys.executable, [str(script)]) as c:
            assert (await c.call_tool("echo", {"text": BIG})).content[0].text == BIG
            return (await c.call_tool("counts", {})).structured_content

    counts = run(main())
    counts = counts.get("result", counts)
    # The echo's text went in and out once; the handshake and the calls' framing add a few
    # kilobytes at most.
    assert len(BIG) < counts["received"] < len(BIG) + 5000, counts
    assert len(BIG) < counts["sent"] < len(BIG) + 5000, counts
    assert counts["sessions"] == 1 and counts["connections"] == 1, counts


def test_bytes_and_sessions_in_process_through_opentelemetry(restore_metrics):
    reader = InMemoryMetricReader()
    observe.configure(meter_provider=MeterProvider(metric_readers=[reader]))
    server = Server("counting")
    seen = {}

    @server.tool()
    def echo(text: str) -> str:
        seen["sessions"] = otel_points(reader)[("mcp.server.sessions.active", frozenset())].value
        return text

    async def main():
        async with Client.connect_in_process(server) as c:
            await c.call_tool("echo", {"text": BIG})

    run(main())
    points = otel_points(reader)
    stream = frozenset({"transport": "stream"}.items())
    assert seen["sessions"] == 1
    assert points[("mcp.server.sessions.active", frozenset())].value == 0
    assert len(BIG) < points[("mcp.bytes.received", stream)].value < len(BIG) + 5000
    assert len(BIG) < points[("mcp.bytes.sent", stream)].value < len(BIG) + 5000


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_bytes_and_sessions_over_http_through_prometheus(restore_metrics, era):
    """HTTP bodies count as transport ``http``; a 2025-wire session counts while it lives
    (initialize to DELETE), the 2026 wire's requests share one session for the endpoint's
    life."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    observe.configure(prometheus_registry=registry)
    value = registry.get_sample_value
    server = Server("counting")
    seen = {}

    @server.tool()
    def echo(text: str) -> str:
        seen["during"] = value("mcp_server_sessions_active")
        return text

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        try:
            seen["before"] = value("mcp_server_sessions_active")
            async with Client.connect_http(handle.url, era=era) as c:
                await c.call_tool("echo", {"text": BIG})
            seen["after"] = value("mcp_server_sessions_active")
        finally:
            await handle.aclose()
        seen["closed"] = value("mcp_server_sessions_active")

    run(main())
    # The shared 2026 session, plus the client's own 2025-wire session while it lives.
    during = 2 if era == "legacy" else 1
    assert seen == {"before": 1, "during": during, "after": 1, "closed": 0}
    received = value("mcp_bytes_received_total", {"transport": "http"})
    sent = value("mcp_bytes_sent_total", {"transport": "http"})
    assert len(BIG) < received < len(BIG) + 5000
    assert len(BIG) < sent < len(BIG) + 5000
    assert value("mcp_bytes_received_total", {"transport": "stream"}) is None


def test_nothing_without_opentelemetry_or_prometheus(tmp_path):
    """Neither installed: mcp_sansio imports and serves, no trace context is sent, no
    metrics backend, and no opentelemetry module was imported."""
    script = tmp_path / "bare.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            sys.modules["opentelemetry"] = None      # import opentelemetry -> ImportError
            sys.modules["prometheus_client"] = None
            import asyncio
            from mcp_sansio import observe
            from mcp_sansio.aio import Client, Context, Server

            server = Server("bare")

            @server.tool()
            def meta(ctx: Context) -> dict:
                return {"meta": dict(ctx.meta or {})}

            async def main():
                async with Client.connect_in_process(server) as c:
                    return (await c.call_tool("meta", {})).structured_content

            seen = asyncio.run(main())
            assert observe.tracing_enabled() is False
            assert observe.metrics_backend() is None
            assert not any(k in seen["meta"] for k in observe.TRACE_KEYS), seen
            assert not [m for m in sys.modules if m.startswith(("opentelemetry.", "prometheus_client."))]
            print("BARE-OK")
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "BARE-OK" in out.stdout, out.stderr


def test_an_untraced_application_makes_no_spans_but_passes_an_ambient_trace_on(tmp_path):
    """OpenTelemetry installed, no tracer provider set anywhere: a request made in an empty
    context makes no span and adds nothing to ``_meta``; one made inside a span context
    (another library's, say) still carries it on, and the server continues it for the
    handler (so the handler's own calls carry it further). A fresh process: no provider was
    ever set there."""
    script = tmp_path / "untraced.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from opentelemetry import context, trace
            from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
            from mcp_sansio import observe
            from mcp_sansio.aio import Client, Context, Server

            assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
            server = Server("untraced")

            @server.tool()
            def meta(ctx: Context) -> dict:
                span = trace.get_current_span().get_span_context()
                return {"meta": dict(ctx.meta or {}), "trace": f"{span.trace_id:032x}" if span.is_valid else None}

            async def call():
                async with Client.connect_in_process(server) as c:
                    return (await c.call_tool("meta", {})).structured_content

            # Nothing to trace: no span object is even made.
            assert observe.client_span("tools/call", {"name": "meta"}) is None
            assert observe.server_span("tools/call", "meta", {}, 1, None) is None
            plain = asyncio.run(call())
            assert not any(k in plain["meta"] for k in observe.TRACE_KEYS), plain
            assert plain["trace"] is None, plain

            # An ambient span context (not recorded here) goes on the wire and reaches the handler.
            trace_id = 0x0AF7651916CD43DD8448EB211C80319C
            ambient = NonRecordingSpan(SpanContext(trace_id, 0xB7AD6B7169203331, True, TraceFlags(1)))
            token = context.attach(trace.set_span_in_context(ambient))
            try:
                carried = asyncio.run(call())
            finally:
                context.detach(token)
            assert carried["meta"]["traceparent"].split("-")[1] == f"{trace_id:032x}", carried
            assert carried["trace"] == f"{trace_id:032x}", carried
            print("UNTRACED-OK")
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "UNTRACED-OK" in out.stdout, out.stderr


def test_metrics_without_a_meter_provider_record_nothing_until_one_is_set(tmp_path):
    """OpenTelemetry installed, no meter provider set: the instruments are the API's proxies,
    which record nothing, so requests skip their metrics (``idle``). Once a provider is set
    globally the proxies forward, and the same server and client record their requests from
    then on. A fresh process: no provider was ever set there."""
    script = tmp_path / "idle_metrics.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from opentelemetry import metrics
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import InMemoryMetricReader
            from mcp_sansio import observe
            from mcp_sansio.aio import Client, Server

            server = Server("idle")

            @server.tool()
            def echo(text: str) -> str:
                return text

            async def call():
                async with Client.connect_in_process(server) as c:
                    assert (await c.call_tool("echo", {"text": "a"})).content[0].text == "a"

            m = observe._get_metrics()
            assert m.name == "otel" and m.idle()
            assert observe._recording() is None
            asyncio.run(call())

            reader = InMemoryMetricReader()
            metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
            assert not m.idle() and observe._recording() is m
            asyncio.run(call())
            counts = {}
            for rm in reader.get_metrics_data().resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        for p in metric.data.data_points:
                            counts[metric.name] = counts.get(metric.name, 0) + getattr(p, "count", 0)
            # Only the call made after the provider was set is counted, on both sides.
            assert counts.get("mcp.server.operation.duration") == 1, counts
            assert counts.get("mcp.client.operation.duration") == 1, counts
            assert "mcp.bytes.received" in counts, counts
            print("IDLE-OK")
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "IDLE-OK" in out.stdout, out.stderr
