"""The Streamable HTTP server of :class:`mcp_sansio.aio.Server`: HTTP/1.1 parsed by h11
over asyncio streams, in front of the :class:`~mcp_sansio._endpoint.Endpoint` the ASGI app
drives too; every MCP rule (both wires, sessions, SSE, resumption, host checks, header
hygiene, the connection deadlines and caps) is decided by the Rust ``HttpServer``.

The connection edge, from the rules' settings: every accepted socket gets ``TCP_NODELAY``;
at most ``max_connections`` are open at once (the accept loop waits for one to close, the
next client waits in the listener's backlog); when accepting fails for lack of descriptors
the loop pauses ``accept_backoff``; a request head not complete within
``header_read_timeout`` (from the accept, or from the first byte of a later request) or a
body not complete within ``body_read_timeout`` gets 408 and the connection closes; a
kept-alive connection idle for ``keep_alive_timeout`` closes.

Two front ends parse the HTTP, with the same edge rules: plain HTTP is served by the Rust
front end (``_core.HttpFront``: hyper on a tokio current-thread runtime on a thread of its
own, which owns the listeners and the connections and hands each whole request to this
loop, in batches, through one wakeup per batch); HTTPS, and plain HTTP when asked with
``front="h11"`` (or the environment variable ``MCP_SANSIO_HTTP_FRONT=h11``, for
comparison), by h11 over asyncio streams on this loop.

HTTPS: with an ``ssl.SSLContext`` (``server_ssl_context`` makes one from a certificate and
key file) every accepted connection does the TLS handshake first, within
``header_read_timeout`` of the accept (a client that never handshakes is dropped); the
request head is then due by the same deadline."""

import asyncio
import errno
import os
import socket
import ssl
from typing import Any, Dict, List, Optional, Sequence, Tuple

import h11

from . import _core, observe
from ._endpoint import Endpoint, Piece, Sink, log

MAX_HEAD = 64 * 1024

#: What the accept loop waits out instead of retrying at full CPU
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

_LATE = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class _Late(Exception):
    """A connection's read deadline passed."""


class _Clock:
    """One connection's read deadline (the rules' ``ReadDeadline``): the head is due first,
    then the body; none while responding; then the idle one until a next request starts."""

    __slots__ = ("edge", "phase", "deadline")

    def __init__(self, edge: Any, now: float) -> None:
        self.edge = edge
        self.phase = "head"
        self.deadline: Optional[float] = now + edge.header_read_timeout

    def set(self, phase: str, now: float) -> None:
        self.phase = phase
        limit = {
            "head": self.edge.header_read_timeout,
            "body": self.edge.body_read_timeout,
            "idle": self.edge.keep_alive_timeout,
        }.get(phase)
        self.deadline = None if limit is None else now + limit


