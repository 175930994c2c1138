"""Type stubs of the Rust extension ``mcp_sansio._core``.

Every method that takes ``now`` accepts a float on ``time.monotonic()``'s clock (or any
fake clock: each session anchors the first time it is given); ``None`` means the current
time. After every call, drain ``next_event()`` and write ``data_to_send()``.
"""

from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

from .events import Event

JSON = Any
LATEST_PROTOCOL_VERSION: str
PROTOCOL_VERSIONS: List[str]

# The core's JSON-RPC error codes (mcp_sansio::jsonrpc::code, server::INSUFFICIENT_SCOPE)
PARSE_ERROR: int
INVALID_REQUEST: int
METHOD_NOT_FOUND: int
INVALID_PARAMS: int
INTERNAL_ERROR: int
HEADER_MISMATCH: int
MISSING_REQUIRED_CLIENT_CAPABILITY: int
UNSUPPORTED_PROTOCOL_VERSION: int
INSUFFICIENT_SCOPE: int

def protocol_era(version: str) -> Literal["legacy", "modern"]:
    """The era of a protocol version: ``"legacy"`` (the ``initialize`` handshake) or
    ``"modern"`` (2026-07-28 on); ``ValueError`` for a version the core does not know."""

def subscription_covers(subscribed: str, uri: str) -> bool:
    """Whether a subscription to the resource ``subscribed`` covers a change of ``uri`` (the
    same URI, or one under it): the rule the server sends ``notifications/resources/updated``
    by."""

def legacy_listen_granted(notifications: Dict[str, JSON], capabilities: Dict[str, JSON]) -> Dict[str, bool]:
    """``Client.listen`` on a legacy connection: the list-change flags of a listen filter
    (``toolsListChanged``, ...) that the server's ``capabilities`` declare ``listChanged``
    for (a legacy server sends those to every client)."""

def legacy_listen_wants(notifications: Dict[str, JSON], method: str, params: Optional[Dict[str, JSON]] = None) -> bool:
    """``Client.listen`` on a legacy connection: whether a notification belongs to a listen
    filter (a list change whose flag it sets, a resource update its ``resourceSubscriptions``
    cover)."""

def elicitation_form(schema: Dict[str, JSON]) -> Dict[str, JSON]:
    """The restricted ``requestedSchema`` of an elicitation form for a JSON Schema of an
    object (the core's ``ElicitationSchema::from_json_schema``: ``$ref``s resolved, nullable
    fields as their type, keywords a form cannot carry left out). Raises ``TypeError`` when
    it cannot be a form; its ``field`` attribute names the first field a form cannot hold
    (``None`` when the schema is no object of fields)."""

