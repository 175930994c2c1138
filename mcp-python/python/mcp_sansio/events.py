"""What a session tells the application: frozen dataclasses, one per kind of event.

``next_event()`` returns one of these (or ``None`` when nothing is queued). They work with
``match``::

    match session.next_event():
        case ToolCall(request_id=rid, name="add", arguments=args):
            session.respond(rid, {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]})
        case Closed(reason=why):
            ...

Request ids are plain ints: a server session numbers the requests it received, a client
session the requests it sent (``send_request`` and friends return the id).

A server's request events (``Request``, ``ToolCall``, ``ResourceRead``, ``PromptGet``,
``CompletionRequest``, ``CatalogAnswer``) carry ``info``, a :class:`~mcp_sansio.RequestInfo`: who sent the
request (the verified ``principal``, the HTTP ``headers``, the 2025 ``session_id``), its
``meta``, the client's ``client_info`` and ``client_capabilities``, the ``protocol_version``
and ``era``.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

__all__ = [
    "Event",
    "Ready",
    "Request",
    "ToolCall",
    "ResourceRead",
    "PromptGet",
    "CompletionRequest",
    "CatalogAnswer",
    "Notification",
    "Response",
    "RequestFailed",
    "Progress",
    "Cancelled",
    "InputRequired",
    "InputAnswered",
    "InputFailed",
    "TaskStatus",
    "TaskInput",
    "TaskCancelled",
    "Unblocked",
    "SessionRenewed",
    "Closed",
]


class Event:
    """Base class of every event."""

    __slots__ = ()


@dataclass(frozen=True)
class Ready(Event):
    """The session is ready: the handshake (legacy) or discovery (modern) finished.

    Client side: ``peer_info``/``capabilities``/``instructions`` are the server's. Server
    side (legacy clients only): the client's.
    """

    version: str
    peer_info: Optional[Dict[str, Any]]
    capabilities: Dict[str, Any]
    instructions: Optional[str]
    era: Optional[str] = None
    """The era of ``version`` as the core says it: ``"legacy"`` (the ``initialize``
    handshake) or ``"modern"`` (2026-07-28 on)"""


@dataclass(frozen=True)
class Request(Event):
    """A request the session does not route itself; answer with ``respond(request_id, ...)``."""

    request_id: int
    method: str
    params: Optional[Dict[str, Any]]
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""


@dataclass(frozen=True)
class ToolCall(Event):
    """Server: ``tools/call`` of a registered tool; the arguments already passed its schema."""

    request_id: int
    name: str
    arguments: Dict[str, Any]
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""
    handler: Any = field(default=None, repr=False, compare=False)
    """What the ``Catalog`` the configuration was made from registered for the entry (the
    one registry: the catalog routed the request to the entry, and this is its handler);
    ``None`` for a configuration given lists of entries"""


@dataclass(frozen=True)
class ResourceRead(Event):
    """Server: ``resources/read`` of a registered resource, or of a URI matching a template.

    ``key`` is the resource's URI or the template's ``uriTemplate``; ``variables`` holds the
    template's variables (empty for a plain resource).
    """

    request_id: int
    uri: str
    key: str
    variables: Dict[str, Any]
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""
    handler: Any = field(default=None, repr=False, compare=False)
    """What the ``Catalog`` the configuration was made from registered for the entry (the
    one registry: the catalog routed the request to the entry, and this is its handler);
    ``None`` for a configuration given lists of entries"""


@dataclass(frozen=True)
class PromptGet(Event):
    """Server: ``prompts/get`` of a registered prompt; required arguments are present."""

    request_id: int
    name: str
    arguments: Dict[str, str]
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""
    handler: Any = field(default=None, repr=False, compare=False)
    """What the ``Catalog`` the configuration was made from registered for the entry (the
    one registry: the catalog routed the request to the entry, and this is its handler);
    ``None`` for a configuration given lists of entries"""


@dataclass(frozen=True)
class CompletionRequest(Event):
    """Server: ``completion/complete`` (``params`` has ``ref``, ``argument``, ``context``)."""

    request_id: int
    params: Dict[str, Any]
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""
    handler: Any = field(default=None, repr=False, compare=False)
    """What the ``Catalog`` the configuration was made from registered for the entry (the
    one registry: the catalog routed the request to the entry, and this is its handler);
    ``None`` for a configuration given lists of entries"""


@dataclass(frozen=True)
class CatalogAnswer(Event):
    """Server: a request the catalog answered itself, handed out only when the session's
    ``catalog_answers`` is set (a server with middleware sets it, so the chain sees it).

    ``method`` is ``tools/list``, ``resources/list``, ``resources/templates/list``,
    ``prompts/list``, or a ``tools/call``, ``resources/read``, ``prompts/get`` or
    ``completion/complete`` the catalog refused (unknown tool, resource or prompt,
    arguments failing the tool's schema (an ``isError`` result), missing scopes, invalid
    params). ``params`` are the request's as the client sent them. The catalog's answer is
    ``result`` (a result dict) or ``error`` (an :class:`~mcp_sansio.errors.McpError`);
    answer the request with ``respond`` or ``respond_error``, with it or with an answer of
    your own.
    """

    request_id: int
    method: str
    params: Optional[Dict[str, Any]]
    result: Optional[Dict[str, Any]]
    error: Any
    info: Any = field(default=None, repr=False, compare=False)
    """Who sent it and in what context (a :class:`~mcp_sansio.RequestInfo`)"""


@dataclass(frozen=True)
class Notification(Event):
    """A notification the core does not consume itself.

    ``subscription_id`` is the request id of the ``subscriptions/listen`` request it was
    delivered on (2026-07-28), or ``None`` for one sent to the whole connection.
    """

    method: str
    params: Optional[Dict[str, Any]]
    subscription_id: Optional[int] = None


@dataclass(frozen=True)
class Response(Event):
    """A request we sent succeeded; exactly one ``Response`` or ``RequestFailed`` per id."""

    request_id: int
    result: Dict[str, Any]


@dataclass(frozen=True)
class RequestFailed(Event):
    """A request we sent failed: ``error`` is an :mod:`mcp_sansio.errors` exception
    (``McpError``, ``RequestTimeout``, ``RequestCancelled``, ``ConnectionClosed``,
    ``InvalidResult``)."""

    request_id: int
    error: Exception


@dataclass(frozen=True)
class Progress(Event):
    """The peer reported progress on a request we sent with ``progress=True``."""

    request_id: int
    progress: float
    total: Optional[float]
    message: Optional[str]


@dataclass(frozen=True)
class Cancelled(Event):
    """The peer cancelled a request it sent; stop its handler (answering is a no-op now)."""

    request_id: int
    reason: Optional[str]


@dataclass(frozen=True)
class InputRequired(Event):
    """Client: the server needs input (elicitation, sampling, roots) before a request can
    finish; answer with ``provide_input(input_id, responses)`` or ``refuse_input``.

    ``requests`` maps the server's keys to ``{"method": ..., "params": ...}``.
    """

    input_id: int
    requests: Dict[str, Any]


@dataclass(frozen=True)
class InputAnswered(Event):
    """Server (legacy era): every answer to a handler's ``ask_input`` arrived."""

    request_id: int
    responses: Dict[str, Any]


