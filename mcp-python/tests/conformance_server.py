"""The conformance everything-server on mcp_sansio's asyncio driver: the fixtures of the
official conformance suite (``@modelcontextprotocol/conformance``), the same as the Rust
bindings' ``everything-server --conformance`` (mcp-tokio/examples/everything-server/), so
``scripts/conformance`` runs its server legs against this too.

    python conformance_server.py --http 127.0.0.1:PORT    # the library's HTTP server
    python conformance_server.py --asgi 127.0.0.1:PORT    # server.asgi_app() under uvicorn
    python conformance_server.py                          # stdio

Behind a load balancer (the flags go in any order, as the Rust everything-servers take them):
``--node NAME`` puts ``NAME.`` before every 2025-wire session id (sticky routing by
``deploy/nginx/mcp.conf``), ``--state-key HEX`` (64 hex digits) is the ``requestState`` key
the processes share; ``--store redis://HOST:PORT`` (with ``--lease MS``) shares tasks and
changes with the other processes (scale_args.py).

The server object is importable (``from conformance_server import server``). The catalog
lists by name, so the suite's probes of ``tools[0]`` (called with ``{}``) and
``resources[0]`` (read) hit ``confirm_delete`` and ``test://static-binary``, which serve
them (test_conformance_server.py checks it).
"""

import asyncio
import json
import re
import sys
from typing import Any, Dict, Optional

from mcp_sansio.aio import Context, Server
from mcp_sansio.errors import INTERNAL_ERROR, McpError

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

server = Server(
    "mcp-python-conformance",
    "1.0.0",
    instructions="The mcp_sansio conformance everything-server.",
    tasks=True,
    resource_subscriptions=True,
    list_changed=True,
)


# --- helpers -----------------------------------------------------------------------------

def text(value: str) -> Dict[str, Any]:
    return {"type": "text", "text": value}


def elicit(message: str, schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def sample(prompt: str, max_tokens: int) -> Dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": text(prompt)}], "maxTokens": max_tokens},
    }


LIST_ROOTS = {"method": "roots/list", "params": {}}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR_SCHEMA = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def sampled_text(answer: Any) -> str:
    """The first text of a sampling answer."""
    content = (answer or {}).get("content") if isinstance(answer, dict) else None
    first = content[0] if isinstance(content, list) and content else content
    return str(first.get("text", "")) if isinstance(first, dict) else ""


def accepted(answer: Any, field: str) -> Optional[str]:
    """A string field of an accepted elicitation, or ``None`` when not answered usably."""
    if not isinstance(answer, dict) or answer.get("action") != "accept":
        return None
    value = (answer.get("content") or {}).get(field)
    return value if isinstance(value, str) else None


def content_field(answer: Any, field: str) -> Any:
    if not isinstance(answer, dict):
        return None
    return (answer.get("content") or {}).get(field)


def summary(answer: Dict[str, Any]) -> str:
    content = json.dumps(answer.get("content"), separators=(",", ":"))
    return f"User response: action={answer.get('action', '?')}, content={content}"


async def try_task(ctx: Context) -> None:
    """Runs the rest of the call as a task when the client offered one (else answers
    plainly: run_as_task raises and the call goes on)."""
    try:
        await ctx.run_as_task()
    except McpError:
        pass


# --- content tools (both wires) ------------------------------------------------------------

@server.tool(description="Returns a simple text response")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@server.tool(description="Returns a 1x1 PNG image")
def test_image_content() -> Any:
    return [{"type": "image", "data": PNG, "mimeType": "image/png"}]


@server.tool(description="Returns a short WAV clip")
def test_audio_content() -> Any:
    return [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]


