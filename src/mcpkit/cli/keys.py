"""`mcpkit keys path | new | export | rotate`: the persisted key ring that seals `requestState`.

Servers that are given no keys (`ServerOptions.state_keys`, MCPKIT_STATE_KEYS) share the ring
kept in the user's data folder (`mcpkit.store.state_keys`, docs/state.md). These commands
show where it is, rotate it, and hand its keys to replicas on other hosts. No command prints a
key unless asked to (`new`, `export`). Exit status: 0 done, 1 the ring cannot be used (the
message names the fix), 2 a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

__all__ = [
    "register",
    "run_keys",
]

_COMMANDS = {
    "path": "print where the key ring is kept",
    "new": "print a fresh key for MCPKIT_STATE_KEYS or ServerOptions.state_keys (not stored)",
    "export": "print the ring's keys as MCPKIT_STATE_KEYS takes them, to give replicas the same ring",
    "rotate": "put a new sealing key first; the previous one still opens for --keep seconds",
}


def register(sub: Any) -> None:
    """Add `keys` and its subcommands to `mcpkit`'s subparsers."""
    keys = sub.add_parser("keys", help="the key ring that seals multi round-trip state",
                          description=__doc__.split("\n\n")[1] if __doc__ else None)
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    for name, help_text in _COMMANDS.items():
        action = actions.add_parser(name, help=help_text, description=help_text)
        if name == "rotate":
            from mcpkit.store.state_keys import DEFAULT_KEEP

            action.add_argument(
                "--keep", type=float, default=DEFAULT_KEEP, metavar="SECONDS",
                help="how long the retired key still opens states and handles sealed with it "
                f"(default {DEFAULT_KEEP:.0f}: a day); at least the longest state_ttl or handle "
                "life in use",
            )
            action.add_argument(
                "--store", metavar="URL",
                help="rotate the ring kept in this PostgreSQL or Redis store (default: "
                "MCPKIT_STORE), shared by every replica on it, instead of the file",
            )
            action.add_argument(
                "--lead", type=float, default=None, metavar="SECONDS",
                help="with a shared store: how long the new key is published before it seals, "
                "so every replica has read it first (default 30)",
            )


def run_keys(args: argparse.Namespace) -> int:
    from mcpkit.errors import StoreUnavailableError
    from mcpkit.server.sealing import STATE_KEYS_ENV
    from mcpkit.store.state_keys import KeyFileError, key_file, load_or_create, rotate
    from mcpkit.store.urls import StoreURLError

    command = args.keys_command
    path = key_file()
    if command != "new" and os.environ.get(STATE_KEYS_ENV, "").strip():
        print(f"mcpkit keys: note: {STATE_KEYS_ENV} is set, so servers started with this "
              f"environment use its keys, not the ring in {path}", file=sys.stderr)
    try:
        if command == "path":
            print(path)
        elif command == "new":
            from mcpkit.server.sealing import new_state_key

            print(new_state_key())
        elif command == "export":
            print(",".join(load_or_create(path).live(time.time())))
        else:
            if not args.keep >= 0:
                print(f"mcpkit keys rotate: --keep must be seconds >= 0, not {args.keep}",
                      file=sys.stderr)
                return 2
            now = time.time()
            if _rotate_shared(args, now):
                return 0
            ring = rotate(path, now, args.keep)
            print(f"rotated {path}: a new key seals from now on; "
                  f"{len(ring.live(now)) - 1} older key(s) still open", file=sys.stderr)
    except (KeyFileError, OSError, StoreUnavailableError, StoreURLError) as exc:
        print(f"mcpkit keys {command}: {exc}", file=sys.stderr)
        return 1
    return 0


def _rotate_shared(args: argparse.Namespace, now: float) -> bool:
    """Rotate the ring of the shared store `--store` (or MCPKIT_STORE) names; False when
    there is none, so the file's ring is rotated."""
    from mcpkit.store.shared_ring import DEFAULT_LEAD
    from mcpkit.store.urls import open_backend, store_from_env

    url = args.store or store_from_env()
    backend = open_backend(url) if url else None
    if backend is None or backend.keys is None:
        if args.store:
            print(f"mcpkit keys rotate: a {backend.kind if backend else ''} store keeps no key "
                  "ring; rotating the file's", file=sys.stderr)
        return False
    lead = DEFAULT_LEAD if args.lead is None else args.lead
    try:
        record = backend.keys.rotate(now, args.keep, lead)
    finally:
        backend.keys.close()
    from mcpkit.store.shared_ring import sealing_and_open

    print(f"rotated the state keys in {backend.url}: the new key opens on every replica "
          f"now and seals in {lead:g} s; {len(sealing_and_open(record, now)) - 1} older "
          "key(s) still open", file=sys.stderr)
    return True
