"""What `mcpkit dev TARGET` inspects, and the processes it runs for it.

TARGET is what every client command takes as SERVER (`mcpkit.cli.servers`): an http(s) URL,
a Python file holding a `Server` (run over stdio as `mcpkit run` runs it), or a command line in
one quoted string. With `--http`, a file is served over Streamable HTTP by a child `mcpkit run
FILE --http 127.0.0.1:PORT/mcp` on a free port, and inspected at that URL; its output goes to
the terminal. With `--reload`, the `.py` files beside the file are watched (as `mcpkit run
--reload` watches them) and a change restarts the server: the inspector's stdio connection
starts a new process, or the HTTP child is started again on the same port, and the page is
told which file changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mcpkit.cli.reload import POLL_SECONDS, root_of, snapshot
from mcpkit.cli.usage import UsageError

__all__ = [
    "READY_WAIT",
    "Served",
    "Target",
    "read_target",
    "watch",
]

READY_WAIT: Final = 30.0
"""Longest wait for a served child to accept connections."""
_LOOK: Final = 0.05


@dataclass(frozen=True, slots=True)
class Target:
    given: str
    """TARGET as typed."""
    file: Path | None
    """The Python file, for a file target."""
    kind: str
    """`"stdio"` or `"http"`: how the inspector reaches it."""
    url: str | None = None
    """The URL it is reached at (HTTP)."""

    @property
    def server(self) -> str:
        """The SERVER argument that reaches it (what the copied `mcpkit` lines name)."""
        return self.url if self.url is not None else self.given


def _file_of(spec: str) -> Path | None:
    path = spec.rsplit(":", 1)[0] if spec.count(":") == 1 and not os.path.exists(spec) else spec
    if path.endswith(".py") and " " not in spec:
        if not os.path.isfile(path):
            raise UsageError(f"file not found: {path}")
        return Path(path)
    return None


def read_target(spec: str, *, http: bool = False, reload: bool = False) -> Target:
    """The target `spec` names; UsageError for one the options do not fit."""
    spec = spec.strip()
    if not spec:
        raise UsageError("TARGET is empty; give a server file, a URL or a command line")
    if spec.startswith(("http://", "https://")):
        if http or reload:
            raise UsageError("--http and --reload serve a server file; a URL is already served "
                             "(restart that server yourself)")
        return Target(spec, None, "http", spec)
    file = _file_of(spec)
    if file is None and (http or reload):
        raise UsageError("--http and --reload apply to a server file (path/to/server.py); a "
                         "command line runs as it is given")
    return Target(spec, file, "http" if http else "stdio")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """A file target served over HTTP by a child `mcpkit run`, restartable on the same port."""

    def __init__(self, target: Target, port: int | None = None) -> None:
        assert target.file is not None
        self.target = target
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start the child and wait until it accepts connections; UsageError if it exits or
        never listens."""
        from mcpkit.cli.settings import by_name

        # A child that found MCPKIT_RELOAD or MCPKIT_WORKERS would supervise children itself.
        settings = by_name()
        own = {settings["reload"].env, settings["workers"].env}
        env = {name: value for name, value in os.environ.items() if name not in own}
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mcpkit", "run", self.target.given, "--http",
            f"127.0.0.1:{self.port}/mcp", stdin=asyncio.subprocess.DEVNULL, env=env)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + READY_WAIT
        while loop.time() < deadline:
            if self._process.returncode is not None:
                raise UsageError(f"the server {self.target.given} exited with status "
                                 f"{self._process.returncode} before serving (see above)")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(_LOOK)
                continue
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            return
        raise UsageError(f"the server {self.target.given} did not listen on port {self.port} "
                         f"within {READY_WAIT:.0f} s")

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()

    async def restart(self) -> None:
        await self.stop()
        await self.start()


async def watch(target: Target, changed: Callable[[str], Awaitable[None]]) -> None:
    """Call `changed(name)` each time a `.py` file beside the target changes (until cancelled)."""
    root = root_of(target.given)
    seen = await asyncio.to_thread(snapshot, root)
    while True:
        await asyncio.sleep(POLL_SECONDS)
        now = await asyncio.to_thread(snapshot, root)
        if now == seen:
            continue
        different = sorted({*now.items()} ^ {*seen.items()})
        seen = now
        name = os.path.relpath(different[0][0], root) if different else "a file"
        await changed(name)
