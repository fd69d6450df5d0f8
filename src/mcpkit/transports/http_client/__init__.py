"""The Streamable HTTP client transport (`transport`): the era it speaks (`era`), redirects
followed (`redirects`), responses and streams read (`streams`), the server's own requests and
the session's GET stream (`incoming`).

Imports: the core, httpx, `mcpkit.transports.oauth` (the `OAuth` it signs requests with) and
`mcpkit.client.legacy` (a 2025-11-25 server's session).
"""

__all__: list[str] = []
"""The public names are `mcpkit.transports`'."""
