"""OAuth 2.1 for the HTTP client: ``Client.connect_http(url, auth=OAuth(...))``.

The flow is the Rust core's (``mcp_sansio::auth::OAuthClient``): on a 401 (or a 403
``insufficient_scope``) it discovers the Protected Resource Metadata and the authorization
server's metadata, identifies the client (pre-registered, a Client ID Metadata Document URL,
or Dynamic Client Registration), runs the grant (authorization code with PKCE, client
credentials, a JWT bearer assertion, or an enterprise identity assertion), keeps the tokens,
refreshes them before they expire, steps up on ``insufficient_scope``, binds them with DPoP
where the server offers it, and resends the refused request. The Python driver only
performs the HTTP requests the core asks for (never following redirects) and runs the user
agent::

    from mcp_sansio.aio import Client
    from mcp_sansio.auth import OAuth

    async def browser(url: str) -> str:
        ...  # show `url` to the user; return the URL the server redirected back to

    async with Client.connect_http(url, auth=OAuth(user_agent=browser,
                                                  redirect_uri="http://127.0.0.1:8765/cb")) as c:
        await c.list_tools()

    # machine to machine
    auth = OAuth(grant="client_credentials", client_id="svc", client_secret="...")

A refusal the flow cannot satisfy raises :class:`~mcp_sansio.errors.AuthorizationError`
naming the status, the URL and the challenge.
"""

from typing import Any, Awaitable, Callable, Dict, Optional, Protocol, Sequence, Union

from ._core import OAuthSetup, new_dpop_key

__all__ = ["OAuth", "TokenStore", "UserAgent", "new_dpop_key", "DEFAULT_REDIRECT_URI"]

#: Takes the user to the authorization URL and returns the URL the authorization server
#: finally redirected to (the redirect URI with ``code``, ``state``, ``iss``); a plain
#: function (run on a worker thread, so it may block) or an ``async`` one. Raising fails
#: the authorization with the exception's text.
UserAgent = Callable[[str], Union[str, Awaitable[str]]]

#: The redirect URI when none is given (a loopback one, RFC 8252 §7.3)
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"


class TokenStore(Protocol):
    """Where tokens are kept between connections (a keychain, a file), keyed by the
    resource (the server URL's canonical form). The dicts hold ``access_token``,
    ``token_type`` (``"Bearer"`` or ``"DPoP"``), ``refresh_token``, ``expires_at`` (Unix
    seconds), ``scope`` and ``issuer`` (``None`` where absent); keep them as secret as a
    password. A store that raises is reported through ``sys.unraisablehook``: a failed
    ``load`` reads as "no tokens", a failed ``save`` or ``remove`` is dropped.

    ``load`` is called often (for every request, and whenever the client checks whether a
    refresh is due): answer it from memory, and write through on ``save``.

    DPoP-bound tokens (``token_type`` ``"DPoP"``) work only with the key they were bound
    to: store ``new_dpop_key()``'s bytes beside them and pass ``OAuth(dpop_key=...)``."""

    def load(self, resource: str) -> Optional[Dict[str, Any]]: ...

    def save(self, resource: str, tokens: Dict[str, Any]) -> None: ...

    def remove(self, resource: str) -> None: ...


