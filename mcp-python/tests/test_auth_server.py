"""A protected server (``Server(auth=...)``): the Protected Resource Metadata, 401 for a
missing or invalid token with the challenge that names the metadata, 403 with the
``insufficient_scope`` step-up challenge for a scoped tool, resource or prompt, lists that
hide what the caller may not use, token verifiers (``JwtVerifier``, sync and async
functions), over the built-in HTTP server and the ASGI app under uvicorn."""

import asyncio
import json
import sys
import time

import pytest

import mcp_sansio as ms
from conftest import EVERYTHING, free_port, mint_jwt, uvicorn_serving
from identity_kit import (
    ISSUER,
    SECRET,
    LegacySession,
    answer,
    bearer,
    challenge,
    http,
    metadata_url,
    post_modern,
    protected_server,
    token,
)
from mcp_sansio.aio import Client, Server


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def alice_for(url):
    return token("alice", "mcp:read mcp:admin mcp:files", aud=url)


def bob_for(url):
    return token("bob", "mcp:read", aud=url)


async def check_401_and_metadata(url):
    """No token, a bad signature, a token for another resource: 401 naming the metadata,
    which is served."""
    meta = metadata_url(url)
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).encode()
    plain = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    status, headers, body = await http("POST", url, init, plain)
    assert status == 401
    assert challenge(headers)["resource_metadata"] == meta
    assert "error" not in challenge(headers)  # no token: no error code (RFC 6750)
    assert json.loads(body)["error"] == "invalid_request"

    status, headers, body = await http("GET", meta)
    assert status == 200
    doc = json.loads(body)
    assert doc["resource"] == url
    assert doc["authorization_servers"] == [ISSUER]

    forged = token("alice", "mcp:admin", secret="another secret", aud=url)
    status, headers, body = await http("POST", url, init, {**plain, **bearer(forged)})
    assert status == 401
    assert challenge(headers)["error"] == "invalid_token"
    assert challenge(headers)["resource_metadata"] == meta

    elsewhere = token("alice", "mcp:admin", aud="http://127.0.0.1:1/other")
    status, headers, _ = await http("POST", url, init, {**plain, **bearer(elsewhere)})
    assert status == 401
    assert challenge(headers)["error_description"] == "the token is not for this resource"

    expired = token("alice", "mcp:admin", exp=int(time.time()) - 3600, aud=url)
    status, headers, _ = await http("POST", url, init, {**plain, **bearer(expired)})
    assert status == 401
    assert challenge(headers)["error_description"] == "the token has expired"

    no_audience = token("alice", "mcp:admin")
    status, headers, _ = await http("POST", url, init, {**plain, **bearer(no_audience)})
    assert status == 401
    assert challenge(headers)["error"] == "invalid_token"

    # The same token with the right audience goes through.
    status, headers, _ = await http("POST", url, init, {**plain, **bearer(token("alice", aud=url))})
    assert status == 200, headers


def test_without_a_valid_token_serve_http_answers_401_naming_the_metadata():
    async def main():
        async with await protected_server().serve_http("127.0.0.1", 0) as handle:
            await check_401_and_metadata(handle.url)
            # Our client without a token cannot connect.
            with pytest.raises(Exception):
                async with Client.connect_http(handle.url, era="legacy"):
                    pass

    run(main())


def test_without_a_valid_token_the_asgi_app_answers_401_naming_the_metadata():
    async def main():
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        app = protected_server(resource_url=url).asgi_app(path="/mcp")
        assert app.metadata_path == "/.well-known/oauth-protected-resource/mcp"
        async with uvicorn_serving(app, port=port):
            await check_401_and_metadata(url)

    run(main())


