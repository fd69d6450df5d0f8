"""A server started from an mcpServers entry: it reports the environment and folder it was
started with, so a test can see the entry's env and cwd reached the process."""

from __future__ import annotations

import os

from mcpkit import Server

server = Server("configured", "1.0.0")


@server.tool()
def setting(name: str) -> str:
    """The value of one environment variable of this process ('' when unset)."""
    return os.environ.get(name, "")


@server.tool()
def folder() -> str:
    """This process's working folder."""
    return os.getcwd()
