"""OAuth in the Python client, end to end on 127.0.0.1: the client (``connect_http(...,
auth=OAuth(...))``, the core's OAuthClient driven by the Python HTTP client) against the Rust
protected server (mcp-tokio's ``jwt-protected-server`` example, which accepts HS256 JWTs of
the authorization server at its port + 1 with scope ``mcp:read``, answering 401 and 403
``insufficient_scope`` with ``WWW-Authenticate`` challenges) and an authorization server
stand-in written here (RFC 8414 metadata, dynamic client registration, authorization code
with PKCE S256 approved without a login page, client credentials with ``client_secret_basic``
or ``private_key_jwt``, refresh tokens), which checks every request it gets and logs it.

The protected server comes from scripts/interop-setup (``MCP_INTEROP_JWT_SERVER``); the tests
skip without it. The server's ``hello`` greets the token's subject; its ``purge`` also needs
``mcp:admin`` (403 ``insufficient_scope`` naming it otherwise).
"""

import asyncio
import base64
import contextlib
import hashlib
import hmac
import http.client
import json
import os
import re
import secrets
import socket
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import mcp_sansio as ms
from mcp_sansio import sync
from mcp_sansio.aio import Client
from mcp_sansio.auth import OAuth
from mcp_sansio.errors import AuthorizationError

from conftest import free_port

SECRET = b"example-secret"  # the example server's default MCP_JWT_SECRET
SCOPE = "mcp:read"
REDIRECT = "http://127.0.0.1:9/callback"  # nothing listens: the user agents stop there
CLIENT_ID = "client-1"
CLIENT_SECRET = "client-1-secret"
SUBJECT = "alice"  # the user every token is issued for


def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hs256(claims: dict) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    mac = hmac.new(SECRET, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(mac)}"


# --- the authorization server stand-in ------------------------------------------------------