async def check_scoped_entries(url):
    """bob (no mcp:admin, no mcp:files) gets 403 insufficient_scope for the scoped tool,
    resource and prompt on both wires; alice is served; lists show everything."""
    meta = metadata_url(url)
    ALICE, BOB = alice_for(url), bob_for(url)
    bob = await LegacySession(url, BOB).open()
    for method, params, needed in [
        ("tools/call", {"name": "admin_echo", "arguments": {"text": "hi"}}, "mcp:admin"),
        ("resources/read", {"uri": "test://mine"}, "mcp:files"),
        ("prompts/get", {"name": "admin_prompt"}, "mcp:admin"),
    ]:
        status, headers, body = await bob.post(method, params)
        assert status == 403, (method, status, body)
        c = challenge(headers)
        assert c["error"] == "insufficient_scope"
        assert c["scope"] == needed
        assert c["resource_metadata"] == meta
        assert json.loads(body)["error"] == "insufficient_scope"
    # An unscoped entry is served to bob, with his principal.
    status, headers, body = await bob.post("resources/read", {"uri": "test://users/ada"})
    assert status == 200
    assert answer(status, headers, body)["result"]["contents"][0]["text"] == "ada asked by bob"

    status, headers, body = await post_modern(
        url, BOB, "tools/call", {"name": "admin_echo", "arguments": {"text": "hi"}}, name="admin_echo"
    )
    assert status == 403
    assert challenge(headers)["scope"] == "mcp:admin"

    for era in ("legacy", "modern"):
        async with Client.connect_http(url, era=era, headers=bearer(ALICE)) as alice:
            r = await alice.call_tool("admin_echo", {"text": "hi"})
            assert r["content"][0]["text"] == "hi"
            r = await alice.read_resource("test://mine")
            assert r["contents"][0]["text"] == "the file of alice"
            r = await alice.get_prompt("admin_prompt")
            assert r["messages"][0]["content"]["text"] == "prompt for alice"
        async with Client.connect_http(url, era=era, headers=bearer(BOB)) as c:
            names = [t["name"] for t in (await c.list_tools())["tools"]]
            assert "admin_echo" in names  # listed, but refused (hide_forbidden is off)


def test_a_scoped_entry_needs_its_scope_over_serve_http():
    async def main():
        async with await protected_server().serve_http("127.0.0.1", 0) as handle:
            await check_scoped_entries(handle.url)

    run(main())


def test_a_scoped_entry_needs_its_scope_through_uvicorn():
    async def main():
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        async with uvicorn_serving(protected_server(resource_url=url).asgi_app(path="/mcp"), port=port):
            await check_scoped_entries(url)

    run(main())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_hide_forbidden_leaves_out_what_the_caller_may_not_use(era):
    async def main():
        async with await protected_server(hide_forbidden=True).serve_http("127.0.0.1", 0) as handle:
            ALICE, BOB = alice_for(handle.url), bob_for(handle.url)
            async with Client.connect_http(handle.url, era=era, headers=bearer(BOB)) as bob:
                tools = [t["name"] for t in (await bob.list_tools())["tools"]]
                assert "admin_echo" not in tools and "whoami" in tools
                assert [r["uri"] for r in (await bob.list_resources())["resources"]] == []
                assert [p["name"] for p in (await bob.list_prompts())["prompts"]] == []
            async with Client.connect_http(handle.url, era=era, headers=bearer(ALICE)) as alice:
                tools = [t["name"] for t in (await alice.list_tools())["tools"]]
                assert "admin_echo" in tools
                assert [r["uri"] for r in (await alice.list_resources())["resources"]] == ["test://mine"]

    run(main())


def test_a_scope_added_at_run_time_is_checked_at_once():
    """Registering a scoped tool while serving: the HTTP check learns it (403 at once)."""

    async def main():
        server = protected_server()
        async with await server.serve_http("127.0.0.1", 0) as handle:
            bob = await LegacySession(handle.url, bob_for(handle.url)).open()
            status, _, _ = await bob.post("tools/call", {"name": "whoami", "arguments": {}})
            assert status == 200

            @server.tool(name="whoami", scopes=["mcp:admin"])
            def whoami_now() -> str:
                return "admin only now"

            status, headers, _ = await bob.post("tools/call", {"name": "whoami", "arguments": {}})
            assert status == 403
            assert challenge(headers)["scope"] == "mcp:admin"
            server.remove_tool("whoami")

            @server.tool(name="whoami")
            def whoami_again() -> str:
                return "open again"

            status, headers, body = await bob.post("tools/call", {"name": "whoami", "arguments": {}})
            assert status == 200
            assert answer(status, headers, body)["result"]["content"][0]["text"] == "open again"

    run(main())


