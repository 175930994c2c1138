"""An MCP server inside a web app: `uvicorn asgi_app:app --port 8000` serves GET /health
and the MCP endpoint at http://127.0.0.1:8000/mcp (both wires, SSE included)."""

import asyncio

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_sansio.aio import Context, Server

server = Server("asgi-demo", "1.0")


@server.tool(description="Adds two numbers")
def add(a: float, b: float) -> float:
    return a + b


@server.tool(description="Counts to n, reporting progress")
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"{i} of {n}")
        await asyncio.sleep(0.01)
    return f"counted to {n}"


async def health(request):
    return JSONResponse({"status": "ok"})


mcp = server.asgi_app()
app = Starlette(
    routes=[Route("/health", health), Route("/mcp", mcp)],  # or Mount("/mcp", app=mcp): /mcp/
    lifespan=mcp.lifespan,  # ends open streams and sessions on shutdown
)
