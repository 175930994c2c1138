"""The official Python SDK's client calling `echo` inside an OpenTelemetry span.

    python py_trace_client.py SERVER OTLP_URL

Starts our everything-server SERVER over stdio with `--otlp OTLP_URL`, installs an
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
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

DEADLINE_SECONDS = 45


async def run(server, otlp, summary):
    params = StdioServerParameters(command=server, args=["--otlp", otlp])
    tracer = trace.get_tracer("py-trace-client")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            with tracer.start_as_current_span("py.work") as span:
                context = span.get_span_context()
                summary["trace_id"] = format(context.trace_id, "032x")
                summary["span_id"] = format(context.span_id, "016x")
                result = await session.call_tool("echo", {"text": "from python"})
                summary["echo"] = [getattr(b, "text", None) for b in result.content]


async def main():
    server, otlp = sys.argv[1], sys.argv[2]
    trace.set_tracer_provider(TracerProvider())
    summary = {}
    code = 0
    try:
        with anyio.fail_after(DEADLINE_SECONDS):
            await run(server, otlp, summary)
    except BaseException as e:  # report, then fail
        summary["fatal"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        code = 1
    print("INTEROP-SUMMARY " + json.dumps(summary), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    anyio.run(main)
