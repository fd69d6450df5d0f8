"""The only I/O in mcpkit: stdio, in-memory streams and Streamable HTTP, one package per kind.

Each transport is thin: it moves bytes, and every request ends in `Server.handle` (modern) or
`LegacySession.handle` (legacy), through `StreamConnection` for byte streams. The rooms:

- `stdio/`: the server side (`server.py`, owning stdout) and the client side (`client.py`,
  the server as a subprocess); `memory.py`: a client and a server in one process;
  `stream.py`: the byte stream to the server that both serve through; `loop.py`: the event
  loop a transport runs on.
- `http_server/`: the ASGI app, its endpoints and exchanges, the listener's limits, health,
  the resource server's token checks; `auth_proxy/`: the authorization proxy it can serve.
- `http_client/`: the Streamable HTTP client transport; `oauth/`: the OAuth client it signs
  requests with (flows, grants, DPoP, registration, revocation, the redirect listener).
- `legacy/`: the 2025-11-25 era over HTTP (sessions, their routes, resumable streams, a
  session's requests and answers across replicas).
- `entries.py`: a connector from an `mcpServers` entry (stdio or HTTP).

The names below are the public face, loaded on first use so that a server served over stdio
never loads the HTTP stack; the modules behind them may move.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.store.legacy.events import EventStore, MemoryEventStore
    from mcpkit.store.legacy.sessions import MemorySessionStore, SessionStore
    from mcpkit.transports.http_client.transport import (
        HTTPClientTransport,
        HTTPConnector,
        HTTPStatusError,
        SessionExpiredError,
    )
    from mcpkit.transports.http_server.app import HTTPApp
    from mcpkit.transports.http_server.auth_introspection import IntrospectionVerifier
    from mcpkit.transports.http_server.auth_jwt import JWTVerifier
    from mcpkit.transports.http_server.health import HealthPaths
    from mcpkit.transports.http_server.limits import ListenerLimits
    from mcpkit.transports.http_server.options import HTTPOptions
    from mcpkit.transports.http_server.running import run_http, serve_http
    from mcpkit.transports.legacy.resume import close_sse_stream
    from mcpkit.transports.memory import InMemory
    from mcpkit.transports.oauth.dpop import DPoPSigner
    from mcpkit.transports.oauth.flow import OAuth
    from mcpkit.transports.oauth.grants import (
        ClientCredentials,
        ClientCredentialsGrant,
        EnterpriseGrant,
        GrantError,
        WorkloadIdentityGrant,
    )
    from mcpkit.transports.oauth.machine import MachineAuth
    from mcpkit.transports.oauth.redirect import RedirectListener, open_in_browser
    from mcpkit.transports.stdio.client import StdioServer
    from mcpkit.transports.stdio.server import run_stdio, serve_stdio

_WHERE = {
    "ClientCredentials": "transports.oauth.grants",
    "ClientCredentialsGrant": "transports.oauth.grants",
    "DPoPSigner": "transports.oauth.dpop",
    "EnterpriseGrant": "transports.oauth.grants",
    "EventStore": "store.legacy.events",
    "GrantError": "transports.oauth.grants",
    "HTTPApp": "transports.http_server.app",
    "HTTPClientTransport": "transports.http_client.transport",
    "HTTPConnector": "transports.http_client.transport",
    "HTTPOptions": "transports.http_server.options",
    "HTTPStatusError": "transports.http_client.transport",
    "HealthPaths": "transports.http_server.health",
    "InMemory": "transports.memory",
    "IntrospectionVerifier": "transports.http_server.auth_introspection",
    "JWTVerifier": "transports.http_server.auth_jwt",
    "ListenerLimits": "transports.http_server.limits",
    "MachineAuth": "transports.oauth.machine",
    "MemoryEventStore": "store.legacy.events",
    "MemorySessionStore": "store.legacy.sessions",
    "OAuth": "transports.oauth.flow",
    "RedirectListener": "transports.oauth.redirect",
    "SessionExpiredError": "transports.http_client.transport",
    "SessionStore": "store.legacy.sessions",
    "StdioServer": "transports.stdio.client",
    "WorkloadIdentityGrant": "transports.oauth.grants",
    "close_sse_stream": "transports.legacy.resume",
    "open_in_browser": "transports.oauth.redirect",
    "run_http": "transports.http_server.running",
    "run_stdio": "transports.stdio.server",
    "serve_http": "transports.http_server.running",
    "serve_stdio": "transports.stdio.server",
}
"""Public name -> the module under `mcpkit` that holds it (the stores of legacy sessions and
their events, which `HTTPOptions` takes, live with the other state backends)."""

__all__ = [
    "ClientCredentials",
    "ClientCredentialsGrant",
    "DPoPSigner",
    "EnterpriseGrant",
    "EventStore",
    "GrantError",
    "HTTPApp",
    "HTTPClientTransport",
    "HTTPConnector",
    "HTTPOptions",
    "HTTPStatusError",
    "HealthPaths",
    "InMemory",
    "IntrospectionVerifier",
    "JWTVerifier",
    "ListenerLimits",
    "MachineAuth",
    "MemoryEventStore",
    "MemorySessionStore",
    "OAuth",
    "RedirectListener",
    "SessionExpiredError",
    "SessionStore",
    "StdioServer",
    "WorkloadIdentityGrant",
    "close_sse_stream",
    "open_in_browser",
    "run_http",
    "run_stdio",
    "serve_http",
    "serve_stdio",
]


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'mcpkit.transports' has no attribute {name!r}")
    return getattr(import_module(f"mcpkit.{where}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
