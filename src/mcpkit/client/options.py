"""`ClientOptions`, the callback types of a call, and the errors only the client raises.

Every option has a safe default, so `Client(connector)` alone is a correct client. The errors
here are raised on this side only and carry no JSON-RPC code (MSG-16): nothing the server said
can be mistaken for them.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.errors import InputRoundsExceededError, RequestTimeoutError
from mcpkit.types.constants import LEGACY_VERSION, LOG_LEVELS, TRACE_KEYS, Method

__all__ = [
    "ClientOptions",
    "InputRoundsExceededError",
    "LogHandler",
    "ProgressHandler",
    "RequestTimeoutError",
    "call_notifications",
    "otel_trace_context",
    "valid_trace_context",
]

ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""`progress(progress, total, message)` for each `notifications/progress` of a call."""
LogHandler = Callable[[str, Any, str | None], Awaitable[None] | None]
"""`log(level, data, logger)` for each `notifications/message`."""
TraceContext = Callable[[], Mapping[str, str]]
"""Returns the current W3C trace context: `traceparent`, and optionally `tracestate`, `baggage`."""


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Settings of one Client; each has a safe default."""

    era: Literal["auto", "modern", "legacy"] = "auto"
    """`auto` probes (VER-9/VER-12); `modern` or `legacy` pins the era and skips the probe."""
    protocol_version: str | None = None
    """Modern version to speak; default: the newest both sides support."""
    legacy_version: str = LEGACY_VERSION
    """Version offered in `initialize`."""
    timeout: float | None = 60.0
    """Seconds to wait for each response (None: forever). Timed-out requests are cancelled."""
    probe_timeout: float = 10.0
    """Seconds to wait for the `server/discover` probe before trying `initialize`."""
    max_rounds: int = 10
    """Most `input_required` rounds one call may take before `InputRoundsExceededError`."""
    log_level: str | None = None
    """Ask for log messages at this level and above on every request (LOG-4)."""
    trace_context: TraceContext | None = None
    """Called for each request; its W3C trace context goes into `_meta` (META-10)."""
    cache: bool = True
    """Serve fresh list and read results from the cache (`ttlMs`, CACHE)."""
    validate_output: bool = False
    """Check `structuredContent` against the tool's `outputSchema` (TOOL-12)."""
    era_cache: str | os.PathLike[str] | None = None
    """A JSON file remembering each server's era between runs (VER-13)."""
    send_client_info: bool = True
    """Send `clientInfo` on every request (META-5)."""
    capabilities: Mapping[str, Any] | None = None
    """Extra capabilities to declare (e.g. `{"extensions": {...}}`), merged with the derived."""
    sampling_capability: Mapping[str, Any] | None = None
    """What goes inside `sampling` when a sampling handler is set, e.g. `{"tools": {}}`."""
    url_elicitation_wait: float = 60.0
    """Legacy -32042: once the user agreed to open every page, seconds to wait for the server's
    `notifications/elicitation/complete` for them before the one retry (0: retry at once, for a
    URL handler that returns only when the user says they are done)."""

    def __post_init__(self) -> None:
        if self.era not in ("auto", "modern", "legacy"):
            raise ValueError(f"ClientOptions.era must be auto, modern or legacy, not {self.era!r}")
        if self.log_level is not None and self.log_level not in LOG_LEVELS:
            raise ValueError(
                f"ClientOptions.log_level must be one of {', '.join(LOG_LEVELS)}, "
                f"not {self.log_level!r}"
            )
        if self.max_rounds < 1:
            raise ValueError("ClientOptions.max_rounds must be at least 1")
        wait = self.url_elicitation_wait
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 1e6:
            raise ValueError(
                "ClientOptions.url_elicitation_wait must be a number of seconds from 0 to 1e6, "
                f"not {wait!r}"
            )


_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")
_MAX_TRACE_VALUE = 8192


def valid_trace_context(context: Mapping[str, str]) -> dict[str, str]:
    """The well-formed W3C trace keys of `context`; anything malformed is left out (META-10)."""
    out: dict[str, str] = {}
    for key in TRACE_KEYS:
        value = context.get(key)
        if type(value) is not str or not value or len(value) > _MAX_TRACE_VALUE:
            continue
        if key == "traceparent" and not _TRACEPARENT.match(value):
            continue
        if not value.isascii() or any(c in value for c in "\r\n"):
            continue
        out[key] = value
    if "traceparent" not in out:
        out.pop("tracestate", None)
    return out


def otel_trace_context() -> dict[str, str]:
    """The active OpenTelemetry context, if `opentelemetry` is installed (else nothing).

    Pass it as `ClientOptions(trace_context=otel_trace_context)`.
    """
    try:
        propagate = importlib.import_module("opentelemetry.propagate")
    except ImportError:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def call_notifications(
    progress: ProgressHandler | None, log: LogHandler | None
) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """The notification handler of one call: progress and log messages to their callbacks."""

    async def on_notification(message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if type(params) is not dict:
            return
        reply: Any = None
        if method == Method.PROGRESS and progress is not None:
            reply = progress(params.get("progress", 0), params.get("total"), params.get("message"))
        elif method == Method.MESSAGE and log is not None:
            reply = log(params.get("level", "info"), params.get("data"), params.get("logger"))
        if inspect.isawaitable(reply):
            await reply

    return on_notification
