"""Opaque pagination cursors.

A cursor names a position in a list and the list's generation, so a cursor from before the
registry changed is refused (-32602) rather than silently skipping or repeating items.
"""

from __future__ import annotations

import base64
import binascii

from mcpkit.errors import InvalidParamsError

__all__ = [
    "decode_cursor",
    "encode_cursor",
]


def encode_cursor(offset: int, generation: int) -> str:
    return base64.urlsafe_b64encode(f"{generation}:{offset}".encode()).decode().rstrip("=")


def decode_cursor(method: str, cursor: object, generation: int) -> int:
    """The offset a cursor points at, or InvalidParamsError naming what is wrong with it."""
    if type(cursor) is not str:
        raise InvalidParamsError(f"{method}: cursor must be a string")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        gen_s, off_s = raw.split(":")
        gen, off = int(gen_s), int(off_s)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParamsError(f"{method}: invalid cursor {cursor[:64]!r}") from None
    if off < 0:
        raise InvalidParamsError(f"{method}: invalid cursor {cursor[:64]!r}")
    if gen != generation:
        raise InvalidParamsError(
            f"{method}: the cursor has expired because the list changed; list again from the start"
        )
    return off
