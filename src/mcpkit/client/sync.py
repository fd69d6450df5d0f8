"""`SyncClient`: the `Client` without `await`, for scripts and notebooks.

One `Client` runs on an event loop of its own, in a daemon thread this object starts; each
method hands its coroutine to that loop (`asyncio.run_coroutine_threadsafe`) and blocks until
it is done. The caller's thread needs no loop, and may already run one (a Jupyter kernel): the
client's loop is another, so nothing nests. What a call raises is what the `Client` raised, the
same exception object, so `except InvalidParamsError` reads the same in both. Ctrl-C while a
call waits cancels that call on its loop (and so on the wire) and raises `KeyboardInterrupt`.

Handlers (`elicit=`, `sample=`, `on_log=`, a call's `progress=`) run on the client's thread.
They may not call this `SyncClient` back (that would wait on the loop they hold): doing so
raises `RuntimeError` at once instead of hanging.

`close()` (or leaving `with`) closes the client (a stdio server ends), then stops the loop and
joins the thread; a `SyncClient` that is dropped unclosed does the same when collected or at
exit. The API is `Client`'s, method for method (an extension's client half adds its own, as
`mcpkit.ext.tasks.SyncTaskClient` adds `start_tool` and `task` to `mcpkit.SyncClient`), and a
test holds the two to the same names and parameters; the one design rule it bends (one way to
do each thing) is bent here only, as a thin shell over the async client, with no logic of its
own.

May import the client's own modules and the standard library.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from typing import Any, Self, TypeVar, Unpack, overload

from mcpkit.client.client import DEFAULT_TIMEOUT, Client, Structured
from mcpkit.client.listen import Subscription
from mcpkit.client.options import LogHandler, ProgressHandler
from mcpkit.client.results import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from mcpkit.client.tool_calls import CallOptions
from mcpkit.client.tools import RejectedTool

__all__ = [
    "SyncClient",
    "SyncSubscription",
]

T = TypeVar("T")
R = TypeVar("R")


class _LoopThread:
    """An event loop running forever in a daemon thread, until `stop()`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="mcpkit-sync-client",
                                       daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        if threading.get_ident() == self.thread.ident:
            coro.close()
            raise RuntimeError(
                "SyncClient: called from its own event loop (inside a handler?); a handler "
                "runs on the client's thread and cannot wait for the client")
        if not self.thread.is_alive():
            coro.close()
            raise RuntimeError("SyncClient: it was closed; make a new one")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            if not future.done():  # interrupted (Ctrl-C): cancel the call on its loop
                future.cancel()
            raise

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            if threading.get_ident() != self.thread.ident:
                self.thread.join()


def _shut(runner: _LoopThread, client: Client) -> None:
    """Close the client on its loop, then end the loop (also what collection or exit does)."""
    if runner.thread.is_alive() and threading.get_ident() != runner.thread.ident:
        try:
            runner.run(client.close())
        finally:
            runner.stop()


class SyncSubscription:
    """A listen stream without `await`: `with client.listen(tools=True) as sub: for note in
    sub: ...`."""

    def __init__(self, runner: _LoopThread, opened: Coroutine[Any, Any, Subscription]) -> None:
        self._runner = runner
        self._opening: Coroutine[Any, Any, Subscription] | None = opened
        self._sub: Subscription | None = None

    def start(self) -> SyncSubscription:
        if self._opening is not None:
            opening, self._opening = self._opening, None
            self._sub = self._runner.run(opening)
        return self

    @property
    def acknowledged(self) -> dict[str, Any] | None:
        """What the server agreed to send, once started."""
        return self._sub.acknowledged if self._sub is not None else None

    def close(self) -> None:
        if self._opening is not None:
            self._opening.close()
            self._opening = None
        if self._sub is not None:
            self._runner.run(self._sub.close())

    def __enter__(self) -> SyncSubscription:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        sub = self.start()._sub
        assert sub is not None
        while True:
            try:
                yield self._runner.run(_next(sub))
            except StopAsyncIteration:
                return


async def _next(sub: Subscription) -> dict[str, Any]:
    return await sub.__anext__()


async def _subscription(client: Client, **kinds: Any) -> Subscription:
    return await client.listen(**kinds).start()


