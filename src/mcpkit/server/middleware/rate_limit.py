"""`RateLimitingMiddleware`: at most `limit` requests per `per` seconds for each caller.

Counted in the server's store (`ServerOptions.store`, MCPKIT_STORE) with its atomic `incr`,
one count per caller and window, so replicas sharing a PostgreSQL or Redis store share the
limit (SQLite: the processes of one host; memory: this process). The windows are fixed
(`per` seconds from the Unix epoch): a caller over the limit is refused until its window
ends, and that wait is the answer's retry-after: `RateLimitedError` (-32602 with
`data.rateLimit` and `data.retryAfterS`, whole seconds rounded up; over Streamable HTTP
status 429 and `Retry-After`, as for a caller over its share of tasks). A refused request
counts too, so a caller that keeps trying does not get in sooner; a fixed window lets up to
twice the limit through around a window's edge, the usual price of a count the store can
keep in one step.

Who a caller is: `by_principal` (the default) is the authenticated principal, the same across
replicas and reconnections, and every caller without one (stdio, an unprotected server)
counts as one; `by_client` is the client's self-reported `clientInfo` name, for limits that
are a courtesy rather than a defence (a client may say anything). Any function of the
`MiddlewareContext` returning a string (or None: not limited) will do. The requests a handler
makes of its own server (`ctx.call_tool`) are not counted unless `nested=True`: the client
made one request.

Imports the server's middleware and sealing modules and `mcpkit.errors`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from mcpkit.errors import RateLimitedError
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.sealing import principal_key

if TYPE_CHECKING:
    from mcpkit.store import Store

__all__ = [
    "RateLimitingMiddleware",
    "by_client",
    "by_principal",
]

CallerKey = Callable[[MiddlewareContext], "str | None"]


def by_principal(context: MiddlewareContext) -> str:
    """The authenticated principal (its issuer and subject); "anonymous" for every caller
    without one."""
    key = principal_key(context.principal)
    return "anonymous" if key is None else f"principal:{key}"


def by_client(context: MiddlewareContext) -> str:
    """The client's self-reported name (`clientInfo.name`): a courtesy, not a defence."""
    info = context.client_info or {}
    name = info.get("name")
    return f"client:{name}" if type(name) is str else "client:unnamed"


class RateLimitingMiddleware(Middleware):
    """Refuse a caller's requests past `limit` per `per` seconds (`methods`: only those)."""

    def __init__(self, limit: int = 60, per: float = 60.0, *, key: CallerKey = by_principal,
                 methods: Collection[str] | None = None, store: Store | None = None,
                 nested: bool = False, name: str = "default") -> None:
        if type(limit) is not int or limit < 1:
            raise ValueError(f"RateLimitingMiddleware: limit must be a positive integer of "
                             f"requests, not {limit!r}")
        if isinstance(per, bool) or not isinstance(per, int | float) or not per > 0:
            raise ValueError(f"RateLimitingMiddleware: per must be a positive number of "
                             f"seconds, not {per!r}")
        if not callable(key):
            raise TypeError(f"RateLimitingMiddleware: key is a function of the context, not "
                            f"{key!r}")
        self.limit = limit
        self.per = float(per)
        self.key = key
        self.methods = None if methods is None else frozenset(methods)
        self.store = store
        """None: the server's store (`Server.sealer.store`)."""
        self.nested = nested
        self.name = name
        """Keeps the counts of two limits on one server apart."""

    async def on_request(self, context: MiddlewareContext, call_next: CallNext
                         ) -> dict[str, Any]:
        if context.depth and not self.nested:
            return await call_next(context)
        who = self.key(context)
        if who is None:
            return await call_next(context)
        server = context.server
        store = self.store if self.store is not None else server.sealer.store
        now = server.options.clock()
        window = int(now // self.per)
        ends = (window + 1) * self.per
        digest = hashlib.sha256(who.encode()).hexdigest()[:32]
        count = await store.incr(f"ratelimit:{self.name}:{self.limit}/{self.per:g}:{digest}:"
                                 f"{window}", ends)
        if count > self.limit:
            wait = max(0.001, ends - now)
            what = context.method + (f" {context.name!r}" if context.name else "")
            raise RateLimitedError(
                f"{what}: this caller made more than {self.limit} requests in {self.per:g} s; "
                f"try again in {wait:.1f} s", limit=self.limit, per_s=self.per,
                retry_after_s=max(1, math.ceil(wait)))
        return await call_next(context)

    def __repr__(self) -> str:
        return f"RateLimitingMiddleware({self.limit} per {self.per:g} s)"
