"""Runs a server's handlers against a session's events (shared by every transport).

The session (a ``ServerSession`` for a byte stream, an ``HttpServer`` for the HTTP
endpoint) makes every protocol decision; this module only starts handler tasks for the
events that need the application, and hands their results back.
"""

import asyncio
import base64
import contextvars
import functools
import inspect
import json
import logging
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _threads, _typed, observe
from ._core import INTERNAL_ERROR, METHOD_NOT_FOUND, ServerSession
from .errors import LocalProtocolError, McpError
from .types import ReadResourceResult
from .events import (
    Cancelled,
    CatalogAnswer,
    Closed,
    CompletionRequest,
    InputAnswered,
    InputFailed,
    PromptGet,
    Ready,
    Request,
    ResourceRead,
    TaskCancelled,
    TaskInput,
    ToolCall,
)

_EAGER = sys.version_info >= (3, 12)
MAX_WAITING_REPORTS = 256
"""How many reports (progress, log messages) of one handler run, sent from a worker thread,
may wait for the event loop; past it a report is dropped (the Rust bindings' bound too)."""

#: Sessions (start, end) at INFO; each request at DEBUG (method, id, tool, resource or
#: prompt name, outcome, duration); refusals at WARNING, handler failures at ERROR. Never
#: argument values or results.
log = logging.getLogger("mcp_sansio.server")


class _Suspended(BaseException):
    """The request was answered with ``input_required`` (2026-07-28); its handler stops and
    runs again when the client retries with the answers."""


