"""`LoggingMiddleware`: one line per request: who asked what, and how it ended.

    tools/call 'add' from principal ["https://as","u1"] (my-client 1.0, modern): ok in 0.4 ms

Logger `mcpkit.requests`, INFO (errors at WARNING). The principal is the one the transport
authenticated, the client's name is what it says of itself. `include_params` adds the params
(without `_meta`) as JSON, cut at `max_chars`: off by default, since arguments may hold what a
log must not keep.

Imports the server's middleware and sealing modules and `mcpkit.errors`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson

from mcpkit.errors import RPCError
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.sealing import principal_key

__all__ = ["LoggingMiddleware"]


class LoggingMiddleware(Middleware):
    """A request log."""

    def __init__(self, logger: logging.Logger | None = None, *, level: int = logging.INFO,
                 include_params: bool = False, max_chars: int = 500) -> None:
        self.logger = logger or logging.getLogger("mcpkit.requests")
        self.level = level
        self.include_params = include_params
        self.max_chars = max_chars

    def _head(self, context: MiddlewareContext) -> str:
        target = context.name or context.uri
        head = context.method + (f" {target!r}" if target else "")
        key = principal_key(context.principal)
        head += f" from principal {key}" if key is not None else ""
        info = context.client_info or {}
        client = " ".join(str(info[k]) for k in ("name", "version") if k in info)
        head += f" ({client + ', ' if client else ''}{context.era}"
        head += f", depth {context.depth})" if context.depth else ")"
        if self.include_params:
            shown = {k: v for k, v in context.params.items() if k != "_meta"}
            text = orjson.dumps(shown, default=repr).decode()
            head += f" {text[:self.max_chars]}{'...' if len(text) > self.max_chars else ''}"
        return head

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            result = await call_next(context)
        except RPCError as exc:
            self._log(logging.WARNING, context, f"error {exc.code} {exc.message!r}", start)
            raise
        except BaseException as exc:
            self._log(logging.WARNING, context, f"raised {type(exc).__name__}", start)
            raise
        said = "isError" if result.get("isError") is True else result.get("resultType", "ok")
        self._log(self.level, context, str(said), start)
        return result

    def _log(self, level: int, context: MiddlewareContext, outcome: str, start: float) -> None:
        if self.logger.isEnabledFor(max(level, self.level)):
            self.logger.log(max(level, self.level), "%s: %s in %.1f ms", self._head(context),
                            outcome, (time.perf_counter() - start) * 1e3)