class Catalog:
    """A server's tools, resources, resource templates and prompts, each with its handler:
    the one registry. ``ServerConfig(..., catalog=)`` serves a snapshot of it, and the
    events of requests routed to an entry carry its ``handler``. Registering a key again
    replaces the entry (with its handler and scopes); an entry the core refuses raises
    ``ValueError`` and leaves the catalog as it was. ``scopes``: a list of scopes (or one
    space-separated string) a caller must be granted to use the entry."""

    def __init__(self) -> None: ...
    def add_tool(self, tool: Dict[str, JSON], handler: Any, scopes: Any = None) -> None: ...
    def add_resource(
        self, uri: str, entry: Dict[str, JSON], handler: Any, scopes: Any = None
    ) -> Literal["resource", "template"]:
        """A resource, or a resource template when ``uri`` is a URI template with variables
        (RFC 6570); ``entry`` holds the rest (``name``, ``description``, ``mimeType``, ...)."""
    def add_prompt(self, prompt: Dict[str, JSON], handler: Any, scopes: Any = None) -> None: ...
    def set_completion(self, handler: Any) -> None: ...
    def remove_tool(self, name: str) -> bool: ...
    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or resource template (by its URI or URI template)."""
    def remove_prompt(self, name: str) -> bool: ...
    def handler(self, kind: str, key: str) -> Any:
        """The handler of an entry (``kind``: ``"tool"``, ``"resource"``, ``"template"``,
        ``"prompt"``), or ``None``."""
    @property
    def completion(self) -> Any: ...
    def tool(self, name: str) -> Optional[Dict[str, JSON]]: ...
    @property
    def tools(self) -> List[Dict[str, JSON]]: ...
    @property
    def resources(self) -> List[Dict[str, JSON]]: ...
    @property
    def resource_templates(self) -> List[Dict[str, JSON]]: ...
    @property
    def prompts(self) -> List[Dict[str, JSON]]: ...
    def required_scopes(self, kind: str, key: str) -> List[str]: ...

class ServerConfig:
    """A server's identity, catalog and capabilities, shared by its sessions.

    ``tools``, ``resources``, ``resource_templates`` and ``prompts`` are lists of the
    protocol's ``Tool``, ``Resource``, ``ResourceTemplate`` and ``Prompt`` objects (dicts);
    declaring any declares its capability. With ``route=True`` (the default) sessions answer
    list requests, ``logging/setLevel``, unknown names and invalid arguments themselves and
    route the rest as ``ToolCall``/``ResourceRead``/``PromptGet``/``CompletionRequest``
    (a session whose ``catalog_answers`` is set hands its own answers out as
    ``CatalogAnswer`` first);
    with ``route=False`` every request is a plain ``Request``. ``state_key`` (32 bytes)
    seals 2026 multi-round-trip state (random per process by default);
    ``request_timeout`` bounds requests the server sends (seconds, ``None`` for none).
    ``node`` shares the HTTP sessions' tasks with other processes as process ``node``
    (``HttpServer.attach_store``), with a ``lease`` (seconds, 10 unless given); a
    ``ServerSession`` (a byte stream) keeps its tasks.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: Optional[str] = None,
        instructions: Optional[str] = None,
        tools: Optional[List[Dict[str, JSON]]] = None,
        resources: Optional[List[Dict[str, JSON]]] = None,
        resource_templates: Optional[List[Dict[str, JSON]]] = None,
        prompts: Optional[List[Dict[str, JSON]]] = None,
        completions: bool = False,
        logging: bool = False,
        resource_subscriptions: bool = False,
        list_changed: bool = False,
        capabilities: Optional[Dict[str, JSON]] = None,
        versions: Optional[List[str]] = None,
        state_key: Optional[bytes] = None,
        request_timeout: Optional[float] = 60.0,
        route: bool = True,
        node: Optional[str] = None,
        lease: Optional[float] = None,
        scopes: Optional[Sequence[Tuple[str, str, Sequence[str]]]] = None,
        hide_forbidden: bool = False,
        catalog: Optional[Catalog] = None,
        tasks: bool = False,
    ) -> None:
        """``catalog``: the entries of a :class:`Catalog` with their handlers (added to the
        lists, if both are given; a ``completion`` handler declares ``completions``).
        ``tasks``: declares tasks for ``tools/call`` (the 2025-11-25 ``tasks`` capability and
        the 2026 tasks extension; ``capabilities`` given win). ``scopes``: ``(kind, key, scopes)`` triples, each entry's required scopes (kind
        ``"tool"``, ``"resource"``, ``"template"`` or ``"prompt"``; key its name, URI or URI
        template; ``ValueError`` for an entry not in the catalog): a request from a caller
        whose principal lacks them is refused (-32003 ``insufficient_scope``; over HTTP a 403
        before the session sees it). ``hide_forbidden``: lists leave such entries out."""
    @property
    def capabilities(self) -> Dict[str, JSON]: ...
    def declares_list_changed(self, list: str) -> bool:
        """Whether the server declares ``listChanged`` for ``list`` (``"tools"``,
        ``"prompts"``, ``"resources"``; ``ValueError`` for another)."""
    @property
    def tools(self) -> List[Dict[str, JSON]]: ...

