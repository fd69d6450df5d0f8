"""The client's side of the Tasks extension (`io.modelcontextprotocol/tasks`): `TaskHandle`.

A server that speaks Tasks may answer a `tools/call` with a `CreateTaskResult` instead of the
tool's result (TASK-3), but only when that request declared the extension: this module
registers the `task` result kind with the core's request path at import
(`mcpkit.client.result_kinds`), with `admit_task` as its check. `mcpkit.Client.call_tool`
(`mcpkit.ext.tasks.client.TaskClient`) then waits here, transparently: it observes the task
until it ends and returns its result, as if the server had answered at once. `start_tool`
hands the application the handle itself (status, wait, update, cancel), and
`task(task_id)` rebuilds one after a restart.

Observing is `notifications/tasks` on a `subscriptions/listen` stream when the server agrees
to send them for the task (its acknowledgement lists the id), with a `tasks/get` now and then
as a backstop, or `tasks/get` at the server's `pollIntervalMs` otherwise. What the task asks
for (`inputRequests`) goes through the same handlers, and the same checks, as an MRTR round
(`InputHandlers.answer`), each key once (`mcpkit.ext.tasks.watch`), and the answers go back
in one `tasks/update`. Every `tasks/*` request (and `start_tool`'s `tools/call`) declares the
extension in its own `_meta` to a server that offers it, even when `ClientOptions.extensions`
does not: the server refuses them otherwise (TASK-14).

Takes the client's `ClientCore` (`mcpkit.client.core`, `Client.core`), and uses only the
client's public modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Generic, Protocol, TypeVar

from mcpkit.client.core import ClientCore
from mcpkit.client.inputs import InputRequest
from mcpkit.client.listen import Subscription
from mcpkit.client.result_kinds import register_result_kind
from mcpkit.client.results import CallToolResult
from mcpkit.client.structured import ResultReader
from mcpkit.client.tool_calls import checked_result
from mcpkit.errors import MCPError, ProtocolViolation, RequestTimeoutError
from mcpkit.ext.tasks.watch import MAX_POLL_S, TaskWatch, poll_delay
from mcpkit.ext.tasks.wire import CREATE_TASK_RESULT_TYPE, TaskMethod
from mcpkit.protocol.extensions import TASKS, declared
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY
from mcpkit.types.methods import Method

__all__ = [
    "CANCEL_WAIT_S",
    "TASK_METHODS",
    "StatusHandler",
    "TaskHandle",
    "admit_task",
    "handle_for",
    "reattached",
    "task_meta",
]

log = logging.getLogger("mcpkit.client")

T = TypeVar("T")

TASK_METHODS: Final = frozenset({Method.TOOLS_CALL})
"""The requests a server may answer with a task (TASK-2); any other is a protocol violation."""
CANCEL_WAIT_S: Final = 5.0
"""Longest wait for the acknowledgement of a `tasks/cancel` sent on the way out of a call
(a timeout, a cancelled coroutine): best effort, so a dead server cannot hold the caller."""


class StatusHandler(Protocol):
    """Hears each new state of a task: `handle.wait(on_status=handler)`."""

    def __call__(self, task: dict[str, Any], /) -> Awaitable[None] | None:
        """One state (`taskId`, `status`, `statusMessage`, ..., as `tasks/get` gives it).
        Raising does not end the wait: the exception is logged and waiting goes on."""


def task_meta(core: ClientCore, meta: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The `_meta` keys that make one request declare Tasks, to a server that offers them,
    when the client's capabilities do not already (None when nothing is added: a legacy
    server offers no extensions, so it is never sent one)."""
    if TASKS not in _offered(core) or declared(core.capabilities, TASKS) is not None:
        return dict(meta) if meta else None
    caps = dict(core.capabilities)
    caps["extensions"] = {**caps.get("extensions", {}), TASKS: {}}
    return {**(meta or {}), CLIENT_CAPABILITIES_KEY: caps}


def admit_task(method: str, params: Mapping[str, Any], what: str) -> None:
    """Raise unless a `CreateTaskResult` is a valid answer to this request (TASK-3)."""
    if method not in TASK_METHODS:
        raise ProtocolViolation(
            f'{what}: the server answered with a task (resultType "task"), which only '
            f"{', '.join(sorted(TASK_METHODS))} may return (TASK-2)")
    meta = params.get("_meta")
    caps = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, Mapping) else None
    if not isinstance(caps, Mapping) or declared(caps, TASKS) is None:
        raise ProtocolViolation(
            f'{what}: the server answered with a task (resultType "task") although this '
            f"request did not declare {TASKS}; a server may only do so for requests that "
            "declare it (TASK-3)")


