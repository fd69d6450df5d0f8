"""The tokens the authorization proxy issues, without I/O: JWT access tokens (RFC 9068)
signed ES256 by joserfc, the keys that sign them, and the PKCE check of a code's verifier.

An access token is for one resource (`aud`, RFC 8707) and names the grant it came from
(`gid`), so revoking the grant (RFC 7009, or a refresh token used twice) ends every access
token of it. It carries who signed in (`sub` and the claims `ClaimMap` kept: `email`, `name`,
`groups`), the client (`client_id`) and the scopes (`scope`), never anything of the upstream's
tokens. Refresh tokens and codes are random strings the proxy keeps only as digests.

The signing key is one EC P-256 key per key of the server's state key ring, derived from it
(`KeyRing.derived`), so every replica sharing the ring (configured, or kept in the shared
store) signs and verifies with the same keys, and a rotation of the ring rotates them: the
first ring key's signs, all of them verify. A configured PEM key replaces the derived ones.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import InvalidTokenError
from mcpkit.protocol.extras import require

__all__ = [
    "ACCESS_TOKEN_TYP",
    "SigningKeys",
    "digest",
    "issue_access_token",
    "pkce_challenge",
    "pkce_matches",
    "read_access_token",
]

ACCESS_TOKEN_TYP: Final = "at+jwt"
ALG: Final = "ES256"
_P256_ORDER: Final = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
SIGNING_PURPOSE: Final = b"mcpkit authorization proxy signing key"


def digest(secret: str) -> str:
    """How a code or refresh token is kept and looked up: its SHA-256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def pkce_challenge(verifier: str) -> str:
    """The S256 challenge of `verifier` (RFC 7636 §4.2)."""
    made = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest())
    return made.rstrip(b"=").decode("ascii")


def pkce_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 §4.6: S256 of a verifier of 43-128 unreserved characters equals the
    challenge (compared in constant time)."""
    if not 43 <= len(verifier) <= 128 or not all(
            c.isascii() and (c.isalnum() or c in "-._~") for c in verifier):
        return False
    return hmac.compare_digest(pkce_challenge(verifier), challenge)


@dataclass(frozen=True)
class SigningKeys:
    """The keys that sign (the first) and verify (all) the proxy's access tokens."""

    keys: tuple[Any, ...]
    """joserfc `ECKey`s, private."""

    @classmethod
    def derived(cls, secrets: Iterable[bytes]) -> SigningKeys:
        """One P-256 key per 32-byte secret (the ring's derived secrets, first first)."""
        require("joserfc", "the authorization proxy's tokens")
        from cryptography.hazmat.primitives.asymmetric import ec
        from joserfc.jwk import ECKey

        keys = []
        for secret in secrets:
            scalar = int.from_bytes(hashlib.sha512(secret).digest(), "big") % (_P256_ORDER - 1)
            private = ec.derive_private_key(scalar + 1, ec.SECP256R1())
            keys.append(ECKey.import_key(private, {"use": "sig", "alg": ALG}))
        if not keys:
            raise ValueError("the authorization proxy needs at least one signing key")
        return cls(tuple(_with_kid(k) for k in keys))

    @classmethod
    def from_pem(cls, pem: str) -> SigningKeys:
        require("joserfc", "the authorization proxy's tokens")
        from joserfc.jwk import ECKey

        try:
            key = ECKey.import_key(pem, {"use": "sig", "alg": ALG})
        except Exception as exc:  # joserfc raises several kinds for a key it cannot read
            raise ValueError(f"AuthProxy.signing_key is no EC private key in PEM ({exc})") \
                from None
        if key.curve_name != "P-256" or not key.is_private:
            raise ValueError("AuthProxy.signing_key must be an EC P-256 private key (ES256)")
        return cls((_with_kid(key),))

    def jwks(self) -> dict[str, Any]:
        """The public keys, as the proxy's `jwks_uri` serves them."""
        return {"keys": [k.as_dict(private=False) for k in self.keys]}

    def by_kid(self, kid: object) -> Any:
        return next((k for k in self.keys if k.kid == kid), None)


def _with_kid(key: Any) -> Any:
    from joserfc.jwk import ECKey

    data = key.as_dict(private=True)
    data["kid"] = key.thumbprint()
    return ECKey.import_key(data)


def issue_access_token(keys: SigningKeys, *, issuer: str, audience: str, subject: str,
                       client_id: str, scopes: Iterable[str], grant: str, jti: str,
                       now: float, ttl_s: float, identity: Mapping[str, Any]) -> str:
    """A signed RFC 9068 access token."""
    from joserfc import jwt

    claims: dict[str, Any] = {
        **{k: v for k, v in identity.items() if k in ("email", "name", "groups")},
        "iss": issuer, "sub": subject, "aud": audience, "client_id": client_id,
        "scope": " ".join(scopes), "gid": grant, "jti": jti,
        "iat": int(now), "nbf": int(now), "exp": int(now + ttl_s),
    }
    key = keys.keys[0]
    return jwt.encode({"alg": ALG, "typ": ACCESS_TOKEN_TYP, "kid": key.kid}, claims, key,
                      algorithms=[ALG])


def read_access_token(keys: SigningKeys, token: str) -> dict[str, Any]:
    """The claims of an access token this proxy signed (signature and type checked; issuer,
    audience and time are the resource server's checks); `InvalidTokenError` otherwise."""
    from joserfc import jws, jwt
    from joserfc.errors import JoseError

    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, UnicodeError):
        raise InvalidTokenError("the token is not a JWT") from None
    if header.get("typ") != ACCESS_TOKEN_TYP or header.get("alg") != ALG:
        raise InvalidTokenError("the token is no access token of this server (typ, alg)")
    key = keys.by_kid(header.get("kid"))
    if key is None:
        raise InvalidTokenError("the token is signed by a key this server does not have")
    try:
        claims = jwt.decode(token, key, algorithms=[ALG]).claims
    except (JoseError, ValueError, TypeError):
        raise InvalidTokenError("the token's signature does not verify") from None
    if not isinstance(claims, dict) or type(claims.get("gid")) is not str:
        raise InvalidTokenError("the token names no grant")
    return claims
