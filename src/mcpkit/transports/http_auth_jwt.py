"""`JWTVerifier`: JWT access tokens (RFC 9068) checked against the authorization server's keys.

The keys come from its JWKS URL and are kept as long as the response's `Cache-Control: max-age`
(or `Expires`) says, bounded below and above so an odd header neither hammers the server nor
keeps a revoked key for days. A token signed with a `kid` the cached set lacks (the server
rotated its keys) triggers one refetch, at most once per `refresh_interval_s`, so a flood of
tokens with made-up kids cannot turn into a flood of fetches (the first unknown kid after a
quiet spell is always looked up, however recent the last regular fetch). The algorithm must be on the
allow-list: asymmetric ones only, never `none` nor an HMAC (a public key used as an HMAC
secret is the classic confusion). The signature is checked by joserfc; the claims (issuer,
audience, time) by the HTTP app's check with `mcpkit.auth.server_claims`, for every verifier.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import re
import time
from collections.abc import Callable, Collection
from typing import Any, Final

from mcpkit.auth.server_claims import claims_scopes
from mcpkit.auth.server_config import Principal
from mcpkit.errors import InvalidTokenError, VerifierUnavailableError
from mcpkit.protocol.extras import require

__all__ = ["ASYMMETRIC_ALGORITHMS", "JWTVerifier", "cache_seconds", "principal_of"]

log = logging.getLogger("mcpkit.auth")

ASYMMETRIC_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                                "ES256", "ES384", "ES512", "EdDSA")
_MAX_AGE: Final = re.compile(r"(?:^|,)\s*(?:s-)?max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_MAX_JWKS_BYTES: Final = 512 * 1024


def cache_seconds(headers: Any, now: float, *, default: float, floor: float,
                  ceiling: float) -> float:
    """How long a JWKS response may be kept, from its cache headers (RFC 9111): `no-store` or
    `no-cache` keep it `floor` seconds, `max-age` (or `Expires`) as given, within
    [`floor`, `ceiling`]; without either, `default`."""
    control = headers.get("cache-control", "")
    if "no-store" in control.lower() or "no-cache" in control.lower():
        return floor
    found = _MAX_AGE.search(control)
    if found is not None:
        return min(max(float(found.group(1)), floor), ceiling)
    expires = headers.get("expires")
    if expires:
        try:
            when = email.utils.parsedate_to_datetime(expires).timestamp()
        except (TypeError, ValueError):
            return floor
        return min(max(when - now, floor), ceiling)
    return default


class JWTVerifier:
    """Checks JWT access tokens against the keys published at `jwks_url`."""

    def __init__(
        self,
        jwks_url: str,
        *,
        algorithms: Collection[str] = ("RS256", "PS256", "ES256", "EdDSA"),
        refresh_interval_s: float = 30.0,
        default_ttl_s: float = 300.0,
        min_ttl_s: float = 30.0,
        max_ttl_s: float = 86400.0,
        timeout_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not jwks_url.startswith(("https://", "http://")):
            raise ValueError(f"JWTVerifier: jwks_url {jwks_url!r} must be an http(s) URL")
        bad = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if bad or not algorithms:
            raise ValueError(f"JWTVerifier: algorithms may name only asymmetric JWS algorithms "
                             f"({', '.join(ASYMMETRIC_ALGORITHMS)}), not {bad or 'none'}")
        self.jwks_url = jwks_url
        self.algorithms = tuple(algorithms)
        self.refresh_interval_s = refresh_interval_s
        self._ttl = (default_ttl_s, min_ttl_s, max_ttl_s)
        self.timeout_s = timeout_s
        self._clock = clock
        self._jose = require("joserfc", "JWT access token verification")
        self._keys: Any = None
        self._fresh_until = 0.0
        self._fetched_at: float | None = None
        self._refetched_at: float | None = None
        """When an unknown kid last made the set be fetched again (rate-limited)."""
        self._lock = asyncio.Lock()
        self.fetches = 0
        """How many times the JWKS was fetched (for tests and metrics)."""

    async def verify(self, token: str) -> Principal:
        from joserfc import jws, jwt
        from joserfc.errors import JoseError

        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError):
            raise InvalidTokenError("the token is not a JWT") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidTokenError(f"the token's algorithm {str(alg)[:20]!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and type(kid) is not str:
            raise InvalidTokenError("the token's kid is not a string")
        key = await self._key(kid)
        try:
            decoded = jwt.decode(token, key, algorithms=[alg])
        except JoseError:
            raise InvalidTokenError("the token's signature does not verify") from None
        except (ValueError, TypeError):
            raise InvalidTokenError("the token's claims are not a JSON object") from None
        claims = decoded.claims
        if not isinstance(claims, dict):
            raise InvalidTokenError("the token's claims are not a JSON object")
        return principal_of(claims)

    async def _key(self, kid: str | None) -> Any:
        """The key for `kid` (None: the set's only key), refetching once on an unknown kid."""
        now = self._clock()
        if self._keys is None or now >= self._fresh_until:
            await self._refresh(now, stale_ok=self._keys is not None)
        key = self._find(kid)
        if key is None and (self._refetched_at is None
                            or now - self._refetched_at >= self.refresh_interval_s):
            # Perhaps the server rotated its keys: look once, then not again for a while.
            self._refetched_at = now
            await self._refresh(now, stale_ok=True)
            key = self._find(kid)
        if key is None:
            raise InvalidTokenError("the token is signed by a key this resource does not know "
                                    "(kid)")
        return key

    def _find(self, kid: str | None) -> Any:
        keys = self._keys
        if keys is None:
            return None
        if kid is None:
            return keys.keys[0] if len(keys.keys) == 1 else None
        return next((k for k in keys.keys if k.kid == kid), None)

    async def _refresh(self, now: float, *, stale_ok: bool) -> None:
        import httpx

        async with self._lock:
            if self._fetched_at is not None and self._fetched_at > now and self._keys is not None:
                return  # another task fetched while this one waited
            self._fetched_at = self._clock()
            self.fetches += 1
            try:
                async with httpx.AsyncClient(timeout=self.timeout_s,
                                             follow_redirects=False) as http:
                    response = await http.get(self.jwks_url,
                                              headers={"accept": "application/json"})
                if response.status_code != 200:
                    raise ValueError(f"status {response.status_code}")
                if len(response.content) > _MAX_JWKS_BYTES:
                    raise ValueError("the key set is over 512 KiB")
                keys = self._jose.jwk.KeySet.import_key_set(response.json())
                usable = [k for k in keys.keys if k.key_type in ("RSA", "EC", "OKP")]
                keys = self._jose.jwk.KeySet(usable)
            except (httpx.HTTPError, ValueError, TypeError, KeyError,
                    self._jose.errors.JoseError) as exc:
                if stale_ok and self._keys is not None:
                    log.warning("cannot refresh the JWKS at %s (%s); keeping the keys it gave "
                                "before", self.jwks_url, exc)
                    self._fresh_until = self._clock() + self._ttl[1]
                    return
                raise VerifierUnavailableError(
                    f"cannot fetch the JWKS at {self.jwks_url}: {exc}") from None
            self._keys = keys
            default, floor, ceiling = self._ttl
            self._fresh_until = self._clock() + cache_seconds(
                response.headers, time.time(), default=default, floor=floor, ceiling=ceiling)


def principal_of(claims: dict[str, Any]) -> Principal:
    """The principal a token's (or an introspection answer's) claims describe: `sub`, else the
    client (a client-credentials token acts for the client itself)."""
    client_id = claims.get("client_id", claims.get("azp"))
    client_id = client_id if type(client_id) is str else None
    subject = claims.get("sub")
    if type(subject) is not str or not subject:
        if client_id is None:
            raise InvalidTokenError("the token names no subject (sub) or client (client_id)")
        subject = client_id
    issuer = claims.get("iss")
    return Principal(subject, client_id, claims_scopes(claims), claims,
                     issuer if type(issuer) is str else None)
