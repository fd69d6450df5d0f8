"""`Outstanding`: our requests to the peer that await an answer, by the id we gave each.

One table for every transport that asks its peer something (a stream asking a legacy client, a
legacy HTTP session asking over a POST's stream, a client's requests on a stream). It maps an id
to the waiter the transport handed in (a future, a routing entry), which it never looks into:
the waiting itself is the transport's, so this stays free of the event loop. Ids handed out by
`send_request` are a prefix and a counter, so they never collide with the peer's own.

`peer_id` is the one check of an id a peer names (a `requestId`, a response's id) before it is
looked up. Sans-IO: imports `mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol` only.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from mcpkit.protocol.codec import RequestId, request_message

__all__ = [
    "Outstanding",
    "peer_id",
    "unnamed_id",
]

W = TypeVar("W")


def peer_id(value: Any) -> RequestId | None:
    """`value` if it can name a request (a string or an integer), else None.

    A peer's `requestId` is looked up in dicts keyed by request id: a list or an object is
    unhashable (a TypeError), and 1.0 or true hash like 1, so they would cancel request 1.
    Anything but a string or a non-bool integer names no request.
    """
    kind = type(value)
    if kind is str or kind is int:
        return value  # type: ignore[no-any-return]
    return None


def unnamed_id(value: Any) -> str | None:
    """Why `value` names no request, for the log (None when it does, or is absent)."""
    if value is None or peer_id(value) is not None:
        return None
    return f"a request id of type {type(value).__name__} names no request; ignored"


class Outstanding(Generic[W]):
    """Requests sent to the peer and not answered yet: id -> the transport's waiter."""

    __slots__ = ("_ids", "_prefix", "_waiting")

    def __init__(self, prefix: str = "", ids: Iterator[int] | None = None) -> None:
        self._prefix = prefix
        self._ids = itertools.count(1) if ids is None else ids
        """Shared by several tables when their ids must stay unique together."""
        self._waiting: dict[Any, W] = {}

    def send_request(self, method: str, params: dict[str, Any] | None, waiter: W
                     ) -> tuple[RequestId, dict[str, Any]]:
        """A fresh id, recorded with `waiter`, and the request message to send with it."""
        request_id = f"{self._prefix}{next(self._ids)}"
        self._waiting[request_id] = waiter
        return request_id, request_message(request_id, method, params)

    def add(self, request_id: Any, waiter: W) -> None:
        """Record a request whose id the caller chose; ValueError if that id is waiting."""
        if request_id in self._waiting:
            raise ValueError(f"request id {request_id!r} is already in flight")
        self._waiting[request_id] = waiter

    def get(self, request_id: Any) -> W | None:
        return self._waiting.get(request_id)

    def pop(self, request_id: Any) -> W | None:
        """The waiter for `request_id`, no longer outstanding; None if there was none."""
        return self._waiting.pop(request_id, None)

    def waiters(self) -> list[W]:
        return list(self._waiting.values())

    def __contains__(self, request_id: Any) -> bool:
        return request_id in self._waiting

    def __len__(self) -> int:
        return len(self._waiting)
