"""asyncio drivers: a decorator-based :class:`Server` (stdio, Streamable HTTP, in process)
and a :class:`Client` (child process over stdio, Streamable HTTP, in process).

No anyio, no task groups: each connection is a protocol object that feeds the Rust
session from ``data_received`` and writes what it queued; handlers run as asyncio tasks
(sync handlers on worker threads: ``mcp_sansio._threads``). When the peer goes away every handler still
running is cancelled and every pending call fails with ``ConnectionClosed``.
"""

import asyncio
import atexit
import collections
import logging
import os
import signal
import ssl
import sys
import threading
import time
import weakref
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _schema, _typed, observe
from ._core import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    Catalog,
    ClientSession,
    JwtVerifier,
    Principal,
    ServerConfig,
    ServerSession,
    TaskStore,
    decode_signal,
    legacy_listen_granted,
    legacy_listen_wants,
    list_changed_signal,
    resource_updated_signal,
)
from ._connection import _ClientConnection, _Connection
from ._dispatch import Context, Dispatcher, Handler, Headers, _middleware_step, _same
from ._typed import ElicitResult
from .types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
    Result,
    ServerCapabilities,
    result_for,
)
from .errors import (
    ConnectError,
    ConnectionClosed,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    SubscriptionLost,
)
from .events import (
    Closed,
    InputRequired,
    Notification,
    Progress,
    Ready,
    RequestFailed,
    Response,
    SessionRenewed,
    TaskStatus,
)

__all__ = [
    "Server",
    "Context",
    "Client",
    "ServerConnection",
    "Subscription",
    "AsgiApp",
    "ElicitResult",
    "TaskStore",
    "Principal",
    "JwtVerifier",
    "Headers",
    "OutboundRequest",
]

_log = logging.getLogger("mcp_sansio.server")
_client_log = logging.getLogger("mcp_sansio.client")


#: The servers hearing a store: their subscriptions end at exit, before the interpreter does
#: (the store's threads then call no Python any more)
_SUBSCRIBED: "weakref.WeakSet[Server]" = weakref.WeakSet()


@atexit.register
def _close_subscriptions() -> None:
    for server in list(_SUBSCRIBED):
        subscription, server._store_subscription = server._store_subscription, None
        if subscription is not None:
            subscription.close()


