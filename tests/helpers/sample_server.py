"""A server with one of everything, shared by tests that need a realistic registry."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcpkit import CacheHint, Server, ServerOptions, ToolError


class Sum(TypedDict):
    sum: int


def make_server(**options: Any) -> Server:
    server = Server("test-server", "9.9.9", instructions="Use the tools.",
                    options=ServerOptions(**options) if options else None)

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    @server.tool()
    def echo(text: Annotated[str, "What to say back"]) -> str:
        """Say it back."""
        return text

    @server.tool()
    def fail() -> str:
        """Always fails as a tool."""
        raise ToolError("the printer is on fire")

    @server.tool()
    def crash() -> str:
        """Fails with a bug."""
        raise RuntimeError("secret internal detail")

    @server.resource("test://static", mime_type="text/plain", cache=CacheHint(5000, "public"))
    def static() -> str:
        """A fixed text."""
        return "static text"

    @server.resource_template("test://item/{id}/data", mime_type="application/json")
    def item(id: str) -> dict[str, Any]:
        """One item."""
        return {"id": id}

    @server.prompt()
    def greet(name: str, mood: str | None = None) -> str:
        """Greet someone."""
        return f"Hello {name} ({mood or 'neutral'})"

    return server
