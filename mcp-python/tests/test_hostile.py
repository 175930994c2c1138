"""The asyncio HTTP server against hostile clients (issue 17, items 1, 3, 4 and 7), over
real sockets on 127.0.0.1, the same checks as the Rust bindings' hostile-client kit
(tests/binding-suite/support/hostile.rs): small deadlines configured, each outcome waited
for within a generous bound, nothing timed."""

import asyncio
import json
import os
import socket
import sys
import time

import pytest

from mcp_sansio.aio import Context, Server

BOUND = 15.0
EDGE = dict(header_read_timeout=0.3, body_read_timeout=0.3, keep_alive_timeout=0.3)
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def make_server():
    server = Server("hostile", "1")

    @server.tool(description="Echoes")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Waits")
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(3600)
        return "never"

    return server


def head(port, extra=b"", length=len(PING)):
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n"
    ).encode() + extra + b"\r\n"


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def until_closed(s):
    """(closed, bytes): reads until the server closes (or resets) or BOUND passes."""
    start = time.monotonic()
    data = b""
    s.settimeout(0.1)
    while time.monotonic() - start < BOUND:
        try:
            got = s.recv(4096)
        except socket.timeout:
            continue
        except OSError:
            return True, data
        if not got:
            return True, data
        data += got
    return False, data


def response(s, limit):
    """(status, head, body) of one whole response, or None if closed or `limit` passed."""
    start = time.monotonic()
    data = b""
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            text = data[:end].decode("latin-1")
            length = 0
            for line in text.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(data) >= end + 4 + length:
                return int(text[9:12]), text, data[end + 4 : end + 4 + length]
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


async def against(check, **edge):
    server = make_server()
    async with await server.serve_http("127.0.0.1", 0, **{**EDGE, **edge}) as handle:
        await asyncio.get_running_loop().run_in_executor(None, check, handle.port)


def test_an_unfinished_head_gets_408_and_the_connection_closes():
    def check(port):
        s = connect(port)
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        closed, data = until_closed(s)
        assert closed, data
        assert data.startswith(b"HTTP/1.1 408"), data

    run(against(check))


def test_a_head_sent_a_byte_at_a_time_is_cut_off():
    def check(port):
        s = connect(port)
        start = time.monotonic()
        for byte in (head(port) * 100)[:10_000]:
            try:
                s.sendall(bytes([byte]))
            except OSError:
                return
            s.settimeout(0.04)
            try:
                s.recv(256)
                return  # closed or answered before the head was whole
            except socket.timeout:
                pass
            except OSError:
                return
            assert time.monotonic() - start < BOUND, "a byte-a-time head held the connection"
        pytest.fail("the server read 10,000 bytes of an unfinished head")

    run(against(check))


def test_a_body_that_never_ends_gets_408_and_the_connection_closes():
    def check(port):
        s = connect(port)
        s.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            '5\r\n{"jso\r\n'.encode()
        )
        closed, data = until_closed(s)
        assert closed, data
        assert data.startswith(b"HTTP/1.1 408"), data

    run(against(check))


def test_an_idle_keep_alive_connection_is_closed():
    def check(port):
        s = connect(port)
        s.sendall(head(port) + PING)
        answered = response(s, BOUND)
        assert answered is not None
        assert "connection: close" not in answered[1].lower(), answered[1]
        assert until_closed(s) == (True, b"")

    run(against(check))


def test_beyond_max_connections_a_client_waits_until_the_deadlines_free_a_slot():
    def check(port):
        hostile = [connect(port), connect(port)]
        time.sleep(0.1)
        third = connect(port)
        third.sendall(head(port) + PING)
        assert response(third, 0.3) is None, "not served while the slots are held"
        assert response(third, BOUND) is not None, "served once the deadline freed a slot"
        for s in hostile:
            assert until_closed(s)[0]
        s = connect(port)
        s.sendall(head(port) + PING)
        assert response(s, BOUND) is not None

    run(against(check, max_connections=2, header_read_timeout=3.0))


def _bad_request_message(answered):
    assert answered is not None
    status, text, body = answered
    assert status == 400, text
    error = json.loads(body)["error"]
    assert error["code"] == -32600, error
    return error["message"]