class _H11Sink(Sink):
    """One open response on an h11 connection: its pieces are encoded and written in one
    write per pass; a reader that fell behind is cut."""

    __slots__ = ("conn", "writer", "ended", "cut", "max_buffered")

    def __init__(self, conn: h11.Connection, writer: asyncio.StreamWriter, max_buffered: int) -> None:
        self.conn = conn
        self.writer = writer
        self.ended = asyncio.get_running_loop().create_future()
        self.cut = False
        self.max_buffered = max_buffered

    def deliver(self, pieces: List[Piece]) -> bool:
        conn = self.conn
        data: List[bytes] = []
        try:
            for piece in pieces:
                if piece[0] == "head":
                    headers = [(k.encode(), v.encode()) for k, v in piece[2]]
                    data.append(conn.send(h11.Response(status_code=piece[1], headers=headers)) or b"")
                elif piece[0] == "body":
                    data.append(conn.send(h11.Data(data=piece[1])) or b"")
                else:
                    data.append(conn.send(h11.EndOfMessage()) or b"")
        except (h11.LocalProtocolError, RuntimeError):
            return self._cut()
        payload = b"".join(data)
        if payload:
            # The core's rule (`HttpConfig::keeps_unwritten`): what waits unread plus this may
            # not pass the cap, but a piece behind nothing always goes (one big answer).
            unwritten = self.writer.transport.get_write_buffer_size()
            if unwritten and unwritten + len(payload) > self.max_buffered:
                # The client reads slower than the server writes: rather than buffer without
                # bound, end this response (a 2025-wire client resumes the stream).
                return self._cut()
            try:
                self.writer.write(payload)
            except (ConnectionError, RuntimeError):
                return self._cut()
        if pieces and pieces[-1][0] == "end":
            self.finish()
        return True

    def _cut(self) -> bool:
        """Drops the connection (the endpoint then tells the rules the client is gone)."""
        self.cut = True
        self.writer.transport.abort()
        self.finish()
        return False

    def finish(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


class _H11Front:
    """The h11 server's connections, in front of an :class:`Endpoint` at one path."""

    def __init__(self, endpoint: Endpoint, path: str) -> None:
        self.endpoint = endpoint
        self.core = endpoint.core
        self.loop = endpoint.loop
        self.path = path

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, accepted: Optional[float] = None
    ) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        clock = _Clock(self.core, self.loop.time() if accepted is None else accepted)
        peername = writer.get_extra_info("peername")
        # The in-flight caps count per connection and per client address.
        peer = (str(peername[0]), int(peername[1])) if isinstance(peername, tuple) and len(peername) >= 2 else None
        try:
            while True:
                event = await self._next(conn, reader, clock)
                if isinstance(event, h11.Request):
                    clock.set("body", self.loop.time())
                    keep = await self._request(conn, reader, writer, event, clock, peer)
                    if not keep:
                        break
                    if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                        conn.start_next_cycle()
                        clock.set("idle", self.loop.time())
                    else:
                        break
                else:
                    break
        except _Late:
            if clock.phase in ("head", "body"):
                writer.write(_LATE)
                try:
                    await asyncio.wait_for(writer.drain(), 5)
                except (ConnectionError, asyncio.TimeoutError):
                    pass
        except h11.RemoteProtocolError as e:
            # A request h11 refuses (such as two Host fields): 400 with the rules' JSON-RPC
            # error, then close.
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                _, status, hdrs, payload = self.core.reject_malformed(str(e))
                hdrs = [(k.encode(), v.encode()) for k, v in hdrs]
                hdrs += [(b"Content-Length", str(len(payload)).encode()), (b"Connection", b"close")]
                head = f"HTTP/1.1 {status} Bad Request\r\n".encode()
                head += b"".join(k + b": " + v + b"\r\n" for k, v in hdrs) + b"\r\n"
                writer.write(head + payload)
                try:
                    await asyncio.wait_for(writer.drain(), 5)
                except (ConnectionError, asyncio.TimeoutError):
                    pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _next(self, conn: h11.Connection, reader: asyncio.StreamReader, clock: Optional[_Clock] = None) -> Any:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if clock is None or clock.deadline is None:
                    data = await reader.read(65536)
                else:
                    left = clock.deadline - self.loop.time()
                    if left <= 0:
                        raise _Late()
                    try:
                        data = await asyncio.wait_for(reader.read(65536), left)
                    except asyncio.TimeoutError:
                        raise _Late() from None
                    if data and clock.phase == "idle":
                        clock.set("head", self.loop.time())
                conn.receive_data(data)
                continue
            return event

    async def _request(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        request: h11.Request,
        clock: _Clock,
        peer: Optional[Tuple[str, int]] = None,
    ) -> bool:
        target = request.target.decode("latin-1").split("?", 1)[0]
        method = request.method.decode("ascii")
        # Every field as received (h11 keeps repeated fields): the rules judge the values
        # (bytes that are not UTF-8, two Host fields: 400).
        headers = [(k.decode("latin-1"), bytes(v)) for k, v in request.headers]
        body = bytearray()
        limit = self.core.max_body_size
        oversize = False
        while True:
            event = await self._next(conn, reader, clock)
            if isinstance(event, h11.Data):
                if len(body) + len(event.data) > limit:
                    oversize = True
                    break
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            else:
                return False
        clock.set("responding", self.loop.time())
        principal = None
        if self.endpoint.protection is not None and not oversize:
            # A protected server: the metadata document, or the token's verdict, first.
            admitted = await self.endpoint.admit(method, target, headers)
            if isinstance(admitted, tuple):
                self._write_complete(conn, writer, admitted[1], admitted[2], admitted[3])
                await writer.drain()
                return True
            principal = admitted
        if target != self.path:
            self._write_complete(conn, writer, 404, [("Content-Type", "text/plain")], b"not found")
            await writer.drain()
            return not oversize
        if oversize:
            _, status, hdrs, payload = self.core.reject_oversize()
            self._write_complete(conn, writer, status, hdrs, payload)
            await writer.drain()
            return False
        reply = self.endpoint.handle_request(method, headers, bytes(body), peer, principal)
        if reply[0] == "complete":
            self._write_complete(conn, writer, reply[1], reply[2], reply[3])
            self.endpoint.pump()
            # Flow control: the next request on this connection is read only once the client
            # took this response (pipelined requests cannot pile up responses here).
            await writer.drain()
            return True
        exchange = reply[1]
        ex = _H11Sink(conn, writer, self.endpoint.max_buffered)
        self.endpoint.open(exchange, ex)
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
                self.endpoint.client_gone(exchange)
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
        pieces = [conn.send(h11.Response(status_code=status, headers=hdrs))]
        if body:
            pieces.append(conn.send(h11.Data(data=body)))
        pieces.append(conn.send(h11.EndOfMessage()))
        writer.write(b"".join(p for p in pieces if p))  # head and body in one write


