"""The mcp-python (mcp_sansio) asyncio Streamable HTTP server with the benchmark's `echo`
tool: the peer of `mcp-http-bench` (scripts/bench-http).

Run as `python py_mcp_sansio_http.py` in a venv with the wheel: prints its URL on a line of
its own, serves until stdin closes.
"""

import asyncio
import sys

from mcp_sansio.aio import Server

server = Server("bench")


@server.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


async def main() -> None:
    handle = await server.serve_http("127.0.0.1", 0)
    print(handle.url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await handle.aclose()


if __name__ == "__main__":
    asyncio.run(main())
