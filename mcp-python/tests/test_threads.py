"""Plain ``def`` handlers run on worker threads (``mcp_sansio._threads``), never on the
event loop: results and exceptions reach the awaiting task, context variables follow the
call, the pool grows to run blocking handlers side by side (up to its cap), a cancelled
call loses nothing, and a loop that closed before a worker finished breaks nothing."""

import asyncio
import contextvars
import threading

import pytest

from mcp_sansio import _threads
from mcp_sansio.aio import Client, Server

pytestmark = pytest.mark.filterwarnings("error")

ERAS = ["legacy", "modern"]
VAR: "contextvars.ContextVar[str]" = contextvars.ContextVar("VAR", default="unset")


def test_results_exceptions_and_context_reach_the_caller():
    async def main():
        loop = asyncio.get_running_loop()
        VAR.set("from the caller")
        loop_thread = threading.get_ident()
        ran_on = []

        def work(x):
            ran_on.append(threading.get_ident())
            VAR.set("changed in the worker")  # a copy: the caller's stays
            return (x * 2, contextvars.copy_context()[VAR])

        def fail():
            raise ValueError("boom")

        assert await _threads.run_sync(loop, lambda: work(21)) == (42, "changed in the worker")
        assert ran_on and ran_on[0] != loop_thread
        assert VAR.get() == "from the caller"
        seen = await _threads.run_sync(loop, VAR.get)
        assert seen == "from the caller"
        with pytest.raises(ValueError, match="boom"):
            await _threads.run_sync(loop, fail)
        # Many at once, each answered with its own result.
        got = await asyncio.gather(*(_threads.run_sync(loop, lambda i=i: i) for i in range(500)))
        assert got == list(range(500))

    asyncio.run(main())


def test_blocking_calls_run_side_by_side_up_to_the_cap():
    # MAX_WORKERS calls that each wait for all the others finish only if each has a
    # thread of its own; one more waits its turn and then runs.
    n = _threads.MAX_WORKERS
    barrier = threading.Barrier(n, timeout=10)

    async def main():
        loop = asyncio.get_running_loop()
        results = await asyncio.gather(*(_threads.run_sync(loop, barrier.wait) for _ in range(n)))
        assert sorted(results) == list(range(n))
        # The pool never grows past its cap.
        assert _threads._workers <= n
        assert await _threads.run_sync(loop, lambda: "after") == "after"

    asyncio.run(main())


def test_a_cancelled_call_and_a_closed_loop_lose_nothing():
    release = threading.Event()
    finished = threading.Event()

    def slow():
        release.wait(10)
        finished.set()
        return "late"

    async def cancelled():
        loop = asyncio.get_running_loop()
        fut = _threads.run_sync(loop, slow)
        fut.cancel()
        with pytest.raises(asyncio.CancelledError):
            await fut
        release.set()
        assert finished.wait(10)
        # The worker's late result was dropped, and the pool still answers.
        assert await _threads.run_sync(loop, lambda: 7) == 7

    asyncio.run(cancelled())

    # A loop closed while its call still ran: the worker's result has nowhere to go, and
    # the worker goes on to the next job (of another loop).
    release.clear()
    finished.clear()

    async def leave():
        _threads.run_sync(asyncio.get_running_loop(), slow)

    asyncio.run(leave())
    release.set()
    assert finished.wait(10)

    async def again():
        return await _threads.run_sync(asyncio.get_running_loop(), lambda: "still here")

    assert asyncio.run(again()) == "still here"


@pytest.mark.parametrize("era", ERAS)
def test_sync_tools_run_off_the_loop_and_concurrently(era):
    server = Server("threads", "1.0")
    n = 4
    barrier = threading.Barrier(n, timeout=10)
    loop_threads = []

    @server.tool(description="Waits for the others")
    def meet() -> str:
        assert threading.get_ident() not in loop_threads
        barrier.wait()
        return "met"

    @server.tool(description="Fails")
    def broken() -> str:
        raise RuntimeError("broken on purpose")

    woken = threading.Event()

    @server.tool(description="Waits until `wake` is called")
    def nap() -> str:
        assert woken.wait(10)
        return "rested"

    @server.tool(description="Wakes the nappers")
    async def wake() -> str:
        woken.set()
        return "woken"

    async def main():
        loop_threads.append(threading.get_ident())
        async with Client.connect_in_process(server, era=era) as client:
            results = await asyncio.gather(*(client.call_tool("meet", {}) for _ in range(n)))
            assert [r.content[0].text for r in results] == ["met"] * n
            failed = await client.call_tool("broken", {})
            assert failed.is_error
            assert "broken on purpose" in failed.content[0].text
            # The loop stays free while sync tools block: the async tool that releases
            # them runs meanwhile (on the loop, they would wait for it forever).
            naps = [asyncio.ensure_future(client.call_tool("nap", {})) for _ in range(3)]
            await asyncio.sleep(0.05)
            assert not any(t.done() for t in naps)
            assert (await client.call_tool("wake", {})).content[0].text == "woken"
            assert [(await t).content[0].text for t in naps] == ["rested"] * 3

    asyncio.run(asyncio.wait_for(main(), 60))