class AuthServer:
    """A small OAuth 2.1 authorization server on 127.0.0.1:``port`` in a thread of its
    own. What it does is set per test (``reset``):

    - ``auth_methods``: the token endpoint auth methods it lists and registers clients with
      (``none``: a public client; ``client_secret_basic``: a confidential one);
    - ``grants``: the grant types it lists (``client_credentials`` needs ``CLIENT_ID`` with
      ``CLIENT_SECRET`` over Basic, or a ``private_key_jwt`` assertion signed with
      ``public_key``);
    - ``first_scope``: the scope of the first token it issues whatever was asked (then the
      scope asked for);
    - ``first_expired``: the first access token is already expired (``expires_in`` still
      says an hour), so the server refuses it and the client refreshes;
    - ``deny``: the authorization endpoint redirects with ``error=access_denied`` (an int:
      after approving that many).

    ``log`` holds ``METHOD /path`` per request (``POST /token <grant_type>``)."""

    def __init__(self, port: int, resource: str = "") -> None:
        self.issuer = f"http://127.0.0.1:{port}"
        #: The resource it issues tokens for: the Rust server's at port - 1 unless given
        self.resource = resource or f"http://127.0.0.1:{port - 1}/mcp"
        self.lock = threading.Lock()
        self.reset()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._answer("GET", b"")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self._answer("POST", self.rfile.read(length))

            def _answer(self, method, body):
                try:
                    status, headers, data = owner.answer(method, self.path, dict(self.headers), body)
                except Exception as e:  # a bug here fails the test through the log
                    owner.log.append(f"ERROR {type(e).__name__}: {e}")
                    status, headers, data = 500, {}, b""
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.http.daemon_threads = True
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def reset(self, *, auth_methods=("none",), grants=("authorization_code", "refresh_token"),
              first_scope=None, first_expired=False, deny=False, public_key=None):
        with self.lock:
            self.auth_methods = list(auth_methods)
            self.grants = list(grants)
            self.first_scope = first_scope
            self.first_expired = first_expired
            self.deny = deny
            self.public_key = public_key
            self.log = []
            self.authorizations = 0
            self.scopes = []
            self.codes = {}
            self.refresh = set()
            self.issued = 0
            self.registered = {}

    def close(self):
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(5)

    # -- answers

    @staticmethod
    def json(status, body):
        return status, {"Content-Type": "application/json", "Cache-Control": "no-store"}, json.dumps(body).encode()

    def error(self, error, status=400):
        self.log.append(f"refused: {error}")
        return self.json(status, {"error": error})

    def answer(self, method, target, headers, body):
        path, _, query = target.partition("?")
        q = dict(urllib.parse.parse_qsl(query))
        form = dict(urllib.parse.parse_qsl(body.decode())) if method == "POST" else {}
        with self.lock:
            entry = f"{method} {path}" + (f" {form.get('grant_type')}" if path == "/token" else "")
            self.log.append(entry)
            if (method, path) == ("GET", "/.well-known/oauth-authorization-server"):
                return self.json(200, {
                    "issuer": self.issuer,
                    "authorization_endpoint": f"{self.issuer}/authorize",
                    "token_endpoint": f"{self.issuer}/token",
                    "registration_endpoint": f"{self.issuer}/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": self.grants,
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": self.auth_methods,
                    "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
                    "authorization_response_iss_parameter_supported": True,
                })
            if (method, path) == ("POST", "/register"):
                meta = json.loads(body)
                if meta.get("redirect_uris") != [REDIRECT] or meta.get("token_endpoint_auth_method") not in self.auth_methods:
                    return self.error("invalid_client_metadata")
                client = {"client_id": f"dyn-{len(self.registered) + 1}", "redirect_uris": [REDIRECT],
                          "token_endpoint_auth_method": meta["token_endpoint_auth_method"]}
                if client["token_endpoint_auth_method"] != "none":
                    client["client_secret"] = secrets.token_urlsafe(16)
                self.registered[client["client_id"]] = client
                return self.json(201, client)
            if (method, path) == ("GET", "/authorize"):
                if (q.get("response_type") != "code" or q.get("client_id") not in self.registered
                        or q.get("redirect_uri") != REDIRECT or q.get("code_challenge_method") != "S256"
                        or not q.get("code_challenge") or not q.get("state") or q.get("resource") != self.resource):
                    return self.error("invalid_request")
                self.authorizations += 1
                if self.deny is True or (self.deny is not False and self.authorizations > self.deny):
                    params = {"error": "access_denied", "state": q["state"], "iss": self.issuer}
                else:
                    self.scopes.append(q.get("scope"))
                    code = secrets.token_urlsafe(12)
                    self.codes[code] = (q["code_challenge"], q.get("scope", ""), q["client_id"])
                    params = {"code": code, "state": q["state"], "iss": self.issuer}
                return 302, {"Location": f"{REDIRECT}?{urllib.parse.urlencode(params)}"}, b""
            if (method, path) == ("POST", "/token"):
                return self.token(form, headers)
            return self.json(404, {"error": "not_found"})

    def client_of(self, form, headers):
        """The authenticated client of a token request, or None."""
        auth = headers.get("Authorization") or headers.get("authorization")
        if auth and auth.startswith("Basic "):
            ident, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            ident, secret = urllib.parse.unquote_plus(ident), urllib.parse.unquote_plus(secret)
            if ident == CLIENT_ID and secret == CLIENT_SECRET:
                return ident
            known = self.registered.get(ident)
            return ident if known and known.get("client_secret") == secret else None
        if form.get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return self.assertion_client(form.get("client_assertion", ""))
        known = self.registered.get(form.get("client_id"))
        return form["client_id"] if known and known["token_endpoint_auth_method"] == "none" else None

    def assertion_client(self, jwt):
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, utils

        head, body, sig = jwt.split(".")
        if json.loads(unb64url(head)).get("alg") != "ES256" or self.public_key is None:
            return None
        raw = unb64url(sig)
        der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            self.public_key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return None
        claims = json.loads(unb64url(body))
        ok = (claims.get("iss") == claims.get("sub") == CLIENT_ID and claims.get("aud") == self.issuer
              and claims.get("exp", 0) > time.time() and claims.get("jti"))
        return CLIENT_ID if ok else None

    def token(self, form, headers):
        client = self.client_of(form, headers)
        if client is None:
            return self.error("invalid_client", 401)
        if form.get("resource") != self.resource:
            return self.error("invalid_target")
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if code is None or code[2] != client or form.get("redirect_uri") != REDIRECT:
                return self.error("invalid_grant")
            challenge = b64url(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
            if challenge != code[0]:
                return self.error("invalid_grant")
            scope = code[1]
        elif grant == "refresh_token":
            if form.get("refresh_token") not in self.refresh:
                return self.error("invalid_grant")
            self.refresh.discard(form["refresh_token"])
            scope = SCOPE
        elif grant == "client_credentials" and grant in self.grants:
            scope = form.get("scope", SCOPE)
        else:
            return self.error("unsupported_grant_type")
        self.issued += 1
        if self.issued == 1 and self.first_scope is not None:
            scope = self.first_scope
        now = int(time.time())
        lifetime = -60 if (self.issued == 1 and self.first_expired) else 3600
        access = hs256({"iss": self.issuer, "aud": self.resource, "sub": SUBJECT, "scope": scope,
                        "iat": now, "exp": now + lifetime, "jti": str(self.issued)})
        answer = {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": scope}
        if grant != "client_credentials":
            answer["refresh_token"] = refresh = f"refresh-{self.issued}"
            self.refresh.add(refresh)
        return self.json(200, answer)


# --- the protected server and the fixture ---------------------------------------------------


def _listening(port: int) -> bool:
    with contextlib.closing(socket.socket()) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def pair():
    """The Rust protected server at 127.0.0.1:P/mcp and the authorization server at P + 1."""
    binary = os.environ.get("MCP_INTEROP_JWT_SERVER")
    if not binary or not os.path.exists(binary):
        pytest.skip("MCP_INTEROP_JWT_SERVER is not set: run scripts/interop-setup (scripts/test-python does)")
    for _ in range(20):
        port = free_port()
        try:
            auth = AuthServer(port + 1)
        except OSError:
            continue
        proc = subprocess.Popen([binary, "serve", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ, MCP_JWT_SECRET=SECRET.decode()))
        deadline = time.monotonic() + 30
        while proc.poll() is None and not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None and _listening(port):
            break
        proc.kill()
        proc.wait()
        auth.close()
    else:
        raise RuntimeError("could not start the protected server and its authorization server")
    try:
        yield auth, f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()
        auth.close()


@pytest.fixture
def server(pair):
    auth, url = pair
    auth.reset()
    return auth, url


async def tools_and_hello(client):
    tools = [t["name"] for t in (await client.list_tools())["tools"]]
    assert tools == ["hello", "purge"]
    result = await client.call_tool("hello", {})
    assert result["content"][0]["text"] == f"hello, {SUBJECT}"


# --- the flows ------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
def test_authorization_code_with_the_headless_user_agent(server, era):
    """A 401 on the first request: discovery (the challenge's resource metadata, then the
    authorization server's metadata), dynamic registration as a public client, PKCE with the
    headless user agent following the 302 to the redirect URI, the token, the retried
    request; then every request carries the token."""
    auth, url = server

    async def main():
        oauth = OAuth(redirect_uri=REDIRECT)
        async with Client.connect_http(url, era=era, auth=oauth) as client:
            await tools_and_hello(client)
            assert client._conn.rules.authorized
            assert client._conn.rules.auth_scope == SCOPE

    run(main())
    assert auth.log == [
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "GET /authorize",
        "POST /token authorization_code",
    ]


def test_a_confidential_client_authenticates_with_basic(server):
    """The server registers clients with a secret (client_secret_basic): the token request
    carries HTTP Basic with the registered credentials."""
    auth, url = server
    auth.reset(auth_methods=["client_secret_basic"])

    async def main():
        async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)) as client:
            await tools_and_hello(client)

    run(main())
    assert "POST /token authorization_code" in auth.log
    assert not [e for e in auth.log if e.startswith("refused")], auth.log


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_user_agent_callback_gets_the_url_and_returns_the_redirect(server, kind):
    """The application's user agent (a blocking function on a worker thread, or a
    coroutine function) gets the authorization URL and returns where it was redirected."""
    auth, url = server
    seen = []

    def follow(authorization_url: str) -> str:
        seen.append((authorization_url, threading.current_thread() is threading.main_thread()))
        u = urllib.parse.urlsplit(authorization_url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        conn.request("GET", f"{u.path}?{u.query}")
        response = conn.getresponse()
        location = response.getheader("Location")
        conn.close()
        assert response.status == 302, response.status
        return location

    async def afollow(authorization_url: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(None, follow, authorization_url)

    agent = follow if kind == "sync" else afollow

    async def main():
        async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT, user_agent=agent)) as client:
            await tools_and_hello(client)

    run(main())
    [(authorization_url, on_main)] = seen
    assert not on_main  # never on the event loop's thread
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorization_url).query))
    assert q["resource"] == url and q["scope"] == SCOPE and q["code_challenge_method"] == "S256"
    assert q["redirect_uri"] == REDIRECT