class TaskHandle(Generic[T]):
    """One task a call became, or the result of a call that did not become one.

    `task_id` is None when the server answered at once: the handle is then already done, and
    `wait()` returns that result without a round trip. `T` is the type of the result's
    `data` (`start_tool(..., result=Sum)`).
    """

    def __init__(
        self, client: ClientCore, watch: TaskWatch | None,
        result: CallToolResult[T] | None = None,
        finish: Callable[[dict[str, Any]], CallToolResult[T]] | None = None,
    ) -> None:
        self._client = client
        self._watch = watch
        self._result = result
        self._finish = finish

    @property
    def task_id(self) -> str | None:
        """The server's id of the task (keep it to reattach later), or None: answered at once."""
        return self._watch.task_id if self._watch is not None else None

    @property
    def latest(self) -> dict[str, Any]:
        """The task's state as last seen, without a round trip."""
        if self._watch is None:
            return {"status": "completed",
                    "result": self._result.raw if self._result is not None else None}
        return dict(self._watch.latest)

    @property
    def done(self) -> bool:
        """Whether the task is known to have ended (completed, failed or cancelled)."""
        return self._watch is None or self._watch.terminal

    # -- the requests ----------------------------------------------------------------------

    async def _send(self, method: str, fields: dict[str, Any],
                    timeout: float | None = None) -> dict[str, Any]:
        core = self._client
        await core.connect()
        params = core.params(fields, meta=task_meta(core))
        if timeout is None:
            return await core.send(method, params)
        return await core.send(method, params, timeout=timeout)

    async def status(self) -> dict[str, Any]:
        """The task's current state (`tasks/get`): a DetailedTask, with its `result`, `error`
        or outstanding `inputRequests` as its status calls for."""
        watch = self._watch
        if watch is None:
            return self.latest
        if not watch.final:
            watch.see(await self._send(TaskMethod.GET, {"taskId": watch.task_id}))
        return dict(watch.latest)

    async def update(self, responses: Mapping[str, Mapping[str, Any]]) -> None:
        """Send answers to the task's input requests (`tasks/update`), by input request key;
        the server ignores keys that are not outstanding (TASK-10)."""
        watch = self._need_task("update")
        if not isinstance(responses, Mapping) or not all(
                isinstance(k, str) and isinstance(v, Mapping) for k, v in responses.items()):
            raise TypeError("update: responses map each input request key to its result "
                            "object, e.g. {'confirm': {'action': 'accept', 'content': {...}}}")
        fields = {"taskId": watch.task_id,
                  "inputResponses": {k: dict(v) for k, v in responses.items()}}
        await self._send(TaskMethod.UPDATE, fields)
        watch.answered.update(responses)

    async def cancel(self) -> None:
        """Ask the server to cancel the task (`tasks/cancel`). Cancelling is cooperative: the
        task may still end otherwise, which `status()` shows (TASK-11)."""
        if self._watch is None or self._watch.terminal:
            return
        await self._send(TaskMethod.CANCEL, {"taskId": self._watch.task_id})

    async def cancel_quietly(self) -> None:
        """`cancel()`, bounded by `CANCEL_WAIT_S` and never raising: for the way out of a call
        that is failing or being cancelled anyway."""
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(self.cancel(), CANCEL_WAIT_S)

    def _need_task(self, what: str) -> TaskWatch:
        if self._watch is None:
            raise ValueError(f"{what}: the server answered this call at once; there is no task")
        return self._watch

    # -- waiting ---------------------------------------------------------------------------

    async def wait(self, *, on_status: StatusHandler | None = None,
                   timeout: float | None = None) -> CallToolResult[T]:
        """The task's final result, once it ends: a completed task's `result`; a failed task
        raises its JSON-RPC error as its `RPCError` class, a cancelled one
        `TaskCancelledError`. Input the task asks for is answered on the way.

        `timeout` bounds the whole wait (None: until the task ends); when it passes,
        `RequestTimeoutError` is raised and the task is left running. Cancelling the waiting
        coroutine leaves it running too (`Client.call_tool` cancels it instead).
        """
        watch = self._watch
        if watch is None:
            assert self._result is not None
            return self._result
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        await _heard(on_status, dict(watch.latest))
        if not watch.final:
            await _Follower(self, on_status, deadline).run()
        result = watch.outcome()
        return self._finish(result) if self._finish is not None else CallToolResult(result,
                                                                                   watch.what)


