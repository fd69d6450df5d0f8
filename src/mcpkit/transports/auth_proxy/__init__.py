"""The authorization proxy served inside the HTTP app: its routes (`routes`), token
endpoint and verifier (`tokens`), records in the store (`state`), calls to the upstream
provider (`upstream`), client metadata documents (`documents`) and its HTTP helpers (`http`).

Imports: the core, `mcpkit.auth`, `mcpkit.transports.http_server.endpoint`,
`mcpkit.transports.http_server.auth_jwt` and `mcpkit.transports.oauth.http`.
"""

__all__: list[str] = []
"""Configured through `mcpkit.auth.proxy`; nothing here is imported by users."""
