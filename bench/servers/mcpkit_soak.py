"""The soak's server (bench/soak.py): an echo tool, and a tool that asks one question.

HTTP:   python -m mcpkit run bench/servers/mcpkit_soak.py --http 127.0.0.1:PORT

`echo` is the plain call. `greet` asks for a name first: in the 2026-07-28 era that is a
multi round-trip request (an `input_required` result carrying `requestState`, then the retry
with the answer); in a 2025-11-25 session it is an `elicitation/create` request on the
response stream.
"""

from mcpkit import Context, Server

server = Server("bench-soak", "1.0.0")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
async def greet(ctx: Context, greeting: str = "Hello") -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("name", "What is your name?", {"name": str})
    return f"{greeting}, {answer['name']}!"
