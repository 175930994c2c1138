"""The official Python SDK's Streamable HTTP server under uvicorn, with the benchmark's `echo`
tool: the peer of `mcp-http-bench` (scripts/bench-http).

Run as `python py_sdk_http.py`: prints its URL on a line of its own, serves until stdin
closes. Uses the interop venv (tests/peers/requirements.txt: mcp==2.3.0, uvicorn, pinned).
"""

import logging

from mcp.server.mcpserver import MCPServer
from uvicorn_peer import serve

logging.getLogger("mcp").setLevel(logging.WARNING)
mcp = MCPServer("bench")


@mcp.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


def main() -> None:
    serve(mcp.streamable_http_app(host="127.0.0.1"))


if __name__ == "__main__":
    main()
