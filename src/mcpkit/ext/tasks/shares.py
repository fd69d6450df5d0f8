"""Fair shares of a server's tasks: how many one principal may run and keep, and how many bytes.

One caller must not be able to take every task slot, or fill the store, for everyone else.
So each principal (`TaskRecord.owner`; every anonymous caller shares one) has a share, counted
in the store, so across replicas: `TaskOptions.max_active_per_principal` unfinished tasks,
`max_stored_per_principal` stored ones (finished ones count until their TTL) and
`max_stored_bytes_per_principal` bytes of records. The process itself runs at most
`max_running` tasks, whoever asked (the global cap).

A full share is the caller's own load, answered `TooManyTasksError` (-32602, HTTP 429) with how
long to wait: until the principal's first stored task expires for a stored share, the
suggested poll interval for the active one (a task of its own must end first). A full process
is `ServiceUnavailableError` ("busy", HTTP 503): another replica, or this one a moment later,
can serve it. Both are checked before the tool runs, and the share again, atomically, when
the task is stored (two replicas never both take its last place); a result that would take
the principal over its bytes is stored as a failure saying so.

The check before the tool runs reads the share from the store, and a read that found room
for several more tasks vouches for them for a second (`Room`): the calls that follow it in
this process take that room without reading again, one place each, and the first call that
finds none left (or the second over) reads again. A task that ends gives back nothing here,
so a share read this way is never fuller than the store says: at worst, for that second,
tasks another replica created are not seen before the tool runs, and the atomic count when
the task is stored refuses it then, as it does for two replicas starting a task at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from mcpkit.errors import ServiceUnavailableError, TooManyTasksError
from mcpkit.ext.tasks.records import TaskQuota, TaskStore, TaskUsage

if TYPE_CHECKING:
    from mcpkit.ext.tasks.options import TaskOptions

__all__ = [
    "Holder",
    "Room",
    "check_capacity",
    "quota",
    "refusal",
    "result_over_share",
]

_ROOM_S: Final = 1.0
"""How long a share read from the store vouches for the places it found free (seconds)."""
_ROOM_OWNERS: Final = 1024
"""Principals whose room is remembered at once; past it the memory starts again."""

_WHAT = {
    "active": ("unfinished tasks", "max_active_per_principal"),
    "stored": ("stored tasks", "max_stored_per_principal"),
    "bytes": ("bytes of stored tasks", "max_stored_bytes_per_principal"),
}


def quota(options: TaskOptions) -> TaskQuota:
    return TaskQuota(options.max_active_per_principal, options.max_stored_per_principal,
                     options.max_stored_bytes_per_principal)


def _wait_s(options: TaskOptions, share: str, usage: TaskUsage, now: float) -> int:
    if share != "active" and usage.next_expiry is not None:
        return max(1, math.ceil(usage.next_expiry - now))
    return max(1, math.ceil(options.poll_interval_ms / 1000))


def refusal(runtime: Holder, tool: str, usage: TaskUsage, share: str | None = None
            ) -> TooManyTasksError:
    """The answer to a call whose principal's `share` is full (by default the first share
    `usage` fills; the bytes when only the new record itself would overflow them)."""
    options = runtime.options
    share = share or usage.full(quota(options), 0) or "bytes"
    what, option = _WHAT[share]
    limit = getattr(options, option)
    held = {"active": usage.active, "stored": usage.stored, "bytes": usage.bytes}[share]
    wait = _wait_s(options, share, usage, runtime.clock())
    return TooManyTasksError(
        f"tool {tool!r}: this caller already has {held} {what}, its share is {limit} "
        f"(TaskOptions.{option}); try again in {wait} s", share, limit, wait)


async def check_capacity(runtime: Holder, tool: str, owner: str | None) -> None:
    """Refuse a task call before its tool runs: the process is full, or the caller's share."""
    options = runtime.options
    limit = options.max_running
    if len(runtime.jobs) + runtime.starting >= limit:
        wait = max(1, math.ceil(options.poll_interval_ms / 1000))
        raise ServiceUnavailableError(
            f"tool {tool!r}: this server is already running its limit of {limit} tasks "
            f"(TaskOptions.max_running); try again in {wait} s", "busy", wait)
    if runtime.room.take(owner):
        return
    usage = await runtime.store.usage(owner, runtime.clock())
    limits = quota(options)
    share = usage.full(limits, 0)
    if share is not None:
        raise refusal(runtime, tool, usage, share)
    runtime.room.found(owner, usage, limits)


async def result_over_share(runtime: Holder, owner: str | None, size: int) -> str | None:
    """Why a result of `size` bytes may not be stored for `owner`, or None when it fits."""
    limit = runtime.options.max_stored_bytes_per_principal
    runtime.room.forget(owner)  # the bytes it stores count: the next call reads them
    usage = await runtime.store.usage(owner, runtime.clock())
    if usage.bytes + size <= limit:
        return None
    return (f"a result of {size} bytes would take this caller's stored tasks over their share "
            f"of {limit} bytes (TaskOptions.max_stored_bytes_per_principal)")


class Holder(Protocol):
    """What shares are counted against: the tasks of one process (`TaskKeeper`)."""

    @property
    def options(self) -> TaskOptions: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def jobs(self) -> Mapping[str, Any]: ...

    @property
    def starting(self) -> int:
        """Calls running their tool within the synchronous budget."""

    @property
    def store(self) -> TaskStore: ...

    @property
    def room(self) -> Room: ...


class Room:
    """Places in each principal's share that a read of the store found free, for `_ROOM_S`
    seconds: each call that takes one skips a read of the store before its tool runs."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._left: dict[str | None, tuple[int, float]] = {}

    def take(self, owner: str | None) -> bool:
        """One place for `owner` without reading the store, if a recent read left one."""
        left, until = self._left.get(owner, (0, 0.0))
        if left <= 0 or self._clock() >= until:
            return False
        self._left[owner] = (left - 1, until)
        return True

    def found(self, owner: str | None, usage: TaskUsage, limits: TaskQuota) -> None:
        """A read found `usage` with room: the call that read takes one place of it."""
        if len(self._left) >= _ROOM_OWNERS:
            self._left.clear()
        free = min(limits.active - usage.active, limits.stored - usage.stored)
        self._left[owner] = (free - 1, self._clock() + _ROOM_S)

    def forget(self, owner: str | None) -> None:
        self._left.pop(owner, None)
