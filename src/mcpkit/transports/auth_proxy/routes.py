"""`ProxyRoutes`: the authorization proxy's endpoints inside the HTTP app, and the resource
server its tokens are checked by.

`HTTPApp` builds one when `HTTPOptions.auth` is an `AuthProxy` (`mcpkit.auth.proxy`). Its
paths are answered before the MCP endpoint's, after the `Host` check:

| path | what |
| --- | --- |
| `/.well-known/oauth-authorization-server` | the RFC 8414 metadata |
| `/oauth/jwks` | the public keys of its access tokens |
| `/oauth/register` | Dynamic Client Registration (RFC 7591) |
| `/oauth/authorize` | a client's authorization request: checked, then the consent page (`mcpkit.transports.auth_proxy.signin`, as the next two) |
| `/oauth/consent` | the user's decision (POST, CSRF-checked); allowed, the browser goes upstream |
| `/oauth/callback` | the upstream's answer: its code exchanged, a code of the proxy's issued |
| `/oauth/token`, `/oauth/revoke` | tokens (authorization code, refresh with rotation), RFC 7009 (`mcpkit.transports.auth_proxy.tokens`) |

The MCP endpoint itself is protected by the ordinary `AuthGate` with a `ProtectedResource`
whose verifier reads the proxy's own tokens (`ProxyVerifier`), so the Protected Resource
Metadata names the proxy as the authorization server and every check of a token (issuer,
audience, time, scopes per tool) is the one every protected server makes.

State lives in the server's `Store` (`mcpkit.transports.auth_proxy.state`), keys come from its
state key ring, so replicas sharing both serve any step of any sign-in. Nothing here logs a
code, a token, a secret or a cookie.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any
from urllib.parse import urlsplit

import orjson

from mcpkit.auth.client_targets import is_loopback_host
from mcpkit.auth.proxy.clients import (
    ClientRecord,
    check_document_url,
    client_from_document,
    client_from_registration,
)
from mcpkit.auth.proxy.config import AuthProxy
from mcpkit.auth.proxy.metadata import authorization_server_metadata, metadata_path
from mcpkit.auth.proxy.tokens import SIGNING_PURPOSE, SigningKeys, digest
from mcpkit.errors import OAuthRequestError, StoreUnavailableError
from mcpkit.protocol.http import HostPolicy, read_headers
from mcpkit.protocol.http_refusals import forbidden
from mcpkit.transports.auth_proxy.http import (
    CORS,
    NO_STORE,
    RateWindow,
    client_address,
    header,
    only,
    read_body,
    send_error,
    send_json,
)
from mcpkit.transports.auth_proxy.signin import SignInEndpoints
from mcpkit.transports.auth_proxy.state import ProxyState
from mcpkit.transports.auth_proxy.upstream import UpstreamClient
from mcpkit.transports.http_server.endpoint import Receive, Scope, Send, refuse

__all__ = ["ProxyRoutes"]

log = logging.getLogger("mcpkit.auth.proxy")

class ProxyRoutes:
    """The endpoints of one `AuthProxy` (see the module docstring)."""

    def __init__(self, server: Any, proxy: AuthProxy, policy: HostPolicy) -> None:
        from mcpkit.transports.auth_proxy.tokens import ProxyVerifier, TokenEndpoints

        self.server = server
        self.proxy = proxy
        self.policy = policy
        self.limits = proxy.limits
        self.upstream = UpstreamClient(proxy.upstream, proxy.limits, proxy.callback_url)
        self.secure = proxy.issuer_url.startswith("https://")
        self.loopback = is_loopback_host(urlsplit(proxy.issuer_url).hostname or "")
        self.tokens = TokenEndpoints(self)
        self.signin = SignInEndpoints(self)
        self.verifier = ProxyVerifier(self)
        self.resource = proxy.protected_resource(self.verifier)
        base = urlsplit(proxy.issuer_url).path.rstrip("/") + "/oauth/"
        self._routes = {
            metadata_path(proxy.issuer_url): self._metadata,
            base + "jwks": self._jwks,
            base + "register": self._register,
            base + "authorize": self.signin.authorize,
            base + "consent": self.signin.consent,
            base + "callback": self.signin.callback,
            base + "token": self.tokens.token,
            base + "revoke": self.tokens.revoke,
        }
        self._registrations = RateWindow(proxy.limits.registrations_per_minute)
        self._fixed_keys = (SigningKeys.from_pem(proxy.signing_key)
                            if proxy.signing_key is not None else None)
        self._derived: tuple[tuple[bytes, ...], SigningKeys] | None = None

    # -- shared -----------------------------------------------------------------------------

    @property
    def state(self) -> ProxyState:
        return ProxyState(self.server.sealer.store)

    def clock(self) -> float:
        return float(self.server.options.clock())

    def keys(self) -> SigningKeys:
        """The access tokens' signing keys: configured, else derived from the state key ring
        (again when the ring rotated)."""
        if self._fixed_keys is not None:
            return self._fixed_keys
        secrets_now = self.server.sealer.ring.derived(SIGNING_PURPOSE)
        if self._derived is None or self._derived[0] != secrets_now:
            self._derived = (secrets_now, SigningKeys.derived(secrets_now))
        return self._derived[1]

    def seal(self, data: dict[str, Any]) -> str:
        return str(self.server.sealer.ring.seal(b"mcpkit proxy upstream", orjson.dumps(data)))

    def unseal(self, token: str) -> dict[str, Any]:
        plain, _ = self.server.sealer.ring.open(b"mcpkit proxy upstream", token,
                                                "the authorization proxy", "upstream tokens")
        value = orjson.loads(plain)
        assert isinstance(value, dict)
        return value

    async def client(self, client_id: str) -> ClientRecord | None:
        """The client `client_id` names: a registered one, or the record of the metadata
        document at that URL (fetched, checked, and kept for `client_document_ttl_s`)."""
        if client_id.startswith("https://") or (self.loopback and client_id.startswith(
                "http://") and self.proxy.client_documents):
            if not self.proxy.client_documents:
                return None
            return await self._document_client(client_id)
        if not client_id or len(client_id) > 200:
            return None
        record = await self.state.get("client", client_id)
        return None if record is None else ClientRecord.from_json(record)

    async def _document_client(self, url: str) -> ClientRecord:
        from mcpkit.transports.auth_proxy.documents import fetch_client_document

        if not (self.loopback and url.startswith("http://")):
            check_document_url(url)
        kept = await self.state.get("document", url)
        if kept is not None:
            return ClientRecord.from_json(kept)
        doc = await fetch_client_document(url, self.limits, allow_loopback=self.loopback)
        record = client_from_document(doc, url, limits=self.limits)
        await self.state.put("document", url, record.to_json(),
                             self.clock() + self.limits.client_document_ttl_s)
        return record

    # -- serving ----------------------------------------------------------------------------

    def serves(self, scope: Scope) -> bool:
        return scope["path"] in self._routes

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = read_headers(scope["headers"])
        refusal = self.policy.check(headers.host, None)
        if refusal is not None:
            await refuse(send, forbidden(refusal))
            return
        method = scope["method"]
        if method == "OPTIONS":
            await send_json(send, 200, {}, [
                *CORS, (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
                (b"access-control-allow-headers", b"authorization, content-type, "
                 b"mcp-protocol-version"), (b"access-control-max-age", b"600")])
            return
        handler = self._routes[scope["path"]]
        try:
            await handler(scope, receive, send)
        except OAuthRequestError as exc:
            await send_error(send, exc)
        except StoreUnavailableError as exc:
            log.warning("authorization proxy: %s", exc)
            await send_error(send, OAuthRequestError(
                "the server's store cannot be reached; try again shortly",
                error="temporarily_unavailable", status=503),
                ((b"retry-after", b"5"),))

    # -- metadata and keys ------------------------------------------------------------------

    async def _metadata(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "GET", "HEAD")
        await send_json(send, 200, authorization_server_metadata(self.proxy), [
            *CORS, (b"cache-control", b"public, max-age=300")], head=scope["method"] == "HEAD")

    async def _jwks(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "GET", "HEAD")
        await send_json(send, 200, self.keys().jwks(), [
            *CORS, (b"cache-control", b"public, max-age=300")], head=scope["method"] == "HEAD")

    # -- registration -----------------------------------------------------------------------

    async def _register(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "POST")
        if not self.proxy.dynamic_registration:
            raise OAuthRequestError("this server takes no dynamic registrations; name your "
                                    "client by a Client ID Metadata Document URL",
                                    error="invalid_request", status=404)
        if not self._registrations.allow(client_address(scope), self.clock()):
            raise OAuthRequestError("too many registrations from this address; try again in "
                                    "a minute", error="invalid_request", status=429)
        if not (header(scope, b"content-type") or "").lower().startswith("application/json"):
            raise OAuthRequestError("a registration is a JSON object (Content-Type: "
                                    "application/json)", error="invalid_client_metadata")
        body = await read_body(receive, self.limits.max_registration_bytes)
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise OAuthRequestError("the registration is not JSON",
                                    error="invalid_client_metadata") from None
        now = self.clock()
        client_id = "mcp-" + secrets.token_urlsafe(18)
        secret = secrets.token_urlsafe(32)
        record = client_from_registration(doc, client_id=client_id, secret_hash=digest(secret),
                                          now=now, limits=self.limits)
        await self.state.put("client", client_id, record.to_json(),
                             now + self.limits.registration_ttl_s)
        answer: dict[str, Any] = {
            "client_id": client_id, "client_id_issued_at": int(now),
            "redirect_uris": list(record.redirect_uris),
            "grant_types": list(record.grant_types), "response_types": ["code"],
            "token_endpoint_auth_method": record.auth_method,
        }
        if record.secret_hash is not None:
            answer.update(client_secret=secret, client_secret_expires_at=0)
        for name in ("client_name", "client_uri"):
            if getattr(record, name):
                answer[name] = getattr(record, name)
        await send_json(send, 201, answer, [*NO_STORE, *CORS])
