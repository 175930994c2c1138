"""Middleware around every request: the server's chain (``Server.middleware``, async and
plain functions) and the client's (``Client.middleware``), over stdio, Streamable HTTP and in
process, both eras, and for task-backed calls."""

import asyncio
import json
import sys
import time

import pytest

from mcp_sansio import McpError
from mcp_sansio.aio import Client, Context, OutboundRequest, Server

from conftest import HERE

ERAS = ["legacy", "modern"]
INTERNAL_ERROR = -32603


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def make_server(log, **options):
    server = Server("mw", tasks=True, **options)

    @server.tool()
    def echo(text: str) -> str:
        log.append(("handler", text))
        return text

    @server.tool()
    def broken() -> str:
        raise RuntimeError("tool failed")

    @server.tool(task_support="optional")
    async def job(ctx: Context) -> str:
        try:
            await ctx.run_as_task()
            log.append(("task", ctx.task_id is not None))
        except McpError:
            log.append(("task", False))
        await asyncio.sleep(0.01)
        return "job done"

    @server.resource("test://r", name="r")
    def resource() -> str:
        return "resource text"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_order_first_registered_is_outermost_and_sees_the_request(era):
    log = []
    server = make_server(log)

    @server.use
    async def outer(ctx, call_next):
        log.append(("outer in", ctx.method, ctx.name, dict(ctx.arguments)))
        result = await call_next(ctx)
        log.append(("outer out", result["content"][0]["text"]))
        return result

    @server.use
    async def inner(ctx, call_next):
        log.append(("inner in", ctx.era, ctx.protocol_version is not None, isinstance(ctx, Context)))
        result = await call_next(ctx)
        log.append(("inner out",))
        return result

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            return await c.call_tool("echo", {"text": "hi"})

    r = run(main())
    assert r.content[0].text == "hi"
    assert log == [
        ("outer in", "tools/call", "echo", {"text": "hi"}),
        ("inner in", era, True, True),
        ("handler", "hi"),
        ("inner out",),
        ("outer out", "hi"),
    ]


def test_the_handler_gets_the_same_context_and_the_arguments_a_middleware_changed():
    server = Server("same")
    seen = {}

    @server.tool()
    def shout(text: str, ctx: Context) -> str:
        seen["ctx"] = ctx
        return text.upper()

    @server.use
    async def rewrite(ctx, call_next):
        seen["mw ctx"] = ctx
        ctx.arguments["text"] = ctx.arguments["text"] + "!"
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server) as c:
            return await c.call_tool("shout", {"text": "hey"})

    assert run(main()).content[0].text == "HEY!"
    assert seen["ctx"] is seen["mw ctx"]


@pytest.mark.parametrize("era", ERAS)
def test_a_middleware_answers_itself_with_a_result_or_an_error(era):
    log = []
    server = make_server(log)

    @server.use
    async def gate(ctx, call_next):
        if ctx.arguments.get("text") == "cached":
            return "from the cache"  # shaped like a handler's return value
        if ctx.arguments.get("text") == "forbidden":
            raise McpError(-32001, "not for you", {"why": "policy"})
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            cached = await c.call_tool("echo", {"text": "cached"})
            with pytest.raises(McpError) as refused:
                await c.call_tool("echo", {"text": "forbidden"})
            plain = await c.call_tool("echo", {"text": "plain"})
            return cached, refused.value, plain

    cached, refused, plain = run(main())
    assert cached.content[0].text == "from the cache"
    assert refused.code == -32001 and refused.message == "not for you"
    assert plain.content[0].text == "plain"
    assert log == [("handler", "plain")]  # the handler ran only when called


def test_a_middleware_sees_the_outcome_and_the_duration():
    log = []
    server = make_server(log)
    outcomes = []

    @server.use
    async def timing(ctx, call_next):
        started = time.monotonic()
        try:
            result = await call_next(ctx)
        except McpError as e:
            outcomes.append((ctx.name, "error", e.code))
            raise
        outcomes.append((ctx.name, "isError" if result.get("isError") else "ok", time.monotonic() - started >= 0))
        return result

    async def main():
        async with Client.connect_in_process(server) as c:
            await c.call_tool("echo", {"text": "x"})
            r = await c.call_tool("broken", {})
            assert r.is_error and r.content[0].text == "tool failed"
            with pytest.raises(McpError):
                await c.call_tool("no-such-tool", {})

    run(main())
    # The catalog refuses an unknown tool; the middleware sees that refusal as the outcome.
    assert outcomes == [("echo", "ok", True), ("broken", "isError", True), ("no-such-tool", "error", -32602)]


