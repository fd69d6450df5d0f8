"""The echo tool on FastMCP (`fastmcp.FastMCP`).

stdio:  python fastmcp_echo.py
HTTP:   uvicorn --factory fastmcp_echo:create_http_app   (JSON responses)
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP

server = FastMCP("bench-echo", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


# @@TOOLS@@


def create_http_app() -> Any:
    """Streamable HTTP with JSON responses (no SSE)."""
    return server.http_app(json_response=True)


if __name__ == "__main__":
    server.run("stdio", show_banner=False)
