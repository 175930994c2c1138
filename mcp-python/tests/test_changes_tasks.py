"""Subscriptions and tasks through the asyncio drivers, end to end: in process (the byte
stream path) and over Streamable HTTP, both eras."""

import asyncio
import contextlib
import threading

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

ERAS = ["legacy", "modern"]
TRANSPORTS = ["stream", "http"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


@contextlib.asynccontextmanager
async def connect(server, transport, era, **options):
    if transport == "stream":
        async with Client.connect_in_process(server, era=era, **options) as c:
            yield c
    else:
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era, **options) as c:
                yield c


def watched_server():
    server = Server("watched", "1.0", resource_subscriptions=True, list_changed=True)

    @server.tool()
    def noop() -> str:
        return "ok"

    @server.resource("file:///dir/a.txt")
    def a() -> str:
        return "a"

    @server.prompt()
    def hello() -> str:
        return "hello"

    return server


async def next_of(sub):
    return await asyncio.wait_for(sub.next(), 10)


# --- subscriptions ---------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_listen_receives_what_the_server_publishes(era, transport):
    async def main():
        server = watched_server()
        seen = []
        async with connect(server, transport, era, on_notification=lambda m, p: seen.append(m)) as c:
            async with c.listen(tools_changed=True, resource_uris=["file:///dir"]) as sub:
                assert sub.granted == {"toolsListChanged": True, "resourceSubscriptions": ["file:///dir"]}
                server.notify_resource_updated("file:///elsewhere")  # nobody listens to it
                server.notify_resource_updated("file:///dir/a.txt")
                server.notify_list_changed("prompts")  # not asked for
                server.notify_list_changed("tools")
                first = await next_of(sub)
                assert (first.method, first.params["uri"]) == ("notifications/resources/updated", "file:///dir/a.txt")
                second = await next_of(sub)
                assert second.method == "notifications/tools/list_changed"
                if era == "modern":
                    assert first.subscription_id == second.subscription_id is not None
            # Left the block: the server forgot the subscription (2026: the listen request was
            # cancelled; legacy: resources/unsubscribe), so a change of the file sends nothing.
            async with c.listen(prompts_changed=True) as sub:
                seen.clear()
                server.notify_resource_updated("file:///dir/a.txt")
                server.notify_list_changed("prompts")
                assert (await next_of(sub)).method == "notifications/prompts/list_changed"
                assert "notifications/resources/updated" not in seen, seen

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_a_subscription_ends_with_the_connection(era):
    async def main():
        server = watched_server()
        c = await Client.connect_in_process(server, era=era)
        sub = await c.listen(resource_uris=["file:///dir/a.txt"])
        server.notify_resource_updated("file:///dir/a.txt")
        await c.aclose()
        # what arrived before the end is still there, then the end
        assert (await next_of(sub)).params["uri"] == "file:///dir/a.txt"
        with pytest.raises(ms.ConnectionClosed):
            await next_of(sub)
        await sub.aclose()

    run(main())


def test_a_subscription_left_unread_is_ended_not_grown():
    async def main():
        server = watched_server()
        async with Client.connect_in_process(server, era="modern") as c:
            async with c.listen(tools_changed=True, max_queued=3) as sub:
                for _ in range(5):
                    server.notify_list_changed("tools")
                await asyncio.sleep(0)
                for _ in range(3):
                    assert (await next_of(sub)).method == "notifications/tools/list_changed"
                with pytest.raises(ms.SubscriptionLost):
                    await next_of(sub)

    run(main())


def test_listen_from_the_sync_client_and_notify_from_another_thread():
    from mcp_sansio.sync import Client as SyncClient

    server = watched_server()
    for era in ERAS:
        with SyncClient.connect_in_process(server, era=era) as c:
            with c.listen(resource_uris=["file:///dir/a.txt"]) as sub:
                server.notify_resource_updated("file:///dir/a.txt")  # this thread is not the loop's
                note = sub.next(timeout=10)
                assert note.params == {"uri": "file:///dir/a.txt"} or note.params["uri"] == "file:///dir/a.txt"


def test_notify_list_changed_needs_the_declaration():
    server = Server("plain")

    @server.tool()
    def noop() -> str:
        return "ok"

    with pytest.raises(ms.LocalProtocolError):
        server.notify_list_changed("tools")
    with pytest.raises(ValueError):
        watched_server().notify_list_changed("bananas")


# --- tasks -----------------------------------------------------------------------------------


