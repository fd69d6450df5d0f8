"""DPoP proofs (RFC 9449): each check of `verify_proof` refuses for its own reason.

Proofs that break one rule are signed with joserfc and keys made here, so every test changes
exactly one thing of a proof that otherwise passes.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec as ec_curves
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from joserfc import jws
from joserfc.jwk import ECKey, OctKey, RSAKey

from mcpkit.auth.dpop import (
    ALGORITHMS,
    DPoPKey,
    access_token_hash,
    normalize_htu,
    verify_proof,
)
from mcpkit.auth.server_config import DPoPSettings
from mcpkit.errors import AuthError, DPoPError

NOW = 1_800_000_000
URL = "https://mcp.example.com/mcp"
TOKEN = "eyJ.access.token"


def sign(header: dict[str, Any], claims: dict[str, Any], key: Any, alg: str = "ES256") -> str:
    return jws.serialize_compact(header, json.dumps(claims), key, algorithms=[alg])


def good_claims(**changes: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {"jti": "j-1", "htm": "POST", "htu": URL, "iat": NOW}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def reason_of(proof: str, **kwargs: Any) -> str:
    kwargs.setdefault("htm", "POST")
    kwargs.setdefault("htu", URL)
    kwargs.setdefault("now", NOW)
    with pytest.raises(DPoPError) as caught:
        verify_proof(proof, **kwargs)
    assert isinstance(caught.value, AuthError)
    assert TOKEN not in str(caught.value)
    return caught.value.reason


@pytest.fixture
def ec() -> ECKey:
    return ECKey.generate_key("P-256")


def header_for(key: Any, **changes: Any) -> dict[str, Any]:
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.as_dict(private=False)}
    header.update(changes)
    return {k: v for k, v in header.items() if v is not None}


def test_a_proof_made_by_dpop_key_verifies_and_names_its_key() -> None:
    key = DPoPKey.generate()
    proof = key.proof("post", URL + "?q=1#frag", access_token=TOKEN, nonce="n-1", now=NOW)
    verified = verify_proof(proof, htm="POST", htu=URL, now=NOW, access_token=TOKEN,
                            expected_jkt=key.thumbprint(), nonce="n-1")
    assert verified.jkt == key.thumbprint()
    assert verified.iat == NOW
    claims = json.loads(jws.extract_compact(proof.encode()).payload)
    assert claims["htu"] == URL
    assert claims["htm"] == "POST"
    assert claims["ath"] == access_token_hash(TOKEN)
    assert "d" not in jws.extract_compact(proof.encode()).headers()["jwk"]


def test_every_proof_has_a_fresh_jti() -> None:
    key = DPoPKey.generate()
    jtis = {verify_proof(key.proof("GET", URL, now=NOW), htm="GET", htu=URL, now=NOW).jti
            for _ in range(20)}
    assert len(jtis) == 20


@pytest.mark.parametrize("alg", sorted(ALGORITHMS))
def test_every_allowed_algorithm_round_trips(alg: str) -> None:
    key = DPoPKey.generate(alg)
    proof = key.proof("GET", URL, now=NOW)
    assert verify_proof(proof, htm="GET", htu=URL, now=NOW).jkt == key.thumbprint()
    again = DPoPKey.from_jwk(key.private_jwk())
    assert again.thumbprint() == key.thumbprint() and again.alg == alg


def test_every_algorithm_a_resource_server_advertises_is_one_a_proof_may_use() -> None:
    # The challenge lists DPoPSettings.algorithms (EdDSA among them by default): a proof with
    # any of them, made by the client's own key, is accepted.
    for alg in DPoPSettings().algorithms:
        key = DPoPKey.generate(alg)
        proof = key.proof("POST", URL, now=NOW)
        header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
        assert header["alg"] == alg and header["jwk"]["kty"] == ALGORITHMS[alg][0]
        assert verify_proof(proof, htm="POST", htu=URL, now=NOW,
                            algorithms=DPoPSettings().algorithms).jkt == key.thumbprint()


def test_thumbprint_is_rfc7638_over_the_required_members() -> None:
    key = DPoPKey.generate("ES256")
    jwk = key.public_jwk
    canonical = json.dumps({m: jwk[m] for m in ("crv", "kty", "x", "y")},
                           separators=(",", ":"), sort_keys=True)
    expected = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest())
    assert key.thumbprint() == expected.rstrip(b"=").decode()


def test_ath_is_base64url_sha256_of_the_token() -> None:
    # RFC 9449 section 7.1's example token and its ath.
    token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    assert access_token_hash(token) == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


def test_wrong_typ(ec: ECKey) -> None:
    assert reason_of(sign(header_for(ec, typ="JWT"), good_claims(), ec)) == "typ"
    assert reason_of(sign(header_for(ec, typ=None), good_claims(), ec)) == "typ"


def test_symmetric_and_unknown_algorithms_are_refused() -> None:
    secret = OctKey.generate_key(256)
    proof = sign({"typ": "dpop+jwt", "alg": "HS256", "jwk": {"kty": "oct"}}, good_claims(),
                 secret, alg="HS256")
    assert reason_of(proof) == "alg"


def test_alg_none_is_refused(ec: ECKey) -> None:
    header = base64.urlsafe_b64encode(json.dumps(header_for(ec, alg="none")).encode())
    body = base64.urlsafe_b64encode(json.dumps(good_claims()).encode())
    proof = f"{header.rstrip(b'=').decode()}.{body.rstrip(b'=').decode()}."
    assert reason_of(proof) == "alg"


def test_alg_outside_the_callers_allow_list(ec: ECKey) -> None:
    proof = sign(header_for(ec), good_claims(), ec)
    assert reason_of(proof, algorithms=("RS256",)) == "alg"


def test_missing_or_private_jwk(ec: ECKey) -> None:
    assert reason_of(sign(header_for(ec, jwk=None), good_claims(), ec)) == "jwk"
    private = header_for(ec, jwk=ec.as_dict(private=True))
    assert reason_of(sign(private, good_claims(), ec)) == "jwk"


def test_jwk_of_another_type_than_the_algorithm(ec: ECKey) -> None:
    rsa = RSAKey.generate_key(2048)
    assert reason_of(sign(header_for(ec, jwk=rsa.as_dict(private=False)), good_claims(), ec)) \
        == "jwk"


def test_signature_by_another_key(ec: ECKey) -> None:
    other = ECKey.generate_key("P-256")
    assert reason_of(sign(header_for(other), good_claims(), ec)) == "signature"


def test_tampered_payload(ec: ECKey) -> None:
    head, _, sig = sign(header_for(ec), good_claims(), ec).split(".")
    body = base64.urlsafe_b64encode(json.dumps(good_claims(htm="GET")).encode())
    assert reason_of(f"{head}.{body.rstrip(b'=').decode()}.{sig}", htm="GET") == "signature"


@pytest.mark.parametrize("proof", ["", "abc", "a.b", "a.b.c.d", "x.y.z", "a.b.c, d.e.f"])
def test_not_a_compact_jws(proof: str) -> None:
    assert reason_of(proof) == "malformed"


def test_payload_not_an_object(ec: ECKey) -> None:
    proof = jws.serialize_compact(header_for(ec), b"[1]", ec, algorithms=["ES256"])
    assert reason_of(proof) == "malformed"


def test_missing_jti(ec: ECKey) -> None:
    assert reason_of(sign(header_for(ec), good_claims(jti=None), ec)) == "jti"
    assert reason_of(sign(header_for(ec), good_claims(jti=""), ec)) == "jti"


def test_method_mismatch(ec: ECKey) -> None:
    proof = sign(header_for(ec), good_claims(), ec)
    assert reason_of(proof, htm="GET") == "htm"
    assert reason_of(sign(header_for(ec), good_claims(htm=None), ec)) == "htm"


@pytest.mark.parametrize("other", [
    "https://mcp.example.com/other",
    "https://evil.example.com/mcp",
    "http://mcp.example.com/mcp",
    "https://mcp.example.com:8443/mcp",
])
def test_url_mismatch(ec: ECKey, other: str) -> None:
    assert reason_of(sign(header_for(ec), good_claims(), ec), htu=other) == "htu"


def test_missing_htu(ec: ECKey) -> None:
    assert reason_of(sign(header_for(ec), good_claims(htu=None), ec)) == "htu"
    assert reason_of(sign(header_for(ec), good_claims(htu="not a url"), ec)) == "htu"


@pytest.mark.parametrize("claimed", [
    "HTTPS://MCP.Example.COM/mcp",
    "https://mcp.example.com:443/mcp",
    "https://mcp.example.com/mcp?x=1",
    "https://mcp.example.com/mcp#f",
    "https://mcp.example.com/%6dcp",
])
def test_url_compared_after_normalisation(ec: ECKey, claimed: str) -> None:
    proof = sign(header_for(ec), good_claims(htu=claimed), ec)
    assert verify_proof(proof, htm="POST", htu=URL, now=NOW).jti == "j-1"


def test_normalize_htu() -> None:
    assert normalize_htu("HTTP://Host:80") == "http://host/"
    assert normalize_htu("https://h/a%2fb%7E") == "https://h/a%2Fb~"
    assert normalize_htu("http://[::1]:8080/x?y") == "http://[::1]:8080/x"
    with pytest.raises(ValueError):
        normalize_htu("ftp://h/x")


@pytest.mark.parametrize("iat", [NOW + 6, NOW - 306, "soon", None, True])
def test_iat_outside_the_window(ec: ECKey, iat: object) -> None:
    assert reason_of(sign(header_for(ec), good_claims(iat=iat), ec)) == "iat"


@pytest.mark.parametrize("iat", [NOW + 5, NOW - 305, NOW])
def test_iat_inside_the_window_with_leeway(ec: ECKey, iat: int) -> None:
    assert verify_proof(sign(header_for(ec), good_claims(iat=iat), ec),
                        htm="POST", htu=URL, now=NOW).iat == iat


def test_ath_required_and_matched_for_a_resource_request(ec: ECKey) -> None:
    assert reason_of(sign(header_for(ec), good_claims(), ec), access_token=TOKEN) == "ath"
    other = good_claims(ath=access_token_hash("another-token"))
    assert reason_of(sign(header_for(ec), other, ec), access_token=TOKEN) == "ath"
    right = good_claims(ath=access_token_hash(TOKEN))
    assert verify_proof(sign(header_for(ec), right, ec), htm="POST", htu=URL, now=NOW,
                        access_token=TOKEN).jti == "j-1"


def test_key_not_the_one_the_token_is_bound_to(ec: ECKey) -> None:
    other = DPoPKey.generate()
    proof = sign(header_for(ec), good_claims(), ec)
    assert reason_of(proof, expected_jkt=other.thumbprint()) == "jkt"
    assert verify_proof(proof, htm="POST", htu=URL, now=NOW,
                        expected_jkt=ec.thumbprint()).jkt == ec.thumbprint()


def test_nonce_required_gives_use_dpop_nonce(ec: ECKey) -> None:
    with pytest.raises(DPoPError) as caught:
        verify_proof(sign(header_for(ec), good_claims(), ec), htm="POST", htu=URL, now=NOW,
                     nonce="server-nonce")
    assert caught.value.reason == "nonce" and caught.value.error == "use_dpop_nonce"
    stale = sign(header_for(ec), good_claims(nonce="old"), ec)
    assert reason_of(stale, nonce="server-nonce") == "nonce"


def test_other_failures_are_invalid_dpop_proof(ec: ECKey) -> None:
    with pytest.raises(DPoPError) as caught:
        verify_proof(sign(header_for(ec), good_claims(), ec), htm="GET", htu=URL, now=NOW)
    assert caught.value.error == "invalid_dpop_proof"


def test_dpop_key_refuses_a_bad_algorithm_or_a_public_key() -> None:
    with pytest.raises(ValueError, match="HS256"):
        DPoPKey.generate("HS256")
    with pytest.raises(ValueError, match="private"):
        DPoPKey.from_jwk(DPoPKey.generate().public_jwk)


def test_repr_shows_no_private_material() -> None:
    key = DPoPKey.generate()
    assert key.private_jwk()["d"] not in repr(key)


# -- checked with the primitives alone ---------------------------------------------------------
# mcpkit signs and verifies with joserfc, and so do the tests above. These take joserfc out: a
# proof is assembled and checked here from RFC 7515's compact form and RFC 7518's algorithms over
# `cryptography`'s primitives, and the thumbprint is RFC 7638's SHA-256 over the required members.

_REQUIRED = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
_CURVES = {"P-256": (ec_curves.SECP256R1, 32), "P-384": (ec_curves.SECP384R1, 48),
           "P-521": (ec_curves.SECP521R1, 66)}
_HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def rfc7638(jwk: dict[str, Any]) -> str:
    canonical = json.dumps({m: jwk[m] for m in _REQUIRED[jwk["kty"]]}, separators=(",", ":"),
                           sort_keys=True)
    return b64(hashlib.sha256(canonical.encode()).digest())


def _int(text: str) -> int:
    return int.from_bytes(unb64(text), "big")


def _public(jwk: dict[str, Any]) -> Any:
    if jwk["kty"] == "EC":
        curve = _CURVES[jwk["crv"]][0]()
        return ec_curves.EllipticCurvePublicNumbers(_int(jwk["x"]), _int(jwk["y"]),
                                                    curve).public_key()
    if jwk["kty"] == "RSA":
        return rsa.RSAPublicNumbers(_int(jwk["e"]), _int(jwk["n"])).public_key()
    return ed25519.Ed25519PublicKey.from_public_bytes(unb64(jwk["x"]))


def _rsa_padding(alg: str, digest: Any) -> Any:
    if alg.startswith("PS"):
        return padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size)
    return padding.PKCS1v15()


def verify_by_hand(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of a compact JWS whose signature checks with its own `jwk`."""
    head, body, signature = proof.split(".")
    header = json.loads(unb64(head))
    key, alg, signed, raw = _public(header["jwk"]), header["alg"], f"{head}.{body}".encode(), unb64(
        signature)
    if header["jwk"]["kty"] == "OKP":  # Ed25519 and EdDSA: the key says which curve
        key.verify(raw, signed)
    elif alg.startswith("ES"):
        size = _CURVES[header["jwk"]["crv"]][1]
        der = encode_dss_signature(int.from_bytes(raw[:size], "big"),
                                   int.from_bytes(raw[size:], "big"))
        key.verify(der, signed, ec_curves.ECDSA(_HASHES[alg[2:]]()))
    else:
        digest = _HASHES[alg[2:]]()
        key.verify(raw, signed, _rsa_padding(alg, digest), digest)
    return header, json.loads(unb64(body))


