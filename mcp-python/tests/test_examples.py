"""The README's Python examples run as written, and the READMEs (the repository's and the
package's, mcp-python/README.md) show them verbatim."""

import subprocess
import sys

import pytest

from conftest import HERE, REPO

EXAMPLES = HERE.parent / "examples"


@pytest.mark.parametrize("name", ["server.py", "client.py", "sansio.py", "changes.py"])
def test_readme_shows_the_example_verbatim(name):
    text = (EXAMPLES / name).read_text().rstrip("\n")
    assert f"```python\n{text}\n```" in (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", ["server.py", "sansio.py", "weather.py"])
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
