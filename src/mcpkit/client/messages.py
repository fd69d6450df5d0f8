"""What the client's requests carry in each era, and what their answers must hold.

Pure functions, so that `mcpkit.client.client.Client` keeps the connection and the round trips:

- `with_meta`: a request's params with the era's `_meta`. A modern request carries the
  per-request envelope built once when the era was settled (version, capabilities, client
  info), shared as it is when nothing per-request is added; a legacy request carries only what
  it adds (a progress token, trace context, the caller's own keys).
- `legacy_discover`: a legacy server's `initialize` answer, in the shape of a DiscoverResult.
- `require_list`: the one list member every answer of a method holds.

May import `mcpkit.types`, `mcpkit.errors` and `mcpkit.client.options`; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.client.options import TraceContext, valid_trace_context
from mcpkit.errors import ProtocolViolation
from mcpkit.types.constants import LOG_LEVEL_KEY, PROGRESS_TOKEN_KEY, SERVER_INFO_KEY

__all__ = ["legacy_discover", "require_list", "with_meta"]


def with_meta(
    fields: dict[str, Any],
    era: str | None,
    base: dict[str, Any],
    trace: TraceContext | None,
    token: Any = None,
    level: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`fields` with the era's `_meta` added; `base` is the modern envelope, shared as it is when
    nothing per-request is added (`level` is a modern key only)."""
    if era == "legacy":
        extra: dict[str, Any] = {}
        if token is not None:
            extra[PROGRESS_TOKEN_KEY] = token
        if trace is not None:
            extra.update(valid_trace_context(trace()))
        if meta:
            extra.update(meta)
        if extra:
            fields["_meta"] = extra
        return fields
    if token is None and level is None and trace is None and not meta:
        fields["_meta"] = base
        return fields
    own = dict(base)
    if trace is not None:
        own.update(valid_trace_context(trace()))
    if meta:
        own.update(meta)
    if token is not None:
        own[PROGRESS_TOKEN_KEY] = token
    if level is not None:
        own[LOG_LEVEL_KEY] = level
    fields["_meta"] = own
    return fields


def legacy_discover(
    version: str | None,
    capabilities: dict[str, Any] | None,
    instructions: str | None,
    server_info: dict[str, Any] | None,
) -> dict[str, Any]:
    """What a legacy server said in `initialize`, in the shape a modern server answers
    `server/discover` with, so callers read one shape in both eras."""
    result: dict[str, Any] = {
        "resultType": "complete",
        "supportedVersions": [version],
        "capabilities": capabilities or {},
    }
    if instructions is not None:
        result["instructions"] = instructions
    if server_info is not None:
        result["_meta"] = {SERVER_INFO_KEY: server_info}
    return result


def require_list(result: Mapping[str, Any], member: str, what: str) -> None:
    """Refuse an answer to `what` without its `member` list: the caller would index into it."""
    if type(result.get(member)) is not list:
        raise ProtocolViolation(f"{what}: the result has no {member} list")