class _RustSink(Sink):
    """One open response on a connection of the Rust front end: its pieces go to the
    connection's thread in one call per pass (``HttpFront.send`` applies the
    ``max_buffered`` rule and says whether the response still stands)."""

    __slots__ = ("owner", "id")

    def __init__(self, owner: "_RustFront", rid: int) -> None:
        self.owner = owner
        self.id = rid

    def deliver(self, pieces: List[Piece]) -> bool:
        ok: bool = self.owner.front.send(self.id, pieces)
        if not ok or (pieces and pieces[-1][0] == "end"):
            self.owner.open.pop(self.id, None)
        return ok

    def finish(self) -> None:
        self.owner.open.pop(self.id, None)
        self.owner.front.finish(self.id)


class _RustFront:
    """The loop's side of the Rust front end (``_core.HttpFront``): drains its queue of
    whole requests on each wakeup and answers each through the :class:`Endpoint`, as
    :class:`_H11Front` does."""

    def __init__(self, endpoint: Endpoint, path: str, front: Any) -> None:
        self.endpoint = endpoint
        self.core = endpoint.core
        self.loop = endpoint.loop
        self.path = path
        self.front = front
        #: The request ids of open responses, with their exchange
        self.open: Dict[int, int] = {}
        #: Requests whose client left while their token was being verified
        self.left: set = set()
        self.tasks: set = set()
        self.fd: int = front.wake_fd
        self.loop.add_reader(self.fd, self.on_wake)

    def on_wake(self) -> None:
        for event in self.front.take():
            kind = event[0]
            try:
                if kind == "request":
                    self._request(event)
                elif kind == "gone":
                    exchange = self.open.pop(event[1], None)
                    if exchange is not None:
                        self.endpoint.client_gone(exchange)
                    else:
                        self.left.add(event[1])
                else:
                    metrics = observe._get_metrics()
                    if metrics is not None:
                        metrics.connection("http", event[1])
            except Exception:  # one request's failure is that request's 500, not the loop's
                log.exception("the HTTP front end failed on a %s event", kind)
                if kind == "request":
                    self.front.respond(event[1], 500, [], b"", True)

    def _request(self, event: Tuple[Any, ...]) -> None:
        _, rid, method, path, headers, body, peer, oversize = event
        if self.endpoint.protection is not None and not oversize:
            # A protected server: the metadata document, or the token's verdict, first.
            task = self.loop.create_task(self._protected(rid, method, path, headers, body, peer))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            return
        self._answer(rid, method, path, headers, body, peer, oversize, None)

    async def _protected(
        self, rid: int, method: str, path: str, headers: List[Tuple[str, Any]], body: bytes, peer: Any
    ) -> None:
        admitted = await self.endpoint.admit(method, path, headers)
        if isinstance(admitted, tuple):
            self.left.discard(rid)
            self.front.respond(rid, admitted[1], admitted[2], admitted[3])
            return
        self._answer(rid, method, path, headers, body, peer, False, admitted)

    def _answer(
        self,
        rid: int,
        method: str,
        path: str,
        headers: List[Tuple[str, Any]],
        body: bytes,
        peer: Any,
        oversize: bool,
        principal: Any,
    ) -> None:
        if self.left and rid in self.left:
            self.left.discard(rid)
            return  # its client is gone: nothing to answer
        front = self.front
        if path != self.path:
            front.respond(rid, 404, [("Content-Type", "text/plain")], b"not found", oversize)
            return
        if oversize:
            _, status, hdrs, payload = self.core.reject_oversize()
            front.respond(rid, status, hdrs, payload, True)
            return
        reply = self.endpoint.handle_request(method, headers, body, peer, principal)
        if reply[0] == "complete":
            front.respond(rid, reply[1], reply[2], reply[3])
            self.endpoint.pump()
            return
        exchange = reply[1]
        self.open[rid] = exchange
        self.endpoint.open(exchange, _RustSink(self, rid))

    def close(self) -> None:
        """Stops the front end's thread (joined) after the endpoint ended every response."""
        try:
            self.loop.remove_reader(self.fd)
        except (RuntimeError, ValueError, OSError):
            pass  # the loop closed
        for task in self.tasks:
            task.cancel()
        self.front.close()
        self.open.clear()


