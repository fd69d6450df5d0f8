"""The seams an extension installs itself through on a server: the extensions offered in
`server/discover` and the methods they serve, the `tools/list` filters, the tool options an
extension takes and the check that admits a tool carrying them, the tool-call interceptor,
and the services run beside the server. What they are is `mcpkit.server.extensions`'; what
an extension may import is gathered in `mcpkit.server.extending`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from mcpkit.server.extension_options import tool_option_owner
from mcpkit.server.extensions import (
    Extensions,
    MethodHandler,
    Service,
    ToolInterceptor,
    ToolOptionsCheck,
)
from mcpkit.server.mounting import Mounting
from mcpkit.server.tool_filters import ToolFilter
from mcpkit.server.tools import CORE_TOOL_OPTIONS, Tool
from mcpkit.server.view import Handler

__all__ = [
    "ExtensionSeams",
]


class ExtensionSeams(Mounting):
    """The extension seams of `Server` (its attributes are set by `Server.__init__`)."""

    routes: dict[str, Handler]
    extensions: Extensions
    tool_filters: list[ToolFilter]
    tool_interceptor: ToolInterceptor | None
    tool_option_checks: dict[str, ToolOptionsCheck]
    services: list[Service]

    def extension(self, ident: str, settings: Mapping[str, Any] | None = None) -> None:
        """Offer the extension `ident` (`com.example/search`) in `server/discover`, with its
        settings object (`{}` when None). A prefix whose second label is `modelcontextprotocol`
        or `mcp` is the specification's (META-2): only its published extensions may use it.
        Declaring again replaces the settings."""
        self.extensions.declare(ident, settings)
        self._changed()

    def add_method(self, name: str, handler: MethodHandler, *, extension: str,
                   gated: bool = True) -> None:
        """Serve the request method `name` for the extension `extension` (declared first):
        `await handler(params, ctx)` returns its result. Only requests whose `_meta` declares
        the extension reach it; the others get -32021 naming it. `gated=False` is for an
        extension whose methods a client may call once the server offers it, declared or
        not (Skills: the offer is the commitment). Legacy sessions never reach either, since
        the 2025-11-25 handshake has no extensions."""
        self.routes[name] = self.extensions.gate(name, handler, extension, self.routes,
                                                  gated=gated)

    def add_tool_filter(self, admits: ToolFilter) -> None:
        """Show a tool in a request's `tools/list` only if `admits(tool, ctx)` says so (MCP
        Apps hides the tools meant only for its views from a caller without Apps). Lists are
        cached per set of tools left out; calls are not refused (`mcpkit.server.tool_filters`)."""
        if not callable(admits):
            raise TypeError(f"a tool filter is a callable (tool, ctx) -> bool, not {admits!r}")
        self.tool_filters.append(admits)
        self._changed("tools")

    def admit_tool(self, tool: Tool) -> None:
        """Refuse, before it is registered, a tool this server could not serve as declared: one
        carrying an option no extension installed here takes (`take_tool_options`); the
        extensions that take its options check their values and say whether its calls are
        intercepted (`Tool.intercepted`). A tool served by the server it came from (`mount`) is
        that server's to run."""
        if tool.delegate is not None or not tool.extension_options:
            return
        checks: list[ToolOptionsCheck] = []
        for option, value in tool.extension_options.items():
            check = self.tool_option_checks.get(option)
            if check is None:
                owner = tool_option_owner(option)
                if owner is None:
                    raise ValueError(
                        f"tool {tool.name!r}: {option}={value!r} is no option of the core "
                        "Server and no extension on this server takes it; install the one "
                        "that does before registering the tool, or use mcpkit.Server, which "
                        "installs the official ones")
                raise ValueError(f"tool {tool.name!r}: {option}={value!r} needs {owner.owner} "
                                 f"on this server; {owner.install}")
            if check not in checks:
                checks.append(check)
        tool.intercepted = any([check(tool) for check in checks])

    def take_tool_options(self, options: Iterable[str], check: ToolOptionsCheck) -> None:
        """An extension takes these tool options on this server: a tool registered with any
        of them is handed to `check` (`mcpkit.server.extensions.ToolOptionsCheck`) before it is
        admitted. An option the core knows, or one another extension takes, is refused."""
        if not callable(check):
            raise TypeError(f"take_tool_options takes a callable check, not {check!r}")
        for option in options:
            if option in CORE_TOOL_OPTIONS:
                raise ValueError(f"tool option {option!r} is the core's own")
            taken = self.tool_option_checks.get(option)
            if taken is not None and taken != check:
                raise ValueError(f"server {self.name!r}: the tool option {option!r} is taken "
                                 "already")
            self.tool_option_checks[option] = check

    def intercept_tool_calls(self, interceptor: ToolInterceptor) -> None:
        """Hand the calls of the tools an extension's check marked (`Tool.intercepted`) to
        `interceptor` (one per server), after the middleware chain and the method's own checks
        (`mcpkit.server.extensions.ToolInterceptor`)."""
        if not callable(interceptor):
            raise TypeError(f"intercept_tool_calls takes an async callable, not {interceptor!r}")
        if self.tool_interceptor is not None and self.tool_interceptor != interceptor:
            raise ValueError(f"server {self.name!r}: its tool calls are intercepted already")
        self.tool_interceptor = interceptor

    def add_service(self, service: Service) -> None:
        """Run `service` beside the server: every transport starts it when it starts serving
        and drains it, with `ServerOptions.grace_s`, when it stops
        (`mcpkit.server.extensions.Service`)."""
        if service not in self.services:
            self.services.append(service)

    def start_services(self) -> None:
        """The server starts serving: start what extensions run beside it."""
        for service in self.services:
            service.start()

    async def drain_services(self, grace_s: float) -> None:
        """The server is stopping: drain what extensions run beside it, all at once."""
        if self.services:
            await asyncio.gather(*(service.drain(grace_s) for service in self.services))
