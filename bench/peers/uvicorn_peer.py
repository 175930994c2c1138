"""How the benchmark's Python peers serve an ASGI app under uvicorn (shared by
`py_sdk_http.py` and `py_mcp_sansio_http.py asgi`): on a listener of 127.0.0.1 they make,
printing its URL on a line of its own, until stdin closes."""

import socket
import sys
import threading

import uvicorn


def serve(app) -> None:
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on an accepted socket only when its
    # listener's proto says TCP (socket.socket() says 0), and without it Nagle holds the
    # response's second write for the client's delayed ACK (~40 ms a call).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)  # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    print(f"http://127.0.0.1:{port}/mcp", flush=True)

    def wait_for_stdin() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=wait_for_stdin, daemon=True).start()
    server.run(sockets=[sock])
