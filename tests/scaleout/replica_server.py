"""The server every replica of the scale-out tests runs (`mcpkit run ... --store URL`).

- `whoami`: the replica's name (REPLICA), so a test sees where a request landed;
- `redeem(code)`: a one-time action confirmed by the user (single use), asked with
  `input_required` (2026-07-28) or `elicitation/create` mid-call (2025-11-25);
- `touch(uri)`: announces that a resource changed, as any write would, for listeners held by
  any replica;
- `survey(topic)`: a task (the Tasks extension) that asks a question once it is a task, then
  works for long after the answer, so it can be followed, answered and cancelled from any
  replica (heartbeats every 0.2 s unless TASK_HEARTBEAT_S says otherwise, so what another
  replica stores is taken up quickly even without the broker);
- `notes://board` and its children: resources to subscribe to.
"""

import asyncio
import os

from mcpkit import Context, Server, ServerOptions
from mcpkit.ext.tasks import TaskOptions

HEARTBEAT_S = float(os.environ.get("TASK_HEARTBEAT_S", "0.2"))
"""TASK_HEARTBEAT_S: a long one (60) leaves the broker the only quick way for a cancel or an
answer served by one replica to reach the replica running the task."""

server = Server("replica", "1.0.0", options=ServerOptions(
    extensions={"tasks": TaskOptions(heartbeat_s=HEARTBEAT_S,
                                     lease_s=max(10.0, 2 * HEARTBEAT_S))}))


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


@server.tool(task="optional")
async def survey(topic: str, ctx: Context) -> str:
    """Ask whether to run a survey on `topic`, then run it (for minutes)."""
    await asyncio.sleep(1.0)  # past the synchronous budget: this call is a task by now
    answer = await ctx.elicit("go", f"Run the survey on {topic}?", {"note": str})
    await ctx.report_progress(1, 2, f"surveying ({answer.get('note')})")
    await asyncio.sleep(600)
    return f"surveyed {topic}"


@server.resource("notes://board", name="board", mime_type="text/plain")
def board() -> str:
    """The board (its children change through `touch`)."""
    return "board"
