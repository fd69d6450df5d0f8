"""Authorization without I/O: the rules of the OAuth 2.1 resource server (`server_*`), of the
client (`client_*`) and of DPoP proofs (`dpop`).

Each module here takes decoded values (headers, JSON documents, claims), the time and the
randomness it needs, and returns values or raises `mcpkit.errors.AuthError`; the flows that
fetch keys, call token endpoints or answer HTTP requests are in `mcpkit.transports`
(`http_auth*` for the server, `oauth*` for the client). Imports: `mcpkit.types`,
`mcpkit.errors`, `mcpkit.protocol`, `mcpkit.store`; joserfc, where JOSE is needed, through
`mcpkit.protocol.extras.require`.
"""

__all__: list[str] = []
