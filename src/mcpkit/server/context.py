"""`Context`: what a handler may know and do about the request it is serving.

A handler gets one by annotating a parameter with `Context` (any name). The context reads the
request's checked `_meta` (never anything remembered from other requests) and sends only
request-scoped notifications: progress when the request gave a progress token, log messages
when it asked for a log level and at or above it. Both go to the `notify` callable that the
transport handed to `Server.handle`, so they travel on this request's own stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol.codec import RequestId, notification_message
from mcpkit.protocol.envelope import RequestMeta
from mcpkit.types.constants import LOG_LEVELS, PROGRESS_TOKEN_KEY, Method

__all__ = ["Context", "Notify"]

Notify = Callable[[dict[str, Any]], Awaitable[None]]
_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}


class Context:
    """The request being served, as a handler sees it."""

    __slots__ = ("_last_progress", "_notify", "meta", "method", "principal", "request_id", "server")

    def __init__(
        self,
        server: Any,
        method: str,
        request_id: RequestId | None,
        meta: RequestMeta,
        notify: Notify | None,
        principal: Any = None,
    ) -> None:
        self.server = server
        self.method = method
        self.request_id = request_id
        self.meta = meta
        self.principal = principal
        self._notify = notify
        self._last_progress: float | None = None

    @property
    def client_info(self) -> dict[str, Any] | None:
        """Self-reported by the client: for display and logs, never for decisions (META-8)."""
        return self.meta.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def trace(self) -> dict[str, str]:
        """W3C trace context (`traceparent`, `tracestate`, `baggage`) the request carried."""
        return self.meta.trace

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress`, if the client asked for progress on this request.

        Progress must grow with each report (PROG-3); a report that does not is a bug in the
        handler and raises ValueError rather than confusing the client.
        """
        token = self.meta.progress_token
        if token is None or self._notify is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(
                f"{self.method}: progress must increase with each report "
                f"({progress} after {self._last_progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {PROGRESS_TOKEN_KEY: token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._notify(notification_message(Method.PROGRESS, params))

    def log_enabled(self, level: str) -> bool:
        wanted = self.meta.log_level
        return wanted is not None and _RANK[level] >= _RANK[wanted]

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` if the request opted in at this level or lower."""
        if level not in _RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._notify is None or not self.log_enabled(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._notify(notification_message(Method.MESSAGE, params))

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)
