"""The Streamable HTTP client of :class:`mcp_sansio.aio.Client`: each HTTP request the Rust
``HttpClientTransport`` plans is performed with h11 over an asyncio connection (plain TCP,
TLS with Python's ``ssl``, directly or through an HTTP proxy), and its response reported
back; which requests to make, what responses mean and which headers an application may add
is decided in Rust (``mcp_sansio::http::ClientTransport``).

How a connection is opened:

- ``https://`` URLs (port 443 unless given) verify the server's certificate and host name
  against ``ssl.create_default_context()`` (the platform's roots, ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR``) plus ``root_certificates``, or with the caller's ``ssl_context``.
- The proxy is ``HTTPS_PROXY`` / ``HTTP_PROXY`` unless ``NO_PROXY`` names the host
  (``proxy="env"``, the default), the given ``http://[user:password@]host:port`` URL, or
  none (``proxy=None``). Plain ``http://`` requests go to the proxy in absolute form;
  ``https://`` ones through a ``CONNECT`` tunnel, then TLS with the server. A userinfo in
  the proxy URL becomes ``Proxy-Authorization: Basic``.
- ``connect_timeout`` bounds the TCP connect, the tunnel and the TLS handshake;
  ``response_timeout`` a request's wait for its response head once sent.

Redirects (301, 302, 303, 307, 308 with a ``Location``) are followed within the server's
origin (scheme, host and port), at most ``MAX_REDIRECTS`` per request, as the official SDK's
client follows FastAPI's ``/mcp`` -> ``/mcp/``: 307 and 308 (and 301, 302, which HTTP lets a
client treat alike) resend the same method, headers and body; 303 turns a ``GET`` into a
``GET`` and is refused for a ``POST`` or ``DELETE`` (its message would be lost). A permanent
redirect (301, 308) also moves the client's later requests. A redirect to another origin is
refused with :class:`~mcp_sansio.errors.RedirectError` (the headers, ``Authorization``
included, never go to another origin).

With ``auth=OAuth(...)`` the Rust transport's OAuth client asks for the requests of its flow
(metadata, registration, tokens: to any host, each on a connection of its own, through the
same proxy and TLS settings, never following redirects, at most 30 s and 1 MiB each) and for
the authorization step, which the user agent runs (the headless one follows redirects with
the same requests).
"""

import asyncio
import base64
import inspect
import os
import socket
import ssl
import threading
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import h11

from ._core import HeadlessUserAgent, HttpClientTransport, check_header
from ._connection import _ClientConnection
from .errors import CertificateError, ConnectError, ProxyError, RedirectError

if TYPE_CHECKING:
    from .auth import OAuth

#: Headers as a mapping or as (name, value) pairs
Headers = Union[Mapping[str, str], Sequence[Tuple[str, str]]]
#: PEM text, PEM bytes or a file path; or a list of them
RootCertificates = Union[str, bytes, "os.PathLike[str]", Sequence[Union[str, bytes, "os.PathLike[str]"]]]

#: How many redirects one request follows (within the server's origin)
MAX_REDIRECTS = 5
#: The redirect statuses followed (with a Location)
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_RESPONSE_TIMEOUT = 60.0
#: How long one request of the authorization flow may take, and the largest body read from
#: it (the Rust bindings' limits, mcp_sansio_runtime::auth)
AUTH_REQUEST_TIMEOUT = 30.0
AUTH_MAX_BODY = 1024 * 1024

# OpenSSL's verification codes we name in plain words
_EXPIRED = 10  # X509_V_ERR_CERT_HAS_EXPIRED
_NOT_YET_VALID = 9  # X509_V_ERR_CERT_NOT_YET_VALID
_HOSTNAME_MISMATCH = 62  # X509_V_ERR_HOSTNAME_MISMATCH
_IP_MISMATCH = 64  # X509_V_ERR_IP_ADDRESS_MISMATCH
_UNTRUSTED = {18, 19, 20, 21, 2, 27}  # self-signed, self-signed in chain, unknown issuer, ...


