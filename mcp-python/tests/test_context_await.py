"""The reports of a handler's :class:`Context` (``report_progress``, ``log``, ``debug``,
``info``, ``warning``, ``error``, ``report_status``) work with ``await`` (the official
SDK's habit) and without it, in async and sync handlers, in both eras, and never warn
(every warning is an error here, and so is a coroutine left unawaited)."""

import asyncio
import gc
import inspect

import pytest

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
