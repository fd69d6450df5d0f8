"""Framing of messages on byte streams: newline-delimited JSON (stdio) and Server-Sent Events.

Both are sans-IO: bytes in, frames out. `LineReader` enforces a size limit while it buffers,
so a peer that never sends a newline cannot make us hold more than the limit in memory; an
oversized line is reported as `Oversized` once its end is seen and the bytes are dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "Allowance",
    "LineReader",
    "Oversized",
    "SSEDecoder",
    "sse_event",
]

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
_HEAD = 256
"""Bytes of an oversized line kept (`Oversized.head`): enough for the `id` an encoder writes
first, so the request it answers can fail at once instead of waiting for its timeout."""


class Allowance:
    """Larger messages a transport accepts while a caller expects one (`allowing`): a skill
    file its entry sizes past the transport's limit. `raised` is the largest allowed now, 0
    while none is; a transport's limit is the larger of its own and this."""

    __slots__ = ("_allowed",)

    def __init__(self) -> None:
        self._allowed: list[int] = []

    @property
    def raised(self) -> int:
        return max(self._allowed, default=0)

    @contextmanager
    def allowing(self, max_bytes: int) -> Iterator[None]:
        self._allowed.append(max_bytes)
        try:
            yield
        finally:
            self._allowed.remove(max_bytes)


class Oversized:
    """Stands in for a line that was longer than the limit; `size` counts what was dropped and
    `head` holds its first bytes (at most 256)."""

    __slots__ = ("head", "size")

    def __init__(self, size: int, head: bytes = b"") -> None:
        self.size = size
        self.head = head

    def __repr__(self) -> str:
        return f"Oversized({self.size})"


class LineReader:
    """Splits a byte stream into lines (without the newline); blank lines are skipped."""

    __slots__ = ("_buf", "_dropped", "_dropping", "_head", "max_bytes")

    def __init__(self, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._dropping = False
        self._dropped = 0
        self._head = b""

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            if nl < 0:
                chunk = data[start:]
                if self._dropping:
                    self._dropped += len(chunk)
                elif len(self._buf) + len(chunk) > self.max_bytes:
                    self._dropping = True
                    self._dropped = len(self._buf) + len(chunk)
                    self._head = (bytes(self._buf[:_HEAD]) + chunk[:_HEAD])[:_HEAD]
                    self._buf.clear()
                else:
                    self._buf += chunk
                break
            if self._dropping:
                out.append(Oversized(self._dropped + nl - start, self._head))
                self._dropping = False
                self._dropped = 0
            elif self._buf:
                self._buf += data[start:nl]
                line = bytes(self._buf)
                self._buf.clear()
                self._emit(line, out)
            else:
                self._emit(data[start:nl], out)
            start = nl + 1
        return out

    def _emit(self, line: bytes, out: list[bytes | Oversized]) -> None:
        if len(line) > self.max_bytes:
            out.append(Oversized(len(line), line[:_HEAD]))
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.strip():
            out.append(line)

    def close(self) -> list[bytes | Oversized]:
        """End of stream: a final line without a newline still counts as a message."""
        out: list[bytes | Oversized] = []
        if self._dropping:
            out.append(Oversized(self._dropped, self._head))
        elif self._buf:
            self._emit(bytes(self._buf), out)
        self._buf.clear()
        self._dropping = False
        return out


def sse_event(data: bytes, event: str | None = None) -> bytes:
    """One SSE event carrying one JSON message on a single `data:` line."""
    if event is None:
        return b"data: " + data + b"\n\n"
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"


class SSEDecoder:
    """Incremental SSE parser: yields (event, data, id, retry) for each dispatched event.

    Comment lines (keep-alives) are ignored, as the spec requires of clients. A block that
    only sets `id` or `retry` (a priming event without a data line) is still yielded, with
    empty data, because the last event id and the reconnection wait take effect without data.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._fields = False

    def feed(self, chunk: bytes) -> Iterator[tuple[str, str, str | None, int | None]]:
        self._buf += chunk
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                return
            raw = bytes(self._buf[:nl])
            del self._buf[: nl + 1]
            line = raw.decode("utf-8", "replace").rstrip("\r")
            if not line:
                if self._data or self._event is not None or self._fields:
                    yield (self._event or "message", "\n".join(self._data), self._id, self._retry)
                self._event, self._data, self._retry, self._fields = None, [], None, False
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                self._id = value
                self._fields = True
            # ASCII digits only: str.isdigit() also holds for "²" or "٣", which int() refuses
            # or reads as a number the server never wrote; such a retry field is ignored.
            elif name == "retry" and value.isascii() and value.isdigit():
                self._retry = int(value)
                self._fields = True
