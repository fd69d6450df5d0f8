"""What the server's own modules read of the server they serve, each as a narrow Protocol.

`Server` (`mcpkit.server.server`) imports the modules that route, page, call and hold its
lifespan; were they to name `Server` for their parameters' type, even under TYPE_CHECKING, the
class and its parts would form a loop hidden from the runtime. Each takes instead the view it
reads here, below them all, and `Server` is every one of them by its shape (mypy checks it
where `Server` hands itself over; tests/server/test_views.py checks it at run time):

- `Routed`: its routes and middleware chain, for a request served inside another
  (`mcpkit.server.calls`);
- `Served`: that and the `_meta` its results carry (`mcpkit.server.dispatch`);
- `Listed`: what a list page reads (`mcpkit.server.listing`);
- `Held`: what its lifespan reads (`mcpkit.server.lifespan`).

What a mount reads and writes of two servers is `mcpkit.server.composition.Composed`, beside
the registries it names. Imports `mcpkit.server.context` only (for `Context`, under which every
handler runs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from mcpkit.server.context import Context

__all__ = [
    "Handler",
    "Held",
    "ListOptions",
    "Listed",
    "Routed",
    "Runs",
    "RunsRequests",
    "Served",
    "Stamps",
]

Handler = Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]]
"""A method: the request's params and its `Context` -> the result; raises RPCError."""


class RunsRequests(Protocol):
    """A middleware chain as the one serving a request sees it (`middleware.Chain`)."""

    def run(self, method: str, params: dict[str, Any], ctx: Context, handler: Handler
            ) -> Awaitable[dict[str, Any]]: ...


@runtime_checkable
class Routed(Protocol):
    """A server a request is routed in: the function serving each method, and its chain."""

    @property
    def routes(self) -> Mapping[str, Handler]: ...

    @property
    def chain(self) -> RunsRequests | None: ...


@runtime_checkable
class Served(Routed, Protocol):
    """A server answering a client's request: routed, with the `_meta` its results carry."""

    @property
    def result_meta(self) -> dict[str, Any]: ...


class Stamps(Protocol):
    """A caching hint, as a list page puts it on its result (`resources.CacheHint`)."""

    def apply(self, result: dict[str, Any]) -> dict[str, Any]: ...


class ListOptions(Protocol):
    """The options a list page reads (`ServerOptions`' page size and list caching hint)."""

    @property
    def page_size(self) -> int: ...

    @property
    def list_cache(self) -> Stamps: ...


@runtime_checkable
class Listed(Protocol):
    """A server whose registries are listed by pages, each kept until they change."""

    @property
    def generation(self) -> int: ...

    @property
    def result_cache(self) -> dict[Any, dict[str, Any]]: ...

    @property
    def options(self) -> ListOptions: ...

    @property
    def result_meta(self) -> dict[str, Any]: ...


class Runs(Protocol):
    """A server that can be held running (`Server.running`): a mounted one, for its parent."""

    def running(self) -> AbstractAsyncContextManager[Any]: ...


@runtime_checkable
class Held(Protocol):
    """A server as its lifespan sees it: its name, for the errors, and the servers mounted in
    it, entered with it."""

    @property
    def name(self) -> str: ...

    def mounted_servers(self) -> Sequence[Runs]: ...
