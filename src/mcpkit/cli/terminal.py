"""Server text made safe for a terminal: one place for every command and every question.

A server's name, messages, tool descriptions and results are data from a peer. Printed raw,
they could send escape sequences (retitle the window, clear the screen, rewrite a line with
`\r`), C1 controls or bidi overrides (`\u202e`) to the user's terminal. Everything here shows
such characters as visible escapes instead; printable text, any script, passes unchanged.

Imports the standard library only.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_text", "shown", "shown_block", "shown_text"]


def shown(text: Any) -> str:
    """Server text safe for one line of a terminal: every character that is not printable
    (controls, newlines, bidi and other format characters) made visible as an escape."""
    value = str(text)
    return value if value.isprintable() else "".join(
        c if c.isprintable() else repr(c)[1:-1] for c in value
    )


def shown_block(text: Any) -> str:
    """Server text that may span lines: each line after the first behind a bar (`  | `), so
    none of its lines can pass for one of ours."""
    return "\n  | ".join(shown(line) for line in str(text).split("\n"))


def shown_text(text: Any) -> str:
    """A server's text result: its lines and tabs kept (it is the output), everything else
    that is not printable (`\r` included, so no line can overwrite another) escaped."""
    value = str(text).replace("\r\n", "\n")
    return value if value.isprintable() else "".join(
        c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in value
    )


def _escaped(c: str) -> str:
    code = ord(c)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any, indent: int | None = None) -> str:
    """Exact JSON that is safe on a terminal: `json.dumps` escapes C0 controls, and the
    non-printable characters it would write raw (C1 controls, bidi and other format
    characters, line separators) become `\\uXXXX` escapes, which decode to the same value."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if text.isascii():
        return text
    return "".join(c if c.isprintable() or c == "\n" else _escaped(c) for c in text)
