"""The clients' typed results (:mod:`mcp_sansio.types`): every call's result reads by
attribute under the official SDK's names (``result.content[0].text``,
``result.structured_content``, ``result.is_error``) and the wire's (``structuredContent``,
``isError``), gives plain dicts with ``model_dump()``, and is still the dict the server
sent (``result["content"]``, ``json.dumps``, ``==``), in both eras, in process and over
HTTP, asyncio and sync."""

import asyncio
import json
import pickle

import pytest

import mcp_sansio as ms
from mcp_sansio import sync, types
from mcp_sansio.aio import Client, Context, Server

ERAS = ["legacy", "modern"]


def run(coro_fn):
    asyncio.run(asyncio.wait_for(coro_fn(), 60))


def make_server():
    server = Server("typed", "2.0", title="Typed results", instructions="be typed", tasks=True)

    @server.tool(description="Adds", annotations={"readOnlyHint": True})
    def add(a: float, b: float) -> dict:
        return {"sum": a + b, "snake_key": True}

    @server.tool()
    def text(word: str) -> str:
        return word

    @server.tool()
    def fails() -> str:
        raise ValueError("no luck")

    @server.tool()
    def mixed() -> dict:
        return {
            "content": [
                {"type": "image", "data": "AAE=", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "mem://a", "name": "a"},
                {"type": "resource", "resource": {"uri": "mem://b", "blob": "AAE=", "mimeType": "application/octet-stream"}},
            ]
        }

    @server.tool(task_support="optional")
    async def slow(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.02)
        return "done as a task"

    @server.resource("mem://hello", mime_type="text/plain", description="a greeting")
    def hello() -> str:
        return "hello"

    @server.resource("mem://items/{n}")
    def item(n: str) -> bytes:
        return bytes([int(n)])

    @server.prompt(description="Greets")
    def greet(who: str, mood: str = "happy") -> str:
        return f"Greet {who}, {mood}"

    @server.completion()
    def complete(ref, argument, context):
        return ["apple", "apricot"]

    return server


