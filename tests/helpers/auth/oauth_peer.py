"""A small authorization server and a guard before a real mcpkit server, in one ASGI app, for
the client flow's edge cases the conformance suite does not reach (refresh rotation, tokens
kept across restarts, unsafe targets).

`Peer` serves, on one origin:
- `/mcp`: the mcpkit server, behind a Bearer check against the tokens the AS issued (401 with
  `WWW-Authenticate: Bearer resource_metadata=...` otherwise); every MCP message the client
  sends is validated against the official schema (`tests/helpers/wire.py`);
- `/.well-known/oauth-protected-resource/mcp`: the PRM, naming the AS at `<origin>/as`;
- `/.well-known/oauth-authorization-server/as`: its metadata (`metadata_overrides` changes
  fields, e.g. an unsafe `authorization_endpoint`);
- `/as/authorize` (302 to the redirect URI with code, state and iss), `/as/token`
  (authorization_code with PKCE, refresh_token with rotation: a refresh token works once),
  `/as/register` (DCR).
`redirects` maps a path to a Location, to test what a fetch follows.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from helpers import wire
from helpers.auth.grant_peer import replay
from helpers.transports.resume_peer import request_body
from mcpkit import Server


def tool_server() -> Server:
    server = Server("guarded")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return server


@dataclass
class Peer:
    base: str = ""
    expires_in: int = 3600
    metadata_overrides: dict[str, Any] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    access: set[str] = field(default_factory=set)
    refresh: set[str] = field(default_factory=set)
    seen: list[str] = field(default_factory=list)
    """Every request: `<METHOD> <path>`, plus ` <mcp method>` for /mcp."""
    grants: list[dict[str, str]] = field(default_factory=list)
    """The token requests' forms, in order."""
    refuse_refresh: bool = False
    _codes: dict[str, str] = field(default_factory=dict)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.mcp = tool_server().asgi()

    @property
    def issuer(self) -> str:
        return f"{self.base}/as"

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True,
            **self.metadata_overrides,
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        body = await request_body(receive)
        if path == "/mcp":
            message = json.loads(body) if body else {}
            self.seen.append(f"{scope['method']} {path} {message.get('method')}")
            return await self._guarded(scope, body, message, receive, send)
        self.seen.append(f"{scope['method']} {path}")
        if path in self.redirects:
            return await _answer(send, 302, b"", [(b"location", self.redirects[path].encode())])
        if path == "/.well-known/oauth-protected-resource/mcp":
            return await _json(send, 200, {"resource": f"{self.base}/mcp",
                                           "authorization_servers": [self.issuer]})
        if path == "/.well-known/oauth-authorization-server/as":
            return await _json(send, 200, self.metadata())
        if path == "/as/authorize":
            query = dict(parse_qsl(scope["query_string"].decode()))
            code = f"code-{next(self._counter)}"
            self._codes[code] = query["code_challenge"]
            location = query["redirect_uri"] + "?" + urlencode(
                {"code": code, "state": query["state"], "iss": self.issuer})
            return await _answer(send, 302, b"", [(b"location", location.encode())])
        if path == "/as/register":
            return await _json(send, 201, {"client_id": "registered-client",
                                           "token_endpoint_auth_method": "none"})
        if path == "/as/token":
            return await self._token(dict(parse_qsl(body.decode())), send)
        return await _json(send, 404, {"error": "not_found"})

    async def _guarded(self, scope: dict[str, Any], body: bytes, message: dict[str, Any],
                       receive: Any, send: Any) -> None:
        if message:
            wire.check_client_message(wire.MODERN, message)
        headers = dict(scope["headers"])
        token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        if token not in self.access:
            challenge = (f'Bearer resource_metadata="{self.base}/.well-known/'
                         'oauth-protected-resource/mcp"')
            return await _json(send, 401, {"error": "invalid_token"},
                               [(b"www-authenticate", challenge.encode())])
        # The body once, then the connection's own events: a disconnect only when the client
        # goes (one answered at once made the server drop requests now and then).
        await self.mcp(scope, replay(body, receive), send)

    async def _token(self, form: dict[str, str], send: Any) -> None:
        self.grants.append(form)
        if form.get("grant_type") == "authorization_code":
            challenge = self._codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(
                hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge is None or digest != challenge:
                return await _json(send, 400, {"error": "invalid_grant"})
        elif form.get("grant_type") == "refresh_token":
            if self.refuse_refresh or form.get("refresh_token") not in self.refresh:
                return await _json(send, 400, {"error": "invalid_grant"})
            self.refresh.discard(form["refresh_token"])  # rotation: each works once
        else:
            return await _json(send, 400, {"error": "unsupported_grant_type"})
        n = next(self._counter)
        access, refresh = f"access-{n}", f"refresh-{n}"
        self.access.add(access)
        self.refresh.add(refresh)
        await _json(send, 200, {"access_token": access, "token_type": "Bearer",
                                "refresh_token": refresh, "expires_in": self.expires_in})


async def _answer(send: Any, status: int, body: bytes,
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Any, status: int, doc: Any,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _answer(send, status, json.dumps(doc).encode(),
                  [(b"content-type", b"application/json"), *(headers or [])])


class Browser:
    """The user's browser, headless: "opening" the authorization URL is a GET whose redirect
    is read, not followed; `opened` counts the sign-ins."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self._query: dict[str, str] = {}

    async def open(self, url: str) -> None:
        import httpx

        self.opened.append(url)
        async with httpx.AsyncClient() as http:
            answer = await http.get(url)
        location = answer.headers["location"]
        self._query = dict(parse_qsl(urlsplit(location).query))

    async def callback(self) -> dict[str, str]:
        return self._query
