"""The official Python SDK's client calling `echo` inside an OpenTelemetry span.

    python py_trace_client.py SERVER OTLP_URL
    python py_trace_client.py http://HOST:PORT/mcp

Starts our everything-server SERVER over stdio with `--otlp OTLP_URL` (or talks to one
over Streamable HTTP at the URL, started by the test with `--otlp`), installs an
OpenTelemetry SDK tracer provider (no exporter: only the client's trace id matters), and
calls `echo` inside the span `py.work`; the SDK puts the span's context in the request's
`_meta` (`traceparent`). Prints `INTEROP-SUMMARY {"trace_id": ..., "span_id": ..., "echo": ...}`;
the Rust test (tests/tests/traces.rs) finds the trace id on the server's spans.
"""

import json
import sys
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

DEADLINE_SECONDS = 45


async def run(argv, summary):
    if argv[0].startswith("http://"):
        transport = streamable_http_client(argv[0])
    else:
        transport = stdio_client(StdioServerParameters(command=argv[0], args=["--otlp", argv[1]]))
    tracer = trace.get_tracer("py-trace-client")
    async with transport as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            with tracer.start_as_current_span("py.work") as span:
                context = span.get_span_context()
                summary["trace_id"] = format(context.trace_id, "032x")
                summary["span_id"] = format(context.span_id, "016x")
                result = await session.call_tool("echo", {"text": "from python"})
                summary["echo"] = [getattr(b, "text", None) for b in result.content]


async def main():
    trace.set_tracer_provider(TracerProvider())
    summary = {}
    code = 0
    try:
        with anyio.fail_after(DEADLINE_SECONDS):
            await run(sys.argv[1:], summary)
    except BaseException as e:  # report, then fail
        summary["fatal"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        code = 1
    print("INTEROP-SUMMARY " + json.dumps(summary), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    anyio.run(main)
