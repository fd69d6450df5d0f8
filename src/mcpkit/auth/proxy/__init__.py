"""An authorization server of the MCP server's own in front of an identity provider that MCP
clients cannot register with (GitHub, Google, or any provider on a plan without dynamic
registration): `AuthProxy`.

MCP clients find the proxy in the server's Protected Resource Metadata, register with it
(Dynamic Client Registration, or a Client ID Metadata Document), and are shown the proxy's
own consent page; the user then signs in at the upstream provider through the proxy's one
pre-registered client, and the proxy issues tokens of its own, for this MCP server only.
The upstream's tokens stay in the server's store; a tool that needs the upstream API asks for
one explicitly (`await ctx.upstream_token()`).

The pieces, none of which does I/O: `config` (`AuthProxy`, `Upstream`, `ClaimMap`,
`ProxyLimits`), `presets` (GitHub, Google, Entra ID, Auth0, Okta, Keycloak, any OpenID
provider, as data), `clients` (registrations and redirect URI rules), `authorize` (the
authorization request), `consent` (the consent page), `metadata` (RFC 8414) and `tokens`
(the JWTs it issues). The HTTP side, with the store and the upstream calls, is
`mcpkit.transports.auth_proxy.routes`, which `server.asgi(auth=AuthProxy(...))` loads.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "AuthProxy",
    "ClaimMap",
    "ProxyLimits",
    "Upstream",
    "presets",
]


def __getattr__(name: str) -> Any:
    if name in ("AuthProxy", "ClaimMap", "ProxyLimits", "Upstream"):
        from mcpkit.auth.proxy import config

        return getattr(config, name)
    if name == "presets":
        return import_module("mcpkit.auth.proxy.presets")
    raise AttributeError(f"module 'mcpkit.auth.proxy' has no attribute {name!r}")
