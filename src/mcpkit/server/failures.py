"""What the client and the log are told when a tool, resource or prompt raises unexpectedly.

An uncaught exception in a handler is the handler failing, not the request being wrong: a tool
answers `isError: true` so the model sees the failure and can go on, a resource or a prompt
answers a JSON-RPC error that names it. Either way the text says what failed and carries an
error id; the exception's message stays out of it by default, because it may hold what a
client must not see (paths, queries, tokens), and the traceback goes to the server log under
the same id, so an operator finds the one failure a user reports.
`ServerOptions.expose_errors` (`mcpkit run --dev`) adds the exception's type and message.

What a handler raises on purpose is not a failure and never comes here: `ToolError` (its own
text as `isError`), an `RPCError` (its JSON-RPC error as it is), and the `BaseException`s that
are not errors at all (an input round's `InputRequired`, cancellation, `KeyboardInterrupt`).

The logged traceback starts at the handler's own frame: the frames of mcpkit that called it
(the dispatch, the worker thread) are left out, and counted in the log line.

Imports the standard library only.
"""

from __future__ import annotations

import logging
import os
import secrets
from types import TracebackType
from typing import Final

__all__ = [
    "ERROR_ID_BYTES",
    "failure_text",
    "new_error_id",
    "users_frames",
]

log = logging.getLogger("mcpkit.server")

ERROR_ID_BYTES = 6
"""An error id is this many random bytes in hex (12 characters): short enough to read out,
random enough that two failures never share one."""


def new_error_id() -> str:
    """A fresh error id, unique per failure."""
    return secrets.token_hex(ERROR_ID_BYTES)


_PACKAGE: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def users_frames(trace: TracebackType | None) -> tuple[TracebackType | None, int]:
    """The traceback from the first frame outside mcpkit on (the user's handler), and how many
    of mcpkit's own calling frames were left before it; the whole of it, when every frame is
    mcpkit's (a failure inside mcpkit itself)."""
    start, skipped = trace, 0
    while start is not None and start.tb_frame.f_code.co_filename.startswith(_PACKAGE):
        start, skipped = start.tb_next, skipped + 1
    return (start, skipped) if start is not None else (trace, 0)


def failure_text(kind: str, name: str, exc: BaseException, *, expose: bool) -> tuple[str, str]:
    """Log the failure of the `kind` called `name` (`tool`, `resource`, `prompt`) with its
    traceback, and return (the text the client sees, its error id).

    The log line and the text begin alike, `tool 'x' failed (error id ...)`, so what a user
    pastes from the client is what an operator searches the log for.
    """
    error_id = new_error_id()
    head = f"{kind} {name!r} failed (error id {error_id})"
    trace, left_out = users_frames(exc.__traceback__)
    said = f" ({left_out} frames of mcpkit calling it left out)" if left_out else ""
    log.error("%s%s", head, said, exc_info=(type(exc), exc, trace))
    if expose:
        message = str(exc)
        detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        return f"{head}: {detail}", error_id
    return (
        f"{head}: an unexpected error in the server; its log holds the details under this id",
        error_id,
    )