def sign_by_hand(alg: str, claims: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A proof for `claims` with a fresh key, and the key's public JWK."""
    kty, size = ALGORITHMS[alg]
    if kty == "EC":
        private: Any = ec_curves.generate_private_key(_CURVES[str(size)][0]())
        numbers = private.public_key().public_numbers()
        width = _CURVES[str(size)][1]
        jwk = {"kty": "EC", "crv": size, "x": b64(numbers.x.to_bytes(width, "big")),
               "y": b64(numbers.y.to_bytes(width, "big"))}
    elif kty == "RSA":
        private = rsa.generate_private_key(public_exponent=65537, key_size=int(size))
        numbers = private.public_key().public_numbers()
        jwk = {"kty": "RSA", "n": b64(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
               "e": b64(numbers.e.to_bytes(3, "big"))}
    else:
        private = ed25519.Ed25519PrivateKey.generate()
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64(private.public_key().public_bytes_raw())}
    head = b64(json.dumps({"typ": "dpop+jwt", "alg": alg, "jwk": jwk}).encode())
    body = b64(json.dumps(claims).encode())
    signed = f"{head}.{body}".encode()
    if kty == "OKP":
        raw = private.sign(signed)
    elif kty == "EC":
        r, s_ = decode_dss_signature(private.sign(signed, ec_curves.ECDSA(_HASHES[alg[2:]]())))
        width = _CURVES[str(size)][1]
        raw = r.to_bytes(width, "big") + s_.to_bytes(width, "big")
    else:
        digest = _HASHES[alg[2:]]()
        raw = private.sign(signed, _rsa_padding(alg, digest), digest)
    return f"{head}.{body}.{b64(raw)}", jwk


def test_the_thumbprint_is_rfc7638s_own_example() -> None:
    # RFC 7638 section 3.1: this RSA key's thumbprint is NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs.
    n = ("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_"
         "BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_"
         "FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI"
         "4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
    assert rfc7638({"kty": "RSA", "n": n, "e": "AQAB"}) == (
        "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")


@pytest.mark.parametrize("alg", sorted(ALGORITHMS))
def test_our_proofs_verify_from_the_rfcs_alone(alg: str) -> None:
    key = DPoPKey.generate(alg)
    header, claims = verify_by_hand(key.proof("POST", URL, access_token=TOKEN, now=NOW))
    assert header["typ"] == "dpop+jwt" and header["alg"] == alg
    assert claims["htm"] == "POST" and claims["htu"] == URL and claims["iat"] == NOW
    assert claims["ath"] == b64(hashlib.sha256(TOKEN.encode()).digest())
    assert key.thumbprint() == rfc7638(header["jwk"])


@pytest.mark.parametrize("alg", sorted(ALGORITHMS))
def test_proofs_signed_from_the_rfcs_alone_are_verified(alg: str) -> None:
    proof, jwk = sign_by_hand(alg, good_claims())
    assert verify_proof(proof, htm="POST", htu=URL, now=NOW).jkt == rfc7638(jwk)