class HttpServerHandle:
    """A running Streamable HTTP endpoint: ``url``, ``port``; stop it with :meth:`aclose`."""

    def __init__(
        self, endpoint: Endpoint, listeners: List[socket.socket], host: str, port: int, path: str, tls: bool = False
    ) -> None:
        self._endpoint = endpoint
        self._listeners = listeners
        self._accepts: List["asyncio.Task[None]"] = []
        self._connections: set = set()
        #: The Rust front end, when it serves the connections
        self._rust: Optional[_RustFront] = None
        self.host = host
        self.port = port
        shown = f"[{host}]" if ":" in host else host
        self.url = f"{'https' if tls else 'http'}://{shown}:{port}{path}"

    async def aclose(self) -> None:
        """Stops listening, ends open responses and cancels running handlers (with the
        Rust front end: its thread stops and is joined)."""
        if self._rust is not None:
            self._endpoint.close()
            rust, self._rust = self._rust, None
            rust.close()
            tasks = list(rust.tasks)
            await asyncio.gather(*tasks, return_exceptions=True)
            return
        for task in self._accepts:
            task.cancel()
        await asyncio.gather(*self._accepts, return_exceptions=True)
        for listener in self._listeners:
            listener.close()
        self._endpoint.close()
        for t in list(self._connections):
            t.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def __aenter__(self) -> "HttpServerHandle":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def server_ssl_context(
    certfile: Optional["os.PathLike[str] | str"] = None,
    keyfile: Optional["os.PathLike[str] | str"] = None,
    password: Optional[str] = None,
    context: Optional[ssl.SSLContext] = None,
) -> Optional[ssl.SSLContext]:
    """The TLS context of an HTTPS server: ``context`` as given, or one serving the
    certificate chain of ``certfile`` (PEM, the server's certificate first) with the key of
    ``keyfile`` (or of ``certfile``); ``None`` for plain HTTP."""
    if context is not None:
        if certfile is not None or keyfile is not None:
            raise ValueError("pass ssl_certfile=/ssl_keyfile= or ssl_context=, not both")
        if not isinstance(context, ssl.SSLContext):
            raise TypeError(f"ssl_context must be an ssl.SSLContext, not {type(context).__name__}")
        return context
    if certfile is None:
        if keyfile is not None:
            raise ValueError("ssl_keyfile= needs ssl_certfile=")
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(os.fspath(certfile), None if keyfile is None else os.fspath(keyfile), password)
    except (ssl.SSLError, OSError) as e:
        raise ValueError(f"cannot load the TLS certificate {os.fspath(certfile)!r} (key {keyfile!r}): {e}") from e
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


