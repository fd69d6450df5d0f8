"""A drain worth the name: what an HTTP server does between SIGTERM and its exit.

`drain_endpoints` runs once the listener stopped accepting connections (uvicorn's shutdown;
`HTTPApp.drain` from a framework's lifespan):

1. what extensions run beside the server are drained first (`Server.drain_services`): the
   Tasks extension hands resumable tasks back at once, so another replica resumes them within
   a moment, and gives the others the grace period;
2. the requests already running get the grace period (`ServerOptions.grace_s`, `mcpkit run
   --grace`) to finish as usual;
3. then each request still running is stopped and answered with a retryable error: -32603
   "Service unavailable" with `data.unavailable = "stopping"` and `data.retryAfterS`, which a
   modern response carries with HTTP 503 and `Retry-After` (a legacy one on its stream, as
   2025-11-25 errors travel), never the bare 500 of a cancelled ASGI task;
4. it returns when those services are drained (tasks handed back, finished or ended with a
   status that says why).

A request that arrives meanwhile (on a connection already open) is answered the same way at
once (`stopping_answer`). Imports the layers below and asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final

from mcpkit.errors import ServiceUnavailableError
from mcpkit.protocol.codec import Message, Request
from mcpkit.protocol.http import Status, error_status, retry_after
from mcpkit.protocol.rejections import error_response
from mcpkit.transports.http_server.endpoint import Endpoint, Send
from mcpkit.transports.http_server.exchange import plain_response

__all__ = [
    "RETRY_AFTER_S",
    "drain_endpoints",
    "stopping_answer",
    "stopping_error",
]

RETRY_AFTER_S: Final = 1
"""What a request refused by a stopping server is told to wait: another replica serves it
now, and this one once restarted."""
_POLL_S: Final = 0.05
"""How often the drain looks whether every request has finished."""


def stopping_error(method: str | None, grace_s: float | None = None) -> ServiceUnavailableError:
    """The retryable answer of a stopping server to a request of `method`."""
    what = method or "the request"
    within = "" if grace_s is None else f" within its grace period of {grace_s:g} s"
    return ServiceUnavailableError(
        f"Service unavailable: this server is shutting down and did not finish {what}{within}; "
        "send it again (another replica, or this server once restarted, serves it)",
        "stopping", RETRY_AFTER_S)


async def stopping_answer(send: Send, message: Message | None) -> None:
    """Answer a request that reached a stopping server: 503 with Retry-After, and a JSON-RPC
    error when it is a request (anything else has no id to answer)."""
    exc = stopping_error(message.method if isinstance(message, Request) else None)
    header = retry_after({"data": exc.data})
    extra = [header] if header is not None else None
    if isinstance(message, Request):
        error = error_response(message.id, exc)
        await plain_response(send, error_status(error["error"]), error, extra)
    else:
        await plain_response(send, Status.SERVICE_UNAVAILABLE, None, extra)


async def drain_endpoints(server: Any, endpoints: Iterable[Endpoint], grace_s: float) -> None:
    """Steps 1 to 4 of the module docstring, for one app's endpoints."""
    services = asyncio.ensure_future(server.drain_services(grace_s))
    endpoints = tuple(endpoints)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace_s
    while any(e.running() for e in endpoints) and loop.time() < deadline:
        await asyncio.sleep(min(_POLL_S, max(0.0, deadline - loop.time())))
    for endpoint in endpoints:
        endpoint.stop_running(lambda method: stopping_error(method, grace_s))
    await services
