"""The official Python SDK's client calling ``echo`` inside a trace of ours: run by
test_observability.py in the SDK's venv (MCP_INTEROP_PYTHON), which has the OpenTelemetry API
(the SDK depends on it) but no OpenTelemetry SDK.

    python sdk_traced_client.py TRACE_ID_HEX SERVER [ARGS...]
    python sdk_traced_client.py TRACE_ID_HEX http://HOST:PORT/mcp

The current span is a (non-recording) span of trace TRACE_ID_HEX, so whatever the SDK's
client propagates in ``_meta`` (SEP-414) names that trace. Prints one line
``TRACED-SUMMARY {json}`` with the echo's text or the error.
"""

import json
import sys
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags


async def main():
    trace_id, target = int(sys.argv[1], 16), sys.argv[2:]
    parent = SpanContext(trace_id, 0x00F067AA0BA902B7, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    summary = {}
    try:
        with anyio.fail_after(45):
            if target[0].startswith("http"):
                transport = streamable_http_client(target[0])
            else:
                transport = stdio_client(StdioServerParameters(command=target[0], args=target[1:]))
            async with transport as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    r = await session.call_tool("echo", {"text": "traced"})
                    summary["texts"] = [getattr(b, "text", None) for b in r.content]
    except Exception as e:
        summary["fatal"] = f"{type(e).__name__}: {e}"
        summary["trace"] = traceback.format_exc()
    print("TRACED-SUMMARY " + json.dumps(summary), flush=True)


anyio.run(main)
