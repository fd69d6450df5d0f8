"""`GET /healthz` and `GET /readyz`: what a load balancer or an orchestrator asks a replica.

- **health** (`/healthz`): the process is up and its event loop answers. Always 200 while it
  does; an orchestrator restarts a replica that stops answering it.
- **readiness** (`/readyz`): the replica can serve requests that need shared state, so it may
  be sent traffic: each store it uses answers, and its broker listens. 200 when they do; 503
  with a JSON `reason` naming what does not, while a store or the broker is down. A replica
  that is not ready is taken out of rotation, not restarted: it recovers by itself when the
  store returns (`mcpkit.store.bus.follow`, the stores' pools).

Both are answered before anything else the endpoint checks (path, Host, Origin, auth): they
are not MCP requests, a probe names no allowed host (it comes by the pod's address) and
carries no token, and they say nothing about the server but "up" or "ready". Their paths are
`HTTPOptions.health` (`HealthPaths`); None turns one off. Imports the layers below and
asyncio.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Health",
    "HealthPaths",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]

_CHECK_S: Final = 2.0
"""Each store gets this long to answer a readiness check."""
_PROBE_KEY: Final = "mcpkit:readyz"
"""The key a readiness check looks up (never written)."""


@dataclass(frozen=True, slots=True)
class HealthPaths:
    """Where health and readiness are answered; None: not answered (404 like any path)."""

    health: str | None = "/healthz"
    ready: str | None = "/readyz"


class Health:
    """The two probes of one `HTTPApp`: `serves(scope)` picks them out, `serve` answers."""

    __slots__ = ("_draining", "_endpoints", "_paths", "_server")

    def __init__(self, server: Any, paths: HealthPaths, endpoints: Iterable[Any],
                 draining: Callable[[], bool] = lambda: False) -> None:
        self._server = server
        self._draining = draining
        """Whether the app is stopping: then it is not ready, whatever its stores say."""
        self._paths = {p: kind for p, kind in ((paths.health, "health"),
                                               (paths.ready, "ready")) if p is not None}
        self._endpoints = tuple(endpoints)
        """The app's endpoints (`Endpoint`), whose own stores are checked besides the server's."""

    def serves(self, scope: dict[str, Any]) -> bool:
        return scope["path"] in self._paths and scope["method"] in ("GET", "HEAD")

    async def serve(self, scope: dict[str, Any], send: Send) -> None:
        if self._paths[scope["path"]] == "health":
            status, body = 200, {"status": "ok"}
        else:
            reason = await self._not_ready()
            status, body = ((200, {"status": "ready"}) if reason is None
                            else (503, {"status": "unavailable", "reason": reason}))
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
            (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else data})

    async def _not_ready(self) -> str | None:
        """Why this replica should get no traffic now, or None: the first check that fails."""
        if self._draining():
            return "the server is shutting down"
        server = self._server
        checks: list[tuple[str, Awaitable[Any]]] = [
            ("the request-state store", _probe(server.sealer.store))]
        checks += [(name, _probe(store)) for endpoint in self._endpoints
                   for name, store in endpoint.stores()]
        broker = server.broker
        if callable(getattr(broker, "ready", None)):
            checks.append(("the broker", _broker(broker)))
        for name, check in checks:
            try:
                async with asyncio.timeout(_CHECK_S):
                    await check
            except TimeoutError:
                _close_rest(checks)
                return f"{name} did not answer within {_CHECK_S:g} s"
            except Exception as exc:  # what a store raises when it is down
                _close_rest(checks)
                return f"{name} is unavailable: {getattr(exc, 'message', None) or exc!s}"
        return None


async def _probe(store: Any) -> None:
    """One round trip to `store`: its `ping` if it has one, else a lookup of a key never set."""
    ping = getattr(store, "ping", None)
    if callable(ping):
        await ping()
    elif callable(getattr(store, "get", None)):
        await store.get(_PROBE_KEY)
    elif callable(getattr(store, "load", None)):
        await store.load(_PROBE_KEY)


async def _broker(broker: Any) -> None:
    await broker.bus.ping()
    await broker.ready()


def _close_rest(checks: list[tuple[str, Awaitable[Any]]]) -> None:
    """Close the checks not awaited, so none is left as a never-awaited coroutine."""
    for _, check in checks:
        close = getattr(check, "close", None)
        if callable(close):
            close()
