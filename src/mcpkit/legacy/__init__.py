"""The 2025-11-25 era, as an adapter at the edge.

A legacy connection (stdio process or HTTP session) opens with `initialize`; from then on the
adapter turns each legacy request into a modern one (filling `_meta` from what initialize
negotiated) and each modern result back into its legacy shape. Handlers are written once and
never test the era. May import `mcpkit.server`, `mcpkit.protocol`, `mcpkit.types`,
`mcpkit.errors`; never a transport.
"""

from mcpkit.legacy.session import LegacySession, initialize_error

__all__ = [
    "LegacySession",
    "initialize_error",
]
