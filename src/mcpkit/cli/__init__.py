"""The `mcpkit` command line, built on the public API only."""

__all__: list[str] = []
"""Nothing at the package level: the command is `mcpkit.cli.main.main`, each module names its
own public surface."""