class Server:
    """An MCP server: register tools, resources, prompts and a completion handler with
    decorators, then serve over stdio (:meth:`serve_stdio`), Streamable HTTP
    (:meth:`serve_http`, or :meth:`asgi_app` inside an ASGI app) or in process
    (:meth:`Client.connect_in_process`).

    ::

        server = Server("demo", "1.0")

        @server.tool(description="Adds two numbers")
        def add(a: float, b: float) -> float:
            return a + b

        asyncio.run(server.serve_stdio())

    Handlers may be ``async def`` (run as tasks, cancelled when the client cancels) or plain
    functions (run in a worker thread). A parameter annotated :class:`Context` (or named
    ``ctx``) receives the request's context: progress, logging, input, tasks.

    ``tasks=True`` lets handlers answer with a task (:meth:`Context.run_as_task`; declares
    2025-11-25 ``tasks`` and the 2026 tasks extension). ``resource_subscriptions=True``
    declares ``resources.subscribe`` and ``list_changed=True`` declares ``listChanged``;
    publish changes with :meth:`notify_resource_updated` and :meth:`notify_list_changed`.
    Registering (or :meth:`remove_tool`, :meth:`remove_resource`, :meth:`remove_prompt`)
    while serving changes what every connected client sees, and tells them when
    ``listChanged`` is declared. ``capabilities`` adds to (or overrides) what is declared.

    ``state_key`` (32 bytes) signs the state of 2026 input requests; without one the server
    makes its own, enough for one process (several processes serving one endpoint must
    share one). Logs go to the ``mcp_sansio.server`` logger (and ``mcp_sansio.http``).

    Several processes behind one load balancer: ``store`` (``"redis://HOST:PORT"``, or a
    :class:`TaskStore`: ``TaskStore.redis(url)``, ``TaskStore.memory()`` shared by servers
    of one process) shares their tasks and changes. A task started through one process is
    read (``tasks/get``), given input and cancelled through the others; a running task's
    record is renewed every third of ``lease`` (seconds, 10 unless given) and reads
    ``failed`` once its process stopped renewing it; :meth:`notify_list_changed` and
    :meth:`notify_resource_updated` reach the clients of every process. ``node`` names this
    process (in task records, and before every 2025-wire session id for sticky routing; a
    random name unless given). A store that cannot be reached fails the affected requests
    with an error naming it (``task store``), and serves again once it is back. Only the
    HTTP endpoints share tasks; a stdio connection's tasks stay its own.

    Who is calling: ``auth`` protects :meth:`serve_http` and :meth:`asgi_app` (OAuth 2.1,
    the server as a protected resource). It verifies each request's bearer token: a
    :class:`~mcp_sansio.JwtVerifier`, or a function (sync or ``async``) taking the token and
    returning its :class:`~mcp_sansio.Principal` (or a dict or object with ``subject``,
    ``client_id``, ``scopes``, ``claims``; ``None`` or an exception for an invalid token).
    ``resource_url`` is the endpoint's URL, the resource identifier tokens must be issued for
    (:meth:`serve_http` defaults to its own URL; a ``JwtVerifier`` made without
    ``audience`` checks ``aud`` against it); ``authorization_server`` the issuer clients get
    tokens from; ``required_scopes`` the scopes every request needs. A request without a
    valid token gets 401 with a ``WWW-Authenticate`` challenge naming the Protected Resource
    Metadata, which is served at ``/.well-known/oauth-protected-resource`` plus the
    endpoint's path. Handlers read the caller from their :class:`Context` (``principal``,
    ``headers``, ...). ``scopes=[...]`` on a decorator requires them of the caller: over HTTP
    a caller without them gets 403 with the ``insufficient_scope`` step-up challenge, over
    stdio the JSON-RPC error -32003; ``hide_forbidden=True`` leaves such entries out of the
    caller's lists. A task is visible only to the principal that created it.

    Around each request for the tools, resources, prompts and completions, the lists and
    the catalog's refusals included: ``middleware`` (see :attr:`middleware` and
    :meth:`use`). Traces
    and metrics: :mod:`mcp_sansio.observe` (OpenTelemetry when installed; nothing to set up).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: Optional[str] = None,
        instructions: Optional[str] = None,
        logging: bool = True,
        request_timeout: Optional[float] = 60.0,
        state_key: Optional[bytes] = None,
        tasks: bool = False,
        resource_subscriptions: bool = False,
        list_changed: bool = False,
        capabilities: Optional[Dict[str, Any]] = None,
        store: Optional[Union[str, TaskStore]] = None,
        node: Optional[str] = None,
        lease: Optional[float] = None,
        auth: Any = None,
        resource_url: Optional[str] = None,
        authorization_server: Optional[str] = None,
        required_scopes: Optional[Sequence[str]] = None,
        hide_forbidden: bool = False,
        middleware: Optional[Sequence[Callable[..., Any]]] = None,
    ) -> None:
        if auth is not None and not callable(auth):
            raise TypeError(f"auth must be a JwtVerifier or a function of the token, not {type(auth).__name__}")
        if auth is not None and authorization_server is None:
            raise ValueError("auth needs authorization_server= (the issuer clients get tokens from)")
        if isinstance(required_scopes, str):
            required_scopes = required_scopes.split()
        #: Verifies the bearer tokens of the HTTP endpoints (``None``: not protected)
        self.auth = auth
        self.resource_url = resource_url
        self.authorization_server = authorization_server
        self.required_scopes: List[str] = list(required_scopes or [])
        self.hide_forbidden = hide_forbidden
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.logging = logging
        self.request_timeout = request_timeout
        self.state_key = state_key
        # The key that signs 2026 request state (MRTR): the one given, else one of this
        # process, kept across catalog rebuilds (a retry may arrive after a registration).
        # Several processes serving one endpoint must share one: pass state_key.
        self._state_key = state_key if state_key is not None else os.urandom(32)
        self.tasks = tasks
        self.resource_subscriptions = resource_subscriptions
        self.list_changed = list_changed
        self.capabilities = capabilities
        self._live: set = set()  # connections and HTTP endpoints, for the notify commands
        if isinstance(store, str):
            store = TaskStore.redis(store)
        elif store is not None and not isinstance(store, TaskStore):
            raise TypeError(f"store must be a redis:// URL or a TaskStore, not {type(store).__name__}")
        #: Where the HTTP endpoints share their tasks and changes (``None``: they keep them)
        self.store: Optional[TaskStore] = store
        # This process's name among the ones sharing the store (and the 2025-wire session
        # ids' prefix).
        self.node = node if node is not None else (os.urandom(4).hex() if store is not None else None)
        self.lease = lease
        self._store_users = 0  # endpoints attached to the store
        self._store_subscription: Any = None
        #: The one registry: every tool, resource, template and prompt with its scopes and
        #: its handler (the core's catalog; requests routed to an entry carry its handler)
        self.catalog = Catalog()
        self._config: Optional[ServerConfig] = None
        #: The middleware around each request for the server's tools, resources, prompts
        #: and completions (``tools/call``, ``resources/read``, ``prompts/get``,
        #: ``completion/complete``, and the lists ``tools/list``, ``resources/list``,
        #: ``resources/templates/list``, ``prompts/list``), over every transport and in both
        #: eras; the first is the outermost. Each is
        #: ``async def mw(ctx, call_next)`` (or a plain ``def``, run in a worker thread,
        #: whose ``call_next(ctx)`` blocks): ``ctx`` is the request's :class:`Context` (the
        #: one the handler gets: :attr:`~Context.method`, :attr:`~Context.name`,
        #: :attr:`~Context.arguments`, :attr:`~Context.principal`, :attr:`~Context.headers`,
        #: :attr:`~Context.meta`, ...). It returns ``await call_next(ctx)`` (the result
        #: dict, a tool's failure as an ``isError`` result), a result of its own (shaped as
        #: the handler's return value is), or raises :class:`McpError` to answer with that
        #: error; any other exception answers the request with -32603 (the server goes
        #: on).
        #:
        #: The requests the catalog answers without a handler go through it too: the lists
        #: (``ctx.name`` is ``None``) and a call it refuses (an unknown tool, resource or
        #: prompt, arguments failing the tool's schema, missing scopes, invalid params).
        #: There ``call_next(ctx)`` returns the catalog's answer (a schema failure is an
        #: ``isError`` result) or raises its refusal as :class:`McpError`; what the
        #: middleware returns or raises is what the client gets. Outside the chain:
        #: ``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe`` and
        #: ``unsubscribe``, ``subscriptions/listen``, ``tasks/*``, and what an HTTP endpoint
        #: refuses before a session sees it (401, the per-entry 403, its caps).
        #:
        #: Append to it (or use :meth:`use`) at any time, also while serving: each
        #: connection reads it before each request. An empty list costs nothing (the
        #: catalog then answers the lists and its refusals in Rust, with no trip through
        #: Python).
        self.middleware: List[Callable[..., Any]] = list(middleware or [])

    def use(self, middleware: Callable[..., Any]) -> Callable[..., Any]:
        """Adds a middleware after (inside) the ones already there; returns it, so it
        works as a decorator::

            @server.use
            async def audit(ctx, call_next):
                started = time.monotonic()
                result = await call_next(ctx)
                log.info("%s %s by %s: %.1f ms", ctx.method, ctx.name,
                         ctx.principal, (time.monotonic() - started) * 1000)
                return result
        """
        if not callable(middleware):
            raise TypeError(f"a middleware is a function (ctx, call_next), not {type(middleware).__name__}")
        self.middleware.append(middleware)
        return middleware

    # --- registration --------------------------------------------------------------------

    def tool(
        self,
        name: Optional[str] = None,
        *,
        description: Optional[str] = None,
        title: Optional[str] = None,
        input_schema: Optional[Dict[str, Any]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        annotations: Optional[Dict[str, Any]] = None,
        task_support: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers a tool. Its input schema comes from the signature unless given; the
        description defaults to the docstring. The return value becomes the result: a str
        is text, a dict is JSON text plus ``structuredContent``, a dict with ``content`` is
        a ``CallToolResult`` as is. An exception becomes an ``isError`` result; raise
        :class:`McpError` for a JSON-RPC error instead.

        Typed tools: parameters annotated with a dataclass, ``TypedDict``, ``Enum`` or
        pydantic model (nested in lists, dicts, ``Optional`` too) get their schema and
        receive instances; a return annotation with a model in it (or ``dict[str, X]``,
        ``list[X]``) derives ``outputSchema`` and fills ``structuredContent`` (wrapped as
        ``{"result": ...}`` when not an object), with its JSON as the text block.

        ``task_support`` (``"optional"``, ``"required"`` or ``"forbidden"``, the default)
        is the tool's ``execution.taskSupport``: whether a client may (or must) offer to run
        the call as a task, which the handler then accepts with
        :meth:`Context.run_as_task` (needs ``Server(tasks=True)``). A ``"required"`` tool's
        handler calls it first thing: without the offer it raises :class:`McpError` (-32021,
        naming the tasks extension), which answers the call when left uncaught.

        ``scopes``: what the caller's access token must grant to call it (see
        :class:`Server`: 403 ``insufficient_scope`` over HTTP, -32003 over stdio)."""
        if task_support not in (None, "forbidden", "optional", "required"):
            raise ValueError(f"task_support must be 'optional', 'required' or 'forbidden', not {task_support!r}")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            schema, ctx = _schema.signature_schema(fn, Context)
            run, output = _typed.typed_tool(fn, Context, output_schema)
            tool: Dict[str, Any] = {"name": name or fn.__name__, "inputSchema": input_schema or schema}
            desc = description or inspect_doc(fn)
            if desc:
                tool["description"] = desc
            if title:
                tool["title"] = title
            if output:
                tool["outputSchema"] = output
            if annotations:
                tool["annotations"] = annotations
            if task_support:
                tool["execution"] = {"taskSupport": task_support}
            self.catalog.add_tool(tool, Handler(run, ctx), scopes)
            self._changed("tools")
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        title: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers a resource, or a resource template when ``uri`` has ``{variables}``
        (the reader then gets them as keyword arguments). The reader returns str (text),
        bytes (a blob), or a ``ReadResourceResult`` dict; a parameter named ``uri`` receives
        the URI read. ``scopes``: what the caller's token must grant to read it."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            ctx = _schema.context_param(fn, Context)
            import inspect as _inspect

            wants_uri = "uri" in _inspect.signature(fn).parameters
            entry: Dict[str, Any] = {"name": name or fn.__name__}
            desc = description or inspect_doc(fn)
            if desc:
                entry["description"] = desc
            if mime_type:
                entry["mimeType"] = mime_type
            if title:
                entry["title"] = title
            handler = Handler(fn, ctx, "uri" if wants_uri else None, mime_type)
            self.catalog.add_resource(uri, entry, handler, scopes)
            self._changed("resources")
            return fn

        return register

    def prompt(
        self,
        name: Optional[str] = None,
        *,
        description: Optional[str] = None,
        title: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers a prompt; its arguments come from the signature (parameters without a
        default are required). It returns a str (one user message), a list of messages, or
        a ``GetPromptResult`` dict. ``scopes``: what the caller's token must grant to get it."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            schema, ctx = _schema.signature_schema(fn, Context)
            required = set(schema.get("required", []))
            prompt: Dict[str, Any] = {
                "name": name or fn.__name__,
                "arguments": [
                    {"name": arg, "required": arg in required} for arg in schema["properties"]
                ],
            }
            desc = description or inspect_doc(fn)
            if desc:
                prompt["description"] = desc
            if title:
                prompt["title"] = title
            self.catalog.add_prompt(prompt, Handler(fn, ctx), scopes)
            self._changed("prompts")
            return fn

        return register

    def set_state_key(self, key: bytes) -> None:
        """Sets ``state_key`` (32 bytes; ``ValueError`` otherwise) after construction, before
        serving, e.g. from a command line: several processes behind one endpoint share one,
        since a client's retry of a 2026 input request may reach another process."""
        if len(key) != 32:
            raise ValueError("state_key must be 32 bytes")
        self.state_key = bytes(key)
        self._state_key = bytes(key)
        self._config = None

    def completion(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Registers the ``completion/complete`` handler: ``fn(ref, argument, context)``
        returns a list of values (or a ``CompleteResult`` dict)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.catalog.set_completion(Handler(fn, _schema.context_param(fn, Context)))
            self._config = None
            return fn

        return register

    @property
    def config(self) -> ServerConfig:
        """The compiled catalog and capabilities (rebuilt after a registration)."""
        if self._config is None:
            self._config = ServerConfig(
                self.name,
                self.version,
                title=self.title,
                instructions=self.instructions,
                catalog=self.catalog,
                tasks=self.tasks,
                logging=self.logging,
                request_timeout=self.request_timeout,
                state_key=self._state_key,
                resource_subscriptions=self.resource_subscriptions,
                list_changed=self.list_changed,
                capabilities=self.capabilities,
                node=self.node if self.store is not None else None,
                lease=self.lease,
                hide_forbidden=self.hide_forbidden,
            )
        return self._config

    # --- changing the catalog at run time -------------------------------------------------

    def remove_tool(self, name: str) -> bool:
        """Removes a tool (``False`` if there was none): the next ``tools/list`` of every
        connected client no longer shows it, a call of it is refused as unknown, and, with
        ``list_changed=True``, clients are told (``notifications/tools/list_changed``). A
        call already running goes on. Registering a tool with the decorator while serving
        works the same way. Safe to call from any thread."""
        if not self.catalog.remove_tool(name):
            return False
        self._changed("tools")
        return True

    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or resource template (by its URI or template), as
        :meth:`remove_tool` removes a tool."""
        if not self.catalog.remove_resource(uri):
            return False
        self._changed("resources")
        return True

    def remove_prompt(self, name: str) -> bool:
        """Removes a prompt, as :meth:`remove_tool` removes a tool."""
        if not self.catalog.remove_prompt(name):
            return False
        self._changed("prompts")
        return True

    def _changed(self, kind: str) -> None:
        """The catalog changed: rebuild it; while serving, every connection and endpoint
        serves the new one, and clients are told if ``listChanged`` is declared."""
        self._config = None
        if not self._live:
            return
        config = self.config
        self._publish(lambda core: core.set_catalog(config))
        if config.declares_list_changed(kind):
            self._publish(lambda core: core.notify_list_changed(kind))
            self._tell_others(list_changed_signal, kind)
        _log.info("the %s changed at run time (%d live connections or endpoints)", kind, len(self._live))

    # --- publishing changes ----------------------------------------------------------------

    def notify_list_changed(self, kind: str) -> None:
        """Tells every connected client that a list changed (``"tools"``, ``"prompts"`` or
        ``"resources"``): legacy clients directly, 2026 clients on the ``subscriptions/listen``
        streams that asked for it. Needs ``list_changed=True`` (raises
        :class:`LocalProtocolError` otherwise). Safe to call from any thread."""
        if not self.config.declares_list_changed(kind):  # ValueError for an unknown list
            raise LocalProtocolError(f"the server does not declare {kind}.listChanged (list_changed=True)")
        self._publish(lambda core: core.notify_list_changed(kind))
        self._tell_others(list_changed_signal, kind)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells the clients subscribed to ``uri`` (or to a parent of it) that it changed:
        legacy ``resources/subscribe`` and 2026 listen streams naming it. Safe to call from
        any thread."""
        self._publish(lambda core: core.notify_resource_updated(uri))
        self._tell_others(resource_updated_signal, uri)

    def _publish(self, command: Callable[[Any], Any]) -> None:
        for live in list(self._live):
            live.publish(command)

    # --- sharing through a store ------------------------------------------------------------

    def _tell_others(self, signal: Callable[[str, str], str], what: str) -> None:
        """Publishes a change to the other processes sharing the store (none: nothing)."""
        if self.store is not None and self.node is not None:
            self.store.publish(signal(self.node, what))

    def _store_attach(self) -> None:
        """An endpoint shares its tasks: hear what every process publishes while one does."""
        self._store_users += 1
        if self._store_subscription is None and self.store is not None:
            ref = weakref.ref(self)

            def deliver(text: str) -> None:  # any thread (the store's), with the GIL
                server = ref()
                if server is not None:
                    server._store_message(text)

            self._store_subscription = self.store.subscribe(deliver)
            _SUBSCRIBED.add(self)

    def _store_detach(self) -> None:
        self._store_users -= 1
        if self._store_users <= 0 and self._store_subscription is not None:
            subscription, self._store_subscription = self._store_subscription, None
            subscription.close()

    def _store_message(self, text: str) -> None:
        """A message of the store, from any thread (Live::attach_store's rule): changes
        raised on another process reach this one's connections; task signals reach the
        HTTP endpoints' sessions. Always handed to each one's loop, never run here: the
        message may come from inside a store operation of this very process."""
        signal = decode_signal(text)
        if signal is None:
            return
        what, origin, arg = signal
        if what == "task":
            command: Callable[[Any], Any] = lambda core: core.handle_store_signal(text)
            targets = [live for live in list(self._live) if getattr(live, "shares_tasks", False)]
        elif origin == self.node:
            return  # raised here, and told here already
        else:
            if what == "list_changed":
                command = lambda core: core.notify_list_changed(arg)
            else:
                command = lambda core: core.notify_resource_updated(arg)
            targets = list(self._live)
        for live in targets:
            try:
                live.loop.call_soon_threadsafe(live.publish, command)
            except RuntimeError:
                pass  # its loop closed

    # --- serving -------------------------------------------------------------------------

    async def serve_stdio(self, *, principal: Optional[Principal] = None) -> None:
        """Serves one client over this process's stdin and stdout until it closes them.

        ``principal``: who the client is, if the application knows (it launched the process
        for a user): handlers see it, scoped entries check its scopes, tasks are bound to it.
        Without one, a scoped entry is refused (-32003)."""
        loop = asyncio.get_running_loop()
        conn = ServerConnection(self, principal=principal)
        r_transport, _ = await loop.connect_read_pipe(lambda: conn, sys.stdin.buffer)
        _small_reads(r_transport)

        class _Writer(asyncio.Protocol):
            # flow control: a client that reads slowly pauses the session's output
            def pause_writing(self) -> None:
                conn.pause_writing()

            def resume_writing(self) -> None:
                conn.resume_writing()

        w_transport, _ = await loop.connect_write_pipe(_Writer, sys.stdout.buffer)
        conn.set_writer(w_transport.write)
        await conn.wait_closed()
        w_transport.close()

    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        *,
        allowed_hosts: Optional[Sequence[str]] = None,
        retry: Optional[float] = None,
        max_buffered: Optional[int] = None,
        keepalive: Optional[float] = None,
        header_read_timeout: Optional[float] = None,
        body_read_timeout: Optional[float] = None,
        keep_alive_timeout: Optional[float] = None,
        max_connections: Optional[int] = None,
        accept_backoff: Optional[float] = None,
        max_sessions: Optional[int] = None,
        max_in_flight: Optional[int] = None,
        max_in_flight_per_peer: Optional[int] = None,
        max_in_flight_per_connection: Optional[int] = None,
        node: Optional[str] = None,
        ssl_certfile: Optional[Union[str, "os.PathLike[str]"]] = None,
        ssl_keyfile: Optional[Union[str, "os.PathLike[str]"]] = None,
        ssl_keyfile_password: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        front: Optional[str] = None,
    ) -> "HttpServerHandle":
        """Starts serving Streamable HTTP (both wires) at ``http://host:port/path``; returns
        once listening. ``port=0`` picks a free port (see ``handle.port``).

        ``retry`` is the reconnection delay (seconds) sent to 2025-wire clients with every
        event stream (default 1 s): a client whose stream broke resumes it with
        ``Last-Event-ID`` after it. ``max_buffered`` (the Rust ``HttpConfig::max_unwritten``,
        1 MiB unless given) bounds the bytes written to one connection but not yet taken by
        the client: responses wait for the client to read (``drain``), and an event stream
        whose reader falls that far behind is cut (its connection closes; on the 2026 wire
        that cancels the request, a 2025-wire client resumes the stream from the server's
        bounded replay buffer). ``keepalive``:
        a response quiet for that long (seconds; 15 unless given, 0 never) gets an SSE
        comment, so proxies keep long calls open and a closed response is noticed (and its
        call cancelled) within that time.

        The connection edge (seconds; the Rust ``HttpConfig`` defaults unless given):
        ``header_read_timeout`` (10: a request head must be complete this long after the
        accept, or after a later request's first byte, else 408), ``body_read_timeout`` (30:
        the body after its head, else 408), ``keep_alive_timeout`` (60: an idle kept-alive
        connection closes), ``max_connections`` (1024 open at once; the next waits in the
        backlog), ``accept_backoff`` (0.1: the accept loop's pause when out of file
        descriptors). Every accepted socket gets ``TCP_NODELAY``.

        Caps (each ``None`` keeps the default): ``max_sessions`` 2025-wire sessions (1024; at
        the cap the least recently used idle session is closed for a new client, and only
        when every session is busy does ``initialize`` get 503); requests in progress on
        both wires: ``max_in_flight`` in all (4096; past it 503 with ``Retry-After``),
        ``max_in_flight_per_peer`` from one client address (1024; an IPv6 /64 counts as one;
        past it 429 with ``Retry-After``), ``max_in_flight_per_connection`` from one
        connection (128; past it 429).

        ``node`` (1 to 32 of ``A-Z a-z 0-9 _ -``; ``ValueError`` otherwise) names this process
        among several behind a load balancer: every 2025-wire session id is then
        ``<node>.<hex>``, so a proxy routes each session to it (the repository's
        ``deploy/nginx/mcp.conf``). The processes share one ``state_key`` (see :class:`Server`).

        HTTPS: ``ssl_certfile`` (PEM: the certificate, then its chain) and ``ssl_keyfile``
        (its key, unless in ``ssl_certfile``; ``ssl_keyfile_password`` if encrypted), or an
        ``ssl_context`` of your own (``ssl.Purpose.CLIENT_AUTH``); ``handle.url`` is then
        ``https://...``. The TLS handshake must be done within ``header_read_timeout`` of
        the accept, together with the request head; a client that never handshakes is
        dropped.

        ``front`` picks what parses the HTTP (the rules above are the same for both):
        ``"rust"`` (the default for plain HTTP: a Rust HTTP/1.1 front end, hyper on a thread
        of its own, owns the sockets and hands each whole request to this loop) or
        ``"h11"`` (HTTP parsed by h11 on this loop; always used for HTTPS). ``None`` takes
        the environment variable ``MCP_SANSIO_HTTP_FRONT`` (``rust`` or ``h11``) if set. On
        a platform without the Rust front end (Windows) plain HTTP uses h11."""
        from ._http import serve_http, server_ssl_context

        tls = server_ssl_context(ssl_certfile, ssl_keyfile, ssl_keyfile_password, ssl_context)

        options = {
            k: v
            for k, v in {
                "header_read_timeout": header_read_timeout,
                "body_read_timeout": body_read_timeout,
                "keep_alive_timeout": keep_alive_timeout,
                "max_connections": max_connections,
                "accept_backoff": accept_backoff,
                "max_sessions": max_sessions,
                "max_in_flight": max_in_flight,
                "max_in_flight_per_peer": max_in_flight_per_peer,
                "max_in_flight_per_connection": max_in_flight_per_connection,
                "max_unwritten": max_buffered,
                "node": node,
            }.items()
            if v is not None
        }
        return await serve_http(
            self, host, port, path, allowed_hosts, retry, keepalive, options, tls, front
        )

    def asgi_app(
        self,
        *,
        path: Optional[str] = None,
        allowed_hosts: Optional[Sequence[str]] = None,
        allow_any_host: bool = False,
        retry: Optional[float] = None,
        keepalive: Optional[float] = None,
        max_body_size: Optional[int] = None,
        max_buffered: Optional[int] = None,
        max_sessions: Optional[int] = None,
        max_in_flight: Optional[int] = None,
        max_in_flight_per_peer: Optional[int] = None,
        max_in_flight_per_connection: Optional[int] = None,
        node: Optional[str] = None,
    ) -> "AsgiApp":
        """The Streamable HTTP endpoint (both wires) as an ASGI application, for uvicorn or
        hypercorn, or mounted in Starlette or FastAPI::

            mcp = server.asgi_app()
            app = FastAPI(lifespan=mcp.lifespan)
            app.mount("/mcp", mcp)          # serves http://host/mcp/

        ``path=None`` answers every path the enclosing router hands it (its mount point);
        ``path="/mcp"`` answers only there (relative to ``root_path``), for serving the app
        alone. ``allowed_hosts`` adds to the host names a request's ``Host`` may carry
        (``localhost``, ``127.0.0.1``, ``[::1]``: DNS rebinding protection);
        ``allow_any_host=True`` turns the check off (behind a proxy that checks it).
        ``max_body_size`` bounds a POST body (4 MiB unless given; past it 413);
        ``retry``, ``keepalive``, ``max_buffered``, the caps and ``node`` are
        :meth:`serve_http`'s.
        The connection deadlines are the ASGI server's. See :class:`mcp_sansio.asgi.AsgiApp`
        for lifespan."""
        from .asgi import AsgiApp

        options = {
            k: v
            for k, v in {
                "max_body_size": max_body_size,
                "max_sessions": max_sessions,
                "max_in_flight": max_in_flight,
                "max_in_flight_per_peer": max_in_flight_per_peer,
                "max_in_flight_per_connection": max_in_flight_per_connection,
                "max_unwritten": max_buffered,
                "node": node,
            }.items()
            if v is not None
        }
        return AsgiApp(
            self,
            path=path,
            allowed_hosts=allowed_hosts,
            allow_any_host=allow_any_host,
            retry=retry,
            keepalive=keepalive,
            options=options,
        )

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        path: str = "/mcp",
        ssl_certfile: Optional[Union[str, "os.PathLike[str]"]] = None,
        ssl_keyfile: Optional[Union[str, "os.PathLike[str]"]] = None,
    ) -> None:
        """Blocking entry point: ``asyncio.run`` of :meth:`serve_stdio` or of
        :meth:`serve_http` (HTTPS with ``ssl_certfile`` and ``ssl_keyfile``) until
        interrupted."""
        if transport == "stdio":
            asyncio.run(self.serve_stdio())
        elif transport in ("http", "streamable-http"):

            async def main() -> None:
                handle = await self.serve_http(host, port, path, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile)
                try:
                    await asyncio.Event().wait()
                finally:
                    await handle.aclose()

            try:
                asyncio.run(main())
            except KeyboardInterrupt:
                pass
        else:
            raise ValueError(f"unknown transport {transport!r}")


