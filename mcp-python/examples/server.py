import asyncio

from mcp_sansio.aio import Context, Server

server = Server("demo", "1.0")


@server.tool(description="Adds two numbers")
def add(a: float, b: float) -> float:
    return a + b


@server.tool(description="Counts to n, reporting progress")
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"{i} of {n}")
        await asyncio.sleep(0.01)
    return f"counted to {n}"


@server.resource("demo://greeting", mime_type="text/plain")
def greeting() -> str:
    return "Hello from mcp_sansio"


if __name__ == "__main__":
    server.run()  # stdio; server.run("http", port=8000) serves Streamable HTTP
