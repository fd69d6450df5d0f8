"""Explicit handles: opaque names for application data that outlives one request.

The stateless core has no session, so data that spans calls (a cart, a draft, a search to
page through) is either kept by the application under an id, or handed to the client as a
handle and presented back as an argument. `mint_handle` seals the data with the server's key
ring, bound to the principal, a kind ("cart", "draft") and an expiry; `open_handle` gives it
back only to the same principal, for the same kind, before it expires. A handle is a name,
not a permission: presenting someone else's handle gets `HandleError`, whose message says
which check failed. In `tools/call` a `HandleError` becomes an `isError` result, so the
model can recover (start a new cart); elsewhere it is -32602.

Imports: `mcpkit.errors`, `mcpkit.protocol.request_state`, `mcpkit.server.sealing`.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from mcpkit.errors import HandleError
from mcpkit.protocol.request_state import (
    HANDLE,
    StateRejected,
    open_token,
    seal_token,
    target_digest,
)
from mcpkit.server.sealing import Sealer, principal_key

__all__ = [
    "DEFAULT_HANDLE_TTL",
    "MAX_HANDLE_TTL",
    "HandleError",
    "mint_handle",
    "open_handle",
]

DEFAULT_HANDLE_TTL: Final = 3600.0
MAX_HANDLE_TTL: Final = 100 * 365.25 * 86400.0
"""The longest life a handle may be given; its expiry must fit the token's claims."""
_NO_ARGUMENTS: Final = bytes(16)


def _kind(kind: str) -> bytes:
    if not isinstance(kind, str) or not kind:
        raise TypeError("a handle's kind must be a non-empty string, e.g. 'cart'")
    return target_digest("handle", kind)


def mint_handle(
    sealer: Sealer, principal: Any, kind: str, data: Any, ttl: float = DEFAULT_HANDLE_TTL
) -> str:
    """A sealed handle carrying `data` (JSON) for `principal`, valid for `ttl` seconds."""
    # A string or None would fail in a comparison with a message naming no handle, infinity or
    # a huge number only when the expiry is packed, and True would pass as one second.
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or not 0 < ttl <= MAX_HANDLE_TTL:
        raise ValueError(
            f"a handle's ttl must be a positive number of seconds, at most {MAX_HANDLE_TTL:.0f} "
            f"(100 years), got {ttl!r}"
        )
    try:
        body = orjson.dumps(data)
    except TypeError as exc:
        raise TypeError(f"a {kind!r} handle can carry only JSON data: {exc}") from None
    return seal_token(
        sealer.ring, HANDLE, now=sealer.clock(), ttl=ttl, principal=principal_key(principal),
        target=_kind(kind), arguments=_NO_ARGUMENTS, body=body,
    )


def open_handle(sealer: Sealer, principal: Any, kind: str, handle: Any, where: str) -> Any:
    """The data a handle carries, or HandleError naming the check that failed."""
    what = f"{kind} handle"
    if type(handle) is not str or not handle:
        raise HandleError("malformed", f"{where}: the {what} must be the string it was given as")
    try:
        opened = open_token(
            sealer.ring, HANDLE, handle, now=sealer.clock(), principal=principal_key(principal),
            target=_kind(kind), arguments=None, where=where, what=what,
            target_noun="kind of handle",
        )
    except StateRejected as exc:
        raise HandleError(exc.reason, exc.message) from None
    return orjson.loads(opened.body)
