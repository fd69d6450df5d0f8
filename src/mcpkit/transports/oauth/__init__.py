"""The OAuth client: the authorization code flow (`flow`), checked requests to authorization
servers (`http`), client registration (`registration`), machine grants (`grants`,
`machine`), DPoP (`dpop`), revocation (`revocation`) and the loopback redirect listener
(`redirect`).

Imports: the core, `mcpkit.auth`, `mcpkit.store.tokens`, httpx; nothing of the transports.
"""

__all__: list[str] = []
"""The public names are `mcpkit.transports`'."""
