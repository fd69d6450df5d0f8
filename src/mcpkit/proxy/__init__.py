"""A proxy that bridges eras and transports: any MCP server, served as a dual-era mcpkit server.

`mcpkit.Server.proxy(connector)` (the same as `ProxyServer(connector)`) serves what the upstream
server behind `connector` offers (a stdio command, an HTTP URL, a `Server` of this process;
2026-07-28 or 2025-11-25) on whichever transport the proxy is served on, to callers of either
era: its tools, resources, templates and prompts (their lists following the upstream's
changes), completion, resource subscriptions, progress and log messages, cancellation. A
question the upstream asks in the middle of a call reaches the caller in the caller's era:
a 2025-11-25 upstream's `elicitation/create` becomes a 2026-07-28 `input_required` round (its
call held by the proxy process between rounds, a retry at another replica relayed to it), and
a 2026-07-28 upstream's round becomes a real `elicitation/create` for a 2025-11-25 caller.
`mcpkit proxy UPSTREAM` is the same from the command line (`mcpkit.cli.proxy`); the guide is
docs/proxy.md.

The package:

- `server`: `ProxyServer`, starting, stopping and serving;
- `options`: `ProxyOptions`;
- `upstream`: the connections to the upstream, and which call each one serves;
- `catalogue`: the upstream's lists registered on the proxy, and following their changes;
- `bridge`: one call through the proxy, its rounds in both eras;
- `rounds`: an upstream's question as the proxy's own, and one step of a held call;
- `held`: the upstream calls held between rounds, and their hold timers;
- `relay`: a retry at another replica, relayed to the one holding its call;
- `checked`: everything the upstream sends, checked and rebuilt before it is passed on.

A layer at the top, beside `app` and `cli`: it uses the public client, the server and the
transports' connectors.
"""

from mcpkit.proxy.options import ProxyOptions
from mcpkit.proxy.server import ProxyServer

__all__ = [
    "ProxyOptions",
    "ProxyServer",
]
