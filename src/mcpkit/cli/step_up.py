"""What a client command does when the server needs scopes its sign-in lacks (a 403
`insufficient_scope` the stored tokens cannot answer: `mcpkit.errors.StepUpNeeded`).

At a terminal (stdin and stderr both one, and no `--no-input`) the user is asked once whether
to sign in again with the union of the scopes held and those the server names; yes runs the
browser sign-in of `mcpkit login` for that server with them (the registration kept for its
authorization server, the sign-in's DPoP and private key settings), and the command runs
again, once. Anywhere else, or on no, the command ends with one line naming the `mcpkit login`
to run. The 403 came before the operation ran, so running it again does it once.

Imports: the standard library and `mcpkit.cli` (the sign-in itself, lazily).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["offer_step_up"]


async def offer_step_up(args: argparse.Namespace, needed: Any,
                        again: Callable[[], Awaitable[int]]) -> int:
    """Answer `needed` (a `StepUpNeeded`) for the command `args` ran; `again` runs it anew."""
    from mcpkit.cli.terminal import shown

    command = args.client_command
    scope = needed.scope or ""
    login = f"mcpkit login {needed.server_url}" + (f" --scope {shlex.quote(scope)}" if scope
                                                    else "")
    interactive = (not args.no_input and not getattr(args, "stepped_up", False)
                   and sys.stdin.isatty() and sys.stderr.isatty())
    if not interactive:
        print(f"mcpkit {command}: {shown(needed)}: run `{shown(login)}`", file=sys.stderr)
        return 1
    print(shown(f"mcpkit {command}: the server at {needed.server_url} needs the scopes "
                f"{scope or 'it names'}, beyond this sign-in's."), file=sys.stderr)
    print("Sign in again with them now? [Y/n] ", end="", file=sys.stderr, flush=True)
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
    if answer not in ("", "y", "yes"):
        print(f"mcpkit {command}: not signed in again; run `{shown(login)}` when ready",
              file=sys.stderr)
        return 1
    code = await _sign_in_again(needed.server_url, scope)
    if code != 0:
        return code
    args.stepped_up = True
    return await again()


async def _sign_in_again(url: str, scope: str) -> int:
    """`mcpkit login URL --scope SCOPE` with the settings of the sign-in it replaces."""
    from mcpkit.cli.auth import BROWSER_MODE, sign_in
    from mcpkit.cli.signins import SignIns

    kept = SignIns().get(url)
    login = argparse.Namespace(
        url=url, no_browser=False, timeout=300.0, port=0, scope=scope, client_id=None,
        client_secret=None, auth_method=None, client_metadata_url=None,
        private_key=kept.private_key if kept is not None else None, application_type=None,
        dpop=kept is not None and kept.dpop_key is not None, client_credentials=False,
        json=False, summary_to_stderr=True)
    return await sign_in(url, login, None, BROWSER_MODE)
