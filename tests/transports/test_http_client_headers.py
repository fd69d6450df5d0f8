"""The headers `HTTPClientTransport` puts on the POSTs that carry no request: a modern
notification carries its version in `MCP-Protocol-Version` (HTTP-10: every POST), a legacy one
the session's id and version (LEG-14); neither carries the request-only `Mcp-Method`.

The peer is a scripted ASGI app on a real uvicorn (tests/helpers/transports/servers/hostile_http.py) that records every
header it receives; every message the client sends is schema-checked (`checked_transport`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.transports.http_peer import checked_transport, meta
from helpers.transports.servers.hostile_http import SESSION, Exchange, HostilePeer, Reply, serving
from helpers.wire import LEGACY, MODERN

from mcpkit.transports.http_client.transport import HTTPClientTransport


async def unexpected(exchange: Exchange, reply: Reply) -> None:
    """Only notifications and the legacy handshake are sent here; the peer answers those."""
    await reply.raw(b"not expected", status=500, media="text/plain")


@pytest.fixture
async def transport() -> AsyncIterator[HTTPClientTransport]:
    t = checked_transport("http://127.0.0.1:1/unset")
    yield t
    await t.close()


def posted(peer: HostilePeer, method: str) -> dict[str, str]:
    found = [e for e in peer.exchanges if e.method == "POST" and e.rpc_method == method]
    assert len(found) == 1, [e.rpc_method for e in peer.exchanges]
    return found[0].headers


async def test_a_modern_notification_carries_its_version_header_and_no_method_header(
    transport: HTTPClientTransport,
) -> None:
    peer = HostilePeer(unexpected)
    note: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 7, "_meta": meta()}}
    async with serving(peer) as url:
        transport.url = url
        await transport.notify(note)
    headers = posted(peer, "notifications/cancelled")
    assert headers["mcp-protocol-version"] == MODERN
    assert "mcp-method" not in headers and "mcp-session-id" not in headers


async def test_a_legacy_notification_carries_the_sessions_id_and_version(
    transport: HTTPClientTransport,
) -> None:
    peer = HostilePeer(unexpected, legacy=True)
    async with serving(peer) as url:
        transport.url = url
        reply = await transport.request({
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": LEGACY, "capabilities": {},
                "clientInfo": {"name": "headers-test", "version": "1"}}})
        assert reply["result"]["protocolVersion"] == LEGACY
        await transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    headers = posted(peer, "notifications/initialized")
    assert headers["mcp-session-id"] == SESSION
    assert headers["mcp-protocol-version"] == LEGACY
    assert "mcp-method" not in headers
