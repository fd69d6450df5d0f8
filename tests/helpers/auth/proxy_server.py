"""An mcpkit server behind its authorization proxy, for the end-to-end tests, in its own
process on 127.0.0.1.

`PROXY_SETTINGS` (JSON) says: `upstream` (the upstream identity provider's issuer: an OpenID
provider found by its discovery document, as `presets.upstream("oidc", ...)` makes it),
`client_id` and `client_secret` (the proxy's client there), `port`, and optionally
`limits` (`ProxyLimits` fields), `store` (a store URL, for replicas sharing one) and
`public_port` (the port of the URL clients are told, when it is another replica's, as behind
a balancer). It prints its MCP URL once it accepts connections.

Every client message is checked against the official schema of its era before the server
reads it (`protected_server.SchemaGate`: `GET /test/problems` lists what was off).

Tools: `whoami` (who the token is for, from `ctx.principal`: subject, client, scopes, email,
groups), `upstream_me` (the upstream's userinfo, called with `await ctx.upstream_token()`:
the one way a tool gets the upstream token), `leak` (what a tool that does not ask sees of
tokens: the principal's claims, which hold none), `purge` (needs `mcp:admin`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
from typing import Any

import httpx
import uvicorn

from helpers.auth.protected_server import SchemaGate  # PYTHONPATH from pytest
from mcpkit import Context, Server, ServerOptions
from mcpkit.auth.proxy import AuthProxy, ProxyLimits
from mcpkit.auth.proxy.presets import upstream
from mcpkit.transports.http_server.options import HTTPOptions

__all__ = ["build"]


def build(settings: dict[str, Any], **options: Any) -> Any:
    """The app `settings` describe; `options` are more `ServerOptions` (a test's clock)."""
    if settings.get("store"):
        options["store"] = settings["store"]
    server = Server("proxied", version="1.0.0", options=ServerOptions(**options))

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the request acts for."""
        p = ctx.principal
        assert p is not None
        return (f"{p.subject} via {p.client_id} with {' '.join(sorted(p.scopes))}; "
                f"{p.claims.get('email')} {','.join(p.claims.get('groups', []))}")

    @server.tool()
    async def upstream_me(ctx: Context) -> str:
        """The upstream identity provider's userinfo for the caller."""
        token = await ctx.upstream_token()
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            answer = await http.get(f"{settings['upstream']}/me",
                                    headers={"authorization": f"Bearer {token}"})
        seen = hashlib.sha256(token.encode()).hexdigest()[:12]  # which token, never the token
        return f"{answer.status_code} {answer.json().get('sub')} {seen}"

    @server.tool()
    def leak(ctx: Context) -> str:
        """Everything a tool that does not ask sees of the request's credentials."""
        p = ctx.principal
        assert p is not None
        return json.dumps({"claims": dict(p.claims), "repr": repr(p)}, default=str)

    @server.tool(scopes=["mcp:admin"])
    def purge() -> str:
        """A tool that needs more than basic use."""
        return "purged"

    port = settings["port"]
    limits = ProxyLimits(**settings.get("limits", {}))
    proxy = AuthProxy(
        upstream("oidc", settings["upstream"], client_id=settings["client_id"],
                 client_secret=settings["client_secret"],
                 scopes=("openid", "email", "profile", "groups", "offline_access")),
        public_url=f"http://127.0.0.1:{settings.get('public_port', port)}/mcp",
        scopes_supported=("mcp:read", "mcp:admin"),
        resource_name="The proxied test server", limits=limits)
    return server.asgi(HTTPOptions(path="/mcp", auth=proxy))


async def _serve() -> None:
    settings = json.loads(os.environ["PROXY_SETTINGS"])
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", settings["port"]))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(SchemaGate(build(settings)), log_level="warning",
                                           lifespan="off"))
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    for _ in range(500):
        if runner.started or serving.done():
            break
        await asyncio.sleep(0.01)
    print(f"http://127.0.0.1:{settings['port']}/mcp", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(_serve())
