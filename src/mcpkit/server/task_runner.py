"""The values of the `task=` tool option, and the Tasks extension's settings.

`tools/call` of a tool registered with `task="optional"` or `task="required"` is handed to the
server's tool-call interceptor (`Server.intercept_tool_calls`), which the Tasks extension
installs (`mcpkit.ext.tasks.enable_tasks`); the core knows nothing else of tasks.

`TaskOptions` lives here for as long as `ServerOptions.tasks` names its type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["TASK_MODES", "TaskMode", "TaskOptions"]

TaskMode = Literal["optional", "required"]
TASK_MODES: tuple[TaskMode, ...] = ("optional", "required")


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """How a server runs tasks (`ServerOptions.tasks`); each has a default that is safe."""

    store: Any = None
    """Where tasks are kept: a `TaskStore` (`mcpkit.ext.tasks.records`), a path to an SQLite file, `"sqlite:///path"`,
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
