"""Running an `HTTPApp` under uvicorn: `run_http` (a loop of its own) and `serve_http` (the
running loop), and the `[HOST:]PORT[/PATH]` address both take (`parse_address`).

What binding decides lives here, apart from the ASGI app, which runs under any ASGI server: the
Host allow-list a bound address implies (loopback names on loopback, the `public_url`'s host
for a protected server), the URL announced once bound, and the drain begun as uvicorn shuts
down. Imports the app and its options; uvicorn only when a server is run.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from typing import Any

from mcpkit.legacy.session_quota import SessionLimits
from mcpkit.protocol.http import LOOPBACK_HOSTS
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.http_server.limits import ListenerLimits
from mcpkit.transports.http_server.options import HTTPOptions
from mcpkit.types.constants import SUPPORTED_VERSIONS

__all__ = [
    "parse_address",
    "run_http",
    "serve_http",
]


def parse_address(address: str) -> tuple[str, int, str]:
    """`[HOST:]PORT[/PATH]` -> (host, port, path); host defaults to 127.0.0.1, path to /mcp."""
    text = address.strip()
    path = "/mcp"
    slash = text.find("/")
    if slash >= 0:
        text, path = text[:slash], text[slash:]
    if text.startswith("["):
        end = text.find("]")
        host, port_text = text[1:end], text[end + 2:] if end >= 0 else ""
    elif ":" in text:
        host, _, port_text = text.rpartition(":")
    else:
        host, port_text = "", text
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(
            f"--http {address!r}: expected [HOST:]PORT[/PATH], e.g. 8000, 127.0.0.1:8000 or "
            "0.0.0.0:8000/mcp"
        )
    return host or "127.0.0.1", int(port_text), path


_ANSWER_S = 2.0
"""How long past the grace uvicorn waits for the answers to the requests the drain stopped."""


def _is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _protected_hosts(auth: Any, bound: str, hosts: tuple[str, ...]) -> tuple[str, ...]:
    """The Host allow-list of a protected server bound to `bound`: the host its `public_url`
    names besides `hosts`, never any host; without `public_url`, only on loopback, where its
    URL is the address it listens on."""
    public = auth.public_url
    if public is None:
        if not _is_loopback(bound):
            raise ValueError(
                f"a protected server bound to {bound} needs ProtectedResource.public_url, the "
                "URL clients reach it by (the audience its tokens must name); only on a "
                "loopback address is its URL the address it listens on")
        return hosts
    named = public.split("://", 1)[1].partition("/")[0]
    return hosts if named in hosts else (*hosts, named)


def run_http(
    server: Any,
    address: str = "127.0.0.1:8000/mcp",
    *,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
    listener: ListenerLimits | None = None,
    sessions: SessionLimits | None = None,
    session_idle_s: float | None = None,
    auth: Any = None,
) -> None:
    """Serve `server` with uvicorn (one process, a loop of its own) until interrupted.

    Bound to loopback, the Host allow-list is the loopback names plus `allowed_hosts`; bound
    elsewhere, it is `allowed_hosts`, or any host (with a warning) when none is given.
    `listener`, `sessions` and `session_idle_s` replace those of `HTTPOptions`' defaults.

    `auth` (a `ProtectedResource`) protects it. Bound elsewhere than loopback, a protected
    server needs `public_url` (a `ValueError` before anything is bound, otherwise), and takes
    the host that URL names instead of any host; the URL's host is allowed wherever it is bound.
    """
    from mcpkit.transports.loop import freeze_startup_heap

    runner = _uvicorn(server, address, tuple(allowed_hosts), tuple(allowed_origins), announce,
                      {"listener": listener, "sessions": sessions,
                       "session_idle_s": session_idle_s, "auth": auth})
    freeze_startup_heap()
    runner.run()


async def serve_http(
    server: Any,
    address: str = "127.0.0.1:8000/mcp",
    *,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    announce: Callable[[str], None] | None = None,
    listener: ListenerLimits | None = None,
    sessions: SessionLimits | None = None,
    session_idle_s: float | None = None,
    auth: Any = None,
) -> None:
    """`run_http` in the running event loop: serves until interrupted, or until the task
    awaiting it is cancelled, which shuts the server down as an interrupt does (drained for
    up to `ServerOptions.grace_s`) before the cancellation goes on."""
    runner = _uvicorn(server, address, tuple(allowed_hosts), tuple(allowed_origins), announce,
                      {"listener": listener, "sessions": sessions,
                       "session_idle_s": session_idle_s, "auth": auth})
    serving = asyncio.ensure_future(runner.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        runner.should_exit = True
        await serving
        raise


def _uvicorn(server: Any, address: str, allowed_hosts: tuple[str, ...],
             allowed_origins: tuple[str, ...], announce: Callable[[str], None] | None,
             limits: dict[str, Any]) -> Any:
    """The uvicorn server `run_http` and `serve_http` run: it announces the URL it bound, and
    drains the app as shutdown begins (`HTTPApp.drain`), while uvicorn waits for connections
    to finish (its lifespan shutdown comes only after they have, too late for a listen stream
    that stays open, or for a request that needs its retryable answer)."""
    import uvicorn

    from mcpkit.transports.http_server.listener import uvicorn_settings

    host, port, path = parse_address(address)
    hosts = LOOPBACK_HOSTS + allowed_hosts if _is_loopback(host) else allowed_hosts
    auth = limits.get("auth")
    if auth is not None:
        hosts = _protected_hosts(auth, host, hosts)
    if not hosts:
        hosts = ("*",)
        print(f"mcpkit: warning: serving on {host} with any Host header accepted; name the "
              "public host with --allow-host to keep DNS-rebinding protection", file=sys.stderr)
    app = HTTPApp(server, HTTPOptions(path=path, allowed_hosts=hosts,
                                      allowed_origins=allowed_origins,
                                      **{k: v for k, v in limits.items() if v is not None}))
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))

    class _Uvicorn(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.servers and self.servers[0].sockets:
                bound = self.servers[0].sockets[0].getsockname()
                shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
                say(f"mcpkit: serving {server.name} at http://{shown}:{bound[1]}{path} "
                    f"({', '.join(SUPPORTED_VERSIONS)})")

        async def shutdown(self, sockets: Any = None) -> None:
            # The drain runs beside uvicorn's own wait for the connections: it answers what
            # is still running when the grace ends, before uvicorn would cancel it (a 500).
            draining = asyncio.ensure_future(app.drain(grace))
            await super().shutdown(sockets)
            await draining

    grace = server.options.grace_s
    config = uvicorn.Config(
        app, host=host, port=port, lifespan="on", log_level="warning", access_log=False,
        server_header=False, timeout_graceful_shutdown=grace + _ANSWER_S,
        **uvicorn_settings(app.options.listener),
    )
    return _Uvicorn(config)
