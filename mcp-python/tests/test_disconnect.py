"""Disconnect hygiene: a peer that goes away mid-call ends everything cleanly, on both
sides. Every test fails on any warning (``-W error`` for these tests), on any call of the
event loop's exception handler ("Task exception was never retrieved", errors in
callbacks), and on any hang (``asyncio.wait_for``)."""

import asyncio
import contextlib
import gc
import os
import signal
import socket
import sys
import textwrap

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

pytestmark = pytest.mark.filterwarnings("error")

ERAS = ["legacy", "modern"]

CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from mcp_sansio.aio import Context, Server

    server = Server("mortal")

    @server.tool()
    def pid() -> int:
        return os.getpid()

    @server.tool()
    async def forever(ctx: Context) -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            print("handler cancelled", file=sys.stderr, flush=True)
            raise
        return "never"

    asyncio.run(server.serve_stdio())
    """
)


def run_clean(coro_fn):
    """Runs ``coro_fn()`` on a fresh loop whose exception handler must stay unused."""
    calls = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: calls.append(context))
        await asyncio.wait_for(coro_fn(), 60)
        gc.collect()  # a task whose exception nobody retrieved reports it when collected
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    assert calls == [], calls


@pytest.fixture
def child(tmp_path):
    script = tmp_path / "mortal_server.py"
    script.write_text(CHILD)
    return script


async def wait_for_file(path, text):
    for _ in range(500):
        if path.exists() and text in path.read_text():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{text!r} never appeared in {path}: {path.read_text() if path.exists() else ''!r}")


@pytest.mark.parametrize("era", ERAS)
def test_a_server_process_killed_mid_call_fails_the_call_with_connection_closed(era, child):
    async def main():
        async with Client.connect_stdio(sys.executable, ["-W", "error", str(child)], era=era) as c:
            pid = int((await c.call_tool("pid"))["content"][0]["text"])
            call = asyncio.ensure_future(c.call_tool("forever"))
            listening = asyncio.ensure_future(c.listen(tools_changed=True).__aenter__()) if era == "modern" else None
            await asyncio.sleep(0.1)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(ms.ConnectionClosed):
                await asyncio.wait_for(call, 10)
            if listening is not None:
                with contextlib.suppress(ms.ConnectionClosed, ms.McpError):
                    await asyncio.wait_for(listening, 10)
            with pytest.raises(ms.ConnectionClosed):
                await c.call_tool("pid")

    run_clean(main)


@pytest.mark.parametrize("era", ERAS)
def test_a_stdio_server_whose_client_leaves_mid_call_cancels_the_handler_quietly(era, child, tmp_path):
    async def main():
        errors = tmp_path / "stderr.txt"
        with open(errors, "wb") as err:
            async with Client.connect_stdio(sys.executable, ["-W", "error", str(child)], era=era, stderr=err) as c:
                call = asyncio.ensure_future(c.call_tool("forever"))
                await asyncio.sleep(0.2)
            # leaving the block closed the child's stdin and waited for it to exit
            with pytest.raises(ms.ConnectionClosed):
                await call
        # the handler was cancelled, and nothing else was printed: no traceback, no warning
        assert errors.read_text() == "handler cancelled\n"

    run_clean(main)


def mortal_server():
    server = Server("mortal")
    state = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool()
    async def forever(ctx: Context) -> str:
        state["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server, state


@pytest.mark.parametrize("era", ERAS)
def test_an_in_process_client_leaving_mid_call_cancels_the_handler(era):
    async def main():
        server, state = mortal_server()
        c = await Client.connect_in_process(server, era=era)
        call = asyncio.ensure_future(c.call_tool("forever"))
        await asyncio.wait_for(state["started"].wait(), 10)
        await c.aclose()
        await asyncio.wait_for(state["cancelled"].wait(), 10)
        with pytest.raises(ms.ConnectionClosed):
            await call

    run_clean(main)


@pytest.mark.parametrize("era", ERAS)
def test_an_http_client_leaving_mid_call_cancels_the_handler(era):
    async def main():
        server, state = mortal_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            c = await Client.connect_http(handle.url, era=era)
            call = asyncio.ensure_future(c.call_tool("forever"))
            await asyncio.wait_for(state["started"].wait(), 10)
            await c.aclose()  # legacy: DELETE ends the session; 2026: the response closes
            await asyncio.wait_for(state["cancelled"].wait(), 10)
            with pytest.raises(ms.ConnectionClosed):
                await call

    run_clean(main)


def test_an_http_connection_dropped_mid_call_cancels_the_handler():
    async def main():
        server, state = mortal_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            body = (
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever","arguments":{},'
                b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
                b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
            )
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                f"Mcp-Method: tools/call\r\nMcp-Name: forever\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            sock = socket.create_connection(("127.0.0.1", handle.port))
            sock.sendall(head + body)
            await asyncio.wait_for(state["started"].wait(), 10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.close()  # a reset, as when the client process dies
            await asyncio.wait_for(state["cancelled"].wait(), 10)

    run_clean(main)


@pytest.mark.parametrize("era", ERAS)
def test_an_http_server_that_goes_away_mid_call_fails_the_call(era):
    async def main():
        server, state = mortal_server()
        handle = await server.serve_http("127.0.0.1", 0, retry=0.05)
        async with Client.connect_http(handle.url, era=era) as c:
            call = asyncio.ensure_future(c.call_tool("forever"))
            await asyncio.wait_for(state["started"].wait(), 10)
            await handle.aclose()
            # legacy: the client tries to resume the stream, the server is gone; either way
            # the call ends with an error, not a hang
            with pytest.raises(ms.RemoteProtocolError):
                await asyncio.wait_for(call, 10)

    run_clean(main)


def test_a_stdio_server_writes_every_answer_it_owes_before_it_exits_on_eof():
    """Its stdin closes while calls are in flight: the answers still come, then it exits."""
    import json
    import subprocess

    server = os.path.join(os.path.dirname(__file__), "everything_server.py")
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "eof-test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "slow", "arguments": {"steps": 1}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "last"}}},
    ]
    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    for round in range(5):
        # communicate() writes everything, closes stdin (EOF mid-call) and reads to the end
        done = subprocess.run([sys.executable, server], input=payload, capture_output=True, timeout=30)
        answered = sorted(
            message["id"]
            for message in map(json.loads, done.stdout.decode().splitlines())
            if "id" in message and "result" in message
        )
        assert answered == [0, 1, 2], (round, done.stdout, done.stderr)
        assert done.returncode == 0, (round, done.stderr)


LAST_WORDS = textwrap.dedent(
    """
    import asyncio, os
    from mcp_sansio.aio import Server

    server = Server("last-words")

    @server.tool()
    async def bye() -> str:
        # The process ends in the loop's next turn: right after this answer is written.
        asyncio.get_running_loop().call_soon(os._exit, 0)
        return "bye"

    asyncio.run(server.serve_stdio())
    """
)


@pytest.mark.parametrize("era", ERAS)
def test_an_answer_a_stdio_server_writes_as_it_exits_reaches_the_client(era, tmp_path):
    """The child's answer and its exit arrive together: the client reads the answer before
    it takes the exit for the end of the connection (every time; the exit must not overtake
    the bytes already in the pipe)."""
    script = tmp_path / "last_words.py"
    script.write_text(LAST_WORDS)

    async def main():
        for _ in range(10):
            async with Client.connect_stdio(sys.executable, ["-W", "error", str(script)], era=era) as c:
                assert (await c.call_tool("bye")).content[0].text == "bye"
                with pytest.raises(ms.ConnectionClosed):
                    await asyncio.wait_for(c.call_tool("bye"), 10)

    run_clean(main)
