"""``Server.asgi_app()``: the Streamable HTTP endpoint as an ASGI application, under real
uvicorn (and hypercorn) on 127.0.0.1, alone, routed and mounted under a nested path in
Starlette behind a middleware; interop with the official Python SDK's client and with ours,
both eras; SSE progress, client disconnects, the body limit, and lifespan shutdown ending
open streams (driven by hand, message by message)."""

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

from conftest import EVERYTHING, HERE, PEERS, free_port, interop_python, uvicorn_serving

uvicorn = pytest.importorskip("uvicorn")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.responses import PlainTextResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

EXAMPLES = HERE.parent / "examples"
MODES = [("legacy", "2025-11-25"), ("modern", "2026-07-28"), ("auto", "2026-07-28")]
ERAS = [("legacy", "2025-11-25"), ("modern", "2026-07-28")]


def run(coro_fn):
    asyncio.run(asyncio.wait_for(coro_fn(), 120))


def everything_server():
    """A fresh copy of tests/everything_server.py's server (its module runs it as __main__)."""
    namespace = {"__name__": "everything"}
    exec(compile(EVERYTHING.read_text(), str(EVERYTHING), "exec"), namespace)
    return namespace["server"]


@contextlib.asynccontextmanager
async def hypercorn_serving(app):
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    port = free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.graceful_timeout = 1
    config.accesslog = None
    config.errorlog = None
    stop = asyncio.Event()
    task = asyncio.ensure_future(serve(app, config, shutdown_trigger=stop.wait))
    deadline = time.monotonic() + 20
    while True:
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            break
        except OSError:
            if task.done() or time.monotonic() > deadline:
                task.result()
                raise RuntimeError("hypercorn did not start")
            await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def official_client(mode, url):
    """tests/peers/py_client.py MODE URL (the official SDK's client); returns its summary."""
    proc = await asyncio.create_subprocess_exec(
        interop_python(), str(PEERS / "py_client.py"), mode, url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    lines = [l for l in out.decode().splitlines() if l.startswith("INTEROP-SUMMARY ")]
    assert lines, f"no summary\nstdout:{out.decode()}\nstderr:{err.decode()}"
    summary = json.loads(lines[-1][len("INTEROP-SUMMARY "):])
    assert "fatal" not in summary, f"{summary}\nstderr:{err.decode()}"
    return summary


def assert_official_scenario(s, version):
    assert s["protocol_version"] == version, s
    assert s["server_name"] == "mcp-sansio-everything", s
    assert {"add", "echo", "slow"} <= set(s["tools"]), s
    assert s["echo"] == {"texts": ["hello from python"], "is_error": False}, s
    assert s["add"] == {"texts": ["5.5"], "is_error": False}, s
    assert s["slow"]["texts"] == ["done after 3 steps"], s
    assert [p["progress"] for p in s["slow"]["progress"]] == [1, 2, 3], s
    assert s["static"] == [{"uri": "test://static-text", "text": "Hello from a static resource"}], s
    assert s["template"] == [{"uri": "test://template/42/data", "text": "Data for 42"}], s
    assert s["prompt"] == [{"role": "user", "text": "Say hello to Ada."}], s
    u = s["unknown_tool"]
    assert u.get("error", {}).get("code") == -32602 or u.get("is_error") is True, s


async def our_scenario(url, era, version):
    """Our client's interop calls against the everything-server at ``url``."""

    async def on_elicit(params):
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client.connect_http(url, era=era, on_elicit=on_elicit) as c:
        assert c.protocol_version == version
        assert c.server_info["name"] == "mcp-sansio-everything"
        tools = {t["name"] for t in (await c.list_tools())["tools"]}
        assert {"add", "echo", "slow", "ask_name"} <= tools
        assert (await c.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
        assert (await c.call_tool("add", {"a": 2, "b": 3.5}))["content"][0]["text"] == "5.5"
        seen = []
        r = await c.call_tool("slow", {"steps": 3}, progress_callback=lambda p, t, m: seen.append((p, t, m)))
        assert r["content"][0]["text"] == "done after 3 steps"
        assert seen == [(i, 3, f"step {i} of 3") for i in (1, 2, 3)]  # SSE events, one by one
        r = await c.read_resource("test://template/42/data")
        assert r["contents"][0]["text"] == "Data for 42"
        r = await c.get_prompt("greeting", {"name": "Ada"})
        assert r["messages"][0]["content"]["text"] == "Say hello to Ada."
        # input: a live elicitation on the 2025 wire, input_required and a retry on 2026
        assert (await c.call_tool("ask_name"))["content"][0]["text"] == "Hello, Ada!"
        with pytest.raises(ms.McpError) as e:
            await c.call_tool("no-such-tool", {})
        assert e.value.code == -32602


def routed_app(server, **options):
    """The example's shape: /health and the endpoint routed at /mcp, with its lifespan."""
    mcp = server.asgi_app(**options)

    async def health(request):
        return PlainTextResponse("ok")

    return starlette_apps.Starlette(routes=[Route("/health", health), Route("/mcp", mcp)], lifespan=mcp.lifespan)


# --- the example, as its docstring says to run it -------------------------------------------


def test_the_example_runs_under_uvicorn_and_serves_health_and_mcp():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "asgi_app:app", "--host", "127.0.0.1", "--port", str(port)],
        cwd=EXAMPLES, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert json.loads(r.read()) == {"status": "ok"}
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn asgi_app:app did not start: {proc.stderr.read()}")
                time.sleep(0.1)

        async def main():
            for era, version in ERAS:
                async with Client.connect_http(f"http://127.0.0.1:{port}/mcp", era=era) as c:
                    assert c.protocol_version == version
                    assert (await c.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] in ("3", "3.0")
                    seen = []
                    r = await c.call_tool("count", {"n": 3}, progress_callback=lambda p, t, m: seen.append(m))
                    assert r["content"][0]["text"] == "counted to 3" and seen == ["1 of 3", "2 of 3", "3 of 3"]

        run(main)
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    # a clean shutdown, lifespan included (uvicorn re-raises the SIGTERM it handled)
    assert proc.returncode in (0, -15) and "Application shutdown complete." in err, err


# --- interop under uvicorn -------------------------------------------------------------------


@pytest.mark.parametrize("mode,version", MODES)
def test_official_client_through_uvicorn(mode, version):
    async def main():
        async with uvicorn_serving(routed_app(everything_server())) as base:
            assert_official_scenario(await official_client(mode, base + "/mcp"), version)

    run(main)


@pytest.mark.parametrize("era,version", ERAS)
def test_our_client_through_uvicorn(era, version):
    async def main():
        async with uvicorn_serving(routed_app(everything_server())) as base:
            await our_scenario(base + "/mcp", era, version)

    run(main)


@pytest.mark.parametrize("era,version", ERAS)
def test_our_client_through_hypercorn(era, version):
    pytest.importorskip("hypercorn")

    async def main():
        async with hypercorn_serving(routed_app(everything_server())) as base:
            await our_scenario(base + "/mcp", era, version)

    run(main)


# --- mounting --------------------------------------------------------------------------------


class Stamp:
    """A plain ASGI middleware in front of everything: stamps every response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        async def stamped(message):
            if message["type"] == "http.response.start":
                message = dict(message, headers=list(message.get("headers", [])) + [(b"x-stamp", b"yes")])
            await send(message)

        await self.app(scope, receive, stamped)


def nested_app(server):
    """The endpoint mounted at /api/v1/mcp/ (two Mounts), no lifespan forwarded to it."""
    from starlette.middleware import Middleware

    async def health(request):
        return PlainTextResponse("ok")

    return starlette_apps.Starlette(
        routes=[Route("/health", health), Mount("/api", routes=[Mount("/v1/mcp", app=server.asgi_app())])],
        middleware=[Middleware(Stamp)],
    )


@pytest.mark.parametrize("era,version", ERAS)
def test_mounted_under_a_nested_path_behind_a_middleware(era, version):
    async def main():
        async with uvicorn_serving(nested_app(everything_server())) as base:
            await our_scenario(base + "/api/v1/mcp/", era, version)
            # the middleware saw the MCP responses too; other paths are the app's
            req = urllib.request.Request(
                base + "/api/v1/mcp/", method="POST", data=b"{}",
                headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            )
            try:
                await asyncio.to_thread(urllib.request.urlopen, req, timeout=5)
                raise AssertionError("an empty object is not a JSON-RPC message")
            except urllib.error.HTTPError as e:
                with e:
                    assert e.code == 400 and e.headers["x-stamp"] == "yes"
            with await asyncio.to_thread(urllib.request.urlopen, base + "/health", timeout=5) as r:
                assert r.read() == b"ok"

    run(main)


def test_the_official_client_through_a_nested_mount():
    async def main():
        async with uvicorn_serving(nested_app(everything_server())) as base:
            assert_official_scenario(await official_client("auto", base + "/api/v1/mcp/"), "2026-07-28")

    run(main)


def test_a_path_is_relative_to_the_root_path():
    async def main():
        app = everything_server().asgi_app(path="/mcp")
        # uvicorn --root-path /prefix: a proxy took /prefix off, the app sees /prefix/mcp
        async with uvicorn_serving(app, root_path="/prefix") as base:
            await our_scenario(base + "/mcp", "modern", "2026-07-28")
            with pytest.raises(urllib.error.HTTPError) as e:
                await asyncio.to_thread(urllib.request.urlopen, base + "/elsewhere", timeout=5)
            with e.value:
                assert e.value.code == 404

    run(main)


# --- the HTTP edges --------------------------------------------------------------------------


def mortal_server():
    server = Server("mortal")
    state = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool()
    async def forever(ctx: Context) -> str:
        state["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server, state


CALL_FOREVER = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)


def raw_post(port, path, body, extra=""):
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: tools/call\r\nMcp-Name: forever\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def test_a_client_that_disconnects_mid_call_cancels_the_handler():
    async def main():
        server, state = mortal_server()
        async with uvicorn_serving(routed_app(server)) as base:
            port = int(base.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw_post(port, "/mcp", CALL_FOREVER))
            await asyncio.wait_for(state["started"].wait(), 10)
            writer.transport.abort()  # http.disconnect: the rules are told, the call is cancelled
            await asyncio.wait_for(state["cancelled"].wait(), 10)
            # and the endpoint serves on
            async with Client.connect_http(base + "/mcp", era="modern") as c:
                assert (await c.call_tool("echo", {"text": "still here"}))["content"][0]["text"] == "still here"

    run(main)


def test_a_body_past_the_limit_gets_413():
    async def main():
        server, _ = mortal_server()
        async with uvicorn_serving(routed_app(server, max_body_size=1000)) as base:
            port = int(base.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw_post(port, "/mcp", b"{" + b" " * 5000 + b"}"))
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            assert head.startswith(b"HTTP/1.1 413"), head
            writer.close()
            await writer.wait_closed()
            # a body within the limit is served
            async with Client.connect_http(base + "/mcp", era="modern") as c:
                assert (await c.call_tool("echo", {"text": "small"}))["content"][0]["text"] == "small"

    run(main)


# --- lifespan, driven message by message ------------------------------------------------------


class Exchange:
    """One ASGI http call of the app, driven by hand: what it sent, and its disconnect."""

    def __init__(self, app, method, headers, body=b"", hold=None):
        self.hold = hold  # while not set, every body send blocks (a client that reads nothing)
        self.sent = []
        self.changed = asyncio.Event()
        self._incoming = asyncio.Queue()
        self._incoming.put_nowait({"type": "http.request", "body": body, "more_body": False})
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
            "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
            "headers": [(b"host", b"127.0.0.1:8000")] + [(k.lower().encode(), v.encode()) for k, v in headers],
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
        }
        self.task = asyncio.ensure_future(app(scope, self._incoming.get, self._send))

    async def _send(self, message):
        self.sent.append(message)
        self.changed.set()
        if self.hold is not None and message["type"] == "http.response.body":
            await self.hold.wait()

    def disconnect(self):
        self._incoming.put_nowait({"type": "http.disconnect"})

    async def wait(self, predicate):
        while not predicate(self.sent):
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 10)

    @property
    def status(self):
        return next(m["status"] for m in self.sent if m["type"] == "http.response.start")

    def header(self, name):
        start = next(m for m in self.sent if m["type"] == "http.response.start")
        return next((v.decode() for k, v in start["headers"] if k.decode().lower() == name), None)

    @property
    def ended(self):
        return any(m["type"] == "http.response.body" and not m.get("more_body") for m in self.sent)

    @property
    def body(self):
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


JSON = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]


def test_lifespan_shutdown_ends_open_streams_and_cancels_handlers():
    async def main():
        server, state = mortal_server()
        app = server.asgi_app()
        lifespan_in = asyncio.Queue()
        lifespan_out = []
        lifespan = asyncio.ensure_future(
            app({"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan_in.get, lambda m: _append(lifespan_out, m))
        )
        lifespan_in.put_nowait({"type": "lifespan.startup"})
        while not lifespan_out:
            await asyncio.sleep(0.01)
        assert lifespan_out == [{"type": "lifespan.startup.complete"}]

        # a 2025 session and its GET stream
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        ex = Exchange(app, "POST", JSON, json.dumps(init).encode())
        await asyncio.wait_for(ex.task, 10)
        assert ex.status == 200, ex.sent
        sid = ex.header("mcp-session-id")
        session = JSON + [("mcp-session-id", sid), ("mcp-protocol-version", "2025-11-25")]
        ex = Exchange(app, "POST", session, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await asyncio.wait_for(ex.task, 10)
        assert ex.status == 202
        stream = Exchange(app, "GET", [("accept", "text/event-stream"), ("mcp-session-id", sid), ("mcp-protocol-version", "2025-11-25")])
        await stream.wait(lambda sent: sent and sent[0]["type"] == "http.response.start")
        assert stream.status == 200 and stream.header("content-type").startswith("text/event-stream")
        # a 2026 call whose SSE response stays open while its handler runs
        call = Exchange(
            app, "POST",
            [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
             ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "forever")],
            CALL_FOREVER,
        )
        await asyncio.wait_for(state["started"].wait(), 10)
        assert not stream.ended and not call.task.done()

        lifespan_in.put_nowait({"type": "lifespan.shutdown"})
        await asyncio.wait_for(lifespan, 10)
        assert lifespan_out[-1] == {"type": "lifespan.shutdown.complete"}
        # every open response ended (more_body=False) and its ASGI call returned
        await asyncio.wait_for(asyncio.gather(stream.task, call.task), 10)
        assert stream.ended and call.ended
        assert state["cancelled"].is_set()

        # a later request starts the endpoint afresh: the old session is gone
        ex = Exchange(app, "POST", session, b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        await asyncio.wait_for(ex.task, 10)
        assert ex.status == 404
        await app.aclose()

    run(main)


async def _append(out, message):
    out.append(message)


def test_a_disconnect_message_ends_the_exchange():
    async def main():
        server, state = mortal_server()
        app = server.asgi_app()  # no lifespan: it starts on the first request
        call = Exchange(
            app, "POST",
            [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
             ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "forever")],
            CALL_FOREVER,
        )
        await asyncio.wait_for(state["started"].wait(), 10)
        call.disconnect()
        await asyncio.wait_for(state["cancelled"].wait(), 10)
        await asyncio.wait_for(call.task, 10)
        await app.aclose()

    run(main)


# --- FastAPI ---------------------------------------------------------------------------------


def load_example(name):
    namespace = {"__name__": name}
    path = EXAMPLES / f"{name}.py"
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


@pytest.mark.parametrize("era,version", ERAS)
def test_the_fastapi_example_mounts_the_endpoint(era, version):
    pytest.importorskip("fastapi")

    async def main():
        app = load_example("fastapi_app")["app"]
        async with uvicorn_serving(app) as base:
            async with Client.connect_http(base + "/mcp/", era=era) as c:
                assert c.protocol_version == version
                assert (await c.call_tool("greet", {"name": "Ada"}))["content"][0]["text"] == "Hello, Ada!"
            with await asyncio.to_thread(urllib.request.urlopen, base + "/health", timeout=5) as r:
                assert json.loads(r.read()) == {"status": "ok"}

    run(main)


def test_fastapi_mount_and_route_with_the_official_client():
    pytest.importorskip("fastapi")
    from fastapi import FastAPI

    async def main():
        mcp = everything_server().asgi_app()
        app = FastAPI(lifespan=mcp.lifespan)
        app.mount("/mounted", mcp)
        app.add_route("/routed", mcp)  # the same endpoint at a second place, /routed exactly
        async with uvicorn_serving(app) as base:
            assert_official_scenario(await official_client("legacy", base + "/mounted/"), "2025-11-25")
            assert_official_scenario(await official_client("modern", base + "/routed"), "2026-07-28")

    run(main)


@pytest.mark.parametrize("era,version", ERAS)
def test_behind_a_fastapi_http_middleware(era, version):
    """``@app.middleware("http")`` (Starlette's BaseHTTPMiddleware) streams the SSE events
    through and passes the client's disconnect on."""
    pytest.importorskip("fastapi")
    from fastapi import FastAPI

    async def main():
        mcp = everything_server().asgi_app()
        app = FastAPI(lifespan=mcp.lifespan)
        seen = []

        @app.middleware("http")
        async def note(request, call_next):
            seen.append(request.method)
            response = await call_next(request)
            response.headers["x-noted"] = "yes"
            return response

        app.mount("/mcp", mcp)
        async with uvicorn_serving(app) as base:
            await our_scenario(base + "/mcp/", era, version)
        assert "POST" in seen

    run(main)


def test_a_disconnect_through_a_fastapi_http_middleware_cancels_the_handler():
    pytest.importorskip("fastapi")
    from fastapi import FastAPI

    async def main():
        server, state = mortal_server()
        mcp = server.asgi_app()
        app = FastAPI(lifespan=mcp.lifespan)

        @app.middleware("http")
        async def passthrough(request, call_next):
            return await call_next(request)

        app.mount("/mcp", mcp)
        async with uvicorn_serving(app) as base:
            port = int(base.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(raw_post(port, "/mcp/", CALL_FOREVER))
            await asyncio.wait_for(state["started"].wait(), 10)
            writer.transport.abort()
            await asyncio.wait_for(state["cancelled"].wait(), 10)

    run(main)


def test_an_app_without_lifespan_serves_again_on_a_new_loop():
    server = everything_server()
    app = nested_app(server)  # no lifespan reaches the endpoint: nothing closes it

    async def main():
        async with uvicorn_serving(app) as base:
            async with Client.connect_http(base + "/api/v1/mcp/", era="modern") as c:
                assert (await c.call_tool("echo", {"text": "again"}))["content"][0]["text"] == "again"

    run(main)
    run(main)  # a new loop: the endpoint starts afresh on it
    server.notify_resource_updated("test://static-text")  # the ended loops' endpoints are dropped
    assert not [live for live in server._live if live.loop.is_closed()]


def test_a_reader_that_falls_behind_is_cut_and_its_call_cancelled():
    async def main():
        server = Server("flooding")
        state = {"cancelled": asyncio.Event(), "sent": 0}

        @server.tool()
        async def flood(ctx: Context) -> str:
            try:
                for i in range(1, 10_000):
                    ctx.report_progress(i, None, "x" * 200)
                    state["sent"] = i
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                state["cancelled"].set()
                raise
            return "never read"

        app = server.asgi_app(max_buffered=4096)
        reading = asyncio.Event()  # the client takes the head, then reads nothing for a while
        call = Exchange(
            app, "POST",
            [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
             ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "flood")],
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{},'
            b'"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            b'"io.modelcontextprotocol/clientCapabilities":{}}}}',
            hold=reading,
        )
        # past 4 KiB waiting for the reader, the response is dropped and the call cancelled
        await asyncio.wait_for(state["cancelled"].wait(), 10)
        assert state["sent"] < 1000, state
        reading.set()  # the client reads again: what was queued goes, then the response ends
        await asyncio.wait_for(call.task, 10)
        assert call.ended and not call.task.exception()
        await app.aclose()

    run(main)


