"""Subscriptions, run-time catalog changes and tasks through the asyncio drivers, end to
end: in process (the byte stream path, as over stdio), over stdio, over Streamable HTTP
(the h11 server, and the ASGI app under uvicorn), both eras."""

import asyncio
import contextlib
import sys
import textwrap
import threading

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

from conftest import uvicorn_serving

ERAS = ["legacy", "modern"]
TRANSPORTS = ["stream", "http", "asgi"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


@contextlib.asynccontextmanager
async def connect(server, transport, era, **options):
    if transport == "stream":
        async with Client.connect_in_process(server, era=era, **options) as c:
            yield c
    elif transport == "http":
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era, **options) as c:
                yield c
    else:
        pytest.importorskip("uvicorn")
        async with uvicorn_serving(server.asgi_app(path="/mcp")) as base:
            async with Client.connect_http(base + "/mcp", era=era, **options) as c:
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


# --- the catalog changed at run time -----------------------------------------------------------


def names(page, key):
    return {entry.get("uri") or entry["name"] for entry in page[key]}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
def test_tools_resources_and_prompts_added_and_removed_while_serving(era, transport):
    async def main():
        server = watched_server()
        async with connect(server, transport, era) as c:
            async with c.listen(tools_changed=True, resources_changed=True, prompts_changed=True) as sub:

                @server.tool(description="Added while serving")
                def late(x: int) -> str:
                    return str(x * 2)

                assert (await next_of(sub)).method == "notifications/tools/list_changed"
                assert names(await c.list_tools(), "tools") == {"noop", "late"}
                assert (await c.call_tool("late", {"x": 21}))["content"][0]["text"] == "42"

                assert server.remove_tool("noop") and not server.remove_tool("noop")
                assert (await next_of(sub)).method == "notifications/tools/list_changed"
                assert names(await c.list_tools(), "tools") == {"late"}
                with pytest.raises(ms.McpError) as e:
                    await c.call_tool("noop")
                assert e.value.code == -32602

                @server.resource("file:///dir/b.txt", mime_type="text/plain")
                def b() -> str:
                    return "bee"

                assert (await next_of(sub)).method == "notifications/resources/list_changed"
                assert names(await c.list_resources(), "resources") == {"file:///dir/a.txt", "file:///dir/b.txt"}
                assert (await c.read_resource("file:///dir/b.txt"))["contents"][0]["text"] == "bee"
                assert server.remove_resource("file:///dir/a.txt")
                assert (await next_of(sub)).method == "notifications/resources/list_changed"
                assert names(await c.list_resources(), "resources") == {"file:///dir/b.txt"}
                with pytest.raises(ms.McpError):
                    await c.read_resource("file:///dir/a.txt")

                @server.prompt()
                def bye(name: str) -> str:
                    return f"Say goodbye to {name}."

                assert (await next_of(sub)).method == "notifications/prompts/list_changed"
                assert names(await c.list_prompts(), "prompts") == {"hello", "bye"}
                r = await c.get_prompt("bye", {"name": "Ada"})
                assert r["messages"][0]["content"]["text"] == "Say goodbye to Ada."
                assert server.remove_prompt("hello")
                assert (await next_of(sub)).method == "notifications/prompts/list_changed"
                assert names(await c.list_prompts(), "prompts") == {"bye"}
        # a client that connects now sees the catalog as it is
        async with connect(server, transport, era) as c:
            assert names(await c.list_tools(), "tools") == {"late"}

    run(main())


def test_a_catalog_change_without_list_changed_declared_is_served_silently():
    async def main():
        server = Server("quiet")

        @server.tool()
        def first() -> str:
            return "1"

        seen = []
        async with Client.connect_in_process(server, era="legacy", on_notification=lambda m, p: seen.append(m)) as c:

            @server.tool()
            def second() -> str:
                return "2"

            assert names(await c.list_tools(), "tools") == {"first", "second"}
            assert (await c.call_tool("second"))["content"][0]["text"] == "2"
        assert not [m for m in seen if m.endswith("list_changed")], seen

    run(main())


STDIO_CHILD = textwrap.dedent(
    """
    import asyncio
    from mcp_sansio.aio import Server

    server = Server("growing", "1.0", resource_subscriptions=True, list_changed=True)
    notes = {"text": "old"}

    @server.resource("notes://todo")
    def todo() -> str:
        return notes["text"]

    @server.tool()
    def grow() -> str:
        @server.tool()
        def grown() -> str:
            return "grown"
        server.remove_tool("grow")
        return "grew"

    @server.tool()
    def write(text: str) -> str:
        notes["text"] = text
        server.notify_resource_updated("notes://todo")
        return "written"

    asyncio.run(server.serve_stdio())
    """
)


@pytest.mark.parametrize("era", ERAS)
def test_changes_reach_a_client_over_stdio(era, tmp_path):
    child = tmp_path / "growing.py"
    child.write_text(STDIO_CHILD)

    async def main():
        async with Client.connect_stdio(sys.executable, [str(child)], era=era) as c:
            async with c.listen(tools_changed=True, resource_uris=["notes://todo"]) as sub:
                assert (await c.call_tool("write", {"text": "new"}))["content"][0]["text"] == "written"
                note = await next_of(sub)
                assert (note.method, note.params["uri"]) == ("notifications/resources/updated", "notes://todo")
                assert (await c.read_resource("notes://todo"))["contents"][0]["text"] == "new"
                assert (await c.call_tool("grow"))["content"][0]["text"] == "grew"
                assert (await next_of(sub)).method == "notifications/tools/list_changed"
                assert names(await c.list_tools(), "tools") == {"write", "grown"}
                assert (await c.call_tool("grown"))["content"][0]["text"] == "grown"

    run(main())


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