def inspect_doc(fn: Callable[..., Any]) -> Optional[str]:
    """The first paragraph of a function's docstring."""
    doc = (fn.__doc__ or "").strip()
    return doc.split("\n\n")[0].strip() or None if doc else None


#: Seconds a server's handlers may still run after the client closed its side (EOF on
#: stdin) to write the answers they owe; then they are cancelled
EOF_GRACE = 1.5


def _counted_writer(write: Callable[[bytes], Any], metrics: Any) -> Callable[[bytes], Any]:
    def counted(data: bytes) -> Any:
        metrics.sent("stream", len(data))
        return write(data)

    return counted


_READ_SIZE = 64 * 1024


def _small_reads(transport: Any) -> None:
    """Reads a pipe in 64 KiB chunks instead of asyncio's 256 KiB: each read allocates its
    whole size, and glibc serves an allocation that large with ``mmap`` (then ``mremap`` to
    the bytes read, and ``munmap``), three system calls a message on a stdio session that
    were about a sixth of its time."""
    if transport is not None and hasattr(transport, "max_size"):
        transport.max_size = _READ_SIZE


class ServerConnection(_Connection):
    """One client connection of a :class:`Server` over a byte stream."""

    def __init__(self, server: Server, *, principal: Optional[Principal] = None) -> None:
        super().__init__(ServerSession(server.config))
        if principal is not None:
            self.session.set_principal(principal)
        self.server = server
        self.dispatcher = Dispatcher(self.session, self.pump, server.middleware)
        server._live.add(self)
        self._metrics = observe._get_metrics()
        if self._metrics is not None:
            # A byte-stream connection is one session (mcp.server.sessions.active).
            self._metrics.connection("stream", 1)
            self._metrics.session(1)
            # Counts what is read (mcp.bytes.received); without metrics the class's own
            # data_received runs, with nothing added.
            self.data_received = self._counted_data_received  # type: ignore[method-assign]

    def _counted_data_received(self, data: bytes) -> None:
        metrics = self._metrics
        if metrics is not None:
            metrics.received("stream", len(data))
        _Connection.data_received(self, data)

    def set_writer(self, write: Callable[[bytes], Any]) -> None:
        metrics = self._metrics
        if metrics is not None:
            # Counts what is written (mcp.bytes.sent); without metrics the writer is as given.
            write = _counted_writer(write, metrics)
        super().set_writer(write)

    def handle_events(self) -> None:
        self.dispatcher.drain()
        if self.session.is_closed:
            self.server._live.discard(self)


    def publish(self, command: Callable[[Any], Any]) -> None:
        """Runs a notify command on this connection's session, on its loop."""

        def run() -> None:
            if self.session.is_closed:
                return
            try:
                command(self.session)
            except LocalProtocolError:
                pass  # closed meanwhile, or the transmit queue is full
            self.pump()

        if threading.get_ident() == self.thread:
            run()
        else:
            self.loop.call_soon_threadsafe(run)

    def feed_eof(self) -> None:
        if self._eof:
            return
        super().feed_eof()
        if self.session.is_closed:
            self._ended()
            return
        # The client closed its side with requests still running. A stdio client does that
        # to end the server, and it still reads the answers owed: the handlers get
        # EOF_GRACE seconds to finish (the session closes by itself after the last answer),
        # then the ones still running are cancelled and the session ends, before a client
        # that waits the spec's "reasonable time" sends SIGTERM.
        self.loop.call_later(EOF_GRACE, self._end_after_eof)

    def _end_after_eof(self) -> None:
        if not self.session.is_closed:
            self.session.close()
            self.pump()
        self._ended()

    def _ended(self) -> None:
        self.server._live.discard(self)
        self.dispatcher.cancel_all()
        self.dispatcher.closed.set()
        metrics, self._metrics = self._metrics, None
        if metrics is not None:
            metrics.connection("stream", -1)
            metrics.session(-1)

    async def wait_closed(self) -> None:
        """Waits until the client closed the connection and every handler finished."""
        await self.dispatcher.closed.wait()
        self.stop_timer()


