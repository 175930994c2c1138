"""The Streamable HTTP endpoint of a :class:`mcp_sansio.aio.Server` as an ASGI application,
for uvicorn, hypercorn or any ASGI server, and mountable in Starlette or FastAPI::

    from starlette.applications import Starlette
    from starlette.routing import Mount

    mcp = server.asgi_app()
    app = Starlette(routes=[Mount("/mcp", app=mcp)], lifespan=mcp.lifespan)

Every MCP rule (both wires: 2025 sessions with ``Mcp-Session-Id``, the 2026-07-28
stateless wire; SSE, resumption, host checks, the caps) is the Rust ``HttpServer``'s,
driven by the same :class:`~mcp_sansio._endpoint.Endpoint` as ``Server.serve_http``; this
module only translates ASGI messages. The connection's own deadlines (head and body read
timeouts, keep-alive, ``TCP_NODELAY``) are the ASGI server's business.
"""

import asyncio
import collections
import contextlib
import logging
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from ._endpoint import Endpoint, Piece, Sink

__all__ = ["AsgiApp"]

log = logging.getLogger("mcp_sansio.http")

Scope = Dict[str, Any]
Receive = Callable[[], Awaitable[Dict[str, Any]]]
Send = Callable[[Dict[str, Any]], Awaitable[None]]


