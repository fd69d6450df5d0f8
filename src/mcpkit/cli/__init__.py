"""The `mcpkit` command line, built on the public API only."""
