"""`mcpkit proxy UPSTREAM`: serve another MCP server as a dual-era mcpkit server.

UPSTREAM is what the client commands take (an http(s) URL, a Python file with a Server, a
quoted command line, or with `--config FILE` the name of an `mcpServers` entry), resolved by
`mcpkit.cli.servers.connector_for`; `-H` and the entry's headers (with `${VAR}` filled from the
environment) are the only credentials it sends upstream, and a sign-in `mcpkit login` kept is
used for a URL given none. Served over stdio by default, or over Streamable HTTP with `--http`
(`mcpkit.proxy`, docs/proxy.md). A usage error is one line and status 2; an upstream that
cannot be reached, or a port that is taken, is one line and status 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mcpkit.types.constants import INPUT_CAPABILITIES as ASKS

__all__ = [
    "register_proxy",
    "run_proxy",
]


def register_proxy(sub: Any) -> None:
    p = sub.add_parser(
        "proxy", help="serve another MCP server (stdio or HTTP, either era) as a dual-era one",
        description="Serve the MCP server UPSTREAM (an http(s) URL, a .py file, or a quoted "
        "command line) as a dual-era mcpkit server: over stdio (the default), or over "
        "Streamable HTTP with --http. A question the upstream asks in the middle of a call "
        "reaches each client in its own era; its lists follow the upstream's changes.",
        epilog="examples: mcpkit proxy 'npx -y @modelcontextprotocol/server-everything stdio' "
        "--http 127.0.0.1:8000 | mcpkit proxy https://mcp.example.com/mcp --config mcp.json",
    )
    p.add_argument("upstream", metavar="UPSTREAM",
                   help="the server to serve: an http(s) URL, path/to/server.py[:name], a quoted "
                   "command line, or with --config the name of an entry of that file")
    p.add_argument("--http", metavar="[HOST:]PORT[/PATH]",
                   help="serve Streamable HTTP (both eras) here, on 127.0.0.1 unless a host is "
                   "given; without it, serve stdio")
    p.add_argument("--config", metavar="FILE",
                   help="UPSTREAM is the name of an entry of this mcpServers file (command, args, "
                   "env, or url and headers, ${VAR} filled from the environment)")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME:VALUE",
                   help="an HTTP header sent upstream, e.g. 'Authorization: Bearer ...' "
                   "(repeatable); clients' own headers are never passed on")
    p.add_argument("--name", help="serve under this name (default: the upstream's)")
    p.add_argument("--store", metavar="URL",
                   help="where state is kept (default: MCPKIT_STORE, else memory); replicas "
                   "relaying held calls to each other share a postgresql:// or redis:// store")
    p.add_argument("--connections", type=_count, default=8, metavar="N",
                   help="most connections to a 2025-11-25 upstream, one per call in flight "
                   "(default 8)")
    p.add_argument("--hold", type=_seconds, default=300.0, metavar="SECONDS",
                   help="how long a held upstream call waits for its client's answer before it "
                   "is cancelled (default 300)")
    p.add_argument("--relay-wait", type=_seconds, default=5.0, metavar="SECONDS",
                   help="how long a retry that reached this replica waits for the replica "
                   "holding its call to answer, before the call is taken for gone (default 5)")
    p.add_argument("--era", choices=("auto", "modern", "legacy"), default="auto",
                   help="probe the upstream's era (default) or pin it")
    p.add_argument("--asks", type=_asks, default=ASKS, metavar="KINDS",
                   help="what the proxy answers for the upstream by asking its own client, "
                   f"comma-separated from {', '.join(ASKS)} (default all), or none; the "
                   "upstream sees these client capabilities")
    p.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="wait this long for the upstream to connect and to answer a list or a "
                   "completion (a call waits as long as its client does; default 60)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="also accept this Host header (the public name behind a reverse proxy)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="also accept browser requests from this origin")
    p.add_argument("--dev", action="store_true",
                   help="an uncaught exception's type and message reach the client")
    p.add_argument("--quiet-upstream", action="store_true",
                   help="discard a stdio upstream's stderr (by default it goes to this stderr)")


def _asks(text: str) -> tuple[str, ...]:
    kinds = tuple(k for k in text.replace(" ", "").split(",") if k)
    if kinds == ("none",):
        return ()
    unknown = [k for k in kinds if k not in ASKS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"expected some of {', '.join(ASKS)} (comma-separated), or none; not {text!r}")
    return kinds


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number above zero, not {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds above zero, not {text!r}")
    return value


def run_proxy(args: argparse.Namespace) -> int:
    from mcpkit.cli.main import port_taken
    from mcpkit.cli.servers import connector_for, parse_headers
    from mcpkit.cli.usage import UsageError
    from mcpkit.client import ClientOptions
    from mcpkit.proxy import ProxyOptions, ProxyServer
    from mcpkit.server.options import ServerOptions
    from mcpkit.store.state_keys import KeyFileError
    from mcpkit.transports.http_server.running import parse_address

    try:
        connector = connector_for(args.upstream, headers=parse_headers(args.header),
                                  stderr="discard" if args.quiet_upstream else "inherit",
                                  config=args.config)
        if args.http is not None:
            try:
                host, port, _ = parse_address(args.http)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        proxy = ProxyServer(
            connector, name=args.name,
            options=ProxyOptions(connections=args.connections, hold_s=args.hold, asks=args.asks,
                                 relay_wait_s=args.relay_wait,
                                 client=ClientOptions(era=args.era, timeout=args.timeout,
                                                      probe_timeout=min(10.0, args.timeout))),
            server_options=ServerOptions(store=args.store, expose_errors=args.dev))
        proxy.sealer.check_keys()
    except (UsageError, KeyFileError, ValueError) as exc:
        print(f"mcpkit proxy: {exc}", file=sys.stderr)
        return 2
    if args.http is not None:
        taken = port_taken(host, port)
        if taken is not None:
            print(f"mcpkit proxy: cannot serve on {host}:{port}: {taken} (choose another port "
                  f"with --http {host}:PORT)", file=sys.stderr)
            return 1
    return _serve(proxy, args)


def _serve(proxy: Any, args: argparse.Namespace) -> int:
    from mcpkit.cli.terminal import shown_block
    from mcpkit.errors import MCPError
    from mcpkit.transports.loop import run

    async def serving() -> None:
        if args.http is None:
            from mcpkit.transports.stdio.server import serve_stdio

            async with proxy:
                await serve_stdio(proxy)
            return
        from mcpkit.transports.http_server.running import serve_http

        async with proxy:
            await serve_http(proxy, args.http, allowed_hosts=args.allow_host,
                             allowed_origins=args.allow_origin)

    if args.http is None:
        from mcpkit.transports.stdio.server import claim_stdout

        claim_stdout()  # stdout is the protocol's before anything can print
    try:
        run(serving())
    except KeyboardInterrupt:
        return 0
    except (MCPError, OSError) as exc:
        print(f"mcpkit proxy: cannot serve {args.upstream}: {shown_block(exc)}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # the HTTP server stops this way when it could not start
        return 0 if exc.code in (None, 0) else 1
    return 0
