"""The conformance everything-server (conformance_server.py, which scripts/conformance runs
the official suite against) in process, both eras: it imports as a module, lists what the
suite relies on first, and its fixtures answer as the suite expects."""

import asyncio
import sys

import pytest

from conftest import HERE
from mcp_sansio.aio import Client

sys.path.insert(0, str(HERE))
from conformance_server import server  # noqa: E402

ERAS = ["legacy", "modern"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("era", ERAS)
def test_the_first_tool_and_resource_serve_the_suites_probes(era):
    # http-header-validation calls tools[0] with {} and needs a non-error result; caching
    # reads resources[0] (the catalog lists by name, so these are not the first registered)
    async def main():
        caps = server.config.capabilities
        assert caps["tools"]["listChanged"] and caps["prompts"]["listChanged"]
        assert caps["extensions"] == {"io.modelcontextprotocol/tasks": {}}
        def on_elicit(params):  # the suite's client declares elicitation and sampling
            return {"action": "accept", "content": {"confirm": True}}

        async with Client.connect_in_process(server, era=era, on_elicit=on_elicit) as c:
            first = (await c.list_tools())["tools"][0]
            assert not (await c.call_tool(first["name"], {})).get("isError"), first
            uri = (await c.list_resources())["resources"][0]["uri"]
            assert (await c.read_resource(uri))["contents"], uri

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_fixtures_answer_in_both_eras(era):
    async def main():
        def on_elicit(params):
            return {"action": "accept", "content": {"name": "Alice"}}

        def on_sample(params):
            return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}

        async with Client.connect_in_process(
            server, era=era, on_elicit=on_elicit, on_sample=on_sample, roots=[{"uri": "file:///r"}]
        ) as c:
            r = await c.call_tool("test_simple_text")
            assert r["content"][0]["text"] == "This is a simple text response for testing."
            r = await c.call_tool("test_input_required_result_elicitation")
            assert r["content"][0]["text"] == "Hello, Alice!"
            r = await c.call_tool("test_input_required_result_multiple_inputs")
            assert r["content"][0]["text"] == "Paris Alice; 1 root(s)."
            r = await c.call_tool("test_error_handling")
            assert r["isError"] is True
            r = await c.read_resource("test://template/123/data")
            assert "123" in r["contents"][0]["text"]
            p = await c.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert p["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"
            done = await c.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                                    {"name": "arg1", "value": "test"})
            assert done["completion"]["values"] == ["test", "testing", "tested"]

    run(main())