@pytest.mark.parametrize("era", ERAS)
def test_a_middleware_that_raises_answers_minus_32603_and_the_server_goes_on(era):
    log = []
    server = make_server(log)
    calls = []

    @server.use
    async def flaky(ctx, call_next):
        calls.append(ctx.arguments.get("text"))
        if ctx.arguments.get("text") == "boom":
            raise ValueError("middleware bug")
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            with pytest.raises(McpError) as failed:
                await c.call_tool("echo", {"text": "boom"})
            after = await c.call_tool("echo", {"text": "after"})
            return failed.value, after

    failed, after = run(main())
    assert failed.code == INTERNAL_ERROR
    assert after.content[0].text == "after"
    assert calls == ["boom", "after"]


def test_plain_function_middleware_runs_in_a_thread_with_a_blocking_call_next():
    import threading

    log = []
    server = make_server(log)
    threads = []

    def audit(ctx, call_next):
        threads.append(threading.current_thread().name)
        result = call_next(ctx)
        log.append(("audit", ctx.name, result["content"][0]["text"]))
        return result

    server.use(audit)

    async def main():
        loop_thread = threading.current_thread().name
        async with Client.connect_in_process(server) as c:
            r = await c.call_tool("echo", {"text": "sync"})
        return loop_thread, r

    loop_thread, r = run(main())
    assert r.content[0].text == "sync"
    assert log == [("handler", "sync"), ("audit", "echo", "sync")]
    assert threads and threads[0] != loop_thread


def test_resources_prompts_and_task_backed_calls_go_through_the_chain():
    log = []
    server = make_server(log)
    seen = []

    @server.use
    async def record(ctx, call_next):
        result = await call_next(ctx)
        seen.append((ctx.method, ctx.name, ctx.task_id is not None if ctx.method == "tools/call" else None))
        return result

    async def main():
        async with Client.connect_in_process(server, era="2025-11-25") as c:
            r = await c.read_resource("test://r")
            p = await c.get_prompt("greet", {"name": "Ada"})
            j = await c.call_tool("job", {}, as_task=True)
            return r, p, j

    r, p, j = run(main())
    assert r.contents[0].text == "resource text"
    assert p.messages[0].content.text == "Hello Ada"
    assert j.content[0].text == "job done"
    assert ("task", True) in log
    # The task-backed call's middleware saw the task's final result, after run_as_task.
    assert seen == [("resources/read", "test://r", None), ("prompts/get", "greet", None), ("tools/call", "job", True)]


@pytest.mark.parametrize("era", ERAS)
def test_over_http_a_middleware_reads_headers_and_meta(era):
    log = []
    server = make_server(log)

    @server.use
    async def needs_header(ctx, call_next):
        if ctx.headers is None or ctx.headers.get("x-allow") != "yes":
            raise McpError(-32001, "x-allow: yes is required")
        log.append(("meta", (ctx.meta or {}).get("tenant")))
        return await call_next(ctx)

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        try:
            async with Client.connect_http(handle.url, era=era) as c:
                with pytest.raises(McpError) as refused:
                    await c.call_tool("echo", {"text": "no header"})
                ok = await c.request(
                    "tools/call",
                    {"name": "echo", "arguments": {"text": "with header"}, "_meta": {"tenant": "acme"}},
                    headers={"X-Allow": "yes"},
                )
            return refused.value, ok
        finally:
            await handle.aclose()

    refused, ok = run(main())
    assert refused.code == -32001
    assert ok["content"][0]["text"] == "with header"
    assert log == [("meta", "acme"), ("handler", "with header")]


# --- what the catalog answers itself goes through the chain too -------------------------------


