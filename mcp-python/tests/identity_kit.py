"""What the identity tests share: JWTs for two users, a protected test server, and plain
HTTP requests (urllib, in a thread) for the status codes and challenges the clients hide."""

import asyncio
import json
import re
import urllib.error
import urllib.request

from conftest import mint_jwt
from mcp_sansio import JwtVerifier, McpError
from mcp_sansio.aio import Context, Server

SECRET = "identity-test-secret-0123456789"
ISSUER = "http://127.0.0.1:1/issuer"
MODERN = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


def token(subject, scopes="", client_id="test-client", secret=SECRET, **claims):
    """A JWT for ``subject`` signed with the test secret (issuer ISSUER, audience given or
    none)."""
    claims.setdefault("iss", ISSUER)
    return mint_jwt(secret, sub=subject, client_id=client_id, scope=scopes, **claims)


def bearer(tok):
    return {"Authorization": f"Bearer {tok}"}


def protected_server(**options):
    """A server protected by JwtVerifier(SECRET) (audience: its resource URL) with tools
    that say who called, a scoped tool, resource and prompt, and a task-capable job."""
    options.setdefault("auth", JwtVerifier(SECRET, issuer=ISSUER))
    options.setdefault("authorization_server", ISSUER)
    options.setdefault("tasks", True)
    server = Server("identity", "1.0", **options)

    @server.tool()
    def whoami(ctx: Context) -> str:
        p = ctx.principal
        return json.dumps({
            "subject": p.subject if p else None,
            "client_id": p.client_id if p else None,
            "scopes": p.scopes if p else [],
        })

    @server.tool()
    async def whoami_async(ctx: Context) -> dict:
        p = ctx.principal
        return {"subject": p.subject if p else None, "claims": p.claims if p else None}

    @server.tool(scopes=["mcp:admin"])
    def admin_echo(text: str) -> str:
        return text

    @server.resource("test://mine", scopes=["mcp:files"])
    def mine(ctx: Context) -> str:
        return f"the file of {ctx.principal.subject}"

    @server.resource("test://users/{name}")
    def user(name: str, ctx: Context) -> str:
        return f"{name} asked by {ctx.principal.subject if ctx.principal else None}"

    @server.prompt(scopes=["mcp:admin"])
    def admin_prompt(ctx: Context) -> str:
        return f"prompt for {ctx.principal.subject}"

    @server.tool(task_support="optional")
    async def long_job(ms: int, ctx: Context) -> str:
        try:
            await ctx.run_as_task()
        except McpError:
            pass
        await asyncio.sleep(ms / 1000)
        return f"done after {ms} ms"

    return server


def context_tool(server):
    """Registers ``context``: every field of the handler's context, as JSON."""

    @server.tool()
    def context(ctx: Context) -> dict:
        p = ctx.principal
        h = ctx.headers
        return {
            "subject": p.subject if p else None,
            "x_trace": h.get("X-Trace") if h is not None else None,
            "x_trace_all": h.get_all("x-trace") if h is not None else None,
            "has_headers": h is not None,
            "meta": ctx.meta,
            "client_info": ctx.client_info,
            "client_capabilities": ctx.client_capabilities,
            "protocol_version": ctx.protocol_version,
            "era": ctx.era,
            "session_id": ctx.session_id,
        }


async def http(method, url, body=None, headers=None):
    """One plain HTTP request: ``(status, headers, body)``, whatever the status."""

    def go():
        req = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, e.headers, e.read()

    return await asyncio.wait_for(asyncio.to_thread(go), 30)


def messages(body, content_type):
    """The JSON-RPC messages of a response body (JSON, or SSE ``data:`` lines)."""
    text = body.decode()
    if (content_type or "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        return [json.loads(d) for d in data if d]
    return [json.loads(text)] if text.strip() else []


def answer(status, headers, body):
    """The JSON-RPC response (with an ``id``) of a response."""
    for m in messages(body, headers.get("Content-Type")):
        if "id" in m and ("result" in m or "error" in m):
            return m
    raise AssertionError(f"no JSON-RPC response in HTTP {status}: {body[:300]!r}")


async def post_modern(url, tok, method, params, name=None, capabilities=None, request_id=1):
    """A 2026-07-28 request (with its headers) as ``tok``'s bearer: ``(status, headers, body)``."""
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **params.get("_meta", {}),
    }
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    if tok is not None:
        headers.update(bearer(tok))
    return await http("POST", url, body, headers)


class LegacySession:
    """A 2025-11-25 session over plain HTTP, as ``tok``'s bearer."""

    def __init__(self, url, tok):
        self.url = url
        self.tok = tok
        self.sid = None
        self.next_id = 1

    def headers(self):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        h.update(bearer(self.tok))
        if self.sid is not None:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = "2025-11-25"
        return h

    async def open(self):
        status, headers, body = await self.post("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "plain-http", "version": "1"},
        })
        assert status == 200, (status, body)
        self.sid = headers["Mcp-Session-Id"]
        await self.notify("notifications/initialized")
        return self

    async def post(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}
        return await http("POST", self.url, json.dumps(message).encode(), self.headers())

    async def notify(self, method):
        message = {"jsonrpc": "2.0", "method": method}
        status, _, body = await http("POST", self.url, json.dumps(message).encode(), self.headers())
        assert status == 202, (status, body)


def challenge(headers):
    """The ``WWW-Authenticate`` parameters, as a dict."""
    value = headers.get("WWW-Authenticate") or ""
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', value))


def metadata_url(url):
    """The Protected Resource Metadata URL of the endpoint at ``url`` (path-based)."""
    origin, path = re.match(r"(https?://[^/]+)(/.*)?$", url).groups()
    return f"{origin}/.well-known/oauth-protected-resource{(path or '').rstrip('/')}"
