"""Every Python block of the guide (guide/src/*.md) and of the repository's README.md works.

The convention (scripts/check-docs enforces the info strings too):

- ```python: the block runs as a script, from mcp-python/examples (so it may start the
  examples there), and must exit with status 0 within the timeout. Write it self-contained:
  in process, or with a short-lived server on a free port.
- ```python,no_run: a block that must not run as is (a server that serves until stopped, one
  that needs a secret or a remote peer) is compiled, and every module and name it imports is
  imported, so a renamed API still fails here.

Any other info string starting with `python` fails, so a block cannot escape both.
"""

import ast
import importlib
import os
import re
import subprocess
import sys

import pytest

from conftest import HERE, REPO

EXAMPLES = HERE.parent / "examples"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.S | re.M)
KINDS = ("python", "python,no_run")


def blocks():
    files = [REPO / "README.md", *sorted((REPO / "guide" / "src").glob("*.md"))]
    found = []
    for path in files:
        text = path.read_text()
        for match in FENCE.finditer(text):
            info = match.group(1).strip()
            if not info.startswith("python"):
                continue
            line = text.count("\n", 0, match.start()) + 1
            found.append(pytest.param(info, match.group(2), id=f"{path.relative_to(REPO)}:{line}"))
    return found


BLOCKS = blocks()


def test_the_guide_has_python_blocks_of_both_kinds():
    kinds = {param.values[0] for param in BLOCKS}
    assert kinds == set(KINDS), kinds
    assert len(BLOCKS) >= 10, len(BLOCKS)


@pytest.mark.parametrize("info,code", BLOCKS)
def test_block(info, code, tmp_path):
    assert info in KINDS, f"unknown info string {info!r}: use one of {KINDS}"
    if info == "python":
        script = tmp_path / "block.py"
        script.write_text(code)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        out = subprocess.run(
            [sys.executable, str(script)], cwd=EXAMPLES, env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}"
        return
    tree = ast.parse(compile(code, "<guide block>", "exec", ast.PyCF_ONLY_AST))
    compile(tree, "<guide block>", "exec")
    imported = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)
                imported += 1
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports cannot be checked"
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    importlib.import_module(f"{node.module}.{alias.name}")
                imported += 1
    assert imported, "a no_run block imports what it uses, so that this test can check it"
