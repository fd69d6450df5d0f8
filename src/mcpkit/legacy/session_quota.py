"""How many 2025-11-25 sessions a client may open, and how fast, without I/O.

`initialize` opens a session and needs no credentials, so one client could open thousands a
second and push every real user's session out of the store. The rules here bound that: each
client (`owner_of`: the authenticated principal when the request has one, else its address)
opens sessions at a steady rate with a small burst (`CreationRate`, a token bucket per client:
429 with Retry-After past it), keeps a bounded number alive (its own oldest makes room), and the
store, when full, never ends an authenticated session for an anonymous one (503 with
Retry-After when nothing may make room; the policy is `mcpkit.store.legacy.sessions`).

The client's address is the ASGI scope's `client`: never a forwarded header, unless the ASGI
server was told to believe the proxy that set it (`ListenerLimits.trusted_proxies`) and put the
address it names in `client` itself. An IPv6 client is its /64 network, the block one
subscriber is usually given: counting each of its addresses apart would give one client
2**64 buckets. The clock is the caller's: `now` is passed in.
"""

from __future__ import annotations

import ipaddress
import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import InternalError, InvalidRequestError
from mcpkit.protocol.codec import RequestId
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY, Status
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.protocol.rejections import error_response
from mcpkit.server.sealing import principal_key
from mcpkit.store.legacy.sessions import SessionOwner

__all__ = [
    "CreationRate",
    "SessionLimits",
    "exempt",
    "owner_of",
    "rate_refusal",
    "store_full_refusal",
]




@dataclass(frozen=True, slots=True)
class SessionLimits:
    """The bounds on legacy sessions (`HTTPOptions.sessions`), with defaults for a public
    server; docs/security.md says what each costs."""

    per_client: int = 100
    """Live sessions one client keeps; its next one ends its least recently used (clients
    seldom DELETE a session, so a client that reconnects often is not locked out). Behind one
    NAT address, every user shares it: raise it for such a crowd."""
    rate_per_s: float = 10.0
    """Sessions a client may open per second, once its burst is spent."""
    burst: int = 20
    """Sessions a client may open at once, before `rate_per_s` applies."""
    max_sessions: int = 10_000
    """Sessions the default in-memory store keeps in all."""
    full_retry_after_s: int = 30
    """The Retry-After of a create refused because the store is full."""
    max_clients: int = 65_536
    """Clients whose creation rate is remembered; past it, the longest quiet is forgotten
    (a full bucket again), so the table cannot grow without bound either."""
    limit_loopback: bool = False
    """Whether anonymous clients on a loopback address (this host) are held to `rate_per_s`,
    `burst` and `per_client`. Off: a local process can load this machine anyway, benchmarks
    and test suites open sessions as fast as they can, and behind a proxy on this host that
    sends no X-Forwarded-For every user would be one client. The store's policy (below) holds
    for them all the same, and authenticated principals are limited wherever they are."""

    def __post_init__(self) -> None:
        for name in ("per_client", "burst", "max_sessions", "full_retry_after_s", "max_clients"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"SessionLimits.{name} must be an int >= 1, not {value!r}")
        if type(self.rate_per_s) not in (int, float) or not self.rate_per_s > 0:
            raise ValueError(f"SessionLimits.rate_per_s must be > 0, not {self.rate_per_s!r}")


class CreationRate:
    """A token bucket per client: `burst` tokens, refilled at `rate_per_s`; opening a session
    takes one."""

    __slots__ = ("_buckets", "_limits")

    def __init__(self, limits: SessionLimits) -> None:
        self._limits = limits
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """Client -> (tokens, when counted), the least recently seen first."""

    def take(self, client: str, now: float) -> float | None:
        """Take a token for `client` at `now`; None when it had one, else the seconds until
        it will."""
        limits = self._limits
        buckets = self._buckets
        tokens, then = buckets.pop(client, (float(limits.burst), now))
        tokens = min(float(limits.burst), tokens + max(now - then, 0.0) * limits.rate_per_s)
        if tokens >= 1.0:
            buckets[client] = (tokens - 1.0, now)
            wait = None
        else:
            buckets[client] = (tokens, now)
            wait = (1.0 - tokens) / limits.rate_per_s
        while len(buckets) > limits.max_clients:
            buckets.popitem(last=False)
        return wait


def _address_key(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a Unix socket path, or a name a proxy put there
        return f"address:{host}"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"address:{address.ipv4_mapped}"
        return f"address:{ipaddress.IPv6Network((address, 64), strict=False)}"
    return f"address:{address}"


def owner_of(scope: Mapping[str, Any]) -> SessionOwner:
    """Who a request opening a session counts as: its principal (`PRINCIPAL_SCOPE_KEY`, or the
    authenticated `user` Starlette's AuthenticationMiddleware sets), else its address."""
    principal = scope.get(PRINCIPAL_SCOPE_KEY)
    if principal is None:
        user = scope.get("user")
        if user is not None and getattr(user, "is_authenticated", False) is True:
            principal = getattr(user, "identity", None) or getattr(user, "display_name", None)
    key = principal_key(principal) if principal is not None else None
    if key is not None:
        return SessionOwner(f"principal:{key}", authenticated=True)
    client = scope.get("client")
    if not client:
        return SessionOwner("address:unknown")
    return SessionOwner(_address_key(str(client[0])))


def exempt(scope: Mapping[str, Any], owner: SessionOwner, limits: SessionLimits) -> bool:
    """Whether `owner` opens sessions free of the rate and per-client limits: an anonymous
    client on a loopback address, unless `limits.limit_loopback`."""
    if owner.authenticated or limits.limit_loopback:
        return False
    client = scope.get("client")
    if not client:
        return False
    try:
        return ipaddress.ip_address(str(client[0])).is_loopback
    except ValueError:  # a Unix socket path: no address
        return False


def _retry_after(seconds: float) -> tuple[tuple[bytes, bytes], ...]:
    return ((b"retry-after", b"%d" % max(1, math.ceil(seconds))),)


def rate_refusal(request_id: RequestId | None, wait: float, limits: SessionLimits
                 ) -> Refusal:
    """An `initialize` over its client's creation rate: 429, and when to try again."""
    return Refusal(Status.TOO_MANY_REQUESTS, error_response(request_id, InvalidRequestError(
        f"Too Many Requests: this client opens sessions faster than {limits.rate_per_s:g} a "
        f"second (bursts of {limits.burst}); retry in {max(1, math.ceil(wait))} s, or reuse "
        "the session it has")), _retry_after(wait))


def store_full_refusal(request_id: RequestId | None, limits: SessionLimits) -> Refusal:
    """An `initialize` the full store cannot make room for (every session left is an
    authenticated one, which an anonymous client may not end): 503, and when to try again."""
    return Refusal(Status.SERVICE_UNAVAILABLE, error_response(request_id, InternalError(
        "Service Unavailable: the server holds as many sessions as it may, and none can "
        f"make room for an anonymous one; retry in {limits.full_retry_after_s} s")),
        _retry_after(limits.full_retry_after_s))