async def check_results(c, era):
    # call_tool
    r = await c.call_tool("add", {"a": 2, "b": 3})
    assert isinstance(r, types.CallToolResult) and isinstance(r, dict)
    assert isinstance(r.content[0], types.TextContent)
    assert json.loads(r.content[0].text) == {"sum": 5, "snake_key": True}
    assert r.content[0].type == "text" and r.content[0].annotations is None
    assert r.structured_content == r.structuredContent == {"sum": 5, "snake_key": True}
    assert type(r.structured_content) is dict  # free-form JSON stays a plain dict
    assert r.is_error is False and r.isError is False  # absent on the wire: the default
    assert r["content"][0]["text"] == r.content[0].text and r.get("isError") is None
    assert r == json.loads(json.dumps(r))  # a dict: serialises and compares as one
    with pytest.raises(AttributeError, match="no field 'nope'"):
        r.nope

    r = await c.call_tool("text", {"word": "hi"})
    assert r.content[0].text == "hi" and r.structured_content is None
    if era == "legacy":
        assert r.meta is None and r.result_type == "complete"  # absent: the defaults
    else:
        assert r.meta["io.modelcontextprotocol/serverInfo"]["name"] == "typed" and r.result_type == "complete"

    r = await c.call_tool("fails")
    assert r.is_error is True and r.isError is True and r.content[0].text == "no luck"

    r = await c.call_tool("mixed")
    image, link, embedded = r.content
    assert isinstance(image, types.ImageContent) and image.mime_type == image.mimeType == "image/png" and image.data == "AAE="
    assert isinstance(link, types.ResourceLink) and link.uri == "mem://a" and link.name == "a" and link.description is None
    assert isinstance(embedded, types.EmbeddedResource)
    assert isinstance(embedded.resource, types.BlobResourceContents) and embedded.resource.blob == "AAE="

    # as a task: still one typed result
    r = await c.call_tool("slow", as_task=True)
    assert isinstance(r, types.CallToolResult) and r.content[0].text == "done as a task"

    # lists
    tools = await c.list_tools()
    assert isinstance(tools, types.ListToolsResult) and tools.next_cursor is None and tools.nextCursor is None
    add = next(t for t in tools.tools if t.name == "add")
    assert isinstance(add, types.Tool) and add.description == "Adds"
    assert add.input_schema == add.inputSchema and add.input_schema["type"] == "object"
    assert add.annotations.read_only_hint is True and add.annotations.readOnlyHint is True
    assert add.title is None and add.output_schema is None and add.execution is None

    resources = await c.list_resources()
    assert isinstance(resources, types.ListResourcesResult)
    [hello] = resources.resources
    assert isinstance(hello, types.Resource)
    assert (hello.uri, hello.name, hello.mime_type, hello.description) == ("mem://hello", "hello", "text/plain", "a greeting")

    templates = await c.list_resource_templates()
    assert isinstance(templates, types.ListResourceTemplatesResult)
    [tpl] = templates.resource_templates
    assert isinstance(tpl, types.ResourceTemplate) and tpl.uri_template == tpl.uriTemplate == "mem://items/{n}"

    read = await c.read_resource("mem://hello")
    assert isinstance(read, types.ReadResourceResult)
    assert isinstance(read.contents[0], types.TextResourceContents)
    assert (read.contents[0].text, read.contents[0].mime_type, read.contents[0].uri) == ("hello", "text/plain", "mem://hello")
    read = await c.read_resource("mem://items/7")
    assert isinstance(read.contents[0], types.BlobResourceContents) and read.contents[0].blob == "Bw=="

    prompts = await c.list_prompts()
    assert isinstance(prompts, types.ListPromptsResult)
    [greet] = prompts.prompts
    assert isinstance(greet, types.Prompt) and greet.description == "Greets"
    assert [(a.name, a.required) for a in greet.arguments] == [("who", True), ("mood", False)]
    assert isinstance(greet.arguments[0], types.PromptArgument)

    got = await c.get_prompt("greet", {"who": "Ada"})
    assert isinstance(got, types.GetPromptResult) and isinstance(got.messages[0], types.PromptMessage)
    assert got.messages[0].role == "user" and got.messages[0].content.text == "Greet Ada, happy"
    assert isinstance(got.messages[0].content, types.TextContent)

    done = await c.complete({"type": "ref/prompt", "name": "greet"}, {"name": "who", "value": "ap"})
    assert isinstance(done, types.CompleteResult) and isinstance(done.completion, types.Completion)
    assert done.completion.values == ["apple", "apricot"] and done["completion"]["values"] == ["apple", "apricot"]
    assert done.completion.has_more is False and done.completion.total is None

    # the server, as the connection found it
    info = c.server_info
    assert isinstance(info, types.Implementation) and (info.name, info.version, info.title) == ("typed", "2.0", "Typed results")
    assert info["name"] == "typed"
    caps = c.server_capabilities
    assert isinstance(caps, types.ServerCapabilities) and caps.tools is not None and caps.prompts is not None
    init = c.initialize_result
    assert isinstance(init, types.InitializeResult)
    assert init.protocol_version == c.protocol_version == init.protocolVersion
    assert init.server_info.name == "typed" and init.capabilities.tools is not None
    if era == "legacy":
        assert init.instructions == "be typed"

    # any request: the typed result of a method we know, else a Result
    assert isinstance(await c.request("tools/list"), types.ListToolsResult)


@pytest.mark.parametrize("era", ERAS)
def test_typed_results_in_process(era):
    async def main():
        async with Client.connect_in_process(make_server(), era=era, tasks=True) as c:
            await check_results(c, era)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_typed_results_over_http(era):
    async def main():
        async with await make_server().serve_http("127.0.0.1", 0) as handle:
            async with Client.connect_http(handle.url, era=era, tasks=True) as c:
                await check_results(c, era)

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_the_sync_client_returns_the_same_types(era):
    async def serve(ready, stop):
        async with await make_server().serve_http("127.0.0.1", 0) as handle:
            ready.set_result(handle.url)
            await stop.wait()

    import threading

    loop = asyncio.new_event_loop()
    ready = loop.create_future()
    stop = asyncio.Event()
    thread = threading.Thread(target=loop.run_until_complete, args=(serve(ready, stop),), daemon=True)
    thread.start()
    try:
        url = asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(ready), 20), loop).result(30)
        with sync.Client.connect_http(url, era=era) as c:
            r = c.call_tool("text", {"word": "hi"}, timeout=30)
            assert isinstance(r, types.CallToolResult) and r.content[0].text == "hi" and r.is_error is False
            assert isinstance(c.list_tools(timeout=30).tools[0], types.Tool)
            assert c.read_resource("mem://hello", timeout=30).contents[0].text == "hello"
            assert c.get_prompt("greet", {"who": "Bo"}, timeout=30).messages[0].content.text == "Greet Bo, happy"
            assert c.server_info.name == "typed" and isinstance(c.server_capabilities, types.ServerCapabilities)
            assert c.initialize_result.protocol_version == c.protocol_version
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        assert not thread.is_alive()


