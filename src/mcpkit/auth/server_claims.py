"""The checks every access token's claims pass, whichever verifier read them, without I/O.

A JWT's signature or an introspection answer only says who issued the claims; whether this
server may act on them is decided here (OAuth 2.1 §5.2, RFC 9068 §4, AUTH-7): `iss` is one of
the configured issuers, compared exactly; `aud` names this resource (RFC 8707: a token for
another server is refused, the confused-deputy guard, on by default); `exp` is in the future,
`nbf` and `iat` not, each within a small leeway for clocks that drift. A time must be a
finite number of seconds between 1970 and the end of 9999 (`MAX_NUMERIC_DATE`): NaN, which no
comparison refuses, an infinity, or a number too large for a float would otherwise make a token
that never expires. The time is passed in. Each refusal is an `InvalidTokenError` whose message
names the claim, never the token.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any, Final

from mcpkit.auth.server_scopes import parse_scope
from mcpkit.errors import InvalidTokenError

__all__ = [
    "MAX_NUMERIC_DATE",
    "check_claims",
    "claims_scopes",
    "token_jkt",
]

MAX_NUMERIC_DATE: Final = 253_402_300_799
"""9999-12-31T23:59:59Z: the latest time a token's `exp`, `nbf` or `iat` may name."""


def check_claims(
    claims: Mapping[str, Any],
    *,
    issuers: Collection[str],
    audience: str | None,
    now: float,
    leeway_s: float,
    require_exp: bool = True,
) -> None:
    """Refuse `claims` unless they were issued by one of `issuers` for `audience` (None: the
    audience check is off, which the configuration must ask for by name) and are valid at
    `now`."""
    iss = claims.get("iss")
    if type(iss) is not str or iss not in issuers:
        raise InvalidTokenError("the token was not issued by an authorization server this "
                                "resource trusts (iss)")
    if audience is not None:
        aud = claims.get("aud")
        audiences = [aud] if type(aud) is str else aud if type(aud) is list else []
        if audience not in audiences and audience + "/" not in audiences:
            raise InvalidTokenError("the token is not intended for this resource (aud)")
    exp = _time(claims, "exp")
    if exp is None:
        if require_exp:
            raise InvalidTokenError("the token has no expiry (exp)")
    elif exp + leeway_s <= now:
        raise InvalidTokenError("the token has expired (exp)")
    nbf = _time(claims, "nbf")
    if nbf is not None and nbf - leeway_s > now:
        raise InvalidTokenError("the token is not valid yet (nbf)")
    iat = _time(claims, "iat")
    if iat is not None and iat - leeway_s > now:
        raise InvalidTokenError("the token was issued in the future (iat)")


def claims_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes the claims grant (`scope`, else `scp`)."""
    value = claims.get("scope")
    return parse_scope(value if value is not None else claims.get("scp"))


def token_jkt(claims: Mapping[str, Any]) -> str | None:
    """The thumbprint of the key a DPoP-bound token is bound to (`cnf.jkt`, RFC 9449 §6), or
    None for a bearer token. A `cnf` that names no usable thumbprint is refused: the token
    claims a binding this server cannot check."""
    cnf = claims.get("cnf")
    if cnf is None:
        return None
    jkt = cnf.get("jkt") if type(cnf) is dict else None
    if type(jkt) is not str or not jkt:
        raise InvalidTokenError("the token's confirmation (cnf) names no DPoP key thumbprint")
    return jkt


def _time(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if type(value) not in (int, float):
        raise InvalidTokenError(f"the token's {name} is not a number of seconds")
    if not (type(value) is int or math.isfinite(value)) or not 0 <= value <= MAX_NUMERIC_DATE:
        raise InvalidTokenError(f"the token's {name} is not a time: a finite number of seconds "
                                "from 1970 to 9999")
    return float(value)
