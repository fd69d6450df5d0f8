"""What every `mcpkit` command shares about failing: `UsageError` and the exit statuses.

A mistake on the command line is the user's to fix, so it is one line on stderr and status 2,
never a traceback; a server that said no is status 1. Imports the standard library only.
"""

from __future__ import annotations

from typing import Final

from mcpkit.errors import UsageError

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "UsageError",
]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
"""The server said no: an error, an `isError` result, a connection that failed."""
EXIT_USAGE: Final = 2
"""The command line needs changing: a bad argument, a missing file, an answer not given."""


