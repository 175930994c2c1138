"""Where plain ``def`` handlers run: worker threads that hand their results back to the
event loop in batches.

``loop.run_in_executor`` costs, per call, a ``concurrent.futures.Future`` chained to an
asyncio one and a wakeup of the loop (a byte through its self-pipe) for each result. Under
load that hop was more than half of a sync tool call's cost. Here a call is a job on a
``SimpleQueue``; a worker runs it (in the caller's ``contextvars`` context) and appends the
outcome to its loop's inbox, and the loop is woken once for every result that arrived
while it was busy. The pool grows as ``ThreadPoolExecutor``'s does (a new thread when no
worker is idle, up to ``min(32, cpu + 4)``); its threads are daemons, idle in ``get``.
"""

import asyncio
import collections
import contextvars
import os
import threading
import weakref
from queue import SimpleQueue
from typing import Any, Callable, Deque, Tuple

__all__ = ["run_sync"]

MAX_WORKERS = min(32, (os.cpu_count() or 1) + 4)


class _Inbox:
    """One loop's finished jobs, and whether a drain is already scheduled on it."""

    __slots__ = ("loop", "done", "scheduled", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.done: Deque[Tuple[asyncio.Future, bool, Any]] = collections.deque()
        self.scheduled = False

    def put(self, fut: asyncio.Future, ok: bool, value: Any) -> None:
        # Called on a worker thread. `deque.append` and the flag are safe under the GIL:
        # a drain clears the flag before it empties the deque, so a result appended after
        # the clear schedules a drain of its own (two drains are harmless).
        self.done.append((fut, ok, value))
        if not self.scheduled:
            self.scheduled = True
            try:
                self.loop.call_soon_threadsafe(self.drain)
            except RuntimeError:  # the loop is closed: nobody waits for the result
                self.done.clear()

    def drain(self) -> None:
        self.scheduled = False
        done = self.done
        while done:
            fut, ok, value = done.popleft()
            if fut.done():  # cancelled while the worker ran
                continue
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(value)


_inboxes: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox]" = weakref.WeakKeyDictionary()
_jobs: "SimpleQueue[Tuple[Callable[[], Any], asyncio.Future, _Inbox, contextvars.Context]]" = SimpleQueue()
_lock = threading.Lock()
_workers = 0
_idle = 0  # workers waiting in `get` that no job has claimed yet


def _work() -> None:
    # A new worker was started for a job: it is not idle until that job (or another) ran.
    global _idle
    while True:
        fn, fut, inbox, ctx = _jobs.get()
        try:
            value = ctx.run(fn)
        except BaseException as exc:  # noqa: BLE001: handed to the awaiting task
            inbox.put(fut, False, exc)
        else:
            inbox.put(fut, True, value)
        # Nothing of the job outlives it here (its result belongs to the awaiting task).
        fn = fut = inbox = ctx = value = None
        with _lock:
            # A job that found no idle worker at the cap claimed none: count at most one
            # idle per worker.
            _idle = min(_idle + 1, _workers)


def run_sync(loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> "asyncio.Future[Any]":
    """``fn()`` on a worker thread, in a copy of the current ``contextvars`` context; the
    future (of ``loop``, the running loop) gets its result or exception."""
    global _workers, _idle
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes[loop] = _Inbox(loop)
    fut = loop.create_future()
    # Each job claims an idle worker, or starts one (below the cap), or waits its turn.
    with _lock:
        grow = False
        if _idle > 0:
            _idle -= 1
        elif _workers < MAX_WORKERS:
            grow = True
            _workers += 1
    if grow:
        threading.Thread(target=_work, name=f"mcp-sansio-worker-{_workers}", daemon=True).start()
    _jobs.put((fn, fut, inbox, contextvars.copy_context()))
    return fut
