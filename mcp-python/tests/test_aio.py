"""The asyncio drivers end to end: in process, and a child process over stdio."""

import asyncio
import sys
import threading

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

from conftest import EVERYTHING

ERAS = ["legacy", "modern"]


def make_server():
    server = Server("test-server", "2.0", instructions="be nice")
    state = {"cancelled": asyncio.Event(), "thread": None}

    @server.tool(description="Adds two numbers")
    def add(a: float, b: float = 1.0) -> float:
        state["thread"] = threading.current_thread()
        return a + b

    @server.tool()
    async def boom() -> str:
        raise RuntimeError("it broke")

    @server.tool()
    async def refuse() -> str:
        raise ms.McpError(-32001, "not today", {"why": "tired"})

    @server.tool()
    async def structured(n: int) -> dict:
        return {"double": n * 2}

    @server.tool()
    async def wait(ctx: Context) -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            ctx.report_progress(i, n, f"{i}/{n}")
            await asyncio.sleep(0)
        ctx.info("finished")
        return "ok"

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hi {answer['content']['name']}" if answer["action"] == "accept" else answer["action"]

    @server.resource("mem://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello"

    @server.resource("mem://blob")
    def blob() -> bytes:
        return b"\x00\x01"

    @server.resource("mem://items/{id}")
    def item(id: str, uri: str) -> str:
        return f"{uri} is item {id}"

    @server.prompt(description="Greets")
    def greet(who: str, mood: str = "happy") -> str:
        return f"Greet {who}, {mood}"

    @server.completion()
    def complete(ref, argument, context):
        return [w for w in ["apple", "apricot", "banana"] if w.startswith(argument["value"])]

    return server, state


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.mark.parametrize("era", ERAS)
def test_in_process_everything(era):
    async def main():
        server, state = make_server()
        notes = []
        async with Client.connect_in_process(server, era=era, on_notification=lambda m, p: notes.append((m, p))) as c:
            assert c.server_info["name"] == "test-server"
            assert c.instructions == "be nice"
            tools = await c.list_tools()
            assert {t["name"] for t in tools["tools"]} >= {"add", "boom", "wait"}
            add = next(t for t in tools["tools"] if t["name"] == "add")
            assert add["inputSchema"]["required"] == ["a"]
            assert add["description"] == "Adds two numbers"
            r = await c.call_tool("add", {"a": 2, "b": 3.5})
            assert r["content"] == [{"type": "text", "text": "5.5"}]
            assert state["thread"] is not threading.main_thread(), "sync handlers run in a worker thread"
            r = await c.call_tool("boom")
            assert r["isError"] and "it broke" in r["content"][0]["text"]
            with pytest.raises(ms.McpError) as e:
                await c.call_tool("refuse")
            assert (e.value.code, e.value.data) == (-32001, {"why": "tired"})
            r = await c.call_tool("structured", {"n": 21})
            assert r["structuredContent"] == {"double": 42}
            seen = []
            r = await c.call_tool("steps", {"n": 3}, progress_callback=lambda p, t, m: seen.append((p, t, m)))
            assert seen == [(1, 3, "1/3"), (2, 3, "2/3"), (3, 3, "3/3")]
            r = await c.read_resource("mem://hello")
            assert r["contents"][0]["text"] == "hello" and r["contents"][0]["mimeType"] == "text/plain"
            r = await c.read_resource("mem://blob")
            assert r["contents"][0]["blob"] == "AAE="
            r = await c.read_resource("mem://items/7")
            assert r["contents"][0]["text"] == "mem://items/7 is item 7"
            r = await c.get_prompt("greet", {"who": "Ada"})
            assert r["messages"][0]["content"]["text"] == "Greet Ada, happy"
            r = await c.complete({"type": "ref/prompt", "name": "greet"}, {"name": "who", "value": "ap"})
            assert r["completion"]["values"] == ["apple", "apricot"]
            with pytest.raises(ms.McpError):
                await c.read_resource("mem://nothing")
            if era == "legacy":
                await c.set_logging_level("debug")
                await c.call_tool("steps", {"n": 1})
                await asyncio.sleep(0)
                assert any(m == "notifications/message" and p["data"] == "finished" for m, p in notes)

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_cancelling_a_call_cancels_the_handler(era):
    async def main():
        server, state = make_server()
        async with Client.connect_in_process(server, era=era) as c:
            call = asyncio.ensure_future(c.call_tool("wait"))
            await asyncio.sleep(0.05)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await asyncio.wait_for(state["cancelled"].wait(), 5)
            # the connection goes on
            assert (await c.call_tool("add", {"a": 1}))["content"][0]["text"] == "2.0"

    run(main())


def test_call_timeout_cancels_the_handler():
    async def main():
        server, state = make_server()
        async with Client.connect_in_process(server, era="legacy") as c:
            with pytest.raises(ms.RequestTimeout):
                await c.call_tool("wait", timeout=0.1)
            await asyncio.wait_for(state["cancelled"].wait(), 5)

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_elicitation_both_eras(era):
    async def main():
        server, _ = make_server()
        asked = []

        async def on_elicit(params):
            asked.append(params["message"])
            return {"action": "accept", "content": {"name": "Ada"}}

        async with Client.connect_in_process(server, era=era, on_elicit=on_elicit) as c:
            r = await c.call_tool("ask")
            assert r["content"][0]["text"] == "hi Ada"
            assert asked == ["Name?"]
        async with Client.connect_in_process(server, era=era) as c:
            with pytest.raises(ms.McpError) as e:
                await c.call_tool("ask")
            assert e.value.code == -32021, "no elicitation capability"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_stdio_child_process(era):
    async def main():
        async with Client.connect_stdio(sys.executable, [str(EVERYTHING)], era=era) as c:
            assert c.server_info["name"] == "mcp-sansio-everything"
            r = await c.call_tool("add", {"a": 2, "b": 3.5})
            assert r["content"][0]["text"] == "5.5"
            seen = []
            r = await c.call_tool("slow", {"steps": 2}, progress_callback=lambda p, t, m: seen.append(p))
            assert r["content"][0]["text"] == "done after 2 steps" and seen == [1, 2]
            r = await c.complete({"type": "ref/prompt", "name": "greeting"}, {"name": "name", "value": "a"})
            assert r["completion"]["values"] == ["Ada", "Alan"]

    run(main())


def test_child_that_dies_fails_pending_calls_cleanly():
    async def main():
        code = "import sys; sys.stdin.readline(); sys.exit(0)"  # reads initialize, then dies
        with pytest.raises(ms.ConnectionClosed):
            async with Client.connect_stdio(sys.executable, ["-c", code], era="legacy"):
                pass

        async with Client.connect_stdio(sys.executable, [str(EVERYTHING)], era="legacy") as c:
            call = asyncio.ensure_future(c.call_tool("forever"))
            await asyncio.sleep(0.1)
            c._closer and await c._closer()  # the server goes away mid-call
            with pytest.raises(ms.ConnectionClosed):
                await asyncio.wait_for(call, 10)
            with pytest.raises(ms.ConnectionClosed):
                await c.call_tool("add", {"a": 1, "b": 2})

    run(main())


def test_sync_client():
    from mcp_sansio.sync import Client as SyncClient

    with SyncClient.connect_stdio(sys.executable, [str(EVERYTHING)], era="modern") as c:
        assert c.protocol_version == "2026-07-28"
        assert c.call_tool("echo", {"text": "sync"})["content"][0]["text"] == "sync"
        assert [t["name"] for t in c.list_tools()["tools"]][:3] == ["add", "admin_echo", "ask_name"]
        with pytest.raises(ms.RequestTimeout):
            c.call_tool("forever", timeout=0.2)
        assert c.read_resource("test://static-text")["contents"][0]["text"] == "Hello from a static resource"
    server, _ = make_server()
    with SyncClient.connect_in_process(server, era="legacy") as c:
        assert c.call_tool("add", {"a": 1, "b": 1})["content"][0]["text"] == "2"


@pytest.mark.parametrize("era", ERAS)
def test_http_server_and_client(era):
    async def main():
        server, state = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era) as c:
                assert c.server_info["name"] == "test-server"
                r = await c.call_tool("add", {"a": 2, "b": 3.5})
                assert r["content"][0]["text"] == "5.5"
                seen = []
                await c.call_tool("steps", {"n": 2}, progress_callback=lambda p, t, m: seen.append(p))
                assert seen == [1, 2]
                r = await c.read_resource("mem://items/9")
                assert r["contents"][0]["text"] == "mem://items/9 is item 9"
                call = asyncio.ensure_future(c.call_tool("wait"))
                await asyncio.sleep(0.1)
                call.cancel()
                await asyncio.wait_for(state["cancelled"].wait(), 5)
                assert (await c.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_a_sync_handler_asks_the_user_from_its_thread(era):
    async def main():
        server = Server("asker")
        runs = []

        @server.tool()
        def ask_sync(ctx: Context) -> str:
            runs.append(threading.current_thread() is not threading.main_thread())
            answer = ctx.elicit_blocking("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
            return f"hi {answer['content']['name']}" if answer["action"] == "accept" else answer["action"]

        @server.tool()
        async def wrong(ctx: Context) -> str:
            return ctx.elicit_blocking("Name?", {"type": "object"})  # not from the loop thread

        async def on_elicit(params):
            return {"action": "accept", "content": {"name": "Ada"}}

        async with Client.connect_in_process(server, era=era, on_elicit=on_elicit) as c:
            r = await c.call_tool("ask_sync")
            assert r["content"][0]["text"] == "hi Ada"
            # legacy: one run that waited; 2026: the run stopped at the question, the retry ran again
            assert runs == ([True] if era == "legacy" else [True, True])
            r = await c.call_tool("wrong")
            assert r["isError"] and "sync handlers" in r["content"][0]["text"]
        async with Client.connect_in_process(server, era=era) as c:
            with pytest.raises(ms.McpError) as e:
                await c.call_tool("ask_sync")
            assert e.value.code == -32021, "no elicitation capability"

    run(main())


def test_a_paused_transport_leaves_output_in_the_bounded_session():
    async def main():
        from mcp_sansio.aio import ServerConnection

        server = Server("flood")
        done = asyncio.Event()

        @server.tool()
        async def flood(ctx: Context) -> str:
            for i in range(1, 30_001):  # 33 MB of progress
                ctx.report_progress(i, None, "z" * 1000)  # past the session's queue limit: dropped
                if i % 500 == 0:
                    await asyncio.sleep(0)
            done.set()
            return "flooded"

        conn = ServerConnection(server)
        written = []
        conn.set_writer(written.append)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "flood", "arguments": {}, "_meta": {"progressToken": "p"}}}
        import json as _json

        conn.data_received((_json.dumps(init) + "\n").encode())
        conn.data_received(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        written.clear()
        conn.pause_writing()  # as the pipe transport does when the reader lags
        conn.data_received((_json.dumps(call) + "\n").encode())
        await asyncio.wait_for(done.wait(), 30)
        await asyncio.sleep(0)
        assert written == [], "nothing is written while the transport is paused"
        conn.resume_writing()
        out = b"".join(written)
        assert b'"result"' in out and b"flooded" in out
        # the session's queue is bounded (16 MiB by default): the rest was never queued
        assert len(out) < 17 * 1024 * 1024, len(out)
        conn.feed_eof()

    run(main())


def test_reports_from_a_worker_thread_wait_at_most_max_waiting_reports():
    """A sync handler's progress and log reports wait for the event loop; past
    MAX_WAITING_REPORTS of one run a report is dropped, and each one the loop ran frees its
    place."""
    from mcp_sansio._dispatch import MAX_WAITING_REPORTS, Context

    class Loopless:
        """A dispatcher whose loop runs on no thread of this test: every call waits."""

        loop_thread = -1

        def __init__(self):
            self.waiting = []

        def call(self, command):
            self.waiting.append(command)

    class Session:
        def __init__(self):
            self.reports = []

        def report_progress(self, request_id, progress, total, message):
            self.reports.append(("progress", progress))

        def log(self, request_id, level, data, logger):
            self.reports.append(("log", data))

    d = Loopless()
    ctx = Context(d, 7)
    for i in range(MAX_WAITING_REPORTS + 100):
        ctx.report_progress(i)
    ctx.info("dropped too")
    assert len(d.waiting) == MAX_WAITING_REPORTS
    session = Session()
    d.waiting.pop(0)(session)  # the loop runs one: its place is free again
    ctx.info("kept")
    assert len(d.waiting) == MAX_WAITING_REPORTS
    for command in d.waiting:
        command(session)
    assert session.reports[0] == ("progress", 0.0)
    assert session.reports[-1] == ("log", "kept")
    assert ("log", "dropped too") not in session.reports


def test_a_missing_program_and_a_server_that_exits_at_once_say_so():
    async def main():
        with pytest.raises(ms.errors.ConnectError) as raised:
            async with Client.connect_stdio("/nonexistent/mcp-server", era="legacy"):
                pass
        assert str(raised.value) == (
            "could not start the server `/nonexistent/mcp-server`: No such file or directory (os error 2)"
        )
        assert isinstance(raised.value, OSError)
        with pytest.raises(ms.errors.ConnectError) as raised:
            async with Client.connect_stdio("sh", ["-c", "exit 3"], era="legacy"):
                pass
        assert str(raised.value) == "the server `sh` exited (exit status: 3) before the handshake was done"

    run(main())