def test_two_host_fields_and_a_value_that_is_not_utf8_get_400():
    def check(port):
        s = connect(port)
        s.sendall(head(port, b"Host: 127.0.0.1\r\n") + PING)
        assert "Host" in _bad_request_message(response(s, BOUND))
        s = connect(port)
        s.sendall(head(port, b"X-Note: caf\xe9\r\n") + PING)
        message = _bad_request_message(response(s, BOUND))
        assert "x-note" in message.lower() and "UTF-8" in message, message

    run(against(check))


def test_a_request_without_host_gets_400():
    def check(port):
        s = connect(port)
        s.sendall(
            b"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\n"
            + f"Content-Length: {len(PING)}\r\n\r\n".encode()
            + PING
        )
        assert "Host" in _bad_request_message(response(s, BOUND))

    run(against(check))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_accepted_sockets_have_tcp_nodelay():
    async def main():
        server = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            loop = asyncio.get_running_loop()

            def check(port):
                clients = [connect(port) for _ in range(3)]
                for c in clients:
                    c.sendall(head(port) + PING)
                    assert response(c, BOUND) is not None
                seen = 0
                for name in os.listdir("/proc/self/fd"):
                    fd = int(name)
                    try:
                        if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                            continue
                        sock = socket.socket(fileno=fd)
                    except OSError:
                        continue
                    try:
                        if sock.type != socket.SOCK_STREAM or sock.family != socket.AF_INET:
                            continue
                        try:
                            local, peer = sock.getsockname(), sock.getpeername()
                        except OSError:
                            continue
                        if local[1] == port:  # accepted by the server
                            seen += 1
                            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY), (local, peer)
                    finally:
                        sock.detach()
                assert seen >= 3, seen

            await loop.run_in_executor(None, check, handle.port)

    run(main())


_SERVER = """
import asyncio, sys
from mcp_sansio.aio import Server
server = Server("limit", "1")
async def main():
    handle = await server.serve_http("127.0.0.1", 0)
    print(handle.port, flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_at_the_descriptor_limit_the_server_backs_off_and_serves_again():
    import subprocess

    child = subprocess.Popen(
        ["sh", "-c", 'ulimit -n 64 && exec "$0" -c "$1"', sys.executable, _SERVER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = int(child.stdout.readline())

        def cpu():
            fields = open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])

        flood = [connect(port) for _ in range(100)]
        late = connect(port)
        late.sendall(head(port) + PING)
        time.sleep(0.3)
        before = cpu()
        time.sleep(1)
        spent = cpu() - before
        for s in flood:
            s.close()
        served = response(late, BOUND)
    finally:
        child.kill()
        child.wait()
    assert spent < 50, f"at the descriptor limit the accept loop spins: {spent} ticks in a second"
    assert served is not None, "the client at the limit is served once descriptors free"


def _nodelay_sockets(port, side):
    """(count, all set): this process's IPv4 TCP sockets whose local (side="server") or peer
    (side="client") port is `port`, and whether each has TCP_NODELAY."""
    seen, ok = 0, True
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=int(name))
        except OSError:
            continue
        try:
            if sock.type != socket.SOCK_STREAM or sock.family != socket.AF_INET:
                continue
            try:
                local, peer = sock.getsockname(), sock.getpeername()
            except OSError:
                continue
            if (local if side == "server" else peer)[1] == port:
                seen += 1
                ok = ok and bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        finally:
            sock.detach()
    return seen, ok


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_the_python_client_sockets_have_tcp_nodelay():
    from mcp_sansio.aio import Client

    async def main():
        server = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            for era in ("legacy", "modern"):
                async with Client.connect_http(handle.url, era=era) as client:
                    await client.call_tool("echo", {"text": "hi"})
                    call = asyncio.ensure_future(client.call_tool("slow", {}))
                    await asyncio.sleep(0.2)  # the slow call's request is open
                    seen, ok = _nodelay_sockets(handle.port, "client")
                    assert seen >= 1 and ok, (era, seen, ok)
                    call.cancel()
                    await asyncio.gather(call, return_exceptions=True)

    run(main())
