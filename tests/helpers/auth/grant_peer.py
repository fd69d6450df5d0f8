"""A small authorization server and a protected mcpkit server in one ASGI app, for the tests of
the machine grants and DPoP: served by a real uvicorn on 127.0.0.1 (`resume_peer.on_free_port`).

- `/.well-known/oauth-protected-resource/mcp` and `/.well-known/oauth-authorization-server`:
  the metadata a client discovers;
- `/token`: records every request (form and headers) and answers with `Peer.answer_token`,
  which a test replaces; by default it checks a DPoP proof when one is sent, can demand a
  nonce first (`as_nonce`), and issues `tok-<n>` tokens (DPoP-bound to the proof's key);
- `/idp/token`: an enterprise IdP's token exchange, issuing an ID-JAG;
- `/mcp`: a real `mcpkit.Server` behind a guard that answers 401 with a challenge unless the
  request presents a token this peer issued (as `DPoP` with a valid proof when bound), can
  demand a resource server nonce (`rs_nonce`), and 403 `insufficient_scope` when the token
  lacks `required_scope`. Every MCP message the client sends is checked against the schema.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from helpers.transports.resume_peer import on_free_port, request_body
from helpers.wire import MODERN, check_client_message
from mcpkit import Server
from mcpkit.auth.dpop import verify_proof
from mcpkit.errors import DPoPError


@dataclass
class Issued:
    scope: str
    jkt: str | None


@dataclass
class Peer:
    base: str = ""
    as_nonce: str | None = None
    rs_nonce: str | None = None
    required_scope: str | None = None
    challenge_scope: str | None = "mcp:tools"
    token_requests: list[tuple[dict[str, str], dict[str, str]]] = field(default_factory=list)
    idp_requests: list[dict[str, str]] = field(default_factory=list)
    mcp_headers: list[dict[str, str]] = field(default_factory=list)
    proof_jtis: list[str] = field(default_factory=list)
    issued: dict[str, Issued] = field(default_factory=dict)
    refusal: dict[str, Any] | None = None
    """When set, every token request is answered 400 with this JSON body."""
    authorization_server: str | None = None
    """The issuer the PRM names (default: this peer)."""
    signing_algs: tuple[str, ...] = ("ES256",)
    """`token_endpoint_auth_signing_alg_values_supported`, in the AS's order."""
    moved: dict[str, str] = field(default_factory=dict)
    """Paths answered 302 to another URL (a metadata document that moved)."""

    def __post_init__(self) -> None:
        server = Server("guarded")

        @server.tool()
        def echo(text: str) -> str:
            """Say it back."""
            return text

        self.mcp = server.asgi()

    # -- the authorization server -----------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {"issuer": self.base, "token_endpoint": f"{self.base}/token",
                "grant_types_supported": ["client_credentials",
                                          "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic",
                                                          "private_key_jwt"],
                "token_endpoint_auth_signing_alg_values_supported": list(self.signing_algs),
                "dpop_signing_alg_values_supported": ["ES256"],
                "scopes_supported": ["mcp:tools", "mcp:admin"]}

    def answer_token(self, form: dict[str, str], headers: dict[str, str]
                     ) -> tuple[int, dict[str, Any], dict[str, str]]:
        if self.refusal is not None:
            return 400, self.refusal, {}
        jkt = None
        proof = headers.get("dpop")
        if proof is not None:
            try:
                verified = verify_proof(proof, htm="POST", htu=f"{self.base}/token",
                                        now=time.time(), nonce=self.as_nonce)
            except DPoPError as exc:
                extra = {"dpop-nonce": self.as_nonce} if exc.reason == "nonce" else {}
                return 400, {"error": exc.error}, extra  # type: ignore[dict-item]
            jkt = verified.jkt
        token = f"tok-{len(self.issued) + 1}"
        scope = form.get("scope", "")
        self.issued[token] = Issued(scope, jkt)
        kind = "DPoP" if jkt else "Bearer"
        return 200, {"access_token": token, "token_type": kind, "expires_in": 3600,
                     "scope": scope}, {}

    def answer_idp(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.idp_requests.append(form)
        if form.get("subject_token") != "id.token.jwt":
            return 400, {"error": "invalid_grant"}
        return 200, {"access_token": "idjag.header.sig",
                     "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                     "token_type": "N_A"}

    # -- the resource server ----------------------------------------------------------------

    def challenge(self, status: int, error: str | None = None, scheme: str = "Bearer",
                  scope: str | None = None) -> tuple[int, dict[str, str]]:
        parts = [f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"']
        if scope:
            parts.append(f'scope="{scope}"')
        if error:
            parts.append(f'error="{error}"')
        return status, {"www-authenticate": f"{scheme} " + ", ".join(parts)}

    def guard(self, method: str, headers: dict[str, str]) -> tuple[int, dict[str, str]] | None:
        self.mcp_headers.append(headers)
        scheme, _, token = headers.get("authorization", "").partition(" ")
        issued = self.issued.get(token)
        if issued is None:
            return self.challenge(401, scope=self.challenge_scope)
        if issued.jkt is not None:
            if scheme != "DPoP":
                return self.challenge(401, "invalid_token", "DPoP")
            try:
                verified = verify_proof(headers.get("dpop", ""), htm=method,
                                        htu=f"{self.base}/mcp", now=time.time(),
                                        access_token=token, expected_jkt=issued.jkt,
                                        nonce=self.rs_nonce)
            except DPoPError as exc:
                status, extra = self.challenge(401, exc.error, "DPoP")
                if exc.reason == "nonce" and self.rs_nonce:
                    extra["dpop-nonce"] = self.rs_nonce
                return status, extra
            self.proof_jtis.append(verified.jti)
        elif scheme != "Bearer":
            return self.challenge(401, "invalid_token")
        if self.required_scope and self.required_scope not in issued.scope.split():
            return self.challenge(403, "insufficient_scope",
                                  scope=f"{issued.scope} {self.required_scope}".strip())
        return None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if path in self.moved:
            await reply(send, 302, {}, {"location": self.moved[path]})
        elif path in ("/.well-known/oauth-protected-resource/mcp", "/moved/prm"):
            await reply(send, 200, {"resource": f"{self.base}/mcp",
                                    "authorization_servers": [
                                        self.authorization_server or self.base],
                                    "scopes_supported": ["mcp:tools"]})
        elif path == "/.well-known/oauth-authorization-server":
            await reply(send, 200, self.metadata())
        elif path == "/token":
            form = dict(urllib.parse.parse_qsl((await request_body(receive)).decode()))
            self.token_requests.append((form, headers))
            status, body, extra = self.answer_token(form, headers)
            await reply(send, status, body, extra)
        elif path == "/idp/token":
            form = dict(urllib.parse.parse_qsl((await request_body(receive)).decode()))
            status, body = self.answer_idp(form)
            await reply(send, status, body)
        elif path == "/mcp":
            body = await request_body(receive)
            refused = self.guard(scope["method"], headers)
            if refused is not None:
                await reply(send, refused[0], {"error": "refused"}, refused[1])
                return
            if body:
                check_client_message(MODERN, orjson.loads(body))
            await self.mcp(scope, replay(body, receive), send)
        else:
            await reply(send, 404, {"error": "not_found"})


def replay(body: bytes, receive: Any) -> Any:
    """The request body already read, then the connection's own events (its disconnect)."""
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return dict(await receive())
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


async def reply(send: Any, status: int, body: Any, headers: dict[str, str] | None = None
                ) -> None:
    raw = [(b"content-type", b"application/json")]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": orjson.dumps(body)})


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    """The peer on a free port of 127.0.0.1; `peer.base` is its origin."""
    app = Peer()
    async with on_free_port(app) as url:
        app.base = url.removesuffix("/mcp")
        yield app
