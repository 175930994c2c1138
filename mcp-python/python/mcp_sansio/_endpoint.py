"""One Streamable HTTP endpoint of a :class:`mcp_sansio.aio.Server`, driven on an asyncio
loop, whatever parses the HTTP: the Rust ``HttpServer`` (every MCP rule: both wires,
sessions, SSE, resumption, host checks, the caps), the handlers (``Dispatcher``) and the
one timer of the rules. A front end (the h11 server in ``_http``, the ASGI app in
``mcp_sansio.asgi``) hands it each request and registers a :class:`Sink` for each open
response; the endpoint routes the rules' output to the sinks.
"""

import asyncio
import inspect
import json
import logging
import threading
import time
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._core import HttpServer, JwtVerifier, Principal, ResourceServer
from . import observe
from ._dispatch import Dispatcher
from .errors import LocalProtocolError

log = logging.getLogger("mcp_sansio.http")

#: One piece of an open response: ``("head", status, headers)``, ``("body", data)`` or
#: ``("end",)``
Piece = Tuple[Any, ...]


def _reason(body: bytes) -> str:
    """The message of a JSON-RPC error body (or the OAuth error of a 403), or its size."""
    try:
        error = json.loads(body)["error"]
        return error if isinstance(error, str) else str(error["message"])
    except (ValueError, KeyError, TypeError):
        return f"({len(body)} bytes)"


VERIFY_TIMEOUT = 30.0
"""How long (seconds) an ``async`` token verifier may take; then the token is refused (401)."""


def principal_of(value: Any) -> Optional[Principal]:
    """What a token verifier returned as a :class:`Principal`: one as is; a dict or an
    object with ``subject`` (or ``sub``), ``client_id`` (or ``azp``), ``scopes`` (or
    ``scope``, space separated) and ``claims``; ``None`` stays ``None`` (an invalid token).
    ``ValueError`` when an ``expires_at`` (Unix seconds) has passed."""
    if value is None or isinstance(value, Principal):
        return value
    if isinstance(value, dict):
        get = value.get
    else:
        def get(name: str, default: Any = None) -> Any:
            return getattr(value, name, default)
    expires = get("expires_at")
    if expires is not None and float(expires) <= time.time():
        raise ValueError("the token has expired")
    scopes = get("scopes")
    if scopes is None:
        scopes = get("scope")
    return Principal(
        subject=get("subject") or get("sub"),
        client_id=get("client_id") or get("azp"),
        scopes=list(scopes.split() if isinstance(scopes, str) else scopes or []),
        claims=get("claims"),
    )


def _refusal_reason(status: int, headers: Any = ()) -> str:
    """The ``reason`` of ``mcp.server.refusals`` for an HTTP refusal, the Rust bindings' words:
    ``auth`` (401, 403), ``scope`` (403 ``insufficient_scope``), ``session`` (404),
    ``deadline`` (408), ``too_large`` (413), ``rate`` (429), ``busy`` (503), ``invalid``
    (other 4xx), ``unavailable`` (other 5xx)."""
    if status == 403:
        for name, value in headers or ():
            name = name.decode() if isinstance(name, bytes) else str(name)
            value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            if name.lower() == "www-authenticate" and "insufficient_scope" in value:
                return "scope"
        return "auth"
    known = {401: "auth", 404: "session", 408: "deadline", 413: "too_large", 429: "rate", 503: "busy"}
    if status in known:
        return known[status]
    return "invalid" if status < 500 else "unavailable"


def refused_metric(status: int, headers: Any = ()) -> None:
    """Counts an HTTP refusal in ``mcp.server.refusals`` (when metrics are on)."""
    metrics = observe._get_metrics()
    if metrics is not None:
        metrics.refused(_refusal_reason(status, headers))


class Protection:
    """A protected endpoint's gate: the resource server's rules (the metadata document,
    401 and 403 with their challenges) and the application's token verifier, run for every
    request before the rules of MCP see it."""

    def __init__(self, rules: ResourceServer, verifier: Any) -> None:
        self.rules = rules
        self.verifier = verifier

    async def verify(self, token: str) -> Union[Principal, str]:
        """The token's principal, or why it is invalid (words for the 401)."""
        verifier = self.verifier
        try:
            if isinstance(verifier, JwtVerifier):
                return verifier.verify(token, audience=self.rules.resource)
            value = verifier(token)
            if inspect.isawaitable(value):
                value = await asyncio.wait_for(value, VERIFY_TIMEOUT)
            principal = principal_of(value)
        except ValueError as e:
            return str(e) or "the token is invalid"
        except asyncio.TimeoutError:
            log.error("the token verifier took longer than %s s", VERIFY_TIMEOUT)
            return "the token could not be verified"
        except Exception as e:  # a verifier that fails refuses the token; the words stay here
            log.error("the token verifier raised %s", type(e).__name__)
            log.debug("the token verifier raised", exc_info=True)
            return "the token could not be verified"
        return "the token is invalid" if principal is None else principal

    async def admit(self, method: str, path: str, headers: List[Tuple[str, Any]]) -> Any:
        """A request's fate before the endpoint: a :class:`Principal` lets it through;
        otherwise ``("complete", status, headers, body)`` answers it (the metadata document,
        401, 403)."""
        gate = self.rules.gate(method, path, headers)
        if gate[0] == "complete":
            if gate[1] >= 400:
                log.info("%s %s refused with HTTP %d: no bearer token", method, path, gate[1])
                refused_metric(gate[1], gate[2])
            return gate
        granted = await self.verify(gate[1])
        refused = self.rules.verdict(granted)
        if refused is not None:
            reason = granted if isinstance(granted, str) else "the token lacks a required scope"
            log.info("%s refused with HTTP %d: %s", method, refused[1], reason)
            refused_metric(refused[1], refused[2])
            return refused
        return granted