def header_pairs(headers: Optional[Headers]) -> List[Tuple[str, str]]:
    """``headers`` as a list of pairs, each checked by the core (``ValueError`` with its
    message for a header the transport owns, a bad name or a bad value)."""
    if not headers:
        return []
    items = list(headers.items()) if isinstance(headers, Mapping) else [tuple(h) for h in headers]
    pairs = []
    for item in items:
        if len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise TypeError(f"a header is a (name, value) pair of str, not {item!r}")
        check_header(item[0], item[1])
        pairs.append((item[0], item[1]))
    return pairs


class _Url:
    """Where a URL points: scheme, host, port, the request target and the Host header."""

    def __init__(self, url: str, what: str = "URL") -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https"):
            raise ValueError(f"the {what} must be http:// or https://, not {url!r}")
        if not u.hostname:
            raise ValueError(f"the {what} {url!r} names no host")
        self.url = url
        self.scheme = u.scheme
        self.host = u.hostname
        default = 443 if u.scheme == "https" else 80
        try:
            self.port = u.port or default
        except ValueError:
            raise ValueError(f"the {what} {url!r} has an invalid port") from None
        self.target = (u.path or "/") + (f"?{u.query}" if u.query else "")
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = f"{host}:{self.port}"  # CONNECT's target
        self.host_header = host if self.port == default else self.authority
        self.absolute = f"{u.scheme}://{self.host_header}{self.target}"  # proxy's request target
        self.username = urllib.parse.unquote(u.username) if u.username is not None else None
        self.password = urllib.parse.unquote(u.password) if u.password is not None else None


def ssl_context_for(root_certificates: Optional[RootCertificates], ssl_context: Optional[ssl.SSLContext]) -> ssl.SSLContext:
    """The TLS context of an ``https://`` client: the caller's, or the default one (which
    verifies certificates and host names) trusting ``root_certificates`` too."""
    if ssl_context is not None:
        if root_certificates:
            raise ValueError("pass root_certificates= or ssl_context=, not both (add the roots to your context)")
        if not isinstance(ssl_context, ssl.SSLContext):
            raise TypeError(f"ssl_context must be an ssl.SSLContext, not {type(ssl_context).__name__}")
        return ssl_context
    ctx = ssl.create_default_context()
    if root_certificates:
        roots = [root_certificates] if isinstance(root_certificates, (str, bytes, os.PathLike)) else list(root_certificates)
        for root in roots:
            try:
                if isinstance(root, bytes):
                    ctx.load_verify_locations(cadata=root.decode("ascii"))
                elif isinstance(root, str) and "-----BEGIN" in root:
                    ctx.load_verify_locations(cadata=root)
                else:
                    ctx.load_verify_locations(cafile=os.fspath(root))
            except (ssl.SSLError, OSError, UnicodeDecodeError) as e:
                raise ValueError(f"root_certificates: cannot load {_short(root)}: {e}") from e
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def _short(root: Any) -> str:
    return "PEM data" if isinstance(root, bytes) or (isinstance(root, str) and "-----BEGIN" in root) else repr(os.fspath(root))


def proxy_for(url: _Url, proxy: Any) -> Optional[_Url]:
    """The proxy to reach ``url`` through: from the environment for ``"env"``, none for
    ``None``/``False``, else the given URL."""
    if proxy is None or proxy is False:
        return None
    if proxy == "env":
        proxies = urllib.request.getproxies_environment()
        chosen = proxies.get(url.scheme)
        if not chosen:
            return None
        if urllib.request.proxy_bypass_environment(url.host, proxies):
            return None
        proxy, what = chosen, f"{url.scheme.upper()}_PROXY"
    else:
        what = "proxy"
    if not isinstance(proxy, str):
        raise TypeError(f"proxy must be a URL, None or 'env', not {proxy!r}")
    if "://" not in proxy:
        proxy = "http://" + proxy  # HTTPS_PROXY=host:3128, as curl reads it
    p = _Url(proxy, what)
    if p.scheme != "http":
        raise ValueError(f"only http:// proxies are supported (the tunnel is TLS to the server), not {what}={proxy!r}")
    return p


def _proxy_auth(proxy: _Url) -> List[Tuple[str, str]]:
    if proxy.username is None:
        return []
    token = base64.b64encode(f"{proxy.username}:{proxy.password or ''}".encode()).decode("ascii")
    return [("Proxy-Authorization", f"Basic {token}")]