def catalog_server(log):
    server = make_server(log)

    @server.tool(scopes=["admin"])
    def admin() -> str:
        return "admin only"

    @server.resource("test://items/{id}", name="item")
    def item(id: str) -> str:
        return f"item {id}"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_the_lists_go_through_the_chain_and_a_rate_limit_can_refuse_them(era):
    log = []
    server = catalog_server(log)
    seen = []
    budget = {"tools/list": 1}

    @server.use
    async def rate_limit(ctx, call_next):
        seen.append((ctx.method, ctx.name, dict(ctx.arguments), ctx.era))
        left = budget.get(ctx.method)
        if left is not None:
            if left <= 0:
                raise McpError(-32001, "rate limited: try again later")
            budget[ctx.method] = left - 1
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            tools = await c.list_tools()
            with pytest.raises(McpError) as limited:
                await c.list_tools()
            resources = await c.list_resources()
            templates = await c.list_resource_templates()
            prompts = await c.list_prompts()
            return tools, limited.value, resources, templates, prompts

    tools, limited, resources, templates, prompts = run(main())
    # The first tools/list is the catalog's answer, through the middleware.
    assert {t.name for t in tools.tools} == {"echo", "broken", "job", "admin"}
    assert limited.code == -32001 and limited.message == "rate limited: try again later"
    assert [r.uri for r in resources.resources] == ["test://r"]
    assert [t.uri_template for t in templates.resource_templates] == ["test://items/{id}"]
    assert [p.name for p in prompts.prompts] == ["greet"]
    assert seen == [
        ("tools/list", None, {}, era),
        ("tools/list", None, {}, era),
        ("resources/list", None, {}, era),
        ("resources/templates/list", None, {}, era),
        ("prompts/list", None, {}, era),
    ]
    assert log == []


@pytest.mark.parametrize("era", ERAS)
def test_the_calls_the_catalog_refuses_are_seen_with_their_outcome(era):
    log = []
    server = catalog_server(log)
    seen = []

    @server.use
    async def audit(ctx, call_next):
        try:
            result = await call_next(ctx)
        except McpError as e:
            seen.append((ctx.method, ctx.name, dict(ctx.arguments), "error", e.code))
            raise
        seen.append((ctx.method, ctx.name, dict(ctx.arguments), "isError" if result.get("isError") else "ok", None))
        return result

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            with pytest.raises(McpError) as unknown:
                await c.call_tool("no-such-tool", {"x": 1})
            invalid = await c.call_tool("echo", {"text": 5})
            with pytest.raises(McpError) as scoped:
                await c.call_tool("admin", {})
            with pytest.raises(McpError) as no_resource:
                await c.read_resource("test://nothing")
            with pytest.raises(McpError) as no_prompt:
                await c.get_prompt("nope", {})
            ok = await c.call_tool("echo", {"text": "fine"})
            return unknown.value, invalid, scoped.value, no_resource.value, no_prompt.value, ok

    unknown, invalid, scoped, no_resource, no_prompt, ok = run(main())
    assert unknown.code == -32602
    assert invalid.is_error  # arguments failing the schema: an isError result
    assert scoped.code == -32003
    assert ok.content[0].text == "fine"
    assert seen == [
        ("tools/call", "no-such-tool", {"x": 1}, "error", -32602),
        ("tools/call", "echo", {"text": 5}, "isError", None),
        ("tools/call", "admin", {}, "error", -32003),
        ("resources/read", "test://nothing", {}, "error", no_resource.code),
        ("prompts/get", "nope", {}, "error", no_prompt.code),
        ("tools/call", "echo", {"text": "fine"}, "ok", None),
    ]
    assert log == [("handler", "fine")]  # the handler ran only for the valid call


@pytest.mark.parametrize("era", ERAS)
def test_a_middleware_answers_a_request_the_catalog_refused(era):
    server = catalog_server([])

    @server.use
    async def renamed(ctx, call_next):
        if ctx.method == "tools/call" and ctx.name == "old-echo":
            return f"old-echo says {ctx.arguments.get('text')}"  # shaped as a tool's return value
        if ctx.method == "prompts/list":
            return {"prompts": []}
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server, era=era) as c:
            return await c.call_tool("old-echo", {"text": "hi"}), await c.list_prompts()

    old, prompts = run(main())
    assert not old.is_error and old.content[0].text == "old-echo says hi"
    assert prompts.prompts == []


