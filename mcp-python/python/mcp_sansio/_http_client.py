"""The Streamable HTTP client of :class:`mcp_sansio.aio.Client`: each HTTP request the Rust
``HttpClientTransport`` plans is performed with h11 over an asyncio connection, and its
response reported back; which requests to make and what responses mean is decided in
Rust (``mcp_sansio::http::ClientTransport``)."""

import asyncio
import socket
import urllib.parse
from typing import Any, Dict, Optional, Tuple

import h11

from ._core import HttpClientTransport
from .aio import _ClientConnection


def _split(url: str) -> Tuple[str, int, str]:
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http":
        raise ValueError(f"only http:// URLs are supported, not {url!r}")
    host = u.hostname or "127.0.0.1"
    port = u.port or 80
    target = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return host, port, target


class _HttpClientConnection(_ClientConnection):
    def __init__(self, session: Any, client: Any, url: str) -> None:
        super().__init__(session, client)
        self.rules = HttpClientTransport()
        self.host, self.port, self.target = _split(url)
        self.authority = f"{self.host}:{self.port}"
        self.streams: Dict[int, "asyncio.Task[None]"] = {}
        self.write = lambda data: None  # requests go out through `flush`

    def flush(self) -> None:
        rules = self.rules
        rules.pull(self.session)
        while True:
            request = rules.next_request()
            if request is None:
                break
            stream = request[0]
            self.streams[stream] = self.loop.create_task(self._perform(*request))
        while True:
            stream = rules.next_abort()
            if stream is None:
                break
            task = self.streams.pop(stream, None)
            if task is not None:
                task.cancel()

    def next_deadline(self) -> Optional[float]:
        times = [t for t in (self.session.next_deadline(), self.rules.next_deadline(self.session)) if t is not None]
        return min(times) if times else None

    def on_timeout(self) -> None:
        self.session.handle_timeout()
        self.rules.handle_timeout(self.session)

    async def _perform(self, stream: int, method: str, headers: Any, body: bytes) -> None:
        writer = None
        rules, session = self.rules, self.session
        head = False
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
            sock = writer.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # asyncio's default too
            conn = h11.Connection(h11.CLIENT)
            hdrs = [("Host", self.authority)] + list(headers)
            if method == "POST":
                hdrs.append(("Content-Length", str(len(body))))
            pieces = [conn.send(h11.Request(method=method, target=self.target, headers=hdrs))]
            if body:
                pieces.append(conn.send(h11.Data(data=body)))
            pieces.append(conn.send(h11.EndOfMessage()))
            writer.write(b"".join(p for p in pieces if p))  # the request in one write
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                    continue
                if isinstance(event, h11.Response):
                    head = True
                    fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
                    rules.handle_head(stream, event.status_code, fields, session)
                elif isinstance(event, h11.Data):
                    rules.handle_body(stream, bytes(event.data), session)
                elif isinstance(event, h11.EndOfMessage):
                    rules.handle_end(stream, session)
                    self.streams.pop(stream, None)
                    self.pump()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    raise ConnectionError("the server closed the connection")
                else:
                    continue
                self.pump()
        except asyncio.CancelledError:
            return  # aborted: the rules already know
        except (OSError, h11.ProtocolError, ConnectionError) as e:
            self.streams.pop(stream, None)
            if head:
                # The body broke off: the end of what arrived. The rules decide: an event
                # stream with an event id is resumed (GET with Last-Event-ID after the
                # server's retry delay, at next_deadline), anything else fails its request.
                rules.handle_end(stream, session)
            else:
                rules.handle_failed(stream, str(e) or type(e).__name__, session)
            self.pump()
        finally:
            if writer is not None:
                writer.close()

    async def close_http(self) -> None:
        delete = self.rules.close()
        for task in list(self.streams.values()):
            task.cancel()
        self.streams.clear()
        if delete is not None:
            task = self.loop.create_task(self._perform(*delete))
            try:
                await asyncio.wait_for(task, 2)
            except (asyncio.TimeoutError, Exception):
                pass
        self.session.close()
        self.pump()


async def connect_http(cls: Any, url: str, **options: Any) -> Any:
    client = cls(**options)
    conn = _HttpClientConnection(client.session, client, url)
    client._conn = conn
    client._closer = conn.close_http
    return client
