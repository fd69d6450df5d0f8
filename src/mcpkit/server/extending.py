"""The server's API for extensions that run calls their own way (the Tasks extension).

An extension package (`mcpkit.ext.*`) builds on the public `Server` (`extension`, `add_method`,
`listen_parts`, `take_tool_options`, `intercept_tool_calls`, `add_service`) and on the names gathered here, which
are the seams the core keeps stable for it. Nothing else of the server's modules is its to
import, and no private name at all (`tests/test_layering.py` checks both for `mcpkit.ext.tasks`):

- running a tool's handler with a `Context` the extension holds: `run_handler` (one run, its
  failures raised) and `run_tool` (a plain call, its input rounds included);
- where the handler's reports and questions go: `Context.route_notifications` and
  `Context.ask_through` with a `Round` of the extension's own (`Round.given` are the answers
  the request brought; `InputRequired` ends a round that still needs input; `Question` and
  `check_question` are what a round is asked);
- the state a round seals and the backend behind it: `Sealer`;
- who a call belongs to, as stored: `principal_key`;
- announcing a change to `subscriptions/listen` streams: `Change`, on `Server.broker`;
- the extension's own options: `register_options` names its type in `ServerOptions.extensions`
  (read back with `ServerOptions.extension`), `describe_tool_options` says how to install it
  to a server refusing a tool that carries its tool options;
- the seams' own types: `Tool`, `Context`, `Service`, `ToolInterceptor`, `ToolOptionsCheck`,
  `MethodHandler`.

Imports the server's own modules only.
"""

from __future__ import annotations

from mcpkit.server.asking import Question, check_question
from mcpkit.server.context import Context, Notify
from mcpkit.server.extension_options import describe_tool_options, register_options
from mcpkit.server.extensions import MethodHandler, Service, ToolInterceptor, ToolOptionsCheck
from mcpkit.server.mrtr import InputRequired, Round
from mcpkit.server.sealing import Sealer, principal_key
from mcpkit.server.subscriptions import Change, ListenStream
from mcpkit.server.tools import Tool, ToolOptions, run_handler, run_tool

__all__ = [
    "Change",
    "Context",
    "InputRequired",
    "ListenStream",
    "MethodHandler",
    "Notify",
    "Question",
    "Round",
    "Sealer",
    "Service",
    "Tool",
    "ToolInterceptor",
    "ToolOptions",
    "ToolOptionsCheck",
    "check_question",
    "describe_tool_options",
    "principal_key",
    "register_options",
    "run_handler",
    "run_tool",
]
