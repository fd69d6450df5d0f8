"""The echo tool on the official SDK's high-level server (`mcp.server.MCPServer`).

stdio:  python sdk_mcpserver_echo.py
HTTP:   uvicorn --factory sdk_mcpserver_echo:create_http_app   (JSON responses)
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer

server = MCPServer("bench-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


# @@TOOLS@@


def create_http_app() -> Any:
    """Streamable HTTP with JSON responses (no SSE)."""
    return server.streamable_http_app(json_response=True)


if __name__ == "__main__":
    server.run("stdio")
