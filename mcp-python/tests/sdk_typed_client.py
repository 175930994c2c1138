"""The official Python SDK's client against our typed weather example (examples/weather.py),
printing what it saw: run by test_interop.py in the SDK's venv (MCP_INTEROP_PYTHON).

    python sdk_typed_client.py MODE SERVER [ARGS...]      # MODE: legacy | modern

It lists the tools, calls get_weather (the SDK checks structuredContent against the
outputSchema itself; this also validates it with jsonschema, 2020-12) and plan_trip, whose
typed elicitation it answers (2026-07-28: the input_required result, then the retry). One JSON object on a line starting with `TYPED-SUMMARY `.
"""

import json
import sys
import traceback

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def on_elicit(context, params):
    summary["requested_schema"] = params.requested_schema
    return types.ElicitResult(action="accept", content={"city": "Lisbon", "nights": 3, "units": "imperial"})


async def scenario(session):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    schema = tools["get_weather"].output_schema
    summary["output_schema"] = schema
    summary["input_schema"] = tools["get_weather"].input_schema
    r = await session.call_tool("get_weather", {"location": "Porto"})
    summary["structured"] = r.structured_content
    summary["texts"] = [getattr(b, "text", None) for b in r.content]
    summary["is_error"] = bool(r.is_error)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(r.structured_content)
    summary["validated"] = True
    r = await session.call_tool("plan_trip", {}, allow_input_required=True)
    if isinstance(r, types.InputRequiredResult):  # 2026-07-28: answer, then retry
        responses = {key: await on_elicit(None, request.params) for key, request in r.input_requests.items()}
        r = await session.call_tool(
            "plan_trip", {}, input_responses=responses, request_state=r.request_state
        )
    summary["trip"] = [getattr(b, "text", None) for b in r.content]


async def main():
    mode, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        with anyio.fail_after(45):
            params = StdioServerParameters(command=command, args=args)
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
                    if mode == "legacy":
                        summary["protocol_version"] = (await session.initialize()).protocol_version
                    else:
                        await session.discover()
                        summary["protocol_version"] = session.protocol_version
                    await scenario(session)
    except BaseException as e:  # report, then fail
        summary["fatal"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    print("TYPED-SUMMARY " + json.dumps(summary), flush=True)


summary = {}
if __name__ == "__main__":
    anyio.run(main)