class _ServerCommands:
    def resolve_resource(self, uri: str, principal: Optional["Principal"] = None) -> Tuple[Any, Dict[str, JSON]]:
        """What ``uri`` names among the resources served now, for a caller with
        ``principal`` (a handler's own ``ctx.read_resource``): ``(handler, variables)``, the
        handler of the resource or matching template and the template's variables;
        ``McpError`` -32602 when nothing matches, -32003 when the principal lacks the
        entry's scopes."""
    def set_catalog(self, config: ServerConfig) -> None:
        """Serves ``config``'s tools, resources and prompts from now on (added or removed at
        run time); the identity and capabilities stay those the session started with. Tell
        clients with ``notify_list_changed``."""
    def respond(self, request_id: int, result: Dict[str, JSON], now: Optional[float] = None) -> bool:
        """Answers a request (a tool, resource, prompt or completion result is checked and
        fitted to the request's protocol version); ``False`` if it was already answered or
        cancelled. A request that became a task is completed instead."""
    def respond_error(
        self, request_id: int, code: int, message: str, data: JSON = None, now: Optional[float] = None
    ) -> bool:
        """Answers a request with a JSON-RPC error (fails its task, if it became one)."""
    def report_progress(
        self, request_id: int, progress: float, total: Optional[float] = None, message: Optional[str] = None
    ) -> bool:
        """Reports progress; ``False`` if the client did not ask for it. Raises
        ``LocalProtocolError`` if ``progress`` does not increase."""
    def log(self, request_id: int, level: str, data: JSON, logger: Optional[str] = None) -> bool:
        """Sends ``notifications/message`` tied to the request if the client's level lets
        ``level`` through (legacy: ``logging/setLevel``; 2026: the request's own level)."""
    def ask_input(
        self, request_id: int, requests: Dict[str, JSON], now: Optional[float] = None
    ) -> Tuple[Literal["answered", "sent", "suspended"], Optional[Dict[str, JSON]]]:
        """Asks the client for input (``{key: {"method": ..., "params": ...}}``):
        ``("answered", responses)`` when a 2026 retry carried them, ``("sent", None)`` on a
        legacy session (wait for ``InputAnswered``), ``("suspended", None)`` on a 2026 request
        (it was answered with ``input_required``; the retry arrives as a new request). Raises
        ``McpError`` (-32021) if the client lacks the capability."""
    def start_task(
        self, request_id: int, ttl: Optional[float] = None, poll_interval: Optional[float] = None, now: Optional[float] = None
    ) -> int:
        """Answers the request with a task; ``respond`` later completes it. Raises
        ``McpError`` if the client did not offer a task."""
    def update_task(
        self,
        task_id: int,
        status: Literal["working", "input_required"],
        message: Optional[str] = None,
        requests: Optional[Dict[str, JSON]] = None,
        now: Optional[float] = None,
    ) -> bool: ...
    def next_event(self) -> Optional[Event]: ...
    def handle_timeout(self, now: Optional[float] = None) -> None: ...
    def next_deadline(self) -> Optional[float]: ...
    @property
    def pending_requests(self) -> int: ...
    @property
    def catalog_answers(self) -> bool:
        """Whether the requests the catalog answers itself (the lists; a ``tools/call``,
        ``resources/read``, ``prompts/get`` or ``completion/complete`` it refuses) come out
        as ``CatalogAnswer`` events for the application to answer, instead of being answered
        at once. ``False`` by default; a server with middleware sets it."""
    @catalog_answers.setter
    def catalog_answers(self, on: bool) -> None: ...

