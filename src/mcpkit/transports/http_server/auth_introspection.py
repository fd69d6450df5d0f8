"""`IntrospectionVerifier`: opaque (or any) access tokens checked by the authorization server's
RFC 7662 introspection endpoint.

Each token is posted to the endpoint with this resource's own client credentials (HTTP Basic,
RFC 7662 §2.1), the call bounded as a whole by `timeout_s` (an endpoint answering byte by byte
is cut off there too) and its answer to 64 KiB; an answer with `active: true` gives the claims,
which the HTTP app then holds to the issuers, the audience and the clock like any verifier's.
Answers are cached, bounded twice:
at most `max_entries` tokens (the oldest dropped first), each at most `cache_ttl_s` and never
past the token's own `exp`, so a revoked token stops working within `cache_ttl_s`. A token found
inactive is cached for a short while too, so a client retrying a bad token does not cost a call
each time. The cache is keyed by the token's SHA-256, so it holds no token.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final

from mcpkit.auth.server_claims import MAX_NUMERIC_DATE
from mcpkit.auth.server_config import Principal
from mcpkit.errors import InvalidTokenError, VerifierUnavailableError
from mcpkit.transports.http_server.auth_jwt import fetch_json, principal_of

__all__ = ["IntrospectionVerifier"]

log = logging.getLogger("mcpkit.auth")

_INACTIVE_TTL_S: Final = 10.0
_MAX_ANSWER_BYTES: Final = 64 * 1024


class IntrospectionVerifier:
    """Checks tokens at `url` (RFC 7662) as the client `client_id`/`client_secret`."""

    def __init__(
        self,
        url: str,
        client_id: str,
        client_secret: str,
        *,
        issuer: str | None = None,
        cache_ttl_s: float = 60.0,
        max_entries: int = 10_000,
        timeout_s: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not url.startswith(("https://", "http://")):
            raise ValueError(f"IntrospectionVerifier: url {url!r} must be an http(s) URL")
        if not client_id or not client_secret:
            raise ValueError("IntrospectionVerifier: the endpoint needs this resource's own "
                             "client_id and client_secret")
        if not cache_ttl_s >= 0 or type(max_entries) is not int or max_entries < 0:
            raise ValueError("IntrospectionVerifier: cache_ttl_s must be >= 0 and max_entries "
                             "an integer >= 0")
        self.url = url
        self.issuer = issuer
        """Put in the claims as `iss` when the endpoint's answer names none."""
        self._auth = (client_id, client_secret)
        self.cache_ttl_s = cache_ttl_s
        self.max_entries = max_entries
        self.timeout_s = timeout_s
        self._clock = clock
        self._cache: OrderedDict[bytes, tuple[float, dict[str, Any] | None]] = OrderedDict()
        self.calls = 0
        """How many times the endpoint was asked (for tests and metrics)."""

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.url!r}, {self._auth[0]!r}, client_secret=...)"

    async def verify(self, token: str) -> Principal:
        digest = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            claims = cached[1]
        else:
            claims = await self._introspect(token)
            self._remember(digest, claims, now)
        if claims is None:
            raise InvalidTokenError("the token is not active (revoked, expired or unknown)")
        return principal_of(claims)

    async def _introspect(self, token: str) -> dict[str, Any] | None:
        import httpx

        self.calls += 1
        try:
            async with asyncio.timeout(self.timeout_s):  # the whole call, however it trickles
                answer = await self._ask(token)
            if not isinstance(answer, dict) or type(answer.get("active")) is not bool:
                raise ValueError("the answer is no object with a boolean 'active'")
        except TimeoutError:
            raise VerifierUnavailableError(
                f"cannot introspect at {self.url}: no answer within {self.timeout_s} s"
            ) from None
        except (httpx.HTTPError, ValueError) as exc:
            raise VerifierUnavailableError(
                f"cannot introspect at {self.url}: {exc}") from None
        if not answer["active"]:
            return None
        if "iss" not in answer and self.issuer is not None:
            answer["iss"] = self.issuer
        return answer

    async def _ask(self, token: str) -> Any:
        """The endpoint's answer to `token`, read to at most 64 KiB."""
        answer, _ = await fetch_json(
            "POST", self.url, timeout_s=self.timeout_s, limit=_MAX_ANSWER_BYTES,
            what="the answer", auth=self._auth,
            data={"token": token, "token_type_hint": "access_token"})
        return answer

    def _remember(self, digest: bytes, claims: dict[str, Any] | None, now: float) -> None:
        if self.max_entries == 0 or self.cache_ttl_s == 0:
            return
        until = now + (self.cache_ttl_s if claims is not None else
                       min(self.cache_ttl_s, _INACTIVE_TTL_S))
        exp: Any = claims.get("exp") if claims is not None else None
        if type(exp) in (int, float) and 0 <= exp <= MAX_NUMERIC_DATE:  # not NaN, nor 1e400
            until = min(until, float(exp))
        self._cache[digest] = (until, claims)
        self._cache.move_to_end(digest)
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