def _certificate_error(e: ssl.SSLCertVerificationError, url: _Url) -> CertificateError:
    code = getattr(e, "verify_code", None)
    detail = getattr(e, "verify_message", None) or str(e)
    if code == _EXPIRED:
        what = "has expired"
    elif code == _NOT_YET_VALID:
        what = "is not valid yet"
    elif code in (_HOSTNAME_MISMATCH, _IP_MISMATCH):
        what = f"is not valid for the host name {url.host!r} (wrong host name)"
    elif code in _UNTRUSTED:
        what = "is not trusted: no trusted root issued it (give its CA with root_certificates= or ssl_context=)"
    else:
        what = "failed verification"
    return CertificateError(
        f"TLS certificate verification failed for {url.url}: the server's certificate {what} [{detail}]",
        url.url,
        detail,
    )


class _HttpClientConnection(_ClientConnection):
    def __init__(
        self,
        session: Any,
        client: Any,
        url: str,
        *,
        headers: Optional[Headers] = None,
        root_certificates: Optional[RootCertificates] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        proxy: Any = "env",
        connect_timeout: Optional[float] = DEFAULT_CONNECT_TIMEOUT,
        response_timeout: Optional[float] = DEFAULT_RESPONSE_TIMEOUT,
        auth: Optional["OAuth"] = None,
    ) -> None:
        super().__init__(session, client)
        self.url = _Url(url)
        if self.url.scheme == "https":
            self.ssl: Optional[ssl.SSLContext] = ssl_context_for(root_certificates, ssl_context)
        elif root_certificates or ssl_context is not None:
            raise ValueError(f"root_certificates= and ssl_context= need an https:// URL, not {url!r}")
        else:
            self.ssl = None
        self.proxy_setting = proxy
        self.proxy = proxy_for(self.url, proxy)
        self.connect_timeout = connect_timeout
        self.response_timeout = response_timeout
        if auth is not None and not hasattr(auth, "_setup"):
            raise TypeError(f"auth must be an mcp_sansio.auth.OAuth, not {type(auth).__name__}")
        self.auth = auth
        #: The TLS context for https:// authorization servers when the server is http://
        #: (the platform's roots); an https:// server's context serves both
        self._auth_ssl: Optional[ssl.SSLContext] = None
        #: The authorization flow's requests and user agent in progress
        self.auth_tasks: "set[asyncio.Task[None]]" = set()
        #: The user agent has the authorization URL and has not come back yet
        self.user_agent_running = False
        self.rules = HttpClientTransport(
            header_pairs(headers), url=url, auth=auth._setup if auth is not None else None
        )
        #: The first connect failure (raised by the connect instead of the closed session)
        self.connect_failure: Optional[ConnectError] = None
        self.streams: Dict[int, "asyncio.Task[None]"] = {}
        #: Every request task still running (a finished one may still be closing its TLS)
        self.tasks: "set[asyncio.Task[None]]" = set()
        self.write = lambda data: None  # requests go out through `flush`

    def request_headers(self, request_id: int, headers: List[Tuple[str, str]]) -> None:
        if headers:
            self.rules.request_headers(request_id, headers, self.session)

    def flush(self) -> None:
        rules = self.rules
        rules.pull(self.session)
        while True:
            request = rules.next_request()
            if request is None:
                break
            stream = request[0]
            self.streams[stream] = self._start(request)
        while True:
            stream = rules.next_abort()
            if stream is None:
                break
            task = self.streams.pop(stream, None)
            if task is not None:
                task.cancel()
        if self.auth is not None:
            while True:
                action = rules.next_auth_action(self.session)
                if action is None:
                    break
                if action[0] == "fetch":
                    self._auth_task(self._auth_fetch_step(*action[1:]))
                else:
                    self._auth_task(self._authorize(action[1]))

    def _auth_task(self, coro: Any) -> None:
        task = self.loop.create_task(coro)
        self.auth_tasks.add(task)
        task.add_done_callback(self.auth_tasks.discard)

    # --- the authorization flow ----------------------------------------------------------

    async def _auth_fetch_step(self, method: str, url: str, headers: Any, body: bytes) -> None:
        status, fields, data = await self.auth_fetch(method, url, headers, body)
        self.rules.handle_auth_response(status, fields, data, self.session)
        self.pump()

    async def _authorize(self, url: str) -> None:
        """Runs the user agent on the authorization URL; reports where it ended."""
        assert self.auth is not None
        agent = self.auth.user_agent
        self.user_agent_running = True
        try:
            if agent is None:
                redirect: Any = await self._headless(url)
            elif inspect.iscoroutinefunction(agent):
                redirect = await agent(url)
            else:
                redirect = await _in_thread(self.loop, agent, url)
                if inspect.isawaitable(redirect):
                    redirect = await redirect
            if not isinstance(redirect, str):
                raise TypeError(f"the user agent returned {type(redirect).__name__}, not the redirect URL (str)")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.rules.handle_auth_error(str(e) or type(e).__name__, self.session)
        else:
            self.rules.handle_auth_redirect(redirect, self.session)
        finally:
            self.user_agent_running = False
        self.pump()

    async def _headless(self, url: str) -> str:
        """The headless user agent (the kernel's redirect follower): GETs ``url`` and
        follows redirects until one points at the redirect URI."""
        assert self.auth is not None
        agent = HeadlessUserAgent(self.auth.redirect_uri, url)
        step = agent.step()
        while step[0] == "fetch":
            _, method, target, headers, body = step
            status, fields, _ = await self.auth_fetch(method, target, headers, body)
            step = agent.step(status, fields)
        if step[0] == "done":
            return step[1]
        raise RuntimeError(step[1])

    async def auth_fetch(self, method: str, url: str, headers: Any, body: bytes) -> Tuple[int, List[Tuple[str, str]], bytes]:
        """Performs one request of the authorization flow on a connection of its own (no
        redirects followed): ``(status, headers, body)``, status 0 when no response came
        within ``AUTH_REQUEST_TIMEOUT`` or the body is over ``AUTH_MAX_BODY``."""
        try:
            return await asyncio.wait_for(self._auth_fetch(method, url, list(headers), body), AUTH_REQUEST_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except Exception:
            # Refused, unreachable, too slow, not HTTP: the core reads "no response" (and
            # says which endpoint failed); the flow must never wait for a dead task.
            return 0, [], b""

    async def _auth_fetch(self, method: str, url: str, headers: List[Tuple[str, str]], body: bytes) -> Tuple[int, List[Tuple[str, str]], bytes]:
        target = _Url(url, "authorization URL")
        tls = None
        if target.scheme == "https":
            if self.ssl is None and self._auth_ssl is None:
                self._auth_ssl = ssl_context_for(None, None)
            tls = self.ssl or self._auth_ssl
        proxy = proxy_for(target, self.proxy_setting)
        reader, writer = await self._open(target, proxy, tls)
        try:
            conn = h11.Connection(h11.CLIENT)
            hdrs = [("Host", target.host_header)] + headers
            request_target = target.target
            if proxy is not None and tls is None:
                request_target = target.absolute
                hdrs += _proxy_auth(proxy)
            if method != "GET" or body:
                hdrs.append(("Content-Length", str(len(body))))
            hdrs.append(("Connection", "close"))
            pieces = [conn.send(h11.Request(method=method, target=request_target, headers=hdrs))]
            if body:
                pieces.append(conn.send(h11.Data(data=body)))
            pieces.append(conn.send(h11.EndOfMessage()))
            writer.write(b"".join(p for p in pieces if p))
            status = 0
            fields: List[Tuple[str, str]] = []
            data = bytearray()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                elif isinstance(event, h11.Response):
                    status = event.status_code
                    fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
                elif isinstance(event, h11.Data):
                    data += event.data
                    if len(data) > AUTH_MAX_BODY:
                        return 0, [], b""
                elif isinstance(event, h11.EndOfMessage):
                    return status, fields, bytes(data)
                elif isinstance(event, h11.ConnectionClosed):
                    return 0, [], b""
        finally:
            await _close(writer, False)

    def _start(self, request: Any) -> "asyncio.Task[None]":
        task = self.loop.create_task(self._perform(*request))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def next_deadline(self) -> Optional[float]:
        times = [t for t in (self.session.next_deadline(), self.rules.next_deadline(self.session)) if t is not None]
        return min(times) if times else None

    def on_timeout(self) -> None:
        self.session.handle_timeout()
        self.rules.handle_timeout(self.session)

    # --- opening a connection ------------------------------------------------------------

    async def _open(
        self, target: Optional[_Url] = None, proxy: Optional[_Url] = None, tls: Optional[ssl.SSLContext] = None
    ) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the server, or to ``target`` through ``proxy`` with ``tls`` (or,
        for plain http:// through a proxy, to the proxy), TLS done; ``ConnectError`` (or a
        subclass) saying what failed."""
        if target is None:
            target, proxy, tls = self.url, self.proxy, self.ssl
        url = target
        hop = f"the proxy {proxy.authority}" if proxy is not None else url.authority
        try:
            return await asyncio.wait_for(self._open_now(url, proxy, tls), self.connect_timeout)
        except asyncio.TimeoutError:
            # The Rust bindings' words (`mcp_sansio_runtime::net_error`).
            raise ConnectError(
                f"connecting to {url.url} timed out after {_seconds(self.connect_timeout)}",
                url.url,
            ) from None
        except ConnectError:
            raise
        except ssl.SSLCertVerificationError as e:
            raise _certificate_error(e, url) from e
        except ssl.SSLError as e:
            raise ConnectError(f"TLS handshake with {url.url} failed: {e}", url.url) from e
        except OSError as e:
            # The Rust bindings' words: "could not connect to URL: Connection refused (os error 111)"
            cause = f"{os.strerror(e.errno)} (os error {e.errno})" if e.errno else str(e)
            if proxy is not None:
                raise ProxyError(f"could not connect to {hop} for {url.url}: {cause}", url.url) from e
            raise ConnectError(f"could not connect to {url.url}: {cause}", url.url) from e

    async def _open_now(
        self, url: _Url, proxy: Optional[_Url], tls: Optional[ssl.SSLContext]
    ) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if proxy is None:
            if tls is None:
                return await asyncio.open_connection(url.host, url.port)
            return await asyncio.open_connection(
                url.host, url.port, ssl=tls, server_hostname=url.host, ssl_handshake_timeout=self.connect_timeout
            )
        if tls is None:
            return await asyncio.open_connection(proxy.host, proxy.port)
        sock = await self._tunnel(proxy, url)
        try:
            return await asyncio.open_connection(
                sock=sock, ssl=tls, server_hostname=url.host, ssl_handshake_timeout=self.connect_timeout
            )
        except BaseException:
            sock.close()
            raise

    async def _tunnel(self, proxy: _Url, url: _Url) -> socket.socket:
        """A socket to the proxy on which ``CONNECT host:port`` was accepted."""
        loop = self.loop
        last: Optional[OSError] = None
        sock: Optional[socket.socket] = None
        for family, kind, proto, _, address in await loop.getaddrinfo(proxy.host, proxy.port, type=socket.SOCK_STREAM):
            s = socket.socket(family, kind, proto)
            s.setblocking(False)
            try:
                await loop.sock_connect(s, address)
            except OSError as e:
                s.close()
                last = e
                continue
            except BaseException:
                s.close()
                raise
            sock = s
            break
        if sock is None:
            raise last or OSError(f"{proxy.host} has no address")
        try:
            conn = h11.Connection(h11.CLIENT)
            hdrs = [("Host", url.authority)] + _proxy_auth(proxy)
            head = conn.send(h11.Request(method="CONNECT", target=url.authority, headers=hdrs))
            await loop.sock_sendall(sock, head + (conn.send(h11.EndOfMessage()) or b""))
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await loop.sock_recv(sock, 65536))
                    continue
                if isinstance(event, h11.InformationalResponse):
                    continue
                if isinstance(event, h11.Response):
                    if 200 <= event.status_code < 300:
                        if conn.trailing_data[0]:
                            raise ProxyError(f"the proxy {proxy.authority} sent bytes before the TLS handshake with {url.url}", url.url)
                        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                        return sock
                    reason = event.reason.decode("latin-1", "replace")
                    hint = " (proxy authentication required: give user:password in the proxy URL)" if event.status_code == 407 else ""
                    raise ProxyError(
                        f"the proxy http://{proxy.authority} refused CONNECT to {url.authority}: "
                        f"HTTP {event.status_code} {reason}{hint}",
                        url.url,
                        event.status_code,
                    )
                raise ProxyError(f"the proxy {proxy.authority} closed the connection before answering CONNECT for {url.url}", url.url)
        except h11.ProtocolError as e:
            sock.close()
            raise ProxyError(f"the proxy {proxy.authority} answered CONNECT for {url.url} with something not HTTP: {e}", url.url) from e
        except BaseException:
            sock.close()
            raise

    # --- one request ---------------------------------------------------------------------

    async def _send(
        self, url: _Url, method: str, headers: Any, body: bytes
    ) -> Tuple[h11.Connection, asyncio.StreamReader, asyncio.StreamWriter]:
        """Opens a connection to ``url``'s origin (the server's) and writes the request."""
        try:
            reader, writer = await self._open(url, self.proxy, self.ssl)
        except ConnectError as e:
            if self.connect_failure is None:
                self.connect_failure = e
            raise
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # asyncio's default too
        conn = h11.Connection(h11.CLIENT)
        hdrs = [("Host", url.host_header)] + list(headers)
        target = url.target
        if self.proxy is not None and self.ssl is None:
            target = url.absolute  # plain HTTP through a proxy: absolute form
            hdrs += _proxy_auth(self.proxy)
        if method == "POST":
            hdrs.append(("Content-Length", str(len(body))))
        pieces = [conn.send(h11.Request(method=method, target=target, headers=hdrs))]
        if body:
            pieces.append(conn.send(h11.Data(data=body)))
        pieces.append(conn.send(h11.EndOfMessage()))
        writer.write(b"".join(p for p in pieces if p))  # the request in one write
        return conn, reader, writer

    def _redirect(self, url: _Url, status: int, fields: List[Tuple[str, str]], method: str, count: int) -> Optional[_Url]:
        """Where a redirect of a request to ``url`` leads (``None``: no ``Location``, the
        rules see the status), checked: the same origin, at most ``MAX_REDIRECTS``, no
        ``303`` for a request with a message; else :class:`RedirectError`."""
        location = next((v for k, v in fields if k.lower() == "location"), None)
        if location is None:
            return None
        to = urllib.parse.urljoin(url.url, location.strip()).split("#", 1)[0]
        try:
            target = _Url(to, "redirect's Location")
        except ValueError as e:
            raise RedirectError(f"{url.url} answered HTTP {status} with a Location that is no HTTP URL: {e}", url.url, status, to) from None
        if (target.scheme, target.host.lower(), target.port) != (url.scheme, url.host.lower(), url.port):
            raise RedirectError(
                f"{url.url} answered HTTP {status} redirecting to {to}, another origin: refused "
                "(redirects are followed within the server's scheme, host and port only; "
                "connect to that URL if you trust it)",
                url.url,
                status,
                to,
            )
        if count >= MAX_REDIRECTS:
            raise RedirectError(f"{url.url} answered HTTP {status}: more than {MAX_REDIRECTS} redirects", url.url, status, to)
        if status == 303 and method != "GET":
            raise RedirectError(
                f"{url.url} answered a {method} with HTTP 303 See Other to {to}: refused (a GET would drop the message)",
                url.url,
                status,
                to,
            )
        return target

    async def _perform(self, stream: int, method: str, headers: Any, body: bytes) -> None:
        writer = None
        rules, session, url = self.rules, self.session, self.url
        head = False
        aborted = False
        redirects = 0
        try:
            conn, reader, writer = await self._send(url, method, headers, body)
            timeout = self.response_timeout
            due = None if timeout is None else self.loop.time() + timeout
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    if head or due is None:
                        conn.receive_data(await reader.read(65536))
                    else:
                        try:
                            data = await asyncio.wait_for(reader.read(65536), max(0.0, due - self.loop.time()))
                        except asyncio.TimeoutError:
                            raise ConnectionError(f"no response head from {url.url} within {_seconds(timeout)}") from None
                        conn.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
                    status = event.status_code
                    moved = self._redirect(url, status, fields, method, redirects) if status in REDIRECT_STATUSES else None
                    if moved is not None:
                        # Within the server's origin: the same request there (its headers
                        # too: the same origin), on a connection of its own.
                        redirects += 1
                        if status in (301, 308) and url is self.url:
                            self.url = moved  # permanent: the later requests go there
                        url = moved
                        await _close(writer, False)
                        writer = None
                        conn, reader, writer = await self._send(url, method, headers, body)
                        due = None if timeout is None else self.loop.time() + timeout
                        continue
                    head = True
                    rules.handle_head(stream, status, fields, session)
                elif isinstance(event, h11.Data):
                    rules.handle_body(stream, bytes(event.data), session)
                elif isinstance(event, h11.EndOfMessage):
                    rules.handle_end(stream, session)
                    self.streams.pop(stream, None)
                    self.pump()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    raise ConnectionError(f"{url.url}: the server closed the connection")
                else:
                    continue
                self.pump()
        except asyncio.CancelledError:
            aborted = True
            return  # aborted: the rules already know
        except (OSError, h11.ProtocolError, ConnectionError) as e:
            self.streams.pop(stream, None)
            if isinstance(e, RedirectError) and self.connect_failure is None:
                self.connect_failure = e  # a refused redirect of the handshake: its words
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
                await _close(writer, aborted)

    async def close_http(self) -> None:
        delete = self.rules.close()
        for task in list(self.streams.values()):
            task.cancel()
        self.streams.clear()
        for task in list(self.auth_tasks):
            task.cancel()
        if delete is not None:
            task = self._start(delete)
            try:
                await asyncio.wait_for(asyncio.shield(task), 2)
            except (asyncio.TimeoutError, Exception):
                task.cancel()
        # The aborted requests drop their connections; finished ones end their TLS sessions.
        running = [t for t in self.tasks if not t.done()]
        if running:
            await asyncio.wait(running, timeout=2)
        await asyncio.sleep(0)  # the transports close their sockets
        self.session.close()
        self.pump()


def _in_thread(loop: asyncio.AbstractEventLoop, fn: Any, arg: Any) -> "asyncio.Future[Any]":
    """``fn(arg)`` on a daemon thread of its own (a user agent may block on a person for
    minutes, or forever: it must hold up neither the loop, nor the default executor's
    shutdown at the end of ``asyncio.run``, nor the interpreter's exit)."""
    future: "asyncio.Future[Any]" = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def work() -> None:
        try:
            result = fn(arg)
        except BaseException as e:  # delivered to the awaiting task
            ok, value = False, e
        else:
            ok, value = True, result
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more

    threading.Thread(target=work, name="mcp-sansio-user-agent", daemon=True).start()
    return future


async def _close(writer: asyncio.StreamWriter, abort: bool) -> None:
    """Closes a request's connection: at once when the request was aborted, else cleanly
    (TLS: ``close_notify``), for at most 2 s."""
    if abort:
        writer.transport.abort()
        return
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), 2)
    except asyncio.CancelledError:
        writer.transport.abort()
        raise
    except Exception:
        writer.transport.abort()


#: The keyword arguments of connect_http that are the HTTP connection's (the others are the
#: Client's)
HTTP_OPTIONS = ("headers", "root_certificates", "ssl_context", "proxy", "connect_timeout", "response_timeout", "auth")


async def connect_http(cls: Any, url: str, **options: Any) -> Any:
    http = {k: options.pop(k) for k in HTTP_OPTIONS if k in options}
    client = cls(**options)
    conn = _HttpClientConnection(client.session, client, url, **http)
    client._conn = conn
    client._closer = conn.close_http
    return client


def _seconds(limit: float) -> str:
    """`10 s`, `1.5 s`, `300 ms`, as the Rust bindings say it"""
    ms = round(limit * 1000)
    if ms < 1000:
        return f"{ms} ms"
    if ms % 1000 == 0:
        return f"{ms // 1000} s"
    return f"{limit:g} s"