def test_the_sync_client_authorizes(server):
    auth, url = server
    with sync.Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)) as client:
        assert [t["name"] for t in client.list_tools()["tools"]] == ["hello", "purge"]
        assert client.call_tool("hello", {})["content"][0]["text"] == f"hello, {SUBJECT}"
    assert "POST /token authorization_code" in auth.log


def test_a_tool_needing_more_scope_steps_up(server):
    """purge needs mcp:admin: its call gets 403 insufficient_scope naming it, the client
    authorizes again for the union of the scopes it had and the challenged one, and the call
    goes through; the registration is reused."""
    auth, url = server

    async def main():
        async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)) as client:
            await tools_and_hello(client)
            assert client._conn.rules.auth_scope == SCOPE
            result = await client.call_tool("purge", {})
            assert result["content"][0]["text"] == f'purged, on behalf of Some("{SUBJECT}")'
            assert client._conn.rules.auth_scope == "mcp:read mcp:admin"
            await tools_and_hello(client)  # the wider token serves the rest

    run(main())
    assert auth.log.count("POST /token authorization_code") == 2, auth.log
    assert auth.log.count("POST /register") == 1, auth.log
    assert auth.scopes == [SCOPE, "mcp:read mcp:admin"]


def test_a_token_without_the_servers_scope_steps_up_at_connect(server):
    """The first token lacks mcp:read (the server wants it for everything): the handshake
    gets 403 insufficient_scope, and the client authorizes again before it goes on."""
    auth, url = server
    auth.reset(first_scope="profile")

    async def main():
        async with Client.connect_http(url, era="legacy", auth=OAuth(redirect_uri=REDIRECT)) as client:
            await tools_and_hello(client)
            assert client._conn.rules.auth_scope == SCOPE

    run(main())
    assert auth.log.count("POST /token authorization_code") == 2, auth.log


