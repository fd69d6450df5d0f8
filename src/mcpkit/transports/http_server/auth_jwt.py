"""`JWTVerifier`: JWT access tokens (RFC 9068) checked against the authorization server's keys.

The keys come from its JWKS URL and are kept as long as the response's `Cache-Control: max-age`
(or `Expires`) says, bounded below and above so an odd header neither hammers the server nor
keeps a revoked key for days. Past that time the keys go on serving while one fetch renews them
in the background. A token signed with a `kid` the cached set lacks (the server rotated its
keys), or whose signature fails with the key its `kid` names (the server re-keyed under the
same `kid`), makes the set be fetched again, at most once per `refresh_interval_s`, so a flood
of tokens with made-up kids or forged signatures cannot turn into a flood of fetches (the first
after a quiet spell is always looked up, however recent the last regular fetch).

There is one fetch at a time, whatever the number of requests that need it: every request that
waits for keys waits for that fetch, which is bounded as a whole by `timeout_s` (a server that
answers slowly, byte by byte, is cut off there too) and reads at most 512 KiB. When the first
fetch fails, requests are answered 503 at once for `failure_backoff_s` before another is tried,
so a key server that is down costs one attempt per backoff, not one per request.

The token's header must say `typ: at+jwt` (RFC 9068 §2.1; `typ=None` for an authorization
server that does not mark its access tokens so), which keeps an ID token or another JWT the
same keys signed from passing as an access token. The algorithm must be on the allow-list:
asymmetric ones only, never `none` nor an HMAC (a public key used as an HMAC secret is the
classic confusion). The signature is checked by joserfc; the claims (issuer, audience, time) by
the HTTP app's check with `mcpkit.auth.server_claims`, for every verifier.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import re
import time
from collections.abc import Callable, Collection
from typing import Any, Final

from mcpkit.auth.server_claims import claims_scopes
from mcpkit.auth.server_config import Principal
from mcpkit.errors import InvalidTokenError, VerifierUnavailableError
from mcpkit.protocol.extras import require

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "JWTVerifier",
    "cache_seconds",
    "fetch_json",
    "principal_of",
]

log = logging.getLogger("mcpkit.auth")

ASYMMETRIC_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                                "ES256", "ES384", "ES512", "EdDSA")
ACCESS_TOKEN_TYP: Final = "at+jwt"
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
        failure_backoff_s: float = 5.0,
        typ: str | None = ACCESS_TOKEN_TYP,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not jwks_url.startswith(("https://", "http://")):
            raise ValueError(f"JWTVerifier: jwks_url {jwks_url!r} must be an http(s) URL")
        bad = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if bad or not algorithms:
            raise ValueError(f"JWTVerifier: algorithms may name only asymmetric JWS algorithms "
                             f"({', '.join(ASYMMETRIC_ALGORITHMS)}), not {bad or 'none'}")
        for name, value in (("timeout_s", timeout_s), ("failure_backoff_s", failure_backoff_s),
                            ("refresh_interval_s", refresh_interval_s)):
            if type(value) not in (int, float) or not 0 <= value < float("inf") or (
                    name == "timeout_s" and value == 0):
                raise ValueError(f"JWTVerifier: {name} must be a finite number of seconds"
                                 f"{' > 0' if name == 'timeout_s' else ' >= 0'}, not {value!r}")
        if typ is not None and (type(typ) is not str or not typ):
            raise ValueError("JWTVerifier: typ names the JOSE typ access tokens carry "
                             "('at+jwt'), or is None to take any")
        self.jwks_url = jwks_url
        self.algorithms = tuple(algorithms)
        self.refresh_interval_s = refresh_interval_s
        self._ttl = (default_ttl_s, min_ttl_s, max_ttl_s)
        self.timeout_s = timeout_s
        self.failure_backoff_s = failure_backoff_s
        self.typ = typ
        self._typ = None if typ is None else _media_type(typ)
        self._clock = clock
        self._jose = require("joserfc", "JWT access token verification")
        self._keys: Any = None
        self._fresh_until = 0.0
        self._fetch: asyncio.Task[None] | None = None
        """The one fetch in flight (every request needing keys waits for it), or the last."""
        self._failed_until = 0.0
        """Until when, the first fetch having failed, requests get 503 without another."""
        self._failure = ""
        """Why the last fetch failed, for the 503's log line."""
        self._refetched_at: float | None = None
        """When a token the cached keys could not check last made the set be fetched again."""
        self.fetches = 0
        """How many times the JWKS was fetched (for tests and metrics)."""

    async def verify(self, token: str) -> Principal:
        from joserfc import jws, jwt
        from joserfc.errors import InvalidPayloadError, JoseError

        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError):
            raise InvalidTokenError("the token is not a JWT") from None
        self._check_typ(header.get("typ"))
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidTokenError(f"the token's algorithm {str(alg)[:20]!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and type(kid) is not str:
            raise InvalidTokenError("the token's kid is not a string")
        key = await self._key(kid)
        try:
            decoded = jwt.decode(token, key, algorithms=[alg])
        except InvalidPayloadError:
            raise InvalidTokenError("the token's claims are not a JSON object") from None
        except (JoseError, ValueError, TypeError):
            # Perhaps the server re-keyed under the same kid: look once (rate-limited), and
            # try a key that changed.
            renewed = await self._refetched(kid)
            if renewed is None or _same_key(renewed, key):
                raise InvalidTokenError("the token's signature does not verify") from None
            try:
                decoded = jwt.decode(token, renewed, algorithms=[alg])
            except InvalidPayloadError:
                raise InvalidTokenError("the token's claims are not a JSON object") from None
            except (JoseError, ValueError, TypeError):
                raise InvalidTokenError("the token's signature does not verify") from None
        claims = decoded.claims
        if not isinstance(claims, dict):
            raise InvalidTokenError("the token's claims are not a JSON object")
        return principal_of(claims)

    def _check_typ(self, typ: object) -> None:
        """RFC 9068 §4: the header's `typ` names an access token (`at+jwt`, with or without
        `application/`, in any case: RFC 7515 §4.1.9)."""
        if self._typ is None:
            return
        if typ is None:
            raise InvalidTokenError(f"the token has no typ header; an access token says "
                                    f"{self.typ!r} (RFC 9068)")
        if type(typ) is not str or _media_type(typ) != self._typ:
            raise InvalidTokenError(f"the token's typ {str(typ)[:20]!r} is not {self.typ!r}: it "
                                    "is no access token (RFC 9068)")

    async def _key(self, kid: str | None) -> Any:
        """The key for `kid` (None: the set's only key), fetching the set again once when it
        lacks that key (rate-limited)."""
        if self._keys is None:
            await self._fetched()
        elif self._clock() >= self._fresh_until:
            self._start()  # renewed in the background: these keys serve meanwhile
        key = self._find(kid)
        if key is None:
            key = await self._refetched(kid)
        if key is None:
            raise InvalidTokenError("the token is signed by a key this resource does not know "
                                    "(kid)")
        return key

    async def _refetched(self, kid: str | None) -> Any:
        """`kid`'s key after the set was fetched again (joining a fetch in flight, else
        starting one if the last such refetch is `refresh_interval_s` old), or None."""
        fetch = self._fetch
        if fetch is None or fetch.done():
            now = self._clock()
            if self._refetched_at is not None and now - self._refetched_at < \
                    self.refresh_interval_s:
                return None
            self._refetched_at = now
        await self._fetched(force=True)
        return self._find(kid)

    def _find(self, kid: str | None) -> Any:
        keys = self._keys
        if keys is None:
            return None
        if kid is None:
            return keys.keys[0] if len(keys.keys) == 1 else None
        return next((k for k in keys.keys if k.kid == kid), None)

    def _start(self) -> asyncio.Task[None]:
        """The fetch in flight, or a new one: never two at a time."""
        fetch = self._fetch
        loop = asyncio.get_running_loop()
        if fetch is not None and not fetch.done() and fetch.get_loop() is loop:
            return fetch
        fetch = self._fetch = loop.create_task(self._download())
        return fetch

    async def _fetched(self, *, force: bool = False) -> None:
        """Wait for the one fetch (starting it unless the first failed within the backoff),
        then raise `VerifierUnavailableError` if there are still no keys."""
        fetch = self._fetch
        running = fetch is not None and not fetch.done()
        if running or force or self._clock() >= self._failed_until:
            # Shielded: a request that gives up (its client left) leaves the fetch to the rest.
            await asyncio.shield(self._start())
        if self._keys is None:
            wait = max(self._failed_until - self._clock(), 0.0)
            raise VerifierUnavailableError(
                f"cannot fetch the JWKS at {self.jwks_url}: {self._failure}; next attempt in "
                f"{wait:.0f} s", retry_after_s=wait or None)

    async def _download(self) -> None:
        """One fetch of the set: the keys kept on success; on failure the keys before go on
        serving for `min_ttl_s`, or, with none, requests get 503 for `failure_backoff_s`.
        Raises nothing: every waiter reads the outcome from the verifier."""
        self.fetches += 1
        try:
            async with asyncio.timeout(self.timeout_s):
                keys, headers = await self._get()
        except Exception as exc:  # the fetch is the boundary: its failure is a 503, not a 500
            reason = (f"no answer within {self.timeout_s} s" if isinstance(exc, TimeoutError)
                      else str(exc) or type(exc).__name__)
            known = (ValueError, TypeError, KeyError, self._jose.errors.JoseError)
            if not isinstance(exc, known) and type(exc).__module__.split(".")[0] != "httpx":
                log.error("fetching the JWKS at %s failed", self.jwks_url, exc_info=exc)
            now = self._clock()
            if self._keys is not None:
                log.warning("cannot refresh the JWKS at %s (%s); keeping the keys it gave "
                            "before", self.jwks_url, reason)
                self._fresh_until = now + self._ttl[1]
            else:
                self._failure = reason
                self._failed_until = now + self.failure_backoff_s
            return
        self._keys = keys
        default, floor, ceiling = self._ttl
        self._fresh_until = self._clock() + cache_seconds(
            headers, time.time(), default=default, floor=floor, ceiling=ceiling)

    async def _get(self) -> tuple[Any, Any]:
        """The usable keys of the set at `jwks_url`, and the response's headers."""
        answer, headers = await fetch_json("GET", self.jwks_url, timeout_s=self.timeout_s,
                                           limit=_MAX_JWKS_BYTES, what="the key set")
        keys = self._jose.jwk.KeySet.import_key_set(answer)
        usable = [k for k in keys.keys if k.key_type in ("RSA", "EC", "OKP")]
        return self._jose.jwk.KeySet(usable), headers


async def fetch_json(method: str, url: str, *, timeout_s: float, limit: int, what: str,
                     **request: Any) -> tuple[Any, Any]:
    """The JSON an authorization server's endpoint answers with 200, and the response's
    headers; read as it streams, refused (`ValueError`) past `limit` bytes, so a huge answer
    is never held whole. No redirect is followed. The caller bounds the whole call's time."""
    import httpx

    async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as http, \
            http.stream(method, url, headers={"accept": "application/json"},
                        **request) as response:
        if response.status_code != 200:
            raise ValueError(f"status {response.status_code}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise ValueError(f"{what} is over {limit // 1024} KiB")
    return json.loads(bytes(body)), response.headers


def _media_type(typ: str) -> str:
    """A `typ` as compared: lower case, without the `application/` it may omit."""
    typ = typ.strip().lower()
    return typ[len("application/"):] if typ.startswith("application/") else typ


def _same_key(a: Any, b: Any) -> bool:
    try:
        return bool(a.thumbprint() == b.thumbprint())
    except Exception:  # a key joserfc cannot thumbprint is not the same as one it can
        return a is b


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
