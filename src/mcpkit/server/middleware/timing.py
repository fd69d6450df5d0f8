"""`TimingMiddleware`: how long each request took, in the log and on its OpenTelemetry span.

The time is measured from this link to the end of what it wraps (the links after it and the
method), so placed first it is the whole request as the server served it. One log line per
request (logger `mcpkit.timing`, INFO; WARNING past `slow_s`), and, while tracing is on, the
attribute `mcpkit.handler.duration` (seconds) on the request's SERVER span
(`mcpkit.tracing`), which stays the current span while the chain runs.

Imports the server's middleware module and `mcpkit.tracing`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.tracing.conventions import Attr
from mcpkit.tracing.spans import note_attributes

__all__ = ["TimingMiddleware"]


class TimingMiddleware(Middleware):
    """Log each request's duration and put it on its span."""

    def __init__(self, logger: logging.Logger | None = None, *, level: int = logging.INFO,
                 slow_s: float | None = None) -> None:
        self.logger = logger or logging.getLogger("mcpkit.timing")
        self.level = level
        self.slow_s = slow_s
        """Past this many seconds a request is logged at WARNING."""

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        start = time.perf_counter()
        outcome = "failed"
        try:
            result = await call_next(context)
            outcome = "isError" if result.get("isError") is True else "ok"
            return result
        finally:
            elapsed = time.perf_counter() - start
            note_attributes({Attr.HANDLER_DURATION: elapsed})
            level = self.level if self.slow_s is None or elapsed < self.slow_s else (
                logging.WARNING)
            if self.logger.isEnabledFor(level):
                target = context.name or context.uri
                self.logger.log(level, "%s%s took %.3f ms (%s)", context.method,
                                f" {target!r}" if target else "", elapsed * 1e3, outcome)