def test_a_refused_token_is_refreshed(server):
    """The first access token is refused (expired, though expires_in said an hour): the
    client uses its refresh token, not a new authorization."""
    auth, url = server
    auth.reset(first_expired=True)

    async def main():
        async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)) as client:
            await tools_and_hello(client)

    run(main())
    assert auth.log[-2:] == ["POST /token authorization_code", "POST /token refresh_token"], auth.log
    assert auth.log.count("GET /authorize") == 1


def test_client_credentials_with_a_secret(server):
    auth, url = server
    auth.reset(auth_methods=["client_secret_basic"], grants=["client_credentials"])
    oauth = OAuth(grant="client_credentials", client_id=CLIENT_ID, client_secret=CLIENT_SECRET)

    async def main():
        async with Client.connect_http(url, auth=oauth) as client:
            await tools_and_hello(client)

    run(main())
    assert auth.log == ["GET /.well-known/oauth-authorization-server", "POST /token client_credentials"]


def test_client_credentials_with_private_key_jwt(server):
    """private_key_jwt: the Rust JwtSigner signs an ES256 assertion (iss = sub = client id,
    aud = the issuer) with the PEM key; the server verifies it with the public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    auth, url = server
    auth.reset(auth_methods=["private_key_jwt"], grants=["client_credentials"], public_key=key.public_key())
    oauth = OAuth(grant="client_credentials", client_id=CLIENT_ID, private_key_pem=pem)

    async def main():
        async with Client.connect_http(url, auth=oauth) as client:
            await tools_and_hello(client)

    run(main())
    assert auth.log == ["GET /.well-known/oauth-authorization-server", "POST /token client_credentials"]


def test_a_token_store_keeps_tokens_across_connections(server):
    """The second connection finds the first one's token in the application's store and
    authorizes nothing."""
    auth, url = server

    class Store:
        def __init__(self):
            self.tokens = {}
            self.calls = []

        def load(self, resource):
            self.calls.append(("load", resource))
            return self.tokens.get(resource)

        def save(self, resource, tokens):
            self.calls.append(("save", resource))
            self.tokens[resource] = dict(tokens)

        def remove(self, resource):
            self.calls.append(("remove", resource))
            self.tokens.pop(resource, None)

    store = Store()

    async def main():
        for _ in range(2):
            async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT, token_store=store)) as client:
                await tools_and_hello(client)

    run(main())
    assert auth.log.count("POST /token authorization_code") == 1, auth.log
    saved = store.tokens[url]
    assert saved["token_type"] == "Bearer" and saved["scope"] == SCOPE
    assert saved["refresh_token"] == "refresh-1" and saved["issuer"] == auth.issuer
    assert saved["expires_at"] == pytest.approx(time.time() + 3600, abs=120)
    assert ("save", url) in store.calls


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_python_protected_server_end_to_end(era):
    """The Python client against the Python protected server (Server(auth=JwtVerifier)):
    the handler sees the token's subject, and a tool with scopes=["mcp:admin"] steps up."""
    from mcp_sansio import JwtVerifier
    from mcp_sansio.aio import Context, Server

    auth = None
    for _ in range(20):
        try:
            auth = AuthServer(free_port(), resource="pending")
            break
        except OSError:
            continue
    assert auth is not None
    server = Server("protected-py", "1.0", auth=JwtVerifier(SECRET, issuer=auth.issuer),
                    authorization_server=auth.issuer)

    @server.tool(description="Who is calling")
    def whoami(ctx: Context) -> str:
        return ctx.principal.subject

    @server.tool(description="Needs mcp:admin", scopes=["mcp:admin"])
    def purge(ctx: Context) -> str:
        return f"purged by {ctx.principal.subject} with {sorted(ctx.principal.scopes)}"

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        auth.resource = handle.url
        try:
            async with Client.connect_http(handle.url, era=era, auth=OAuth(redirect_uri=REDIRECT)) as client:
                assert (await client.call_tool("whoami", {}))["content"][0]["text"] == SUBJECT
                text = (await client.call_tool("purge", {}))["content"][0]["text"]
                assert text.startswith(f"purged by {SUBJECT} with ") and "mcp:admin" in text
        finally:
            await handle.aclose()

    try:
        run(main())
    finally:
        auth.close()
    assert auth.log.count("POST /token authorization_code") == 2, auth.log
    assert auth.scopes[-1] is not None and "mcp:admin" in auth.scopes[-1].split()


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
def test_a_401_without_oauth_reads_as_one_sentence(server, era):
    auth, url = server

    async def main():
        with pytest.raises(AuthorizationError) as info:
            async with Client.connect_http(url, era=era):
                pass
        return info.value

    error = run(main())
    base = url.rsplit("/", 1)[0]
    challenge = f'Bearer scope="mcp:read", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    assert str(error) == (
        f"the server at {url} answered HTTP 401 with WWW-Authenticate: {challenge}; this client has no "
        "authorization configured (pass auth=OAuth(...) to connect_http)"
    )
    assert (error.status, error.challenge, error.url) == (401, challenge, url)
    assert isinstance(error, ms.ConnectionClosed)
    assert auth.log == []


