"""The Rust HTTP/1.1 front end of ``Server.serve_http`` (``_core.HttpFront``, the default for
plain HTTP) against the h11 one (``front="h11"``): real sockets on 127.0.0.1, every outcome
waited for within a bound, nothing timed."""

import asyncio
import json
import os
import socket
import sys
import time

import pytest

from mcp_sansio import _core
from mcp_sansio.aio import Context, Server

pytestmark = pytest.mark.skipif(not hasattr(_core, "HttpFront"), reason="no Rust front end here")

FRONTS = ["rust", "h11"]
BOUND = 15.0
MODERN = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"


def call(n):
    """A 2026-wire tools/call of ``echo`` with id ``n`` (no session needed)."""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"},'
        b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}' % (n, n)
    )


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def make_server():
    server = Server("front", "1")
    state = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool(description="Echoes")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Reports progress, then waits")
    async def stream(ctx: Context) -> str:
        ctx.report_progress(1, None, "first")
        state["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    return server, state


def post(port, body, extra=""):
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    ).encode() + body


def response(s, limit=BOUND):
    """(status, head, body) of one whole response (Content-Length or chunked), or None."""
    start = time.monotonic()
    data = b""
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            text = data[:end].decode("latin-1")
            fields = {}
            for line in text.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            rest = data[end + 4 :]
            if fields.get("transfer-encoding") == "chunked":
                body, pos = b"", 0
                while True:
                    eol = rest.find(b"\r\n", pos)
                    if eol < 0:
                        break
                    size = int(rest[pos:eol], 16)
                    if len(rest) < eol + 2 + size + 2:
                        break
                    if size == 0:
                        return int(text[9:12]), text, body
                    body += rest[eol + 2 : eol + 2 + size]
                    pos = eol + 2 + size + 2
            else:
                length = int(fields.get("content-length", "0"))
                if len(rest) >= length:
                    return int(text[9:12]), text, rest[:length]
        left = limit - (time.monotonic() - start)
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            got = s.recv(8192)
        except (socket.timeout, OSError):
            return None
        if not got:
            return None
        data += got


def until(condition):
    """Waits (up to BOUND) for ``condition()``; returns its last value."""
    start = time.monotonic()
    while not condition() and time.monotonic() - start < BOUND:
        time.sleep(0.01)
    return condition()


def front_threads():
    """The names of this process's threads that are a Rust front end's."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return [n for n in names if n == "mcp-http-front"]


def test_plain_http_is_served_by_the_rust_front_unless_h11_is_asked_for():
    async def main():
        server, _ = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            assert handle._rust is not None
        async with await server.serve_http("127.0.0.1", 0, front="h11") as handle:
            assert handle._rust is None
        with pytest.raises(ValueError):
            await server.serve_http("127.0.0.1", 0, front="nginx")

    run(main())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")
def test_aclose_stops_and_joins_the_front_ends_thread():
    async def main():
        before = len(front_threads())
        server, _ = make_server()
        handles = [await server.serve_http("127.0.0.1", 0) for _ in range(2)]
        loop = asyncio.get_running_loop()
        # each thread is up (and named) soon after its start
        assert await loop.run_in_executor(None, until, lambda: len(front_threads()) == before + 2)
        # A connection open at the close, and one mid-request: neither holds the thread.
        idle = socket.create_connection(("127.0.0.1", handles[0].port))
        half = socket.create_connection(("127.0.0.1", handles[0].port))
        half.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        await loop.run_in_executor(None, lambda: time.sleep(0.05))
        for handle in handles:
            await handle.aclose()
            assert handle._rust is None
        # joined: the threads are gone once aclose returns
        assert len(front_threads()) == before
        # and the port is closed
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", handles[0].port), timeout=BOUND).close()
        idle.close()
        half.close()

    run(main())


@pytest.mark.parametrize("front", FRONTS)
def test_a_malformed_request_gets_400_and_the_server_keeps_serving(front):
    async def main():
        server, _ = make_server()
        async with await server.serve_http("127.0.0.1", 0, front=front) as handle:
            port = handle.port

            def check():
                for garbage in (b"NOT HTTP AT ALL\r\n\r\n", b"POST /mcp HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"):
                    s = socket.create_connection(("127.0.0.1", port))
                    s.sendall(garbage)
                    answered = response(s)
                    assert answered is not None and answered[0] == 400, (garbage, answered)
                    s.close()
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(post(port, call(7), MODERN))
                answered = response(s)
                assert answered is not None and answered[0] == 200, answered
                assert json.loads(answered[2])["id"] == 7
                s.close()

            await asyncio.get_running_loop().run_in_executor(None, check)

    run(main())


@pytest.mark.parametrize("front", FRONTS)
def test_a_client_leaving_mid_stream_cancels_the_call(front):
    """The response is an event stream (a progress event went out); the client reads it,
    then closes its socket (a FIN, no reset): the handler is cancelled."""

    async def main():
        server, state = make_server()
        async with await server.serve_http("127.0.0.1", 0, front=front) as handle:
            body = (
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stream","arguments":{},'
                b'"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28",'
                b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
            )
            extra = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: stream\r\n"
            loop = asyncio.get_running_loop()
            sock = socket.create_connection(("127.0.0.1", handle.port))
            sock.sendall(post(handle.port, body, extra))

            def first_event():
                sock.settimeout(BOUND)
                data = b""
                while b"notifications/progress" not in data:
                    got = sock.recv(4096)
                    assert got, data
                    data += got
                return data

            data = await loop.run_in_executor(None, first_event)
            assert b"text/event-stream" in data.split(b"\r\n\r\n")[0], data
            await asyncio.wait_for(state["started"].wait(), BOUND)
            assert not state["cancelled"].is_set()
            sock.close()
            await asyncio.wait_for(state["cancelled"].wait(), BOUND)

    run(main())


def test_many_requests_on_many_connections_each_get_their_own_answer():
    """Requests from several connections at once cross to the loop in batches: every one
    gets the answer to its own id."""

    async def main():
        server, _ = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            port = handle.port

            def check():
                socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
                for round_ in range(5):
                    for i, s in enumerate(socks):
                        n = round_ * 100 + i
                        s.sendall(post(port, call(n), MODERN))
                    for i, s in enumerate(socks):
                        answered = response(s)
                        assert answered is not None and answered[0] == 200, answered
                        answer = json.loads(answered[2])
                        assert answer["id"] == round_ * 100 + i, answer
                        assert answer["result"]["content"][0]["text"] == f"t{round_ * 100 + i}", answer
                for s in socks:
                    s.close()

            await asyncio.get_running_loop().run_in_executor(None, check)

    run(main())


@pytest.mark.parametrize("front", FRONTS)
def test_a_request_with_two_hundred_header_fields_is_served(front):
    """More fields than hyper takes by default (100): the Rust front takes up to 1,024, in a
    head of at most 64 KiB, as h11 takes them."""

    async def main():
        server, _ = make_server()
        async with await server.serve_http("127.0.0.1", 0, front=front) as handle:
            port = handle.port

            def check():
                extra = MODERN + "".join(f"X-Field-{i}: {i}\r\n" for i in range(200))
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(post(port, call(3), extra))
                answered = response(s)
                assert answered is not None and answered[0] == 200, answered
                assert json.loads(answered[2])["id"] == 3
                s.close()

            await asyncio.get_running_loop().run_in_executor(None, check)

    run(main())
