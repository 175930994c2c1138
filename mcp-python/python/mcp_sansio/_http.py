"""The Streamable HTTP front end of :class:`mcp_sansio.aio.Server`: HTTP/1.1 parsed by h11
over asyncio streams; every MCP rule (both wires, sessions, SSE, resumption, host checks)
is decided by the Rust ``HttpServer``."""

import asyncio
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import h11

from ._core import HttpServer
from ._dispatch import Dispatcher
from .errors import LocalProtocolError

MAX_HEAD = 64 * 1024


class _Exchange:
    """One open response: where its pieces go, and whether it ended."""

    __slots__ = ("conn", "writer", "ended", "cut")

    def __init__(self, conn: h11.Connection, writer: asyncio.StreamWriter) -> None:
        self.conn = conn
        self.writer = writer
        self.ended = asyncio.get_running_loop().create_future()
        self.cut = False


class _Endpoint:
    def __init__(
        self,
        server: Any,
        path: str,
        allowed_hosts: Optional[Sequence[str]],
        retry: Optional[float],
        max_buffered: int,
        keepalive: Optional[float] = None,
        limits: Optional[Dict[str, int]] = None,
    ) -> None:
        self.path = path
        self.core = HttpServer(
            server.config,
            allowed_hosts=list(allowed_hosts or []),
            retry=retry,
            keepalive=keepalive,
            **(limits or {}),
        )
        self.max_buffered = max_buffered
        self.loop = asyncio.get_running_loop()
        self.exchanges: Dict[int, _Exchange] = {}
        self.dispatcher = Dispatcher(server, self.core, self.pump)
        self._pumping = False
        self._dirty = False
        self._timer: Optional[asyncio.TimerHandle] = None
        self._deadline: Optional[float] = None
        self.server = server
        self.thread = threading.get_ident()
        server._live.add(self)

    def publish(self, command: Any) -> None:
        """Runs a notify command on every session of the endpoint, on its loop."""

        def run() -> None:
            try:
                command(self.core)
            except LocalProtocolError:
                pass
            self.pump()

        if threading.get_ident() == self.thread:
            run()
        else:
            self.loop.call_soon_threadsafe(run)

    def pump(self) -> None:
        if self._pumping:
            self._dirty = True
            return
        self._pumping = True
        try:
            while True:
                self._dirty = False
                self.dispatcher.drain()
                self._route()
                if not self._dirty:
                    break
        finally:
            self._pumping = False
        deadline = self.core.next_deadline()
        if deadline is None or (self._timer is not None and self._deadline is not None and self._deadline <= deadline):
            return  # one timer, moved only earlier (firing early is harmless)
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = deadline
        self._timer = self.loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._deadline = None
        self.core.handle_timeout()
        self.pump()

    def _route(self) -> None:
        core = self.core
        while True:
            out = core.next_output()
            if out is None:
                return
            number = out[1]
            ex = self.exchanges.get(number)
            if ex is None:
                continue
            try:
                if out[0] == "head":
                    headers = [(k.encode(), v.encode()) for k, v in out[3]]
                    ex.writer.write(ex.conn.send(h11.Response(status_code=out[2], headers=headers)))
                elif out[0] == "body":
                    ex.writer.write(ex.conn.send(h11.Data(data=out[2])))
                else:
                    ex.writer.write(ex.conn.send(h11.EndOfMessage()))
                    del self.exchanges[number]
                    if not ex.ended.done():
                        ex.ended.set_result(None)
                    continue
            except (h11.LocalProtocolError, ConnectionError, RuntimeError):
                self._cut(number, ex)
                continue
            if ex.writer.transport.get_write_buffer_size() > self.max_buffered:
                # The client reads slower than the server writes: rather than buffer without
                # bound, end this response (a 2025-wire client resumes the stream).
                self._cut(number, ex)

    def _cut(self, number: int, ex: _Exchange) -> None:
        """Drops an open response's connection and tells the rules the client is gone."""
        self.exchanges.pop(number, None)
        ex.cut = True
        ex.writer.transport.abort()
        self.core.handle_closed(number)
        self._dirty = True  # the rules may have events now (2026: the request is cancelled)
        if not ex.ended.done():
            ex.ended.set_result(None)

    def close(self) -> None:
        self.server._live.discard(self)
        if self._timer is not None:
            self._timer.cancel()
        self.dispatcher.cancel_all()
        for ex in self.exchanges.values():
            if not ex.ended.done():
                ex.ended.set_result(None)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        peername = writer.get_extra_info("peername")
        # The in-flight caps count per connection and per client address.
        peer = (str(peername[0]), int(peername[1])) if isinstance(peername, tuple) and len(peername) >= 2 else None
        try:
            while True:
                event = await self._next(conn, reader)
                if isinstance(event, h11.Request):
                    keep = await self._request(conn, reader, writer, event, peer)
                    if not keep:
                        break
                    if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                        conn.start_next_cycle()
                    else:
                        break
                else:
                    break
        except (h11.RemoteProtocolError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _next(self, conn: h11.Connection, reader: asyncio.StreamReader) -> Any:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                continue
            return event

    async def _request(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        request: h11.Request,
        peer: Optional[Tuple[str, int]] = None,
    ) -> bool:
        target = request.target.decode("latin-1").split("?", 1)[0]
        method = request.method.decode("ascii")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]
        body = bytearray()
        limit = self.core.max_body_size
        oversize = False
        while True:
            event = await self._next(conn, reader)
            if isinstance(event, h11.Data):
                if len(body) + len(event.data) > limit:
                    oversize = True
                    break
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            else:
                return False
        if target != self.path:
            self._write_complete(conn, writer, 404, [("Content-Type", "text/plain")], b"not found")
            await writer.drain()
            return not oversize
        if oversize:
            _, status, hdrs, payload = self.core.reject_oversize()
            self._write_complete(conn, writer, status, hdrs, payload)
            await writer.drain()
            return False
        reply = self.core.handle_request(method, headers, bytes(body), peer=peer)
        if reply[0] == "complete":
            self._write_complete(conn, writer, reply[1], reply[2], reply[3])
            self.pump()
            # Flow control: the next request on this connection is read only once the client
            # took this response (pipelined requests cannot pile up responses here).
            await writer.drain()
            return True
        exchange = reply[1]
        ex = _Exchange(conn, writer)
        self.exchanges[exchange] = ex
        self.pump()
        if not ex.ended.done():
            gone = asyncio.ensure_future(reader.read(1))
            try:
                await asyncio.wait({ex.ended, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not gone.done():
                    gone.cancel()
                    # Let the read unwind before anything reads this connection again
                    # (asyncio allows one waiting reader at a time).
                    await asyncio.wait({gone})
                if not gone.cancelled():
                    gone.exception()  # retrieved: a reset connection is just "gone"
            more = gone.result() if not gone.cancelled() and gone.exception() is None else b""
            if more:
                # A pipelined request: keep its first byte for the parser and wait for this
                # response to end (reading no further: the next request waits its turn).
                conn.receive_data(more)
                if not ex.ended.done():
                    await ex.ended
            if not ex.ended.done():
                # The client went away: end the exchange.
                if self.exchanges.pop(exchange, None) is not None:
                    self.core.handle_closed(exchange)
                    self.pump()
                return False
        if ex.cut:
            return False
        await writer.drain()
        return True

    @staticmethod
    def _write_complete(
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        status: int,
        headers: List[Tuple[str, str]],
        body: bytes,
    ) -> None:
        hdrs = [(k.encode(), v.encode()) for k, v in headers]
        hdrs.append((b"Content-Length", str(len(body)).encode()))
        writer.write(conn.send(h11.Response(status_code=status, headers=hdrs)))
        if body:
            writer.write(conn.send(h11.Data(data=body)))
        writer.write(conn.send(h11.EndOfMessage()))


class HttpServerHandle:
    """A running Streamable HTTP endpoint: ``url``, ``port``; stop it with :meth:`aclose`."""

    def __init__(self, endpoint: _Endpoint, server: asyncio.AbstractServer, host: str, port: int, path: str) -> None:
        self._endpoint = endpoint
        self._server = server
        self._connections: set = set()
        self.host = host
        self.port = port
        self.url = f"http://{host}:{port}{path}"

    async def aclose(self) -> None:
        """Stops listening, ends open responses and cancels running handlers."""
        self._server.close()
        self._endpoint.close()
        for t in list(self._connections):
            t.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def __aenter__(self) -> "HttpServerHandle":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


async def serve_http(
    server: Any,
    host: str,
    port: int,
    path: str,
    allowed_hosts: Optional[Sequence[str]],
    retry: Optional[float] = None,
    max_buffered: int = 4 * 1024 * 1024,
    keepalive: Optional[float] = None,
    limits: Optional[Dict[str, int]] = None,
) -> HttpServerHandle:
    endpoint = _Endpoint(server, path, allowed_hosts, retry, max_buffered, keepalive, limits)
    handle: Optional[HttpServerHandle] = None

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if handle is not None and task is not None:
            handle._connections.add(task)
        try:
            await endpoint.serve(reader, writer)
        except asyncio.CancelledError:
            writer.close()
        finally:
            if handle is not None and task is not None:
                handle._connections.discard(task)

    listener = await asyncio.start_server(on_connection, host, port)
    bound = listener.sockets[0].getsockname()[1]
    handle = HttpServerHandle(endpoint, listener, host, bound, path)
    return handle
