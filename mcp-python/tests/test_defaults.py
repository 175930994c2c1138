"""Defaults that work with no configuration: a server with no ``state_key`` serves input
requests on 2026 connections (its own key, kept across catalog changes), and a client that
registers an input handler (elicitation, sampling, roots) declares the capability itself."""

import asyncio
import contextlib

import pytest

import mcp_sansio as ms
from mcp_sansio.aio import Client, Context, Server

from conftest import uvicorn_serving

ERAS = ["legacy", "modern"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


def asking_server():
    server = Server("asking", "1.0")  # no state_key, no capabilities

    @server.tool()
    async def ask_everything(ctx: Context) -> dict:
        answers = await ctx.ask_input(
            {
                "who": {
                    "method": "elicitation/create",
                    "params": {
                        "message": "Who?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                },
                "poem": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "a poem"}}], "maxTokens": 10},
                },
                "where": {"method": "roots/list", "params": {}},
            }
        )
        return {
            "name": answers["who"]["content"]["name"],
            "poem": answers["poem"]["content"]["text"],
            "roots": [r["uri"] for r in answers["where"]["roots"]],
        }

    return server


@contextlib.asynccontextmanager
async def connect(server, transport, era, **options):
    if transport == "stream":
        async with Client.connect_in_process(server, era=era, **options) as c:
            yield c
    else:
        pytest.importorskip("uvicorn")
        async with uvicorn_serving(server.asgi_app()) as base:
            async with Client.connect_http(base + "/", era=era, **options) as c:
                yield c


@pytest.mark.parametrize("transport", ["stream", "asgi"])
@pytest.mark.parametrize("era", ERAS)
def test_input_handlers_declare_their_capabilities_and_2026_input_needs_no_key(era, transport):
    async def main():
        server = asking_server()
        asked = []

        def on_elicit(params):
            asked.append("elicit")
            return {"action": "accept", "content": {"name": "Ada"}}

        async def on_sample(params):
            asked.append("sample")
            return {"role": "assistant", "content": {"type": "text", "text": "roses"}, "model": "m"}

        # no capabilities= anywhere: registering the handlers declares them
        async with connect(
            server, transport, era, on_elicit=on_elicit, on_sample=on_sample, roots=[{"uri": "file:///work"}]
        ) as c:
            r = await c.call_tool("ask_everything")
            assert not r.get("isError"), r
            assert r["structuredContent"] == {"name": "Ada", "poem": "roses", "roots": ["file:///work"]}
            assert sorted(asked) == ["elicit", "sample"]
            # a registration between calls rebuilds the catalog, not the key: input still works
            @server.tool()
            def later() -> str:
                return "later"

            r = await c.call_tool("ask_everything")
            assert r["structuredContent"]["name"] == "Ada"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_without_a_handler_the_server_is_told_the_client_cannot_answer(era):
    async def main():
        async with Client.connect_in_process(asking_server(), era=era) as c:
            with pytest.raises(ms.McpError) as e:
                await c.call_tool("ask_everything")
            assert e.value.code == -32021  # missing required client capability

    run(main())
