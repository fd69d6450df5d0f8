"""`ClientOptions`, the callback types of a call, and the errors only the client raises.

Every option has a safe default, so `Client(connector)` alone is a correct client. The errors
here are raised on this side only and carry no JSON-RPC code (MSG-16): nothing the server said
can be mistaken for them.

May import `mcpkit.types` and `mcpkit.errors`.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from mcpkit.errors import InputRoundsExceededError, RequestTimeoutError
from mcpkit.protocol.extensions import check_extension_id
from mcpkit.types.constants import LEGACY_VERSION, LOG_LEVELS, TRACE_KEYS
from mcpkit.types.methods import Method

__all__ = [
    "DEFAULT_LOG_LEVEL",
    "ClientOptions",
    "InputRoundsExceededError",
    "LogHandler",
    "ProgressHandler",
    "RequestTimeoutError",
    "TraceContext",
    "call_notifications",
    "declared_capabilities",
    "log_options",
    "otel_trace_context",
    "valid_trace_context",
]

_log = logging.getLogger("mcpkit.client")

DEFAULT_LOG_LEVEL: Final = "info"
"""The level asked for when a log handler is given and no level is: what a server reports to
a user, without its debug chatter."""


class ProgressHandler(Protocol):
    """Hears each `notifications/progress` of one call: `call_tool(..., progress=handler)`.

    A protocol, so a plain function and an `async def` both fit; a type checker matches the
    parameters by position, so their names are the application's own.
    """

    def __call__(
        self, progress: float, total: float | None, message: str | None, /
    ) -> Awaitable[None] | None:
        """One report: `progress` so far (it only grows), `total` when the server knows it,
        and a `message` to show. Return nothing, or an awaitable the client awaits.

        Called once per notification, in the order they arrive, while the call is in flight.
        Raising does not fail the call: the exception is logged (logger `mcpkit.client`) and
        the reports that follow still arrive, so a broken progress bar cannot lose a result.
        """


class LogHandler(Protocol):
    """Hears each `notifications/message` the server sends: `Client(on_log=handler)` for every
    request, or `call_tool(..., log=handler)` for one call.

    Giving one is enough to receive logs: the client then asks for `ClientOptions.log_level`,
    or `"info"` (`DEFAULT_LOG_LEVEL`) when no level is set, on every modern request and through
    `logging/setLevel` in a legacy session. Without a handler no level is asked for, so a
    server never spends effort on messages nobody reads.
    """

    def __call__(self, level: str, data: Any, logger: str | None, /) -> Awaitable[None] | None:
        """One message: its `level` (`debug` .. `emergency`, `LOG_LEVELS`), its `data` (any
        JSON value, often a string) and the server's `logger` name when it gave one. Return
        nothing, or an awaitable the client awaits.

        Raising does not fail the request: the exception is logged (logger `mcpkit.client`)
        and later messages still arrive.
        """


class TraceContext(Protocol):
    """Supplies the W3C trace context of the request being sent: `ClientOptions(trace_context=
    otel_trace_context)`, or a function of the application's own tracer."""

    def __call__(self) -> Mapping[str, str]:
        """The current context: `traceparent`, optionally `tracestate` and `baggage`.

        Called synchronously once per request, so it must be cheap. A malformed value is left
        out rather than sent (`valid_trace_context`). Raising fails the request that was about
        to be sent, before anything reaches the wire.
        """


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
    max_list_items: int = 10_000
    """Most items `list_tools`, `list_resources`, `list_prompts`, ... gather over all pages; a
    server listing more fails the call with a ProtocolViolation naming this option, before
    the page past the bound is vetted (a hostile catalogue costs time and memory per item)."""
    log_level: str | None = None
    """Ask for log messages at this level and above on every request (LOG-4). None: no level,
    unless the Client has an `on_log` handler, which asks for `DEFAULT_LOG_LEVEL` ("info")."""
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
    extensions: Mapping[str, Mapping[str, Any]] | None = None
    """Extensions every request declares, by identifier, with their settings (`{}` for none):
    `{"io.modelcontextprotocol/tasks": {}}`. A server uses one only for requests that say so
    (CAP-1); `Client.server_extensions` is what it offers."""
    task_notifications: bool = True
    """While waiting on a task, follow it through `notifications/tasks` when the server agrees
    to send them (a `subscriptions/listen` whose acknowledgement lists the task), with a
    `tasks/get` at most every 30 s as a backstop; False, or a server that does not agree:
    `tasks/get` at the task's `pollIntervalMs` (clamped to 0.05..30 s)."""
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
        items = self.max_list_items
        if isinstance(items, bool) or not isinstance(items, int) or items < 1:
            raise ValueError(
                f"ClientOptions.max_list_items must be a positive integer, not {items!r}")
        for ident, settings in (self.extensions or {}).items():
            try:
                check_extension_id(ident)
            except ValueError as exc:
                raise ValueError(f"ClientOptions.extensions: {exc}") from None
            if not isinstance(settings, Mapping):
                raise ValueError(
                    f"ClientOptions.extensions[{ident!r}]: settings are a mapping (a JSON "
                    f"object, {{}} for none), not {type(settings).__name__}")
        wait = self.url_elicitation_wait
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 1e6:
            raise ValueError(
                "ClientOptions.url_elicitation_wait must be a number of seconds from 0 to 1e6, "
                f"not {wait!r}"
            )


