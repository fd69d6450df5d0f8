"""mcpkit: the Model Context Protocol (2026-07-28, and 2025-11-25 peers) for Python.

Importing `mcpkit` is cheap: the names below are loaded on first use, so a server process
pays only for what it touches and `import mcpkit` pulls in no HTTP stack, crypto or pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__

if TYPE_CHECKING:
    from mcpkit.errors import (
        InvalidParamsError,
        MCPError,
        MethodNotFoundError,
        ResourceNotFoundError,
        RPCError,
        ToolError,
    )
    from mcpkit.server.content import Audio, Blob, Image, ResourceLink, Text, ToolResult
    from mcpkit.server.context import Context
    from mcpkit.server.prompts import Message
    from mcpkit.server.resources import CacheHint
    from mcpkit.server.schema import Param
    from mcpkit.server.server import Server, ServerOptions

__all__ = [
    "Audio",
    "Blob",
    "CacheHint",
    "Context",
    "Image",
    "InvalidParamsError",
    "MCPError",
    "Message",
    "MethodNotFoundError",
    "Param",
    "RPCError",
    "ResourceLink",
    "ResourceNotFoundError",
    "Server",
    "ServerOptions",
    "Text",
    "ToolError",
    "ToolResult",
    "__version__",
]

_LAZY = {
    "Server": "mcpkit.server.server",
    "ServerOptions": "mcpkit.server.server",
    "Context": "mcpkit.server.context",
    "CacheHint": "mcpkit.server.resources",
    "Message": "mcpkit.server.prompts",
    "Param": "mcpkit.server.schema",
    "Audio": "mcpkit.server.content",
    "Blob": "mcpkit.server.content",
    "Image": "mcpkit.server.content",
    "ResourceLink": "mcpkit.server.content",
    "Text": "mcpkit.server.content",
    "ToolResult": "mcpkit.server.content",
    "MCPError": "mcpkit.errors",
    "RPCError": "mcpkit.errors",
    "ToolError": "mcpkit.errors",
    "InvalidParamsError": "mcpkit.errors",
    "MethodNotFoundError": "mcpkit.errors",
    "ResourceNotFoundError": "mcpkit.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
