"""`mcpkit.Server`: the server applications import, the core `Server` plus serving over HTTP.

The core class (`mcpkit.server.server.Server`) registers and serves requests and knows no
transport: the server layer sits below `transports/` and never imports one, not even when a
method is called. What an application wants in one call, its server as an ASGI application, is
added here, a layer above the transports (like `testing/` and `cli/`), so the dependency points
down and `from mcpkit import Server; Server("x").asgi()` still needs nothing else.

Every transport, registry and check takes the core class, so an instance of either serves the
same everywhere (`isinstance(mcpkit.Server(...), mcpkit.server.server.Server)` holds). The HTTP
endpoint loads only when `asgi()` is called: a server run over stdio never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.server.server import Server as CoreServer

if TYPE_CHECKING:
    from mcpkit.transports.http_server import HTTPApp, HTTPOptions

__all__ = ["Server"]


class Server(CoreServer):
    """An MCP server: register tools, resources and prompts, then serve it on any transport."""

    def asgi(self, options: HTTPOptions | None = None, **settings: Any) -> HTTPApp:
        """This server as a plain ASGI application speaking Streamable HTTP (both eras).

        Run it under any ASGI server, or mount it in Starlette/FastAPI. Settings are those of
        `mcpkit.transports.http_server.HTTPOptions`, e.g. `allowed_hosts=("mcp.example.com",)`.
        """
        from mcpkit.transports.http_server import HTTPApp

        return HTTPApp(self, options, **settings)
