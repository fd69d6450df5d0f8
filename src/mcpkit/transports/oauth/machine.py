"""`MachineAuth`: authorization for a client with no user, as an httpx auth flow.

Give it to the HTTP transport (`HTTPConnector(url, auth=MachineAuth(grant))`, or httpx's own
`auth=`) and every request to the MCP server carries a token obtained by one of the machine
grants of `mcpkit.transports.oauth.grants` (client credentials, enterprise-managed, workload
identity). The flow is the one the user-facing flow follows, minus the browser:

1. a request goes out with the token held, if any (none at first);
2. on 401 the server's challenge is read; its `resource_metadata`, else the well-known URIs,
   give the Protected Resource Metadata (checked to speak for this server), whose first
   authorization server's metadata is fetched (its `issuer` checked exactly); the grant gets
   a token for the server's canonical URI with the scope the challenge names (else the PRM's
   `scopes_supported`), and the request is sent again, once;
3. on 403 `insufficient_scope` the grant asks again with the union of the scopes, once per
   request;
4. with DPoP (`dpop=True` or a `DPoPSigner`), the token request and every resource request
   carry a fresh proof, `Authorization: DPoP` presents a DPoP-bound token, and a resource
   server's `use_dpop_nonce` 401 is answered once with a proof carrying its nonce.

A grant's failure is a `GrantError` out of the request, with the AS's error code; nothing is
retried with another grant. Metadata is fetched as the interactive client fetches it (`mcpkit.transports.oauth.http.
OAuthHTTP`): http(s) URLs only, every address a host name resolves to checked (never private
or link-local; loopback only when the MCP server itself is on loopback), redirects followed a
few hops, each hop checked the same way. Tokens are kept in memory, or in a `TokenStorage`
keyed by issuer and resource.

Imports: httpx, `mcpkit.auth` (the client rules and DPoP), `mcpkit.errors`, `mcpkit.store.
tokens`, the sibling `grants` and `dpop` modules, and the standard library.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from mcpkit.auth.client_challenge import BearerChallenge, bearer_challenge, sent_scheme
from mcpkit.auth.client_discovery import (
    ASMetadata,
    ResourceMetadata,
    as_metadata_urls,
    canonical_resource,
    prm_urls,
    read_prm,
)
from mcpkit.auth.client_scopes import initial_scope, step_up_scope
from mcpkit.auth.client_targets import is_loopback_host
from mcpkit.errors import AuthError
from mcpkit.store.tokens import TokenSet, TokenStorage
from mcpkit.transports.oauth.dpop import DPoPSigner
from mcpkit.transports.oauth.grants import MachineGrant
from mcpkit.transports.oauth.http import OAuthHTTP

__all__ = ["MachineAuth"]

_METADATA_TIMEOUT_S: Final = 10.0


class MachineAuth(httpx.Auth):
    """An httpx auth flow that authorizes requests with a machine grant.

    `scope` overrides what the server's challenge and metadata suggest; `dpop` turns on DPoP
    (True: a fresh ES256 key); `storage` keeps tokens across processes; `http` is the client
    for metadata and token requests (default: one of its own, closed by `aclose`);
    `allow_loopback` lets metadata live on loopback when the MCP server is elsewhere (tests),
    `allow_private` on private addresses (an AS inside the network).
    """

    requires_request_body = True

    def __init__(self, grant: MachineGrant, *, scope: str | None = None,
                 dpop: DPoPSigner | bool = False, storage: TokenStorage | None = None,
                 http: httpx.AsyncClient | None = None, allow_loopback: bool = False,
                 allow_private: bool = False, clock: Callable[[], float] = time.time) -> None:
        self.grant = grant
        self.scope = scope
        self.dpop: DPoPSigner | None = (DPoPSigner() if dpop is True
                                        else dpop if isinstance(dpop, DPoPSigner) else None)
        self.storage = storage
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private
        self._clock = clock
        self._http = http
        self._own_http = http is None
        self._token: TokenSet | None = None
        self._metadata: ASMetadata | None = None
        self._resource: str | None = None
        self._prm: ResourceMetadata | None = None

    @property
    def token(self) -> TokenSet | None:
        """The token held now (its `repr` hides the secret parts)."""
        return self._token

    @property
    def metadata(self) -> Mapping[str, Any] | None:
        """The authorization server metadata found, once a 401 sent the flow looking."""
        return self._metadata.raw if self._metadata is not None else None

    async def aclose(self) -> None:
        """Close the metadata and token client, if this flow made it."""
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None

    async def async_auth_flow(
            self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self._usable_token()
        if token is not None:
            self._present(request, token)
        response = yield request
        # Each remedy at most once per request: a nonce, a token, a wider scope.
        nonce_tried = authorized = stepped_up = False
        while True:
            self._learn(response)
            if token is not None and not nonce_tried and self._nonce_retry(response):
                nonce_tried = True
            elif response.status_code == 401 and not authorized:
                authorized = True
                challenge = self._challenge(request, response)
                await self._discover(str(request.url), challenge)
                assert self._prm is not None and self._metadata is not None
                token = await self._obtain(self.scope or initial_scope(
                    challenge.scope if challenge else None, self._prm.scopes_supported,
                    self._metadata.scopes_supported, want_refresh=False))
            elif response.status_code == 403 and token is not None and not stepped_up:
                stepped_up = True
                challenge = self._challenge(request, response)
                if challenge is None or not challenge.insufficient_scope:
                    return
                wider = step_up_scope(token.scope, challenge.scope)
                if wider == token.scope:
                    return
                token = await self._obtain(wider)
            else:
                return
            self._present(request, token)
            response = yield request

    # -- tokens -------------------------------------------------------------------------------

    async def _usable_token(self) -> TokenSet | None:
        token = self._token
        if (token is None and self.storage is not None and self._metadata is not None
                and self._resource is not None):
            token = await self.storage.load(self._metadata.issuer, self._resource)
        if token is not None and token.expired(self._clock()):
            if self._metadata is None:
                return None
            return await self._obtain(token.scope)
        self._token = token
        return token

    async def _obtain(self, scope: str | None) -> TokenSet:
        assert self._metadata is not None
        token = await self.grant.obtain(self._client(), self._metadata.raw,
                                        resource=self._resource, scope=scope, dpop=self.dpop)
        self._token = token
        if self.storage is not None and self._resource is not None:
            await self.storage.save(self._metadata.issuer, self._resource, token)
        return token

    def _present(self, request: httpx.Request, token: TokenSet) -> None:
        if token.token_type == "DPoP" and self.dpop is not None:
            self.dpop.sign_resource_request(request, token.access_token)
        else:
            request.headers["authorization"] = f"Bearer {token.access_token}"

    @staticmethod
    def _challenge(request: httpx.Request, response: httpx.Response) -> BearerChallenge | None:
        """The challenge of the scheme the request was sent with (a DPoP request's error is in
        the DPoP challenge), `mcpkit.auth.client_challenge.bearer_challenge`."""
        return bearer_challenge(response.headers.get_list("www-authenticate"),
                                sent_scheme(request.headers.get("authorization")))

    def _learn(self, response: httpx.Response) -> None:
        if self.dpop is not None:
            self.dpop.learn(response)

    def _nonce_retry(self, response: httpx.Response) -> bool:
        return (self.dpop is not None and response.status_code == 401
                and self.dpop.retry_after(response))

    # -- discovery ----------------------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=_METADATA_TIMEOUT_S, follow_redirects=False)
        return self._http

    async def _discover(self, server_url: str, challenge: BearerChallenge | None) -> None:
        """Find and check this server's PRM and its authorization server's metadata."""
        server_url = _without_query(server_url)
        hint = challenge.resource_metadata if challenge else None
        loopback = self.allow_loopback or is_loopback_host(urlsplit(server_url).hostname or "")
        prm: ResourceMetadata | None = None
        for url in prm_urls(server_url, hint):
            doc = await self._fetch(url, loopback)
            if doc is not None:
                prm = read_prm(doc, url, server_url)
                break
        if prm is None:
            raise AuthError(f"{server_url} asks for authorization but publishes no protected "
                            "resource metadata (RFC 9728) at any of "
                            f"{', '.join(prm_urls(server_url, hint))}")
        issuer = prm.authorization_servers[0]
        metadata = await self._checked(loopback).as_metadata(issuer)
        if metadata is None:
            raise AuthError(f"the authorization server {issuer} publishes no metadata at "
                            f"{', '.join(as_metadata_urls(issuer))}")
        if self._metadata is not None and self._metadata.issuer != metadata.issuer:
            self._token = None  # a token from one AS is never shown as another's
        self._prm, self._metadata = prm, metadata
        self._resource = prm.resource or canonical_resource(server_url)

    def _checked(self, loopback: bool) -> OAuthHTTP:
        """Metadata requests through the interactive client's checks (resolved addresses,
        redirects followed per hop)."""
        return OAuthHTTP(self._client(), allow_loopback=loopback,
                         allow_private=self.allow_private)

    async def _fetch(self, url: str, loopback: bool) -> Any:
        """The JSON document at `url`, or None when it is not there (an error status);
        refused outright when `url`, a hop it redirects to, or an address its host resolves
        to is not a target metadata may come from."""
        status, doc = await self._checked(loopback).get_json(url)
        return doc if status == 200 else None


def _without_query(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"

