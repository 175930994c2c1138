"""Who is calling, as a handler sees it: the verified principal per user (serve_http and
the ASGI app under uvicorn, both wires), the request's headers, ``_meta``, client info and
capabilities, version and session; context variables an ASGI middleware set, in plain
``def`` tools; tasks visible only to the principal that created them; a scoped tool over
stdio refused with -32003."""

import asyncio
import contextvars
import dataclasses
import json
import re
import sys

import pytest

import mcp_sansio as ms
from conftest import EVERYTHING, free_port, uvicorn_serving
from identity_kit import (
    MODERN,
    LegacySession,
    TASKS_EXTENSION,
    answer,
    bearer,
    context_tool,
    post_modern,
    protected_server,
    token,
)
from mcp_sansio.aio import Client, Context, Headers, Server


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


USERS = [("alice", "mcp:read mcp:admin", "cli-a"), ("bob", "mcp:read", "cli-b")]


@dataclasses.dataclass
class Note:
    text: str


def identity_server(**options):
    server = protected_server(**options)
    context_tool(server)

    @server.tool()
    def typed_note(note: Note, ctx: Context) -> Note:
        """A typed tool reads its caller too"""
        return Note(f"{note.text} from {ctx.principal.subject}")

    @server.prompt()
    async def hello(ctx: Context) -> str:
        return f"hello {ctx.principal.subject}"

    @server.completion()
    def complete(ref, argument, context, ctx: Context):
        return [ctx.principal.subject]

    return server


async def check_each_user_sees_itself(url, era):
    for subject, scopes, client_id in USERS:
        tok = token(subject, scopes, client_id=client_id, aud=url, team=subject.upper())
        async with Client.connect_http(url, era=era, name=f"client-of-{subject}", headers=bearer(tok)) as c:
            who = json.loads((await c.call_tool("whoami"))["content"][0]["text"])
            assert who == {"subject": subject, "client_id": client_id, "scopes": scopes.split()}
            r = await c.call_tool("whoami_async")
            assert r["structuredContent"]["subject"] == subject
            assert r["structuredContent"]["claims"]["team"] == subject.upper()
            r = await c.call_tool("typed_note", {"note": {"text": "hi"}})
            assert r["structuredContent"] == {"text": f"hi from {subject}"}
            r = await c.read_resource("test://users/ada")
            assert r["contents"][0]["text"] == f"ada asked by {subject}"
            r = await c.get_prompt("hello")
            assert r["messages"][0]["content"]["text"] == f"hello {subject}"
            r = await c.complete({"type": "ref/prompt", "name": "hello"}, {"name": "x", "value": ""})
            assert r["completion"]["values"] == [subject]

            ctx = (await c.call_tool("context"))["structuredContent"]
            assert ctx["subject"] == subject
            assert ctx["has_headers"] is True
            assert ctx["client_info"]["name"] == f"client-of-{subject}"
            assert ctx["era"] == era
            if era == "legacy":
                assert ctx["protocol_version"] == c.protocol_version != MODERN
                assert re.fullmatch(r"[0-9a-f]{32}", ctx["session_id"] or "") or ctx["session_id"], ctx
            else:
                assert ctx["protocol_version"] == MODERN
                assert ctx["session_id"] is None
                assert ctx["meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_each_user_sees_itself_over_serve_http(era):
    async def main():
        async with await identity_server().serve_http("127.0.0.1", 0) as handle:
            await check_each_user_sees_itself(handle.url, era)

    run(main())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_each_user_sees_itself_through_uvicorn(era):
    async def main():
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        async with uvicorn_serving(identity_server(resource_url=url).asgi_app(path="/mcp"), port=port):
            await check_each_user_sees_itself(url, era)

    run(main())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_handler_reads_the_request_headers_and_meta(era):
    """Unprotected: no principal; the headers as sent (case-insensitive, repeated ones
    kept); the request's ``_meta``."""

    async def main():
        server = Server("headers")
        context_tool(server)

        @server.tool()
        async def headers(ctx: Context) -> dict:
            return {"raw": ctx.headers.raw}
        async with await server.serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era, headers={"X-Trace": "abc"}) as c:
                ctx = (await c.call_tool("context"))["structuredContent"]
                assert ctx["subject"] is None
                assert ctx["x_trace"] == "abc" and ctx["x_trace_all"] == ["abc"]
                r = await c.call_tool("headers", headers={"X-Call": "this call"})
                sent = dict((n.lower(), v) for n, v in r["structuredContent"]["raw"])
                assert sent["x-call"] == "this call" and sent["x-trace"] == "abc"
                assert sent["host"].startswith("127.0.0.1:")
                r = await c.request("tools/call", {"name": "context", "arguments": {}, "_meta": {"example.com/run": "r1"}})
                assert r["structuredContent"]["meta"]["example.com/run"] == "r1"
                assert r["structuredContent"]["client_capabilities"] is not None

    run(main())