def test_a_middleware_added_while_serving_sees_the_next_lists_and_one_removed_stops():
    server = catalog_server([])
    seen = []

    async def record(ctx, call_next):
        seen.append(ctx.method)
        return await call_next(ctx)

    async def main():
        async with Client.connect_in_process(server) as c:
            before = await c.list_tools()
            server.use(record)
            during = await c.list_tools()
            server.middleware.remove(record)
            after = await c.list_tools()
            return before, during, after

    before, during, after = run(main())
    assert len(before.tools) == len(during.tools) == len(after.tools) == 4
    assert seen == ["tools/list"]


@pytest.mark.parametrize("era", ERAS)
def test_over_http_a_per_caller_rate_limit_sees_lists_and_unknown_tools(era):
    server = catalog_server([])
    seen = []
    used = {}

    @server.use
    async def per_caller(ctx, call_next):
        who = ctx.headers.get("x-user") if ctx.headers is not None else None
        seen.append((who, ctx.method, ctx.name))
        used[who] = used.get(who, 0) + 1
        if used[who] > 2:
            raise McpError(-32001, f"rate limited: {who}")
        return await call_next(ctx)

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        try:
            async with Client.connect_http(handle.url, era=era) as c:
                a1 = await c.request("tools/list", {}, headers={"X-User": "alice"})
                with pytest.raises(McpError) as unknown:
                    await c.request("tools/call", {"name": "nope", "arguments": {}}, headers={"X-User": "alice"})
                with pytest.raises(McpError) as limited:
                    await c.request("tools/list", {}, headers={"X-User": "alice"})
                b1 = await c.request("tools/list", {}, headers={"X-User": "bob"})
            return a1, unknown.value, limited.value, b1
        finally:
            await handle.aclose()

    a1, unknown, limited, b1 = run(main())
    assert len(a1["tools"]) == len(b1["tools"]) == 4
    assert unknown.code == -32602
    assert limited.code == -32001 and limited.message == "rate limited: alice"
    assert seen == [
        ("alice", "tools/list", None),
        ("alice", "tools/call", "nope"),
        ("alice", "tools/list", None),
        ("bob", "tools/list", None),
    ]


def test_a_catalog_answer_through_the_chain_is_measured_without_the_unknown_name():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from mcp_sansio import observe

    saved = observe._metrics
    reader = InMemoryMetricReader()
    observe.configure(meter_provider=MeterProvider(metric_readers=[reader]))
    try:
        server = catalog_server([])

        @server.use
        async def passthrough(ctx, call_next):
            return await call_next(ctx)

        async def main():
            async with Client.connect_in_process(server) as c:
                await c.list_tools()
                with pytest.raises(McpError):
                    await c.call_tool("made-up-name", {})

        run(main())
    finally:
        observe._metrics = saved
    points = set()
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == "mcp.server.operation.duration":
                    points |= {frozenset(p.attributes.items()) for p in m.data.data_points}
    assert points == {
        frozenset({"mcp.method.name": "tools/list", "outcome": "ok"}.items()),
        frozenset({"mcp.method.name": "tools/call", "outcome": "error", "error.type": "-32602"}.items()),
    }


STDIO_SERVER = """
import asyncio, sys
sys.path.insert(0, {here!r})
from mcp_sansio import McpError
from mcp_sansio.aio import Server

server = Server("mw-stdio")

@server.tool()
def echo(text: str) -> str:
    return text

lists = []

@server.use
async def lists_and_refusals(ctx, call_next):
    if ctx.method == "tools/list":
        lists.append(1)
        if len(lists) > 1:
            raise McpError(-32001, "one tools/list per connection")
        return await call_next(ctx)
    try:
        return await call_next(ctx)
    except McpError as e:
        raise McpError(e.code, "seen: " + e.message)

@server.use
async def deny(ctx, call_next):
    if ctx.method != "tools/call" or ctx.name != "echo":
        return await call_next(ctx)
    if ctx.arguments.get("text") == "deny":
        raise McpError(-32001, "denied by middleware")
    if ctx.arguments.get("text") == "crash":
        raise RuntimeError("middleware crashed")
    result = await call_next(ctx)
    result["content"][0]["text"] += " (seen)"
    return result

asyncio.run(server.serve_stdio())
"""


