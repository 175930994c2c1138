"""The mcp-python (mcp_sansio) asyncio Streamable HTTP server with the benchmark's `echo`
and `flood` tools: the peer of `mcp-http-bench` (scripts/bench-http).

Run as `python py_mcp_sansio_http.py` in a venv with the wheel: prints its URL on a line of
its own, serves until stdin closes.
"""

import asyncio
import sys

from mcp_sansio.aio import Context, Server

server = Server("bench")


@server.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


@server.tool(description="Reports `count` progress steps with a `size`-byte message")
async def flood(ctx: Context, count: int, size: int) -> str:
    message = "y" * size
    for i in range(1, count + 1):
        ctx.report_progress(i, None, message)
        if i % 64 == 0:
            await asyncio.sleep(0)
    return "flooded"


async def main() -> None:
    handle = await server.serve_http("127.0.0.1", 0)
    print(handle.url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await handle.aclose()


if __name__ == "__main__":
    asyncio.run(main())
