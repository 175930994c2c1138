"""The HTTP client follows redirects within the server's origin (scheme, host, port), as the
official SDK's client does FastAPI's and Starlette's ``/mcp`` -> ``/mcp/`` (a 307 from
``redirect_slashes``): same method, headers and body for 307 and 308, a bounded count, a
permanent redirect remembered; a redirect to another origin, a loop and a 303 for a POST are
refused with :class:`~mcp_sansio.RedirectError`, and nothing reaches the other origin. Real
uvicorn on 127.0.0.1, both eras."""

import asyncio

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Server

from conftest import uvicorn_serving

pytest.importorskip("uvicorn")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.responses import RedirectResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

ERAS = [("legacy", "2025-11-25"), ("modern", "2026-07-28")]
TOKEN = "Bearer same-origin-only"


def run(coro_fn):
    asyncio.run(asyncio.wait_for(coro_fn(), 90))


def make_server():
    server = Server("redirected", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def recording(app, seen):
    """``app`` behind a middleware noting each HTTP request's method, path and headers."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            seen.append((scope["method"], scope["path"], headers))
        await app(scope, receive, send)

    return wrapped


def mounted_app(seen, extra_routes=()):
    """The endpoint mounted at /mcp, as in a FastAPI or Starlette app: a request for /mcp
    gets Starlette's 307 to /mcp/ (redirect_slashes)."""
    app = starlette_apps.Starlette(routes=[*extra_routes, Mount("/mcp", app=make_server().asgi_app())])
    return recording(app, seen)


async def raw_head(base, method, path):
    """The status line and headers the app answers ``method path`` with (no redirect followed)."""
    host, port = base.split("//")[1].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    writer.close()
    await writer.wait_closed()
    lines = head.decode("latin-1").split("\r\n")
    return lines[0], {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}


@pytest.mark.parametrize("era,version", ERAS)
def test_the_slash_redirect_of_a_mount_is_followed(era, version):
    async def main():
        seen = []
        async with uvicorn_serving(mounted_app(seen)) as base:
            status, headers = await raw_head(base, "POST", "/mcp")
            assert status.startswith("HTTP/1.1 307"), status
            assert headers["location"] == base + "/mcp/", headers

            seen.clear()
            async with Client.connect_http(base + "/mcp", era=era, headers={"Authorization": TOKEN}) as c:
                assert c.protocol_version == version
                r = await c.call_tool("echo", {"text": "through the redirect"})
                assert r.content[0].text == "through the redirect"
                assert [t.name for t in (await c.list_tools()).tools] == ["echo"]
        posts = [(m, p) for m, p, _ in seen if m == "POST"]
        # each request went to /mcp, was redirected, and was sent again to /mcp/ (307: temporary)
        assert posts[0::2] == [("POST", "/mcp")] * (len(posts) // 2), posts
        assert posts[1::2] == [("POST", "/mcp/")] * (len(posts) // 2), posts
        assert len(posts) >= 4 and len(posts) % 2 == 0, posts
        # the same origin: the headers went along, the session id too (2025 wire)
        for method, path, headers in seen:
            assert headers.get("authorization") == TOKEN, (method, path, headers)
        if era == "legacy":
            assert any(p == "/mcp/" and "mcp-session-id" in h for m, p, h in seen if m == "POST"), seen

    run(main)


@pytest.mark.parametrize("era,version", ERAS)
def test_a_permanent_redirect_moves_the_later_requests(era, version):
    async def moved(request):
        return RedirectResponse("/mcp/", status_code=308)

    async def main():
        seen = []
        async with uvicorn_serving(mounted_app(seen, [Route("/old", moved, methods=["GET", "POST", "DELETE"])])) as base:
            async with Client.connect_http(base + "/old", era=era) as c:
                assert c.protocol_version == version
                assert (await c.call_tool("echo", {"text": "x"})).content[0].text == "x"
                assert (await c.call_tool("echo", {"text": "y"})).content[0].text == "y"
        paths = [p for m, p, _ in seen]
        assert paths[:2] == ["/old", "/mcp/"], paths
        assert paths.count("/old") == 1 and all(p == "/mcp/" for p in paths[1:]), paths

    run(main)


class Witness:
    """A TCP listener on another port of 127.0.0.1 (another origin) noting every byte sent
    to it."""

    async def __aenter__(self):
        self.received = []
        self.connections = 0

        async def serve(reader, writer):
            self.connections += 1
            self.received.append(await reader.read(65536))
            writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/mcp"
        return self

    async def __aexit__(self, *exc):
        self.server.close()
        await self.server.wait_closed()


@pytest.mark.parametrize("era,version", ERAS)
def test_a_redirect_to_another_origin_is_refused(era, version):
    async def main():
        async with Witness() as other:

            async def elsewhere(request):
                return RedirectResponse(other.url, status_code=307)

            seen = []
            app = recording(starlette_apps.Starlette(routes=[Route("/mcp", elsewhere, methods=["GET", "POST", "DELETE"])]), seen)
            async with uvicorn_serving(app) as base:
                with pytest.raises(ms.RedirectError) as refused:
                    async with Client.connect_http(base + "/mcp", era=era, headers={"Authorization": TOKEN}):
                        raise AssertionError("connected through a cross-origin redirect")
            e = refused.value
            assert isinstance(e, ms.ConnectError) and e.status == 307 and e.location == other.url
            assert "another origin: refused" in str(e) and other.url in str(e) and base + "/mcp" in str(e), str(e)
            assert [(m, p) for m, p, _ in seen] == [("POST", "/mcp")], seen
            # nothing went to the other origin: no connection, no header
            assert other.connections == 0 and other.received == []

    run(main)


def test_a_redirect_loop_is_bounded():
    async def again(request):
        return RedirectResponse("/loop", status_code=307)

    async def main():
        seen = []
        app = recording(starlette_apps.Starlette(routes=[Route("/loop", again, methods=["POST"])]), seen)
        async with uvicorn_serving(app) as base:
            with pytest.raises(ms.RedirectError, match="more than 5 redirects"):
                async with Client.connect_http(base + "/loop", era="legacy"):
                    pass
        assert [p for _, p, _ in seen] == ["/loop"] * 6, seen  # the request and five redirects

    run(main)


def test_a_303_for_a_post_is_refused():
    async def see_other(request):
        return RedirectResponse("/mcp/", status_code=303)

    async def main():
        seen = []
        async with uvicorn_serving(mounted_app(seen, [Route("/other", see_other, methods=["POST"])])) as base:
            with pytest.raises(ms.RedirectError, match="303 See Other") as refused:
                async with Client.connect_http(base + "/other", era="modern"):
                    pass
        assert refused.value.status == 303
        assert [(m, p) for m, p, _ in seen] == [("POST", "/other")], seen

    run(main)