@pytest.mark.parametrize("era", ERAS)
def test_over_stdio(tmp_path, era):
    script = tmp_path / "mw_server.py"
    script.write_text(STDIO_SERVER.format(here=str(HERE)))

    async def main():
        async with Client.connect_stdio(sys.executable, [str(script)], era=era) as c:
            ok = await c.call_tool("echo", {"text": "hello"})
            with pytest.raises(McpError) as denied:
                await c.call_tool("echo", {"text": "deny"})
            with pytest.raises(McpError) as crashed:
                await c.call_tool("echo", {"text": "crash"})
            again = await c.call_tool("echo", {"text": "again"})
            tools = await c.list_tools()
            with pytest.raises(McpError) as second_list:
                await c.list_tools()
            with pytest.raises(McpError) as unknown:
                await c.call_tool("nope", {})
            return ok, denied.value, crashed.value, again, tools, second_list.value, unknown.value

    ok, denied, crashed, again, tools, second_list, unknown = run(main())
    assert ok.content[0].text == "hello (seen)"
    assert denied.code == -32001 and denied.message == "seen: denied by middleware"
    assert [t.name for t in tools.tools] == ["echo"]
    assert second_list.code == -32001 and second_list.message == "one tools/list per connection"
    # The catalog's refusal of an unknown tool, seen (and reworded) by the middleware
    assert unknown.code == -32602 and unknown.message.startswith("seen: ")
    assert crashed.code == INTERNAL_ERROR
    assert again.content[0].text == "again (seen)"