def test_a_401_on_a_request_with_a_static_token_reads_as_one_sentence(server):
    """A static Authorization header the server does not accept: the connect fails with the
    server's invalid_token challenge."""
    auth, url = server

    def main_sync():
        with pytest.raises(AuthorizationError) as info:
            sync.Client.connect_http(url, headers={"Authorization": "Bearer not-a-jwt"})
        return info.value

    error = main_sync()
    assert str(error).startswith(f"the server at {url} answered HTTP 401 with WWW-Authenticate: Bearer error=\"invalid_token\"")
    assert str(error).endswith(
        "; this client has no authorization configured (it refused the Authorization given in headers=; "
        "pass auth=OAuth(...) to connect_http)"
    )


def test_a_refused_authorization_reads_as_one_sentence(server):
    """The authorization server redirects with error=access_denied: the connect fails with
    the status, the challenge and why the flow failed."""
    auth, url = server
    auth.reset(deny=True)

    async def main():
        with pytest.raises(AuthorizationError) as info:
            async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)):
                pass
        return info.value

    error = run(main())
    assert str(error).startswith(f"the server at {url} answered HTTP 401 with WWW-Authenticate: Bearer scope=\"mcp:read\"")
    assert str(error).endswith("; authorization failed: authorization was refused: access_denied")
    assert "POST /token authorization_code" not in auth.log


