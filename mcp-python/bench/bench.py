"""Sequential tool-call throughput: mcp_sansio's asyncio driver vs the official Python SDK.

A benchmark, not a test. Both run the same loop: ``call_tool("echo", {"text": "hello"})``,
awaited one after the other, against a server with one ``echo`` tool written the idiomatic
way for each library; each measurement runs for a fixed time after a warm-up.

- in process: client and server in one event loop (mcp_sansio's ``connect_in_process``,
  the SDK's ``Client(MCPServer)``);
- stdio: the server is a child process (this script with ``--serve ours|official``).

Run it in a venv that has both packages (``scripts/bench-python`` makes one):

    python bench.py [--seconds 3] [--era legacy|modern]
"""

import argparse
import asyncio
import sys
import time

SECONDS = 3.0
WARMUP = 200


def our_server():
    from mcp_sansio.aio import Server

    server = Server("bench-ours", "1.0")

    @server.tool(description="Echoes the text back")
    async def echo(text: str) -> str:
        return text

    return server


def official_server():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-official", version="1.0")

    @server.tool(description="Echoes the text back")
    async def echo(text: str) -> str:
        return text

    return server


async def loop_calls(call, seconds):
    for _ in range(WARMUP):
        await call()
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            await call()
        n += 100
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


async def ours_in_process(seconds, era):
    from mcp_sansio.aio import Client

    async with Client.connect_in_process(our_server(), era=era) as client:
        return await loop_calls(lambda: client.call_tool("echo", {"text": "hello"}), seconds)


async def ours_stdio(seconds, era):
    from mcp_sansio.aio import Client

    async with Client.connect_stdio(sys.executable, [__file__, "--serve", "ours"], era=era) as client:
        return await loop_calls(lambda: client.call_tool("echo", {"text": "hello"}), seconds)


async def official_in_process(seconds, era):
    from mcp.client.client import Client

    async with Client(official_server(), mode=_official_mode(era)) as client:
        return await loop_calls(lambda: client.call_tool("echo", {"text": "hello"}), seconds)


async def official_stdio(seconds, era):
    from mcp import StdioServerParameters
    from mcp.client.client import Client

    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve", "official"])
    async with Client(params, mode=_official_mode(era)) as client:
        return await loop_calls(lambda: client.call_tool("echo", {"text": "hello"}), seconds)


def _official_mode(era):
    return "legacy" if era == "legacy" else "2026-07-28"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--serve", choices=["ours", "official"])
    args = parser.parse_args()
    if args.serve == "ours":
        asyncio.run(our_server().serve_stdio())
        return
    if args.serve == "official":
        official_server().run()
        return

    import mcp_sansio

    rows = []
    for name, ours, theirs in [
        ("in process", ours_in_process, official_in_process),
        ("stdio child process", ours_stdio, official_stdio),
    ]:
        a = asyncio.run(ours(args.seconds, args.era))
        b = asyncio.run(theirs(args.seconds, args.era))
        rows.append((name, a, b))
    print(f"sequential tools/call, {args.era} era, {args.seconds:g} s per measurement")
    print(f"{'':22}{'mcp_sansio':>14}{'official mcp':>14}{'ratio':>9}")
    for name, a, b in rows:
        print(f"{name:22}{a:>10.0f}/s  {b:>10.0f}/s  {a / b:>7.1f}x")
    print(f"(mcp_sansio {mcp_sansio.__name__}, official SDK {_sdk_version()})")


def _sdk_version():
    try:
        from importlib.metadata import version

        return version("mcp")
    except Exception:
        return "?"


if __name__ == "__main__":
    main()