class ServerSession(_ServerCommands):
    """One MCP connection, server side, both eras."""

    def __init__(self, config: ServerConfig, *, now: Optional[float] = None) -> None: ...
    def receive_data(self, data: bytes, now: Optional[float] = None) -> None: ...
    def receive_message(self, message: bytes, now: Optional[float] = None) -> None: ...
    def receive_eof(self, now: Optional[float] = None) -> None: ...
    def data_to_send(self) -> bytes: ...
    def task_status(self, task_id: int) -> Optional[str]: ...
    def set_principal(self, principal: Optional["Principal"]) -> None:
        """Who sends this connection's requests from now on (a byte stream whose user the
        application authenticated): handlers see it, scoped entries check its scopes, its
        tasks are bound to it."""
    @property
    def principal(self) -> Optional["Principal"]: ...
    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None: ...
    def notify_resource_updated(self, uri: str) -> int: ...
    def send_notification(self, method: str, params: Optional[Dict[str, JSON]] = None) -> None: ...
    def close(self, now: Optional[float] = None) -> None: ...
    @property
    def wants_read(self) -> bool: ...
    @property
    def is_closed(self) -> bool: ...
    @property
    def version(self) -> Optional[str]: ...
    @property
    def era(self) -> Optional[Literal["legacy", "modern"]]:
        """The era of ``version`` (``None`` while there is none)."""

class HttpFront:
    """The HTTP/1.1 front end of ``serve_http`` in Rust (hyper on a thread of its own, not
    on Windows): it owns the listeners and connections under ``rules``' edge settings and
    queues each whole request for the loop."""

    def __init__(
        self, rules: "HttpServer", addresses: List[Tuple[str, int]], *, count_connections: bool = False
    ) -> None: ...
    @property
    def port(self) -> int: ...
    @property
    def wake_fd(self) -> int:
        """Readable when events wait: call :meth:`take`."""
    @property
    def running(self) -> bool: ...
    def take(self) -> List[Tuple[Any, ...]]:
        """``("request", id, method, path, headers, body, peer, oversize)``, ``("gone",
        id)``, ``("connection", +1 | -1)``."""
    def respond(
        self, id: int, status: int, headers: List[Tuple[str, str]], body: bytes, close: bool = False
    ) -> bool: ...
    def send(self, id: int, pieces: List[Tuple[Any, ...]]) -> bool: ...
    def finish(self, id: int) -> None: ...
    def close(self) -> None: ...

