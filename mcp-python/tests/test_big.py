"""Big answers (issue #18, item 5): a 20 MB tool result and a 10 MB resource read succeed
with the default limits over stdio and HTTP; an answer over the client's
``max_message_size`` fails its call at once, naming its size and the limit."""

import asyncio
import sys
import textwrap
import time

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Server

ERAS = ["legacy", "modern"]
TOOL_BYTES = 20_000_000
RESOURCE_BYTES = 10_000_000

SERVER = textwrap.dedent(
    f"""
    import asyncio
    from mcp_sansio.aio import Server

    server = Server("big", "1.0")

    @server.tool()
    async def big() -> str:
        return "x" * {TOOL_BYTES}

    @server.resource("file:///big.txt", mime_type="text/plain")
    async def big_file() -> str:
        return "y" * {RESOURCE_BYTES}

    asyncio.run(server.serve_stdio())
    """
)


def make_server() -> Server:
    server = Server("big", "1.0")

    @server.tool()
    async def big() -> str:
        return "x" * TOOL_BYTES

    @server.resource("file:///big.txt", mime_type="text/plain")
    async def big_file() -> str:
        return "y" * RESOURCE_BYTES

    return server


async def both_arrive(c: Client) -> None:
    r = await c.call_tool("big", {})
    assert len(r["content"][0]["text"]) == TOOL_BYTES
    r = await c.read_resource("file:///big.txt")
    assert len(r["contents"][0]["text"]) == RESOURCE_BYTES


async def fails_at_once(c: Client, *, sized: bool) -> None:
    started = time.monotonic()
    with pytest.raises(ms.InvalidResult) as raised:
        await c.call_tool("big", {})
    text = str(raised.value)
    assert "over the message limit of 1000000 bytes" in text, text
    if sized:
        assert "the answer is " in text and " bytes, over" in text, text
    assert time.monotonic() - started < 20, "at once, not at the 60 s timeout"
    # The session goes on.
    assert [t["name"] for t in (await c.list_tools())["tools"]] == ["big"]


@pytest.mark.parametrize("era", ERAS)
def test_big_answers_over_stdio(era):
    async def main():
        async with Client.connect_stdio(sys.executable, ["-c", SERVER], era=era) as c:
            await both_arrive(c)
        async with Client.connect_stdio(
            sys.executable, ["-c", SERVER], era=era, max_message_size=1_000_000
        ) as c:
            await fails_at_once(c, sized=True)

    asyncio.run(asyncio.wait_for(main(), 120))


@pytest.mark.parametrize("era", ERAS)
def test_big_answers_over_http(era):
    async def main():
        server = make_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era) as c:
                await both_arrive(c)
            async with Client.connect_http(handle.url, era=era, max_message_size=1_000_000) as c:
                await fails_at_once(c, sized=False)

    asyncio.run(asyncio.wait_for(main(), 120))