def declared_capabilities(derived: dict[str, Any], options: ClientOptions) -> dict[str, Any]:
    """What every request declares: the capabilities the handlers imply, then
    `options.capabilities` merged over them, then `options.extensions`."""
    caps = dict(derived)
    for name, value in (options.capabilities or {}).items():
        caps[name] = {**caps.get(name, {}), **value} if isinstance(value, Mapping) else value
    if options.extensions:
        caps["extensions"] = {**caps.get("extensions", {}),
                              **{k: dict(v) for k, v in options.extensions.items()}}
    return caps


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

    Pass it as `ClientOptions(trace_context=otel_trace_context)` to send the current context
    without a tracer provider (one another library extracted, say). With a provider set there
    is no need: the client makes a span per request and sends that span's context, whose
    parent is what this returns (`mcpkit.tracing`).
    """
    try:
        propagate = importlib.import_module("opentelemetry.propagate")
    except ImportError:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def log_options(options: ClientOptions, on_log: LogHandler | None) -> ClientOptions:
    """`options` as a client with `on_log` runs them: a log handler with no `log_level` set
    asks for `DEFAULT_LOG_LEVEL`, so `Client(on_log=handler)` alone receives the server's logs
    in both eras (the level is what a server needs to send any; a handler alone says nothing
    on the wire). A `log_level` given explicitly is kept, with or without a handler."""
    if on_log is None:
        return options
    if not callable(on_log):
        raise TypeError(
            f"on_log must be a function (level, data, logger), not {type(on_log).__name__}"
        )
    if options.log_level is not None:
        return options
    return dataclasses.replace(options, log_level=DEFAULT_LOG_LEVEL)


def call_notifications(
    progress: ProgressHandler | None, log: LogHandler | None
) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """The notification handler of one call: progress and log messages to their callbacks.

    A callback that raises is logged and passed over: it is the application's display of the
    call, and on an HTTP response stream an escaped exception would end the call itself.
    """

    async def on_notification(message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if type(params) is not dict:
            return
        try:
            reply: Any = None
            if method == Method.PROGRESS and progress is not None:
                reply = progress(
                    params.get("progress", 0), params.get("total"), params.get("message")
                )
            elif method == Method.MESSAGE and log is not None:
                reply = log(params.get("level", "info"), params.get("data"), params.get("logger"))
            if inspect.isawaitable(reply):
                await reply
        except Exception:
            _log.exception("the %s handler failed (the call goes on)", method)

    return on_notification
