"""The official Python SDK's Streamable HTTP server under uvicorn, with the benchmark's `echo`
tool: the peer of `mcp-http-bench` (scripts/bench-http).

Run as `python py_sdk_http.py`: prints its URL on a line of its own, serves until stdin
closes. Uses the interop venv (tests/peers/requirements.txt: mcp==2.3.0, uvicorn, pinned).
"""

import socket
import sys
import logging
import threading

import uvicorn
from mcp.server.mcpserver import MCPServer

logging.getLogger("mcp").setLevel(logging.WARNING)
mcp = MCPServer("bench")


@mcp.tool(description="Echoes the text back")
def echo(text: str) -> str:
    return text


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)  # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    app = mcp.streamable_http_app(host="127.0.0.1")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    print(f"http://127.0.0.1:{port}/mcp", flush=True)

    def wait_for_stdin() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=wait_for_stdin, daemon=True).start()
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
