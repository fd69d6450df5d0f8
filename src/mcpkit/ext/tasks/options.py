"""The Tasks extension's options: the server's (`TaskOptions`, in `ServerOptions.extensions`
under `"tasks"`) and a tool's (`task=`, `resumable=`), taken on a server by `enable_tasks`.

`tools/call` of a tool registered with `task="optional"` or `task="required"` is handed to the
server's tool-call interceptor, the extension's runtime; the core carries these options for
it (`Tool.extension_options`) and refuses them on a server without the extension.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from mcpkit.server.extending import (
    Tool,
    ToolOptions,
    describe_tool_options,
    register_options,
)

if TYPE_CHECKING:
    from mcpkit.server.options import ServerOptions

__all__ = [
    "OPTIONS_NAME",
    "TASK_MODES",
    "TASK_TOOL_OPTIONS",
    "TaskMode",
    "TaskOptions",
    "TaskToolOptions",
    "check_task_tool",
    "is_resumable",
    "options_in",
    "task_mode",
]

TaskMode = Literal["optional", "required"]
TASK_MODES: tuple[TaskMode, ...] = ("optional", "required")

OPTIONS_NAME: Final = "tasks"
"""The name of `TaskOptions` in `ServerOptions.extensions` and of the command line's settings
(`tasks.lease_s`, `MCPKIT_TASKS_LEASE_S`)."""

TASK_TOOL_OPTIONS: Final = ("task", "resumable")
"""The tool options the extension takes (`TaskToolOptions`)."""


class TaskToolOptions(ToolOptions, total=False):
    """A tool's options on a server that runs tasks (`mcpkit.Server.tool`): the core's, and
    the extension's own."""

    task: TaskMode
    """"optional": a call from a client speaking the Tasks extension becomes a task when it
    outlasts `TaskOptions.sync_budget_s`; "required": it always does, and a caller without the
    extension gets -32021. Left out: the tool always answers in the call."""
    resumable: bool
    """A task of it may be run again from the start when the process running it died (only
    for a tool whose work is safe to repeat); otherwise such a task ends `failed`."""


def task_mode(tool: Tool) -> TaskMode | None:
    """Whether a call of `tool` may become a task; None: never."""
    mode: TaskMode | None = tool.extension_options.get("task")
    return mode


def is_resumable(tool: Tool) -> bool:
    return bool(tool.extension_options.get("resumable", False))


def check_task_tool(tool: Tool) -> bool:
    """The extension's `ToolOptionsCheck`: `task=` checked; True (its calls are the
    runtime's) for a `task=` tool."""
    task = tool.extension_options.get("task")
    if task is not None and task not in TASK_MODES:
        raise ValueError(f"tool {tool.name!r}: task must be \"optional\" or \"required\" "
                         f"(or left out: never a task), not {task!r}")
    return task is not None


def options_in(options: ServerOptions) -> TaskOptions:
    """The `TaskOptions` of `ServerOptions.extensions`, or the defaults."""
    return options.extension(OPTIONS_NAME, TaskOptions)


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """How a server runs tasks (`ServerOptions(extensions={"tasks": TaskOptions(...)})`, or
    `enable_tasks(server, TaskOptions(...))`); each has a default that is safe."""

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


register_options(OPTIONS_NAME, TaskOptions)
describe_tool_options(TASK_TOOL_OPTIONS, "the Tasks extension",
                      "call mcpkit.ext.tasks.enable_tasks(server) before registering it, or use "
                      "mcpkit.Server, which does")
