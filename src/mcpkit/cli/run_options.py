"""What `mcpkit run`'s options change on the server it loaded: `--dev`, `--store URL`, and the
`ServerOptions` fields the environment or an env file set (`mcpkit.cli.settings`).

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

from mcpkit.cli.settings import option_at
from mcpkit.cli.usage import UsageError
from mcpkit.store import urls as forms

__all__ = [
    "STORE_FORMS",
    "apply_run_options",
]

STORE_FORMS: Final = forms.STORE_FORMS
_CHATTY: Final = ("asyncio", "httpcore", "httpx", "watchfiles")


def apply_run_options(server: Any, *, dev: bool = False, store: Any = None,
                      options: dict[str, Any] | None = None) -> None:
    """Change the loaded server's options for this run and rebuild what depends on them.

    `dev`: an uncaught exception's type and message reach the client (`expose_errors`), and
    the server's debug log goes to stderr. `store`: the store URL of every state seam
    (`mcpkit.store.urls`), so processes sharing it cannot both redeem one retry, and replicas
    sharing a PostgreSQL or Redis share legacy sessions and the state keys too. `options`:
    `ServerOptions` fields by dotted name (`page_size`, `tasks.lease_s`), from the settings.
    """
    changes: dict[str, Any] = dict(options or {})
    if dev:
        changes["expose_errors"] = True
    if store is not None:
        changes["store"] = store
    if not changes:
        return
    from mcpkit.server.sealing import Sealer

    current = server.options
    if not dataclasses.is_dataclass(current) or isinstance(current, type):
        raise UsageError(f"{server.name}: its options are not a ServerOptions")
    try:
        server.options = _replaced(current, changes)
    except ValueError as exc:  # a nested options object refused the combination
        raise UsageError(f"{server.name}: {exc}") from None
    server.sealer = Sealer(server.options)
    if dev:
        logging.basicConfig(
            level=logging.DEBUG, stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        for chatty in _CHATTY:  # their wire-level debug lines would bury the server's own
            logging.getLogger(chatty).setLevel(logging.INFO)


def _replaced(options: Any, changes: dict[str, Any]) -> Any:
    """`options` with `changes` made, a dotted name changing the options object it names (a
    field's, or an extension's in `ServerOptions.extensions`)."""
    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for name, value in changes.items():
        head, _, rest = name.partition(".")
        try:
            option_at(options, head)
        except AttributeError:  # an older mcpkit than this command line
            raise UsageError(f"this mcpkit's {type(options).__name__} has no {head}") from None
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    extensions: dict[str, Any] = {}
    for head, inner in nested.items():
        changed = _replaced(option_at(options, head), inner)
        if head in getattr(type(options), "__dataclass_fields__", {}):
            direct[head] = changed
        else:
            extensions[head] = changed
    if extensions:
        direct["extensions"] = {**options.extensions, **extensions}
    return dataclasses.replace(options, **direct)
