"""The seam between `tools/call` and the Tasks extension's runtime, and the runtime's settings.

The server layer must not import `mcpkit.ext` (the extension sits above it), yet `tools/call`
of a tool registered with `task="optional"` or `task="required"` has to reach the runtime. So
the server holds a `TaskRunner` (`Server.task_runner`), None until the extension installs one
(`mcpkit.ext.tasks.enable_tasks`, which `mcpkit.Server` calls as soon as a task tool is
registered); a plain tool never looks at it.

`TaskOptions` lives here too, so `ServerOptions.tasks` can name its type.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.tools import Tool
    from mcpkit.store.tasks import TaskStore

__all__ = ["TASK_MODES", "TaskMode", "TaskOptions", "TaskRunner"]

TaskMode = Literal["optional", "required"]
TASK_MODES: tuple[TaskMode, ...] = ("optional", "required")


class TaskRunner(Protocol):
    """What `tools/call` hands a task tool's call to, and what a stopping transport tells."""

    def call(self, tool: Tool, params: dict[str, Any], ctx: Context) -> Awaitable[dict[str, Any]]:
        """The call's result: the tool's own (synchronous), an `InputRequiredResult` (input
        needed before a task exists, TASK-9), or a `CreateTaskResult`."""

    def start(self) -> None:
        """The server starts serving (in its event loop): from now on the runner keeps the
        store's tasks, its own and those other processes left, as it does once a task runs."""

    def drain(self, grace_s: float) -> Awaitable[None]:
        """The server is stopping: start no task, hand back at once what another process
        can resume, give the rest `grace_s` seconds to finish and end what is left with a
        status that says why. Done when nothing of it runs here any more."""


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """How a server runs tasks (`ServerOptions.tasks`); each has a default that is safe."""

    store: TaskStore | str | Path | None = None
    """Where tasks are kept: a `TaskStore`, a path to an SQLite file, `"sqlite:///path"`,
    `"memory:"` (this process only: nothing survives a restart), or None: the SQLite file
    `tasks.sqlite3` in the user's data folder (`mcpkit keys path` shows that folder)."""
    sync_budget_s: float = 0.25
    """How long an optional task tool may run before the call becomes a task; one that
    finishes (or asks for input) sooner answers as a plain call."""
    ttl_ms: int | None = 3_600_000
    """How long a task is kept after it is created (its `ttlMs`); None: until deleted."""
    poll_interval_ms: int = 1000
    """The `pollIntervalMs` suggested to clients."""
    max_running: int = 100
    """Tasks this process runs at once, whoever started them; a call that would start one
    more is refused as a busy server (HTTP 503 with Retry-After)."""
    max_active_per_principal: int = 20
    """Unfinished tasks (working, input_required) one principal may have at once, counted in
    the store, so across replicas; one more is refused with -32602 (HTTP 429, Retry-After)."""
    max_stored_per_principal: int = 200
    """Tasks kept for one principal, finished ones included until their TTL."""
    max_stored_bytes_per_principal: int = 64 * 1024 * 1024
    """Bytes the stored tasks of one principal take: arguments (kept only while a resumable
    task may run again), answers and results."""
    input_wait_s: float | None = 900.0
    """How long a task may wait in input_required for an answer; then it is cancelled, saying
    so, and its place freed. None: until its TTL."""
    max_result_bytes: int = 4 * 1024 * 1024
    """Largest stored result (its JSON); a task whose result is larger ends `failed`."""
    heartbeat_s: float = 5.0
    """How often the running tasks' leases are renewed and the sweeper runs."""
    lease_s: float = 15.0
    """How long a heartbeat vouches for a running task; when it lapses the task's process is
    taken for dead (failed, or run again if its tool is resumable)."""
    max_attempts: int = 3
    """Times a resumable task is started at most after its process stopped without a word
    (its first run included); a start handed back by a stopping process does not count."""

    def __post_init__(self) -> None:
        for name in ("sync_budget_s", "heartbeat_s", "lease_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                raise ValueError(f"TaskOptions.{name} must be a non-negative number of seconds, "
                                 f"not {value!r}")
        if self.input_wait_s is not None and (
                not isinstance(self.input_wait_s, int | float) or isinstance(self.input_wait_s, bool)
                or not self.input_wait_s > 0):
            raise ValueError(f"TaskOptions.input_wait_s must be seconds above zero or None, "
                             f"not {self.input_wait_s!r}")
        for name in ("poll_interval_ms", "max_running", "max_result_bytes", "max_attempts",
                     "max_active_per_principal", "max_stored_per_principal",
                     "max_stored_bytes_per_principal"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"TaskOptions.{name} must be a positive integer, not {value!r}")
        if self.ttl_ms is not None and (not isinstance(self.ttl_ms, int)
                                        or isinstance(self.ttl_ms, bool) or self.ttl_ms < 1):
            raise ValueError(f"TaskOptions.ttl_ms must be a positive integer of milliseconds "
                             f"or None, not {self.ttl_ms!r}")
        if self.lease_s <= self.heartbeat_s:
            raise ValueError(f"TaskOptions.lease_s ({self.lease_s}) must be longer than "
                             f"heartbeat_s ({self.heartbeat_s}), or every lease lapses between "
                             "two heartbeats")
