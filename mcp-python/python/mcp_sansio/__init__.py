"""Model Context Protocol in Python's sans-IO idiom, on a Rust core.

``mcp_sansio`` is the protocol without the I/O, in the style of h11 and wsproto: session
objects that take bytes in (``receive_data``) and give events (``next_event``) and bytes
out (``data_to_send``), with time passed in as floats. The protocol itself (both eras,
the legacy ``initialize`` handshake and the 2026-07-28 per-request metadata, timeouts,
progress, cancellation, input requests, tasks, subscriptions, Streamable HTTP) runs in
Rust (``mcp-sansio``); the drivers in :mod:`mcp_sansio.aio` and :mod:`mcp_sansio.sync`
(and the ASGI app of :mod:`mcp_sansio.asgi`, ``Server.asgi_app()``) only move bytes and run
your handlers. Logs go to the standard ``logging`` module, under ``mcp_sansio``
(``mcp_sansio.server``, ``mcp_sansio.http``, ``mcp_sansio.client``); they stay silent until
the application configures logging (the package's logger has a ``NullHandler``, so nothing
reaches Python's last-resort handler on stderr), and errors still reach the peer as
JSON-RPC errors or ``isError`` results. Traces and metrics go through OpenTelemetry
(or ``prometheus_client``) when installed (:mod:`mcp_sansio.observe`); middleware wraps
every request (``Server.middleware``, ``Client.middleware``).

The import name is ``mcp_sansio`` (the distribution ``mcp-sansio``), so it installs side by
side with the official SDK's ``mcp`` package.
"""

import logging as _logging

from ._core import (
    LATEST_PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    Catalog,
    ClientSession,
    HttpServer,
    JwtVerifier,
    Principal,
    RequestInfo,
    ResourceServer,
    ServerConfig,
    ServerSession,
    TaskStore,
)
from .auth import OAuth
from .errors import (
    AuthorizationError,
    CertificateError,
    ConnectError,
    ConnectionClosed,
    InvalidResult,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    RequestCancelled,
    ProxyError,
    RedirectError,
    RequestTimeout,
    SubscriptionLost,
)
from .events import (
    Cancelled,
    CatalogAnswer,
    Closed,
    CompletionRequest,
    Event,
    InputAnswered,
    InputFailed,
    InputRequired,
    Notification,
    Progress,
    PromptGet,
    Ready,
    Request,
    RequestFailed,
    ResourceRead,
    Response,
    SessionRenewed,
    TaskCancelled,
    TaskInput,
    TaskStatus,
    ToolCall,
    Unblocked,
)

# A library logs, the application decides where logs go: without this handler a record of
# WARNING or above would reach Python's last-resort handler (stderr) when nothing is
# configured; with logging configured (``logging.basicConfig()``, a handler on
# ``mcp_sansio``) records propagate as usual.
_logging.getLogger("mcp_sansio").addHandler(_logging.NullHandler())

__all__ = [
    "TaskStore",
    "JwtVerifier",
    "Principal",
    "RequestInfo",
    "ResourceServer",
    "LATEST_PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "Catalog",
    "ClientSession",
    "HttpServer",
    "ServerConfig",
    "ServerSession",
    "OAuth",
    "AuthorizationError",
    "CertificateError",
    "ConnectError",
    "ConnectionClosed",
    "InvalidResult",
    "LocalProtocolError",
    "McpError",
    "RemoteProtocolError",
    "RequestCancelled",
    "ProxyError",
    "RedirectError",
    "RequestTimeout",
    "SubscriptionLost",
    "Cancelled",
    "CatalogAnswer",
    "Closed",
    "CompletionRequest",
    "Event",
    "InputAnswered",
    "InputFailed",
    "InputRequired",
    "Notification",
    "Progress",
    "PromptGet",
    "Ready",
    "Request",
    "RequestFailed",
    "ResourceRead",
    "Response",
    "SessionRenewed",
    "TaskCancelled",
    "TaskInput",
    "TaskStatus",
    "ToolCall",
    "Unblocked",
]