def _headers(pairs: Sequence[Tuple[str, str]]) -> List[Tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


async def _send_complete(send: Send, status: int, headers: Sequence[Tuple[str, str]], body: bytes) -> None:
    hdrs = _headers(headers)
    hdrs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


class _AsgiSink(Sink):
    """One open response: the rules' pieces wait here for the ASGI ``send`` (which waits
    for the client to read); past ``max_buffered`` waiting body bytes the response is
    dropped, as the h11 server drops a reader that fell behind."""

    def __init__(self, max_buffered: int) -> None:
        self.pieces: "collections.deque[Piece]" = collections.deque()
        self.queued = 0
        self.max_buffered = max_buffered
        self.wake = asyncio.Event()
        self.finished = False  # the endpoint closed
        self.cut = False

    def deliver(self, pieces: List[Piece]) -> bool:
        if self.cut or self.finished:
            return False
        size = sum(len(p[1]) for p in pieces if p[0] == "body")
        if self.queued and self.queued + size > self.max_buffered:
            self.cut = True
            self.wake.set()
            return False
        self.pieces.extend(pieces)
        self.queued += size
        self.wake.set()
        return True

    def finish(self) -> None:
        self.finished = True
        self.wake.set()

    async def run(self, send: Send, receive: Receive, endpoint: Endpoint, exchange: int) -> None:
        """Sends the pieces as they come (SSE events with ``more_body``) until the response
        ends, the client disconnects (the rules are told) or the endpoint closes."""
        gone = asyncio.ensure_future(_until_disconnect(receive))
        started = False
        try:
            while True:
                while self.pieces and not gone.done():
                    piece = self.pieces.popleft()
                    if piece[0] == "head":
                        await send({"type": "http.response.start", "status": piece[1], "headers": _headers(piece[2])})
                        started = True
                    elif piece[0] == "body":
                        self.queued -= len(piece[1])
                        await send({"type": "http.response.body", "body": piece[1], "more_body": True})
                    else:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                        return
                if gone.done():
                    log.debug("exchange %d: the client disconnected", exchange)
                    endpoint.client_gone(exchange)
                    return
                if self.cut or self.finished:
                    # ASGI cannot abort the connection: end the response (a 2025-wire client
                    # resumes its stream with Last-Event-ID).
                    if started:
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    else:
                        await _send_complete(send, 503, [("retry-after", "1")], b"")
                    return
                self.wake.clear()
                waiter = asyncio.ensure_future(self.wake.wait())
                try:
                    await asyncio.wait({waiter, gone}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        except asyncio.CancelledError:
            endpoint.client_gone(exchange)
            raise
        except (OSError, RuntimeError):  # the ASGI server could not send: the client is gone
            endpoint.client_gone(exchange)
        finally:
            gone.cancel()


class AsgiApp:
    """The ASGI application of a server's Streamable HTTP endpoint (``Server.asgi_app()``).

    ``path``: ``None`` (the default) answers whatever path the enclosing router hands it,
    so it answers at its mount point (``Mount("/mcp", app=...)`` in Starlette serves
    ``/mcp/``; ``Route("/mcp", ...)`` serves ``/mcp``); a path such as ``"/mcp"`` answers
    only there (relative to ``root_path``) and 404 elsewhere, for serving it alone
    (``uvicorn module:app``).

    Lifespan: ``lifespan.startup`` starts the endpoint and ``lifespan.shutdown`` ends its
    open responses and sessions and cancels running handlers. Mounted in an app whose
    lifespan does not reach sub-apps (Starlette's ``Mount``), the endpoint starts on the
    first request; pass :meth:`lifespan` as the app's lifespan (or call :meth:`aclose`)
    to end it on shutdown.
    """

    def __init__(
        self,
        server: Any,
        *,
        path: Optional[str] = None,
        allowed_hosts: Optional[Sequence[str]] = None,
        allow_any_host: bool = False,
        retry: Optional[float] = None,
        keepalive: Optional[float] = None,
        options: Optional[Dict[str, Any]] = None,
    ) -> None:
        if server.auth is not None and server.resource_url is None:
            raise ValueError(
                "the ASGI app of a protected server needs Server(resource_url=...): the "
                "endpoint's public URL, which tokens must be issued for"
            )
        self.server = server
        self.path = path
        self._settings = dict(
            allowed_hosts=allowed_hosts,
            allow_any_host=allow_any_host,
            retry=retry,
            keepalive=keepalive,
            edge=options or {},
        )
        self._endpoint: Optional[Endpoint] = None
        self._responses: "set[asyncio.Future[None]]" = set()

    # --- starting and stopping -------------------------------------------------------------

    def start(self) -> Endpoint:
        """Starts the endpoint on the running loop (if not running there already)."""
        loop = asyncio.get_running_loop()
        endpoint = self._endpoint
        if endpoint is None or endpoint.closed or endpoint.loop is not loop:
            if endpoint is not None and not endpoint.closed:
                # Served on another loop before (an ended asyncio.run): that one is gone.
                self.server._live.discard(endpoint)
            endpoint = Endpoint(self.server, **self._settings)
            self._endpoint = endpoint
            log.info("MCP endpoint of %r started (ASGI)", self.server.name)
        return endpoint

    async def aclose(self) -> None:
        """Ends every open response (GET streams and SSE responses end, handlers are
        cancelled) and forgets every session; a later request starts afresh."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is None:
            return
        endpoint.close()
        if self._responses:
            await asyncio.wait(set(self._responses), timeout=5)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """A lifespan for the enclosing app (``Starlette(lifespan=mcp.lifespan)``,
        ``FastAPI(lifespan=mcp.lifespan)``): starts the endpoint, and ends it on shutdown."""
        self.start()
        try:
            yield
        finally:
            await self.aclose()

    # --- ASGI ------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1003})
        else:
            raise ValueError(f"unsupported ASGI scope type {kind!r}")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.start()
                except Exception as e:  # the server reports it and does not start
                    await send({"type": "lifespan.startup.failed", "message": str(e)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _here(self, scope: Scope) -> bool:
        if self.path is None:
            return True
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        return (path.rstrip("/") or "/") == (self.path.rstrip("/") or "/")

    @property
    def metadata_path(self) -> Optional[str]:
        """Where a protected server's Protected Resource Metadata is served
        (``/.well-known/oauth-protected-resource`` and the resource URL's path), else
        ``None``. Mounted in a router, route that path to this app too."""
        endpoint = self._endpoint
        if endpoint is not None and endpoint.protection is not None:
            return endpoint.protection.rules.metadata_path
        if self.server.auth is None:
            return None
        from ._core import ResourceServer

        return ResourceServer(self.server.resource_url, self.server.authorization_server).metadata_path

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.server.auth is not None:
            # The metadata document (at its well-known path, outside ``path``) and the gate
            # come first, as the Rust servers do.
            await self._protected(scope, receive, send, self.start())
            return
        if not self._here(scope):
            await _send_complete(send, 404, [("content-type", "text/plain")], b"not found")
            return
        await self._serve(scope, receive, send, self.start(), None)

    async def _protected(self, scope: Scope, receive: Receive, send: Send, endpoint: Endpoint) -> None:
        headers = [(bytes(k).decode("latin-1"), bytes(v)) for k, v in scope.get("headers", ())]
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        metadata = endpoint.protection.rules.metadata_path
        if path != metadata and root and not path.startswith(root):
            path = root + path  # an ASGI server that keeps the mount prefix apart
        admitted = await endpoint.admit(scope["method"], path, headers)
        if isinstance(admitted, tuple):
            await _send_complete(send, admitted[1], admitted[2], admitted[3])
            return
        if not self._here(scope):
            await _send_complete(send, 404, [("content-type", "text/plain")], b"not found")
            return
        await self._serve(scope, receive, send, endpoint, admitted)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, endpoint: Endpoint, principal: Any) -> None:
        limit = endpoint.core.max_body_size
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if message["type"] != "http.request":
                continue
            chunk = message.get("body", b"")
            if len(body) + len(chunk) > limit:
                _, status, hdrs, payload = endpoint.core.reject_oversize()
                await _send_complete(send, status, list(hdrs) + [("connection", "close")], payload)
                return
            body += chunk
            if not message.get("more_body", False):
                break
        # Every field as received: the rules judge the values (not UTF-8: 400).
        headers = [(bytes(k).decode("latin-1"), bytes(v)) for k, v in scope.get("headers", ())]
        client = scope.get("client")
        peer = (str(client[0]), int(client[1])) if client else None
        reply = endpoint.handle_request(scope["method"], headers, bytes(body), peer, principal)
        if reply[0] == "complete":
            try:
                await _send_complete(send, reply[1], reply[2], reply[3])
            finally:
                endpoint.pump()
            return
        exchange = reply[1]
        sink = _AsgiSink(endpoint.max_buffered)
        done = asyncio.get_running_loop().create_future()
        self._responses.add(done)
        try:
            endpoint.open(exchange, sink)
            await sink.run(send, receive, endpoint, exchange)
        finally:
            self._responses.discard(done)
            if not done.done():
                done.set_result(None)