class OAuth:
    """How an HTTP client authorizes (``connect_http(..., auth=OAuth(...))``).

    ``grant``:

    - ``"authorization_code"`` (the default): PKCE S256; ``user_agent(url)`` takes the user
      to the authorization URL and returns the URL it was redirected back to. Without a
      user agent, a headless one GETs the URL and follows the redirects (up to 10) until one
      points at ``redirect_uri``: for tests, and servers that approve without a login page.
    - ``"client_credentials"``: machine to machine, with ``client_id`` and
      ``client_secret`` (``client_secret_basic`` or ``client_secret_post``, as the server
      lists) or ``private_key_pem`` (``private_key_jwt``, signed with
      ``signing_algorithm``: ES256, ES384, RS256, PS256, EdDSA, ...).
    - ``"jwt_bearer"``: an RFC 7523 grant with the ready ``assertion`` (workload identity).
    - ``"identity_assertion"``: enterprise-managed authorization: ``id_token`` is exchanged
      at ``idp_token_endpoint`` as ``idp_client_id`` (``idp_client_secret``) for an
      identity assertion grant, presented at the authorization server.

    How the client identifies itself: ``client_id`` (``client_secret``) pre-registered with
    ``issuer`` (any issuer when ``None``); else ``client_metadata_url`` (an https URL
    serving its Client ID Metadata Document) where the server supports that; else Dynamic
    Client Registration as ``client_name`` (``application_type`` ``"native"`` or
    ``"web"``). ``private_key_pem`` also signs ``private_key_jwt`` for the other grants.

    ``scopes``: asked for when neither the challenge nor the server's metadata name any.
    ``request_offline_access``: ask for a refresh token where the server offers
    ``offline_access``. ``max_attempts``: authorizations in a row whose token the server
    refuses again before the request fails. ``refresh_margin``: seconds before expiry the
    token is refreshed. ``dpop``: DPoP-bound tokens (RFC 9449) where the servers offer them,
    with a fresh key per connection or ``dpop_key`` (32 bytes from :func:`new_dpop_key`).
    ``token_store``: a :class:`TokenStore` (default: in memory, per connection).

    A bad option (an unknown grant, a key that does not parse, a missing credential)
    raises ``ValueError`` here.

    The request that met the challenge waits while the flow runs, and its wait counts
    against the client's ``request_timeout`` (60 s by default): give a login in a browser
    more (``connect_http(..., auth=..., request_timeout=300)``). A plain-function user agent
    runs on a daemon thread of its own; it is abandoned when the client closes.
    """

    def __init__(
        self,
        *,
        grant: str = "authorization_code",
        user_agent: Optional[UserAgent] = None,
        redirect_uri: str = DEFAULT_REDIRECT_URI,
        client_id: Optional[str] = None,
        client_secret: Optional[str] = None,
        issuer: Optional[str] = None,
        client_metadata_url: Optional[str] = None,
        client_name: str = "mcp-sansio-client",
        application_type: str = "native",
        scopes: Sequence[str] = (),
        request_offline_access: bool = True,
        private_key_pem: Optional[Union[str, bytes]] = None,
        signing_algorithm: str = "ES256",
        assertion: Optional[str] = None,
        idp_token_endpoint: Optional[str] = None,
        idp_client_id: Optional[str] = None,
        idp_client_secret: Optional[str] = None,
        id_token: Optional[str] = None,
        dpop: bool = True,
        dpop_key: Optional[bytes] = None,
        max_attempts: int = 3,
        refresh_margin: float = 60.0,
        token_store: Optional[TokenStore] = None,
    ) -> None:
        if user_agent is not None and not callable(user_agent):
            raise TypeError(f"user_agent must be callable, not {type(user_agent).__name__}")
        if isinstance(scopes, str):
            scopes = scopes.split()
        if isinstance(private_key_pem, bytes):
            private_key_pem = private_key_pem.decode("ascii")
        if token_store is not None:
            missing = [m for m in ("load", "save", "remove") if not callable(getattr(token_store, m, None))]
            if missing:
                raise TypeError(f"token_store lacks {', '.join(missing)}() (see mcp_sansio.auth.TokenStore)")
        self.grant = grant
        self.user_agent = user_agent
        self.redirect_uri = redirect_uri
        self._setup = OAuthSetup(
            redirect_uri,
            grant=grant,
            client_id=client_id,
            client_secret=client_secret,
            issuer=issuer,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            application_type=application_type,
            scopes=list(scopes),
            request_offline_access=request_offline_access,
            private_key_pem=private_key_pem,
            signing_algorithm=signing_algorithm,
            assertion=assertion,
            idp_token_endpoint=idp_token_endpoint,
            idp_client_id=idp_client_id,
            idp_client_secret=idp_client_secret,
            id_token=id_token,
            dpop=dpop,
            dpop_key=dpop_key,
            max_attempts=max_attempts,
            refresh_margin=refresh_margin,
            token_store=token_store,
        )

    def __repr__(self) -> str:
        return f"OAuth(grant={self.grant!r}, redirect_uri={self.redirect_uri!r})"
