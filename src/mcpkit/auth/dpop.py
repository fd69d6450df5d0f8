"""DPoP proofs (RFC 9449): making them for the client and checking them for the server.

A DPoP-bound access token is worth nothing without the private key it is bound to: every
request carries a fresh proof, a small JWT signed by that key, naming the HTTP method and URL
it is for, when it was made, and (at a resource server) a hash of the access token. A stolen
token cannot be replayed from elsewhere, and a captured proof is good for one request only.

Both halves live here because they are one set of rules read from two sides:

- `DPoPKey` holds the client's key pair (ES256 by default) and makes proofs, a fresh `jti`
  each time, with the server's nonce and the `ath` of the access token when given;
- `verify_proof` checks a proof the way RFC 9449 section 4.3 lists it -- one JWS, `typ`
  `dpop+jwt`, an asymmetric algorithm from the allow-list, a public `jwk` and a signature
  made by it, `htm` and `htu` matching the request (URLs compared after the normalisation of
  RFC 3986 section 6, without query and fragment), `iat` inside the window, `ath`, the token's
  `cnf.jkt` and the nonce when the caller expects them -- and raises `DPoPError` whose
  `reason` names the one check that failed.

Replay of a `jti` is the caller's to refuse: the resource server records it in its store, which
may be shared by several processes; this module keeps no state. The clock is handed in to
`verify_proof` (`now`), so the rules are tested without waiting.

JOSE is joserfc's (`pip install 'mcpkit[auth]'`), imported when a key is made or a proof read,
never by `import mcpkit`. No token or proof text ever goes into an error message.

Imports: the standard library, `mcpkit.errors` and `mcpkit.protocol.extras`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import warnings
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from mcpkit.errors import DPoPError
from mcpkit.protocol.extras import require

__all__ = [
    "ALGORITHMS",
    "DPoPError",
    "DPoPKey",
    "VerifiedProof",
    "access_token_hash",
    "normalize_htu",
    "replay_key",
    "verify_proof",
]

PROOF_TYPE: Final = "dpop+jwt"

ALGORITHMS: Final[Mapping[str, tuple[str, str | int]]] = {
    "ES256": ("EC", "P-256"),
    "ES384": ("EC", "P-384"),
    "ES512": ("EC", "P-521"),
    "PS256": ("RSA", 2048),
    "PS384": ("RSA", 2048),
    "PS512": ("RSA", 2048),
    "RS256": ("RSA", 2048),
    "RS384": ("RSA", 2048),
    "RS512": ("RSA", 2048),
    "Ed25519": ("OKP", "Ed25519"),
    "EdDSA": ("OKP", "Ed25519"),
}
"""The asymmetric JWS algorithms a proof may use -> the key type and the curve (or RSA size)
`DPoPKey.generate` makes for it. `none` and the HMAC family are absent on purpose: a proof
must be checkable with the public key it carries. `EdDSA` is the name RFC 8037 gave Ed25519
and the one most servers advertise (RFC 9864 deprecates it for the fully specified
`Ed25519`); both are signed and checked with the same key."""

_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
"""JWK members that belong to a private or symmetric key: a proof's `jwk` must hold none."""

_MAX_HEADER_BYTES: Final = 4096
"""The largest encoded proof header read: an RSA-4096 `jwk` with room to spare."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_UNRESERVED: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)


def _joserfc(feature: str) -> tuple[ModuleType, ModuleType]:
    """joserfc's jws and jwk modules, or the one-line MissingExtraError for `feature`."""
    require("joserfc", feature)
    from joserfc import jwk, jws

    return jws, jwk


def _registry(jws: ModuleType, algorithms: Collection[str]) -> Any:
    """A joserfc registry for `algorithms` whose header limit fits an RSA key's `jwk` (the
    library's default of 512 bytes fits only elliptic-curve keys)."""
    registry = jws.JWSRegistry(algorithms=list(algorithms))
    registry.max_header_length = _MAX_HEADER_BYTES
    return registry


@contextmanager
def _eddsa_allowed() -> Iterator[None]:
    """joserfc warns on every `EdDSA` use since RFC 9864; here it is a choice the peer made
    (its advertised list), not a mistake to flag on every request."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="EdDSA is deprecated")
        yield


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def access_token_hash(access_token: str) -> str:
    """The `ath` claim: base64url (no padding) of the SHA-256 of the token's ASCII bytes."""
    return _b64url(hashlib.sha256(access_token.encode("ascii", "strict")).digest())


def replay_key(jkt: str, jti: str) -> str:
    """The single-use record a proof's `jti` is kept under: a digest of the key's thumbprint
    and the `jti`, because the `jti` is the client's text (any length, NUL and lone
    surrogates included) and every store engine must hold the key as it is."""
    material = jkt.encode("ascii", "replace") + b"\0" + jti.encode("utf-8", "surrogatepass")
    return "mcpkit.dpop.jti:" + hashlib.sha256(material).hexdigest()