def test_a_refused_step_up_fails_the_call_with_one_sentence(server):
    """purge's step-up is refused at the authorization server: that call raises
    AuthorizationError with the 403 challenge and why the flow failed; the connection and
    its token serve the other tools as before."""
    auth, url = server
    auth.reset(deny=1)

    async def main():
        async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT)) as client:
            await tools_and_hello(client)
            with pytest.raises(AuthorizationError) as info:
                await client.call_tool("purge", {})
            await tools_and_hello(client)
            return info.value

    error = run(main())
    assert str(error).startswith(
        f"the server at {url} answered HTTP 403 with WWW-Authenticate: Bearer error=\"insufficient_scope\""
    )
    assert str(error).endswith("; authorization failed: authorization was refused: access_denied")
    assert error.status == 403 and 'scope="mcp:read mcp:admin"' in error.challenge and error.url == url
    assert auth.log.count("GET /authorize") == 2


def test_a_failing_user_agent_reads_as_one_sentence(server):
    auth, url = server

    def agent(authorization_url):
        raise RuntimeError("the user closed the browser")

    async def main():
        with pytest.raises(AuthorizationError) as info:
            async with Client.connect_http(url, auth=OAuth(redirect_uri=REDIRECT, user_agent=agent)):
                pass
        return info.value

    error = run(main())
    assert str(error).endswith("; authorization failed: the user agent failed: the user closed the browser")
    assert error.status == 401


def test_a_user_agent_that_never_returns_holds_nothing_up(server):
    """A blocking user agent whose user never comes back: the connect fails at the
    request timeout, and neither the loop's end nor the client's close waits for it."""
    auth, url = server
    release = threading.Event()
    started = threading.Event()
    daemon = []

    def agent(authorization_url):
        daemon.append(threading.current_thread().daemon)
        started.set()
        release.wait(60)
        return REDIRECT

    async def main():
        with pytest.raises(ms.ConnectionClosed) as info:
            oauth = OAuth(redirect_uri=REDIRECT, user_agent=agent)
            async with Client.connect_http(url, era="legacy", request_timeout=0.5, auth=oauth):
                pass
        return info.value

    try:
        error = run(main(), timeout=30)  # asyncio.run ends without waiting for the agent's thread
        assert started.is_set() and daemon == [True]  # no executor's shutdown waits for it
        assert str(error) == (
            "handshake failed: the server did not answer initialize in time: the OAuth user agent had not "
            "come back with the redirect yet (give a login more time with request_timeout=)"
        )
    finally:
        release.set()


def test_a_refused_client_reads_as_one_sentence(server):
    """Client credentials against a server whose token endpoint answers 401 invalid_client
    (a wrong secret): the call fails with the challenge and the endpoint's error."""
    auth, url = server
    auth.reset(auth_methods=["client_secret_basic"], grants=["client_credentials"])
    oauth = OAuth(grant="client_credentials", client_id=CLIENT_ID, client_secret="wrong")

    async def main():
        with pytest.raises(AuthorizationError) as info:
            async with Client.connect_http(url, auth=oauth):
                pass
        return info.value

    error = run(main())
    assert str(error).endswith("; authorization failed: token endpoint answered HTTP 401 (invalid_client)")


# --- sans IO: the transport and the session driven by hand ----------------------------------


def _connected(rules, session):
    """Answers the 2025 handshake by hand; returns the next free stream number."""
    rules.pull(session)
    stream, method, _, body = rules.next_request()
    request = json.loads(body)
    assert (method, request["method"]) == ("POST", "initialize")
    result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    rules.handle_head(stream, 200, [("Content-Type", "application/json"), ("Mcp-Session-Id", "s1")], session)
    rules.handle_body(stream, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode(), session)
    rules.handle_end(stream, session)
    assert type(session.next_event()).__name__ == "Ready"
    rules.pull(session)
    while (request := rules.next_request()) is not None:  # notifications/initialized, the GET stream
        rules.handle_head(request[0], 202 if request[1] == "POST" else 405, [], session)
        rules.handle_end(request[0], session)


CHALLENGE = 'Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"'


