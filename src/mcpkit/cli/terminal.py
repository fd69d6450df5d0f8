"""Server text made safe for a terminal: one place for every command and every question.

A server's name, messages, tool descriptions and results are data from a peer. Printed raw,
they could send escape sequences (retitle the window, clear the screen, rewrite a line with
`\r`), C1 controls or bidi overrides (`\u202e`) to the user's terminal. Everything here shows
such characters as visible escapes instead; printable text, any script, passes unchanged.

Every command prints through these: `shown` for a line, `shown_block` for a server's text
that may span lines, `shown_text` for a result or a message of ours that holds server text,
`json_text` for `--json`, and `log_to_terminal` for what the client's modules log while a
command runs (a warning may quote what the server sent).

Imports the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from mcpkit.errors import ProtocolViolation

__all__ = [
    "json_text",
    "log_to_terminal",
    "shown",
    "shown_block",
    "shown_text",
]


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
    try:
        text = json.dumps(value, indent=indent, ensure_ascii=False)
    except RecursionError:  # the JSON decoder reads 1,024 levels, json.dumps writes fewer
        raise ProtocolViolation("the server's answer is nested too deeply to print as JSON "
                                "(over 900 levels)") from None
    if text.isascii():
        return text
    return "".join(c if c.isprintable() or c == "\n" else _escaped(c) for c in text)


class _Escaping(logging.Formatter):
    """Log records as `shown_text` leaves them: a record may quote what a server sent."""

    def format(self, record: logging.LogRecord) -> str:
        return shown_text(super().format(record))


def log_to_terminal(level: int = logging.WARNING) -> None:
    """Send what mcpkit's modules log at `level` and above to stderr, escaped, unless the
    application configured logging itself (a command run as a library call)."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Escaping("%(message)s"))
    handler.setLevel(level)
    root.addHandler(handler)
