"""The server every replica of the scale-out tests runs (`mcpkit run ... --store URL`).

- `whoami`: the replica's name (REPLICA), so a test sees where a request landed;
- `redeem(code)`: a one-time action confirmed by the user (single use), asked with
  `input_required` (2026-07-28) or `elicitation/create` mid-call (2025-11-25);
- `touch(uri)`: announces that a resource changed, as any write would, for listeners held by
  any replica;
- `notes://board` and its children: resources to subscribe to.
"""

import os

from mcpkit import Context, Server

server = Server("replica", "1.0.0")


@server.tool()
def whoami() -> str:
    """The name of the replica serving this call."""
    return os.environ.get("REPLICA", "?")


@server.tool()
async def redeem(code: str, ctx: Context) -> str:
    """Redeem a voucher once the user confirms; the confirmation counts once."""
    answer = await ctx.elicit("confirm", f"Redeem {code}?", {"note": str}, single_use=True)
    if not answer.accepted:
        return f"kept {code} on {os.environ.get('REPLICA', '?')}"
    return f"redeemed {code} ({answer.get('note')}) on {os.environ.get('REPLICA', '?')}"


@server.tool()
def touch(uri: str) -> str:
    """Announce that `uri` changed, and that the tool list did."""
    server.notify_resource_updated(uri)
    server.notify_tools_changed()
    return f"touched {uri} on {os.environ.get('REPLICA', '?')}"


@server.resource("notes://board", name="board", mime_type="text/plain")
def board() -> str:
    """The board (its children change through `touch`)."""
    return "board"
