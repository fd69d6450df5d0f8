"""A server for the command-line tests: a tool that reports progress, one that grows the tool
list (for `mcpkit listen`), and one that fails."""

from mcpkit import Context, Server, ToolError

server = Server("cli-tests", "1.0.0")


@server.tool()
async def slow_count(ctx: Context, to: int = 3) -> str:
    """Counts, reporting progress."""
    for i in range(1, to + 1):
        await ctx.report_progress(i, to, f"counted {i}")
    return f"counted to {to}"


@server.tool()
def grow(name: str) -> str:
    """Adds a tool named `name`."""
    server.add_tool(lambda: name, name=name, description="Grown at run time.")
    return f"added {name}"


@server.tool()
def refuse(flag: bool, ratio: float, tags: list[str]) -> str:
    """Always fails, after echoing its typed arguments."""
    raise ToolError(f"refused flag={flag!r} ratio={ratio!r} tags={tags!r}")
