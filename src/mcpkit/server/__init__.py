"""The server layer: `Server` (the core class, `server.py`), its registries, the handler's
`Context`, dispatch (the one exception -> JSON-RPC error boundary), discovery, completion,
multi round-trip rounds, handles and subscriptions. It speaks 2026-07-28 only and does no
transport I/O: every transport ends in `Server.handle`, and the public `mcpkit.Server`
(`mcpkit.app`) adds `asgi()` from above the transports.

May import `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol`, `mcpkit.schema`, `mcpkit.store`
and `mcpkit._version`.
"""

__all__: list[str] = []
"""Nothing at the package level: each module names its own public surface, and the package's
public names are exported by `mcpkit`."""
