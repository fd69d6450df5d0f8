"""`ProxyOptions`: how a proxy talks to its upstream and how long it holds a call for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from mcpkit.client.options import ClientOptions
from mcpkit.types.constants import INPUT_CAPABILITIES

__all__ = [
    "ASKS",
    "ProxyOptions",
]

ASKS: Final = INPUT_CAPABILITIES
"""What a proxy may answer for its upstream, passed on to the caller: each one it offers is a
client capability it declares upstream."""


@dataclass(frozen=True, slots=True)
class ProxyOptions:
    """Settings of a proxy; each has a safe default (docs/proxy.md)."""

    connections: int = 8
    """Most connections to the upstream open at once. A 2025-11-25 upstream's requests to its
    client (an elicitation in the middle of a call) name no call, so each call to one holds a
    connection of its own while it runs, and calls past this many wait for one to free up; a
    2026-07-28 upstream takes every call on one connection."""
    hold_s: float = 300.0
    """How long a held upstream call waits for the answer to its question (the client's retry)
    before it is cancelled upstream; a retry after that is told the call is gone."""
    relay_wait_s: float = 5.0
    """How long a retry that reached another replica waits for the replica holding its call to
    answer (and then between two of its reports) before it is told the call is gone."""
    idle_s: float = 60.0
    """A connection past the first that has served no call for this long is closed."""
    wait_s: float = 30.0
    """How long a call waits for a free connection when all `connections` are busy."""
    asks: tuple[str, ...] = ASKS
    """What the proxy answers for the upstream by asking its own caller (`ASKS`); the
    upstream sees these client capabilities. An upstream that lists tools by what its client
    can answer (the reference server does) lists more with more."""
    client: ClientOptions = field(default_factory=ClientOptions)
    """Options of the client that talks to the upstream: its era (`"auto"` probes), timeouts
    of lists and reads, its era cache. A call itself waits for as long as its caller does."""
    client_info: dict[str, Any] | None = None
    """How the proxy names itself to the upstream (default: mcpkit's name and version)."""
    mirror_info: bool = True
    """Serve under the upstream's `serverInfo` and instructions (what a probe of the proxy
    shows), unless the proxy was given a name of its own."""

    def __post_init__(self) -> None:
        if type(self.connections) is not int or self.connections < 1:
            raise ValueError(f"ProxyOptions.connections must be a positive integer, got "
                             f"{self.connections!r}")
        for name in ("hold_s", "relay_wait_s", "idle_s", "wait_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"ProxyOptions.{name} must be a positive number of seconds, "
                                 f"got {value!r}")
        given: object = self.asks
        if isinstance(given, str) or any(a not in ASKS for a in self.asks):
            raise ValueError(f"ProxyOptions.asks takes some of {', '.join(ASKS)}, not "
                             f"{self.asks!r}")