class Headers(Mapping[str, str]):
    """An HTTP request's header fields: a read-only mapping whose keys are
    case-insensitive (``headers["x-request-id"]``, ``headers.get("Authorization")``; a
    repeated field gives its first value), :meth:`get_all` for every value of one name, and
    :attr:`raw`, the ``(name, value)`` pairs in order as received."""

    __slots__ = ("raw", "_first")

    def __init__(self, raw: Sequence[Tuple[str, str]]) -> None:
        self.raw: List[Tuple[str, str]] = list(raw)
        first: Dict[str, str] = {}
        for name, value in self.raw:
            first.setdefault(name.lower(), value)
        self._first = first

    def __getitem__(self, name: str) -> str:
        return self._first[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def __iter__(self) -> Iterator[str]:
        return iter(self._first)

    def __len__(self) -> int:
        return len(self._first)

    def get_all(self, name: str) -> List[str]:
        """Every value of the field ``name``, in order."""
        name = name.lower()
        return [v for n, v in self.raw if n.lower() == name]

    def __repr__(self) -> str:
        return f"Headers({self.raw!r})"


class Sent:
    """What the reporting methods of :class:`Context` (``report_progress``, ``log``,
    ``info``, ...) return: the report is already queued when the method returns, so this
    awaitable is done. ``await ctx.report_progress(...)`` (the official SDK's habit) and a
    plain ``ctx.report_progress(...)`` do the same; ignoring it warns about nothing (it is
    not a coroutine)."""

    __slots__ = ()

    def __await__(self) -> Iterator[None]:
        return iter(())

    def __repr__(self) -> str:
        return "<mcp_sansio report sent>"


_SENT = Sent()


class Context:
    """What a handler can do besides returning its result, and who it serves.

    A handler receives it when it declares a parameter annotated ``Context`` (or named
    ``ctx``). Its methods may be called from sync handlers too (they run in a worker
    thread); ``ask_input``/``elicit``, ``read_resource`` and ``run_as_task`` are coroutines
    for async handlers, and ``ask_input_blocking``/``elicit_blocking``,
    ``read_resource_blocking``/``run_as_task_blocking`` their counterparts for sync
    handlers. The reports (:meth:`report_progress`, :meth:`log`,
    :meth:`debug`, :meth:`info`, :meth:`warning`, :meth:`error`, :meth:`report_status`) are
    sent at once and return a done awaitable (:class:`Sent`): call them with or without
    ``await``.

    What is asked: :attr:`method`, :attr:`name`, :attr:`arguments`, :attr:`request_id`
    (what a middleware reads; see :attr:`Server.middleware <mcp_sansio.aio.Server.middleware>`).

    Who is calling (read-only): :attr:`principal` (the verified access token's subject,
    client id, scopes and claims on a protected server; ``None`` otherwise), :attr:`headers`
    (the HTTP request's, ``None`` on stdio), :attr:`meta` (the request's ``_meta``),
    :attr:`client_info` and :attr:`client_capabilities`, :attr:`protocol_version` and
    :attr:`era`, :attr:`session_id` (a 2025-wire HTTP session's ``Mcp-Session-Id``).
    """

    __slots__ = (
        "_dispatcher", "request_id", "_cancelled", "task_id", "_waiting", "_lock", "request_info", "_headers",
        "method", "name", "arguments",
    )

    def __init__(
        self,
        dispatcher: "Dispatcher",
        request_id: int,
        info: Any = None,
        method: str = "",
        name: Optional[str] = None,
        arguments: Optional[Dict[str, Any]] = None,
    ) -> None:
        self._dispatcher = dispatcher
        self.request_id = request_id
        self.method = method
        """The request's method: ``tools/call``, ``resources/read``, ``prompts/get`` or
        ``completion/complete``; for a middleware also ``tools/list``, ``resources/list``,
        ``resources/templates/list`` or ``prompts/list`` (which the catalog answers)."""
        self.name = name
        """The tool's or prompt's name, the resource's URI (``None`` for a completion and
        a list)."""
        self.arguments: Dict[str, Any] = arguments if arguments is not None else {}
        """What the handler is called with: a tool's or prompt's arguments, a resource
        template's variables, a completion's ``ref``/``argument``/``context``. A middleware
        may change it before ``call_next``. For a request the catalog answers itself (a
        list, a call it refuses) the arguments as the client sent them (a list's
        ``cursor``, a resource's ``{}``); changing them changes nothing."""
        self._cancelled = False
        self.task_id: Optional[int] = None
        """The task the request became (:meth:`run_as_task`), else ``None``."""
        self._waiting = 0
        self._lock: Optional[threading.Lock] = None
        self.request_info = info
        """The request's :class:`~mcp_sansio.RequestInfo` (what the properties below read)."""
        self._headers: Optional[Headers] = None

    # --- who is calling --------------------------------------------------------------------

    @property
    def principal(self) -> Any:
        """The verified principal of the request's access token (a
        :class:`~mcp_sansio.Principal`: ``subject``, ``client_id``, ``scopes``, ``claims``),
        or ``None`` when the server is not protected (or the stdio connection was not given
        one)."""
        return None if self.request_info is None else self.request_info.principal

    @property
    def headers(self) -> Optional[Headers]:
        """The HTTP request's header fields (:class:`Headers`, case-insensitive), or
        ``None`` when the request did not come over HTTP."""
        if self._headers is None and self.request_info is not None:
            raw = self.request_info.headers
            if raw is not None:
                self._headers = Headers(raw)
        return self._headers

    @property
    def meta(self) -> Optional[Dict[str, Any]]:
        """The request's ``_meta`` (a dict), or ``None``."""
        return None if self.request_info is None else self.request_info.meta

    @property
    def client_info(self) -> Optional[Dict[str, Any]]:
        """The client's implementation info (``name``, ``version``, ...): from
        ``initialize`` (legacy), from the request's ``_meta`` (2026, if sent); else ``None``."""
        return None if self.request_info is None else self.request_info.client_info

    @property
    def client_capabilities(self) -> Dict[str, Any]:
        """The client's capabilities for this request."""
        return {} if self.request_info is None else self.request_info.client_capabilities

    @property
    def protocol_version(self) -> Optional[str]:
        """The request's protocol version."""
        return None if self.request_info is None else self.request_info.protocol_version

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` (versions with the ``initialize`` handshake) or ``"modern"``
        (2026-07-28 on), as ``Client(era=...)`` names them."""
        return None if self.request_info is None else self.request_info.era

    @property
    def session_id(self) -> Optional[str]:
        """The ``Mcp-Session-Id`` of the 2025-wire HTTP session the request came in, else
        ``None``."""
        return None if self.request_info is None else self.request_info.session_id

    def _report(self, command: Callable[[Any], Any]) -> None:
        """Runs a report command; from a worker thread at most ``MAX_WAITING_REPORTS`` wait
        for the loop, and past them a report is dropped (best effort, so a sync handler that
        reports faster than the loop runs cannot grow the process without bound)."""
        d = self._dispatcher
        if threading.get_ident() == d.loop_thread:
            d.call(command)
            return
        if self._lock is None:
            self._lock = threading.Lock()
        lock = self._lock
        with lock:
            if self._waiting >= MAX_WAITING_REPORTS:
                return
            self._waiting += 1

        def run(session: Any) -> Any:
            with lock:
                self._waiting -= 1
            return command(session)

        d.call(run)

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled the request (async handlers are also cancelled)."""
        return self._cancelled

    def report_progress(
        self, progress: float, total: Optional[float] = None, message: Optional[str] = None
    ) -> Awaitable[None]:
        """Reports progress, if the client asked for it (otherwise nothing is sent).

        Sent at once; returns a done awaitable, so ``await ctx.report_progress(...)`` works
        as well as a plain call. Best effort from a sync handler's thread: past
        ``MAX_WAITING_REPORTS`` reports still waiting for the event loop, a report is
        dropped."""
        self._report(
            lambda s: s.report_progress(self.request_id, float(progress), total, message)
        )
        return _SENT

    def log(
        self, level: str, data: Any, logger: Optional[str] = None, *, logger_name: Optional[str] = None
    ) -> Awaitable[None]:
        """Logs to the client (``notifications/message``) if its log level lets ``level``
        (``debug`` ... ``emergency``) through; ``logger`` (or ``logger_name``, the official
        SDK's word) names the logger. Best effort and awaitable or not, as
        :meth:`report_progress` is."""
        name = logger if logger is not None else logger_name
        self._report(lambda s: s.log(self.request_id, level, data, name))
        return _SENT

    def debug(self, data: Any, *, logger_name: Optional[str] = None) -> Awaitable[None]:
        """``log("debug", data)``"""
        return self.log("debug", data, logger_name=logger_name)

    def info(self, data: Any, *, logger_name: Optional[str] = None) -> Awaitable[None]:
        """``log("info", data)``"""
        return self.log("info", data, logger_name=logger_name)

    def warning(self, data: Any, *, logger_name: Optional[str] = None) -> Awaitable[None]:
        """``log("warning", data)``"""
        return self.log("warning", data, logger_name=logger_name)

    def error(self, data: Any, *, logger_name: Optional[str] = None) -> Awaitable[None]:
        """``log("error", data)``"""
        return self.log("error", data, logger_name=logger_name)

    async def ask_input(self, requests: Dict[str, Any]) -> Dict[str, Any]:
        """Asks the client for input, whatever the era; returns the responses by key.

        ``requests`` maps keys of your choosing to ``{"method": "elicitation/create" |
        "sampling/createMessage" | "roots/list", "params": {...}}``. On a legacy session the
        client gets live requests and this waits for every answer. On a 2026-07-28 request
        the request is answered with ``input_required`` and this handler run stops; the
        client's retry runs the handler again, and then this returns at once. So ask before
        doing work that must not run twice.

        Raises :class:`McpError` when the client cannot answer (it lacks the capability).
        """
        d = self._dispatcher
        status, responses = d.session.ask_input(self.request_id, requests)
        d.flush()
        if status == "answered":
            return responses
        if status == "suspended":
            raise _Suspended()
        future = asyncio.get_running_loop().create_future()
        d.asks[self.request_id] = future
        return await future

    async def elicit(
        self, message: str, requested_schema: Any = None, *, schema: Any = None
    ) -> Any:
        """Asks the user a question (form elicitation).

        With a dict ``requested_schema`` it returns the client's ``ElicitResult`` dict
        (``{"action": "accept" | "decline" | "cancel", "content": ...}``). With ``schema=``
        a dataclass, ``TypedDict`` or pydantic model (flat: string, number, integer, boolean
        and enum fields; ``Optional`` ones are not required) it sends the form derived from
        it and returns an :class:`~mcp_sansio.aio.ElicitResult` whose ``content`` is an
        instance of it when accepted. A type that cannot be a form raises ``TypeError``
        (naming the field) before anything is sent."""
        typed = schema if schema is not None else requested_schema
        requested, convert = _typed.elicitation_request(typed)
        params = {"message": message, "requestedSchema": requested}
        answers = await self.ask_input({"elicit": {"method": "elicitation/create", "params": params}})
        if convert is None:
            return answers["elicit"]
        return _typed.elicit_result(answers["elicit"], convert)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Reads one of this server's resources by URI (a resource, or a template the URI
        matches, as a client's ``resources/read`` is routed by the core), for this request's
        caller: runs its reader and returns the
        :class:`~mcp_sansio.types.ReadResourceResult` (``result.contents[0].text``).

        Raises :class:`McpError` when nothing matches (-32602) or the caller lacks the
        resource's scopes (-32003); what the reader raises propagates. (The official SDK's
        ``ctx.read_resource`` returns the contents' list; here ``.contents`` is that list.)"""
        d = self._dispatcher
        handler, variables = d.session.resolve_resource(uri, self.principal)
        if handler is None:  # an entry given without a handler
            raise McpError(INVALID_PARAMS, f"Resource not found: {uri}")
        mime = handler.mime_type
        kwargs: Dict[str, Any] = dict(variables)
        if handler.context_param is not None:
            kwargs[handler.context_param] = self
        if handler.meta == "uri":
            kwargs["uri"] = uri
        if handler.is_async:
            value = await handler.fn(**kwargs)
        else:
            value = await _threads.run_sync(d.loop, functools.partial(handler.fn, **kwargs))
        return ReadResourceResult(_resource_result(uri, mime, value))

    async def run_as_task(
        self, ttl: Optional[float] = None, poll_interval: Optional[float] = None
    ) -> int:
        """Answers the request with a task now and keeps working: the handler's result then
        completes the task (an exception fails it; a client's ``tasks/cancel`` cancels the
        handler). Raises :class:`McpError` if the client did not offer a task (it then
        waits for the plain answer, so a handler may go on either way)."""
        d = self._dispatcher
        task_id = d.session.start_task(self.request_id, ttl, poll_interval)
        d.tasks[task_id] = self.request_id
        self.task_id = task_id
        d.flush()
        return task_id

    def report_status(self, message: str) -> Awaitable[None]:
        """Tells the client what the task is doing (status ``working`` with a message);
        nothing happens when the request did not become a task. Awaitable or not, as
        :meth:`report_progress` is."""
        task_id = self.task_id
        if task_id is not None:
            self._dispatcher.call(lambda s: s.update_task(task_id, "working", message))
        return _SENT

    # --- for sync handlers (worker threads) ----------------------------------------------

    def _blocking(self, coro: Any) -> Any:
        d = self._dispatcher
        if threading.get_ident() == d.loop_thread:
            coro.close()
            raise RuntimeError(
                "the *_blocking methods are for sync handlers (worker threads); "
                "an async handler awaits ask_input/elicit/run_as_task instead"
            )
        return asyncio.run_coroutine_threadsafe(coro, d.loop).result()

    def ask_input_blocking(self, requests: Dict[str, Any]) -> Dict[str, Any]:
        """:meth:`ask_input` for a sync handler: blocks its worker thread until the answers
        arrive (legacy) or, on a 2026 request, stops the handler run the same way (the
        client's retry runs it again, and then this returns at once)."""
        return self._blocking(self.ask_input(requests))

    def elicit_blocking(self, message: str, requested_schema: Any = None, *, schema: Any = None) -> Any:
        """:meth:`elicit` for a sync handler (see :meth:`ask_input_blocking`)."""
        return self._blocking(self.elicit(message, requested_schema, schema=schema))

    def read_resource_blocking(self, uri: str) -> ReadResourceResult:
        """:meth:`read_resource` for a sync handler."""
        return self._blocking(self.read_resource(uri))

    def run_as_task_blocking(
        self, ttl: Optional[float] = None, poll_interval: Optional[float] = None
    ) -> int:
        """:meth:`run_as_task` for a sync handler."""
        return self._blocking(self.run_as_task(ttl, poll_interval))


def _content_result(value: Any) -> Dict[str, Any]:
    """A tool's return value as a ``CallToolResult``."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(v, dict) and "type" in v for v in value
    ):
        return {"content": list(value)}
    text = json.dumps(value, ensure_ascii=False)
    result: Dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if isinstance(value, dict):
        result["structuredContent"] = value
    return result


def _resource_result(uri: str, mime_type: Optional[str], value: Any) -> Dict[str, Any]:
    """A resource reader's return value as a ``ReadResourceResult``."""
    if isinstance(value, dict) and isinstance(value.get("contents"), list):
        return value
    if isinstance(value, (bytes, bytearray)):
        item: Dict[str, Any] = {"uri": uri, "blob": base64.b64encode(value).decode("ascii")}
    elif isinstance(value, str):
        item = {"uri": uri, "text": value}
    else:
        item = {"uri": uri, "text": json.dumps(value, ensure_ascii=False)}
        mime_type = mime_type or "application/json"
    if mime_type:
        item["mimeType"] = mime_type
    return {"contents": [item]}


def _prompt_result(value: Any) -> Dict[str, Any]:
    """A prompt handler's return value as a ``GetPromptResult``."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value
    if isinstance(value, str):
        return {"messages": [{"role": "user", "content": {"type": "text", "text": value}}]}
    return {"messages": list(value)}


def _same(value: Any) -> Any:
    return value


def _completion_result(value: Any) -> Dict[str, Any]:
    """A completion handler's return value as a ``CompleteResult``."""
    if isinstance(value, dict) and "completion" in value:
        return value
    # The core keeps at most 100 values (the spec's limit) and then says hasMore.
    values = [str(v) for v in (value or [])]
    return {"completion": {"values": values, "hasMore": False}}


class Handler:
    """A registered function and how to call it (what the server's ``Catalog`` keeps for
    each entry, and a routed request's event carries)."""

    __slots__ = ("fn", "is_async", "context_param", "meta", "mime_type")

    def __init__(
        self,
        fn: Callable[..., Any],
        context_param: Optional[str],
        meta: Any = None,
        mime_type: Optional[str] = None,
    ):
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = context_param
        self.meta = meta
        #: A resource reader's ``mimeType``, given to what it returns
        self.mime_type = mime_type


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(type(fn), "__call__", None))


def _middleware_step(
    mw: Any, nxt: Callable[[Context], Awaitable[Any]], shape, loop: asyncio.AbstractEventLoop
) -> Callable[[Context], Awaitable[Any]]:
    """One middleware as a step of the chain: ``async def mw(ctx, call_next)`` awaits
    ``call_next(ctx)``; a plain ``def mw(ctx, call_next)`` runs in a worker thread, where
    ``call_next(ctx)`` blocks until the rest of the chain answered."""
    if _is_async(mw):

        async def step(ctx: Context) -> Any:
            return shape(await mw(ctx, nxt))

        return step

    def call_next(ctx: Context) -> Any:
        return asyncio.run_coroutine_threadsafe(nxt(ctx), loop).result()

    async def sync_step(ctx: Context) -> Any:
        value = await loop.run_in_executor(None, contextvars.copy_context().run, mw, ctx, call_next)
        return shape(value)

    return sync_step


class Dispatcher:
    """Runs the handler each routed event carries (the session's catalog routed it, and
    holds the handler beside the entry); ``flush`` writes what the session queued (bytes to
    a pipe, or pieces of HTTP responses)."""

    def __init__(self, session: Any, flush: Callable[[], None], middleware: Optional[List[Any]] = None) -> None:
        self.session = session
        self.flush = flush
        #: The server's middleware (its live list: the first is the outermost)
        self.middleware: List[Any] = middleware if middleware is not None else []
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.running: Dict[int, "asyncio.Future[Any]"] = {}
        self.contexts: Dict[int, Context] = {}
        self.asks: Dict[int, "asyncio.Future[Any]"] = {}
        self.tasks: Dict[int, int] = {}
        self.closed = asyncio.Event()
        self.close_reason: Optional[str] = None
        #: request id -> (what it is, for log lines; when it started)
        self.started: Dict[int, Any] = {}
        self._announced = False
        #: Whether the session hands out the catalog's own answers (``CatalogAnswer``): set
        #: while the server has middleware, so the chain sees every request the catalog
        #: serves; read before each event, so a middleware added while serving takes effect
        #: from the next request on
        self._chained = False

    def call(self, command: Callable[[Any], Any]) -> None:
        """Runs a session command on the loop's thread, then writes its output."""
        if threading.get_ident() == self.loop_thread:
            try:
                command(self.session)
            except LocalProtocolError:
                pass
            self.flush()
        else:
            self.loop.call_soon_threadsafe(self.call, command)

    def drain(self) -> None:
        """Handles every queued event."""
        session = self.session
        while True:
            chained = bool(self.middleware)
            if chained is not self._chained:
                self._chained = chained
                session.catalog_answers = chained
            event = session.next_event()
            if event is None:
                return
            kind = type(event)
            if kind is ToolCall:
                what = f'tools/call "{event.name}"'
                self._start(
                    event.request_id, event.handler, event.arguments, _content_result, what=what, info=event.info,
                    method="tools/call", target=event.name,
                )
            elif kind is ResourceRead:
                what = f'resources/read "{event.uri}"'
                handler = event.handler
                uri = event.uri
                mime = handler.mime_type if handler is not None else None
                self._start(
                    event.request_id,
                    handler,
                    dict(event.variables),
                    lambda v, uri=uri, mime=mime: _resource_result(uri, mime, v),
                    uri=uri,
                    what=what,
                    info=event.info,
                    method="resources/read",
                    target=uri,
                )
            elif kind is PromptGet:
                what = f'prompts/get "{event.name}"'
                self._start(
                    event.request_id, event.handler, dict(event.arguments), _prompt_result, what=what, info=event.info,
                    method="prompts/get", target=event.name,
                )
            elif kind is CompletionRequest:
                handler = event.handler
                p = event.params
                args = {
                    "ref": p.get("ref"),
                    "argument": p.get("argument"),
                    "context": p.get("context"),
                }
                self._start(
                    event.request_id, handler, args, _completion_result, what="completion/complete", info=event.info,
                    method="completion/complete",
                )
            elif kind is CatalogAnswer:
                self._catalog_answer(event)
            elif kind is Ready:
                self._announced = True
                peer = event.peer_info or {}
                log.info(
                    "session started: %s era, version %s, client %r %s",
                    event.era, event.version, peer.get("name"), peer.get("version") or "",
                )
            elif kind is Cancelled:
                self._cancel(event.request_id)
            elif kind is InputAnswered:
                f = self.asks.pop(event.request_id, None)
                if f is not None and not f.done():
                    f.set_result(event.responses)
            elif kind is InputFailed:
                f = self.asks.pop(event.request_id, None)
                if f is not None and not f.done():
                    f.set_exception(event.error)
            elif kind is TaskCancelled:
                rid = self.tasks.pop(event.task_id, None)
                if rid is not None:
                    self._cancel(rid)
            elif kind is TaskInput:
                pass
            elif kind is Request:
                self._refuse(event.request_id, event.method, METHOD_NOT_FOUND, f"Method not found: {event.method}")
            elif kind is Closed:
                self.close_reason = event.reason
                log.info("session ended: %s", event.reason)
                if isinstance(session, ServerSession):
                    self.closed.set()
                    for rid in list(self.running):
                        self._cancel(rid)

    def _catalog_answer(self, event: CatalogAnswer) -> None:
        """A request the catalog answered (a list, or a call it refused): through the
        middleware, whose innermost step gives the catalog's answer."""
        method = event.method
        params = event.params if isinstance(event.params, dict) else {}
        name: Optional[str] = None
        uri: Optional[str] = None
        shape: Callable[[Any], Any] = _same
        if method == "tools/call":
            name = params.get("name") if isinstance(params.get("name"), str) else None
            arguments = params.get("arguments")
            shape = _content_result
        elif method == "prompts/get":
            name = params.get("name") if isinstance(params.get("name"), str) else None
            arguments = params.get("arguments")
            shape = _prompt_result
        elif method == "resources/read":
            uri = params.get("uri") if isinstance(params.get("uri"), str) else None
            name, arguments = uri, {}
            shape = functools.partial(_resource_result, uri or "", None)
        elif method == "completion/complete":
            arguments = {"ref": params.get("ref"), "argument": params.get("argument"), "context": params.get("context")}
            shape = _completion_result
        else:  # a list: its cursor, if any
            arguments = {k: v for k, v in params.items() if k != "_meta"}
        if not isinstance(arguments, dict):
            arguments = {}
        what = f'{method} "{name}"' if name is not None else method
        result, error = event.result, event.error
        if not self.middleware:
            # The last middleware went away since the session was told: answer as the
            # catalog did.
            if error is not None:
                self.session.respond_error(event.request_id, error.code, error.message, error.data)
            else:
                self.session.respond(event.request_id, result)
            self.flush()
            return

        async def answer(**_: Any) -> Any:
            if error is not None:
                raise error
            return result

        handler = Handler(answer, None)
        self._start(
            event.request_id, handler, arguments, shape, what=what, info=event.info, method=method, target=name,
            catalog=True,
        )

    def _refuse(self, request_id: int, what: str, code: int, message: str) -> None:
        log.warning("%s (request %d) refused: %s (code %d)", what, request_id, message, code)
        metrics = observe._get_metrics()
        if metrics is not None:
            metrics.refused("method_not_found" if code == METHOD_NOT_FOUND else str(code))
        self.session.respond_error(request_id, code, message)

    def _ended(self, request_id: int, outcome: str, level: int = logging.DEBUG) -> None:
        """Logs a handler run's end: what it was, how it ended, how long it took."""
        what, since = self.started.pop(request_id, (None, None))
        if what is not None and log.isEnabledFor(level):
            log.log(level, "%s (request %d): %s in %.1f ms", what, request_id, outcome, (time.monotonic() - since) * 1000)

    def _cancel(self, request_id: int) -> None:
        if request_id in self.running:
            self._ended(request_id, "cancelled")
        task = self.running.pop(request_id, None)
        ctx = self.contexts.pop(request_id, None)
        if ctx is not None:
            ctx._cancelled = True
            if ctx.task_id is not None:
                self.tasks.pop(ctx.task_id, None)
        if task is not None:
            task.cancel()
        f = self.asks.pop(request_id, None)
        if f is not None and not f.done():
            f.cancel()

    def _start(
        self,
        request_id: int,
        handler: Handler,
        kwargs: Dict[str, Any],
        shape,
        what: str = "request",
        info: Any = None,
        method: str = "",
        target: Optional[str] = None,
        **extra,
    ) -> None:
        if handler is None:
            self._refuse(request_id, what, METHOD_NOT_FOUND, "no handler")
            return
        if not self._announced:
            # A 2026 connection has no handshake: its first request starts it (an HTTP
            # endpoint's 2026 requests belong to no session).
            self._announced = True
            if isinstance(self.session, ServerSession):
                log.info("session started: 2026 era (no handshake; each request names its version)")
        self.started[request_id] = (what, time.monotonic())
        log.debug("%s (request %d) started", what, request_id)
        middleware = self.middleware
        if middleware:
            # The middleware and the handler share one Context; the handler's keyword
            # arguments are made from its `arguments` when the chain reaches it.
            ctx = Context(self, request_id, info, method, target, kwargs)
            self.contexts[request_id] = ctx
            coro = self._run(
                request_id, handler, kwargs, shape, method, target, info, ctx, extra.get("uri"), extra.get("catalog", False)
            )
        else:
            if handler.context_param is not None:
                ctx = Context(self, request_id, info, method, target, dict(kwargs))
                self.contexts[request_id] = ctx
                kwargs[handler.context_param] = ctx
            if handler.meta == "uri" and "uri" in extra:
                kwargs["uri"] = extra["uri"]
            coro = self._run(request_id, handler, kwargs, shape, method, target, info)
        if _EAGER:
            # 3.12+: the handler runs at once, as a real task, until its first suspension;
            # one that never suspends finishes without a trip through the event loop.
            task = asyncio.Task(coro, loop=self.loop, eager_start=True)
            if task.done():
                return
        else:
            task = self.loop.create_task(coro)
        self.running[request_id] = task

    async def _call_handler(self, handler: Handler, kwargs: Dict[str, Any]) -> Any:
        if handler.is_async:
            return await handler.fn(**kwargs)
        # On a worker thread, in the context of the handler's task (a copy of the one the
        # request arrived in): context variables an ASGI middleware set (and the request's
        # trace span) reach plain `def` handlers too.
        return await _threads.run_sync(self.loop, functools.partial(handler.fn, **kwargs))

    def _chain(self, handler: Handler, shape, uri: Optional[str]) -> Callable[[Context], Awaitable[Any]]:
        """The middleware chain around the handler: a function of the Context that runs
        the first middleware (which calls the next, ..., the handler)."""

        async def innermost(ctx: Context) -> Any:
            kwargs = dict(ctx.arguments)
            if handler.context_param is not None:
                kwargs[handler.context_param] = ctx
            if handler.meta == "uri" and uri is not None:
                kwargs["uri"] = uri
            try:
                value = await self._call_handler(handler, kwargs)
            except McpError:
                raise
            except Exception as e:
                if shape is not _content_result:
                    raise
                # A failing tool is a tool error, which the middleware sees as a result.
                self._tool_failed(ctx.request_id, e)
                return {"content": [{"type": "text", "text": str(e) or type(e).__name__}], "isError": True}
            return shape(value)

        step: Callable[[Context], Awaitable[Any]] = innermost
        for mw in reversed(self.middleware):
            step = _middleware_step(mw, step, shape, self.loop)
        return step

    def _tool_failed(self, request_id: int, e: BaseException) -> None:
        what = self.started.get(request_id, ("request",))[0]
        # The exception's words may quote arguments: they and the traceback go at DEBUG.
        log.error("%s (request %d) raised %s", what, request_id, type(e).__name__)
        log.debug("%s (request %d) raised", what, request_id, exc_info=True)

    async def _run(
        self,
        request_id: int,
        handler: Handler,
        kwargs: Dict[str, Any],
        shape,
        method: str = "",
        target: Optional[str] = None,
        info: Any = None,
        ctx: Optional[Context] = None,
        uri: Optional[str] = None,
        catalog: bool = False,
    ) -> None:
        span = None
        if observe.TRACING:
            span = observe.server_span(
                method, target, None if info is None else info.meta, request_id, info
            )
        metrics = observe._recording()
        if span is None and metrics is None:
            await self._answer(request_id, handler, kwargs, shape, ctx, uri)
            return
        if metrics is not None:
            metrics.started(method)
        since = time.monotonic()
        outcome: Tuple[str, Optional[int], Optional[str]] = ("cancelled", None, None)
        try:
            outcome = await self._answer(request_id, handler, kwargs, shape, ctx, uri)
        finally:
            if span is not None:
                span.end(*outcome)
            if metrics is not None:
                try:
                    # A catalog answer's name may be anything a client sent (an unknown
                    # tool): no metric label.
                    tool = target if method == "tools/call" and not catalog else None
                    metrics.ended(
                        method, tool, outcome[0], outcome[1],
                        time.monotonic() - since,
                    )
                except Exception:
                    pass

    async def _answer(
        self,
        request_id: int,
        handler: Handler,
        kwargs: Dict[str, Any],
        shape,
        ctx: Optional[Context],
        uri: Optional[str],
    ) -> Tuple[str, Optional[int], Optional[str]]:
        """Runs the handler (through the middleware, if any) and answers the request; how it
        ended: ``(outcome, code, message)``."""
        session = self.session
        outcome: Tuple[str, Optional[int], Optional[str]] = ("ok", None, None)
        try:
            if ctx is not None:
                result = await self._chain(handler, shape, uri)(ctx)
                result = shape(result)
            else:
                result = shape(await self._call_handler(handler, kwargs))
        except asyncio.CancelledError:
            self._ended(request_id, "cancelled")
            self._done(request_id)
            return ("cancelled", None, None)
        except _Suspended:
            self._ended(request_id, "input required (the client retries with the answers)")
            self._done(request_id)
            self.flush()
            return ("input_required", None, None)
        except McpError as e:
            self._ended(request_id, f"refused with code {e.code}", logging.WARNING)
            self._done(request_id)
            session.respond_error(request_id, e.code, e.message, e.data)
            self.flush()
            return ("error", e.code, e.message)
        except Exception as e:  # a failing tool is a tool error, not a protocol error
            if shape is _content_result and ctx is None:
                self._tool_failed(request_id, e)
                self._ended(request_id, "failed (an isError result)")
                result = {"content": [{"type": "text", "text": str(e) or type(e).__name__}], "isError": True}
            else:
                # A handler other than a tool's, or a middleware, raised: -32603.
                what = self.started.get(request_id, ("request",))[0]
                log.error("%s (request %d) raised %s", what, request_id, type(e).__name__)
                log.debug("%s (request %d) raised", what, request_id, exc_info=True)
                self._ended(request_id, "failed (internal error)")
                self._done(request_id)
                session.respond_error(request_id, INTERNAL_ERROR, str(e) or type(e).__name__)
                self.flush()
                return ("error", INTERNAL_ERROR, str(e) or type(e).__name__)
        else:
            self._ended(request_id, "answered")
        if isinstance(result, dict) and result.get("isError") is True:
            outcome = ("tool_error", None, None)
        self._done(request_id)
        try:
            session.respond(request_id, result)
        except Exception as e:
            # The session answered -32603 itself when the result could not be encoded (this
            # is then a no-op); any other failure is answered here.
            what = self.started.get(request_id, ("request",))[0]
            log.error("%s (request %d): invalid result: %s", what, request_id, e)
            session.respond_error(request_id, INTERNAL_ERROR, f"invalid result: {e}")
            outcome = ("error", INTERNAL_ERROR, "invalid result")
        self.flush()
        return outcome

    def _done(self, request_id: int) -> None:
        """Forgets a handler run that ended."""
        self.running.pop(request_id, None)
        ctx = self.contexts.pop(request_id, None)
        if ctx is not None and ctx.task_id is not None:
            self.tasks.pop(ctx.task_id, None)

    def cancel_all(self) -> None:
        """Stops every running handler (the transport is gone)."""
        for rid in list(self.running):
            self._cancel(rid)
