"""What mcp_sansio logs through the standard ``logging`` module (``mcp_sansio.server``,
``mcp_sansio.http``, ``mcp_sansio.client``): sessions at INFO with their era, version and
peer; each request at DEBUG with its method, name, outcome and duration; refusals at
WARNING, handler failures at ERROR; never an argument value (nor an exception's words,
which may quote one) above DEBUG."""

import asyncio
import logging
import re
import sys
import textwrap

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

SECRET = "hunter2-do-not-log"


def run(coro_fn):
    asyncio.run(asyncio.wait_for(coro_fn(), 60))


def make_server():
    server = Server("logged", "1.0")

    @server.tool()
    def login(password: str) -> str:
        return "welcome"

    @server.tool()
    def boom(password: str) -> str:
        raise ValueError(f"bad password {password}")

    @server.tool()
    async def refuses(ctx: Context) -> str:
        raise ms.McpError(-32001, "not today")

    return server


def records(caplog, name, level=logging.DEBUG):
    return [r for r in caplog.records if r.name == name and r.levelno >= level]


def messages(caplog, name, level=logging.DEBUG):
    return [r.getMessage() for r in records(caplog, name, level)]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_session_and_its_requests_in_the_log(caplog, era):
    caplog.set_level(logging.DEBUG, logger="mcp_sansio")

    async def main():
        server = make_server()
        async with Client.connect_in_process(server, era=era, name="the-client") as c:
            assert (await c.call_tool("login", {"password": SECRET}))["content"][0]["text"] == "welcome"
            assert (await c.call_tool("boom", {"password": SECRET})).get("isError") is True
            with pytest.raises(ms.McpError):
                await c.call_tool("refuses")
            with pytest.raises(ms.McpError):
                await c.call_tool("no-such-tool", {"password": SECRET})
            await c.list_tools()

    run(main)
    info = messages(caplog, "mcp_sansio.server", logging.INFO)
    if era == "legacy":
        assert "session started: legacy era, version 2025-11-25, client 'the-client' 0.1.0" in info, info
    else:
        assert any(m.startswith("session started: 2026 era") for m in info), info
    assert any(m.startswith("session ended: ") for m in info), info

    debug = messages(caplog, "mcp_sansio.server")
    assert any(re.fullmatch(r'tools/call "login" \(request \d+\): answered in \d+\.\d ms', m) for m in debug), debug
    assert any(re.fullmatch(r'tools/call "boom" \(request \d+\): failed \(an isError result\) in \d+\.\d ms', m) for m in debug), debug
    assert "tools/list: answered by the catalog" in debug, debug

    warnings = messages(caplog, "mcp_sansio.server", logging.WARNING)
    assert 'tools/call "no-such-tool": refused (code -32602)' in warnings, warnings
    assert any(re.match(r'tools/call "refuses" \(request \d+\): refused with code -32001', m) for m in warnings), warnings
    errors = [r for r in records(caplog, "mcp_sansio.server", logging.ERROR)]
    assert [re.sub(r"\d+", "N", r.getMessage()) for r in errors] == ['tools/call "boom" (request N) raised ValueError']
    assert all(r.exc_info is None for r in errors)  # the traceback (and its words) at DEBUG

    # no argument value anywhere above DEBUG, and none at all from a call that went well
    above_debug = [r for r in caplog.records if r.name.startswith("mcp_sansio") and r.levelno > logging.DEBUG]
    for r in above_debug:
        assert SECRET not in r.getMessage() and not r.exc_info, r.getMessage()
    text = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mcp_sansio"))
    assert "login" in text and text.count(SECRET) <= 1  # at most the refusal's words, at DEBUG


