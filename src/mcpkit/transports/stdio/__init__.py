"""stdio: the server side (`server`: serving a `Server` on stdin/stdout, which it owns from
process start) and the client side (`client`: a server started as a subprocess).

Imports: the core, `mcpkit.transports.stream` and `mcpkit.transports.loop`; nothing of HTTP.
"""

__all__: list[str] = []
"""The public names are `mcpkit.transports`'."""
