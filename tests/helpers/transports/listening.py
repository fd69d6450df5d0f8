"""A `Server`'s ASGI app under a real uvicorn on 127.0.0.1 (port 0), configured as `run_http`
configures it (`mcpkit.transports.http_server.listener.uvicorn_settings`): the listener tests and the
session flood tests share it, so both see the listener `mcpkit run --http` gives."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import uvicorn

from mcpkit.transports.http_server.limits import ListenerLimits
from mcpkit.transports.http_server.listener import uvicorn_settings

BOUND = 10.0
"""The longest any exchange in these tests may take before the test fails."""


@dataclass
class Listening:
    port: int
    url: str
    state: uvicorn.server.ServerState
    """uvicorn's own count of connections and tasks, for a test to wait on."""


@contextlib.asynccontextmanager
async def listening(app: Any, limits: ListenerLimits | None = None, parser: str = "auto", *,
                    settings: dict[str, Any] | None = None) -> AsyncIterator[Listening]:
    """`app` served until the block ends; the socket listens before uvicorn starts.
    `settings`: uvicorn's, instead of those `uvicorn_settings` makes of `limits`."""
    if settings is None:
        settings = uvicorn_settings(limits or ListenerLimits(), parser)
    runner = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off",
                                           **settings))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    port = sock.getsockname()[1]
    try:
        yield Listening(port, f"http://127.0.0.1:{port}/mcp", runner.server_state)
    finally:
        runner.should_exit = True
        await asyncio.wait_for(task, BOUND)
        sock.close()