@pytest.mark.parametrize("configured", [False, True])
def test_a_call_refused_mid_session_fails_with_authorization_error(configured):
    """A tools/call answered 401: without OAuth it fails at once; with OAuth the core's flow
    asks for its requests (each reported as failed here: no response) until it gives up;
    either way the call's RequestFailed carries an AuthorizationError naming the status, the
    URL and the challenge, and the session stays open."""
    session = ms.ClientSession("c", "1", era="legacy")
    oauth = OAuth(redirect_uri=REDIRECT)._setup if configured else None
    rules = ms._core.HttpClientTransport([], url="http://mcp.test/mcp", auth=oauth)
    _connected(rules, session)
    rid = session.call_tool("hello", {})
    rules.pull(session)
    stream, method, headers, _ = rules.next_request()
    assert not [h for h in headers if h[0].lower() == "authorization"]
    rules.handle_head(stream, 401, [("WWW-Authenticate", CHALLENGE), ("Content-Type", "application/json")], session)
    assert rules.next_abort() == stream  # the response is done with: its connection is dropped
    fetched = []
    while (action := rules.next_auth_action(session)) is not None:
        assert action[0] == "fetch", action
        fetched.append((action[1], action[2]))
        rules.handle_auth_response(0, [], b"", session)
    event = session.next_event()
    assert type(event).__name__ == "RequestFailed" and event.request_id == rid
    error = event.error
    assert isinstance(error, AuthorizationError)
    assert (error.status, error.challenge, error.url) == (401, CHALLENGE, "http://mcp.test/mcp")
    if configured:
        # The challenge's metadata first, then the well-known fallbacks, then registration
        # at the server's own origin (the 2025-03-26 rules), which fails the flow.
        assert fetched[0] == ("GET", "http://mcp.test/.well-known/oauth-protected-resource/mcp")
        assert fetched[-1] == ("POST", "http://mcp.test/register")
        assert str(error) == (
            f"the server at http://mcp.test/mcp answered HTTP 401 with WWW-Authenticate: {CHALLENGE}; "
            "authorization failed: registration endpoint answered HTTP 0"
        )
    else:
        assert fetched == []
        assert str(error) == (
            f"the server at http://mcp.test/mcp answered HTTP 401 with WWW-Authenticate: {CHALLENGE}; "
            "this client has no authorization configured (pass auth=OAuth(...) to connect_http)"
        )
    assert not session.is_closed and session.close_error is None


def test_a_403_without_a_challenge_names_no_challenge():
    """A 403 without WWW-Authenticate is refused as well (the core's rule: its body is an
    error document, no answer); the error gives the status and no challenge."""
    session = ms.ClientSession("c", "1", era="legacy")
    rules = ms._core.HttpClientTransport([], url="http://mcp.test/mcp")
    _connected(rules, session)
    rid = session.call_tool("hello", {})
    rules.pull(session)
    stream = rules.next_request()[0]
    rules.handle_head(stream, 403, [("Content-Type", "text/plain")], session)
    event = session.next_event()
    assert event.request_id == rid and isinstance(event.error, AuthorizationError)
    assert (event.error.status, event.error.challenge) == (403, None)
    assert str(event.error) == (
        "the server at http://mcp.test/mcp answered HTTP 403; this client has no authorization configured "
        "(pass auth=OAuth(...) to connect_http)"
    )


# --- options and docs -----------------------------------------------------------------------


def test_the_guide_oauth_example_compiles():
    from conftest import REPO

    text = (REPO / "guide" / "src" / "python.md").read_text()
    section = text.split("## OAuth for HTTP clients", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```python\n(.*?)```", section, re.S)
    compile(block, "python.md", "exec")


# --- options --------------------------------------------------------------------------------


def test_bad_options_fail_at_once():
    with pytest.raises(ValueError, match="unknown grant"):
        OAuth(grant="password")
    with pytest.raises(ValueError, match="client_credentials.*needs client_id"):
        OAuth(grant="client_credentials")
    with pytest.raises(ValueError, match="private_key_pem"):
        OAuth(grant="client_credentials", client_id="x", private_key_pem="not a key")
    with pytest.raises(ValueError, match="needs assertion"):
        OAuth(grant="jwt_bearer")
    with pytest.raises(ValueError, match="dpop_key"):
        OAuth(dpop_key=b"short")
    with pytest.raises(TypeError, match="token_store lacks"):
        OAuth(token_store=object())
    with pytest.raises(TypeError, match="user_agent must be callable"):
        OAuth(user_agent="firefox")
    assert len(ms.auth.new_dpop_key()) == 32
    OAuth(dpop_key=ms.auth.new_dpop_key())
