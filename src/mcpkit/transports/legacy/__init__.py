"""The 2025-11-25 era over HTTP: a session's endpoint (`sessions`), the routes that find it
(`routes`), resumable SSE streams (`resume`), a session served by another replica (`relay`,
`live`), and the shared stores sessions move to (`stores`).

The HTTP app adds these endpoints to its table when legacy clients are served; removing the
era removes this package, `mcpkit.legacy`, `mcpkit.client.legacy` and `mcpkit.store.legacy`.

Imports: the core, `mcpkit.legacy`, `mcpkit.store`, `mcpkit.transports.http_server`'s
endpoint, exchange and drain.
"""

__all__: list[str] = []
"""The public name `close_sse_stream` is `mcpkit.transports`'."""