def test_required_scopes_apply_to_every_request():
    async def main():
        server = protected_server(required_scopes=["mcp:read"])
        async with await server.serve_http("127.0.0.1", 0) as handle:
            BOB = bob_for(handle.url)
            carol = token("carol", "", aud=handle.url)
            status, headers, body = await post_modern(handle.url, carol, "tools/list", {})
            assert status == 403
            assert challenge(headers)["scope"] == "mcp:read"
            doc = json.loads((await http("GET", metadata_url(handle.url)))[2])
            assert doc["scopes_supported"] == ["mcp:read"]
            # A scoped tool's challenge names both.
            status, headers, _ = await post_modern(
                handle.url, BOB, "tools/call", {"name": "admin_echo", "arguments": {"text": "x"}}, name="admin_echo"
            )
            assert status == 403
            assert challenge(headers)["scope"] == "mcp:read mcp:admin"
            async with Client.connect_http(handle.url, headers=bearer(BOB)) as bob:
                assert json.loads((await bob.call_tool("whoami"))["content"][0]["text"])["subject"] == "bob"

    run(main())


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_verifier_function_decides_who_calls(kind):
    """``auth`` as a function of the token (sync or async): a dict, an object or a Principal
    is the caller; None or an exception refuses the token with 401."""

    class AccessToken:  # the official SDK's shape (no subject)
        def __init__(self, client_id, scopes, expires_at=None):
            self.client_id = client_id
            self.scopes = scopes
            self.expires_at = expires_at

    table = {
        "t-alice": {"subject": "alice", "client_id": "app", "scopes": ["mcp:admin"], "claims": {"team": "red"}},
        "t-bob": ms.Principal("bob", "app", "mcp:read"),
        "t-sdk": AccessToken("sdk-app", ["mcp:read"]),
        "t-old": AccessToken("sdk-app", ["mcp:read"], expires_at=time.time() - 10),
    }
    seen = []

    def lookup(tok):
        seen.append(tok)
        if tok == "t-revoked":
            raise ValueError("the token was revoked")
        if tok == "t-crash":
            raise RuntimeError("database down: secret detail")
        return table.get(tok)

    async def lookup_async(tok):
        await asyncio.sleep(0)
        return lookup(tok)

    async def main():
        server = protected_server(auth=lookup if kind == "sync" else lookup_async)
        async with await server.serve_http("127.0.0.1", 0) as handle:
            for tok, want in [("t-alice", ("alice", "app", ["mcp:admin"])), ("t-bob", ("bob", "app", ["mcp:read"])),
                              ("t-sdk", (None, "sdk-app", ["mcp:read"]))]:
                async with Client.connect_http(handle.url, headers=bearer(tok)) as c:
                    who = json.loads((await c.call_tool("whoami"))["content"][0]["text"])
                    assert (who["subject"], who["client_id"], who["scopes"]) == want
                    if tok == "t-alice":
                        r = await c.call_tool("whoami_async")
                        assert r["structuredContent"] == {"subject": "alice", "claims": {"team": "red"}}
            for tok, why in [("t-unknown", "the token is invalid"), ("t-revoked", "the token was revoked"),
                             ("t-crash", "the token could not be verified"), ("t-old", "the token has expired")]:
                status, headers, _ = await post_modern(handle.url, tok, "tools/list", {})
                assert status == 401, tok
                assert challenge(headers)["error"] == "invalid_token"
                assert challenge(headers)["error_description"] == why
            assert "t-crash" in seen

    run(main())