# --- the client ------------------------------------------------------------------------------

ProgressCallback = Callable[[float, Optional[float], Optional[str]], Any]
from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from .auth import OAuth  # noqa: F401
TaskStatusCallback = Callable[[str, Optional[str]], Any]


def _forget(task: "asyncio.Future[Any]") -> None:
    """Done callback of the client's helper tasks: retrieves their outcome, so nothing is
    reported as "never retrieved" (callback errors are dropped, see ``Client._spawn``)."""
    if not task.cancelled():
        task.exception()
InputHandler = Callable[[Dict[str, Any]], Any]


def _signal_status(number: int) -> str:
    """`signal: 9 (SIGKILL)`, as Rust's `ExitStatus` says it"""
    try:
        return f"signal: {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal: {number}"


def _tool_of(method: str, params: Any) -> Optional[str]:
    if method == "tools/call" and isinstance(params, dict):
        name = params.get("name")
        return name if isinstance(name, str) else None
    return None


class OutboundRequest:
    """A request a :class:`Client` is about to send, as its middleware sees it:
    :attr:`method`, :attr:`params` (what the call was given, for reading: ``name`` and
    ``arguments`` of a ``tools/call``, ...), :attr:`meta` (entries to add to the request's
    ``params._meta``; the request's own entries win) and :attr:`attempt` (how many times
    ``call_next`` sent it before: 0 the first time)."""

    __slots__ = ("method", "params", "meta", "attempt")

    def __init__(self, method: str, params: Any) -> None:
        self.method = method
        self.params: Dict[str, Any] = params if isinstance(params, dict) else {}
        self.meta: Dict[str, Any] = {}
        self.attempt = 0

    def __repr__(self) -> str:
        return f"OutboundRequest({self.method!r}, {self.params!r})"


