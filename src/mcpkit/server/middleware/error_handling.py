"""`ErrorHandlingMiddleware`: exceptions of one type answered as a tool error or a JSON-RPC
error of your choosing.

    ErrorHandlingMiddleware({
        LookupError: ToolError,                     # the tool's isError, with the message
        PermissionError: InvalidParamsError,        # -32602 with the message
        TimeoutError: lambda exc: InternalError("the backend timed out"),
    })

A handler's exception passes up through the chain (`mcpkit.server.middleware`); this link
matches it against the table by its class's MRO (the most specific entry wins) and raises
what the entry makes instead: an exception class is called with the original's message, a
function with the exception. A `ToolError` is the call's `isError` result in `tools/call`
(elsewhere, -32603 naming the resource or prompt); an `RPCError` travels as itself. What
the table does not name goes on as it came, to be answered as without middleware (with an
error id, the traceback logged). The original is the new exception's `__cause__`, so a log
further out still has it.

Imports the server's middleware module and `mcpkit.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.errors import MCPError
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext

__all__ = ["ErrorHandlingMiddleware"]

Mapped = type[MCPError] | Callable[[BaseException], BaseException]


class ErrorHandlingMiddleware(Middleware):
    """Raise what `mapping` names for an exception of a listed type."""

    def __init__(self, mapping: Mapping[type[BaseException], Mapped]) -> None:
        for kind, target in mapping.items():
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                raise TypeError(f"ErrorHandlingMiddleware: {kind!r} is not an exception class")
            if not callable(target):
                raise TypeError(f"ErrorHandlingMiddleware: {kind.__name__} maps to {target!r}, "
                                "which is neither an exception class nor a function")
        self.mapping = dict(mapping)

    def mapped(self, exc: BaseException) -> BaseException | None:
        for kind in type(exc).__mro__:
            target = self.mapping.get(kind)
            if target is not None:
                if isinstance(target, type):
                    made_of_class: BaseException = target(str(exc) or type(exc).__name__)
                    return made_of_class
                made = target(exc)
                if not isinstance(made, BaseException):
                    raise TypeError(f"ErrorHandlingMiddleware: the function for "
                                    f"{kind.__name__} returned {made!r}, not an exception")
                return made
        return None

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        try:
            return await call_next(context)
        except Exception as exc:
            made = self.mapped(exc)
            if made is None or made is exc:
                raise
            raise made from exc
