"""A server whose tool, resource and prompt fail, run by `mcpkit run` in the failure tests.

FAILING_EXPOSE=1 in the environment turns on `ServerOptions.expose_errors`, as `mcpkit run
--dev` does, so one file serves both halves of the rule.
"""

from __future__ import annotations

import os

from mcpkit import Server
from mcpkit.server.options import ServerOptions

SECRET = "postgres://admin:hunter2@db"
"""What the exception says: exactly what must not reach a client by default."""

server = Server(
    "failing", "1.0.0",
    options=ServerOptions(expose_errors=os.environ.get("FAILING_EXPOSE") == "1"),
)


@server.tool()
def explode() -> str:
    """Fails the way a bug does."""
    raise RuntimeError(f"cannot connect to {SECRET}")


@server.tool()
def fine() -> str:
    """Works, so the server is seen to go on."""
    return "still here"


@server.resource("failing://report")
def report() -> str:
    """Fails the way a bug does."""
    raise LookupError(f"no report in {SECRET}")


@server.prompt()
def brief() -> str:
    """Fails the way a bug does."""
    raise ValueError(f"no brief in {SECRET}")