def _normalize_percent(path: str) -> str:
    """Percent-encoding normalisation (RFC 3986 section 6.2.2.2): hex digits upper case, and
    unreserved characters decoded, so `%7e` and `~` compare equal."""
    out: list[str] = []
    i = 0
    while i < len(path):
        char = path[i]
        if char == "%" and _is_hex(path[i + 1:i + 3]):
            decoded = chr(int(path[i + 1:i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + path[i + 1:i + 3].upper())
            i += 3
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 2 and all(c in "0123456789abcdefABCDEF" for c in text)


def normalize_htu(url: str) -> str:
    """`url` as a proof's `htu` compares it: scheme and host in lower case, the default port
    dropped, an empty path as "/", percent-encoding normalised, query and fragment removed
    (RFC 9449 section 4.3, step 9). Raises ValueError for a URL that is not absolute http(s).
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError("not an absolute http or https URL")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = _normalize_percent(parts.path) or "/"
    return urlunsplit((scheme, netloc, path, "", ""))


@dataclass(frozen=True, slots=True)
class VerifiedProof:
    """What a valid proof established: its `jti` (for the caller's replay check), the RFC 7638
    thumbprint of its key (to compare with the token's `cnf.jkt`), and its `iat`."""

    jti: str
    jkt: str
    iat: int


class DPoPKey:
    """A client's DPoP key pair, and the proofs it signs.

    Keep one per client (or per token set): tokens the AS issues are bound to its thumbprint,
    so a new key means new tokens. `generate` makes one; `from_jwk` takes a stored private JWK.
    """

    __slots__ = ("_key", "alg")

    def __init__(self, key: Any, alg: str) -> None:
        if alg not in ALGORITHMS:
            raise ValueError(f"DPoP algorithm {alg!r} is not one of {', '.join(ALGORITHMS)}")
        kty = ALGORITHMS[alg][0]
        if getattr(key, "key_type", None) != kty or not key.is_private:
            raise ValueError(f"a DPoP key for {alg} must be a private {kty} key")
        self._key = key
        self.alg = alg

    @classmethod
    def generate(cls, alg: str = "ES256") -> DPoPKey:
        """A fresh key pair for `alg` (ES256 unless told)."""
        if alg not in ALGORITHMS:
            raise ValueError(f"DPoP algorithm {alg!r} is not one of {', '.join(ALGORITHMS)}")
        _, jwk = _joserfc("a DPoP key")
        kty, param = ALGORITHMS[alg]
        classes = {"EC": jwk.ECKey, "RSA": jwk.RSAKey, "OKP": jwk.OKPKey}
        return cls(classes[kty].generate_key(param), alg)

    @classmethod
    def from_jwk(cls, data: Mapping[str, Any], alg: str | None = None) -> DPoPKey:
        """A key from its private JWK (as `private_jwk` wrote it); `alg` defaults to the JWK's
        own `alg` member, then to ES256."""
        _, jwk = _joserfc("a DPoP key")
        key = jwk.import_key(dict(data))
        return cls(key, alg or str(data.get("alg") or "ES256"))

    @property
    def public_jwk(self) -> dict[str, Any]:
        """The public half, as the proof's `jwk` header carries it."""
        return dict(self._key.as_dict(private=False))

    def private_jwk(self) -> dict[str, Any]:
        """The whole key with its `alg`, for a store that keeps the key across restarts."""
        return {**self._key.as_dict(private=True), "alg": self.alg}

    def thumbprint(self) -> str:
        """The RFC 7638 SHA-256 thumbprint, base64url: the `jkt` tokens are bound to."""
        return str(self._key.thumbprint())

    def proof(self, htm: str, htu: str, *, nonce: str | None = None,
              access_token: str | None = None, now: float | None = None) -> str:
        """A proof for one request: method `htm`, URL `htu` (query and fragment dropped), a
        fresh `jti`; `nonce` the server's latest DPoP-Nonce, `access_token` for a resource
        request (its hash goes in `ath`)."""
        jws, _ = _joserfc("a DPoP proof")
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": htm.upper(),
            "htu": _strip_query(htu),
            "iat": int(time.time() if now is None else now),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        header = {"typ": PROOF_TYPE, "alg": self.alg, "jwk": self.public_jwk}
        payload = json.dumps(claims, separators=(",", ":"))
        with _eddsa_allowed():
            return str(jws.serialize_compact(header, payload, self._key,
                                           registry=_registry(jws, [self.alg])))

    def __repr__(self) -> str:
        return f"DPoPKey(alg={self.alg!r}, jkt={self.thumbprint()!r})"


def _strip_query(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


def verify_proof(proof: str, *, htm: str, htu: str, now: float,
                 access_token: str | None = None, expected_jkt: str | None = None,
                 nonce: str | None = None, max_age_s: float = 300, leeway_s: float = 5,
                 algorithms: Collection[str] = tuple(ALGORITHMS)) -> VerifiedProof:
    """Check `proof` for a request with method `htm` to URL `htu` at time `now` (seconds).

    `access_token` (at a resource server) requires an `ath` matching it; `expected_jkt` (the
    token's `cnf.jkt`) requires the proof's key to be that one; `nonce` requires the proof to
    carry it. The proof may be at most `max_age_s` old and `leeway_s` in the future. Raises
    `DPoPError` naming the check that failed; replay of `jti` is the caller's to refuse.
    """
    jws, jwk = _joserfc("DPoP proof verification")
    from joserfc.errors import JoseError

    if not isinstance(proof, str) or proof.count(".") != 2 or any(c in proof for c in " ,\t"):
        raise DPoPError("the DPoP header is not a single compact JWS", "malformed")
    try:
        unverified = jws.extract_compact(proof.encode("ascii"),
                                         registry=_registry(jws, ALGORITHMS))
    except (JoseError, ValueError, UnicodeError):
        raise DPoPError("the DPoP proof does not decode as a JWS", "malformed") from None
    header = unverified.headers()
    if header.get("typ") != PROOF_TYPE:
        raise DPoPError(f"the DPoP proof's typ must be {PROOF_TYPE!r}", "typ")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in algorithms or alg not in ALGORITHMS:
        raise DPoPError(f"the DPoP proof's alg {alg!r} is not an accepted asymmetric "
                        "algorithm", "alg")
    public = header.get("jwk")
    if not isinstance(public, dict):
        raise DPoPError("the DPoP proof carries no jwk header", "jwk")
    if _PRIVATE_MEMBERS & public.keys():
        raise DPoPError("the DPoP proof's jwk holds private key material", "jwk")
    if public.get("kty") != ALGORITHMS[alg][0]:
        raise DPoPError(f"the DPoP proof's jwk is not a {ALGORITHMS[alg][0]} key for {alg}",
                        "jwk")
    try:
        key = jwk.import_key(public)
    except Exception:  # any key a client wrote (an unknown curve raises KeyError in joserfc)
        raise DPoPError("the DPoP proof's jwk is not usable", "jwk") from None
    try:
        with _eddsa_allowed():
            verified = jws.deserialize_compact(proof, key, registry=_registry(jws, [alg]))
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        reason = "signature" if type(exc).__name__ == "BadSignatureError" else "jwk"
        what = "signature does not verify" if reason == "signature" else "jwk is not usable"
        raise DPoPError(f"the DPoP proof's {what} with its own key", reason) from None
    try:
        claims = json.loads(verified.payload)
    except ValueError:
        claims = None
    if not isinstance(claims, dict):
        raise DPoPError("the DPoP proof's payload is not a JSON object", "malformed")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti:
        raise DPoPError("the DPoP proof has no jti", "jti")
    if claims.get("htm") != htm.upper():
        raise DPoPError(f"the DPoP proof is not for method {htm.upper()}", "htm")
    _check_htu(claims.get("htu"), htu)
    iat = claims.get("iat")
    if isinstance(iat, bool) or not isinstance(iat, int | float):
        raise DPoPError("the DPoP proof has no numeric iat", "iat")
    if not now - max_age_s - leeway_s <= iat <= now + leeway_s:  # NaN fails too
        raise DPoPError("the DPoP proof's iat is outside the accepted window", "iat")
    if access_token is not None:
        ath = claims.get("ath")
        if not isinstance(ath, str) or not secrets.compare_digest(
                ath, access_token_hash(access_token)):
            raise DPoPError("the DPoP proof's ath does not match the access token", "ath")
    jkt = str(key.thumbprint())
    if expected_jkt is not None and not secrets.compare_digest(jkt, expected_jkt):
        raise DPoPError("the DPoP proof's key is not the one the token is bound to", "jkt")
    if nonce is not None and claims.get("nonce") != nonce:
        raise DPoPError("the DPoP proof lacks the server's current nonce", "nonce")
    return VerifiedProof(jti=jti, jkt=jkt, iat=int(iat))


def _check_htu(claimed: object, htu: str) -> None:
    if not isinstance(claimed, str):
        raise DPoPError("the DPoP proof has no htu", "htu")
    try:
        same = normalize_htu(claimed) == normalize_htu(htu)
    except ValueError:
        same = False
    if not same:
        raise DPoPError("the DPoP proof is for another URL", "htu")
