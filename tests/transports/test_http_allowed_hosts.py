"""`--allow-host` with an IPv6 literal and a port, as a reverse proxy on an IPv6 address is
named: a real `mcpkit run --http` process on 127.0.0.1 lets that host and port through and
refuses the same address on another port, with 403 (DNS-rebinding protection)."""

from __future__ import annotations

import httpx
from helpers.transports.http_peer import FEATURES, Peer, ServerProcess


async def test_an_allowed_ipv6_host_and_port_passes_and_another_port_is_refused() -> None:
    server = ServerProcess.start(FEATURES, "--allow-host", "[2001:db8::1]:8443")
    try:
        async with httpx.AsyncClient(timeout=15) as client:
            peer = Peer(server.url, client)
            message = peer.request_message("server/discover")
            allowed = await peer.post(message, {"Host": "[2001:db8::1]:8443"})
            assert allowed.status == 200
            assert allowed.message["result"]["resultType"] == "complete"
            for host in ("[2001:db8::1]:9999", "[2001:db8::1]"):
                refused = await peer.post(message, {"Host": host})
                assert refused.status == 403
                assert "not allowed" in refused.error["message"] and host in refused.error[
                    "message"]
    finally:
        server.stop()
