"""The reports of a handler's :class:`Context` (``report_progress``, ``log``, ``debug``,
``info``, ``warning``, ``error``, ``report_status``) work with ``await`` (the official
SDK's habit) and without it, in async and sync handlers, in both eras, and never warn
(every warning is an error here, and so is a coroutine left unawaited). ``await
ctx.read_resource(uri)`` reads the server's own resources and templates, for the request's
caller (its scopes checked by the core)."""

import asyncio
import gc
import inspect
import json
import sys
import textwrap

import pytest

import mcp_sansio as ms
from mcp_sansio import types
from mcp_sansio.aio import Client, Context, Server

pytestmark = pytest.mark.filterwarnings("error")

ERAS = ["legacy", "modern"]


def run(coro_fn):
    calls = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: calls.append(context))
        await asyncio.wait_for(coro_fn(), 60)
        gc.collect()
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    assert calls == []


def make_server():
    server = Server("reporter", "1.0", tasks=True)

    @server.tool()
    async def awaited(ctx: Context) -> str:
        await ctx.report_progress(1, 3, "one")
        await ctx.debug("debug line")
        await ctx.info("info line")
        await ctx.warning("warning line", logger_name="the-tool")
        await ctx.error({"what": "error line"})
        await ctx.log("notice", "notice line", logger_name="named")
        await ctx.report_progress(2, 3)
        await ctx.report_status("not a task: nothing is sent")
        return "awaited"

    @server.tool()
    async def not_awaited(ctx: Context) -> str:
        ctx.report_progress(1, 2, "one")
        ctx.info("info line")
        ctx.log("warning", "warning line", "legacy-logger-argument")
        ctx.report_progress(2, 2)
        return "not awaited"

    @server.tool()
    def sync_handler(ctx: Context) -> str:
        sent = ctx.report_progress(1, 1, "from a thread")
        assert inspect.isawaitable(sent) and not inspect.iscoroutine(sent)
        ctx.info("from a thread")
        return "sync"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_reports_work_with_and_without_await(era):
    async def main():
        notes = []
        async with Client.connect_in_process(
            make_server(), era=era, on_notification=lambda m, p: notes.append((m, p))
        ) as c:
            if era == "legacy":
                await c.set_logging_level("debug")
            for tool, progress in (("awaited", [1, 2]), ("not_awaited", [1, 2]), ("sync_handler", [1])):
                seen = []
                r = await c.call_tool(tool, progress_callback=lambda p, t, m: seen.append((p, t, m)))
                assert not r.get("isError"), r
                assert [s[0] for s in seen] == progress, (tool, seen)
        if era == "legacy":
            logged = [(p["level"], p.get("logger"), p["data"]) for m, p in notes if m == "notifications/message"]
            assert ("debug", None, "debug line") in logged, logged
            assert ("info", None, "info line") in logged, logged
            assert ("warning", "the-tool", "warning line") in logged, logged
            assert ("error", None, {"what": "error line"}) in logged, logged
            assert ("notice", "named", "notice line") in logged, logged
            assert ("warning", "legacy-logger-argument", "warning line") in logged, logged
            assert ("info", None, "from a thread") in logged, logged

    run(main)


def test_a_report_is_a_done_awaitable_not_a_coroutine():
    async def main():
        server = Server("probe")
        kept = {}

        @server.tool()
        async def probe(ctx: Context) -> str:
            kept["sent"] = ctx.info("x")
            assert await ctx.report_progress(1) is None
            return "ok"

        async with Client.connect_in_process(server) as c:
            await c.call_tool("probe")
        sent = kept["sent"]
        assert not asyncio.iscoroutine(sent) and inspect.isawaitable(sent)
        assert await sent is None and await sent is None  # done, and may be awaited again

    run(main)


def test_a_typed_elicitation_answer_reads_as_data_too():
    from mcp_sansio.aio import ElicitResult

    answer = ElicitResult("accept", {"name": "Ada"})
    assert answer.data == answer.content == {"name": "Ada"} and answer.accepted
    assert ElicitResult("decline").data is None


def reading_server():
    server = Server("reader")

    @server.resource("mem://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello"

    @server.resource("mem://items/{n}")
    async def item(n: str, uri: str, ctx: Context) -> dict:
        return {"n": int(n), "uri": uri, "era": ctx.era}

    @server.resource("mem://broken")
    def broken() -> str:
        raise RuntimeError("unreadable")

    @server.tool()
    async def read(uri: str, ctx: Context) -> dict:
        try:
            r = await ctx.read_resource(uri)
        except ms.McpError as e:
            return {"code": e.code, "message": e.message}
        except RuntimeError as e:
            return {"raised": str(e)}
        assert isinstance(r, types.ReadResourceResult)
        return {"text": r.contents[0].text, "mime": r.contents[0].mime_type}

    @server.tool()
    def read_sync(uri: str, ctx: Context) -> str:
        return ctx.read_resource_blocking(uri).contents[0].text

    return server


@pytest.mark.parametrize("era", ERAS)
def test_read_resource_reads_the_servers_own_resources(era):
    async def main():
        async with Client.connect_in_process(reading_server(), era=era) as c:

            async def read(uri):
                return (await c.call_tool("read", {"uri": uri})).structured_content

            assert await read("mem://hello") == {"text": "hello", "mime": "text/plain"}
            got = await read("mem://items/7")
            assert json.loads(got["text"]) == {"n": 7, "uri": "mem://items/7", "era": era} and got["mime"] == "application/json"
            assert await read("mem://nothing") == {"code": -32602, "message": "Resource not found: mem://nothing"}
            assert await read("mem://broken") == {"raised": "unreadable"}
            assert (await c.call_tool("read_sync", {"uri": "mem://items/3"})).content[0].text == json.dumps(
                {"n": 3, "uri": "mem://items/3", "era": era}
            )

    run(main)


SCOPED = textwrap.dedent(
    """
    import asyncio
    import mcp_sansio as ms
    from mcp_sansio import Principal
    from mcp_sansio.aio import Context, Server

    server = Server("scoped")

    @server.resource("mem://public", scopes=["mcp:read"])
    def public() -> str:
        return "for readers"

    @server.resource("mem://secret/{id}", scopes=["mcp:admin"])
    def secret(id: str) -> str:
        return "for admins " + id

    @server.tool()
    async def read(uri: str, ctx: Context) -> str:
        try:
            return (await ctx.read_resource(uri)).contents[0].text
        except ms.McpError as e:
            return f"refused {e.code}"

    asyncio.run(server.serve_stdio(principal=Principal("reader", "local", ["mcp:read"])))
    """
)


def test_read_resource_checks_the_callers_scopes():
    async def main():
        async with Client.connect_stdio(sys.executable, ["-W", "error", "-c", SCOPED], era="legacy") as c:
            assert (await c.call_tool("read", {"uri": "mem://public"})).content[0].text == "for readers"
            assert (await c.call_tool("read", {"uri": "mem://secret/1"})).content[0].text == "refused -32003"

    run(main)
