"""The connection of a session to an asyncio transport: feeds the session what the
transport read, writes what it queued, and keeps its timer (the server's and the client's
connections, over stdio, in process and over HTTP, build on it).

A leaf of the package: the drivers (``aio``, ``_http_client``) import it, it imports none
of them.
"""

import asyncio
import threading
from typing import Any, Callable, Optional


class _Connection(asyncio.Protocol):
    """Feeds a session from a byte stream and writes what it queues; reentrancy-safe, so
    two connections may be joined in memory."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.write: Optional[Callable[[bytes], Any]] = None
        self.transport: Optional[asyncio.BaseTransport] = None
        self._pumping = False
        self._dirty = False
        self._timer: Optional[asyncio.TimerHandle] = None
        self._deadline: Optional[float] = None
        self._paused = False
        self._write_paused = False
        self._eof = False
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def set_writer(self, write: Callable[[bytes], Any]) -> None:
        self.write = write
        self.pump()

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.session.receive_data(data)
        self.pump()

    def eof_received(self) -> Optional[bool]:
        self.feed_eof()
        return None

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.feed_eof()

    def feed_eof(self) -> None:
        if not self._eof:
            self._eof = True
            self.session.receive_eof()
            self.pump()

    def pause_writing(self) -> None:
        """The transport's buffer is full: leave further bytes in the session (whose queue
        is bounded: past it, commands report the session blocked and reading pauses)."""
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self.pump()

    def flush(self) -> None:
        if self.write is None or self._write_paused:
            return  # the bytes wait in the session until they can be written
        data = self.session.data_to_send()
        if data:
            self.write(data)

    def handle_events(self) -> None:
        raise NotImplementedError

    def pump(self) -> None:
        """Handles every event, writes every byte, and re-arms the timer."""
        if self._pumping:
            self._dirty = True
            return
        self._pumping = True
        try:
            while True:
                self._dirty = False
                self.handle_events()
                self.flush()
                if not self._dirty:
                    break
        finally:
            self._pumping = False
        self._arm()
        transport = self.transport
        if transport is not None and hasattr(transport, "pause_reading"):
            wants = self.session.wants_read
            if self._paused and wants:
                self._paused = False
                transport.resume_reading()  # type: ignore[attr-defined]
            elif not self._paused and not wants and not self.session.is_closed:
                self._paused = True
                transport.pause_reading()  # type: ignore[attr-defined]

    def next_deadline(self) -> Optional[float]:
        return self.session.next_deadline()

    def on_timeout(self) -> None:
        self.session.handle_timeout()

    def _arm(self) -> None:
        # One timer, moved only earlier: firing early is harmless (handle_timeout fires what
        # is due and the timer is re-armed), and most requests only push the deadline later.
        deadline = self.next_deadline()
        if deadline is None:
            return
        if self._timer is not None and self._deadline is not None and self._deadline <= deadline:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = deadline
        self._timer = self.loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._deadline = None
        self.on_timeout()
        self.pump()

    def stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _ClientConnection(_Connection):
    """A client's connection: its events go to the client (``client._drain()``)."""

    def __init__(self, session: Any, client: Any) -> None:
        super().__init__(session)
        self.client = client

    def handle_events(self) -> None:
        self.client._drain()
