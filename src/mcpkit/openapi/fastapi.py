"""A FastAPI (or any ASGI) application's routes as tools, called in this process.

The application's own OpenAPI document (`app.openapi()`) describes it, and the requests go to
it through `httpx.ASGITransport`: no socket, no port, no network hop, the application's
middleware and validation all run as they would behind a server. An exception the
application does not handle is its 500 answer, as a server would send it, so a tool error
names it rather than the bridge failing. The application's lifespan (startup and shutdown
events) is not run by the transport: an application that needs it started is served over
HTTP, and bridged with `add_openapi` and its URL.

Imports: httpx and `mcpkit.openapi` (bridge, options).
"""

from __future__ import annotations

from typing import Any, Final

import httpx

from mcpkit.openapi.bridge import Bridged, add_openapi, new_client
from mcpkit.openapi.options import OpenAPIOptions
from mcpkit.server.server import Server

__all__ = [
    "ASGI_BASE_URL",
    "add_fastapi",
    "asgi_client",
]

ASGI_BASE_URL: Final = "http://localhost"
"""The URL the application sees requests made to (its `Host` is `localhost`)."""


def asgi_client(app: Any, options: OpenAPIOptions | None = None,
                base_url: str = ASGI_BASE_URL) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` whose requests the ASGI `app` answers in this process."""
    return new_client(options or OpenAPIOptions(), base_url=base_url,
                      transport=httpx.ASGITransport(app=app, raise_app_exceptions=False))


def add_fastapi(server: Server, app: Any, *, options: OpenAPIOptions | None = None,
                base_url: str = ASGI_BASE_URL) -> Bridged:
    """Register the routes of the FastAPI application `app` on `server` (see the module)."""
    document = getattr(app, "openapi", None)
    if not callable(document):
        raise TypeError(f"from_fastapi takes a FastAPI application (one with .openapi()), not "
                        f"{type(app).__name__}; for another ASGI application pass its OpenAPI "
                        "document to from_openapi with client=asgi_client(app)")
    return add_openapi(server, document(), client=asgi_client(app, options, base_url),
                       options=options)
