"""What a server offers beyond the core: extensions, and the methods they add.

An extension is declared once (`Server.extension`) and then shows in `server/discover`. The
methods it adds join the server's routes like the core's own, behind one gate: a request
reaches them only when its own `_meta` declares the extension (CAP-6, TASK-14), so a client
that never opted in gets a -32021 naming what to declare rather than a behaviour it did not
ask for. Tasks, Skills and Apps are built this way, with no line of the core dispatch aware
of them.

More seams serve an extension that runs calls its own way: a `ToolOptionsCheck`
(`Server.take_tool_options`) checks, at registration, the tool options the extension takes
(the core keeps any it does not know for the extension, and refuses them where none takes
them) and marks the tools whose calls it runs; a `ToolInterceptor`
(`Server.intercept_tool_calls`) is handed the calls of those tools, after the middleware chain
and the method's own checks, and answers them (at once, or later through methods of its
own); a `Service` (`Server.add_service`) is started when a transport starts
serving and drained when it stops, for work that outlives a request.

Imports `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types`, `mcpkit.server.guards` and
`mcpkit.server.context` (which imports none of the server's modules that import this one);
`Tool` only for its type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.errors import MissingRequiredClientCapabilityError
from mcpkit.protocol.extensions import check_extension_id, declared, requirement
from mcpkit.server.context import Context
from mcpkit.server.guards import guarded
from mcpkit.types.methods import METHODS

if TYPE_CHECKING:
    from mcpkit.server.tools import Tool

__all__ = [
    "Extensions",
    "MethodHandler",
    "Service",
    "ToolInterceptor",
    "ToolOptionsCheck",
]

MethodHandler = Callable[[dict[str, Any], "Context"], Awaitable[dict[str, Any]]]
"""An added method: the request's params (an empty dict when it sent none) and its `Context`
-> the result object (its `resultType` included); raises `RPCError` for an error answer."""

ToolOptionsCheck = Callable[["Tool"], bool]
"""Checks, when a tool is admitted, the options of it the extension takes
(`Tool.extension_options`): raises ValueError, naming the tool and the option, for a value it
cannot serve; True hands the tool's calls to the server's `ToolInterceptor`."""

ToolInterceptor = Callable[["Tool", dict[str, Any], "Context"], Awaitable[dict[str, Any]]]
"""Serves a call of a tool an extension's `ToolOptionsCheck` marked (`Tool.intercepted`): the
tool, the checked `tools/call` params and the request's `Context` -> the call's result. It runs after the middleware chain and the
method's checks; what it raises is answered as the tool's own failure would be, except that
the chain no longer sees it (the interceptor answers its failures itself)."""


class Service(Protocol):
    """Work an extension runs beside the server, outliving single requests."""

    def start(self) -> None:
        """The server starts serving (called in its event loop by every transport)."""

    def drain(self, grace_s: float) -> Awaitable[None]:
        """The server is stopping: finish or hand back what runs within `grace_s` seconds.
        Done when nothing of the service runs here any more."""


class Extensions:
    """The extensions one server offers, with their settings, in the order declared."""

    __slots__ = ("offered",)

    def __init__(self) -> None:
        self.offered: dict[str, dict[str, Any]] = {}

    def declare(self, ident: str, settings: Mapping[str, Any] | None) -> None:
        check_extension_id(ident)
        if settings is not None and not isinstance(settings, Mapping):
            raise TypeError(
                f"extension {ident!r}: settings are a JSON object (a mapping), not "
                f"{type(settings).__name__}"
            )
        self.offered[ident] = dict(settings or {})

    def capabilities(self) -> dict[str, dict[str, Any]]:
        return {ident: dict(settings) for ident, settings in self.offered.items()}

    def gate(self, name: str, handler: MethodHandler, ident: str,
             routes: Mapping[str, Any], *, gated: bool = True) -> MethodHandler:
        """`handler` wrapped so that only requests declaring `ident` reach it (every request,
        when not `gated`); a method with a row in the method table is wrapped in its row's
        checks instead (`mcpkit.server.guards`: the row's capability column, not `gated`, says
        what a request must declare). ValueError for a name the core serves, one already added, or an
        extension not declared first."""
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(f"a method name is a non-empty string without spaces, not {name!r}")
        if ident not in self.offered:
            raise ValueError(
                f"method {name!r}: declare the extension {ident!r} first "
                f"(server.extension({ident!r}, settings))"
            )
        if name in routes:
            raise ValueError(f"method {name!r} is already served; an extension adds new methods")
        info = METHODS.get(name)
        if info is not None and info.extension != ident:
            owner = f"the extension {info.extension}" if info.extension else "the core protocol"
            raise ValueError(f"method {name!r} belongs to {owner}, not to {ident!r}")
        if not callable(handler):
            raise TypeError(f"method {name!r}: the handler must be an async callable")
        needed = requirement(ident)

        async def open_to_all(params: dict[str, Any] | None, ctx: Context) -> dict[str, Any]:
            return await handler(params if params is not None else {}, ctx)

        if info is not None:  # its row's capability and params columns decide, as for the core
            return guarded(info, open_to_all)
        if not gated:
            return open_to_all

        async def declared_only(params: dict[str, Any] | None, ctx: Context
                                ) -> dict[str, Any]:
            if declared(ctx.meta.client_capabilities, ident) is None:
                raise MissingRequiredClientCapabilityError(
                    needed,
                    f"{name} belongs to the extension {ident}, which this request did not "
                    "declare in _meta clientCapabilities.extensions",
                )
            return await handler(params if params is not None else {}, ctx)

        return declared_only