class Sink:
    """Where an open response's pieces go (one per exchange, made by the front end)."""

    def deliver(self, pieces: List[Piece]) -> bool:
        """Takes the pieces the rules output for this exchange in one pass (a head with
        body pieces behind it, several events); ``False`` when the front end had to drop
        the response (the client reads too slowly, or is gone): the endpoint then tells
        the rules the exchange closed."""
        raise NotImplementedError

    def finish(self) -> None:
        """The endpoint is closing: end the response now."""
        raise NotImplementedError


class Endpoint:
    """The rules, the handlers and the timer of one MCP endpoint on one asyncio loop."""

    def __init__(
        self,
        server: Any,
        allowed_hosts: Optional[Sequence[str]] = None,
        retry: Optional[float] = None,
        keepalive: Optional[float] = None,
        edge: Optional[Dict[str, Any]] = None,
        allow_any_host: bool = False,
    ) -> None:
        edge = dict(edge or {})
        if server.node is not None:
            # The server's process name (Server(node=)) also prefixes its 2025-wire session
            # ids, unless the front end was given one of its own.
            edge.setdefault("node", server.node)
        self.core = HttpServer(
            server.config,
            allowed_hosts=list(allowed_hosts or []),
            allow_any_host=allow_any_host,
            retry=retry,
            keepalive=keepalive,
            **edge,
        )
        self.max_buffered = self.core.max_unwritten
        self.loop = asyncio.get_running_loop()
        self.sinks: Dict[int, Sink] = {}
        self.dispatcher = Dispatcher(self.core, self.pump, server.middleware)
        self._pumping = False
        self._dirty = False
        self._timer: Optional[asyncio.TimerHandle] = None
        self._deadline: Optional[float] = None
        self.server = server
        self.thread = threading.get_ident()
        self.closed = False
        #: The gate of a protected server (``Server(auth=...)``), once :meth:`protect` set it
        self.protection: Optional[Protection] = None
        if server.auth is not None and server.resource_url is not None:
            self.protect(server.resource_url)
        #: The metrics backend (``None``: metrics off, and the paths below pay one check)
        self._metrics = observe._get_metrics()
        #: The 2025-wire sessions counted in ``mcp.server.sessions.active`` so far
        self._sessions = 0
        if self._metrics is not None:
            # The 2026 wire's stateless requests share one session for the endpoint's life
            # (as the Rust bindings count it).
            self._metrics.session(1)
        #: Whether the sessions share their tasks through the server's store
        self.shares_tasks = server.store is not None
        if self.shares_tasks:
            # The store's replies arrive on its threads: they wait in the core's inbox, and
            # the first one schedules a pump on this loop.
            ref = weakref.ref(self)
            loop = self.loop

            def wake() -> None:
                endpoint = ref()
                if endpoint is None or endpoint.closed:
                    return
                try:
                    loop.call_soon_threadsafe(endpoint.pump)
                except RuntimeError:
                    pass  # the loop closed

            self.core.attach_store(server.store, wake)
            server._store_attach()
        server._live.add(self)

    def protect(self, resource_url: str) -> None:
        """Protects the endpoint as the resource ``resource_url`` with the server's ``auth``
        (its verifier), ``authorization_server`` and ``required_scopes``."""
        server = self.server
        rules = ResourceServer(resource_url, server.authorization_server, scopes=server.required_scopes)
        self.protection = Protection(rules, server.auth)
        self.core.set_resource_server(rules)
        log.info("endpoint protected: resource %s, metadata at %s", resource_url, rules.metadata_path)

    # --- what front ends call --------------------------------------------------------------

    async def admit(self, method: str, path: str, headers: List[Tuple[str, Any]]) -> Any:
        """A protected endpoint's gate (:class:`Protection`): the request's
        :class:`Principal`, or ``("complete", ...)`` to answer instead; ``None`` when the
        endpoint is not protected."""
        if self.protection is None:
            return None
        return await self.protection.admit(method, path, headers)

    def handle_request(
        self,
        method: str,
        headers: List[Tuple[str, Any]],
        body: bytes,
        peer: Optional[Tuple[str, int]],
        principal: Optional[Principal] = None,
    ) -> Tuple[Any, ...]:
        """The rules' answer to one request: ``("complete", status, headers, body)`` or
        ``("open", exchange)``; for an open one, call :meth:`open` at once. ``principal``:
        who :meth:`admit` found the request's token stands for."""
        reply = self.core.handle_request(method, headers, body, peer=peer, principal=principal)
        metrics = self._metrics
        if metrics is not None:
            metrics.received("http", len(body))
            if reply[0] == "complete":
                metrics.sent("http", len(reply[3]))
            self._count_sessions(metrics)
        if reply[0] == "complete":
            status = reply[1]
            if status >= 400:
                # The rules' reason is the JSON-RPC error's message (no header values).
                log.warning("%s refused with HTTP %d: %s", method, status, _reason(reply[3]))
                refused_metric(status, reply[2])
            elif log.isEnabledFor(logging.DEBUG):
                log.debug("%s answered with HTTP %d", method, status)
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("%s opened exchange %d", method, reply[1])
        return reply

    def open(self, exchange: int, sink: Sink) -> None:
        """Routes an open exchange's pieces to ``sink`` (and routes what is already due)."""
        self.sinks[exchange] = sink
        self.pump()

    def client_gone(self, exchange: int) -> None:
        """The client went away before the exchange's response ended."""
        if self.sinks.pop(exchange, None) is not None:
            self.core.handle_closed(exchange)
            self.pump()

    def publish(self, command: Any) -> None:
        """Runs a notify command on every session of the endpoint, on its loop."""

        def run() -> None:
            if self.closed:
                return
            try:
                command(self.core)
            except LocalProtocolError:
                pass
            self.pump()

        if self.loop.is_closed():  # its loop ended without closing it (no shutdown)
            self.close()
            return
        if threading.get_ident() == self.thread:
            run()
        else:
            self.loop.call_soon_threadsafe(run)

    def close(self) -> None:
        """Ends every open response and cancels every running handler."""
        if self.closed:
            return
        self.closed = True
        self.server._live.discard(self)
        if self.shares_tasks:
            self.server._store_detach()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.dispatcher.cancel_all()
        sinks, self.sinks = self.sinks, {}
        for sink in sinks.values():
            sink.finish()
        log.info(
            "endpoint closed: %d open responses ended, %d 2025-wire sessions forgotten",
            len(sinks), self.core.session_count,
        )
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            # Every session the endpoint held ends with it, the shared 2026 one too.
            metrics.session(-(self._sessions + 1))
            self._sessions = 0

    def _count_sessions(self, metrics: Any) -> None:
        """Moves ``mcp.server.sessions.active`` by the change in the rules' 2025-wire
        sessions (opened by ``initialize``, ended by ``DELETE``, expiry or eviction)."""
        count = self.core.session_count
        if count != self._sessions:
            metrics.session(count - self._sessions)
            self._sessions = count

    # --- driving the rules -----------------------------------------------------------------

    def pump(self) -> None:
        if self._pumping:
            self._dirty = True
            return
        if self.closed:
            return
        self._pumping = True
        try:
            while True:
                self._dirty = False
                self.dispatcher.drain()
                self._route()
                # The sessions' store operations (run in order; the replies come back
                # through the inbox, at once for a memory store) and the replies waiting.
                if self.shares_tasks and self.core.drive_store():
                    self._dirty = True
                if not self._dirty:
                    break
        finally:
            self._pumping = False
        metrics = self._metrics
        if metrics is not None:
            self._count_sessions(metrics)
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
        if self.closed:
            return
        self.core.handle_timeout()
        self.pump()

    def _route(self) -> None:
        # What the rules output for each exchange goes to its sink once per pass.
        core = self.core
        metrics = self._metrics
        pending: Dict[int, List[Piece]] = {}
        ended: List[int] = []
        try:
            while True:
                out = core.next_output()
                if out is None:
                    return
                number = out[1]
                if number not in self.sinks:
                    continue
                pieces = pending.setdefault(number, [])
                if out[0] == "head":
                    pieces.append(("head", out[2], out[3]))
                elif out[0] == "body":
                    pieces.append(("body", out[2]))
                    if metrics is not None:
                        metrics.sent("http", len(out[2]))
                else:
                    pieces.append(("end",))
                    ended.append(number)
        finally:
            for number, pieces in pending.items():
                sink = self.sinks.get(number)
                if sink is None:
                    continue
                if not sink.deliver(pieces):
                    self._cut(number)
            for number in ended:
                self.sinks.pop(number, None)

    def _cut(self, number: int) -> None:
        """A sink dropped its response: tell the rules the client is gone."""
        if self.sinks.pop(number, None) is None:
            return
        log.debug("exchange %d dropped (the client reads too slowly or is gone)", number)
        self.core.handle_closed(number)
        self._dirty = True  # the rules may have events now (2026: the request is cancelled)