# --- a Rust client -----------------------------------------------------------------------------


def rust_client():
    """mcp-sansio-tokio's demo example (scripts/interop-setup builds it), or skip."""
    path = os.environ.get("MCP_INTEROP_RUST_CLIENT")
    if not path or not os.path.exists(path):
        pytest.skip("MCP_INTEROP_RUST_CLIENT is not set: run scripts/interop-setup (scripts/test-python does)")
    return path


@pytest.mark.parametrize("era,version", ERAS)
def test_the_rust_client_through_uvicorn(era, version):
    async def main():
        async with uvicorn_serving(routed_app(everything_server())) as base:
            proc = await asyncio.create_subprocess_exec(
                rust_client(), base + "/mcp", env=dict(os.environ, MCP_ERA=era),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
            try:
                out, err = await asyncio.wait_for(proc.communicate(), 60)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
                raise
        return proc.returncode, out.decode(), err.decode()

    result = {}

    async def record():
        result["run"] = await main()

    run(record)
    code, out, err = result["run"]
    assert code == 0, f"{out}\n{err}"
    assert f"connected to mcp-sansio-everything on protocol {version}" in out, out
    for seen in ["done after 10 steps", "dropped the call", "Hello from a static resource", "Data for 42",
                 "Say hello to Ada.", "Hello, Ada!", "✔ done"]:
        assert seen in out, f"{seen!r} not in:\n{out}"


def test_uvicorn_shuts_down_with_open_streams_under_a_graceful_timeout():
    """uvicorn waits for open connections before ``lifespan.shutdown``; with
    ``timeout_graceful_shutdown`` it cancels them: the running call's handler is cancelled
    and the server stops, with a legacy client's GET stream still open."""

    async def main():
        server, state = mortal_server()
        started = time.monotonic()
        async with uvicorn_serving(routed_app(server), timeout_graceful_shutdown=1) as base:
            legacy = await Client.connect_http(base + "/mcp", era="legacy")  # holds a GET stream
            modern = await Client.connect_http(base + "/mcp", era="modern")
            call = asyncio.ensure_future(modern.call_tool("forever"))
            await asyncio.wait_for(state["started"].wait(), 10)
            started = time.monotonic()
        assert time.monotonic() - started < 10
        assert state["cancelled"].is_set()
        with pytest.raises(ms.ConnectionClosed):
            await asyncio.wait_for(call, 10)
        await legacy.aclose()
        await modern.aclose()

    run(main)
