"""The authorization proxy's token side: the token endpoint (authorization code with PKCE,
refresh with rotation), revocation (RFC 7009), the verifier of its access tokens, and the
upstream token a tool asks for.

- **Codes** are used once: a second redemption is refused and revokes the grant the first
  one started (RFC 6749 §4.1.2), so a code stolen and raced ends the thief's and the
  owner's tokens alike. A code is bound to its client, its redirect URI and its PKCE
  challenge; a verifier that does not match is `invalid_grant`.
- **Refresh tokens** rotate: each use gives a new one and ends the old. An old one presented
  again (a copy in someone else's hands) revokes the whole grant (OAuth 2.1 §4.3.1). A grant
  lives `refresh_token_ttl_s` from the sign-in, whatever the rotations.
- **Access tokens** are JWTs for this MCP server only (`aud`), checked by `ProxyVerifier`
  (signature, then whether their grant or they themselves were revoked) and then by the
  resource server's usual checks of issuer, audience, time and scopes.
- **Upstream tokens** never leave the server: kept sealed in the store by grant, handed to a
  tool only through `Context.upstream_token()`, refreshed at the upstream when they expire,
  forgotten (and revoked upstream where it offers revocation) with the grant.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hmac
import logging
import secrets
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote

from mcpkit.auth.proxy.authorize import parse_query
from mcpkit.auth.proxy.clients import ClientRecord
from mcpkit.auth.proxy.tokens import (
    digest,
    issue_access_token,
    pkce_matches,
    read_access_token,
)
from mcpkit.auth.server_claims import claims_scopes
from mcpkit.auth.server_config import Principal
from mcpkit.errors import AuthError, InvalidTokenError, OAuthRequestError
from mcpkit.transports.auth_proxy.http import CORS, NO_STORE, header, read_body, send_json
from mcpkit.transports.http_server.endpoint import Receive, Scope, Send

if TYPE_CHECKING:
    from mcpkit.transports.auth_proxy.routes import ProxyRoutes

__all__ = [
    "ProxyVerifier",
    "TokenEndpoints",
]

log = logging.getLogger("mcpkit.auth.proxy")

_FORM_LIMIT: Final = 16 * 1024
_EARLY_S: Final = 30.0
"""An upstream token this close to its expiry is refreshed before a tool gets it."""


def _grant_error(message: str) -> OAuthRequestError:
    return OAuthRequestError(message, error="invalid_grant")


class TokenEndpoints:
    """`/oauth/token` and `/oauth/revoke` of one proxy."""

    def __init__(self, routes: ProxyRoutes) -> None:
        self.routes = routes

    async def _form(self, scope: Scope, receive: Receive) -> dict[str, str]:
        if scope["method"] != "POST":
            raise OAuthRequestError(f"{scope['path']} takes POST", error="invalid_request",
                                    status=405)
        kind = (header(scope, b"content-type") or "").lower()
        if not kind.startswith("application/x-www-form-urlencoded"):
            raise OAuthRequestError("the request must be form-encoded (Content-Type: "
                                    "application/x-www-form-urlencoded)", error="invalid_request")
        body = await read_body(receive, _FORM_LIMIT)
        return parse_query(body.decode("latin-1"), what="the request")

    async def _client(self, scope: Scope, form: dict[str, str]) -> ClientRecord:
        """The authenticated client: HTTP Basic, the secret in the form, or a public
        client's id; `invalid_client` (401) otherwise."""
        basic = header(scope, b"authorization")
        secret: str | None = None
        if basic is not None and basic[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
                client_id, _, secret = pair.partition(":")
                client_id, secret = unquote(client_id), unquote(secret)
            except (ValueError, UnicodeError):
                raise OAuthRequestError("the Basic credentials are not base64 of id:secret",
                                        error="invalid_client", status=401) from None
            if form.get("client_id", client_id) != client_id:
                raise OAuthRequestError("client_id disagrees with the Basic credentials",
                                        error="invalid_client", status=401)
        else:
            client_id = form.get("client_id", "")
            secret = form.get("client_secret")
        client = await self.routes.client(client_id) if client_id else None
        if client is None:
            raise OAuthRequestError("unknown client: register again", error="invalid_client",
                                    status=401)
        if client.auth_method != "none" and (
                secret is None or client.secret_hash is None
                or not hmac.compare_digest(digest(secret), client.secret_hash)):
            raise OAuthRequestError("the client's credentials are wrong",
                                    error="invalid_client", status=401)
        return client

    # -- /oauth/token ---------------------------------------------------------------------

    async def token(self, scope: Scope, receive: Receive, send: Send) -> None:
        form = await self._form(scope, receive)
        client = await self._client(scope, form)
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            answer = await self._code(client, form)
        elif grant_type == "refresh_token":
            if not client.refreshes:
                raise OAuthRequestError("this client did not register the refresh_token grant",
                                        error="unauthorized_client")
            answer = await self._refresh(client, form)
        else:
            raise OAuthRequestError(f"grant_type {str(grant_type)[:40]!r} is not served: "
                                    "authorization_code or refresh_token",
                                    error="unsupported_grant_type")
        await send_json(send, 200, answer, [*NO_STORE, *CORS])

    async def _code(self, client: ClientRecord, form: dict[str, str]) -> dict[str, Any]:
        code, verifier = form.get("code"), form.get("code_verifier")
        if not code or not verifier or "redirect_uri" not in form:
            raise OAuthRequestError("code, redirect_uri and code_verifier are required",
                                    error="invalid_request")
        state = self.routes.state
        key = digest(code)
        record = await state.get("code", key)
        if record is None:
            raise _grant_error("the code is unknown or expired")
        if not await state.use("code", key, float(record["grant_expires"])):
            await self.revoke_grant(record["grant"], float(record["grant_expires"]))
            raise _grant_error("the code was used before: the tokens issued for it are revoked")
        if record["client_id"] != client.client_id:
            raise _grant_error("the code was issued to another client")
        if form["redirect_uri"] != record["redirect_uri"]:
            raise _grant_error("redirect_uri is not the one of the authorization request")
        if not pkce_matches(verifier, record["challenge"]):
            raise _grant_error("the code_verifier does not match the code_challenge (PKCE)")
        resource = form.get("resource")
        if resource is not None and resource.rstrip("/") != record["resource"]:
            raise OAuthRequestError(f"resource must be {record['resource']}",
                                    error="invalid_target")
        return await self._issue(client, record, tuple(record["scopes"]))

    async def _refresh(self, client: ClientRecord, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("refresh_token")
        if not token:
            raise OAuthRequestError("refresh_token is required", error="invalid_request")
        state = self.routes.state
        key = digest(token)
        record = await state.get("refresh", key)
        if record is None or record["client_id"] != client.client_id:
            raise _grant_error("the refresh token is unknown, expired or revoked")
        if await state.revoked(record["grant"]):
            raise _grant_error("the refresh token's grant was revoked")
        if not await state.use("refresh", key, float(record["grant_expires"])):
            await self.revoke_grant(record["grant"], float(record["grant_expires"]))
            raise _grant_error("the refresh token was used before: its grant is revoked")
        scopes = tuple(record["scopes"])
        asked = form.get("scope")
        if asked is not None:
            wanted = tuple(dict.fromkeys(s for s in asked.split(" ") if s))
            if not set(wanted) <= set(scopes):
                raise OAuthRequestError("a refresh may narrow the scopes, never widen them",
                                        error="invalid_scope")
            scopes = wanted
        return await self._issue(client, {**record, "scopes": list(scopes)}, scopes)

    async def _issue(self, client: ClientRecord, record: dict[str, Any],
                     scopes: tuple[str, ...]) -> dict[str, Any]:
        routes = self.routes
        now = self.routes.clock()
        grant_expires = float(record["grant_expires"])
        ttl = min(routes.limits.access_token_ttl_s, grant_expires - now)
        if ttl <= 0:
            raise _grant_error("the grant has expired: sign in again")
        identity = dict(record["identity"])
        access = issue_access_token(
            routes.keys(), issuer=routes.proxy.issuer_url, audience=record["resource"],
            subject=identity["subject"], client_id=client.client_id, scopes=scopes,
            grant=record["grant"], jti=secrets.token_urlsafe(16), now=now, ttl_s=ttl,
            identity=identity)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": int(ttl), "scope": " ".join(scopes)}
        if client.refreshes:
            refresh = secrets.token_urlsafe(32)
            await routes.state.put("refresh", digest(refresh), {
                "grant": record["grant"], "grant_expires": grant_expires,
                "client_id": client.client_id, "scopes": list(scopes),
                "resource": record["resource"], "identity": identity}, grant_expires)
            answer["refresh_token"] = refresh
        return answer

    # -- revocation -----------------------------------------------------------------------

    async def revoke_grant(self, grant: str, until: float) -> None:
        """End a grant: its access and refresh tokens, and the upstream's tokens."""
        state = self.routes.state
        await state.revoke(grant, until)
        record = await state.get("upstream", grant)
        if record is None:
            return
        await state.delete("upstream", grant)
        try:
            tokens = self.routes.unseal(record["sealed"])
            refresh = tokens.get("refresh_token")
            await self.routes.upstream.revoke(refresh or tokens["access_token"],
                                              "refresh_token" if refresh else "access_token")
        except Exception as exc:  # best effort: the proxy's own grant is revoked already
            log.warning("authorization proxy: the upstream tokens of a revoked grant could not "
                        "be revoked there (%s)", type(exc).__name__)

    async def revoke(self, scope: Scope, receive: Receive, send: Send) -> None:
        """RFC 7009: the refresh token's grant, or the access token, ended; 200 whatever the
        token (an unknown one included, §2.2), so the answer tells nothing."""
        form = await self._form(scope, receive)
        client = await self._client(scope, form)
        token = form.get("token")
        if not token:
            raise OAuthRequestError("token is required", error="invalid_request")
        record = await self.routes.state.get("refresh", digest(token))
        if record is not None:
            if record["client_id"] == client.client_id:
                await self.revoke_grant(record["grant"], float(record["grant_expires"]))
        else:
            try:
                claims = read_access_token(self.routes.keys(), token)
            except InvalidTokenError:
                claims = None
            if claims is not None and claims.get("client_id") == client.client_id:
                await self.routes.state.revoke(str(claims.get("jti")),
                                               float(claims.get("exp", self.routes.clock())))
        await send_json(send, 200, {}, [*NO_STORE, *CORS])


class UpstreamTokens:
    """The upstream tokens of one grant, kept sealed under the grant's id. A refresh is made
    by the one replica that wins its lock (a single-use key per version), which replaces the
    record (delete, then write: the store overwrites nothing); a reader that meets the gap
    between the two reads again."""

    def __init__(self, routes: ProxyRoutes, grant: str) -> None:
        self.routes = routes
        self.grant = grant

    async def latest(self) -> dict[str, Any] | None:
        """The kept record, waiting out a replacement in flight (a few reads at most)."""
        for _ in range(20):
            record = await self.routes.state.get("upstream", self.grant)
            if record is not None:
                return record
            if await self.routes.state.revoked(self.grant):
                return None
            await asyncio.sleep(0.05)
        return None

    async def token(self) -> str:
        """An upstream access token of this grant, refreshed at the upstream when it is
        about to expire (one replica refreshes; the others wait for its result)."""
        routes = self.routes
        for _ in range(50):
            if await routes.state.revoked(self.grant):
                raise AuthError("the sign-in this request acts for was revoked")
            record = await self.latest()
            if record is None:
                raise AuthError("no upstream token is kept for this sign-in (it was revoked "
                                "or has expired): sign in again")
            tokens = routes.unseal(record["sealed"])
            expires = tokens.get("expires_at")
            if expires is None or routes.clock() < float(expires) - _EARLY_S:
                return str(tokens["access_token"])
            if not tokens.get("refresh_token"):
                raise AuthError(f"the {routes.proxy.upstream.name} token of this sign-in has "
                                "expired and cannot be refreshed: sign in again")
            version = int(record["v"]) + 1
            lock_until = routes.clock() + routes.limits.upstream_timeout_s + 5
            if await routes.state.use("upstream-lock", f"{self.grant}:{version}", lock_until):
                fresh = await routes.upstream.refresh(str(tokens["refresh_token"]))
                now = routes.clock()
                kept = {"access_token": fresh["access_token"],
                        "refresh_token": fresh.get("refresh_token") or tokens["refresh_token"],
                        "expires_at": (now + float(fresh["expires_in"]) if type(
                            fresh.get("expires_in")) in (int, float) else None)}
                await routes.state.delete("upstream", self.grant)
                await routes.state.put("upstream", self.grant,
                                       {"v": version, "until": record["until"],
                                        "sealed": routes.seal(kept)},
                                       float(record["until"]))
                return str(kept["access_token"])
            await asyncio.sleep(0.1)  # another replica refreshes it: read its result
        raise AuthError(f"the {routes.proxy.upstream.name} token of this sign-in could not be "
                        "refreshed in time")


class ProxyVerifier:
    """Checks the access tokens the proxy issued (the `ProtectedResource` verifier)."""

    def __init__(self, routes: ProxyRoutes) -> None:
        self.routes = routes

    async def verify(self, token: str) -> Principal:
        claims = read_access_token(self.routes.keys(), token)
        grant = str(claims["gid"])
        if await self.routes.state.revoked(grant, str(claims.get("jti"))):
            raise InvalidTokenError("the token was revoked")
        subject = claims.get("sub")
        if type(subject) is not str or not subject:
            raise InvalidTokenError("the token names no subject")
        client_id = claims.get("client_id")
        return Principal(subject, client_id if type(client_id) is str else None,
                         claims_scopes(claims), claims, str(claims.get("iss")),
                         upstream=functools.partial(_upstream_token, self.routes, grant))


async def _upstream_token(routes: ProxyRoutes, grant: str) -> str:
    return await UpstreamTokens(routes, grant).token()
