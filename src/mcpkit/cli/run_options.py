"""What `mcpkit run`'s options change on the server it loaded: `--dev`, `--store URL` and
`--grace SECONDS`.

A server file builds its `Server` with its own `ServerOptions`; the command line then changes a
few of them for this run. `ServerOptions` is a dataclass, so the change is a new options object
(`dataclasses.replace`), and whatever the server built from the old one is built again: its
`Sealer` holds the store and keys, so it is replaced too, and its cached lists are dropped.
Only options the command line names are touched; everything else the file set stays. The
lists a server caches do not depend on the options changed here, so they are kept.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from typing import Any, Final

from mcpkit.cli.usage import UsageError
from mcpkit.store import urls as forms

__all__ = ["STORE_FORMS", "apply_run_options", "parse_store"]

STORE_FORMS: Final = forms.STORE_FORMS
_CHATTY: Final = ("asyncio", "httpcore", "httpx", "watchfiles")


def parse_store(value: str) -> str:
    """`--store URL` checked (`mcpkit.store.urls`: memory, sqlite:///PATH or sqlite:PATH,
    postgresql://..., redis://...) and returned as given; the server opens it. Anything else
    is one line naming the accepted forms."""
    try:
        forms.parse_store_url(value)
    except forms.StoreURLError as exc:
        raise UsageError(f"--store {value!r}: {exc.reason}") from None
    return value.strip()


def apply_run_options(server: Any, *, dev: bool = False, store: Any = None,
                      grace: float | None = None) -> None:
    """Change the loaded server's options for this run and rebuild what depends on them.

    `dev`: an uncaught exception's type and message reach the client (`expose_errors`), and
    the server's debug log goes to stderr. `store`: the store URL of every state seam
    (`mcpkit.store.urls`), so processes sharing it cannot both redeem one retry, and replicas
    sharing a PostgreSQL or Redis share legacy sessions and the state keys too. `grace`: how
    long a stopping server lets requests and tasks finish (`ServerOptions.grace_s`).
    """
    changes: dict[str, Any] = {}
    if dev:
        changes["expose_errors"] = True
    if store is not None:
        changes["store"] = store
    if grace is not None:
        changes["grace_s"] = grace
    if not changes:
        return
    from mcpkit.server.mrtr import Sealer

    options = server.options
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        raise UsageError(f"{server.name}: its options are not a ServerOptions")
    unknown = [name for name in changes if not hasattr(options, name)]
    if unknown:  # an older mcpkit than this command line
        raise UsageError(f"this mcpkit's ServerOptions has no {', '.join(unknown)}")
    server.options = dataclasses.replace(options, **changes)
    server.sealer = Sealer(server.options)
    if dev:
        logging.basicConfig(
            level=logging.DEBUG, stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        for chatty in _CHATTY:  # their wire-level debug lines would bury the server's own
            logging.getLogger(chatty).setLevel(logging.INFO)
