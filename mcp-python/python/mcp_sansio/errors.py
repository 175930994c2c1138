"""Exceptions of mcp_sansio.

Two families, as in h11: :class:`LocalProtocolError` is *your* mistake (a command the
protocol does not allow right now: a request before the session is ready, progress that
does not increase, ...) and leaves the session unchanged; :class:`RemoteProtocolError` and
its subclasses describe what the *peer* did (an error answer, no answer in time, a closed
connection).
"""

from typing import Any, Optional

# The JSON-RPC error codes, as the core defines them (for ``McpError(code, ...)``)
from ._core import (
    HEADER_MISMATCH,
    INSUFFICIENT_SCOPE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "INSUFFICIENT_SCOPE",
    "LocalProtocolError",
    "RemoteProtocolError",
    "McpError",
    "RequestTimeout",
    "RequestCancelled",
    "ConnectionClosed",
    "ConnectError",
    "CertificateError",
    "ProxyError",
    "RedirectError",
    "AuthorizationError",
    "InvalidResult",
    "SubscriptionLost",
]


class LocalProtocolError(Exception):
    """A command was used in a way the protocol does not allow; nothing was sent."""


class RemoteProtocolError(Exception):
    """The peer did not give what a request needed (see the subclasses)."""


class McpError(RemoteProtocolError):
    """The peer answered with a JSON-RPC error (``code``, ``message``, optional ``data``).

    Raise it from a server handler to answer the request with that error.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"


class RequestTimeout(RemoteProtocolError):
    """No answer came in time; the peer was sent ``notifications/cancelled``."""


class RequestCancelled(RemoteProtocolError):
    """The request was cancelled (by us, or by refusing the input it needed)."""


class ConnectionClosed(RemoteProtocolError):
    """The session closed before the request was answered."""

    def __init__(self, reason: Optional[str] = None) -> None:
        super().__init__(reason or "the session closed")
        self.reason = reason


class ConnectError(ConnectionClosed, ConnectionError):
    """An HTTP client could not open a connection to its server: refused, unreachable, no
    TLS handshake, too slow (``connect_timeout``). ``url`` is what it was connecting to.

    Also a builtin :class:`ConnectionError` (so an :class:`OSError`)."""

    def __init__(self, message: str, url: Optional[str] = None) -> None:
        ConnectionClosed.__init__(self, message)
        self.url = url

    def __str__(self) -> str:
        return str(self.reason)


class CertificateError(ConnectError):
    """The server's TLS certificate failed verification: not issued by a trusted root, not
    valid for the host name, expired (``verify_message`` is OpenSSL's word for it)."""

    def __init__(self, message: str, url: Optional[str] = None, verify_message: Optional[str] = None) -> None:
        super().__init__(message, url)
        self.verify_message = verify_message


class ProxyError(ConnectError):
    """The proxy could not be reached, or refused to open the tunnel (``status``: its HTTP
    status, such as 403 or 407)."""

    def __init__(self, message: str, url: Optional[str] = None, status: Optional[int] = None) -> None:
        super().__init__(message, url)
        self.status = status


class RedirectError(ConnectError):
    """The server redirected a request where the client does not follow: to another origin
    (scheme, host or port; the request's headers, ``Authorization`` included, are never
    sent there), more than ``MAX_REDIRECTS`` times in a row, or a ``POST`` with 303.
    ``status`` is the redirect's HTTP status, ``location`` where it pointed."""

    def __init__(self, message: str, url: Optional[str] = None, status: Optional[int] = None, location: Optional[str] = None) -> None:
        super().__init__(message, url)
        self.status = status
        self.location = location


class AuthorizationError(ConnectionClosed):
    """An HTTP server refused a request for want of authorization (401 or 403) and the
    client could not satisfy it: no OAuth is configured (``connect_http(...,
    auth=OAuth(...))``), the challenge starts no authorization, or the authorization flow
    failed (the reason follows the challenge). The message is one sentence, e.g. ``the
    server at http://host/mcp answered HTTP 401 with WWW-Authenticate: Bearer
    resource_metadata="..."; this client has no authorization configured (pass
    auth=OAuth(...) to connect_http)``.

    ``status`` is 401 or 403, ``challenge`` the ``WWW-Authenticate`` value(s) (``None``
    when the server sent none), ``url`` the server's URL. Raised by the call that was
    refused, or by the connect when the handshake was."""

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        challenge: Optional[str] = None,
        url: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.challenge = challenge
        self.url = url

    def __str__(self) -> str:
        return str(self.reason)


class InvalidResult(RemoteProtocolError):
    """The peer's answer does not have the shape the method needs (or asked for input
    too many times)."""


class SubscriptionLost(RemoteProtocolError):
    """A subscription ended because its notifications were not read fast enough; some
    were lost. Listen again (and re-read what you watch)."""
