"""mcpkit: the Model Context Protocol (2026-07-28, and 2025-11-25 peers) for Python.

Importing `mcpkit` is cheap: the names below are loaded on first use, so a server process
pays only for what it touches and `import mcpkit` pulls in no HTTP stack, crypto or pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__

if TYPE_CHECKING:
    from mcpkit.app import Server
    from mcpkit.client import (
        CallToolResult,
        ClientOptions,
        ElicitationCompleteHandler,
        ElicitationHandler,
        InputRequest,
        LogHandler,
        ProgressHandler,
        RootsHandler,
        SamplingHandler,
    )
    from mcpkit.client.options import TraceContext
    from mcpkit.clients import Client, Clients, SyncClient
    from mcpkit.errors import (
        HandleError,
        InvalidParamsError,
        MCPError,
        MethodNotFoundError,
        MissingExtraError,
        NotJSONError,
        ProtocolViolation,
        RateLimitedError,
        ResourceNotFoundError,
        ResultTypeError,
        RPCError,
        ServerConfigError,
        ToolError,
        TransportError,
        URLElicitationRequiredError,
    )
    from mcpkit.proxy import ProxyOptions
    from mcpkit.schema import Param
    from mcpkit.server.asking import Elicit, Elicited, ElicitURL, ListRoots, Sample, Sampled
    from mcpkit.server.content import Audio, Blob, Image, ResourceLink, Text, ToolResult
    from mcpkit.server.context import Context
    from mcpkit.server.dependencies import Depends
    from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
    from mcpkit.server.options import ServerOptions
    from mcpkit.server.prompts import Message
    from mcpkit.server.resources import CacheHint
    from mcpkit.transports.http_client.transport import HTTPConnector
    from mcpkit.transports.memory import InMemory
    from mcpkit.transports.stdio.client import StdioServer

__all__ = [
    "Audio",
    "Blob",
    "CacheHint",
    "CallNext",
    "CallToolResult",
    "Client",
    "ClientOptions",
    "Clients",
    "Context",
    "Depends",
    "Elicit",
    "ElicitURL",
    "ElicitationCompleteHandler",
    "ElicitationHandler",
    "Elicited",
    "HTTPConnector",
    "HandleError",
    "Image",
    "InMemory",
    "InputRequest",
    "InvalidParamsError",
    "ListRoots",
    "LogHandler",
    "MCPError",
    "Message",
    "MethodNotFoundError",
    "Middleware",
    "MiddlewareContext",
    "MissingExtraError",
    "NotJSONError",
    "Param",
    "ProgressHandler",
    "ProtocolViolation",
    "ProxyOptions",
    "RPCError",
    "RateLimitedError",
    "ResourceLink",
    "ResourceNotFoundError",
    "ResultTypeError",
    "RootsHandler",
    "Sample",
    "Sampled",
    "SamplingHandler",
    "Server",
    "ServerConfigError",
    "ServerOptions",
    "StdioServer",
    "SyncClient",
    "Text",
    "ToolError",
    "ToolResult",
    "TraceContext",
    "TransportError",
    "URLElicitationRequiredError",
    "__version__",
]

_LAZY = {
    "Server": "mcpkit.app",
    "ServerOptions": "mcpkit.server.options",
    "Context": "mcpkit.server.context",
    "Depends": "mcpkit.server.dependencies",
    "Middleware": "mcpkit.server.middleware",
    "MiddlewareContext": "mcpkit.server.middleware",
    "CallNext": "mcpkit.server.middleware",
    "RateLimitedError": "mcpkit.errors",
    "Elicit": "mcpkit.server.asking",
    "ElicitURL": "mcpkit.server.asking",
    "Elicited": "mcpkit.server.asking",
    "ListRoots": "mcpkit.server.asking",
    "Sample": "mcpkit.server.asking",
    "Sampled": "mcpkit.server.asking",
    "CacheHint": "mcpkit.server.resources",
    "Message": "mcpkit.server.prompts",
    "Param": "mcpkit.schema",
    "ProxyOptions": "mcpkit.proxy",
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
    "MissingExtraError": "mcpkit.errors",
    "NotJSONError": "mcpkit.errors",
    "ResourceNotFoundError": "mcpkit.errors",
    "URLElicitationRequiredError": "mcpkit.errors",
    "TransportError": "mcpkit.errors",
    "ProtocolViolation": "mcpkit.errors",
    "HandleError": "mcpkit.errors",
    "ResultTypeError": "mcpkit.errors",
    "ServerConfigError": "mcpkit.errors",
    "Client": "mcpkit.clients",
    "Clients": "mcpkit.clients",
    "SyncClient": "mcpkit.clients",
    "CallToolResult": "mcpkit.client",
    "ClientOptions": "mcpkit.client",
    "InputRequest": "mcpkit.client",
    "ElicitationHandler": "mcpkit.client",
    "ElicitationCompleteHandler": "mcpkit.client",
    "SamplingHandler": "mcpkit.client",
    "RootsHandler": "mcpkit.client",
    "ProgressHandler": "mcpkit.client",
    "LogHandler": "mcpkit.client",
    "TraceContext": "mcpkit.client.options",
    "StdioServer": "mcpkit.transports.stdio.client",
    "InMemory": "mcpkit.transports.memory",
    "HTTPConnector": "mcpkit.transports.http_client.transport",
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
