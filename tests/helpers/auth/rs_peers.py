"""Real peers for the resource server's tests: an authorization server's key and introspection
endpoints (a small ASGI app under uvicorn on 127.0.0.1, port 0) serving keys made here with
joserfc, an `Issuer` that signs access tokens with them, and a protected mcpkit server under
uvicorn beside it. The tokens are minted here on purpose: these tests check the resource
server's rules one by one, each with a token made to break exactly one of them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from joserfc import jwk, jws, jwt

import mcpkit
from helpers.transports.listening import listening

ISSUER = "https://as.example.test"


class Issuer:
    """Signing keys and the tokens they sign; `rotate()` adds a new key (served at once)."""

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.rotate()

    def rotate(self) -> str:
        kid = f"k{len(self.keys) + 1}"
        self.keys.append(jwk.ECKey.generate_key("P-256", parameters={"kid": kid}))
        return kid

    def rekey(self) -> str:
        """Replace the newest key by a new one under the same kid (a careless re-key)."""
        kid = self.keys[-1].kid
        self.keys[-1] = jwk.ECKey.generate_key("P-256", parameters={"kid": kid})
        return str(kid)

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) for k in self.keys]}

    def token(self, audience: str | list[str] | None, *, subject: str = "alice",
              scope: str = "", issuer: str = ISSUER, lifetime: float = 300, now: float | None = None,
              key: Any = None, kid: str | None = None, alg: str = "ES256",
              typ: str | None = "at+jwt", **extra: Any) -> str:
        now = time.time() if now is None else now
        claims: dict[str, Any] = {"iss": issuer, "sub": subject, "client_id": "client-1",
                                  "iat": int(now), "exp": int(now + lifetime),
                                  "jti": uuid.uuid4().hex, **extra}
        if audience is not None:
            claims["aud"] = audience
        if scope:
            claims["scope"] = scope
        signer = key or self.keys[-1]
        header = {"alg": alg, "kid": kid or signer.kid}
        if typ is not None:
            header["typ"] = typ
        return jwt.encode(header, claims, signer)

    def sign(self, payload: bytes) -> str:
        """A token whose claims are `payload` exactly as written (a number JSON allows but
        Python would not write, such as 1e400), signed with the newest key."""
        signer = self.keys[-1]
        return str(jws.serialize_compact({"alg": "ES256", "typ": "at+jwt", "kid": signer.kid},
                                         payload, signer))


@dataclass
class KeyServer:
    """The authorization server's endpoints as the resource server sees them."""

    issuer: Issuer
    cache_control: str = "max-age=600"
    active: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Introspection: token -> the claims answered for it (others are inactive)."""
    client: tuple[str, str] = ("rs", "rs-secret")
    hold: asyncio.Event | None = None
    """Set: each JWKS request waits for it before answering (a slow key server)."""
    jwks_status: int = 200
    trickle: bool = False
    """The JWKS (and introspection) answer is whitespace, a byte at a time, until `hold` is set: a server slow
    enough never to trip a read timeout and never to finish."""
    padding: int = 0
    """Bytes of filler added to the key set."""
    arrived: asyncio.Event | None = None
    """Set when a JWKS request arrives."""
    jwks_fetches: int = 0
    introspections: int = 0
    url: str = ""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        if scope["path"] == "/jwks":
            self.jwks_fetches += 1
            if self.arrived is not None:
                self.arrived.set()
            if self.trickle:
                await self._trickle(send)
                return
            if self.hold is not None:
                await self.hold.wait()
            jwks: dict[str, Any] = self.issuer.jwks()
            if self.padding:
                jwks["filler"] = "x" * self.padding
            await _json(send, self.jwks_status, jwks, [(b"cache-control",
                                                        self.cache_control.encode())])
        elif scope["path"] == "/introspect" and scope["method"] == "POST":
            self.introspections += 1
            if self.trickle:
                await self._trickle(send)
                return
            expected = base64.b64encode(f"{self.client[0]}:{self.client[1]}".encode())
            if headers.get(b"authorization") != b"Basic " + expected:
                await _json(send, 401, {"error": "invalid_client"})
                return
            form = dict(p.split("=", 1) for p in body.decode().split("&") if "=" in p)
            from urllib.parse import unquote_plus
            claims = self.active.get(unquote_plus(form.get("token", "")))
            await _json(send, 200, {"active": True, **claims} if claims else {"active": False})
        else:
            await _json(send, 404, {"error": "not_found"})


    async def _trickle(self, send: Any) -> None:
        assert self.hold is not None
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        while not self.hold.is_set():
            await send({"type": "http.response.body", "body": b" ", "more_body": True})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.hold.wait(), 0.05)
        await send({"type": "http.response.body", "body": b""})


async def _json(send: Any, status: int, value: Any,
                extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = orjson.dumps(value)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def key_server(issuer: Issuer, **options: Any) -> AsyncIterator[KeyServer]:
    peer = KeyServer(issuer, **options)
    async with listening(peer) as served:
        peer.url = f"http://127.0.0.1:{served.port}"
        yield peer


@contextlib.asynccontextmanager
async def protected(app: Any) -> AsyncIterator[str]:
    """A protected app under uvicorn; yields its endpoint URL (`http://127.0.0.1:PORT/mcp`)."""
    async with listening(app) as served:
        yield served.url


def whoami_server(name: str) -> mcpkit.Server:
    """A server with one tool, `whoami`, answering the caller's subject."""
    server = mcpkit.Server(name)

    @server.tool()
    def whoami(ctx: mcpkit.Context) -> str:
        """The caller's subject, as the verified token says."""
        return ctx.principal.subject

    return server
