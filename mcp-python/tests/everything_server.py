"""Our everything-server on mcp_sansio's asyncio driver, the peer of the official SDK's
client in the interop tests (the same scenario as mcp-sansio-tokio's everything-server).

    python everything_server.py            # stdio
    python everything_server.py --http PORT
    python everything_server.py --https PORT CERT KEY   # HTTPS
    python everything_server.py --http PORT --jwt-secret SECRET   # protected

and the scale-out flags anywhere: ``--node NAME``, ``--state-key HEX``,
``--store redis://HOST:PORT``, ``--lease MS`` (scale_args.py).

``--jwt-secret SECRET`` protects the HTTP endpoint: every request needs an HS256 JWT signed
with SECRET whose ``aud`` is ``http://127.0.0.1:PORT/mcp`` and ``iss`` is
``http://127.0.0.1:PORT+1`` (any scopes); ``admin_echo`` needs the scope ``mcp:admin``.
``whoami`` answers who called, protected or not.

``--otlp http://HOST:PORT`` exports the server's spans (each request's ``SERVER`` span, and
the span each tool does its work in, e.g. ``echo work``) over OTLP/HTTP protobuf to
``http://HOST:PORT/v1/traces`` (opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http),
in batches at most 200 ms apart, and flushes them on exit (end of stdin, SIGINT, SIGTERM).
"""

import asyncio
import contextlib
import json
import os
import signal
import sys

from mcp_sansio import JwtVerifier, McpError
from mcp_sansio.aio import Context, Server

try:
    from opentelemetry import trace as _trace

    _tracer = _trace.get_tracer("everything_server")
except ImportError:  # a venv without OpenTelemetry: the tools just work
    _tracer = None


def work(name: str):
    """The span a tool does its work in (nothing without OpenTelemetry)."""
    if _tracer is None:
        return contextlib.nullcontext()
    return _tracer.start_as_current_span(name)


def export_spans(endpoint: str):
    """Sends this process's spans to the OTLP/HTTP collector at ``endpoint``; returns the
    provider (shut it down to flush)."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-sansio-everything-python"}))
    exporter = OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces", timeout=5)
    # At most 200 ms between batches (EVERYTHING_OTLP_DELAY_MS overrides it: the tests set a
    # long one to show that exiting flushes what is still batched).
    delay = int(os.environ.get("EVERYTHING_OTLP_DELAY_MS", "200"))
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=delay))
    trace.set_tracer_provider(provider)
    return provider


server = Server(
    "mcp-sansio-everything", "1.0.0", instructions="The mcp_sansio interop server.", tasks=True
)


@server.tool(description="Echoes the text back")
def echo(text: str) -> str:
    with work("echo work"):
        return text


@server.tool(description="Adds two numbers")
def add(a: float, b: float) -> str:
    with work("add work"):
        total = a + b
        return str(int(total)) if total == int(total) else str(total)


@server.tool(description="Works for `steps` twentieths of a second, reporting progress")
async def slow(steps: int, ctx: Context) -> str:
    with work("slow work"):
        for step in range(1, steps + 1):
            await asyncio.sleep(0.05)
            ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"done after {steps} steps"


@server.tool(description="Asks the user for their name")
async def ask_name(ctx: Context) -> str:
    answer = await ctx.elicit("What is your name?", {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    })
    if answer.get("action") != "accept":
        return f"no name ({answer.get('action')})"
    return f"Hello, {answer['content']['name']}!"


@server.tool(description="Logs at every level, then answers")
async def chatty(ctx: Context) -> str:
    ctx.info("starting")
    ctx.warning({"careful": True})
    return "said things"


@server.tool(description="Runs until cancelled")
async def forever(ctx: Context) -> str:
    await asyncio.sleep(3600)
    return "never"


@server.tool(description="Says who called: the verified subject, client id and scopes (null where unknown)")
def whoami(ctx: Context) -> str:
    p = ctx.principal
    return json.dumps({
        "subject": p.subject if p else None,
        "client_id": p.client_id if p else None,
        "scopes": p.scopes if p else [],
    })


@server.tool(description="Echoes the text back; needs the scope mcp:admin", scopes=["mcp:admin"])
def admin_echo(text: str) -> str:
    with work("admin_echo work"):
        return text


@server.tool(
    description="Works for `ms` milliseconds, as a task when the client allows it",
    task_support="optional",
)
async def long_job(ms: int, ctx: Context) -> str:
    try:
        await ctx.run_as_task()
    except McpError:
        pass  # the client did not offer a task: the plain answer comes at the end
    with work("long_job work"):
        await asyncio.sleep(max(0, ms) / 1000)
        return f"done after {ms} ms"


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    return "Hello from a static resource"


@server.resource("test://template/{id}/data", name="template-data")
def template_data(id: str) -> str:
    return f"Data for {id}"


@server.prompt(description="Greets someone")
def greeting(name: str) -> str:
    return f"Say hello to {name}."


@server.completion()
def complete(ref, argument, context):
    names = ["Ada", "Alan", "Grace"]
    return [n for n in names if n.lower().startswith(argument["value"].lower())]


async def serve_http(port: int, certfile=None, keyfile=None) -> None:
    handle = await server.serve_http("127.0.0.1", port, ssl_certfile=certfile, ssl_keyfile=keyfile)
    print(f"listening {handle.url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await handle.aclose()


def main(argv) -> None:
    if len(argv) == 2 and argv[0] == "--http":
        try:
            asyncio.run(serve_http(int(argv[1])))
        except KeyboardInterrupt:
            pass
    elif len(argv) == 4 and argv[0] == "--https":  # --https PORT CERT KEY
        try:
            asyncio.run(serve_http(int(argv[1]), argv[2], argv[3]))
        except KeyboardInterrupt:
            pass
    else:
        asyncio.run(server.serve_stdio())


def _stop(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    import scale_args

    argv, flags = scale_args.split(sys.argv[1:])
    provider = None
    if "--otlp" in argv:
        at = argv.index("--otlp")
        if at + 1 >= len(argv):
            sys.exit("usage: everything_server.py ... --otlp http://HOST:PORT")
        provider = export_spans(argv[at + 1])
        del argv[at : at + 2]
    scale_args.apply(server, flags)
    if "--jwt-secret" in argv:
        at = argv.index("--jwt-secret")
        if at + 1 >= len(argv) or len(argv) < 4 or argv[0] != "--http":
            sys.exit("usage: everything_server.py --http PORT --jwt-secret SECRET")
        secret = argv[at + 1]
        del argv[at : at + 2]
        port = int(argv[1])
        server.auth = JwtVerifier(secret, audience=f"http://127.0.0.1:{port}/mcp", issuer=f"http://127.0.0.1:{port + 1}")
        server.resource_url = f"http://127.0.0.1:{port}/mcp"
        server.authorization_server = f"http://127.0.0.1:{port + 1}"
    if provider is None:
        main(argv)
    else:
        # Exporting: SIGTERM ends the server as SIGINT does, and either way (or the end of
        # stdin) the spans still batched are sent before the process exits.
        signal.signal(signal.SIGTERM, _stop)
        try:
            main(argv)
        except KeyboardInterrupt:
            pass
        finally:
            provider.shutdown()