@server.tool(description="Returns an embedded text resource")
def test_embedded_resource() -> Any:
    return [{"type": "resource", "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }}]


@server.tool(description="Returns text, an image and an embedded resource")
def test_multiple_content_types() -> Any:
    return [
        text("Multiple content types test:"),
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "resource", "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        }},
    ]


@server.tool(description="Always fails with a tool error")
def test_error_handling() -> Any:
    return {"content": [text("This tool intentionally returns an error for testing")], "isError": True}


@server.tool(description="Reports progress 0, 50, 100 when asked to")
async def test_tool_with_progress(ctx: Context) -> str:
    for i, step in enumerate((0, 50, 100)):
        if i:
            await asyncio.sleep(0.05)
        ctx.report_progress(step, 100)
    return "Progress tool completed"


@server.tool(
    description="A tool whose inputSchema uses JSON Schema 2020-12 keywords",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    return f"received {json.dumps(arguments, separators=(',', ':'))}"


# --- tools that talk back to a 2025 client while they run ----------------------------------

@server.tool(description="Logs three info messages while it runs")
async def test_tool_with_logging(ctx: Context) -> str:
    ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    ctx.info("Tool execution completed")
    return "Logging tool completed"


@server.tool(description="Asks the client's model to answer `prompt`")
async def test_sampling(prompt: str, ctx: Context) -> str:
    answers = await ctx.ask_input({"sample": sample(prompt, 100)})
    return f"LLM response: {sampled_text(answers['sample'])}"


@server.tool(description="Asks the user for a username and an email address")
async def test_elicitation(message: str, ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    }, "required": ["username", "email"]}
    return summary(await ctx.elicit(message, schema))


@server.tool(description="Elicits a form whose fields have defaults (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    }}
    return summary(await ctx.elicit("Please review and update the form fields with defaults", schema))


@server.tool(description="Elicits every enum shape of SEP-1330")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"},
        ]}},
    }}
    return summary(await ctx.elicit("Please select options", schema))


# --- the 2026 diagnostic tools --------------------------------------------------------------

@server.tool(description="Needs the client's sampling capability")
async def test_missing_capability(ctx: Context) -> str:
    # The core refuses the ask (-32021, naming the capability) when this request's
    # capabilities lack sampling
    answers = await ctx.ask_input({"sample": sample("Say hello", 20)})
    return f"sampling available: {sampled_text(answers['sample'])}"


@server.tool(description="Answers at once, without asking the client anything")
def test_streaming_elicitation() -> str:
    return "Streaming elicitation tool completed without independent requests"


@server.tool(description="Logs only when the request asked for a log level")
def test_logging_tool(ctx: Context) -> str:
    ctx.info("test_logging_tool ran")
    return "Logging tool completed"


@server.tool(description="Tells the listening clients that the tool list changed")
def test_trigger_tool_change() -> str:
    server.notify_list_changed("tools")
    return "Tool list change notified"


@server.tool(description="Tells the listening clients that the prompt list changed")
def test_trigger_prompt_change() -> str:
    server.notify_list_changed("prompts")
    return "Prompt list change notified"


