"""The mcp-python (mcp_sansio) asyncio Streamable HTTP server with the benchmark's `echo`
and `flood` tools: the peer of `mcp-http-bench` (scripts/bench-http).

Run as `python py_mcp_sansio_http.py [rust|h11|asgi]` in a venv with the wheel: prints its
URL on a line of its own, serves until stdin closes.

- `rust` (the default): `Server.serve_http`, served by the wheel's Rust HTTP/1.1 front end;
- `h11`: `Server.serve_http(front="h11")`, the pure-Python front end (kept for HTTPS);
- `asgi`: `Server.asgi_app()` under uvicorn (the way to mount it in Starlette or FastAPI),
  the same uvicorn set-up as the official SDK's peer (`py_sdk_http.py`).
"""

import asyncio
import logging
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


async def serve(front: str) -> None:
    handle = await server.serve_http("127.0.0.1", 0, front=front)
    print(handle.url, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await handle.aclose()


def serve_asgi() -> None:
    from uvicorn_peer import serve as serve_under_uvicorn

    logging.getLogger("mcp_sansio").setLevel(logging.WARNING)
    serve_under_uvicorn(server.asgi_app(path="/mcp"))


if __name__ == "__main__":
    front = sys.argv[1] if len(sys.argv) > 1 else "rust"
    if front == "asgi":
        serve_asgi()
    else:
        asyncio.run(serve(front))
