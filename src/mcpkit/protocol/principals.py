"""The text a principal is kept and compared as: one spelling every store engine holds as it is.

A caller authenticated by a token is the pair of its issuer and subject; one authenticated as a
plain string (or an identity without an issuer) is that string. The pair used to be spelled
`issuer\\0subject`, but PostgreSQL refuses a NUL in text, so every store keyed by principal (a
legacy session's owner, a task's owner) failed there. `principal_text` spells it instead:

- a subject alone is itself, unless it holds a NUL or a lone surrogate (which not every engine
  stores) or begins with `[`; then it is the JSON array `["subject"]`;
- an issuer and a subject are the JSON array `["issuer","subject"]`.

Arrays are written compactly with every character past ASCII escaped, so the text is the same
bytes in memory, SQLite, PostgreSQL and Redis. The spelling is injective (a text that begins
with `[` is one of the arrays, decoded by `principal_parts`; any other is a subject alone) and
stable (no salt, no order to vary). `current_text` reads a principal kept in the old spelling
as the new one, so tasks and sessions stored before compare equal to their owner; and
`digest_text` gives the old spelling back for the digest a sealed state or handle binds, so
those sealed before still open for the same principal.

Imports the standard library only.
"""

from __future__ import annotations

import json

__all__ = [
    "current_text",
    "digest_text",
    "principal_parts",
    "principal_text",
    "storable",
]

_SEPARATORS = (",", ":")


def storable(text: str) -> bool:
    """Whether every engine holds `text` as it is: no NUL (PostgreSQL's text refuses it) and
    no lone surrogate (no UTF-8 spelling)."""
    if "\0" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kept_as_is(subject: str) -> bool:
    return not subject.startswith("[") and storable(subject)


def principal_text(issuer: str | None, subject: str) -> str:
    """The spelling of the principal `subject` (of `issuer`, when it has one)."""
    if issuer:
        return json.dumps([issuer, subject], separators=_SEPARATORS)
    return subject if _kept_as_is(subject) else json.dumps([subject], separators=_SEPARATORS)


def principal_parts(text: str) -> tuple[str | None, str]:
    """(issuer or None, subject) of a spelling `principal_text` made."""
    if text.startswith("["):
        try:
            parts = json.loads(text)
        except ValueError:
            return None, text
        if type(parts) is list and all(type(p) is str for p in parts):
            if len(parts) == 2:
                return parts[0], parts[1]
            if len(parts) == 1:
                return None, parts[0]
    return None, text


def current_text(stored: str) -> str:
    """A principal as kept, in today's spelling: one kept as `issuer\\0subject` is the pair."""
    if "\0" not in stored:
        return stored
    issuer, _, subject = stored.partition("\0")
    return principal_text(issuer or None, subject)


def digest_text(text: str) -> str:
    """The spelling a principal's digest is taken of: `issuer\\0subject`, or the subject, as
    it was before arrays, so what was sealed for a principal still opens for it."""
    if not text.startswith("["):
        return text
    issuer, subject = principal_parts(text)
    return f"{issuer}\0{subject}" if issuer else subject
