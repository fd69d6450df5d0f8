"""The task store's engines: memory, SQLite, PostgreSQL and Redis (`mcpkit.ext.tasks.records`
is the seam they implement; `mcpkit.ext.tasks.stores` picks one). The shared engines build on
the connection of a store URL's backend (`mcpkit.store.urls.Backend.engine`)."""

__all__: list[str] = []