def test_the_jwt_verifier():
    v = ms.JwtVerifier(SECRET, audience="http://a/mcp", issuer=ISSUER)
    # What is checked must be there: no `aud`, no `iss`
    with pytest.raises(ValueError, match="invalid"):
        v.verify(token("alice"))
    with pytest.raises(ValueError, match="invalid"):
        v.verify(mint_jwt(SECRET, sub="alice", aud="http://a/mcp"))
    good = token("alice", "a b", aud="http://a/mcp", team="red")
    p = v.verify(good)
    assert (p.subject, p.client_id, p.scopes) == ("alice", "test-client", ["a", "b"])
    assert p.claims["team"] == "red" and p.claims["aud"] == "http://a/mcp"
    assert v(good) == p
    # scopes as an array (`scp`), client as `azp`
    p = v.verify(mint_jwt(SECRET, sub="x", azp="web", scp=["s1", "s2"], aud="http://a/mcp", iss=ISSUER))
    assert (p.client_id, p.scopes) == ("web", ["s1", "s2"])
    for bad, why in [
        (token("alice", aud="http://a/mcp", secret="wrong"), "the token is invalid"),
        (token("alice", aud="http://b/mcp"), "the token is not for this resource"),
        (token("alice", aud="http://a/mcp", iss="http://elsewhere"), "the token is invalid"),
        (token("alice", aud="http://a/mcp", exp=None), "the token is invalid"),
        (token("alice", aud="http://a/mcp", exp=int(time.time()) - 3600), "the token has expired"),
        (token("alice", aud="http://a/mcp", nbf=int(time.time()) + 3600), "the token is not valid yet"),
        ("not a jwt", "the token is invalid"),
    ]:
        with pytest.raises(ValueError, match=why):
            v.verify(bad)
    # Without an audience of its own it checks the one a protected server passes.
    loose = ms.JwtVerifier(SECRET)
    assert loose.audience is None
    assert loose.verify(token("alice", aud="http://a/mcp"), audience="http://a/mcp").subject == "alice"
    with pytest.raises(ValueError, match="not for this resource"):
        loose.verify(token("alice", aud="http://b/mcp"), audience="http://a/mcp")
    with pytest.raises(ValueError):
        ms.JwtVerifier(SECRET, algorithm="RS256")  # RS256 needs a public key
    with pytest.raises(ValueError):
        ms.JwtVerifier(SECRET, algorithm="XX999")
    with pytest.raises(ValueError):
        Server("x", auth=loose)  # no authorization server


def test_the_everything_server_with_a_jwt_secret():
    """tests/everything_server.py --http PORT --jwt-secret S: whoami per user, admin_echo
    only with mcp:admin, a token for another port refused."""

    async def main():
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        iss = f"http://127.0.0.1:{port + 1}"
        secret = "everything-secret"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(EVERYTHING), "--http", str(port), "--jwt-secret", secret,
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            assert line.startswith(b"listening"), line
            alice = mint_jwt(secret, sub="alice", client_id="cli", scope="mcp:admin", aud=url, iss=iss)
            bob = mint_jwt(secret, sub="bob", client_id="cli", scope="mcp:read", aud=url, iss=iss)
            for era in ("legacy", "modern"):
                for tok, who in [(alice, {"subject": "alice", "client_id": "cli", "scopes": ["mcp:admin"]}),
                                 (bob, {"subject": "bob", "client_id": "cli", "scopes": ["mcp:read"]})]:
                    async with Client.connect_http(url, era=era, headers=bearer(tok)) as c:
                        assert json.loads((await c.call_tool("whoami"))["content"][0]["text"]) == who
                async with Client.connect_http(url, era=era, headers=bearer(alice)) as c:
                    assert (await c.call_tool("admin_echo", {"text": "yo"}))["content"][0]["text"] == "yo"
                    assert (await c.call_tool("long_job", {"ms": 10}))["content"][0]["text"] == "done after 10 ms"
            status, headers, _ = await post_modern(
                url, bob, "tools/call", {"name": "admin_echo", "arguments": {"text": "x"}}, name="admin_echo"
            )
            assert status == 403 and challenge(headers)["error"] == "insufficient_scope"
            wrong_iss = mint_jwt(secret, sub="eve", scope="mcp:admin", aud=url, iss="http://127.0.0.1:1")
            status, _, _ = await post_modern(url, wrong_iss, "tools/list", {})
            assert status == 401
            status, _, _ = await post_modern(url, None, "tools/list", {})
            assert status == 401
        finally:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 10)

    run(main())


def test_a_verifier_that_never_answers_refuses_the_token(monkeypatch):
    """Nothing hangs forever: an async verifier past VERIFY_TIMEOUT refuses the token (401)."""
    import mcp_sansio._endpoint as endpoint

    monkeypatch.setattr(endpoint, "VERIFY_TIMEOUT", 0.2)

    async def never(tok):
        await asyncio.Event().wait()

    async def main():
        async with await protected_server(auth=never).serve_http("127.0.0.1", 0) as handle:
            status, headers, _ = await post_modern(handle.url, "any", "tools/list", {})
            assert status == 401
            assert challenge(headers)["error_description"] == "the token could not be verified"

    run(main())
