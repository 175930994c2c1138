"""The examples run as written, and the guide's Python chapter (guide/src/python.md) and the
package's README (mcp-python/README.md) show them verbatim."""

import subprocess
import sys

import pytest

from conftest import HERE, REPO

EXAMPLES = HERE.parent / "examples"


@pytest.mark.parametrize(
    "name,info",
    [
        ("server.py", "python,no_run"),
        ("client.py", "python"),
        ("sansio.py", "python"),
        ("changes.py", "python"),
        ("fastapi_app.py", "python"),
        ("weather.py", "python,no_run"),
        ("notes_server.py", "python,no_run"),
    ],
)
def test_the_guide_shows_the_example_verbatim(name, info):
    text = (EXAMPLES / name).read_text().rstrip("\n")
    assert f"```{info}\n{text}\n```" in (REPO / "guide" / "src" / "python.md").read_text()


@pytest.mark.parametrize("name", ["server.py"])
def test_package_readme_shows_the_example_verbatim(name):
    # mcp-python/README.md, the description on PyPI
    text = (EXAMPLES / name).read_text().rstrip("\n")
    assert f"```python\n{text}\n```" in (HERE.parent / "README.md").read_text()


def test_client_example_runs_against_the_server_example():
    out = subprocess.run(
        [sys.executable, "client.py"], cwd=EXAMPLES, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "connected with 2026-07-28"
    assert "progress: 3 of 3" in lines
    assert lines[-2:] == ["counted to 3", "Hello from mcp_sansio"]


def test_sansio_example_runs():
    out = subprocess.run([sys.executable, "sansio.py"], cwd=EXAMPLES, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["ready: 2025-11-25", "result: hi"]


def test_changes_example_runs():
    out = subprocess.run([sys.executable, "changes.py"], cwd=EXAMPLES, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "task: working" and "task: completed" in lines
    assert lines[-4:] == ["rewritten", "changed: notes://todo", "buy oat milk", "confirmed"]


def test_the_guide_plugin_snippet_changes_the_catalog_while_serving():
    import asyncio

    from mcp_sansio.aio import Client, Server

    server = Server("plugins", "1.0", list_changed=True)

    def load_plugin(name: str) -> None:
        @server.tool(name=f"{name}_run", description=f"Runs the {name} plugin")
        def run() -> str:
            return f"{name} ran"

    def unload_plugin(name: str) -> None:
        server.remove_tool(f"{name}_run")

    async def main():
        load_plugin("a")
        async with Client.connect_in_process(server, era="modern") as c:
            async with c.listen(tools_changed=True) as changes:
                load_plugin("b")
                assert (await asyncio.wait_for(changes.next(), 10)).method == "notifications/tools/list_changed"
                assert (await c.call_tool("b_run"))["content"][0]["text"] == "b ran"
                unload_plugin("a")
                await asyncio.wait_for(changes.next(), 10)
                assert [t["name"] for t in (await c.list_tools())["tools"]] == ["b_run"]

    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_notes_server_example_answers_per_user(monkeypatch):
    """examples/notes_server.py: each user's notes are their own, the admin tool needs its
    scope, the summary runs as the caller's task."""
    import asyncio
    import json
    import runpy

    import mcp_sansio as ms
    from conftest import mint_jwt
    from mcp_sansio.aio import Client

    monkeypatch.setenv("NOTES_JWT_SECRET", "notes-secret")
    example = runpy.run_path(str(EXAMPLES / "notes_server.py"), run_name="notes_example")
    server = example["server"]
    server.resource_url = None  # served at a free port below: its own URL is the resource

    async def main():
        async with await server.serve_http("127.0.0.1", 0) as handle:

            def user(sub, scope=""):
                tok = mint_jwt("notes-secret", sub=sub, scope=scope, aud=handle.url, iss=example["ISSUER"])
                return Client.connect_http(handle.url, headers={"Authorization": f"Bearer {tok}"}, tasks=True)

            async with user("alice") as alice, user("bob") as bob:
                assert (await alice.call_tool("add_note", {"text": "milk"}))["content"][0]["text"] == "alice has 1 notes"
                assert (await bob.call_tool("add_note", {"text": "eggs"}))["content"][0]["text"] == "bob has 1 notes"
                assert (await alice.call_tool("my_notes"))["content"][0]["text"] == "milk"
                assert (await bob.call_tool("my_notes"))["content"][0]["text"] == "eggs"
                assert (await alice.call_tool("summarize"))["content"][0]["text"] == "1 notes"
                # 403 insufficient_scope (the client's error says how it ended, the notes stay)
                with pytest.raises((ms.McpError, ms.ConnectionClosed)):
                    await bob.call_tool("forget_everyone")
                assert sorted(example["notes"]) == ["alice", "bob"]
            async with user("root", "notes:admin") as root:
                assert (await root.call_tool("forget_everyone"))["content"][0]["text"] == "forgotten"
            assert not example["notes"]

    asyncio.run(asyncio.wait_for(main(), 60))