@dataclass(frozen=True)
class InputFailed(Event):
    """Server (legacy era): the client did not answer a handler's ``ask_input``."""

    request_id: int
    error: Exception


@dataclass(frozen=True)
class TaskStatus(Event):
    """Client: the task behind one of our calls changed status (the call still ends in one
    ``Response`` or ``RequestFailed``)."""

    request_id: int
    status: str
    message: Optional[str]


@dataclass(frozen=True)
class TaskInput(Event):
    """Server: the input a task asked for arrived; the task is ``working`` again."""

    task_id: int
    responses: Dict[str, Any]


@dataclass(frozen=True)
class TaskCancelled(Event):
    """Server: the client cancelled a task; stop working on it."""

    task_id: int


@dataclass(frozen=True)
class Unblocked(Event):
    """Commands may send again after a ``LocalProtocolError`` saying the queue was full."""


@dataclass(frozen=True)
class SessionRenewed(Event):
    """Client over HTTP (2025 wire): the server forgot the session (HTTP 404, e.g. it
    restarted) and the transport started a new one, as the spec requires.

    The requests whose POSTs got the 404 were re-sent on the new session; what lived on the
    old one is gone (resource subscriptions: subscribe again if needed). The standalone GET
    stream is re-opened."""

    version: str


@dataclass(frozen=True)
class Closed(Event):
    """The session ended; always the last event."""

    reason: str
