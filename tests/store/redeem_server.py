"""A server for the multi-process store tests: a one-time confirmation (its retry needs the
shared store) and a tool that needs no state. Run with `mcpkit run` and `--store URL` or
MCPKIT_STORE."""

from mcpkit import Context, Server
from mcpkit.server.options import ServerOptions


def make_server(options: ServerOptions | None = None) -> Server:
    made = Server("replica", options=options)

    @made.tool()
    async def redeem(code: str, ctx: Context) -> str:
        """Single use: the confirmation counts once, whichever process gets it."""
        answer = await ctx.elicit("confirm", f"Redeem {code}?", single_use=True)
        return f"redeemed {code}" if answer.accepted else "kept"

    @made.tool()
    async def echo(text: str) -> str:
        """Needs no state."""
        return text

    return made


server = make_server()
