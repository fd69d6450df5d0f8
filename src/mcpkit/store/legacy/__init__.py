"""What 2025-11-25 HTTP sessions keep between requests: the sessions (`sessions`) and the SSE
events a broken stream resumes from (`events`), each in memory and on PostgreSQL and Redis
(`postgres_sessions`, `postgres_events`, `redis_sessions`, `redis_events`), sharing the
engines' connections (`mcpkit.store.postgres_store`, `mcpkit.store.redis_store`).

`mcpkit.store.urls` opens them with the rest of a backend; removing the era removes this
package and that opener's part.

Imports: `mcpkit.types`, `mcpkit.errors`, `mcpkit.protocol` and the store's engines.
"""

__all__: list[str] = []
"""The public names (`SessionStore`, `MemorySessionStore`, `EventStore`, `MemoryEventStore`)
are `mcpkit.transports`', beside the `HTTPOptions` that takes them."""
