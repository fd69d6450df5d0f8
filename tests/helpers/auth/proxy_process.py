"""An upstream identity provider without registration (node-oidc-provider with one
pre-registered confidential client, `OIDCProvider.start(upstream_client=...)`) and mcpkit
servers behind their authorization proxy in front of it (`proxy_server.py`), as processes.

The proxy's callback must be registered at the upstream before either starts, so the proxy's
port is chosen first: bound by the test, released, and bound again by the server process
(SO_REUSEADDR), the usual way to hand a process a free port."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from helpers.auth.as_process import started, stopped
from helpers.auth.oidc_process import OIDCProvider
from helpers.services import free_port
from helpers.wire import spec_available

HERE = Path(__file__).resolve().parent
CLIENT_ID = "mcp-proxy"
CLIENT_SECRET = "a-secret-only-the-proxy-and-the-provider-know"
__all__ = ["CLIENT_ID", "CLIENT_SECRET", "ProxiedServer", "free_port", "upstream_for"]


def upstream_for(*ports: int, ttl: int = 600) -> OIDCProvider:
    """The upstream provider, its one client allowed back to the proxies on `ports`."""
    return OIDCProvider.start(ttl=ttl, upstream_client={
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "redirect_uris": [f"http://127.0.0.1:{p}/oauth/callback" for p in ports]})


@dataclass
class ProxiedServer:
    """One `proxy_server.py` process."""

    process: Any
    url: str
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, upstream: OIDCProvider, port: int, **settings: Any) -> ProxiedServer:
        settings = {"upstream": upstream.issuer, "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET, "port": port, **settings}
        process, url = started([sys.executable, str(HERE / "proxy_server.py")],
                               env={"PROXY_SETTINGS": json.dumps(settings)})
        return cls(process, url, settings)

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/mcp")

    def stop(self) -> None:
        stopped(self.process)

    @classmethod
    def serving(cls, upstream: OIDCProvider, port: int, **settings: Any
                ) -> Iterator[ProxiedServer]:
        """A fixture's body: the server while the tests run; once stopped, every client
        message it saw was on the schema."""
        server = cls.start(upstream, port, **settings)
        try:
            yield server
            with httpx.Client(timeout=10, trust_env=False) as http:
                report = http.get(f"{server.origin}/test/problems").json()
        finally:
            server.stop()
        assert report["problems"] == [], report
        assert report["checked"] > 0 or not spec_available(), "no message was schema-checked"
