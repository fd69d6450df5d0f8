"""Copied to a temporary folder and grown by the --reload test."""

from mcpkit import Server

server = Server("growing", "1.0.0")


@server.tool()
def first() -> str:
    return "one"


# more tools here
