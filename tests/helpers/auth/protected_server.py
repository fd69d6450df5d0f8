"""A protected mcpkit server for the end-to-end tests, in its own process on 127.0.0.1.

`python tests/helpers/auth/protected_server.py ISSUER jwt` checks tokens against the issuer's JWKS
(`JWTVerifier`); `... ISSUER introspection CLIENT_ID SECRET` asks its RFC 7662 endpoint
(`IntrospectionVerifier`). The endpoints are read from the issuer's metadata (as `mcpkit run
--auth-issuer` reads them); `PROTECTED_DPOP_NONCE=1` asks DPoP proofs for a server nonce. It
prints its MCP URL on stdout once it accepts connections.

Every message a client sends it is checked against the official schema of its era before the
server reads it (`wire.check_client_message`); one off the schema is answered 400 and kept,
and `GET /test/problems` lists what was refused and how many messages were checked, so a test
over a CLI process can still say that the CLI spoke the schema.

Tools: `whoami` (who the token is for, from `ctx.principal`), `purge` (needs `mcp:admin`,
which basic use does not ask for: a step-up).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from typing import Any

import httpx
import uvicorn

from helpers.wire import (  # PYTHONPATH from pytest
    LEGACY,
    MODERN,
    check_client_message,
    checked_count,
)
from mcpkit import Context, Server
from mcpkit.auth.server_config import DPoPSettings, ProtectedResource
from mcpkit.transports.http_server.options import HTTPOptions

__all__ = ["build"]


def build(issuer: str, verifier: Any, dpop: DPoPSettings | None = None) -> Any:
    server = Server("protected", version="1.0.0")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the request acts for."""
        principal = ctx.principal
        assert principal is not None
        return (f"{principal.subject} via {principal.client_id} with "
                f"{' '.join(sorted(principal.scopes))}")

    @server.tool(scopes=["mcp:admin"])
    def purge() -> str:
        """A tool that needs more than basic use."""
        return "purged"

    resource = ProtectedResource(issuers=issuer, verifier=verifier, scopes_supported=("mcp:read",),
                                 dpop=dpop or DPoPSettings())
    return server.asgi(HTTPOptions(path="/mcp", auth=resource))


class SchemaGate:
    """Checks each client message against the schema before the app reads it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.problems: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"] == "/test/problems":
            return await _reply(send, 200, {"checked": checked_count(),
                                           "problems": self.problems})
        if scope["method"] != "POST" or scope["path"] != "/mcp":
            return await self.app(scope, receive, send)
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            message = json.loads(body)
            legacy = (message.get("method") == "initialize" or "mcp-session-id" in headers
                      or headers.get("mcp-protocol-version") == LEGACY)
            check_client_message(LEGACY if legacy else MODERN, message)
        except (AssertionError, ValueError, AttributeError) as exc:
            self.problems.append(str(exc)[:500])
            return await _reply(send, 400, {"error": "off the schema"})
        sent = False

        async def again() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, again, send)


async def _reply(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


async def _serve(argv: list[str]) -> None:
    issuer, kind = argv[0], argv[1]
    metadata = _metadata(issuer)
    if kind == "jwt":
        from mcpkit.transports.http_server.auth_jwt import JWTVerifier

        verifier: Any = JWTVerifier(metadata["jwks_uri"])
    else:
        from mcpkit.transports.http_server.auth_introspection import IntrospectionVerifier

        # No cache: a token the AS revokes is refused at once (the refresh test counts on it).
        verifier = IntrospectionVerifier(metadata["introspection_endpoint"], argv[2], argv[3],
                                         issuer=issuer, cache_ttl_s=0)
    dpop = DPoPSettings(nonce=os.environ.get("PROTECTED_DPOP_NONCE") == "1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(SchemaGate(build(issuer, verifier, dpop)),
                                           log_level="warning", lifespan="off"))
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    for _ in range(500):
        if runner.started or serving.done():
            break
        await asyncio.sleep(0.01)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await serving


def _metadata(issuer: str) -> dict[str, Any]:
    """The issuer's metadata (RFC 8414, else OpenID Connect Discovery)."""
    from mcpkit.auth.client_discovery import as_metadata_urls

    with httpx.Client(timeout=10, trust_env=False) as http:
        for url in as_metadata_urls(issuer):
            answer = http.get(url)
            if answer.status_code == 200:
                return dict(answer.json())
    raise SystemExit(f"protected_server.py: {issuer} publishes no metadata")


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1:]))
