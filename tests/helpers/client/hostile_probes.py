"""What the hostile-server tests measure with: a client in a process of its own, whose memory
is the client's alone (measured_client.py), a connector whose transports check what the client
POSTs, and a listener that counts every connection made to
it (the URL a schema's remote `$ref` names, which must get none)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from helpers.child_memory import unmeasured_env
from helpers.transports.http_peer import checked_transport

MEASURED_CLIENT = str(Path(__file__).resolve().parent / "measured_client.py")


async def measured(spec: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    """What measured_client.py reports for `spec`: each call's error or text and the client
    process's memory around it. Fails on a message off the schema or a client that died."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, MEASURED_CLIENT, json.dumps(spec), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=unmeasured_env())
    try:
        async with asyncio.timeout(timeout):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
    report: dict[str, Any] = json.loads(out)
    assert report["problems"] == [], report["problems"]
    return report


class Checked:
    """A Connector whose transports check every POSTed message against the schema."""

    kind = "http"

    def __init__(self, url: str) -> None:
        self.url = url
        self.key = url

    async def connect(self) -> Any:
        return checked_transport(self.url)


def grown_mib(call: dict[str, Any]) -> float:
    """How far the client process's resident set rose above where it stood before the call."""
    return (call["peak_kib"] - call["rss_before_kib"]) / 1024


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
