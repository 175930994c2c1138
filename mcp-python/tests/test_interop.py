"""Interop with the official Python SDK (``mcp`` from PyPI, pinned in tests/peers), both
directions, both eras, over stdio and Streamable HTTP.

The SDK runs in its own venv (``MCP_INTEROP_PYTHON``, made by scripts/interop-setup): its
client is tests/peers/py_client.py, its server tests/peers/py_server.py.
"""

import asyncio
import json
import subprocess
import sys
import time
import urllib.request

import pytest

from mcp_sansio.aio import Client

from conftest import EVERYTHING, HERE, PEERS, free_port, interop_python

MODES = [("legacy", "2025-11-25"), ("modern", "2026-07-28"), ("auto", "2026-07-28")]


def official_client(mode, target):
    """Runs py_client.py MODE TARGET...; returns its summary."""
    out = subprocess.run(
        [interop_python(), str(PEERS / "py_client.py"), mode, *target],
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = [l for l in out.stdout.splitlines() if l.startswith("INTEROP-SUMMARY ")]
    assert lines, f"no summary\nstdout:{out.stdout}\nstderr:{out.stderr}"
    summary = json.loads(lines[-1][len("INTEROP-SUMMARY ") :])
    assert "fatal" not in summary, f"{summary}\nstderr:{out.stderr}"
    return summary


def assert_scenario(s, version):
    assert s["protocol_version"] == version, s
    assert s["server_name"] == "mcp-sansio-everything", s
    assert {"add", "echo", "slow"} <= set(s["tools"]), s
    assert s["echo"] == {"texts": ["hello from python"], "is_error": False}, s
    assert s["add"] == {"texts": ["5.5"], "is_error": False}, s
    assert s["slow"]["texts"] == ["done after 3 steps"], s
    assert [p["progress"] for p in s["slow"]["progress"]] == [1, 2, 3], s
    assert [p["message"] for p in s["slow"]["progress"]] == [f"step {i} of 3" for i in (1, 2, 3)], s
    assert s["static"] == [{"uri": "test://static-text", "text": "Hello from a static resource"}], s
    assert s["template"] == [{"uri": "test://template/42/data", "text": "Data for 42"}], s
    assert s["prompt"] == [{"role": "user", "text": "Say hello to Ada."}], s
    u = s["unknown_tool"]
    assert u.get("error", {}).get("code") == -32602 or u.get("is_error") is True, s


@pytest.mark.parametrize("mode,version", MODES)
def test_official_client_to_our_server_stdio(mode, version):
    assert_scenario(official_client(mode, [sys.executable, str(EVERYTHING)]), version)


@pytest.fixture(scope="module")
def our_http_server():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(EVERYTHING), "--http", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening "), line
        yield line.split()[1]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("mode,version", MODES)
def test_official_client_to_our_server_http(our_http_server, mode, version):
    assert_scenario(official_client(mode, [our_http_server]), version)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


async def our_scenario(client):
    tools = await client.list_tools()
    assert {t["name"] for t in tools["tools"]} == {"echo", "slow"}
    r = await client.call_tool("echo", {"text": "from mcp_sansio"})
    assert r["content"][0]["text"] == "from mcp_sansio" and not r.get("isError")
    seen = []
    r = await client.call_tool("slow", {"steps": 2}, progress_callback=lambda p, t, m: seen.append((p, t, m)))
    assert r["content"][0]["text"] == "done after 2 steps"
    assert seen == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]
    r = await client.read_resource("test://py/static")
    assert r["contents"][0]["text"] == "Hello from the Python server"
    r = await client.read_resource("test://py/items/7")
    assert r["contents"][0]["text"] == "Item 7"
    r = await client.get_prompt("greeting", {"name": "Ada"})
    assert r["messages"][0]["content"]["text"] == "Say hello to Ada."
    r = await client.call_tool("no-such-tool", {})
    assert r.get("isError") is True


@pytest.mark.parametrize("era,version", MODES)
def test_our_client_to_official_server_stdio(era, version):
    async def main():
        async with Client.connect_stdio(interop_python(), [str(PEERS / "py_server.py")], era=era) as c:
            assert c.protocol_version == version
            assert c.server_info["name"] == "py-interop-server"
            await our_scenario(c)

    run(main())


@pytest.fixture(scope="module")
def official_http_server():
    port = free_port()
    proc = subprocess.Popen(
        [interop_python(), str(PEERS / "py_server.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url, timeout=1)
            except urllib.error.HTTPError:
                break  # it answers (a GET without a session is an error): it is up
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the official HTTP server did not start")
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("era,version", MODES)
def test_our_client_to_official_server_http(official_http_server, era, version):
    async def main():
        async with Client.connect_http(official_http_server, era=era) as c:
            assert c.protocol_version == version
            await our_scenario(c)

    run(main())


WEATHER = HERE.parent / "examples" / "weather.py"


@pytest.mark.parametrize("mode,version", MODES[:2])
def test_official_client_sees_typed_tools(mode, version):
    """examples/weather.py: the SDK's client gets the derived outputSchema, structuredContent
    that validates against it (the SDK's own check and jsonschema's), and answers the typed
    elicitation (2026: input_required, then the retry)."""
    out = subprocess.run(
        [interop_python(), str(HERE / "sdk_typed_client.py"), mode, sys.executable, str(WEATHER)],
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = [l for l in out.stdout.splitlines() if l.startswith("TYPED-SUMMARY ")]
    assert lines, f"no summary\nstdout:{out.stdout}\nstderr:{out.stderr}"
    s = json.loads(lines[-1][len("TYPED-SUMMARY ") :])
    assert "fatal" not in s, f"{s}\nstderr:{out.stderr}"
    assert s["protocol_version"] == version
    assert s["output_schema"] == {
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "Temperature in the units asked for"},
            "conditions": {"type": "string"},
            "humidity": {"type": "number"},
        },
        "required": ["temperature", "conditions", "humidity"],
    }
    assert s["structured"] == {"temperature": 22.5, "conditions": "Partly cloudy in Porto", "humidity": 65.0}
    assert json.loads(s["texts"][0]) == s["structured"] and s["validated"] and not s["is_error"]
    assert s["requested_schema"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "nights": {"type": "integer"},
            "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        },
        "required": ["city", "nights"],
    }
    assert s["trip"] == ["3 nights in Lisbon: Partly cloudy in Lisbon, 72.5"]