def test_nothing_is_built_when_the_level_is_off(caplog):
    caplog.set_level(logging.WARNING, logger="mcp_sansio")

    async def main():
        async with Client.connect_in_process(make_server(), era="modern") as c:
            await c.call_tool("login", {"password": SECRET})
            await c.list_tools()

    run(main)
    assert messages(caplog, "mcp_sansio.server") == []


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_http_exchanges_and_refusals(caplog, era):
    caplog.set_level(logging.DEBUG, logger="mcp_sansio")

    async def main():
        async with await make_server().serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era) as c:
                await c.call_tool("login", {"password": SECRET})
            # a request from a host name the endpoint does not serve (DNS rebinding)
            reader, writer = await asyncio.open_connection("127.0.0.1", handle.port)
            body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
            writer.write(
                b"POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            assert head.split(b" ")[1] in (b"403", b"421"), head
            writer.close()
            await writer.wait_closed()

    run(main)
    http = messages(caplog, "mcp_sansio.http")
    assert any(m.startswith("POST opened exchange") for m in http), http
    warnings = messages(caplog, "mcp_sansio.http", logging.WARNING)
    assert any(re.match(r"POST refused with HTTP 4\d\d: ", m) for m in warnings), warnings
    if era == "legacy":
        assert any("session started: legacy era" in m for m in messages(caplog, "mcp_sansio.server", logging.INFO))
    for r in caplog.records:
        if r.name.startswith("mcp_sansio") and r.levelno > logging.DEBUG:
            assert SECRET not in r.getMessage()


def test_the_client_logs_its_connection(caplog):
    caplog.set_level(logging.DEBUG, logger="mcp_sansio")

    async def main():
        async with Client.connect_in_process(make_server(), era="legacy") as c:
            await c.call_tool("login", {"password": SECRET})

    run(main)
    info = messages(caplog, "mcp_sansio.client", logging.INFO)
    assert "connected to 'logged' 1.0: legacy era, version 2025-11-25" in info, info
    assert any(m.startswith("connection closed: ") for m in info), info


FAILING_CHILD = textwrap.dedent(
    """
    import asyncio, logging, sys
    import mcp_sansio as ms
    from mcp_sansio.aio import Server

    if sys.argv[1:] == ["configured"]:
        logging.basicConfig(level=logging.DEBUG, format="%(name)s %(levelname)s %(message)s")

    server = Server("failing")

    @server.tool()
    def boom() -> str:
        raise ValueError("kaboom")

    @server.tool()
    def refuses() -> str:
        raise ms.McpError(-32001, "not today")

    @server.resource("test://broken")
    def broken() -> str:
        raise RuntimeError("unreadable")

    asyncio.run(server.serve_stdio())
    """
)


@pytest.mark.parametrize("configured", [False, True], ids=["unconfigured", "configured"])
def test_a_server_is_quiet_on_stderr_unless_logging_is_configured(tmp_path, configured):
    """Errors inside a stdio server reach the client (an isError result, JSON-RPC errors)
    and print nothing on the server's stderr when the application did not configure
    logging (no last-resort handler output); with logging configured they are logged."""
    child = tmp_path / "failing_server.py"
    child.write_text(FAILING_CHILD)
    errors = tmp_path / "stderr.txt"
    args = ["-W", "error", str(child)] + (["configured"] if configured else [])

    async def main():
        with open(errors, "wb") as err:
            async with Client.connect_stdio(sys.executable, args, era="legacy", stderr=err) as c:
                r = await c.call_tool("boom")
                assert r["isError"] is True and r["content"][0]["text"] == "kaboom", r
                with pytest.raises(ms.McpError) as refused:
                    await c.call_tool("refuses")
                assert refused.value.code == -32001
                with pytest.raises(ms.McpError) as failed:
                    await c.read_resource("test://broken")
                assert failed.value.code == -32603 and "unreadable" in failed.value.message
                with pytest.raises(ms.McpError) as unknown:
                    await c.call_tool("no-such-tool")
                assert unknown.value.code == -32602

    run(main)
    text = errors.read_text()
    if not configured:
        assert text == "", text
    else:
        lines = text.splitlines()
        assert 'mcp_sansio.server ERROR tools/call "boom" (request 1) raised ValueError' in lines, text
        assert any(re.match(r'mcp_sansio.server WARNING tools/call "refuses" \(request \d+\): refused with code -32001', l) for l in lines), text
        assert any(re.match(r'mcp_sansio.server ERROR resources/read "test://broken" \(request \d+\) raised RuntimeError', l) for l in lines), text
        assert 'mcp_sansio.server WARNING tools/call "no-such-tool": refused (code -32602)' in lines, text
        assert any(l.startswith("mcp_sansio.server INFO session started: legacy era") for l in lines), text


def test_the_package_logger_has_a_null_handler():
    handlers = logging.getLogger("mcp_sansio").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers), handlers