def test_headers_are_case_insensitive_and_keep_repeated_fields():
    h = Headers([("X-Trace", "1"), ("Host", "h"), ("x-trace", "2")])
    assert h["x-trace"] == h["X-TRACE"] == "1"
    assert h.get_all("X-Trace") == ["1", "2"]
    assert "HOST" in h and "nope" not in h and h.get("nope") is None
    assert sorted(h) == ["host", "x-trace"] and len(h) == 2
    assert h.raw == [("X-Trace", "1"), ("Host", "h"), ("x-trace", "2")]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_in_process_a_handler_sees_no_headers_and_no_principal(era):
    async def main():
        server = Server("local")
        context_tool(server)
        async with Client.connect_in_process(server, era=era, name="local-client") as c:
            ctx = (await c.call_tool("context"))["structuredContent"]
            assert ctx["has_headers"] is False and ctx["subject"] is None and ctx["session_id"] is None
            assert ctx["client_info"]["name"] == "local-client"
            assert ctx["era"] == era

    run(main())


TENANT: "contextvars.ContextVar[str]" = contextvars.ContextVar("tenant", default="none")


def tenant_middleware(app):
    """A plain ASGI middleware that sets a context variable from a header."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            for name, value in scope.get("headers", ()):
                if name.lower() == b"x-tenant":
                    TENANT.set(value.decode())
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_context_variable_set_by_a_middleware_reaches_def_and_async_tools(era):
    async def main():
        server = Server("tenants")

        @server.tool()
        def tenant_sync() -> str:
            return TENANT.get()

        @server.tool()
        async def tenant_async() -> str:
            return TENANT.get()

        async with uvicorn_serving(tenant_middleware(server.asgi_app(path="/mcp"))) as base:
            for tenant in ("red", "blue"):
                async with Client.connect_http(base + "/mcp", era=era, headers={"X-Tenant": tenant}) as c:
                    assert (await c.call_tool("tenant_sync"))["content"][0]["text"] == tenant
                    assert (await c.call_tool("tenant_async"))["content"][0]["text"] == tenant

    run(main())


def task_id_of(result):
    """The task id of a CreateTaskResult (the task's fields, or under ``task``)."""
    return result.get("taskId") or result["task"]["taskId"]


def test_a_task_is_visible_only_to_its_creator_on_the_2026_wire():
    """bob cannot read or cancel alice's task: he gets exactly the error of an unknown id;
    task ids are 128 random-looking bits."""

    async def main():
        async with await identity_server().serve_http("127.0.0.1", 0) as handle:
            url = handle.url
            alice = token("alice", "mcp:read", aud=url)
            bob = token("bob", "mcp:read", aud=url)
            caps = {"extensions": {TASKS_EXTENSION: {}}}

            async def call(tok, method, params, name=None):
                r = await post_modern(url, tok, method, params, name=name, capabilities=caps)
                return r[0], answer(*r)

            ids = []
            for _ in range(2):
                status, created = await call(
                    alice, "tools/call", {"name": "long_job", "arguments": {"ms": 60000}}, "long_job"
                )
                assert status == 200 and "result" in created, created
                ids.append(task_id_of(created["result"]))
            tid = ids[0]
            assert all(re.fullmatch(r"[0-9a-f]{32}", t) for t in ids), ids
            assert ids[0] != ids[1]

            status, mine = await call(alice, "tasks/get", {"taskId": tid}, tid)
            assert mine["result"]["status"] == "working", mine

            unknown = "0" * 32
            for method in ("tasks/get", "tasks/cancel"):
                status_other, other = await call(bob, method, {"taskId": tid}, tid)
                status_none, none = await call(bob, method, {"taskId": unknown}, unknown)
                assert "error" in other, other
                assert status_other == status_none
                assert other["error"]["code"] == none["error"]["code"] == -32602
                assert other["error"]["message"].replace(tid, "ID") == none["error"]["message"].replace(unknown, "ID")
            status, still = await call(alice, "tasks/get", {"taskId": tid}, tid)
            assert still["result"]["status"] == "working"  # bob's cancel did nothing
            for t in ids:
                status, cancelled = await call(alice, "tasks/cancel", {"taskId": t}, t)
                assert "result" in cancelled, cancelled
            status, gone = await call(alice, "tasks/get", {"taskId": tid}, tid)
            assert gone["result"]["status"] == "cancelled"

    run(main())


def test_a_scoped_tool_over_stdio_is_refused_with_32003():
    async def main():
        async with Client.connect_stdio(sys.executable, [str(EVERYTHING)], era="legacy") as c:
            with pytest.raises(ms.McpError) as refused:
                await c.call_tool("admin_echo", {"text": "hi"})
            assert refused.value.code == -32003
            assert refused.value.data == {"error": "insufficient_scope", "requiredScopes": ["mcp:admin"]}
            who = json.loads((await c.call_tool("whoami"))["content"][0]["text"])
            assert who == {"subject": None, "client_id": None, "scopes": []}
            assert (await c.call_tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"

    run(main())


def test_a_byte_stream_given_a_principal_serves_its_scoped_tools():
    """The sans-IO ServerSession: ``set_principal`` makes the connection's requests that
    principal's (the handler sees it; scoped tools check its scopes)."""
    server = Server("stdio-user")

    @server.tool(scopes=["mcp:admin"])
    def admin() -> str:
        return "ok"

    def exchange(principal):
        s = ms.ServerSession(server.config, now=0.0)
        if principal is not None:
            s.set_principal(principal)
        assert s.principal == principal
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "admin", "arguments": {}}},
        ]
        s.receive_data(b"".join(json.dumps(m).encode() + b"\n" for m in lines), now=0.0)
        events = []
        while (e := s.next_event()) is not None:
            events.append(e)
        out = [json.loads(line) for line in s.data_to_send().splitlines() if line.strip()]
        return events, out

    events, out = exchange(ms.Principal("root", None, ["mcp:admin"]))
    calls = [e for e in events if isinstance(e, ms.ToolCall)]
    assert len(calls) == 1
    assert calls[0].info.principal == ms.Principal("root", None)
    assert calls[0].info.principal.scopes == ["mcp:admin"]
    assert calls[0].info.headers is None and calls[0].info.era == "legacy"
    assert calls[0].info.client_info == {"name": "c", "version": "1"}

    events, out = exchange(None)
    assert not [e for e in events if isinstance(e, ms.ToolCall)]
    refused = [m for m in out if m.get("id") == 2]
    assert refused[0]["error"]["code"] == -32003


