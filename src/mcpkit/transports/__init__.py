"""The only I/O in mcpkit: stdio, in-memory streams and Streamable HTTP.

Each transport is thin: it moves bytes, and every request ends in `Server.handle` (modern) or
`LegacySession.handle` (legacy), through `StreamConnection` for byte streams.
"""

__all__: list[str] = []
"""Nothing at the package level: each transport is imported by its module, so a server served
over stdio never loads the HTTP stack."""
