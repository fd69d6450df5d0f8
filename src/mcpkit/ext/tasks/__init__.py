"""The Tasks extension (`io.modelcontextprotocol/tasks`): durable tasks for long-running
tools, both halves.

The client half (`handles`, `watch`, `client`, `sync`) is what `mcpkit.Client` and
`mcpkit.SyncClient` mix in: `TaskHandle`, `start_tool`, `task`, and `call_tool` waiting on a
task; it registers the `task` result kind with the core client at import
(`mcpkit.client.result_kinds`). The wire shapes and the method rows both halves share are in
`wire`. The rest is the server half.

`enable_tasks(server)` offers the extension in `server/discover`, adds `tasks/get`,
`tasks/update` and `tasks/cancel` through `Server.add_method`, the `taskIds` of
`subscriptions/listen` through `Server.listen_parts`, takes the tool options `task=` and
`resumable=` (`Server.take_tool_options`), and installs the `TaskRuntime` through the
core's public seams: as the server's tool-call interceptor (`Server.intercept_tool_calls`),
which `tools/call` of a `task=` tool reaches, and as a service the transports start and drain
(`Server.add_service`). `mcpkit.Server` calls it when the first such tool is registered, so an
application writes only `@server.tool(task="optional")`; the core `mcpkit.server.Server`
refuses a `task=` tool until it is called. `runtime_of(server)` is the runtime installed.
docs/tasks.md tells the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.ext.tasks.client import TaskCallOptions, TaskClient
from mcpkit.ext.tasks.handles import StatusHandler, TaskHandle
from mcpkit.ext.tasks.methods import TaskMethods
from mcpkit.ext.tasks.options import TASK_TOOL_OPTIONS, TaskOptions, check_task_tool
from mcpkit.ext.tasks.runtime import TaskRuntime
from mcpkit.ext.tasks.sync import SyncTaskClient, SyncTaskHandle
from mcpkit.ext.tasks.wire import TaskMethod
from mcpkit.protocol.extensions import TASKS

if TYPE_CHECKING:
    from mcpkit.server.server import Server

__all__ = [
    "TASKS",
    "StatusHandler",
    "SyncTaskClient",
    "SyncTaskHandle",
    "TaskCallOptions",
    "TaskClient",
    "TaskHandle",
    "TaskOptions",
    "TaskRuntime",
    "enable_tasks",
    "runtime_of",
]


def enable_tasks(server: Server, options: TaskOptions | None = None) -> TaskRuntime:
    """Serve the Tasks extension on `server` (once; a second call returns the same runtime)."""
    runtime = runtime_of(server)
    if runtime is not None:
        return runtime
    runtime = TaskRuntime(server, options)
    methods = TaskMethods(runtime)
    server.extension(TASKS, {})
    server.add_method(TaskMethod.GET, methods.get, extension=TASKS)
    server.add_method(TaskMethod.UPDATE, methods.update, extension=TASKS)
    server.add_method(TaskMethod.CANCEL, methods.cancel, extension=TASKS)
    server.listen_parts.append(methods.listen)
    server.take_tool_options(TASK_TOOL_OPTIONS, check_task_tool)
    server.intercept_tool_calls(runtime.call)
    server.add_service(runtime)
    return runtime


def runtime_of(server: Server) -> TaskRuntime | None:
    """The Tasks runtime `enable_tasks` installed on `server`, or None."""
    return next((s for s in server.services if isinstance(s, TaskRuntime)), None)
