"""A small stdio MCP server on the official Python SDK (MCPServer), the peer of our client.

Run as `python py_server.py` (stdio), `python py_server.py --http PORT` or
`python py_server.py --https PORT CERT KEY` (uvicorn with TLS); speaks both eras (initialize and server/discover).
Tools echo{text} and slow{steps} (reports progress), a static resource, a resource
template and a prompt greeting{name}.
"""

import anyio
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("py-interop-server", version="1.0.0", instructions="The Python interop peer.")


@mcp.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


@mcp.tool(description="Works for `steps` twentieths of a second, reporting progress")
async def slow(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"done after {steps} steps"


@mcp.resource("test://py/static", name="py-static", mime_type="text/plain")
def static_text() -> str:
    return "Hello from the Python server"


@mcp.resource("test://py/items/{item_id}", name="py-item")
def item(item_id: str) -> str:
    return f"Item {item_id}"


@mcp.prompt(description="Greets someone")
def greeting(name: str) -> str:
    return f"Say hello to {name}."


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        # Streamable HTTP on 127.0.0.1 at the given port, path /mcp
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == "--https":
        # The same over HTTPS: uvicorn with the certificate and key files given
        import uvicorn

        uvicorn.run(
            mcp.streamable_http_app(),
            host="127.0.0.1",
            port=int(sys.argv[2]),
            ssl_certfile=sys.argv[3],
            ssl_keyfile=sys.argv[4],
            log_level="warning",
        )
    else:
        mcp.run()
