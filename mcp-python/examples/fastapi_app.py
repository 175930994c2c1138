"""The MCP endpoint mounted in a FastAPI app: `uvicorn fastapi_app:app` serves GET /health
and MCP at http://127.0.0.1:8000/mcp/ (with the slash: FastAPI answers /mcp with a redirect,
which MCP clients do not follow; `app.add_route("/mcp", mcp)` serves /mcp itself)."""

from fastapi import FastAPI

from mcp_sansio.aio import Server

server = Server("fastapi-demo", "1.0")


@server.tool(description="Greets someone")
def greet(name: str) -> str:
    return f"Hello, {name}!"


mcp = server.asgi_app()
app = FastAPI(lifespan=mcp.lifespan)  # starts the endpoint; on shutdown ends its streams
app.mount("/mcp", mcp)


@app.get("/health")
def health() -> dict:
    return {"status": "ok"}
