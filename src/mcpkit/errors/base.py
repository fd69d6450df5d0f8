"""The root of the tree: `MCPError`, which every exception mcpkit raises on purpose derives
from, so one `except MCPError` catches them all and nothing else."""

from __future__ import annotations

__all__ = [
    "MCPError",
]


class MCPError(Exception):
    """Base of every exception mcpkit raises on purpose."""
