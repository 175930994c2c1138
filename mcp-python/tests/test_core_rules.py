"""The protocol rules the Python side takes from the Rust core instead of repeating them:
error codes, a version's era, the subscription covers rule, the elicitation form
restriction, and the catalog as the one registry of entries and their handlers."""

import asyncio

import pytest

import mcp_sansio as ms
from mcp_sansio import _core
from mcp_sansio import errors

T0 = 1000.0


def test_error_codes_are_the_spec_values():
    assert (errors.PARSE_ERROR, errors.INVALID_REQUEST, errors.METHOD_NOT_FOUND) == (-32700, -32600, -32601)
    assert (errors.INVALID_PARAMS, errors.INTERNAL_ERROR) == (-32602, -32603)
    assert errors.INSUFFICIENT_SCOPE == -32003
    assert (errors.HEADER_MISMATCH, errors.MISSING_REQUIRED_CLIENT_CAPABILITY) == (-32020, -32021)
    assert errors.UNSUPPORTED_PROTOCOL_VERSION == -32022


def test_protocol_era():
    assert [_core.protocol_era(v) for v in ms.PROTOCOL_VERSIONS] == ["legacy"] * 4 + ["modern"]
    with pytest.raises(ValueError, match="unknown protocol version"):
        _core.protocol_era("2030-01-01")


def test_subscription_covers():
    covers = _core.subscription_covers
    assert covers("file:///dir", "file:///dir")
    assert covers("file:///dir", "file:///dir/a.txt")
    assert covers("file:///dir/", "file:///dir/a.txt")
    assert not covers("file:///dir", "file:///dirt")
    assert not covers("file:///dir/a.txt", "file:///dir")


def test_legacy_listen_emulation():
    """Client.listen on a legacy connection: the core's rules decide what is granted and which
    of the connection's notifications belong to the listener."""
    wanted = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": False,
              "resourceSubscriptions": ["file:///dir"]}
    caps = {"tools": {"listChanged": True}, "prompts": {}, "resources": {"listChanged": True}}
    assert _core.legacy_listen_granted(wanted, caps) == {"toolsListChanged": True}
    wants = _core.legacy_listen_wants
    assert wants(wanted, "notifications/tools/list_changed")
    assert wants(wanted, "notifications/prompts/list_changed")
    assert not wants(wanted, "notifications/resources/list_changed")
    assert wants(wanted, "notifications/resources/updated", {"uri": "file:///dir/a"})
    assert not wants(wanted, "notifications/resources/updated", {"uri": "file:///dirt"})
    assert not wants(wanted, "notifications/resources/updated")
    assert not wants(wanted, "notifications/message", {"level": "info"})


def test_elicitation_form():
    form = _core.elicitation_form({
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"$ref": "#/$defs/Size"},
                       "nick": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "required": ["name"],
        "$defs": {"Size": {"type": "string", "enum": ["S", "M"]}},
    })
    assert form == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "string", "enum": ["S", "M"]},
                       "nick": {"type": "string"}},
        "required": ["name"],
    }
    with pytest.raises(TypeError, match="field `where`") as e:
        _core.elicitation_form({"type": "object", "properties": {"where": {"type": "object"}}})
    assert e.value.field == "where"
    with pytest.raises(TypeError) as e:
        _core.elicitation_form({"type": "string"})
    assert e.value.field is None


# --- the catalog: one registry ------------------------------------------------------------

TOOL = {"name": "add", "inputSchema": {"type": "object"}}


def test_catalog_registers_replaces_and_removes():
    cat = ms.Catalog()
    first, second = object(), object()
    cat.add_tool(TOOL, first, ["a", "b"])
    assert cat.handler("tool", "add") is first and cat.required_scopes("tool", "add") == ["a", "b"]
    # Refused entries raise at once and leave the catalog as it was.
    with pytest.raises(ValueError, match="inputSchema"):
        cat.add_tool({"name": "add", "inputSchema": {"type": "string"}}, second)
    with pytest.raises(ValueError, match="tool name"):
        cat.add_tool({"name": "bad name!", "inputSchema": {"type": "object"}}, second)
    assert cat.handler("tool", "add") is first and cat.required_scopes("tool", "add") == ["a", "b"]
    cat.add_tool(TOOL, second, "c")
    assert cat.handler("tool", "add") is second and cat.required_scopes("tool", "add") == ["c"]
    # The core says what is a template: a URI template with variables.
    assert cat.add_resource("test://items/{id}", {"name": "item"}, first) == "template"
    assert cat.add_resource("test://a", {"name": "a", "mimeType": "text/plain"}, second) == "resource"
    assert [t["uriTemplate"] for t in cat.resource_templates] == ["test://items/{id}"]
    assert cat.resources == [{"uri": "test://a", "name": "a", "mimeType": "text/plain"}]
    with pytest.raises(ValueError):
        cat.add_resource("test://{broken", {"name": "b"}, first)
    assert cat.remove_resource("test://items/{id}") and not cat.remove_resource("test://items/{id}")
    assert cat.remove_tool("add") and cat.tool("add") is None and cat.handler("tool", "add") is None
    assert cat.required_scopes("tool", "add") == []


