"""The official Python SDK's client against a stdio server (ours), printing what it saw.

    python py_client.py MODE SERVER [ARGS...]
    python py_client.py MODE http://HOST:PORT/PATH
    python py_client.py MODE https://HOST:PORT/PATH   (trusting SSL_CERT_FILE's roots too)


MODE is `legacy` (ClientSession.initialize), `modern` (ClientSession.discover) or `auto`
(mcp.Client(mode="auto"): discover, falling back to initialize). The scenario: list tools,
call echo and add, call slow with progress, read the static resource and a template,
get the greeting prompt, call an unknown tool. Each step's outcome (or the error it raised)
goes into one JSON object printed on a line starting with `INTEROP-SUMMARY `; the Rust test
asserts on it. Exits non-zero only when connecting fails (the summary still says why).
"""

import json
import sys
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

DEADLINE_SECONDS = 45


def texts(blocks):
    return [getattr(b, "text", None) for b in blocks]


async def step(summary, key, coro_fn):
    try:
        summary[key] = await coro_fn()
    except MCPError as e:
        summary[key] = {"error": {"code": e.code, "message": str(e)}}
    except Exception as e:  # the summary names every failure
        summary[key] = {"exception": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}


async def scenario(api, summary):
    """`api` has list_tools, call_tool, read_resource and get_prompt (ClientSession or Client)."""

    async def tools():
        return sorted(t.name for t in (await api.list_tools()).tools)

    async def echo():
        r = await api.call_tool("echo", {"text": "hello from python"})
        return {"texts": texts(r.content), "is_error": bool(r.is_error)}

    async def add():
        r = await api.call_tool("add", {"a": 2, "b": 3.5})
        return {"texts": texts(r.content), "is_error": bool(r.is_error)}

    async def slow():
        seen = []

        async def on_progress(progress, total, message):
            seen.append({"progress": progress, "total": total, "message": message})

        r = await api.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
        return {"texts": texts(r.content), "is_error": bool(r.is_error), "progress": seen}

    async def read(uri):
        r = await api.read_resource(uri)
        return [{"uri": str(c.uri), "text": getattr(c, "text", None)} for c in r.contents]

    async def prompt():
        r = await api.get_prompt("greeting", {"name": "Ada"})
        return [{"role": m.role, "text": getattr(m.content, "text", None)} for m in r.messages]

    async def unknown():
        r = await api.call_tool("no-such-tool", {})
        return {"texts": texts(r.content), "is_error": bool(r.is_error)}

    await step(summary, "tools", tools)
    await step(summary, "echo", echo)
    await step(summary, "add", add)
    await step(summary, "slow", slow)
    await step(summary, "static", lambda: read("test://static-text"))
    await step(summary, "template", lambda: read("test://template/42/data"))
    await step(summary, "prompt", prompt)
    await step(summary, "unknown_tool", unknown)


async def run(mode, params, summary):
    if mode == "auto":
        async with Client(params, mode="auto") as client:
            summary["protocol_version"] = client.protocol_version
            summary["server_name"] = client.server_info.name if client.server_info else None
            await scenario(client, summary)
        return
    transport = streamable_http_client(params) if isinstance(params, str) else stdio_client(params)
    async with transport as (read, write):
        async with ClientSession(read, write) as session:
            if mode == "legacy":
                init = await session.initialize()
                summary["protocol_version"] = init.protocol_version
                summary["server_name"] = init.server_info.name
            elif mode == "modern":
                await session.discover()
                summary["protocol_version"] = session.protocol_version
                info = session.server_info
                summary["server_name"] = info.name if info else None
            else:
                raise ValueError(f"unknown mode {mode!r}")
            await scenario(session, summary)


async def main():
    mode, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    summary = {"mode": mode}
    code = 0
    try:
        with anyio.fail_after(DEADLINE_SECONDS):
            if command.startswith(("http://", "https://")):
                # Streamable HTTP: the URL is the server (Client(url) uses the same transport).
                await run(mode, command, summary)
            else:
                await run(mode, StdioServerParameters(command=command, args=args), summary)
    except BaseException as e:  # report, then fail
        summary["fatal"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        code = 1
    print("INTEROP-SUMMARY " + json.dumps(summary), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    anyio.run(main)
