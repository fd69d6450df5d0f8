"""The connector of a server named in an `mcpServers` file (`mcpkit.client.server_entries`):
a `StdioServer` for a command, an `HTTPConnector` for a URL.

Kept beside the connectors because the client layer, which reads the file, sits below the
transports and never imports one; `mcpkit.Client.from_config` and `mcpkit.Clients` join the two.
Each connector is imported only for the kind of entry that needs it.
"""

from __future__ import annotations

from typing import Any

from mcpkit.client.server_entries import ServerEntry
from mcpkit.client.transport import Connector

__all__ = ["connector_for"]


def connector_for(entry: ServerEntry, **options: Any) -> Connector:
    """The connector of `entry`. `options` go to the connector: for stdio those of
    `StdioServer` (`stderr="capture"`, ...), for HTTP those of `HTTPConnector` (`timeout`,
    `client`, ...; the entry's `headers` come first, and `headers=` adds to them)."""
    if entry.transport == "http":
        from mcpkit.transports.http_client.transport import HTTPConnector

        assert entry.url is not None
        headers = {**entry.headers, **options.pop("headers", {})}
        return HTTPConnector(entry.url, headers=headers, **options)
    from mcpkit.transports.stdio.client import StdioServer

    assert entry.command is not None
    return StdioServer([entry.command, *entry.args], env=dict(entry.env) or None,
                       cwd=entry.cwd, **options)
