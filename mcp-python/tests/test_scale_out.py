"""Several server processes sharing tasks and changes through a store (issue #21): two
:class:`Server` objects, each with its own Redis client (its connection and subscription
threads, as two processes have), behind their own HTTP endpoints, against a real
``redis-server`` started here on a free 127.0.0.1 port (no persistence, a temporary
directory) and stopped at the end; and the same with one in-memory ``TaskStore``.

A 2026 task started through A is read (``tasks/get``) and cancelled through B (A's handler
is cancelled); another one's result is read through B; a ``tools/list_changed`` raised on A
reaches listeners (both eras) connected to B; with Redis down, ``tasks/get`` through B fails
with an error naming the task store, and once it is back a task that kept running on A is
readable through B again (its lease renewal wrote it back). Every wait is bounded."""

import asyncio
import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse

import pytest

from mcp_sansio import TaskStore
from mcp_sansio.aio import Client, Context, Server

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
STATE_KEY = bytes(range(32))
WAIT = 10.0  # the bound of every wait


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def redis_server_binary() -> str:
    found = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if found is None:
        pytest.fail("redis-server is missing: these tests need it (Debian: apt-get install redis-server; .ci/run installs it)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """A redis-server of this test: no persistence, in a temporary directory."""

    def __init__(self, directory) -> None:
        self.binary = redis_server_binary()
        self.directory = str(directory)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.proc = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.directory],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"redis-server exited with {self.proc.returncode} (port {self.port})")
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"redis-server did not answer on port {self.port} within {WAIT} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        self.proc = None


@pytest.fixture
def redis(tmp_path):
    r = Redis(tmp_path)
    r.start()
    try:
        yield r
    finally:
        r.stop()


def node_server(node: str, store, state: dict) -> Server:
    server = Server("shared", "1.0", tasks=True, list_changed=True, store=store, node=node, lease=1.5,
                    state_key=STATE_KEY)

    @server.tool()
    async def stuck(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.05)
        state["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return "never"

    @server.tool()
    async def gated(ctx: Context) -> str:
        await ctx.run_as_task(poll_interval=0.05)
        await state["gate"].wait()
        return "through the gate"

    return server


def _post(url: str, method: str, params: dict, rid: int) -> dict:
    """One 2026 request, by hand (the task's id is a plain value here, not a call to
    follow): the JSON-RPC answer, from a JSON or an event-stream body."""
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "scale-out", "version": "1"},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    name = params.get("name") or params.get("taskId")
    if name is not None:
        headers["Mcp-Name"] = name
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=WAIT)
    try:
        conn.request("POST", parsed.path, body, headers)
        response = conn.getresponse()
        data = response.read().decode()
        kind = response.getheader("Content-Type", "")
    finally:
        conn.close()
    if "text/event-stream" in kind:
        for line in data.splitlines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("id") == rid:
                    return message
        raise AssertionError(f"no answer in the event stream: {data!r}")
    return json.loads(data)


class Wire:
    def __init__(self) -> None:
        self.rid = 0

    async def __call__(self, url: str, method: str, params: dict) -> dict:
        self.rid += 1
        return await asyncio.to_thread(_post, url, method, params, self.rid)

    async def start(self, url: str, tool: str) -> str:
        created = await self(url, "tools/call", {"name": tool, "arguments": {}})
        assert created.get("result", {}).get("resultType") == "task", created
        return created["result"]["taskId"]

    async def status_until(self, url: str, task: str, wanted: str) -> dict:
        deadline = time.monotonic() + WAIT
        while True:
            got = await self(url, "tasks/get", {"taskId": task})
            if got.get("result", {}).get("status") == wanted:
                return got["result"]
            if time.monotonic() > deadline:
                raise AssertionError(f"task {task} not {wanted} within {WAIT} s: {got}")
            await asyncio.sleep(0.1)


async def changes_reach(origin: Server, url: str, era: str) -> None:
    """A tools/list_changed raised on `origin` reaches a listener of `era` at `url`."""
    async with Client.connect_http(url, era=era) as c:
        async with c.listen(tools_changed=True) as sub:
            # Raised once: the store keeps signals for a process whose reader is still
            # connecting, so nothing needs raising again.
            origin.notify_list_changed("tools")
            try:
                event = await asyncio.wait_for(sub.next(), WAIT)
            except asyncio.TimeoutError:
                raise AssertionError(f"no list change reached the {era} listener within {WAIT} s") from None
            assert event.method == "notifications/tools/list_changed", event


@contextlib.asynccontextmanager
async def two_nodes(store_a, store_b, front_b="http"):
    """Servers A and B (B behind the h11 server, or its ASGI app under uvicorn)."""
    state = {"started": asyncio.Event(), "cancelled": asyncio.Event(), "gate": asyncio.Event()}
    a = node_server("a", store_a, state)
    b = node_server("b", store_b, state)
    async with await a.serve_http("127.0.0.1", 0) as ha:
        if front_b == "http":
            async with await b.serve_http("127.0.0.1", 0) as hb:
                yield a, b, ha.url, hb.url, state
        else:
            pytest.importorskip("uvicorn")
            from conftest import uvicorn_serving

            async with uvicorn_serving(b.asgi_app(path="/mcp")) as base:
                yield a, b, ha.url, base + "/mcp", state


async def tasks_cross_nodes(a, b, url_a, url_b, state) -> None:
    wire = Wire()
    task = await wire.start(url_a, "stuck")
    await asyncio.wait_for(state["started"].wait(), WAIT)
    got = await wire.status_until(url_b, task, "working")
    assert got["taskId"] == task
    # Cancelled through B: A's handler is cancelled.
    ack = await wire(url_b, "tasks/cancel", {"taskId": task})
    assert "error" not in ack, ack
    await asyncio.wait_for(state["cancelled"].wait(), WAIT)
    await wire.status_until(url_b, task, "cancelled")
    await wire.status_until(url_a, task, "cancelled")

    # Another task's result, read through B.
    task = await wire.start(url_a, "gated")
    await wire.status_until(url_b, task, "working")
    state["gate"].set()
    done = await wire.status_until(url_b, task, "completed")
    assert "through the gate" in json.dumps(done), done
    state["gate"].clear()
    return wire


def test_tasks_and_changes_are_shared_through_redis(redis):
    async def main():
        async with two_nodes(redis.url, TaskStore.redis(redis.url)) as (a, b, url_a, url_b, state):
            assert a.store.description == redis.url
            wire = await tasks_cross_nodes(a, b, url_a, url_b, state)
            for era in ("modern", "legacy"):
                await changes_reach(a, url_b, era)

            # A task that keeps running on A while Redis is down.
            held = await wire.start(url_a, "gated")
            await wire.status_until(url_b, held, "working")
            redis.stop()
            got = await wire(url_b, "tasks/get", {"taskId": held})
            assert "error" in got and "task store" in got["error"]["message"], got
            assert redis.url in got["error"]["message"], got
            started = await wire(url_a, "tools/call", {"name": "gated", "arguments": {}})
            assert "task store" in json.dumps(started), started

            redis.start()  # empty: no persistence
            # A's lease renewal (every 0.5 s) writes the running task's record back.
            await wire.status_until(url_b, held, "working")
            state["gate"].set()
            await wire.status_until(url_b, held, "completed")
            state["gate"].clear()
            # And the rest flows again: a new task, changes (the subscriptions reconnect).
            fresh = await wire.start(url_a, "gated")
            await wire.status_until(url_b, fresh, "working")
            state["gate"].set()
            await wire.status_until(url_b, fresh, "completed")
            await changes_reach(a, url_b, "modern")

    run(main())


@pytest.mark.parametrize("front_b", ["http", "asgi"])
def test_tasks_and_changes_are_shared_through_a_memory_store(front_b):
    async def main():
        store = TaskStore.memory()
        async with two_nodes(store, store, front_b) as (a, b, url_a, url_b, state):
            wire = await tasks_cross_nodes(a, b, url_a, url_b, state)
            await changes_reach(a, url_b, "modern")
            store.set_available(False)
            task_b = await wire(url_b, "tasks/get", {"taskId": "nope"})
            assert "task store" in json.dumps(task_b), task_b
            store.set_available(True)

    run(main())


def test_store_arguments_are_checked():
    with pytest.raises(TypeError):
        Server("x", store=42)
    with pytest.raises(ValueError):
        TaskStore.redis("http://not-redis")
    with pytest.raises(ValueError):
        TaskStore.redis("redis://127.0.0.1:1").set_available(False)
    assert Server("x").store is None
    s = Server("x", store=TaskStore.memory(), node="n1")
    assert s.node == "n1" and s.store.description == "memory"


@contextlib.contextmanager
def conformance_servers(redis, names):
    """conformance_server.py processes with the scale-out flags, one per name: their URLs
    and processes."""
    script = os.path.join(os.path.dirname(__file__), "conformance_server.py")
    procs, urls = [], []
    try:
        for name in names:
            port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, script, "--http", f"127.0.0.1:{port}", "--store", redis.url, "--node", name,
                 "--state-key", STATE_KEY.hex(), "--lease", "2000"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            ))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        for proc, url in zip(procs, urls):
            port = urllib.parse.urlsplit(url).port
            deadline = time.monotonic() + WAIT
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"conformance_server.py exited with {proc.returncode}: {proc.stderr.read().decode()}")
                try:
                    socket.create_connection(("127.0.0.1", port), 0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"conformance_server.py did not listen on {port} within {WAIT} s")
                    time.sleep(0.05)
        yield urls, procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(WAIT)
            proc.stderr.close()


def test_the_conformance_server_takes_the_scale_out_flags(redis):
    async def main():
        with conformance_servers(redis, ["a", "b"]) as ((url_a, url_b), (proc_a, _)):
            wire = Wire()
            task = await wire.start(url_a, "slow_compute")
            done = await wire.status_until(url_b, task, "completed")
            assert "job done" in json.dumps(done), done
            # A tool of A raises tools/list_changed; a listener on B hears it.
            async with Client.connect_http(url_b, era="modern") as c:
                async with c.listen(tools_changed=True) as sub:
                    deadline = time.monotonic() + WAIT
                    while True:
                        await wire(url_a, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
                        try:
                            event = await asyncio.wait_for(sub.next(), 0.5)
                            break
                        except asyncio.TimeoutError:
                            assert time.monotonic() < deadline, "no list change reached B"
                    assert event.method == "notifications/tools/list_changed", event

            # A's process dies (SIGKILL) with a task running: B reads it failed once its
            # lease (2 s) ended.
            created = await wire(url_a, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 600}})
            task = created["result"]["taskId"]
            await wire.status_until(url_b, task, "working")
            proc_a.kill()
            proc_a.wait(WAIT)
            failed = await wire.status_until(url_b, task, "failed")
            assert "stopped" in json.dumps(failed), failed

    run(main())


def test_the_scale_out_flags_are_checked():
    script = os.path.join(os.path.dirname(__file__), "conformance_server.py")
    bad = subprocess.run([sys.executable, script, "--state-key", "abc"], capture_output=True, timeout=WAIT)
    assert bad.returncode != 0 and b"state-key" in bad.stderr, bad
