"""What a 2025-11-25 request carries, and the DiscoverResult built from `initialize`.

Pure functions, used by `LegacyAdapter`:

- `legacy_params`: a request's params with only what the request adds to `_meta` (a progress
  token, trace context, the caller's own keys): the era has no per-request envelope, the
  handshake negotiated version and capabilities once for the session.
- `legacy_discover`: a legacy server's `initialize` answer, in the shape of a DiscoverResult,
  so callers read one shape in both eras.

May import `mcpkit.types`, `mcpkit.errors` and `mcpkit.client.options`; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.client.options import TraceContext, valid_trace_context
from mcpkit.types.constants import PROGRESS_TOKEN_KEY, SERVER_INFO_KEY

__all__ = [
    "legacy_discover",
    "legacy_params",
]


def legacy_params(
    fields: dict[str, Any],
    trace: TraceContext | None,
    token: Any = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`fields` with a `_meta` of what this request adds, when it adds anything."""
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
