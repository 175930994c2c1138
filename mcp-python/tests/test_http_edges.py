"""Streamable HTTP at its edges: a broken event stream resumed with Last-Event-ID through
the Python client, and flow control in the Python server front end (slow readers)."""

import asyncio
import json
import logging
import socket

import h11
import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


class CuttingProxy:
    """A TCP proxy in front of the server that cuts the first event stream carrying a
    progress notification, and records what the client sent."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.requests = []
        self.cut = asyncio.Event()
        self.server = None

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, creader, cwriter):
        sreader, swriter = await asyncio.open_connection("127.0.0.1", self.upstream_port)

        async def up():
            while data := await creader.read(65536):
                self.requests.append(data)
                swriter.write(data)
                await swriter.drain()
            swriter.close()

        async def down():
            while data := await sreader.read(65536):
                cwriter.write(data)
                await cwriter.drain()
                if not self.cut.is_set() and b"notifications/progress" in data:
                    self.cut.set()
                    return  # the network breaks: both connections drop mid-stream
            cwriter.close()

        tasks = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        cwriter.transport.abort()
        swriter.transport.abort()

    async def aclose(self):
        self.server.close()
        await self.server.wait_closed()


def test_a_broken_event_stream_is_resumed_with_last_event_id():
    async def main():
        server = Server("resumable")
        gate = asyncio.Event()

        @server.tool()
        async def two_steps(ctx: Context) -> str:
            ctx.report_progress(1, 2, "first")
            await gate.wait()
            ctx.report_progress(2, 2, "second")
            return "both steps"

        async with await server.serve_http("127.0.0.1", 0, retry=0.05) as handle:
            proxy = await CuttingProxy(handle.port).start()
            try:
                url = f"http://127.0.0.1:{proxy.port}/mcp"
                async with Client.connect_http(url, era="legacy") as c:
                    seen = []
                    call = asyncio.ensure_future(
                        c.call_tool("two_steps", progress_callback=lambda p, t, m: seen.append(m))
                    )
                    await asyncio.wait_for(proxy.cut.wait(), 10)
                    gate.set()  # the handler finishes while the client is cut off
                    r = await asyncio.wait_for(call, 10)
                    assert r["content"][0]["text"] == "both steps"
                    assert seen == ["first", "second"]
                    resumes = [q for q in proxy.requests if q.startswith(b"GET ") and b"last-event-id" in q.lower()]
                    assert resumes, "the client resumed with a GET carrying Last-Event-ID"
                    # the connection goes on
                    assert (await c.call_tool("two_steps"))["content"][0]["text"] == "both steps"
            finally:
                await proxy.aclose()

    run(main())


def test_a_client_whose_server_restarted_starts_a_new_session_and_its_call_is_answered(caplog):
    """The server process restarts on the same port and forgets the session: its 404 makes
    the client start a new session (the spec's MUST, decided by the core), and the call
    that got it is re-sent and answered, on the same client."""

    def echo_server():
        server = Server("restarting")

        @server.tool()
        async def echo(text: str) -> str:
            return text

        return server

    caplog.set_level(logging.WARNING, logger="mcp_sansio.client")

    async def main():
        first = await echo_server().serve_http("127.0.0.1", 0)
        port = first.port
        async with Client.connect_http(f"http://127.0.0.1:{port}/mcp", era="legacy") as c:
            r = await asyncio.wait_for(c.call_tool("echo", {"text": "before"}), 10)
            assert r["content"][0]["text"] == "before"
            await first.aclose()
            second = await echo_server().serve_http("127.0.0.1", port)
            try:
                r = await asyncio.wait_for(c.call_tool("echo", {"text": "after"}), 20)
                assert r["content"][0]["text"] == "after"
                assert any("session renewed" in rec.getMessage() for rec in caplog.records)
                r = await asyncio.wait_for(c.call_tool("echo", {"text": "again"}), 10)
                assert r["content"][0]["text"] == "again"
            finally:
                await second.aclose()

    run(main())


# --- flow control ------------------------------------------------------------------------------

MODERN_HEADERS = (
    "Content-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
    "MCP-Protocol-Version: 2026-07-28\r\n"
)


def modern_post(port, rid, method, params, extra=""):
    params = dict(params)
    params["_meta"] = dict(
        params.get("_meta", {}),
        **{
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{MODERN_HEADERS}Mcp-Method: {method}\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class WriteBufferProbe:
    """Records the largest write buffer of the server's connections (the bytes written but
    not yet taken by the client) by wrapping ``StreamWriter.write``."""

    def __init__(self, monkeypatch, port):
        self.max = 0
        original = asyncio.StreamWriter.write
        probe = self

        def write(writer, data):
            original(writer, data)
            sock = writer.get_extra_info("sockname")
            if sock and sock[1] == port:
                probe.max = max(probe.max, writer.transport.get_write_buffer_size())

        monkeypatch.setattr(asyncio.StreamWriter, "write", write)


def big_catalog_server():
    server = Server("big")
    for i in range(100):
        def tool() -> str:
            return "ok"

        tool.__name__ = f"tool_{i}"
        server.tool(description="x" * 2000)(tool)
    return server


def test_pipelined_requests_wait_for_the_client_to_read(monkeypatch):
    async def main():
        server = big_catalog_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            probe = WriteBufferProbe(monkeypatch, handle.port)
            n = 150
            reader, writer = await asyncio.open_connection("127.0.0.1", handle.port)
            writer.write(b"".join(modern_post(handle.port, i, "tools/list", {}) for i in range(n)))
            await writer.drain()
            await asyncio.sleep(0.2)  # the client reads nothing for a while
            got, size, leftover = 0, 0, b""
            while got < n:
                # one h11 client per pipelined response; the bytes after it carry over
                conn = h11.Connection(h11.CLIENT)
                conn.send(h11.Request(method="POST", target="/mcp", headers=[("Host", "x"), ("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
                if leftover:
                    conn.receive_data(leftover)
                body = 0
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = await reader.read(1 << 20)
                        assert data, "the server closed the connection"
                        conn.receive_data(data)
                    elif isinstance(event, h11.Response):
                        assert event.status_code == 200
                    elif isinstance(event, h11.Data):
                        body += len(event.data)
                    elif isinstance(event, h11.EndOfMessage):
                        break
                leftover = conn.trailing_data[0]
                size = max(size, body)
                got += 1
            writer.close()
            assert size > 200_000, "each answer is large"
            # Without flow control the server would have written all n answers (tens of MB)
            # into its buffer while the client was not reading.
            assert probe.max < 2 * size + 65536, (probe.max, size)

    run(main())


def test_an_event_stream_whose_reader_falls_behind_is_cut(monkeypatch):
    async def main():
        server = Server("flood")
        state = {"sent": 0, "cancelled": asyncio.Event()}

        @server.tool()
        async def flood(ctx: Context) -> str:
            try:
                for i in range(1, 40_001):
                    ctx.report_progress(i, None, "y" * 1000)
                    state["sent"] = i
                    if i % 100 == 0:
                        await asyncio.sleep(0)
            except asyncio.CancelledError:
                state["cancelled"].set()
                raise
            return "flooded"

        async with await server.serve_http("127.0.0.1", 0, max_buffered=256 * 1024) as handle:
            probe = WriteBufferProbe(monkeypatch, handle.port)
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", handle.port))
            sock.setblocking(False)
            reader, writer = await asyncio.open_connection(sock=sock)
            params = {"name": "flood", "arguments": {}, "_meta": {"progressToken": "p"}}
            writer.write(modern_post(handle.port, 1, "tools/call", params, "Mcp-Name: flood\r\n"))
            await writer.drain()
            # never read: the server cuts the response (2026: that cancels the request)
            await asyncio.wait_for(state["cancelled"].wait(), 30)
            assert state["sent"] < 40_000
            assert probe.max <= 256 * 1024 + 4096, probe.max
            writer.close()

    run(main())