def ask(client, server, now=T0):
    """Moves bytes both ways until nothing moves; returns the server's events."""
    events = []
    for _ in range(10):
        moved = False
        data = client.data_to_send()
        if data:
            server.receive_data(data, now)
            moved = True
        while (e := server.next_event()) is not None:
            events.append(e)
            moved = True
        data = server.data_to_send()
        if data:
            client.receive_data(data, now)
            moved = True
        while client.next_event() is not None:
            moved = True
        if not moved:
            return events
    return events


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_routed_request_carries_the_handler_of_the_snapshot_that_routed_it(era):
    """The handler travels with the catalog snapshot a session routes with: a tool removed
    from the catalog after the session got its configuration is still served by its own
    handler (no second table that could say "unknown"), and a new configuration routes to
    the new entries only."""
    cat = ms.Catalog()
    handler = object()
    completer = object()
    cat.add_tool(TOOL, handler)
    cat.add_resource("test://items/{id}", {"name": "item"}, handler)
    cat.add_prompt({"name": "greet"}, handler)
    cat.set_completion(completer)
    config = ms.ServerConfig("srv", "1.0", catalog=cat, tasks=True)
    assert config.capabilities["completions"] == {}
    assert config.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
    assert "io.modelcontextprotocol/tasks" in config.capabilities["extensions"]
    server = ms.ServerSession(config, now=T0)
    client = ms.ClientSession("cli", "1.0", era=era, now=T0)
    events = ask(client, server)
    assert client.era == era
    if era == "legacy":
        ready = [e for e in events if isinstance(e, ms.Ready)]
        assert ready and ready[0].era == "legacy" and server.era == "legacy"

    assert cat.remove_tool("add")
    client.call_tool("add", {})
    client.read_resource("test://items/7")
    client.get_prompt("greet")
    client.complete({"type": "ref/prompt", "name": "greet"}, {"name": "x", "value": ""})
    events = ask(client, server)
    calls = [e for e in events if isinstance(e, ms.ToolCall)]
    reads = [e for e in events if isinstance(e, ms.ResourceRead)]
    gets = [e for e in events if isinstance(e, ms.PromptGet)]
    completions = [e for e in events if isinstance(e, ms.CompletionRequest)]
    assert calls and calls[0].handler is handler, events
    assert reads and reads[0].handler is handler and reads[0].variables == {"id": "7"}, events
    assert gets and gets[0].handler is handler, events
    assert completions and completions[0].handler is completer, events

    # The next snapshot no longer has the tool: the core answers the call itself.
    server.set_catalog(ms.ServerConfig("srv", "1.0", catalog=cat))
    client.call_tool("add", {})
    assert not [e for e in ask(client, server) if isinstance(e, ms.ToolCall)]


def test_declares_list_changed():
    assert ms.ServerConfig("s", "1", list_changed=True, tools=[TOOL]).declares_list_changed("tools")
    assert not ms.ServerConfig("s", "1", tools=[TOOL]).declares_list_changed("tools")
    with pytest.raises(ValueError, match="unknown list"):
        ms.ServerConfig("s", "1").declares_list_changed("bananas")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_core_keeps_a_completion_within_the_limit(era):
    """A completion handler returns every value it has; the core sends at most 100 and
    says there are more (hasMore, total)."""
    from mcp_sansio.aio import Client, Server

    server = Server("c")

    @server.prompt()
    def greet(who: str) -> str:
        return who

    @server.completion()
    def complete(ref, argument, context):
        return [f"v{i}" for i in range(150)]

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            r = await c.complete({"type": "ref/prompt", "name": "greet"}, {"name": "who", "value": ""})
            assert len(r["completion"]["values"]) == 100, r
            assert r["completion"]["hasMore"] is True and r["completion"]["total"] == 150, r

    asyncio.run(asyncio.wait_for(main(), 30))


def test_a_server_whose_handlers_refer_to_it_is_collected():
    """The Rust objects holding handlers (Catalog, ServerConfig, ServerSession) report them to
    the garbage collector: a server whose handler refers back to it is collected."""
    import gc
    import weakref

    from mcp_sansio.aio import Server

    def make():
        server = Server("gc")

        @server.tool()
        def who() -> str:
            return server.name

        server.session = ms.ServerSession(server.config)  # the config's and a session's copies
        return weakref.ref(server)

    ref = make()
    gc.collect()
    assert ref() is None