def test_model_dump_gives_plain_dicts():
    r = types.CallToolResult(
        {
            "content": [{"type": "text", "text": "x", "annotations": {"audience": ["user"]}}],
            "structuredContent": {"camelKey": {"inner_key": None}},
            "isError": False,
            "_meta": {"io.example/x": 1},
        }
    )

    def plain(v):
        if isinstance(v, dict):
            assert type(v) is dict, type(v)
            for x in v.values():
                plain(x)
        elif isinstance(v, list):
            assert type(v) is list
            for x in v:
                plain(x)

    wire = r.model_dump()
    plain(wire)
    assert wire == r and wire["structuredContent"] == {"camelKey": {"inner_key": None}}
    assert r.model_dump(mode="json") == wire
    snake = r.model_dump(by_alias=False)
    plain(snake)
    # the protocol's fields take the official SDK's names; free-form JSON keeps its keys
    assert snake == {
        "content": [{"type": "text", "text": "x", "annotations": {"audience": ["user"]}}],
        "structured_content": {"camelKey": {"inner_key": None}},
        "is_error": False,
        "meta": {"io.example/x": 1},
    }
    assert r.model_dump(exclude_none=True)["structuredContent"] == {"camelKey": {}}
    assert json.loads(r.model_dump_json()) == wire
    with pytest.raises(ValueError):
        r.model_dump(mode="yaml")
    # copies, not views
    wire["content"][0]["text"] = "changed"
    assert r.content[0].text == "x"
    # pickles as itself
    again = pickle.loads(pickle.dumps(r))
    assert type(again) is types.CallToolResult and again == r and again.content[0].text == "x"
    assert "structured_content" in dir(r) and "is_error" in dir(r)
    # attributes write the wire's field
    r.is_error = True
    assert r["isError"] is True
    assert repr(types.TextContent({"type": "text", "text": "y"})) == "TextContent({'type': 'text', 'text': 'y'})"


def test_result_for_types_the_known_methods():
    task = types.result_for("tasks/get", {"taskId": "t1", "status": "working", "createdAt": "now", "lastUpdatedAt": "now"})
    assert isinstance(task, types.GetTaskResult) and task.task_id == "t1" and task.status_message is None
    listed = types.result_for("tasks/list", {"tasks": [{"taskId": "t2", "status": "completed"}]})
    assert isinstance(listed.tasks[0], types.Task) and listed.tasks[0].status == "completed"
    created = types.result_for("tools/call", {"content": []})
    assert isinstance(created, types.CallToolResult)
    other = types.result_for("x/unknown", {"anything": {"nested": 1}})
    assert type(other) is types.Result and other.anything == {"nested": 1}
    assert isinstance(types.result_for("ping", {}), types.EmptyResult)
    # a peer's odd shapes are left as they came, never an exception
    odd = types.CallToolResult({"content": ["not an object", 3]})
    assert odd.content == ["not an object", 3]


@pytest.mark.parametrize("era", ERAS)
def test_a_result_that_cannot_be_json_is_an_internal_error_not_a_hang(era):
    """A handler's result the core cannot encode (an int past 64 bits) answers -32603
    ``invalid result``: once as a plain answer, once as a task's outcome. The request was
    already taken from the pending ones when the encoding failed, so the dispatcher's
    ``respond_error`` was a no-op and the client waited forever."""
    server = Server("unencodable", tasks=True)

    @server.tool()
    def huge() -> dict:
        return {"n": 2**128}

    @server.tool()
    async def huge_task(ctx: Context) -> dict:
        await ctx.run_as_task(poll_interval=0.02)
        return {"n": -(2**80)}

    @server.tool()
    def fine() -> str:
        return "still answering"

    async def main():
        async with Client.connect_in_process(server, era=era, tasks=True) as c:
            with pytest.raises(ms.McpError) as e:
                await asyncio.wait_for(c.call_tool("huge", {}), 10)
            assert e.value.code == -32603 and "invalid result" in str(e.value), e.value
            with pytest.raises(ms.McpError) as e:
                await asyncio.wait_for(c.call_tool("huge_task", {}, as_task=True), 10)
            assert e.value.code == -32603 and "invalid result" in str(e.value), e.value
            assert (await c.call_tool("fine", {})).content[0].text == "still answering"

    run(main)
