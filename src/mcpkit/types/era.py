"""The two eras of the protocol, named once: `Era`, and its values `MODERN` and `LEGACY`.

`"modern"` is 2026-07-28 (per-request `_meta`, `server/discover`), `"legacy"` the initialize era
(2025-11-25 and before). The strings are the ones the wire rules, the client's options
(`ClientOptions(era=...)`) and the era cache file use, so the type is a `Literal` of them rather
than an enum: a value read from a file or an option compares equal without conversion.

Imports nothing of mcpkit's.
"""

from typing import Final, Literal

__all__ = [
    "ERAS",
    "LEGACY",
    "MODERN",
    "Era",
]

Era = Literal["modern", "legacy"]

MODERN: Final[Era] = "modern"
LEGACY: Final[Era] = "legacy"
ERAS: Final[tuple[Era, ...]] = (MODERN, LEGACY)
"""Every era, modern first."""
