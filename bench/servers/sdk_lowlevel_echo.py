"""The echo tool on the official SDK's low-level server (`mcp.server.lowlevel.Server`).

stdio:  python sdk_lowlevel_echo.py
HTTP:   uvicorn --factory sdk_lowlevel_echo:create_http_app             (JSON responses)
        uvicorn --factory sdk_lowlevel_echo:create_http_app_stateless   (JSON, stateless_http=True)
        uvicorn --factory sdk_lowlevel_echo:create_http_app_sse         (the SDK's defaults)

N_TOOLS is rewritten by the harness to generate servers with many tools.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

N_TOOLS = 1

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
TOOLS = [
    types.Tool(
        name="echo" if i == 0 else f"echo_{i}",
        description="Echo the text back.",
        input_schema=_SCHEMA,
    )
    for i in range(N_TOOLS)
]
TOOL_NAMES = frozenset(tool.name for tool in TOOLS)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name not in TOOL_NAMES:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"unknown tool {params.name}")],
            is_error=True,
        )
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server(
    "bench-echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
)


def create_http_app() -> Any:
    """Streamable HTTP with JSON responses (no SSE), the cheapest mode the SDK offers."""
    return server.streamable_http_app(json_response=True)


def create_http_app_stateless() -> Any:
    """JSON responses and `stateless_http=True` (which changes only legacy traffic in mcp 2.3.0)."""
    return server.streamable_http_app(json_response=True, stateless_http=True)


def create_http_app_sse() -> Any:
    """Streamable HTTP with the SDK's default options."""
    return server.streamable_http_app()


async def _serve_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve_stdio)
