"""The server file `mcpkit run --auth-upstream` serves in the CLI tests: no protection of
its own (the command line adds it), a tool that says who is calling and one that asks for
the upstream token explicitly."""

from __future__ import annotations

import httpx

from mcpkit import Context, Server

server = Server("upstream-tools", version="1.0.0")


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the request acts for."""
    p = ctx.principal
    assert p is not None
    return f"{p.subject} via {p.client_id} ({p.claims.get('email')})"


@server.tool()
async def upstream_me(ctx: Context, userinfo: str) -> str:
    """The upstream provider's userinfo at `userinfo` for the caller."""
    token = await ctx.upstream_token()
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        answer = await http.get(userinfo, headers={"authorization": f"Bearer {token}"})
    return f"{answer.status_code} {answer.json().get('sub')}"