class Client:
    """An MCP client on asyncio; make one with :meth:`connect_stdio`, :meth:`connect_http`
    or :meth:`connect_in_process`, and use it as an async context manager::

        async with Client.connect_stdio(sys.executable, ["server.py"]) as client:
            print(await client.call_tool("add", {"a": 1, "b": 2}))

    Results are typed objects (:mod:`mcp_sansio.types`): ``result.content[0].text``,
    ``result.structured_content``, ``result.is_error`` (the wire's camelCase names work
    too), ``result.model_dump()`` for a plain dict; each is also the ``dict`` the server
    sent, so ``result["content"]`` and ``json.dumps(result)`` work as before. A JSON-RPC
    error answer raises :class:`McpError`; a closed connection :class:`ConnectionClosed`.

    Input the server asks for is answered by ``on_elicit(params) -> result``,
    ``on_sample(params) -> result`` (sync or async) and ``roots`` (a list of root dicts);
    declaring one declares the capability. ``on_notification(method, params)`` sees
    notifications (``notifications/message`` log lines, list changes, ...); to wait for
    changes, :meth:`listen`. ``tasks=True`` declares the 2026 tasks extension, so the
    server may run any call as a task (2025-11-25: ask per call with ``as_task=True``); a
    call run as a task still ends in one result.

    ``max_message_size`` (bytes, 64 MiB by default) is the one limit on a message from the
    server, over stdio and HTTP alike: a larger answer fails its call at once with
    :class:`InvalidResult` naming its size and the limit, instead of at the timeout.

    ``middleware``: functions around every request sent (see :attr:`middleware`). With
    OpenTelemetry installed each request runs in a ``CLIENT`` span and carries the trace
    context in its ``_meta`` (:mod:`mcp_sansio.observe`).
    """

    def __init__(
        self,
        *,
        name: str = "mcp-sansio-client",
        version: str = "0.1.0",
        era: str = "auto",
        request_timeout: Optional[float] = 60.0,
        on_elicit: Optional[InputHandler] = None,
        on_sample: Optional[InputHandler] = None,
        roots: Optional[List[Dict[str, Any]]] = None,
        on_notification: Optional[Callable[[str, Any], Any]] = None,
        capabilities: Optional[Dict[str, Any]] = None,
        tasks: bool = False,
        max_message_size: Optional[int] = None,
        middleware: Optional[Sequence[Callable[..., Any]]] = None,
    ) -> None:
        caps = dict(capabilities or {})
        if on_elicit is not None:
            caps.setdefault("elicitation", {"form": {}})
        if on_sample is not None:
            caps.setdefault("sampling", {})
        if roots is not None:
            caps.setdefault("roots", {})
        self.session = ClientSession(
            name,
            version,
            era=era,
            capabilities=caps,
            request_timeout=request_timeout,
            max_message_size=max_message_size,
            tasks=tasks,
        )
        self.on_elicit = on_elicit
        self.on_sample = on_sample
        self.roots = roots
        self.on_notification = on_notification
        self._calls: Dict[int, "asyncio.Future[Any]"] = {}
        self._progress: Dict[int, ProgressCallback] = {}
        self._task_status: Dict[int, TaskStatusCallback] = {}
        self._listeners: Dict[int, "Subscription"] = {}
        self._legacy_listeners: List["Subscription"] = []
        self._legacy_uris: "collections.Counter[str]" = collections.Counter()
        self._request_timeout = request_timeout
        self._ready: "asyncio.Future[Ready]" = asyncio.get_running_loop().create_future()
        self._closed_reason: Optional[str] = None
        self._conn = _ClientConnection(self.session, self)
        self._closer: Optional[Callable[[], Awaitable[None]]] = None
        self._tasks: set = set()
        self.server: Optional[Ready] = None
        #: The middleware around every request this client sends; the first is the
        #: outermost. Each is ``async def mw(request, call_next)`` (or a plain ``def``, run
        #: in a worker thread, whose ``call_next`` blocks): ``request`` is an
        #: :class:`OutboundRequest` (``method``, ``params``, ``meta``: ``_meta`` entries to
        #: add); it returns ``await call_next(request)`` (the result dict; an error answer
        #: raises :class:`McpError`), a result of its own, or raises. Calling ``call_next``
        #: again sends the request again (a retry). An empty list costs nothing.
        self.middleware: List[Callable[..., Any]] = list(middleware or [])

    # --- connecting ----------------------------------------------------------------------

    @classmethod
    def connect_stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stderr: Any = None,
        **options: Any,
    ) -> "_Connect":
        """Starts ``command args...`` as a child process and speaks MCP over its stdio.

        On close, its stdin is closed; it is terminated if it has not exited within two
        seconds, then killed."""

        async def start() -> "Client":
            client = cls(**options)
            loop = asyncio.get_running_loop()
            conn = client._conn

            class _Proto(asyncio.SubprocessProtocol):
                def process_exited(self) -> None:
                    conn.feed_eof()

                def pause_writing(self) -> None:
                    conn.pause_writing()

                def resume_writing(self) -> None:
                    conn.resume_writing()

            class _Stdout(asyncio.Protocol):
                # The child's stdout is a pipe of ours, read with a pipe transport of its
                # own: the subprocess transport hands each read on with `call_soon`, which
                # cost every answer a turn of the loop.
                def data_received(self, data: bytes) -> None:
                    conn.data_received(data)

                def eof_received(self) -> None:
                    conn.feed_eof()

                def connection_lost(self, exc: Optional[Exception]) -> None:
                    conn.feed_eof()

            read_fd, write_fd = os.pipe()
            try:
                try:
                    transport, _ = await loop.subprocess_exec(
                        _Proto,
                        command,
                        *args,
                        stdin=asyncio.subprocess.PIPE,
                        stdout=write_fd,
                        stderr=stderr,
                        env=env,
                        cwd=cwd,
                    )
                finally:
                    os.close(write_fd)  # the child has it; its exit is the pipe's EOF
            except OSError as e:
                os.close(read_fd)
                # The Rust bindings' words, with the program and the OS cause.
                cause = f"{os.strerror(e.errno)} (os error {e.errno})" if e.errno else str(e)
                raise ConnectError(f"could not start the server `{command}`: {cause}") from e
            except BaseException:
                os.close(read_fd)
                raise
            stdout, _ = await loop.connect_read_pipe(_Stdout, os.fdopen(read_fd, "rb", buffering=0))

            async def exited() -> Optional[Exception]:
                # A server that exits at once reads as such, with its status.
                for _ in range(100):
                    code = transport.get_returncode()
                    if code is not None:
                        status = f"exit status: {code}" if code >= 0 else _signal_status(-code)
                        return ConnectError(
                            f"the server `{command}` exited ({status}) before the handshake was done"
                        )
                    await asyncio.sleep(0.01)
                return None

            conn.exit_failure = exited
            _small_reads(stdout)
            stdin = transport.get_pipe_transport(0)
            conn.set_writer(stdin.write)

            async def close() -> None:
                if not stdin.is_closing():
                    stdin.close()
                for _ in range(200):
                    if transport.get_returncode() is not None:
                        break
                    await asyncio.sleep(0.01)
                else:
                    transport.terminate()
                    for _ in range(100):
                        if transport.get_returncode() is not None:
                            break
                        await asyncio.sleep(0.01)
                    else:
                        transport.kill()
                transport.close()
                stdout.close()

            client._closer = close
            return client

        return _Connect(start)

    @classmethod
    def connect_in_process(cls, server: Server, **options: Any) -> "_Connect":
        """Joins a client to ``server`` in memory (no pipes, no threads): for tests and
        embedding."""

        async def start() -> "Client":
            client = cls(**options)
            sconn = ServerConnection(server)
            cconn = client._conn
            cconn.set_writer(sconn.data_received)
            sconn.set_writer(cconn.data_received)

            async def close() -> None:
                sconn.feed_eof()
                cconn.feed_eof()

            client._closer = close
            return client

        return _Connect(start)

    @classmethod
    def connect_http(
        cls,
        url: str,
        *,
        headers: Optional[Union[Mapping[str, str], Sequence[Tuple[str, str]]]] = None,
        root_certificates: Any = None,
        ssl_context: Optional["ssl.SSLContext"] = None,
        proxy: Any = "env",
        connect_timeout: Optional[float] = 10.0,
        response_timeout: Optional[float] = 60.0,
        auth: Optional["OAuth"] = None,
        **options: Any,
    ) -> "_Connect":
        """Speaks Streamable HTTP to ``url`` (``http://`` or ``https://``; both wires, as
        the era picks); ``options`` are the client's (``era``, ``request_timeout``, ...).

        ``headers`` go on every request (``{"X-API-Key": key}`` or an ``Authorization:
        Bearer`` key); the core checks them: one the transport sets itself
        (``Content-Type``, ``Accept``, ``Mcp-Session-Id``, ...) raises ``ValueError``.
        Per request, ``call_tool(..., headers=...)`` and ``request(..., headers=...)``.

        ``https://`` verifies the server's certificate and host name against the platform's
        roots (``ssl.create_default_context()``, which reads ``SSL_CERT_FILE`` and
        ``SSL_CERT_DIR``) and ``root_certificates`` (PEM text or bytes, a file path, or a
        list of them); or pass your own ``ssl_context``. A failed verification raises
        :class:`~mcp_sansio.errors.CertificateError` at connect; any other failure to
        connect :class:`~mcp_sansio.errors.ConnectError` (both are ``ConnectionError``
        subclasses).

        ``proxy``: ``"env"`` (``HTTPS_PROXY`` / ``HTTP_PROXY``, unless ``NO_PROXY`` names
        the host), ``None`` (direct), or ``"http://[user:password@]host:port"``; ``https://``
        tunnels through it with ``CONNECT``. ``connect_timeout`` (seconds) bounds opening a
        connection (TCP, tunnel, TLS handshake); ``response_timeout`` a request's wait for
        its response head (``None``: no bound).

        ``auth``: an :class:`~mcp_sansio.auth.OAuth`; on a 401 (or a 403
        ``insufficient_scope``) the client authorizes (the Rust core's OAuth flow:
        discovery, registration, PKCE or client credentials, refresh, step-up, DPoP) and
        resends the request with the token. A 401 or 403 that cannot be satisfied (no
        ``auth``, or the flow failed) raises :class:`~mcp_sansio.errors.AuthorizationError`,
        one sentence with the status, the URL and the ``WWW-Authenticate`` challenge."""
        from ._http_client import connect_http

        http = dict(
            headers=headers,
            root_certificates=root_certificates,
            ssl_context=ssl_context,
            proxy=proxy,
            connect_timeout=connect_timeout,
            response_timeout=response_timeout,
            auth=auth,
        )
        return _Connect(lambda: connect_http(cls, url, **http, **options))

    async def _wait_ready(self) -> None:
        self._conn.pump()
        try:
            self.server = await self._ready
        except RemoteProtocolError:
            # An HTTP client that could not connect says why (TLS, proxy, timeout), not
            # just that the session closed.
            failure = getattr(self._conn, "connect_failure", None)
            if failure is not None:
                raise failure from None
            exited = getattr(self._conn, "exit_failure", None)
            failure = await exited() if exited is not None else None
            if failure is not None:
                raise failure from None
            if getattr(self._conn, "user_agent_running", False):
                # The handshake waited for a person: say so, not only "no answer in time".
                raise ConnectionClosed(
                    f"{self._closed_reason}: the OAuth user agent had not come back with the "
                    "redirect yet (give a login more time with request_timeout=)"
                ) from None
            raise

    # --- properties ----------------------------------------------------------------------

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version in use."""
        return self.session.version

    @property
    def server_info(self) -> Optional[Implementation]:
        """The server's ``serverInfo`` (``name``, ``version``, ``title``, ...)."""
        info = self.server.peer_info if self.server else None
        return Implementation(info) if info is not None else None

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """The server's capabilities (``server_capabilities.tools``, ...)."""
        return ServerCapabilities(self.server.capabilities if self.server else {})

    @property
    def initialize_result(self) -> Optional[InitializeResult]:
        """What the connection learned of the server (``protocol_version``,
        ``capabilities``, ``server_info``, ``instructions``), in either era; ``None`` before
        it is ready."""
        ready = self.server
        if ready is None:
            return None
        result: Dict[str, Any] = {"protocolVersion": ready.version, "capabilities": ready.capabilities or {}}
        if ready.peer_info is not None:
            result["serverInfo"] = ready.peer_info
        if ready.instructions is not None:
            result["instructions"] = ready.instructions
        return InitializeResult(result)

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions for the model."""
        return self.server.instructions if self.server else None

    # --- events --------------------------------------------------------------------------

    def _drain(self) -> None:
        session = self.session
        calls = self._calls
        while True:
            event = session.next_event()
            if event is None:
                return
            kind = type(event)
            if kind is Response:
                f = calls.pop(event.request_id, None)
                if f is not None:
                    self._progress.pop(event.request_id, None)
                    self._task_status.pop(event.request_id, None)
                    if not f.done():
                        f.set_result(event.result)
                else:
                    sub = self._listeners.pop(event.request_id, None)
                    if sub is not None:
                        sub._end(None)  # the server ended the subscription
            elif kind is RequestFailed:
                f = calls.pop(event.request_id, None)
                if f is not None:
                    self._progress.pop(event.request_id, None)
                    self._task_status.pop(event.request_id, None)
                    if not f.done():
                        f.set_exception(event.error)
                else:
                    sub = self._listeners.pop(event.request_id, None)
                    if sub is not None:
                        sub._end(event.error)
            elif kind is TaskStatus:
                cb = self._task_status.get(event.request_id)
                if cb is not None:
                    self._spawn(cb, event.status, event.message)
            elif kind is Progress:
                cb = self._progress.get(event.request_id)
                if cb is not None:
                    self._spawn(cb, event.progress, event.total, event.message)
            elif kind is InputRequired:
                t = asyncio.ensure_future(self._answer_input(event))
                self._tasks.add(t)
                t.add_done_callback(self._tasks.discard)
                t.add_done_callback(_forget)
            elif kind is Notification:
                if self.on_notification is not None:
                    self._spawn(self.on_notification, event.method, event.params)
                if event.subscription_id is not None:
                    sub = self._listeners.get(event.subscription_id)
                    if sub is not None:
                        sub._deliver(event)
                else:
                    for sub in list(self._legacy_listeners):
                        sub._deliver(event)
            elif kind is Ready:
                if not self._ready.done():
                    info = event.peer_info or {}
                    _client_log.info(
                        "connected to %r %s: %s era, version %s",
                        info.get("name"), info.get("version") or "", event.era, event.version,
                    )
                    self._ready.set_result(event)
            elif kind is SessionRenewed:
                # The core started a new session after a 404 and re-sent the refused calls;
                # resource subscriptions of the old session are gone.
                _client_log.warning(
                    "session renewed: the server forgot the session (HTTP 404), a new one was started "
                    "(version %s); resource subscriptions must be made again",
                    event.version,
                )
            elif kind is Closed:
                if self._closed_reason is None:
                    _client_log.info("connection closed: %s", event.reason)
                self._closed_reason = event.reason
                if not self._ready.done():
                    # An HTTP 401 or 403 that ended the handshake: AuthorizationError.
                    self._ready.set_exception(session.close_error or ConnectionClosed(event.reason))
                for f in calls.values():
                    if not f.done():
                        f.set_exception(ConnectionClosed(event.reason))
                calls.clear()
                subs = list(self._listeners.values()) + self._legacy_listeners
                self._listeners.clear()
                self._legacy_listeners.clear()
                for sub in subs:
                    sub._end(ConnectionClosed(event.reason))

    def _spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Runs a callback; a coroutine it returns runs as a task. What a callback raises is
        dropped (it must not break the connection)."""
        try:
            r = fn(*args)
        except Exception:
            return
        if asyncio.iscoroutine(r):
            t = asyncio.ensure_future(r)
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)
            t.add_done_callback(_forget)

    async def _answer_input(self, event: InputRequired) -> None:
        responses: Dict[str, Any] = {}
        try:
            for key, request in event.requests.items():
                method = request.get("method")
                params = request.get("params") or {}
                if method == "elicitation/create" and self.on_elicit is not None:
                    r = self.on_elicit(params)
                elif method == "sampling/createMessage" and self.on_sample is not None:
                    r = self.on_sample(params)
                elif method == "roots/list" and self.roots is not None:
                    r = {"roots": list(self.roots)}
                else:
                    self.session.refuse_input(event.input_id, METHOD_NOT_FOUND, f"{method} is not supported")
                    self._conn.pump()
                    return
                if asyncio.iscoroutine(r):
                    r = await r
                responses[key] = r
            self.session.provide_input(event.input_id, responses)
        except LocalProtocolError:
            pass
        except Exception as e:
            try:
                self.session.refuse_input(event.input_id, INTERNAL_ERROR, str(e))
            except LocalProtocolError:
                pass
        self._conn.pump()

    # --- requests ------------------------------------------------------------------------

    async def _call(
        self,
        request_id: int,
        progress: Optional[ProgressCallback] = None,
        task_status: Optional["TaskStatusCallback"] = None,
    ) -> Any:
        future = self._conn.loop.create_future()
        self._calls[request_id] = future
        if progress is not None:
            self._progress[request_id] = progress
        if task_status is not None:
            self._task_status[request_id] = task_status
        self._conn.pump()
        try:
            return await future
        except asyncio.CancelledError:
            # Our caller gave up: tell the server.
            if self.session.cancel(request_id, "cancelled by the caller"):
                self._conn.pump()
            raise

    async def _send(
        self,
        method: str,
        params: Any,
        send: Callable[[], int],
        headers: Sequence[Tuple[str, str]] = (),
        progress: Optional[ProgressCallback] = None,
        task_status: Optional["TaskStatusCallback"] = None,
    ) -> Any:
        """Sends a request (``send`` makes it in the session, returns its id) and waits for
        its result: through the middleware, in a trace span, measured, when any is on."""
        metrics = observe._recording()
        if not self.middleware and metrics is None and observe._untraced():
            return await self._call(self._sent_with(send(), list(headers)), progress, task_status)

        async def innermost(request: OutboundRequest) -> Any:
            meta = dict(request.meta)
            span = observe.client_span(request.method, request.params) if observe.TRACING else None
            if span is not None:
                for key, value in span.meta.items():
                    meta.setdefault(key, value)
            since = time.monotonic()
            try:
                if meta:
                    self.session.set_request_meta(meta)
                    try:
                        rid = send()
                    finally:
                        self.session.set_request_meta(None)
                else:
                    rid = send()
                request.attempt += 1
                result = await self._call(self._sent_with(rid, list(headers)), progress, task_status)
            except BaseException as e:
                if span is not None:
                    span.end(e)
                if metrics is not None:
                    outcome = "cancelled" if isinstance(e, asyncio.CancelledError) else "error"
                    metrics.client_ended(method, _tool_of(method, request.params), outcome, time.monotonic() - since)
                raise
            if span is not None:
                span.end()
            if metrics is not None:
                outcome = "tool_error" if isinstance(result, dict) and result.get("isError") is True else "ok"
                metrics.client_ended(method, _tool_of(method, request.params), outcome, time.monotonic() - since)
            return result

        step: Callable[[Any], Awaitable[Any]] = innermost
        for mw in reversed(self.middleware):
            step = _middleware_step(mw, step, _same, self._conn.loop)
        return await step(OutboundRequest(method, params))

    def _check_open(self) -> None:
        if self._closed_reason is not None:
            raise ConnectionClosed(self._closed_reason)

    def _headers(self, headers: Any) -> List[Tuple[str, str]]:
        """A request's own headers, checked by the core before anything is sent."""
        if not headers:
            return []
        if not hasattr(self._conn, "request_headers"):
            raise ValueError("headers= needs an HTTP connection (Client.connect_http)")
        from ._http_client import header_pairs

        return header_pairs(headers)

    def _sent_with(self, request_id: int, headers: List[Tuple[str, str]]) -> int:
        if headers:
            self._conn.request_headers(request_id, headers)  # type: ignore[attr-defined]
        return request_id

    async def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        headers: Optional[Union[Mapping[str, str], Sequence[Tuple[str, str]]]] = None,
    ) -> Result:
        """Sends any request; returns its result (the typed one of a method this library
        knows, e.g. a :class:`~mcp_sansio.types.GetTaskResult` for ``tasks/get``, else a
        :class:`~mcp_sansio.types.Result`). ``headers`` go on its HTTP request only (see
        :meth:`connect_http`)."""
        self._check_open()
        extra = self._headers(headers)
        return result_for(
            method,
            await self._send(method, params, lambda: self.session.send_request(method, params, timeout=timeout), extra),
        )

    async def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        progress_callback: Optional[ProgressCallback] = None,
        timeout: Optional[float] = None,
        as_task: bool = False,
        task_ttl: Optional[float] = None,
        on_task_status: Optional["TaskStatusCallback"] = None,
        headers: Optional[Union[Mapping[str, str], Sequence[Tuple[str, str]]]] = None,
    ) -> CallToolResult:
        """``tools/call``: returns the :class:`~mcp_sansio.types.CallToolResult`
        (``content``, ``structured_content``; a tool's own failure is a result with
        ``is_error``: check it).

        ``as_task=True`` asks a 2025-11-25 server to run the call as a task (a 2026 server
        decides by itself, for a client made with ``tasks=True``). Either way the call ends
        in one result: the session follows the task (status notifications, ``tasks/get``
        polls, the result), calling ``on_task_status(status, message)`` on every change
        (``"working"``, ``"input_required"``, ``"completed"``, ...). Cancelling the call
        cancels the task. ``timeout`` bounds the wait for the first answer (the task handle).
        ``headers`` go on this call's HTTP request only (see :meth:`connect_http`).
        """
        self._check_open()
        extra = self._headers(headers)

        def send() -> int:
            return self.session.call_tool(
                name,
                arguments,
                progress=progress_callback is not None,
                timeout=timeout,
                as_task=as_task,
                task_ttl=task_ttl,
            )

        params = {"name": name, "arguments": arguments or {}}
        return CallToolResult(await self._send("tools/call", params, send, extra, progress_callback, on_task_status))

    async def list_tools(self, cursor: Optional[str] = None) -> ListToolsResult:
        """``tools/list`` (one page; ``nextCursor`` names the next)."""
        self._check_open()
        return ListToolsResult(await self._send("tools/list", {"cursor": cursor} if cursor else {}, lambda: self.session.list_tools(cursor)))

    async def list_resources(self, cursor: Optional[str] = None) -> ListResourcesResult:
        """``resources/list``"""
        self._check_open()
        return ListResourcesResult(await self._send('resources/list', {"cursor": cursor} if cursor else {}, lambda: self.session.list_resources(cursor)))

    async def list_resource_templates(self, cursor: Optional[str] = None) -> ListResourceTemplatesResult:
        """``resources/templates/list``"""
        self._check_open()
        return ListResourceTemplatesResult(await self._send('resources/templates/list', {"cursor": cursor} if cursor else {}, lambda: self.session.list_resource_templates(cursor)))

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """``resources/read``"""
        self._check_open()
        return ReadResourceResult(await self._send('resources/read', {"uri": uri}, lambda: self.session.read_resource(uri)))

    async def list_prompts(self, cursor: Optional[str] = None) -> ListPromptsResult:
        """``prompts/list``"""
        self._check_open()
        return ListPromptsResult(await self._send('prompts/list', {"cursor": cursor} if cursor else {}, lambda: self.session.list_prompts(cursor)))

    async def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None) -> GetPromptResult:
        """``prompts/get``"""
        self._check_open()
        return GetPromptResult(await self._send('prompts/get', {"name": name, "arguments": arguments or {}}, lambda: self.session.get_prompt(name, arguments)))

    async def complete(self, ref: Dict[str, Any], argument: Dict[str, Any], context: Optional[Dict[str, Any]] = None) -> CompleteResult:
        """``completion/complete``"""
        self._check_open()
        return CompleteResult(await self._send('completion/complete', {"ref": ref, "argument": argument, "context": context}, lambda: self.session.complete(ref, argument, context)))

    async def ping(self) -> None:
        """``ping``"""
        self._check_open()
        await self._send('ping', {}, lambda: self.session.ping())

    async def set_logging_level(self, level: str) -> None:
        """``logging/setLevel`` (legacy era)"""
        self._check_open()
        await self._send('logging/setLevel', {"level": level}, lambda: self.session.set_logging_level(level))

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (legacy era; :meth:`listen` works in both eras)"""
        self._check_open()
        await self._send('resources/subscribe', {"uri": uri}, lambda: self.session.subscribe_resource(uri))

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe`` (legacy era)"""
        self._check_open()
        await self._send('resources/unsubscribe', {"uri": uri}, lambda: self.session.unsubscribe_resource(uri))

    def listen(
        self,
        *,
        tools_changed: bool = False,
        prompts_changed: bool = False,
        resources_changed: bool = False,
        resource_uris: Sequence[str] = (),
        max_queued: int = 1024,
    ) -> "Subscription":
        """Subscribes to change notifications, in either era::

            async with client.listen(resource_uris=["file:///notes.txt"]) as changes:
                async for note in changes:          # Notification events
                    print(note.method, note.params)

        On a 2026-07-28 connection this is a ``subscriptions/listen`` stream (ended by
        leaving the block); ``changes.granted`` is the part of the filter the server
        accepted. On a legacy connection it is ``resources/subscribe`` for each URI
        (``resources/unsubscribe`` on leaving), and the connection's list-change
        notifications of the kinds asked for. Entering waits until the server confirmed.

        Iteration ends when the server ends the subscription, raises
        :class:`ConnectionClosed` when the connection closes, and raises
        :class:`SubscriptionLost` when more than ``max_queued`` notifications were left
        unread (the subscription is then ended; listen again).
        """
        return Subscription(
            self,
            {
                "toolsListChanged": tools_changed,
                "promptsListChanged": prompts_changed,
                "resourcesListChanged": resources_changed,
                "resourceSubscriptions": list(resource_uris),
            },
            max_queued,
        )

    # --- closing -------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Closes the connection (and stops a child process); pending calls fail with
        :class:`ConnectionClosed`."""
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer()
        self._conn.feed_eof()
        self._conn.stop_timer()
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class Subscription:
    """Change notifications from :meth:`Client.listen`: an async context manager and an
    async iterator of :class:`~mcp_sansio.events.Notification` events."""

    _END = object()

    def __init__(self, client: Client, wanted: Dict[str, Any], max_queued: int) -> None:
        self._client = client
        self._wanted = wanted
        self._max = max(1, max_queued)
        self._queue: "collections.deque[Any]" = collections.deque()
        self._waiter: Optional["asyncio.Future[None]"] = None
        self._acked: Optional["asyncio.Future[Dict[str, Any]]"] = None
        self._request_id: Optional[int] = None
        self._uris: List[str] = []
        self._ended = False
        self._closed = False
        self.granted: Dict[str, Any] = {}
        """The filter the server accepted (2026), or what was subscribed (legacy)."""

    # --- opening and closing -------------------------------------------------------------

    async def _open(self) -> "Subscription":
        client = self._client
        client._check_open()
        if client.session.era == "modern":
            filt = {k: v for k, v in self._wanted.items() if v}
            self._acked = client._conn.loop.create_future()
            rid = client.session.listen(filt)
            self._request_id = rid
            client._listeners[rid] = self
            client._conn.pump()
            try:
                self.granted = await asyncio.wait_for(asyncio.shield(self._acked), client._request_timeout)
            except BaseException:
                await self.aclose()
                raise
            return self
        # Legacy: subscribe each URI; list changes reach every client that can hear them.
        self.granted.update(legacy_listen_granted(self._wanted, client.server_capabilities))
        client._legacy_listeners.append(self)
        try:
            for uri in self._wanted["resourceSubscriptions"]:
                if client._legacy_uris[uri] == 0:
                    await client.subscribe_resource(uri)
                client._legacy_uris[uri] += 1
                self._uris.append(uri)
        except BaseException:
            await self.aclose()
            raise
        if self._uris:
            self.granted["resourceSubscriptions"] = list(self._uris)
        return self

    async def aclose(self) -> None:
        """Ends the subscription (2026: cancels the listen request; legacy: unsubscribes
        the URIs no other subscription holds)."""
        if self._closed:
            return
        self._closed = True
        client = self._client
        if self._request_id is not None:
            if client._listeners.pop(self._request_id, None) is not None:
                if client.session.cancel(self._request_id, "the client stopped listening"):
                    client._conn.pump()
        else:
            if self in client._legacy_listeners:
                client._legacy_listeners.remove(self)
            uris, self._uris = self._uris, []
            for uri in uris:
                client._legacy_uris[uri] -= 1
                if client._legacy_uris[uri] <= 0:
                    del client._legacy_uris[uri]
                    if client._closed_reason is None:
                        try:
                            await client.unsubscribe_resource(uri)
                        except (ConnectionClosed, McpError):
                            pass
        self._end(None)

    async def __aenter__(self) -> "Subscription":
        return await self._open()

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._open().__await__()

    # --- the notifications ---------------------------------------------------------------

    def _deliver(self, event: Notification) -> None:
        if self._ended:
            return
        if event.method == "notifications/subscriptions/acknowledged":
            if self._acked is not None and not self._acked.done():
                self._acked.set_result(dict((event.params or {}).get("notifications") or {}))
            return
        if self._request_id is None and not self._wants(event):
            return
        if len(self._queue) >= self._max:
            self._end(SubscriptionLost(f"more than {self._max} notifications were left unread"))
            self._client._conn.loop.create_task(self.aclose()).add_done_callback(_forget)
            return
        self._queue.append(event)
        self._wake()

    def _wants(self, event: Notification) -> bool:
        """Legacy: which of the connection's notifications this subscription asked for."""
        wanted = dict(self._wanted, resourceSubscriptions=self._uris)
        return legacy_listen_wants(wanted, event.method, event.params)

    def _end(self, error: Optional[BaseException]) -> None:
        if self._ended:
            return
        self._ended = True
        if self._acked is not None and not self._acked.done():
            self._acked.set_exception(error or ConnectionClosed("the server ended the subscription"))
            self._acked.exception()  # retrieved: the opener gets it through the shield
        self._queue.append(error if error is not None else self._END)
        self._wake()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def next(self) -> Notification:
        """The next notification; raises ``StopAsyncIteration`` once the subscription
        ended (or the error that ended it)."""
        while not self._queue:
            self._waiter = self._client._conn.loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._queue[0]
        if item is self._END:
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        return self._queue.popleft()

    def __aiter__(self) -> "Subscription":
        return self

    async def __anext__(self) -> Notification:
        return await self.next()


class _Connect:
    """``await Client.connect_...(...)`` or ``async with Client.connect_...(...) as c``."""

    def __init__(self, start: Callable[[], Awaitable[Client]]) -> None:
        self._start = start
        self._client: Optional[Client] = None

    async def _open(self) -> Client:
        client = await self._start()
        try:
            await client._wait_ready()
        except BaseException:
            await client.aclose()
            raise
        return client

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._open()
        return self._client

    async def __aexit__(self, *exc: Any) -> None:
        if self._client is not None:
            await self._client.aclose()


from ._http import HttpServerHandle  # noqa: E402  (the HTTP front end imports this module)
from .asgi import AsgiApp  # noqa: E402
