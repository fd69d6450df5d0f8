"""The Streamable HTTP server: the ASGI app (`app`), what it is told (`options`), running it
under uvicorn (`running`), the `Endpoint` seam (`endpoint`) and its modern endpoint
(`modern`), one response per message (`exchange`), the drain at shutdown (`drain`), health
(`health`), the listener's limits (`listener`, `limits`) and the resource server's token
checks (`auth`, `auth_jwt`, `auth_introspection`).

The legacy endpoints are `mcpkit.transports.legacy`'s: the app puts them in its table when
legacy clients are served, and nothing here asks a request's era.

Imports: the core, `mcpkit.transports.loop`, `mcpkit.transports.legacy` (from `app` only),
`mcpkit.transports.auth_proxy` (from `app` only, when a proxy is configured).
"""

__all__: list[str] = []
"""The public names are `mcpkit.transports`'."""
