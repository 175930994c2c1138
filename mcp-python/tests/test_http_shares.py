"""How the asyncio HTTP server shares itself out, over real sockets with tiny caps: one
client address cannot take every request in progress (429, then 503 when the server is
full, both with Retry-After), and at max_sessions an idle 2025 session makes room for a new
client while a busy one (an open stream) stays. Clients come from 127.0.0.x addresses."""

import asyncio
import json

from mcp_sansio.aio import Context, Server


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def shares_server():
    server = Server("shares")

    @server.tool(description="echoes")
    def echo(text: str) -> str:
        return text

    @server.tool(description="reports progress, then waits")
    async def slow(ctx: Context, text: str = "") -> str:
        ctx.report_progress(1, 3)
        await asyncio.sleep(3600)
        return "never"

    return server


def modern(rid, tool, progress=False):
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if progress:
        meta["progressToken"] = f"p{rid}"
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": "hi"}, "_meta": meta}}
    headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", tool)]
    return headers, json.dumps(body).encode()


async def send(port, source, method, headers, body, close):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    lines = [f"{method} /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}",
             "Content-Type: application/json", "Accept: application/json, text/event-stream"]
    lines += [f"{n}: {v}" for n, v in headers]
    lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    return reader, writer


def parse_head(data):
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


def dechunk(data):
    out = b""
    while b"\r\n" in data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2:]
    return out


async def request(port, source, method, headers, body=b""):
    reader, writer = await send(port, source, method, headers, body, close=True)
    data = await reader.read()
    writer.close()
    status, hdrs, rest = parse_head(data)
    if hdrs.get("transfer-encoding", "").lower() == "chunked":
        rest = dechunk(rest)
    return status, hdrs, rest


async def hold(port, source, method, headers, body=b""):
    reader, writer = await send(port, source, method, headers, body, close=False)
    data = b""
    while b"\r\n\r\n" not in data:
        more = await reader.read(4096)
        assert more, "closed before the response head"
        data += more
    status, headers, _ = parse_head(data)
    # An event stream stays open (an answer alone would come as JSON).
    assert status == 200 and headers["content-type"].startswith("text/event-stream"), data
    return writer


def messages(body):
    try:
        return [json.loads(body)]
    except ValueError:
        return [json.loads(line[5:]) for line in body.decode().splitlines()
                if line.startswith("data:") and line[5:].strip()]


def answered(response):
    status, _, body = response
    return status == 200 and messages(body)[-1]["result"]["content"][0]["text"] == "hi"


def refused(response, status, rid):
    got, headers, body = response
    assert got == status, body
    assert int(headers["retry-after"]) >= 1
    error = json.loads(body)
    assert error["id"] == rid and isinstance(error["error"]["code"], int), error


async def eventually(attempt):
    for _ in range(200):
        if await attempt():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within 10 s")


def test_one_client_address_cannot_take_every_request_in_progress():
    async def main():
        server = shares_server()
        async with await server.serve_http("127.0.0.1", 0, max_in_flight_per_peer=2, max_in_flight=3) as handle:
            port = handle.port
            a, b, c = "127.0.0.2", "127.0.0.3", "127.0.0.4"

            async def echo(source, rid):
                h, body = modern(rid, "echo")
                return await request(port, source, "POST", h, body)

            async def slow(source, rid):
                h, body = modern(rid, "slow", progress=True)
                return await hold(port, source, "POST", h, body)

            a1 = await slow(a, 1)
            a2 = await slow(a, 2)
            refused(await echo(a, 3), 429, 3)
            assert answered(await echo(b, 4)), "another client is served"
            b1 = await slow(b, 5)
            refused(await echo(c, 6), 503, 6)
            a1.close()
            a2.close()

            async def c_served():
                return answered(await echo(c, 7))

            await eventually(c_served)
            b1.close()

    run(main())


INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}).encode()
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def test_idle_sessions_make_room_for_new_clients_and_busy_ones_stay():
    async def main():
        server = shares_server()
        async with await server.serve_http("127.0.0.1", 0, max_sessions=2) as handle:
            port = handle.port
            local = "127.0.0.1"

            async def initialize():
                return await request(port, local, "POST", [], INIT)

            def on(sid):
                return [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-11-25")]

            async def ping(sid):
                return (await request(port, local, "POST", on(sid), PING))[0]

            async def stream(sid):
                return await hold(port, local, "GET", on(sid) + [("Accept", "text/event-stream")])

            status, hdrs, _ = await initialize()
            assert status == 200
            sid_a = hdrs["mcp-session-id"]
            status, hdrs, _ = await initialize()
            sid_b = hdrs["mcp-session-id"]
            stream_a = await stream(sid_a)
            stream_b = await stream(sid_b)
            status, hdrs, _ = await initialize()
            assert status == 503 and "retry-after" in hdrs
            stream_b.close()
            got = {}

            async def admitted():
                status, hdrs, _ = await initialize()
                got.update(hdrs)
                return status == 200

            await eventually(admitted)
            sid_c = got["mcp-session-id"]
            assert await ping(sid_b) == 404, "the idle session was closed"
            assert await ping(sid_a) == 200, "the busy one lives"
            status, _, _ = await initialize()
            assert status == 200
            assert await ping(sid_c) == 404
            assert await ping(sid_a) == 200
            stream_a.close()

    run(main())


def test_a_node_name_tags_every_session_id_and_a_bad_one_is_refused():
    async def main():
        server = shares_server()
        async with await server.serve_http("127.0.0.1", 0, node="b-2") as handle:
            status, hdrs, _ = await request(handle.port, "127.0.0.1", "POST", [], INIT)
            assert status == 200
            sid = hdrs["mcp-session-id"]
            node, _, rest = sid.partition(".")
            assert node == "b-2" and len(rest) == 32, sid
            on = [("Mcp-Session-Id", sid), ("MCP-Protocol-Version", "2025-11-25")]
            status, _, _ = await request(handle.port, "127.0.0.1", "POST", on, PING)
            assert status == 200
        for bad in ["", "a.b", "x" * 33]:
            try:
                await server.serve_http("127.0.0.1", 0, node=bad)
            except ValueError as e:
                assert "invalid node name" in str(e)
            else:
                raise AssertionError(f"node={bad!r} was accepted")

    run(main())


def test_set_state_key_takes_32_bytes():
    server = shares_server()
    server.set_state_key(b"k" * 32)
    assert server.state_key == b"k" * 32
    try:
        server.set_state_key(b"short")
    except ValueError:
        pass
    else:
        raise AssertionError("a short key was accepted")
