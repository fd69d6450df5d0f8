"""The smallest useful mcpkit server: `python examples/quickstart/server.py`, or `mcpkit run` it."""

from typing import TypedDict

from mcpkit import Server

server = Server("quickstart", "1.0.0", instructions="Echo text and add numbers.")


class Sum(TypedDict):
    sum: int


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: the text to send back
    """
    return text


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers.

    Args:
        a: the first number
        b: the number to add to it
    """
    return {"sum": a + b}


if __name__ == "__main__":
    server.run()  # stdio, as `mcpkit run examples/quickstart/server.py`; run(http=8000) for HTTP
