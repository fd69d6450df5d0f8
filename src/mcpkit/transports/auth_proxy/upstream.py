"""The authorization proxy's calls to its upstream identity provider, as the one client the
proxy is registered there as.

- `endpoints`: the provider's endpoints, from its `Upstream` or, for one named by its
  discovery URL, from the discovery document (fetched once; its `issuer` must be the URL the
  document was found under, OpenID Connect Discovery §4.3);
- `authorization_url`: where the user's browser goes, with the proxy's client id, its
  callback as the redirect URI, PKCE S256 and, for OpenID Connect, a `nonce`;
- `exchange` and `refresh`: the token endpoint, authenticated as the configured method;
- `identity`: who signed in, from the ID token (its signature checked against the provider's
  keys by `JWTVerifier`, then its `iss`, `aud`, time and `nonce`) and the userinfo endpoint
  (whose `sub` must be the ID token's), mapped through the `ClaimMap`;
- `revoke`: the upstream grant, when the provider offers RFC 7009 revocation, once the
  proxy's grant is revoked.

The provider is configuration the operator wrote, so its addresses may be private (an
in-house Keycloak on 10.0.0.0/8); requests are bounded in time (`upstream_timeout_s`) and
size, never redirected, and a failure is an `AuthError` naming the step, never a token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from mcpkit.auth.proxy.config import ProxyLimits, Upstream
from mcpkit.auth.server_claims import check_claims
from mcpkit.errors import AuthError, InvalidTokenError
from mcpkit.store.tokens import ClientInfo
from mcpkit.transports.oauth.http import OAuthHTTP, client_auth

__all__ = [
    "Endpoints",
    "UpstreamClient",
]

_LEEWAY_S = 60.0


@dataclass(frozen=True, slots=True)
class Endpoints:
    issuer: str | None
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str | None
    jwks_uri: str | None
    revocation_endpoint: str | None


class UpstreamClient:
    """The proxy's client at its upstream identity provider."""

    def __init__(self, upstream: Upstream, limits: ProxyLimits, redirect_uri: str) -> None:
        self.upstream = upstream
        self.limits = limits
        self.redirect_uri = redirect_uri
        self._endpoints: Endpoints | None = None
        self._resolving: asyncio.Lock | None = None
        self._verifier: Any = None
        self._client = ClientInfo(upstream.client_id, upstream.client_secret,
                                  upstream.auth_method, "pre-registered")

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.limits.upstream_timeout_s, trust_env=False,
                                 follow_redirects=False)

    async def endpoints(self) -> Endpoints:
        if self._endpoints is not None:
            return self._endpoints
        if self._resolving is None:
            self._resolving = asyncio.Lock()
        async with self._resolving:
            if self._endpoints is None:
                self._endpoints = await self._resolve()
        return self._endpoints

    async def _resolve(self) -> Endpoints:
        up = self.upstream
        if up.discovery_url is not None:
            from mcpkit.auth.proxy.presets import discovered

            async with self._http() as http, asyncio.timeout(self.limits.upstream_timeout_s):
                status, doc = await OAuthHTTP(http, allow_loopback=True, allow_private=True
                                              ).get_json(up.discovery_url)
            if status != 200:
                raise AuthError(f"the identity provider {up.name}: no discovery document at "
                                f"{up.discovery_url} (status {status})")
            try:
                up = discovered(up, doc)
            except ValueError as exc:
                raise AuthError(f"the identity provider {up.name}: {exc}") from None
        assert up.authorization_endpoint is not None and up.token_endpoint is not None
        return Endpoints(up.issuer, up.authorization_endpoint, up.token_endpoint,
                         up.userinfo_endpoint, up.jwks_uri, up.revocation_endpoint)

    async def authorization_url(self, state: str, challenge: str, nonce: str) -> str:
        endpoints = await self.endpoints()
        params = {"response_type": "code", "client_id": self.upstream.client_id,
                  "redirect_uri": self.redirect_uri, "scope": " ".join(self.upstream.scopes),
                  "state": state, **self.upstream.authorize_params}
        if self.upstream.pkce:
            params.update(code_challenge=challenge, code_challenge_method="S256")
        if self.upstream.oidc:
            params["nonce"] = nonce
        sep = "&" if "?" in endpoints.authorization_endpoint else "?"
        return endpoints.authorization_endpoint + sep + urlencode(params)

    async def _token_request(self, form: dict[str, str], what: str) -> dict[str, Any]:
        endpoints = await self.endpoints()
        headers, fields = client_auth(self._client, self.upstream.auth_method,
                                      audience=endpoints.issuer or endpoints.token_endpoint)
        async with self._http() as http, asyncio.timeout(self.limits.upstream_timeout_s):
            status, doc, _ = await OAuthHTTP(http, allow_loopback=True, allow_private=True
                                             ).post_form(endpoints.token_endpoint,
                                                         {**form, **fields}, headers)
        if status != 200 or not isinstance(doc, dict) or "error" in doc:
            error = doc.get("error") if isinstance(doc, dict) else None
            raise AuthError(f"the identity provider {self.upstream.name} refused {what} (HTTP "
                            f"{status}{', ' + str(error)[:60] if error else ''})")
        token = doc.get("access_token")
        if not isinstance(token, str) or not token:
            raise AuthError(f"the identity provider {self.upstream.name} answered {what} with "
                            "no access token")
        return doc

    async def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        """The upstream's token response for the code its callback brought."""
        form = {"grant_type": "authorization_code", "code": code,
                "redirect_uri": self.redirect_uri}
        if self.upstream.pkce:
            form["code_verifier"] = verifier
        return await self._token_request(form, "the sign-in's code")

    async def refresh(self, refresh_token: str) -> dict[str, Any]:
        return await self._token_request({"grant_type": "refresh_token",
                                          "refresh_token": refresh_token},
                                         "a refresh of its token")

    async def identity(self, tokens: Mapping[str, Any], nonce: str) -> dict[str, Any]:
        """Who signed in: `subject` and the kept claims (`email`, `name`, `groups`)."""
        endpoints = await self.endpoints()
        claims: dict[str, Any] = {}
        id_token = tokens.get("id_token")
        if self.upstream.oidc and endpoints.jwks_uri and endpoints.issuer:
            if not isinstance(id_token, str):
                raise AuthError(f"the identity provider {self.upstream.name} answered an "
                                "OpenID Connect sign-in with no ID token")
            claims = await self._id_token_claims(id_token, endpoints, nonce)
        if endpoints.userinfo_endpoint:
            info = await self._userinfo(endpoints.userinfo_endpoint, str(tokens["access_token"]))
            if "sub" in claims and "sub" in info and info["sub"] != claims["sub"]:
                raise AuthError(f"the identity provider {self.upstream.name}'s userinfo names "
                                "another subject than its ID token")
            claims = {**claims, **info}
        return self._mapped(claims)

    async def _id_token_claims(self, id_token: str, endpoints: Endpoints,
                               nonce: str) -> dict[str, Any]:
        from mcpkit.transports.http_server.auth_jwt import JWTVerifier

        if self._verifier is None:
            assert endpoints.jwks_uri is not None
            self._verifier = JWTVerifier(endpoints.jwks_uri, typ=None,
                                         algorithms=("RS256", "PS256", "ES256", "EdDSA"),
                                         timeout_s=self.limits.upstream_timeout_s)
        try:
            principal = await self._verifier.verify(id_token)
            assert endpoints.issuer is not None
            check_claims(principal.claims, issuers=(endpoints.issuer,),
                         audience=self.upstream.client_id, now=time.time(),
                         leeway_s=_LEEWAY_S)
        except InvalidTokenError as exc:
            raise AuthError(f"the identity provider {self.upstream.name}'s ID token was "
                            f"refused: {exc}") from None
        claims = dict(principal.claims)
        if claims.get("nonce") != nonce:
            raise AuthError(f"the identity provider {self.upstream.name}'s ID token carries "
                            "another nonce than the sign-in's")
        return claims

    async def _userinfo(self, url: str, access_token: str) -> dict[str, Any]:
        headers = {"authorization": f"Bearer {access_token}", "accept": "application/json",
                   **self.upstream.userinfo_headers}
        async with self._http() as http, asyncio.timeout(self.limits.upstream_timeout_s):
            try:
                answer = await http.get(url, headers=headers)
            except httpx.HTTPError as exc:
                raise AuthError(f"the identity provider {self.upstream.name}'s userinfo "
                                f"could not be read ({type(exc).__name__})") from None
        if answer.status_code != 200 or len(answer.content) > 256 * 1024:
            raise AuthError(f"the identity provider {self.upstream.name}'s userinfo answered "
                            f"{answer.status_code}")
        try:
            info = answer.json()
        except ValueError:
            info = None
        if not isinstance(info, dict):
            raise AuthError(f"the identity provider {self.upstream.name}'s userinfo is no JSON "
                            "object")
        return info

    def _mapped(self, claims: Mapping[str, Any]) -> dict[str, Any]:
        names = self.upstream.claims
        subject = claims.get(names.subject)
        if type(subject) is int:
            subject = str(subject)
        if type(subject) is not str or not subject:
            raise AuthError(f"the identity provider {self.upstream.name} named no subject in "
                            f"the claim {names.subject!r}")
        identity: dict[str, Any] = {"subject": subject}
        for kept, source in (("email", names.email), ("name", names.name)):
            value = claims.get(source) if source else None
            if type(value) is str and value:
                identity[kept] = value[:320]
        groups = claims.get(names.groups) if names.groups else None
        if type(groups) is list:
            identity["groups"] = [g for g in groups if type(g) is str][:200]
        return identity

    async def revoke(self, token: str, hint: str) -> None:
        """Revoke an upstream token where the provider offers it (best effort: logged)."""
        endpoints = await self.endpoints()
        if endpoints.revocation_endpoint is None:
            return
        headers, fields = client_auth(self._client, self.upstream.auth_method,
                                      audience=endpoints.issuer or endpoints.token_endpoint)
        async with self._http() as http, asyncio.timeout(self.limits.upstream_timeout_s):
            await OAuthHTTP(http, allow_loopback=True, allow_private=True).post_form(
                endpoints.revocation_endpoint, {"token": token, "token_type_hint": hint,
                                                **fields}, headers)
