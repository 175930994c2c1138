"""The official Python SDK's client against the C echo server (mcp-capi/examples/c/echo-server.c).

    python py_c_echo.py MODE SERVER [ARGS...]

MODE is `legacy` (ClientSession.initialize, 2025-11-25), `modern` (ClientSession.discover,
2026-07-28) or `auto` (mcp.Client(mode="auto")). The scenario: list tools, call echo, call
slow with progress, start a long slow call and cancel it once its first progress report came
(the SDK sends notifications/cancelled when the call's scope is cancelled), call echo again
(the server still serves; it handled the cancellation before this request), call an unknown
tool. Each step's outcome goes into one JSON object printed on a line starting with
`INTEROP-SUMMARY `; the Rust test (mcp-capi/tests/c_examples.rs) asserts on it and on the
server's stderr, which the SDK passes through to ours. Exits non-zero only when connecting
fails.
"""

import json
import os
import sys
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.client import Client
from mcp.client.stdio import stdio_client
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
    async def tools():
        return sorted(t.name for t in (await api.list_tools()).tools)

    async def echo(text):
        r = await api.call_tool("echo", {"text": text})
        return {"texts": texts(r.content), "is_error": bool(r.is_error)}

    async def slow():
        seen = []

        async def on_progress(progress, total, message):
            seen.append({"progress": progress, "total": total, "message": message})

        r = await api.call_tool("slow", {"steps": 3, "step_ms": 100}, progress_callback=on_progress)
        return {"texts": texts(r.content), "is_error": bool(r.is_error), "progress": seen}

    async def cancel():
        first = anyio.Event()
        outcome = {"cancelled": False, "result": None}

        async def on_progress(progress, total, message):
            first.set()

        async def call():
            try:
                r = await api.call_tool(
                    "slow", {"steps": 1000, "step_ms": 50}, progress_callback=on_progress
                )
                outcome["result"] = texts(r.content)
            except anyio.get_cancelled_exc_class():
                outcome["cancelled"] = True
                raise

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(20):
                await first.wait()
            tg.cancel_scope.cancel()
        return outcome

    async def unknown():
        r = await api.call_tool("no-such-tool", {})
        return {"texts": texts(r.content), "is_error": bool(r.is_error)}

    await step(summary, "tools", tools)
    await step(summary, "echo", lambda: echo("hello from python"))
    await step(summary, "slow", slow)
    await step(summary, "cancel", cancel)
    await step(summary, "echo_after_cancel", lambda: echo("still here"))
    await step(summary, "unknown_tool", unknown)


async def run(mode, params, summary):
    if mode == "auto":
        async with Client(params, mode="auto") as client:
            summary["protocol_version"] = client.protocol_version
            summary["server_name"] = client.server_info.name if client.server_info else None
            await scenario(client, summary)
        return
    async with stdio_client(params) as (read, write):
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
            # The SDK starts the server with a few safe variables only; the sanitizer's
            # settings must reach it (the ASan runs write their reports to files)
            env = {k: v for k, v in os.environ.items() if k in ("ASAN_OPTIONS", "LSAN_OPTIONS")}
            params = StdioServerParameters(command=command, args=args, env=env)
            await run(mode, params, summary)
    except BaseException as e:  # report, then fail
        summary["fatal"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        code = 1
    print("INTEROP-SUMMARY " + json.dumps(summary), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    anyio.run(main)