class HttpServer(_ServerCommands):
    """The Streamable HTTP rules (both wires) and every session of one endpoint."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        now: Optional[float] = None,
        allowed_hosts: Optional[List[str]] = None,
        allow_any_host: bool = False,
        max_body_size: Optional[int] = None,
        idle_timeout: Optional[float] = None,
        retry: Optional[float] = None,
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
        max_unwritten: Optional[int] = None,
        node: Optional[str] = None,
    ) -> None:
        """``retry``: the reconnection delay (seconds) sent with every 2025-wire event stream.
        ``keepalive``: an open response quiet this long (seconds; 15 unless given, 0 never)
        gets an SSE comment, opening its event stream if still undecided. The connection
        edge a front end enforces (seconds): ``header_read_timeout`` (10),
        ``body_read_timeout`` (30), ``keep_alive_timeout`` (60), ``max_connections`` (1024),
        ``accept_backoff`` (0.1). ``max_sessions`` (1024): 2025-wire sessions; at the cap the
        least recently used idle one is closed for a new client (503 only when all are busy).
        Requests in progress: ``max_in_flight`` (4096) in all, past it 503;
        ``max_in_flight_per_peer`` (1024) from one client address,
        ``max_in_flight_per_connection`` (128) from one connection, past them 429; each with
        ``Retry-After``. ``max_unwritten`` (1 MiB): the bytes of one open response a front
        end holds for a client that does not read them; past it, drop the response and call
        ``handle_closed``. ``node`` (1 to 32 of ``A-Z a-z 0-9 _ -``, else ``ValueError``):
        every 2025-wire session id is ``<node>.<hex>``, for a load balancer's sticky routing."""
    @property
    def max_body_size(self) -> int: ...
    @property
    def header_read_timeout(self) -> float: ...
    @property
    def body_read_timeout(self) -> float: ...
    @property
    def keep_alive_timeout(self) -> float: ...
    @property
    def max_connections(self) -> int: ...
    @property
    def accept_backoff(self) -> float: ...
    @property
    def max_unwritten(self) -> int: ...
    @property
    def session_count(self) -> int: ...
    def reject_oversize(self) -> Tuple[Literal["complete"], int, List[Tuple[str, str]], bytes]: ...
    def reject_malformed(self, reason: str) -> Tuple[Literal["complete"], int, List[Tuple[str, str]], bytes]: ...
    def handle_request(
        self,
        method: str,
        headers: Sequence[Tuple[str, Union[str, bytes]]],
        body: bytes,
        now: Optional[float] = None,
        peer: Optional[Tuple[str, int]] = None,
        principal: Optional["Principal"] = None,
    ) -> Union[
        Tuple[Literal["complete"], int, List[Tuple[str, str]], bytes],
        Tuple[Literal["open"], int],
    ]:
        """``principal``: who the request's access token stands for, as the front end
        verified it (``ResourceServer.gate`` and ``verdict``); the handlers read it and the
        2025 sessions and tasks it creates answer only the same principal. The header
        fields go to the handlers too (``RequestInfo.headers``)."""
    def set_resource_server(self, rules: Optional["ResourceServer"]) -> None:
        """The protection whose challenge words the 403 for a scoped tool, resource or
        prompt (with the scopes and the metadata URL)."""
    def handle_closed(self, exchange: int, now: Optional[float] = None) -> None: ...
    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> None:
        """Tells every session a list changed (legacy: on its GET stream; 2026: listen streams)."""
    def notify_resource_updated(self, uri: str) -> int:
        """Tells every session's subscribers of ``uri`` (or a parent) that it changed."""
    def attach_store(self, store: "TaskStore", wake: Callable[[], None]) -> None:
        """Shares the sessions' tasks through ``store`` (the config's ``node``); ``wake()``
        is called, from any thread, when a reply arrives for ``drive_store``: it must only
        schedule the driver (``loop.call_soon_threadsafe``)."""
    def drive_store(self, now: Optional[float] = None) -> bool:
        """Feeds the store's replies to the sessions and runs their operations, in order;
        whether there was any."""
    def handle_store_signal(self, message: str, now: Optional[float] = None) -> None:
        """A message published to the store (task signals reach their sessions)."""
    def next_output(
        self,
    ) -> Optional[
        Union[
            Tuple[Literal["head"], int, int, List[Tuple[str, str]]],
            Tuple[Literal["body"], int, bytes],
            Tuple[Literal["end"], int],
        ]
    ]: ...

