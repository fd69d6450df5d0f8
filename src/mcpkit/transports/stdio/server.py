"""The stdio transport: newline-delimited JSON on the process's stdin and stdout.

stdout belongs to the protocol. `claim_stdout()` moves the real stdout to a private file
descriptor and points descriptor 1 (and `sys.stdout`) at stderr, so that `print()`, logging,
warnings and even C extensions writing to fd 1 end up on stderr instead of corrupting the wire.
`mcpkit run` calls it before the user's module is imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
import threading
from typing import Any

from mcpkit.protocol.framing import LineReader
from mcpkit.transports.stream import StreamConnection

__all__ = [
    "claim_stdout",
    "run_stdio",
    "serve_stdio",
]

log = logging.getLogger("mcpkit.transport")

_protocol_fd: int | None = None


def claim_stdout() -> int:
    """Reserve the real stdout for protocol messages; returns its private descriptor.

    Idempotent. After it, fd 1 and `sys.stdout` write to stderr.
    """
    global _protocol_fd
    if _protocol_fd is not None:
        return _protocol_fd
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    try:
        os.fstat(0)
    except OSError:
        # Started with stdin closed: the next descriptor opened would be 0, this dup or the
        # event loop's own (uvloop then aborts on closing it), and pass for stdin. An empty
        # stdin instead: nothing to serve, a clean exit.
        os.open(os.devnull, os.O_RDONLY)
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _protocol_fd = fd
    return fd


class _Writer:
    """Writes whole messages to a blocking descriptor (one message per call, never split)."""

    __slots__ = ("broken", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False

    def __call__(self, data: bytes) -> None:
        if self.broken:
            return
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except (BrokenPipeError, OSError):
            # The client stopped reading; there is nobody left to answer.
            self.broken = True


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, conn: StreamConnection, reader: LineReader, done: asyncio.Event) -> None:
        self.conn = conn
        self.reader = reader
        self.done = done

    def data_received(self, data: bytes) -> None:
        receive = self.conn.receive
        for line in self.reader.feed(data):
            receive(line)

    def eof_received(self) -> bool:
        for line in self.reader.close():
            self.conn.receive(line)
        self.done.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.done.set()


async def serve_stdio(server: Any, *, stdin_fd: int = 0, stdout_fd: int | None = None) -> None:
    """Serve `server` on stdin/stdout until stdin closes (or SIGTERM); then its tasks are
    drained (`Server.drain_services`, within `ServerOptions.grace_s`) before it returns. Its
    lifespan is held meanwhile: entered before the first message is read, exited once the
    serving ended, errors included."""
    async with server.running():
        await _serve_stdio(server, stdin_fd, stdout_fd)


async def _serve_stdio(server: Any, stdin_fd: int, stdout_fd: int | None) -> None:
    out_fd = stdout_fd if stdout_fd is not None else claim_stdout()
    conn = StreamConnection(server, _Writer(out_fd))
    reader = LineReader(server.options.max_message_bytes)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    stdin = os.fdopen(os.dup(stdin_fd), "rb", buffering=0)
    transport: asyncio.ReadTransport | None = None
    if _watchable(stdin.fileno()):
        try:
            transport, _ = await loop.connect_read_pipe(
                lambda: _StdinProtocol(conn, reader, done), stdin
            )
        except ValueError:
            transport = None
    if transport is None:
        # A regular file, /dev/null or something else epoll cannot watch: read it in a thread.
        _read_in_thread(loop, stdin, _StdinProtocol(conn, reader, done))
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, done.set)
    try:
        await done.wait()
        # What extensions run beside it (tasks) outlives the client: drained, not dropped.
        await server.drain_services(server.options.grace_s)
        await conn.close()
    finally:
        if transport is not None:
            transport.close()
        server.broker.close()


def _watchable(fd: int) -> bool:
    """Whether the event loop may watch `fd`: only a pipe or a socket.

    Asked before `connect_read_pipe`, not left to it: asyncio's loop refuses a regular file
    with ValueError, but uvloop's aborts the whole process (SIGABRT, nothing on stderr) on a
    regular file or on /dev/null, as in `mcpkit run server.py < requests.jsonl`.
    """
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _read_in_thread(
    loop: asyncio.AbstractEventLoop, stream: Any, protocol: _StdinProtocol
) -> None:
    def pump() -> None:
        while True:
            try:
                chunk = stream.read(65536)
            except OSError as exc:
                # Unreadable stdin (opened write-only, say) is the end of input: an error
                # left to kill the thread would leave the server waiting forever.
                log.warning("stdin cannot be read (%s); serving ends", exc)
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(protocol.eof_received)
                return
            loop.call_soon_threadsafe(protocol.data_received, chunk)

    threading.Thread(target=pump, name="mcpkit-stdin", daemon=True).start()


def run_stdio(server: Any) -> None:
    """Serve over stdio in a new event loop; returns when stdin closes."""
    from mcpkit.transports.loop import freeze_startup_heap, run

    claim_stdout()
    freeze_startup_heap()
    try:
        run(serve_stdio(server))
    except KeyboardInterrupt:
        pass
