"""Shared helpers of the mcp_sansio tests."""

import contextlib
import os
import pathlib
import socket

import pytest

HERE = pathlib.Path(__file__).parent
REPO = HERE.parent.parent
PEERS = REPO / "tests" / "peers"
EVERYTHING = HERE / "everything_server.py"

# The HTTP client honours HTTP_PROXY / HTTPS_PROXY / NO_PROXY by default: the tests talk to
# 127.0.0.1 directly unless a test sets them itself (monkeypatch), whatever the machine has.
for _name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
    os.environ.pop(_name, None)
    os.environ.pop(_name.upper(), None)


def interop_python():
    """The Python of the official SDK's venv (scripts/interop-setup), or skip."""
    python = os.environ.get("MCP_INTEROP_PYTHON")
    if not python or not os.path.exists(python):
        pytest.skip("MCP_INTEROP_PYTHON is not set: run scripts/interop-setup (scripts/test-python does)")
    return python


def free_port():
    """A port in this worktree's range if MCP_PY_TEST_PORT_BASE is set, else any free one."""
    base = int(os.environ.get("MCP_PY_TEST_PORT_BASE", "0"))
    for offset in range(100) if base else [None]:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", base + offset if base else 0))
            return s.getsockname()[1]
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port")


def mint_jwt(secret, **claims):
    """An HS256 JWT signed with ``secret`` (str or bytes) carrying ``claims``, expiring in
    ten minutes unless ``exp`` is given (``exp=None`` leaves it out)."""
    import base64
    import hashlib
    import hmac
    import json
    import time

    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")

    claims.setdefault("exp", int(time.time()) + 600)
    if claims["exp"] is None:
        del claims["exp"]
    key = secret.encode() if isinstance(secret, str) else secret
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


@contextlib.asynccontextmanager
async def uvicorn_serving(app, port=None, **options):
    """uvicorn on this loop at ``port`` (a free port unless given) of 127.0.0.1; yields the
    base URL; shut down (bounded) on leaving."""
    import asyncio
    import time

    import uvicorn

    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    deadline = time.monotonic() + 20
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("uvicorn stopped before it started")
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 20)