class ClientSession:
    """One MCP connection, client side. ``era``: ``"auto"`` (discover, fall back to
    initialize), ``"modern"``, ``"legacy"`` or a protocol version. Every request command
    returns the request id its ``Response``/``RequestFailed`` will carry; ``timeout`` is in
    seconds (``math.inf`` waits forever, ``None`` uses ``request_timeout``)."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        era: str = "auto",
        capabilities: Optional[Dict[str, JSON]] = None,
        request_timeout: Optional[float] = 60.0,
        discover_timeout: float = 3.0,
        max_message_size: Optional[int] = None,
        now: Optional[float] = None,
        tasks: bool = False,
    ) -> None:
        """``tasks``: declares the 2026 tasks extension (the server may run any call as a
        task), added to ``capabilities``."""
    def receive_data(self, data: bytes, now: Optional[float] = None) -> None: ...
    def receive_message(self, message: bytes, now: Optional[float] = None) -> None: ...
    def receive_eof(self, now: Optional[float] = None) -> None: ...
    def handle_timeout(self, now: Optional[float] = None) -> None: ...
    def data_to_send(self) -> bytes: ...
    def next_deadline(self) -> Optional[float]: ...
    def next_event(self) -> Optional[Event]: ...
    def set_request_meta(self, meta: Optional[Dict[str, JSON]] = None) -> None:
        """Gives the next request sent these ``_meta`` entries (its own win); one-shot."""
        ...
    def send_request(
        self,
        method: str,
        params: Optional[Dict[str, JSON]] = None,
        *,
        progress: bool = False,
        timeout: Optional[float] = None,
        as_task: bool = False,
        task_ttl: Optional[float] = None,
        now: Optional[float] = None,
    ) -> int: ...
    def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, JSON]] = None,
        *,
        progress: bool = False,
        timeout: Optional[float] = None,
        as_task: bool = False,
        task_ttl: Optional[float] = None,
        now: Optional[float] = None,
    ) -> int: ...
    def list_tools(self, cursor: Optional[str] = None, *, now: Optional[float] = None) -> int: ...
    def list_resources(self, cursor: Optional[str] = None, *, now: Optional[float] = None) -> int: ...
    def list_resource_templates(self, cursor: Optional[str] = None, *, now: Optional[float] = None) -> int: ...
    def read_resource(self, uri: str, *, now: Optional[float] = None) -> int: ...
    def list_prompts(self, cursor: Optional[str] = None, *, now: Optional[float] = None) -> int: ...
    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *, now: Optional[float] = None) -> int: ...
    def complete(
        self, ref: Dict[str, JSON], argument: Dict[str, JSON], context: Optional[Dict[str, JSON]] = None, *, now: Optional[float] = None
    ) -> int: ...
    def ping(self, *, now: Optional[float] = None) -> int: ...
    def set_logging_level(self, level: str, *, now: Optional[float] = None) -> int: ...
    def subscribe_resource(self, uri: str, *, now: Optional[float] = None) -> int: ...
    def unsubscribe_resource(self, uri: str, *, now: Optional[float] = None) -> int: ...
    def listen(self, notifications: Dict[str, JSON], *, now: Optional[float] = None) -> int: ...
    def get_task(self, task_id: str, *, now: Optional[float] = None) -> int: ...
    def cancel_task(self, task_id: str, *, now: Optional[float] = None) -> int: ...
    def send_notification(self, method: str, params: Optional[Dict[str, JSON]] = None) -> None: ...
    def cancel(self, request_id: int, reason: Optional[str] = None, now: Optional[float] = None) -> bool: ...
    def provide_input(self, input_id: int, responses: Dict[str, JSON], now: Optional[float] = None) -> None: ...
    def refuse_input(self, input_id: int, code: int = -32603, message: str = "input refused", now: Optional[float] = None) -> None: ...
    def respond(self, request_id: int, result: Dict[str, JSON]) -> bool: ...
    def close(self, now: Optional[float] = None) -> None: ...
    @property
    def wants_read(self) -> bool: ...
    @property
    def is_closed(self) -> bool: ...
    @property
    def version(self) -> Optional[str]: ...
    @property
    def era(self) -> Optional[Literal["legacy", "modern"]]:
        """The era of ``version`` (``None`` while there is none)."""
    @property
    def peer(self) -> Optional[Dict[str, JSON]]: ...
    @property
    def requests_in_flight(self) -> int: ...
    @property
    def close_error(self) -> Optional[Exception]: ...

class TaskStore:
    """Where server processes share tasks and changes: ``TaskStore.redis(url)`` (the Rust
    ``redis`` client on threads of its own; Redis need not be up yet) or
    ``TaskStore.memory()`` (several servers of one process, tests)."""

    @staticmethod
    def redis(url: str, *, prefix: Optional[str] = None) -> "TaskStore": ...
    @staticmethod
    def memory() -> "TaskStore": ...
    @property
    def description(self) -> str: ...
    def set_available(self, available: bool) -> None:
        """A memory store only: fail every operation, as an unreachable store does."""
    def publish(self, message: str) -> None: ...
    def subscribe(self, deliver: Callable[[str], None]) -> "StoreSubscription":
        """``deliver(message)`` for every message published, from any thread."""

class StoreSubscription:
    def close(self) -> None: ...

def decode_signal(text: str) -> Optional[Tuple[str, Optional[str], Optional[str]]]: ...
def list_changed_signal(origin: str, list: str) -> str: ...
def resource_updated_signal(origin: str, uri: str) -> str: ...

def check_header(name: str, value: str) -> None:
    """Checks one application header as the HTTP client transport will; ``ValueError``
    (the core's message) when it is refused."""

class OAuthSetup:
    """The core's OAuth configuration with its signers and token store (made by
    ``mcp_sansio.auth.OAuth``)."""

    def __init__(
        self,
        redirect_uri: str,
        *,
        grant: str = ...,
        client_id: Optional[str] = ...,
        client_secret: Optional[str] = ...,
        issuer: Optional[str] = ...,
        client_metadata_url: Optional[str] = ...,
        client_name: str = ...,
        application_type: str = ...,
        scopes: Sequence[str] = ...,
        request_offline_access: bool = ...,
        private_key_pem: Optional[str] = ...,
        signing_algorithm: str = ...,
        assertion: Optional[str] = ...,
        idp_token_endpoint: Optional[str] = ...,
        idp_client_id: Optional[str] = ...,
        idp_client_secret: Optional[str] = ...,
        id_token: Optional[str] = ...,
        dpop: bool = ...,
        dpop_key: Optional[bytes] = ...,
        max_attempts: int = ...,
        refresh_margin: float = ...,
        token_store: Any = ...,
    ) -> None: ...

class HeadlessUserAgent:
    """Follows an authorization URL's redirects to the redirect URI, sans IO."""

    def __init__(self, redirect_uri: str, url: str) -> None: ...
    def step(self, status: Optional[int] = ..., headers: Sequence[Tuple[str, str]] = ...) -> Tuple[Any, ...]: ...

def new_dpop_key() -> bytes: ...

class HttpClientTransport:
    """The client side of Streamable HTTP for one ``ClientSession``, sans IO."""

    def __init__(
        self, headers: Sequence[Tuple[str, str]] = ..., *, url: Optional[str] = ..., auth: Optional[OAuthSetup] = ...
    ) -> None: ...
    def next_auth_action(self, session: ClientSession) -> Optional[Tuple[Any, ...]]: ...
    def handle_auth_response(self, status: int, headers: Sequence[Tuple[str, str]], body: bytes, session: ClientSession) -> None: ...
    def handle_auth_redirect(self, url: str, session: ClientSession) -> None: ...
    def handle_auth_error(self, reason: str, session: ClientSession) -> None: ...
    @property
    def auth_scope(self) -> Optional[str]: ...
    @property
    def authorized(self) -> bool: ...
    def request_headers(self, request_id: int, headers: Sequence[Tuple[str, str]], session: ClientSession) -> None: ...
    def pull(self, session: ClientSession) -> None: ...
    def next_request(self) -> Optional[Tuple[int, str, List[Tuple[str, str]], bytes]]: ...
    def next_abort(self) -> Optional[int]: ...
    def handle_head(self, stream: int, status: int, headers: Sequence[Tuple[str, str]], session: ClientSession) -> None: ...
    def handle_body(self, stream: int, data: bytes, session: ClientSession) -> None: ...
    def handle_end(self, stream: int, session: ClientSession) -> None: ...
    def handle_failed(self, stream: int, error: str, session: ClientSession) -> None: ...
    def next_deadline(self, session: ClientSession) -> Optional[float]: ...
    def handle_timeout(self, session: ClientSession) -> None: ...
    def close(self) -> Optional[Tuple[int, str, List[Tuple[str, str]], bytes]]: ...
    @property
    def streams_in_flight(self) -> int: ...


class Principal:
    """Who an access token was issued to, as the verifier found: the user (``subject``), the
    OAuth client (``client_id``), the ``scopes`` it grants (a list, or one space-separated
    string) and its decoded ``claims``. Equal (and hashed alike) when subject and client id
    are: a refreshed token with other scopes is the same caller."""

    def __init__(
        self,
        subject: Optional[str] = None,
        client_id: Optional[str] = None,
        scopes: Optional[Union[str, Sequence[str]]] = None,
        claims: Optional[Dict[str, JSON]] = None,
    ) -> None: ...
    @property
    def subject(self) -> Optional[str]: ...
    @property
    def client_id(self) -> Optional[str]: ...
    @property
    def scopes(self) -> List[str]: ...
    @property
    def claims(self) -> Optional[Dict[str, JSON]]: ...
    def has_scopes(self, scopes: Union[str, Sequence[str]]) -> bool:
        """Whether the token grants every one of ``scopes``."""


class RequestInfo:
    """What a handler reads of its request (the ``info`` of the request events): made by
    the session; each value is converted when read."""

    @property
    def method(self) -> str: ...
    @property
    def principal(self) -> Optional[Principal]:
        """The verified principal of the request's access token; ``None`` without one."""
    @property
    def headers(self) -> Optional[List[Tuple[str, str]]]:
        """The HTTP request's header fields in order; ``None`` off HTTP."""
    @property
    def session_id(self) -> Optional[str]:
        """The 2025 wire's ``Mcp-Session-Id`` of the request's session."""
    @property
    def meta(self) -> Optional[Dict[str, JSON]]:
        """The request's ``_meta``."""
    @property
    def client_info(self) -> Optional[Dict[str, JSON]]:
        """``clientInfo``: of ``initialize`` (legacy) or of the request's ``_meta`` (2026)."""
    @property
    def client_capabilities(self) -> Dict[str, JSON]:
        """The client's capabilities for this request."""
    @property
    def protocol_version(self) -> str: ...
    @property
    def era(self) -> Literal["legacy", "modern"]: ...


class ResourceServer:
    """The protection of one MCP endpoint (an OAuth protected resource): ``resource`` is the
    endpoint's absolute URL (``ValueError`` otherwise), ``authorization_server`` the issuer,
    ``scopes`` what every request needs. Its Protected Resource Metadata is served at
    ``metadata_path``."""

    def __init__(
        self,
        resource: str,
        authorization_server: str,
        *,
        scopes: Optional[Union[str, Sequence[str]]] = None,
    ) -> None: ...
    @property
    def resource(self) -> str: ...
    @property
    def authorization_server(self) -> str: ...
    @property
    def scopes(self) -> List[str]: ...
    @property
    def metadata_path(self) -> str: ...
    @property
    def metadata_document(self) -> bytes: ...
    def gate(
        self, method: str, path: str, headers: Sequence[Tuple[str, Union[str, bytes]]]
    ) -> Union[
        Tuple[Literal["complete"], int, List[Tuple[str, str]], bytes],
        Tuple[Literal["verify"], str],
    ]:
        """The first step: the metadata document for a GET of ``metadata_path``, 401 without
        a bearer token, else ``("verify", token)``."""
    def verdict(
        self, granted: Union[Principal, str]
    ) -> Optional[Tuple[Literal["complete"], int, List[Tuple[str, str]], bytes]]:
        """After the verifier: ``None`` lets the request through; a reason (``str``) gives
        401 ``invalid_token``; a principal without the required scopes 403."""


class JwtVerifier:
    """Verifies JWT access tokens: the signature (``secret`` for HS256/384/512, a PEM
    ``public_key`` for RS*, PS*, ES256/384, EdDSA), ``exp`` and ``nbf`` (with ``leeway``
    seconds), ``aud`` (``audience``; made without one, a protected server checks its
    resource URL) and ``iss`` (``issuer``, if given). The principal: ``sub``, ``client_id``
    (or ``azp``), scopes from ``scope`` (space separated) or ``scp``, every claim. Pass it
    as ``Server(auth=...)``."""

    def __init__(
        self,
        secret: Optional[Union[str, bytes]] = None,
        *,
        algorithm: str = "HS256",
        public_key: Optional[Union[str, bytes]] = None,
        audience: Optional[Union[str, Sequence[str]]] = None,
        issuer: Optional[Union[str, Sequence[str]]] = None,
        leeway: int = 60,
    ) -> None: ...
    @property
    def audience(self) -> Optional[List[str]]: ...
    def verify(self, token: str, *, audience: Optional[Union[str, Sequence[str]]] = None) -> Principal:
        """The token's principal; ``ValueError`` saying why it is invalid."""
    def __call__(self, token: str) -> Principal: ...
