"""Spawning and supervising a stdio server: `StdioServer` (a `Connector`) and `StdioTransport`.

The server's stdout carries the protocol, one JSON message per line; its stdin is ours and
carries nothing else. Its stderr is the server's own business: passed through to ours,
captured into a bounded buffer (shown when the server fails, its lines kept as lines), or
discarded, and never read as protocol. A line on stdout that is not a JSON-RPC message is noted
once per kind for each `StdioServer`, however many lines or restarts repeat it: the note says
that the server breaks the stdio rule, and a hundred copies of it say nothing more. A line over
`max_message_bytes` is dropped as it streams, and fails at once the request it answers when its
first bytes name that request's id. Answers to the server's own requests are dropped while it
leaves more than 1 MiB of our output unread: a server flooding requests without reading cannot
grow our write buffer without end. Shutdown follows the stdio transport's order: close stdin,
wait, SIGTERM, wait, SIGKILL (STDIO-8), so no child outlives the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson

from mcpkit.client.routing import RoutedTransport, StreamRouter
from mcpkit.errors import RPCError, TransportError
from mcpkit.protocol.codec import encode
from mcpkit.protocol.framing import DEFAULT_MAX_MESSAGE_BYTES, Allowance, LineReader, Oversized

__all__ = [
    "StdioServer",
    "StdioTransport",
    "python_server",
]

log = logging.getLogger("mcpkit.client")

Stderr = Literal["inherit", "capture", "discard"]
Tap = Any  # Callable[[str, dict[str, Any]], None]: ("send" | "receive", message)

_STDERR_KEEP = 64 * 1024
_UNREAD_ANSWERS = 1024 * 1024
"""Bytes of our output the server may leave unread before answers to its requests are dropped
(requests and notifications of ours wait for the pipe instead)."""
_STDERR_LINES = 10
"""Lines of a captured stderr put in the message of a server that ended."""
_POSIX = os.name == "posix"
_SIGKILL: int = getattr(signal, "SIGKILL", signal.SIGTERM)


class StdioServer:
    """How to start one stdio server; `connect()` starts a new process each time."""

    kind = "stdio"

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Stderr = "inherit",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        shutdown_timeout: float = 2.0,
        tap: Tap | None = None,
    ) -> None:
        """`command` is an argument list, or one string split like a shell would split it.

        `env` is added to this process's environment (a server must find its PATH).
        `tap`, when given, sees every message in both directions (for tests and tracing).
        """
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise ValueError("StdioServer: the command is empty; name the program to run")
        if stderr not in ("inherit", "capture", "discard"):
            raise ValueError(
                f"StdioServer: stderr must be 'inherit', 'capture' or 'discard', not {stderr!r}"
            )
        self.argv = argv
        self.env = dict(env) if env else None
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.stderr: Stderr = stderr
        self.max_message_bytes = max_message_bytes
        self.shutdown_timeout = shutdown_timeout
        self.tap = tap
        self.key = "stdio:" + shlex.join(argv)
        self.noted: set[str] = set()
        """The kinds of stray stdout line already noted (each is logged once)."""

    async def connect(self) -> StdioTransport:
        stderr = {
            "inherit": None,
            "capture": asyncio.subprocess.PIPE,
            "discard": asyncio.subprocess.DEVNULL,
        }[self.stderr]
        env = {**os.environ, **self.env} if self.env else None
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=self.cwd,
                # Its own process group, so a launcher's children (npx -> node) end with it.
                start_new_session=_POSIX,
            )
        except OSError as exc:
            raise TransportError(
                f"could not start the server {shlex.join(self.argv)!r}: {exc.strerror or exc}"
                " (check the command and that the program is on PATH)"
            ) from None
        return StdioTransport(proc, self)

    def __repr__(self) -> str:
        return f"StdioServer({shlex.join(self.argv)!r})"


def python_server(target: str, **options: Any) -> StdioServer:
    """A Python file or module holding a `Server`, run over stdio as `mcpkit run` runs it."""
    return StdioServer([sys.executable, "-m", "mcpkit", "run", target], **options)


class StdioTransport(RoutedTransport):
    """One running server process, spoken to over its stdin and stdout."""

    def __init__(self, proc: asyncio.subprocess.Process, spec: StdioServer) -> None:
        self.proc = proc
        self.spec = spec
        self._tap = spec.tap
        self._router = StreamRouter(self._write, self._drain)
        self._allowance = Allowance()
        self.allowing = self._allowance.allowing
        """Accept lines up to a larger size while the block runs (a skill file's read)."""
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._reader = asyncio.ensure_future(self._read())
        self._stderr_reader = (
            asyncio.ensure_future(self._read_stderr()) if proc.stderr is not None else None
        )

    # -- ClientTransport -------------------------------------------------------------------

    async def close(self) -> None:
        """Close stdin, give the server `shutdown_timeout` to exit, then terminate, then kill."""
        proc = self.proc
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        timeout = self.spec.shutdown_timeout
        for sig in (None, signal.SIGTERM, _SIGKILL):
            if proc.returncode is not None:
                break
            if sig is not None:
                self._signal(sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout)
        if proc.returncode is None:  # pragma: no cover - SIGKILL did not take
            await proc.wait()
        self._signal(_SIGKILL)  # whatever the server left running in its group
        self._router.close(self._exit_reason())
        pipes = getattr(proc, "_transport", None)
        if pipes is not None:
            pipes.close()
        for task in (self._reader, self._stderr_reader):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if _POSIX:
                os.killpg(self.proc.pid, sig)
            elif sig == _SIGKILL:  # pragma: no cover - Windows
                self.proc.kill()
            else:  # pragma: no cover - Windows
                self.proc.terminate()

    # -- what the process said -------------------------------------------------------------

    @property
    def stderr_text(self) -> str:
        """The tail of what the server wrote to stderr (with `stderr="capture"`)."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self._router.closed

    # -- I/O -------------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            raise TransportError(self._exit_reason())
        if stdin.is_closing():
            return  # the server is gone: `_drain` says why once its last words are read
        if "method" not in message and self._backlog(stdin) > _UNREAD_ANSWERS:
            # A server that sends requests and does not read our answers would otherwise
            # grow this buffer without end: one answer dropped is one request it flooded.
            if "unread answers" not in self.spec.noted:
                self.spec.noted.add("unread answers")
                log.warning("%s: the server leaves over %d bytes of our output unread; answers "
                            "to its requests are dropped until it reads", self.spec,
                            _UNREAD_ANSWERS)
            return
        if self._tap is not None:
            self._tap("send", message)
        try:
            data = encode(message)
        except TypeError as exc:
            raise TypeError(f"{message.get('method', 'a response')}: cannot be sent as JSON "
                            f"({exc})") from None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            stdin.write(data + b"\n")  # a failed write: `_drain` sees the pipe closing

    @staticmethod
    def _backlog(stdin: asyncio.StreamWriter) -> int:
        """Bytes written to the server's stdin that it has not read yet (what the pipe holds
        aside: the kernel's buffer is bounded, ours is not)."""
        return stdin.transport.get_write_buffer_size()

    async def _drain(self) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            return
        try:
            if not stdin.is_closing():
                await stdin.drain()
                return
        except (BrokenPipeError, ConnectionResetError):
            pass
        await self._ended()
        if not self._router.closed:  # stdout still open (a child of the server holds it)
            raise TransportError(self._exit_reason())
        # else the reader has failed every request in flight with the reason, this one too

    async def _ended(self) -> None:
        """Wait (boundedly) for the exit status and the last of stderr: a server that died
        says why there, and the message is worth the short wait."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), self.spec.shutdown_timeout)
        if self._stderr_reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_reader),
                                       self.spec.shutdown_timeout)

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        reader = LineReader(self.spec.max_message_bytes)
        try:
            while True:
                chunk = await stdout.read(65536)
                if not chunk:
                    break
                reader.max_bytes = max(self.spec.max_message_bytes, self._allowance.raised)
                for line in reader.feed(chunk):
                    self._line(line)
            for line in reader.close():
                self._line(line)
            # stdout closed: the process is ending; collect its status and the rest of its
            # stderr (its last words are usually why), both for the message.
            await self._ended()
        finally:
            self._router.close(self._exit_reason())

    def _line(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            self._router.oversized(line.head, line.size, self.spec.max_message_bytes)
            return
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            # STDIO-3 forbids non-protocol output on stdout; tolerate it rather than fail.
            self._note("not JSON", line)
            return
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            self._note("not a JSON-RPC message", line)
            return
        if self._tap is not None:
            self._tap("receive", message)
        try:
            self._router.receive(message)
        except RPCError as exc:  # pragma: no cover - the router validates what it reads
            log.warning("%s: %s", self.spec, exc)

    def _note(self, kind: str, line: bytes) -> None:
        """Log a stray stdout line, the first of its kind for this server only."""
        if kind in self.spec.noted:
            log.debug("%s: ignored another line on stdout that is %s: %r", self.spec, kind,
                      line[:200])
            return
        self.spec.noted.add(kind)
        log.warning("%s: ignored a line on stdout that is %s: %r (a stdio server must write "
                    "only protocol messages there; later ones are not shown)", self.spec, kind,
                    line[:200])

    async def _read_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > _STDERR_KEEP and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def _exit_reason(self) -> str:
        code = self.proc.returncode
        what = f"the server {shlex.join(self.spec.argv)!r}"
        reason = (
            f"{what} closed its stdout" if code is None
            else f"{what} exited with status {code}"
        )
        tail = self.stderr_text.strip()
        if tail:
            last = tail.splitlines()[-_STDERR_LINES:]
            reason += "; its stderr ended with:\n" + "\n".join(last)
        elif self.spec.stderr == "discard":
            reason += " (its stderr was discarded)"
        return reason