def test_no_middleware_calls_the_handler_directly():
    server = Server("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    assert server.middleware == []

    async def main():
        async with Client.connect_in_process(server) as c:
            return await c.call_tool("echo", {"text": "x"})

    assert run(main()).content[0].text == "x"


# --- the client's chain ---------------------------------------------------------------------


def meta_server():
    server = Server("meta")
    attempts = {"n": 0}

    @server.tool()
    def meta(ctx: Context) -> dict:
        return {"meta": dict(ctx.meta or {})}

    @server.tool()
    def flaky() -> str:
        attempts["n"] += 1
        if attempts["n"] < 3:
            raise McpError(-32001, f"busy ({attempts['n']})")
        return f"ok after {attempts['n']}"

    return server, attempts


@pytest.mark.parametrize("era", ERAS)
def test_client_middleware_adds_meta_logs_and_retries(era):
    server, attempts = meta_server()
    log = []

    async def add_tenant(request: OutboundRequest, call_next):
        request.meta["tenant"] = "acme"
        return await call_next(request)

    async def retry(request, call_next):
        for _ in range(5):
            try:
                return await call_next(request)
            except McpError as e:
                log.append(("retry", request.method, request.params.get("name"), request.attempt, e.message))
        raise AssertionError("gave up")

    def logger(request, call_next):  # a plain function: runs in a worker thread
        result = call_next(request)
        log.append(("sent", request.method, request.params.get("name")))
        return result

    async def main():
        async with Client.connect_in_process(server, era=era, middleware=[logger, add_tenant, retry]) as c:
            m = await c.call_tool("meta", {})
            f = await c.call_tool("flaky", {})
            own = await c.request("tools/call", {"name": "meta", "arguments": {}, "_meta": {"tenant": "mine"}})
            return m, f, own

    m, f, own = run(main())
    assert m.structured_content["meta"]["tenant"] == "acme"
    assert f.content[0].text == "ok after 3"
    assert attempts["n"] == 3
    # The request's own _meta wins over what a middleware adds.
    assert own["structuredContent"]["meta"]["tenant"] == "mine"
    assert log == [
        ("sent", "tools/call", "meta"),
        ("retry", "tools/call", "flaky", 1, "busy (1)"),
        ("retry", "tools/call", "flaky", 2, "busy (2)"),
        ("sent", "tools/call", "flaky"),
        ("sent", "tools/call", "meta"),
    ]


def test_client_middleware_answers_without_sending():
    server, _ = meta_server()

    async def offline(request, call_next):
        if request.method == "tools/call" and request.params.get("name") == "meta":
            return {"content": [{"type": "text", "text": "canned"}]}
        return await call_next(request)

    async def main():
        async with Client.connect_in_process(server, middleware=[offline]) as c:
            return await c.call_tool("meta", {}), await c.list_tools()

    canned, tools = run(main())
    assert canned.content[0].text == "canned"
    assert {t.name for t in tools.tools} == {"meta", "flaky"}


def test_sync_client_takes_middleware():
    from mcp_sansio import sync

    server, _ = meta_server()

    async def add(request, call_next):
        request.meta["via"] = "sync"
        return await call_next(request)

    with sync.Client.connect_in_process(server, middleware=[add]) as c:
        r = c.call_tool("meta", {})
    assert json.loads(r.content[0].text)["meta"]["via"] == "sync"


def test_middleware_must_be_callable():
    with pytest.raises(TypeError):
        Server("x").use("not a function")




@pytest.mark.parametrize("era", ERAS)
def test_in_the_asgi_app_with_a_trace(era):
    """The ASGI endpoint (served by uvicorn) runs the same chain, and the request's SERVER
    span (current while the middleware runs) continues the client's trace."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    from conftest import uvicorn_serving
    from mcp_sansio import observe

    provider = TracerProvider()
    saved = (observe._tracer_provider, observe._tracer, observe.TRACING)
    observe.configure(tracer_provider=provider, tracing=True)
    log = []
    server = make_server(log)

    @server.use
    async def traced(ctx, call_next):
        span = trace.get_current_span()
        log.append(("span", span.name, format(span.get_span_context().trace_id, "032x")))
        return await call_next(ctx)

    async def main():
        async with uvicorn_serving(server.asgi_app(path="/mcp")) as base:
            async with Client.connect_http(base + "/mcp", era=era) as c:
                with provider.get_tracer("agent").start_as_current_span("turn") as root:
                    r = await c.call_tool("echo", {"text": "asgi"})
        return root, r

    try:
        root, r = run(main())
    finally:
        observe._tracer_provider, observe._tracer, observe.TRACING = saved
    assert r.content[0].text == "asgi"
    assert log == [("span", "tools/call echo", format(root.get_span_context().trace_id, "032x")), ("handler", "asgi")]


@pytest.mark.parametrize("era", ERAS)
def test_a_middleware_sees_the_callers_principal_and_limits_it(era):
    """A protected HTTP server: the middleware reads who calls (the verified token's
    principal) and refuses a caller past its budget, per principal."""
    from identity_kit import bearer, protected_server, token

    server = protected_server()
    seen = []
    budget = {"alice": 2, "bob": 1}

    @server.use
    async def rate_limit(ctx, call_next):
        who = ctx.principal.subject
        seen.append((who, ctx.principal.client_id, ctx.name))
        if budget.get(who, 0) <= 0:
            raise McpError(-32029, f"rate limit for {who}")
        budget[who] -= 1
        return await call_next(ctx)

    async def main():
        handle = await server.serve_http("127.0.0.1", 0)
        outcomes = []
        try:
            for subject in ("alice", "bob"):
                tok = token(subject, "mcp:read", client_id=f"cli-{subject}", aud=handle.url)
                async with Client.connect_http(handle.url, era=era, headers=bearer(tok)) as c:
                    for _ in range(2):
                        try:
                            r = await c.call_tool("whoami", {})
                            outcomes.append((subject, json.loads(r.content[0].text)["subject"]))
                        except McpError as e:
                            outcomes.append((subject, e.code))
        finally:
            await handle.aclose()
        return outcomes

    outcomes = run(main())
    assert outcomes == [("alice", "alice"), ("alice", "alice"), ("bob", "bob"), ("bob", -32029)]
    assert seen == [("alice", "cli-alice", "whoami")] * 2 + [("bob", "cli-bob", "whoami")] * 2
