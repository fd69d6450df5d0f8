"""What the hostile-server tests measure with: this process's RSS, and a listener that counts
every connection made to it (the URL a schema's remote `$ref` names, which must get none)."""

from __future__ import annotations

import asyncio
from pathlib import Path


def rss_mib() -> float:
    """This process's resident set, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


class Listener:
    """A TCP listener on 127.0.0.1 that counts every connection made to it."""

    def __init__(self) -> None:
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            writer.close()

        self.server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()
