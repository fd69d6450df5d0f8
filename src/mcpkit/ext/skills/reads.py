"""Serving a large skill file: in which form, and how many at once.

The extension retrieves a skill as individually addressable resources, each one whole in one
`resources/read` answer; it defines no ranges, parts or other packed form, and the base
protocol has none either. So a file of up to 16 MiB (the extension's limit) is one message of
about 21 MiB, and what a server can do is keep that message bounded and keep few of them in
memory at once:

- `as_sent` picks text or a base64 blob so that the answer never exceeds
  `mcpkit.ext.skills.entries.read_bound`, the size a host accepts for that one read: text
  whose JSON escapes would take more room than base64 (controls, quotes, backslashes) goes as
  a blob, the same bytes the digest covers;
- `ReadBudget` bounds the large files being sent at once (files of `LARGE_FILE_BYTES` and
  more, `Skills(read_budget_bytes=)`): one such read holds the file, its base64 and the encoded
  answer until the transport has sent it, so a read waits for the budget and, past
  `wait_s`, is refused with -32603 saying to try again. Its share is given back when the
  request's task ends, once the answer was handed to the connection.

Imports the standard library, orjson and `mcpkit.errors`.
"""

from __future__ import annotations

import asyncio
from typing import Final

import orjson

from mcpkit.errors import InternalError

__all__ = [
    "DEFAULT_READ_BUDGET_BYTES",
    "LARGE_FILE_BYTES",
    "ReadBudget",
    "as_sent",
]

LARGE_FILE_BYTES: Final = 1024 * 1024
"""A skill file of this size or more is a large read: held to the budget, its form checked."""
DEFAULT_READ_BUDGET_BYTES: Final = 16 * 1024 * 1024
"""Bytes of large skill files sent at once by default: one file at the extension's limit."""
DEFAULT_WAIT_S: Final = 30.0


def as_sent(data: bytes, text: bool) -> str | bytes:
    """The file as `resources/read` sends it: its text when it is text and its JSON takes no
    more room than base64 would, else its bytes (sent as a base64 blob)."""
    if not text:
        return data
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    if len(data) >= LARGE_FILE_BYTES and len(orjson.dumps(decoded)) - 2 > 4 * -(-len(data) // 3):
        return data
    return decoded


class ReadBudget:
    """Bytes of large skill files being sent at once, at most `limit` (one file larger than
    the limit is sent alone)."""

    def __init__(self, limit: int = DEFAULT_READ_BUDGET_BYTES,
                 wait_s: float = DEFAULT_WAIT_S) -> None:
        if type(limit) is not int or limit < 1:
            raise ValueError(f"read_budget_bytes must be a positive integer, not {limit!r}")
        self.limit = limit
        self.wait_s = wait_s
        self.used = 0
        self._freed = asyncio.Event()

    async def take(self, size: int, uri: str) -> None:
        """Wait until `size` more bytes fit, then hold them until the current task ends;
        -32603 naming `uri` when they did not fit within `wait_s`."""
        loop = asyncio.get_running_loop()
        until = loop.time() + self.wait_s
        while self.used and self.used + size > self.limit:
            self._freed.clear()
            try:
                await asyncio.wait_for(self._freed.wait(), until - loop.time())
            except TimeoutError:
                raise InternalError(
                    f"resources/read {uri}: the server is sending other large skill files "
                    f"(up to {self.limit} bytes at once); try again shortly",
                    {"uri": uri}) from None
        self.used += size
        task = asyncio.current_task()
        assert task is not None, "a read is served in a task"
        task.add_done_callback(lambda _: self._give(size))

    def _give(self, size: int) -> None:
        self.used -= size
        self._freed.set()