@server.tool(
    description="Echoes `region`, which clients mirror into the Mcp-Param-Region header",
    input_schema={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
)
def test_x_mcp_header(region: str = "<none>") -> str:
    return f"region={region}"


# --- the SEP-2322 input_required tools (2026; live requests on a 2025 session) -------------

@server.tool(description="Asks the user's name, then greets them")
async def test_input_required_result_elicitation(ctx: Context) -> str:
    while True:
        answers = await ctx.ask_input({"user_name": elicit("What is your name?", NAME_SCHEMA)})
        name = accepted(answers.get("user_name"), "name")
        if name is not None:
            return f"Hello, {name}!"


@server.tool(description="Asks the client's model for the capital of France")
async def test_input_required_result_sampling(ctx: Context) -> str:
    answers = await ctx.ask_input({"capital_question": sample("What is the capital of France?", 100)})
    return f"The model said: {sampled_text(answers['capital_question'])}"


@server.tool(description="Asks the client for its roots")
async def test_input_required_result_list_roots(ctx: Context) -> str:
    answers = await ctx.ask_input({"client_roots": LIST_ROOTS})
    roots = (answers.get("client_roots") or {}).get("roots") or []
    return f"Client exposed {len(roots)} root(s)."


@server.tool(description="Asks for a confirmation, keeping request state")
async def test_input_required_result_request_state(ctx: Context) -> str:
    answers = await ctx.ask_input({"confirm": elicit("Please confirm", CONFIRM_SCHEMA)})
    return f"state-ok: confirmed={json.dumps(content_field(answers['confirm'], 'ok'))}"


@server.tool(description="Asks for a name, a greeting and the roots at once")
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    answers = await ctx.ask_input({
        "user_name": elicit("What is your name?", NAME_SCHEMA),
        "greeting": sample("Generate a greeting", 50),
        "client_roots": LIST_ROOTS,
    })
    name = content_field(answers["user_name"], "name") or "someone"
    roots = len((answers.get("client_roots") or {}).get("roots") or [])
    return f"{sampled_text(answers['greeting'])} {name}; {roots} root(s)."


@server.tool(description="Asks a name, then a favourite colour")
async def test_input_required_result_multi_round(ctx: Context) -> str:
    step1 = await ctx.ask_input({"step1": elicit("Step 1: What is your name?", NAME_SCHEMA)})
    name = accepted(step1["step1"], "name") or ""
    step2 = await ctx.ask_input({"step2": elicit("Step 2: What is your favorite color?", COLOR_SCHEMA)})
    color = accepted(step2["step2"], "color") or ""
    return f"{name} likes {color}."


@server.tool(description="Asks for a confirmation; the request state is integrity-protected")
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    await ctx.ask_input({"confirm": elicit("Please confirm", CONFIRM_SCHEMA)})
    return "Confirmed with an intact request state"


@server.tool(description="Asks only for what this request's client can answer")
async def test_input_required_result_capabilities(ctx: Context) -> str:
    # Elicitation first; when the request's capabilities do not allow it, sampling
    try:
        await ctx.ask_input({"user_name": elicit("What is your name?", NAME_SCHEMA)})
        return "Answered by elicitation"
    except McpError:
        answers = await ctx.ask_input({"sample": sample("Say hello", 20)})
        return f"Answered by sampling: {sampled_text(answers['sample'])}"


# --- the tasks extension (SEP-2663) fixtures ----------------------------------------------

@server.tool(description="Greets `name` at once")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.tool(
    description="Sleeps `seconds`, as a task when the client allows it",
    input_schema={"type": "object", "properties": {
        "seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}}},
    task_support="optional",
)
async def slow_compute(ctx: Context, seconds: float = 1.0, label: str = "job") -> str:
    seconds = min(max(float(seconds), 0.0), 600.0)
    await try_task(ctx)
    await asyncio.sleep(seconds)
    return f"{label} done after {seconds:g} s"


@server.tool(description="Runs as a task for about a second, then fails with a tool error",
             task_support="required")
async def failing_job(ctx: Context) -> Any:
    await ctx.run_as_task()
    await asyncio.sleep(1)
    return {"content": [text("failing_job failed, as it always does")], "isError": True}


@server.tool(description="Runs as a task that ends with a protocol error", task_support="optional")
async def protocol_error_job(ctx: Context) -> str:
    await try_task(ctx)
    await asyncio.sleep(0.3)
    raise McpError(INTERNAL_ERROR, "protocol_error_job failed, as it always does")


@server.tool(description="Asks for a confirmation before (pretending to) delete `filename`",
             task_support="optional")
async def confirm_delete(ctx: Context, filename: str = "file") -> str:
    await try_task(ctx)
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    answers = await ctx.ask_input({"confirm": elicit(f"Delete {filename}?", schema)})
    yes = content_field(answers["confirm"], "confirm") is True
    return f"Deleted {filename}" if yes else f"Kept {filename}"


@server.tool(description="Asks two questions at once", task_support="optional")
async def multi_input(ctx: Context) -> str:
    await try_task(ctx)
    answers = await ctx.ask_input({
        "name": elicit("What is your name?", NAME_SCHEMA),
        "color": elicit("What is your favorite color?", COLOR_SCHEMA),
    })
    dump = lambda a: json.dumps((a or {}).get("content"), separators=(",", ":"))  # noqa: E731
    return f"{dump(answers['name'])} / {dump(answers['color'])}"


@server.tool(description="Asks a name synchronously, then greets as a task", task_support="required")
async def test_tool_with_task(ctx: Context) -> str:
    answers = await ctx.ask_input({"user_name": elicit("What is your name?", NAME_SCHEMA)})
    name = content_field(answers["user_name"], "name") or "someone"
    await ctx.run_as_task()
    return f"Hello, {name}!"


# --- resources -----------------------------------------------------------------------------

@server.resource("test://static-text", name="static-text", description="A fixed text", mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", description="A 1x1 PNG", mime_type="image/png")
def static_binary(uri: str) -> Any:
    return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}


@server.resource("test://watched-resource", name="watched-resource",
                 description="The target of subscribe and unsubscribe", mime_type="text/plain")
def watched_resource() -> str:
    return "Watched resource content"


@server.resource("test://template/{id}/data", name="template-data", description="Data by id",
                 mime_type="application/json")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


# --- prompts and completion ----------------------------------------------------------------

@server.prompt(description="A prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@server.prompt(description="A prompt with two required arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(description="A prompt that embeds the resource it is given (without reading it)")
def test_prompt_with_embedded_resource(resourceUri: str) -> Any:
    return [
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
        {"role": "user", "content": text("Please process the embedded resource above.")},
    ]


@server.prompt(description="A prompt with an image")
def test_prompt_with_image() -> Any:
    return [
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        {"role": "user", "content": text("Please analyze the image above.")},
    ]


@server.prompt(description="Asks for context before building its messages")
async def test_input_required_result_prompt(ctx: Context) -> str:
    schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answers = await ctx.ask_input({"user_context": elicit("What context should the prompt use?", schema)})
    return f"Use the following context: {content_field(answers['user_context'], 'context') or ''}"


@server.completion()
def complete(ref: Any, argument: Any, context: Any) -> Any:
    typed = str((argument or {}).get("value", ""))
    return [v for v in ("test", "testing", "tested", "other") if v.startswith(typed)]


# --- running -------------------------------------------------------------------------------

def _address(value: str) -> "tuple[str, int]":
    host, _, port = value.rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port)


async def serve_http(host: str, port: int, node: Optional[str] = None) -> None:
    handle = await server.serve_http(host, port, node=node)
    print(f"serving MCP at {handle.url}", file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await handle.aclose()


def serve_asgi(host: str, port: int, node: Optional[str] = None) -> None:
    if not hasattr(server, "asgi_app"):
        sys.exit("--asgi: this mcp_sansio has no Server.asgi_app()")
    try:
        import uvicorn  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("--asgi needs uvicorn (pip install uvicorn)")
    uvicorn.run(server.asgi_app(node=node), host=host, port=port, log_level="warning")


USAGE = (
    "usage: conformance_server.py [--conformance] [--http HOST:PORT | --asgi HOST:PORT] "
    "[--node NAME] [--state-key 64-HEX-DIGITS] [--store redis://HOST:PORT [--lease MS]]"
)


def main(argv: "list[str]") -> None:
    mode: Optional[str] = None
    address = ""
    node: Optional[str] = None
    shared: "dict[str, str]" = {}
    args = iter(argv)
    for flag in args:
        if flag == "--conformance":  # accepted, as the Rust servers take it
            continue
        value = next(args, None)
        if flag in ("--http", "--asgi", "--node", "--state-key", "--store", "--lease") and value is None:
            sys.exit(f"conformance_server.py: {flag} takes a value\n{USAGE}")
        if flag in ("--http", "--asgi"):
            mode, address = flag, value
        elif flag == "--node":
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", value or ""):
                sys.exit(f"conformance_server.py: --node takes 1 to 32 of A-Z a-z 0-9 _ -, not {value!r}")
            node = value
        elif flag == "--state-key":
            try:
                server.set_state_key(bytes.fromhex(value or ""))
            except ValueError:
                sys.exit(f"conformance_server.py: --state-key takes 64 hex digits, not {value!r}\n{USAGE}")
        elif flag in ("--store", "--lease"):
            shared[flag] = value or ""
        else:
            sys.exit(f"conformance_server.py: unknown argument {flag!r}\n{USAGE}")
    if shared:
        import scale_args

        if node is not None:
            shared["--node"] = node
        scale_args.apply(server, shared)
    if node is not None and mode is None:
        sys.exit(f"conformance_server.py: --node needs --http or --asgi\n{USAGE}")
    if mode == "--http":
        try:
            asyncio.run(serve_http(*_address(address), node=node))
        except KeyboardInterrupt:
            pass
    elif mode == "--asgi":
        serve_asgi(*_address(address), node=node)
    else:
        asyncio.run(server.serve_stdio())


if __name__ == "__main__":
    main(sys.argv[1:])