class SyncClient:
    """A `Client` without `await`: `with SyncClient(StdioServer("...")) as client:
    client.call_tool("add", {"a": 1, "b": 2})`.

    `target` and the keyword arguments are `Client`'s (a connector or an open transport, the
    handlers, `options`); a `Client` object is wrapped as it is. Every method is the
    `Client` method of the same name, run on the client's own thread (see the module).
    """

    client_class: type[Client] = Client
    """The async client made for a `target` that is not one already (`mcpkit.SyncClient`
    makes an `mcpkit.Client`, with what its extensions add)."""

    def __init__(self, target: Any, **client_options: Any) -> None:
        client = target if isinstance(target, Client) else \
            self.client_class(target, **client_options)
        self.client: Client = client
        """The async client underneath (its methods must run on the client's loop)."""
        self._runner = _LoopThread()
        self._closer = weakref.finalize(self, _shut, self._runner, client)

    # -- connection ------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> Self:
        """Open the transport and settle the era (done on first use when not called)."""
        self._runner.run(self.client.connect())
        return self

    def close(self) -> None:
        """Close the client (for stdio: end the server process), then its loop and thread."""
        self._closer()

    @property
    def closed(self) -> bool:
        return not self._closer.alive

    def run(self, coro: Coroutine[Any, Any, R]) -> R:
        """Run `coro` on the client's loop and wait for its end: how a method of this class
        waits, and the seam an extension's client half builds on (`mcpkit.ext.tasks`)."""
        return self._runner.run(coro)

    # -- what the client knows -------------------------------------------------------------

    @property
    def era(self) -> str | None:
        return self.client.era

    @property
    def protocol_version(self) -> str | None:
        return self.client.protocol_version

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.client.server_info

    @property
    def server_capabilities(self) -> dict[str, Any] | None:
        return self.client.server_capabilities

    @property
    def server_extensions(self) -> dict[str, Any]:
        return self.client.server_extensions

    @property
    def instructions(self) -> str | None:
        return self.client.instructions

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.client.capabilities

    @property
    def tools(self) -> dict[str, Tool]:
        return self.client.tools

    @property
    def rejected_tools(self) -> list[RejectedTool]:
        return self.client.rejected_tools

    # -- the calls -------------------------------------------------------------------------

    def request(self, method: str, params: Mapping[str, Any] | None = None, *,
                meta: Mapping[str, Any] | None = None,
                progress: ProgressHandler | None = None, log: LogHandler | None = None,
                log_level: str | None = None,
                timeout: float | None = DEFAULT_TIMEOUT) -> dict[str, Any]:
        return self._runner.run(self.client.request(
            method, params, meta=meta, progress=progress, log=log, log_level=log_level,
            timeout=timeout))

    def discover(self, *, fresh: bool = False) -> dict[str, Any]:
        return self._runner.run(self.client.discover(fresh=fresh))

    def list_tools(self, *, fresh: bool = False) -> list[Tool]:
        return self._runner.run(self.client.list_tools(fresh=fresh))

    def list_resources(self, *, fresh: bool = False) -> list[Resource]:
        return self._runner.run(self.client.list_resources(fresh=fresh))

    def list_resource_templates(self, *, fresh: bool = False) -> list[ResourceTemplate]:
        return self._runner.run(self.client.list_resource_templates(fresh=fresh))

    def list_prompts(self, *, fresh: bool = False) -> list[Prompt]:
        return self._runner.run(self.client.list_prompts(fresh=fresh))

    @overload
    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: None = None, **options: Unpack[CallOptions]
                  ) -> CallToolResult[Structured]: ...

    @overload
    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: type[T], **options: Unpack[CallOptions]) -> CallToolResult[T]: ...

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  result: Any = None, **options: Unpack[CallOptions]) -> CallToolResult[Any]:
        """`Client.call_tool`: the tool's result, `result=` reading its structured content."""
        called: CallToolResult[Any] = self._runner.run(
            self.client.call_tool(name, arguments, result=result, **options))
        return called

    def read_resource(
        self, uri: str, *, fresh: bool = False, progress: ProgressHandler | None = None,
        log: LogHandler | None = None, timeout: float | None = DEFAULT_TIMEOUT,
        meta: Mapping[str, Any] | None = None, max_bytes: int | None = None,
    ) -> ReadResourceResult:
        return self._runner.run(self.client.read_resource(
            uri, fresh=fresh, progress=progress, log=log, timeout=timeout, meta=meta,
            max_bytes=max_bytes))

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *,
        progress: ProgressHandler | None = None, log: LogHandler | None = None,
        timeout: float | None = DEFAULT_TIMEOUT, meta: Mapping[str, Any] | None = None,
    ) -> GetPromptResult:
        return self._runner.run(self.client.get_prompt(
            name, arguments, progress=progress, log=log, timeout=timeout, meta=meta))

    def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, *,
        context: Mapping[str, str] | None = None, timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        return self._runner.run(self.client.complete(
            ref, argument, value, context=context, timeout=timeout))

    def listen(
        self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
        uris: Sequence[str] = (),
    ) -> SyncSubscription:
        """`Client.listen`: `with client.listen(tools=True) as sub: for note in sub: ...`."""
        return SyncSubscription(self._runner, _subscription(
            self.client, tools=tools, prompts=prompts, resources=resources, uris=uris))

    def invalidate(self) -> None:
        self.client.invalidate()

    def __repr__(self) -> str:
        return f"Sync{self.client!r}"