def test_a_2025_session_answers_only_the_principal_that_opened_it():
    async def main():
        async with await identity_server().serve_http("127.0.0.1", 0) as handle:
            alice = await LegacySession(handle.url, token("alice", "mcp:read", aud=handle.url)).open()
            status, headers, body = await alice.post("tools/call", {"name": "whoami", "arguments": {}})
            assert json.loads(answer(status, headers, body)["result"]["content"][0]["text"])["subject"] == "alice"
            # bob's valid token on alice's session: 404, as for a session that does not exist
            alice.tok = token("bob", "mcp:read", aud=handle.url)
            status, _, _ = await alice.post("tools/call", {"name": "whoami", "arguments": {}})
            assert status == 404
            alice.sid = "0" * 32
            status, _, _ = await alice.post("tools/call", {"name": "whoami", "arguments": {}})
            assert status == 404

    run(main())


STDIO_USER = """
import asyncio, json
from mcp_sansio import Principal
from mcp_sansio.aio import Context, Server

server = Server("stdio-user")

@server.tool(scopes=["mcp:admin"])
def admin(ctx: Context) -> str:
    return json.dumps([ctx.principal.subject, ctx.principal.scopes, ctx.headers])

asyncio.run(server.serve_stdio(principal=Principal("root", "local", ["mcp:admin"])))
"""


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_serve_stdio_with_a_principal_serves_its_scoped_tools(era):
    async def main():
        async with Client.connect_stdio(sys.executable, ["-c", STDIO_USER], era=era) as c:
            r = await c.call_tool("admin")
            assert json.loads(r["content"][0]["text"]) == ["root", ["mcp:admin"], None]

    run(main())


def test_a_request_state_issued_to_alice_is_refused_to_bob():
    """A 2026 multi-round-trip state sealed for alice's call: bob replaying it with an
    answer gets -32602 and his handler never runs; alice's own retry is answered."""
    server = protected_server()

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"Hello, {answer['content']['name']}, from {ctx.principal.subject}!"

    async def main():
        async with await server.serve_http("127.0.0.1", 0) as handle:
            url = handle.url
            alice = token("alice", "mcp:read", aud=url)
            bob = token("bob", "mcp:read", aud=url)
            caps = {"elicitation": {}}
            first = answer(*await post_modern(url, alice, "tools/call", {"name": "greet"}, "greet", caps))
            result = first["result"]
            assert result["resultType"] == "input_required", result
            (key,) = result["inputRequests"].keys()
            retry = {
                "name": "greet",
                "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": result["requestState"],
            }
            refused = answer(*await post_modern(url, bob, "tools/call", retry, "greet", caps, request_id=2))
            assert refused["error"]["code"] == -32602, refused
            assert refused["error"]["message"].endswith("requestState was issued to another caller"), refused
            served = answer(*await post_modern(url, alice, "tools/call", retry, "greet", caps, request_id=3))
            assert served["result"]["content"][0]["text"] == "Hello, Ada, from alice!", served

    run(main())
