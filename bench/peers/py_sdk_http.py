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
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on an accepted socket only when its
    # listener's proto says TCP (socket.socket() says 0), and without it Nagle holds the
    # response's second write for the client's delayed ACK (~40 ms a call).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