def task_server():
    server = Server("tasks", "1.0", tasks=True)
    state = {"gate": None, "cancelled": None, "thread": None}

    @server.tool()
    async def long(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.02)
        ctx.report_status("waiting for the gate")
        await state["gate"].wait()
        return "finally"

    @server.tool()
    async def stuck(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.02)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    @server.tool()
    def long_sync(ctx: Context) -> str:
        ctx.run_as_task_blocking(poll_interval=0.02)
        state["thread"] = threading.current_thread()
        return "from a thread"

    @server.tool()
    async def fails(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.02)
        raise ms.McpError(-32001, "the task failed")

    return server, state


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_a_tool_run_as_a_task_is_one_slow_call(era, transport):
    async def main():
        server, state = task_server()
        state["gate"] = asyncio.Event()
        state["cancelled"] = asyncio.Event()
        async with connect(server, transport, era, tasks=True) as c:
            statuses = []

            def on_status(status, message):
                statuses.append(status)
                if status == "working":
                    state["gate"].set()  # the handler still runs: the client follows the task

            r = await c.call_tool("long", as_task=True, on_task_status=on_status)
            assert r["content"][0]["text"] == "finally"
            assert statuses[0] == "working", statuses
            assert state["gate"].is_set()

            statuses.clear()
            r = await c.call_tool("long_sync", as_task=True, on_task_status=lambda s, m: statuses.append(s))
            assert r["content"][0]["text"] == "from a thread"
            assert statuses[:1] == ["working"] and state["thread"] is not threading.main_thread()

            with pytest.raises(ms.McpError) as e:
                await c.call_tool("fails", as_task=True)
            assert e.value.code == -32001

            # cancelling the call cancels the task, and the task's handler
            started = asyncio.Event()
            call = asyncio.ensure_future(
                c.call_tool("stuck", as_task=True, on_task_status=lambda s, m: started.set())
            )
            await asyncio.wait_for(started.wait(), 10)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await asyncio.wait_for(state["cancelled"].wait(), 10)
            assert (await c.call_tool("long", as_task=True))["content"][0]["text"] == "finally"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_run_as_task_without_a_task_offer_is_a_clear_error(era):
    async def main():
        server = Server("no-offer", tasks=True)
        outcome = {}

        @server.tool()
        async def maybe(ctx: Context) -> str:
            try:
                await ctx.run_as_task()
            except ms.McpError as e:
                outcome["error"] = e
            return "answered directly"

        async with Client.connect_in_process(server, era=era) as c:  # no tasks=True, no as_task
            assert (await c.call_tool("maybe"))["content"][0]["text"] == "answered directly"
        assert isinstance(outcome["error"], ms.McpError)

    run(main())


def test_task_support_is_the_tools_execution():
    server = Server("support", tasks=True)

    @server.tool(task_support="optional")
    def maybe() -> str:
        return "ok"

    @server.tool(task_support="required")
    def must() -> str:
        return "ok"

    @server.tool()
    def plain() -> str:
        return "ok"

    tools = {t["name"]: t for t in server.config.tools}
    assert tools["maybe"]["execution"] == {"taskSupport": "optional"}
    assert tools["must"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in tools["plain"]
    with pytest.raises(ValueError):
        server.tool(task_support="sometimes")


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_a_required_task_tool_without_a_task_offer_is_refused(era, transport):
    async def main():
        server = Server("required", tasks=True)
        ran = []

        # The handler runs either way; without the offer its run_as_task raises, and the
        # McpError (not caught here) answers the call
        @server.tool(task_support="required")
        async def must(ctx: Context) -> str:
            ran.append(1)
            await ctx.run_as_task(poll_interval=0.02)
            return "as a task"

        async with connect(server, transport, era) as c:  # no tasks=True, no as_task
            with pytest.raises(ms.McpError) as refused:
                await c.call_tool("must")
            if era == "modern":  # -32021 naming the extension the request lacks
                assert refused.value.code == -32021
                assert "io.modelcontextprotocol/tasks" in refused.value.data["requiredCapabilities"]["extensions"]
        async with connect(server, transport, era, tasks=True) as c:
            r = await c.call_tool("must", as_task=era == "legacy")
            assert r["content"][0]["text"] == "as a task"
        assert ran == [1, 1]

    run(main())


def test_discover_shows_the_tasks_extension_not_the_legacy_slot():
    # Server(tasks=True) declares 2025-11-25 `tasks` and the 2026 extension; each era sees
    # its own (a 2026 `tasks` capability is a conformance failure)
    async def main():
        server = Server("both-eras", tasks=True)

        @server.tool()
        def noop() -> str:
            return "ok"

        for transport in TRANSPORTS:
            async with connect(server, transport, "modern") as c:
                caps = c.server_capabilities
                assert "tasks" not in caps, caps
                assert "io.modelcontextprotocol/tasks" in caps["extensions"]
            async with connect(server, transport, "legacy") as c:
                assert c.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}

    run(main())
