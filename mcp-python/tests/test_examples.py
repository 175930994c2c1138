"""The README's Python examples run as written, and the READMEs (the repository's and the
package's, mcp-python/README.md) show them verbatim."""

import subprocess
import sys

import pytest

from conftest import HERE, REPO

EXAMPLES = HERE.parent / "examples"


@pytest.mark.parametrize("name", ["server.py", "client.py", "sansio.py", "changes.py", "fastapi_app.py"])
def test_readme_shows_the_example_verbatim(name):
    text = (EXAMPLES / name).read_text().rstrip("\n")
    assert f"```python\n{text}\n```" in (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", ["server.py", "sansio.py", "fastapi_app.py", "weather.py"])
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


def test_the_readme_plugin_snippet_changes_the_catalog_while_serving():
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