class _Follower:
    """The loop of one wait: observe, answer, pause, until the task ends or time is up."""

    def __init__(self, handle: TaskHandle[Any], on_status: StatusHandler | None,
                 deadline: float | None) -> None:
        self.handle = handle
        self.core = handle._client
        watch = handle._watch
        assert watch is not None
        self.watch = watch
        self.on_status = on_status
        self.deadline = deadline
        self.loop = asyncio.get_running_loop()
        self.sub: Subscription | None = None

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - self.loop.time()

    async def run(self) -> None:
        if self.core.options.task_notifications:
            await self._subscribe()
        try:
            if self.sub is not None:
                await self._look()  # what changed before the stream was open
            if self.watch.terminal and not self.watch.final:
                await self._look()  # ended already, but the result is only in tasks/get
            while not self.watch.final:
                if await self._answer():
                    continue
                remaining = self.remaining()
                if remaining is not None and remaining <= 0:
                    raise RequestTimeoutError(
                        f"{self.watch.what}: task {self.watch.task_id!r} did not end within the "
                        "timeout; it was left running")
                if self.sub is not None and await self._heard_on_stream(remaining):
                    continue
                if self.sub is None:
                    await asyncio.sleep(poll_delay(self.watch.latest.get("pollIntervalMs"),
                                                   remaining))
                await self._look()
        finally:
            if self.sub is not None:
                await self.sub.close()

    async def _look(self) -> None:
        remaining = self.remaining()
        timeout = self.core.options.timeout
        if remaining is not None:
            timeout = max(0.001, remaining if timeout is None else min(timeout, remaining))
        result = await self.handle._send(TaskMethod.GET, {"taskId": self.watch.task_id},
                                         timeout)
        await self._observed(result)

    async def _observed(self, detailed: Mapping[str, Any]) -> None:
        if self.watch.see(detailed):
            await _heard(self.on_status, dict(self.watch.latest))

    async def _answer(self) -> bool:
        """Answer the input requests not answered yet; whether any were."""
        pending = self.watch.pending()
        if not pending:
            return False
        self.watch.answering(list(pending))
        inputs, server, what = self.core.inputs, self.core.server_info, self.watch.what
        responses: dict[str, Any] = {}
        for key, entry in pending.items():
            params = entry.get("params")
            request = InputRequest(entry["method"], params if type(params) is dict else {},
                                   server, what, key)
            responses[key] = await inputs.answer(request)
        await self.handle._send(TaskMethod.UPDATE, {"taskId": self.watch.task_id,
                                                      "inputResponses": responses})
        return True

    # -- notifications ---------------------------------------------------------------------

    async def _subscribe(self) -> None:
        """Open a listen stream for this task; keep it only if the server agreed to it."""
        core = self.core
        if TASKS not in _offered(core):
            return  # a server that does not offer Tasks has no notifications of them
        sub = Subscription(core, fields={"taskIds": [self.watch.task_id]},
                           meta=task_meta(core))
        try:
            await sub.start()
        except MCPError as exc:
            log.debug("%s: no task notifications (%s); polling", self.watch.what, exc)
            await sub.close()
            return
        except BaseException:
            await sub.close()  # cancelled while opening: the stream must not outlive the wait
            raise
        agreed = (sub.acknowledged or {}).get("taskIds")
        if isinstance(agreed, list) and self.watch.task_id in agreed:
            self.sub = sub
        else:
            await sub.close()

    async def _heard_on_stream(self, remaining: float | None) -> bool:
        """Wait for the next notification of the task, up to a backstop pause; whether one
        came (False: time for a `tasks/get`, or the stream ended)."""
        sub = self.sub
        assert sub is not None
        backstop = MAX_POLL_S if remaining is None else max(0.0, min(MAX_POLL_S, remaining))
        try:
            message = await asyncio.wait_for(sub.__anext__(), backstop)
        except TimeoutError:
            return False
        except (StopAsyncIteration, MCPError):
            self.sub = None  # the stream ended: poll from here on
            await sub.close()
            return False
        params = message.get("params")
        if message.get("method") != TaskMethod.NOTIFICATION or type(params) is not dict:
            return True
        if params.get("taskId") == self.watch.task_id:
            await self._observed(params)
        return True


def _offered(core: ClientCore) -> dict[str, Any]:
    caps = core.server_capabilities or {}
    ext = caps.get("extensions")
    return ext if type(ext) is dict else {}


async def _heard(handler: StatusHandler | None, task: dict[str, Any]) -> None:
    if handler is None:
        return
    try:
        reply = handler(task)
        if inspect.isawaitable(reply):
            await reply
    except Exception:
        log.exception("the task status handler failed (the wait goes on)")


def handle_for(core: ClientCore, created: Mapping[str, Any], what: str, name: str,
               reader: ResultReader[Any] | None = None) -> TaskHandle[Any]:
    """The handle of the task a call to tool `name` became."""
    watch = TaskWatch.created(created, what, core.options.max_rounds)
    return TaskHandle(core, watch, None, lambda r: checked_result(core, name, r, what, reader))


def reattached(core: ClientCore, task_id: str, reader: ResultReader[Any] | None = None
               ) -> TaskHandle[Any]:
    """The handle of a task known by id only (the tool is unknown: its result gets the
    CallToolResult checks, not a tool's output schema)."""
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"task: a task id is a non-empty string, not {task_id!r}")
    what = "tasks/get"  # messages then read "tasks/get: task '...' was cancelled"
    watch = TaskWatch.reattached(task_id, what, core.options.max_rounds)
    return TaskHandle(core, watch, None, lambda r: checked_result(core, None, r, what, reader))


register_result_kind(CREATE_TASK_RESULT_TYPE, admit_task)
