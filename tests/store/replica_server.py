"""A server for the multi-process store tests: a one-time confirmation (its retry needs the
shared store) and a tool that needs no state. Run with `mcpkit run` and `--store URL` or
MCPKIT_STORE."""

from mcpkit import Context, Server

server = Server("replica")


@server.tool()
async def redeem(code: str, ctx: Context) -> str:
    """Single use: the confirmation counts once, whichever process gets it."""
    answer = await ctx.elicit("confirm", f"Redeem {code}?", single_use=True)
    return f"redeemed {code}" if answer.accepted else "kept"


@server.tool()
async def echo(text: str) -> str:
    """Needs no state."""
    return text
