"""A blocking client: the asyncio :class:`mcp_sansio.aio.Client` on an event loop of its
own, in a daemon thread, so plain synchronous code can use MCP::

    from mcp_sansio.sync import Client

    with Client.connect_stdio(sys.executable, ["server.py"]) as client:
        print(client.call_tool("add", {"a": 1, "b": 2}))

Every method blocks until the answer arrives and returns the same typed results
(:mod:`mcp_sansio.types`: ``result.content[0].text``, also dicts) or raises the same
exceptions as its asyncio counterpart. ``timeout`` on each call bounds the wait;
the request is then cancelled and ``RequestTimeout`` raised.
"""

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, Dict, Optional, Sequence

from . import aio
from .errors import RequestTimeout
from .types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
    Result,
    ServerCapabilities,
)

__all__ = ["Client"]


class _Loop:
    """An event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp-sansio-sync", daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: Optional[float] = None) -> Any:
        # run_coroutine_threadsafe schedules the task in a copy of this thread's context:
        # the caller's trace context (its current span) goes along to the loop's thread.
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise RequestTimeout(f"no answer within {timeout} s") from None

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


class Client:
    """A blocking MCP client; make one with :meth:`connect_stdio`, :meth:`connect_http` or
    :meth:`connect_in_process`, and close it (or use ``with``)."""

    def __init__(self, loop: _Loop, client: aio.Client) -> None:
        self._loop = loop
        self._client = client

    @classmethod
    def _connect(cls, make: Callable[[], Any]) -> "Client":
        loop = _Loop()
        try:

            async def start() -> aio.Client:
                return await make()

            client = loop.run(start())
        except BaseException:
            loop.stop()
            raise
        return cls(loop, client)

    @classmethod
    def connect_stdio(cls, command: str, args: Sequence[str] = (), **options: Any) -> "Client":
        """Starts ``command args...`` and speaks MCP over its stdio (see
        :meth:`mcp_sansio.aio.Client.connect_stdio` for the options)."""
        return cls._connect(lambda: aio.Client.connect_stdio(command, args, **options))

    @classmethod
    def connect_http(cls, url: str, **options: Any) -> "Client":
        """Speaks Streamable HTTP to ``url`` (``http://`` or ``https://``; see
        :meth:`mcp_sansio.aio.Client.connect_http` for the options: ``headers``,
        ``root_certificates``, ``ssl_context``, ``proxy``, ``connect_timeout``,
        ``response_timeout``, ``auth``). A failure to connect raises
        :class:`~mcp_sansio.errors.ConnectError` (:class:`~mcp_sansio.errors.CertificateError`
        for a certificate that failed verification); a 401 or 403 that cannot be satisfied
        :class:`~mcp_sansio.errors.AuthorizationError`.

        With ``auth=OAuth(user_agent=...)`` a plain function runs on a worker thread (it may
        block, e.g. wait for the browser's redirect), an ``async`` one on the client's loop."""
        return cls._connect(lambda: aio.Client.connect_http(url, **options))

    @classmethod
    def connect_in_process(cls, server: "aio.Server", **options: Any) -> "Client":
        """Serves ``server`` on the client's own loop thread, joined in memory."""
        return cls._connect(lambda: aio.Client.connect_in_process(server, **options))

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version in use."""
        return self._client.protocol_version

    @property
    def server_info(self) -> Optional[Implementation]:
        """The server's ``serverInfo``."""
        return self._client.server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """The server's capabilities."""
        return self._client.server_capabilities

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions for the model."""
        return self._client.instructions

    @property
    def initialize_result(self) -> Optional[InitializeResult]:
        """See :attr:`mcp_sansio.aio.Client.initialize_result`."""
        return self._client.initialize_result

    def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        timeout: Optional[float] = None,
        progress_callback: Any = None,
        as_task: bool = False,
        on_task_status: Any = None,
        headers: Any = None,
    ) -> CallToolResult:
        """``tools/call`` (see :meth:`mcp_sansio.aio.Client.call_tool`; callbacks run on the
        client's loop thread; ``headers`` go on this call's HTTP request only)"""
        call = self._client.call_tool(
            name,
            arguments,
            progress_callback=progress_callback,
            as_task=as_task,
            on_task_status=on_task_status,
            headers=headers,
        )
        return self._loop.run(call, timeout)

    def listen(self, **filters: Any) -> "Subscription":
        """Subscribes to change notifications (the filters of
        :meth:`mcp_sansio.aio.Client.listen`)::

            with client.listen(resource_uris=["file:///a"]) as changes:
                for note in changes:
                    ...
        """
        return Subscription(self._loop, self._client.listen(**filters))

    def subscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/subscribe`` (legacy era)"""
        self._loop.run(self._client.subscribe_resource(uri), timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """``resources/unsubscribe`` (legacy era)"""
        self._loop.run(self._client.unsubscribe_resource(uri), timeout)

    def list_tools(self, cursor: Optional[str] = None, *, timeout: Optional[float] = None) -> ListToolsResult:
        """``tools/list``"""
        return self._loop.run(self._client.list_tools(cursor), timeout)

    def list_resources(self, cursor: Optional[str] = None, *, timeout: Optional[float] = None) -> ListResourcesResult:
        """``resources/list``"""
        return self._loop.run(self._client.list_resources(cursor), timeout)

    def list_resource_templates(self, cursor: Optional[str] = None, *, timeout: Optional[float] = None) -> ListResourceTemplatesResult:
        """``resources/templates/list``"""
        return self._loop.run(self._client.list_resource_templates(cursor), timeout)

    def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> ReadResourceResult:
        """``resources/read``"""
        return self._loop.run(self._client.read_resource(uri), timeout)

    def list_prompts(self, cursor: Optional[str] = None, *, timeout: Optional[float] = None) -> ListPromptsResult:
        """``prompts/list``"""
        return self._loop.run(self._client.list_prompts(cursor), timeout)

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *, timeout: Optional[float] = None) -> GetPromptResult:
        """``prompts/get``"""
        return self._loop.run(self._client.get_prompt(name, arguments), timeout)

    def complete(self, ref: Dict[str, Any], argument: Dict[str, Any], context: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None) -> CompleteResult:
        """``completion/complete``"""
        return self._loop.run(self._client.complete(ref, argument, context), timeout)

    def ping(self, *, timeout: Optional[float] = None) -> None:
        """``ping``"""
        self._loop.run(self._client.ping(), timeout)

    def request(
        self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None, headers: Any = None
    ) -> Result:
        """Any request (``headers`` go on its HTTP request only)."""
        return self._loop.run(self._client.request(method, params, headers=headers), timeout)

    def close(self) -> None:
        """Closes the connection and stops the loop thread."""
        if self._loop.loop.is_closed():
            return
        try:
            self._loop.run(self._client.aclose(), 10)
        finally:
            self._loop.stop()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Subscription:
    """A blocking view of :class:`mcp_sansio.aio.Subscription`: a context manager and an
    iterator of notifications."""

    def __init__(self, loop: _Loop, sub: aio.Subscription) -> None:
        self._loop = loop
        self._sub = sub

    @property
    def granted(self) -> Dict[str, Any]:
        """What the server accepted (see the asyncio class)."""
        return self._sub.granted

    def next(self, timeout: Optional[float] = None) -> Any:
        """The next notification; ``StopIteration`` once the subscription ended;
        ``RequestTimeout`` when none came within ``timeout`` seconds."""
        try:
            return self._loop.run(self._sub.next(), timeout)
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Ends the subscription."""
        self._loop.run(self._sub.aclose(), 10)

    def __enter__(self) -> "Subscription":
        self._loop.run(self._sub._open())
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> "Subscription":
        return self

    def __next__(self) -> Any:
        return self.next()