async def serve_http(
    server: Any,
    host: str,
    port: int,
    path: str,
    allowed_hosts: Optional[Sequence[str]],
    retry: Optional[float] = None,
    keepalive: Optional[float] = None,
    edge: Optional[Dict[str, Any]] = None,
    tls: Optional[ssl.SSLContext] = None,
    front_end: Optional[str] = None,
) -> HttpServerHandle:
    if front_end is None:
        front_end = os.environ.get("MCP_SANSIO_HTTP_FRONT") or None
    if front_end not in (None, "rust", "h11"):
        raise ValueError(f"front must be 'rust' or 'h11', not {front_end!r}")
    endpoint = Endpoint(server, allowed_hosts, retry, keepalive, edge)
    loop = asyncio.get_running_loop()
    # Every address the host names (as asyncio.start_server binds), on one port.
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    if tls is None and front_end != "h11" and hasattr(_core, "HttpFront"):
        try:
            rust = _core.HttpFront(
                endpoint.core,
                [(info[4][0], port) for info in infos],
                count_connections=observe._get_metrics() is not None,
            )
        except BaseException:
            endpoint.close()
            raise
        handle = HttpServerHandle(endpoint, [], host, rust.port, path)
        if server.auth is not None and endpoint.protection is None:
            endpoint.protect(handle.url)
        handle._rust = _RustFront(endpoint, path, rust)
        return handle
    front = _H11Front(endpoint, path)
    listeners: List[socket.socket] = []
    try:
        for family, kind, proto, _, address in infos:
            if listeners:
                address = (address[0], listeners[0].getsockname()[1]) + tuple(address[2:])
            listener = socket.socket(family, kind, proto)
            listeners.append(listener)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
            listener.listen(1024)
            listener.setblocking(False)
    except OSError:
        for listener in listeners:
            listener.close()
        raise
    bound = listeners[0].getsockname()[1]
    handle = HttpServerHandle(endpoint, listeners, host, bound, path, tls is not None)
    if server.auth is not None and endpoint.protection is None:
        # Protected, without a resource URL of its own: this endpoint's URL is the resource.
        endpoint.protect(handle.url)
    handshake_timeout = endpoint.core.header_read_timeout if endpoint.core.header_read_timeout > 0 else None
    slots = asyncio.Semaphore(max(1, endpoint.core.max_connections))
    backoff = endpoint.core.accept_backoff

    async def on_connection(sock: socket.socket) -> None:
        task = asyncio.current_task()
        if task is not None:
            handle._connections.add(task)
        writer: Optional[asyncio.StreamWriter] = None
        accepted = loop.time()
        try:
            reader = asyncio.StreamReader(limit=MAX_HEAD)
            protocol = asyncio.StreamReaderProtocol(reader)
            if tls is None:
                transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock=sock)
            else:
                # The handshake is part of the head's deadline: a client that never
                # completes it is dropped after header_read_timeout.
                transport, _ = await asyncio.wait_for(
                    loop.connect_accepted_socket(
                        lambda: protocol, sock=sock, ssl=tls, ssl_handshake_timeout=handshake_timeout
                    ),
                    handshake_timeout,
                )
            writer = asyncio.StreamWriter(transport, protocol, reader, loop)
            metrics = observe._get_metrics()
            if metrics is None:
                await front.serve(reader, writer, accepted)
            else:
                metrics.connection("http", 1)
                try:
                    await front.serve(reader, writer, accepted)
                finally:
                    metrics.connection("http", -1)
        except asyncio.CancelledError:
            if writer is not None:
                writer.close()
            else:
                sock.close()
        except (OSError, asyncio.TimeoutError):
            # Refused TLS handshakes and ones that took too long end here too.
            sock.close()
        finally:
            if task is not None:
                handle._connections.discard(task)
            slots.release()

    async def accept(listener: socket.socket) -> None:
        while True:
            # A free slot first: beyond max_connections, clients wait in the backlog.
            await slots.acquire()
            try:
                sock, _ = await loop.sock_accept(listener)
            except OSError as e:
                slots.release()
                if e.errno in _OUT_OF_RESOURCES:
                    # Out of descriptors: wait for connections to close (the read
                    # deadlines close the ones that hold them) instead of spinning.
                    await asyncio.sleep(backoff)
                continue
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            loop.create_task(on_connection(sock))

    handle._accepts = [loop.create_task(accept(listener)) for listener in listeners]
    return handle
