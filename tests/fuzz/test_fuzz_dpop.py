"""DPoP proofs (RFC 9449) as a client may send them, through the server's `verify_proof`.

The expected answers come from outside the code under test: the RFC's own example proofs
(Figure 2, a token request; Figure 13, a resource request with `ath`), their `jti` and the
thumbprint RFC 9449 §6.1 gives for their key; proofs signed here by joserfc directly (not by
`DPoPKey`), with claims drawn from what RFC 9449 §4.3 says a server must check, each labelled
with the verdict the RFC gives; and, for a changed proof, base64 itself: a change that leaves
the bytes a part encodes the same may verify, any other never does. Whatever comes, the only
exception is `DPoPError`, whose `reason` names the check.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from joserfc import jwk, jws
from token_mutations import MUTATIONS, mutate

from mcpkit.auth.dpop import verify_proof
from mcpkit.errors import DPoPError

# RFC 9449 §4.1 Figure 2 and §7.1 Figure 13 (one key, whose thumbprint §6.1 gives).
FIGURE_2 = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0"
    "VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10"
    "NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoi"
    "UE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ.2-"
    "GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg")
FIGURE_13 = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0"
    "VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10"
    "NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIjoi"
    "R0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0ZWRyZXNvdXJjZSIsImlhdCI6M"
    "TU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNFc05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9.2oW9RP"
    "35yRqzhrtNP86L-Ey71EOptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA")
RFC_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
RFC_ACCESS_TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
VECTORS = {
    "figure 2": (FIGURE_2, {"htm": "POST", "htu": "https://server.example.com/token",
                            "now": 1562262616}, "-BwC3ESc6acc2lTc"),
    "figure 13": (FIGURE_13, {"htm": "GET", "htu": "https://resource.example.org/protectedresource",
                              "now": 1562262618, "access_token": RFC_ACCESS_TOKEN,
                              "expected_jkt": RFC_JKT}, "e1j3V_bKic8-LAEB"),
}
REASONS = {"typ", "alg", "jwk", "signature", "htm", "htu", "iat", "jti", "ath", "jkt", "nonce",
           "malformed"}

NOW = 1_800_000_000
URL = "https://mcp.example.com/mcp"
TOKEN = "an-access-token"
KEY = jwk.ECKey.generate_key("P-256")
OTHER_KEY = jwk.ECKey.generate_key("P-256")


def _refused(proof: Any, **check: Any) -> str:
    try:
        verified = verify_proof(proof, **check)
    except DPoPError as exc:
        assert exc.reason in REASONS, exc.reason
        assert exc.error in ("invalid_dpop_proof", "use_dpop_nonce")
        return exc.reason
    raise AssertionError(f"verified: {verified!r}")


def test_the_rfc_examples_verify_with_their_jti_and_the_thumbprint_of_their_key() -> None:
    for proof, check, jti in VECTORS.values():
        verified = verify_proof(proof, **check)
        assert (verified.jti, verified.jkt) == (jti, RFC_JKT)


def test_the_rfc_examples_are_refused_for_another_request() -> None:
    proof, check, _ = VECTORS["figure 13"]
    assert _refused(proof, **{**check, "htm": "POST"}) == "htm"
    assert _refused(proof, **{**check, "htu": "https://resource.example.org/other"}) == "htu"
    assert _refused(proof, **{**check, "access_token": "another"}) == "ath"
    assert _refused(proof, **{**check, "now": check["now"] + 3600}) == "iat"
    assert _refused(proof, **{**check, "nonce": "n"}) == "nonce"


def _decoded(part: str) -> bytes | None:
    """What a base64url part encodes, read by the standard library (None: not base64url)."""
    if not part or any(c not in _ALPHABET for c in part) or len(part) % 4 == 1:
        return None
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@given(st.sampled_from(sorted(VECTORS)), st.integers(0, 2), MUTATIONS)
@example("figure 2", 2, ("spelling", "last", 0))
@example("figure 13", 1, ("flip", 40, 3))
@example("figure 13", 0, ("spelling", "pad", 0))
@example("figure 13", 0, ("flip", 2137, 0))  # the jwk's crv becomes "Q-256"
def test_a_changed_rfc_proof_verifies_only_if_its_parts_encode_the_same_bytes(
        which: str, part: int, mutation: tuple[str, Any, Any]) -> None:
    proof, check, jti = VECTORS[which]
    parts = proof.split(".")
    changed = parts[:]
    changed[part] = mutate(parts[part], mutation)
    text = ".".join(changed)
    if _decoded(changed[part]) == _decoded(parts[part]):
        try:
            assert verify_proof(text, **check).jti == jti
        except DPoPError:
            pass  # another spelling of the same bytes may be refused as well
        return
    _refused(text, **check)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _signed(claims: str, *, header: dict[str, Any] | None = None, key: Any = KEY) -> str:
    """A proof signed by joserfc with `claims` written exactly as given (any JSON)."""
    head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": KEY.as_dict(private=False),
            **(header or {})}
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 4096
    return str(jws.serialize_compact(head, claims, key, registry=registry))


def _forged(header: dict[str, Any], claims: str) -> str:
    """A proof with `header` as written and a signature that is 64 bytes of nothing: for the
    header rules, checked before any signature is."""
    head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": KEY.as_dict(private=False), **header}
    return ".".join((_b64(json.dumps(head).encode()), _b64(claims.encode()), _b64(bytes(64))))


ATH = _b64(hashlib.sha256(TOKEN.encode()).digest())
WRONG_ATH = ATH[:-1] + ("B" if ATH.endswith("A") else "A")

# Each value with the verdict RFC 9449 §4.3 gives it (True: this claim passes).
HTM = st.sampled_from([('"POST"', True), ('"post"', False), ('"GET"', False), ('""', False),
                       ("1", False), ("null", False), ('["POST"]', False)])
HTU = st.sampled_from([
    (f'"{URL}"', True),
    ('"HTTPS://MCP.Example.COM/mcp"', True),        # scheme and host are case-insensitive
    ('"https://mcp.example.com:443/mcp"', True),    # the default port
    ('"https://mcp.example.com/mcp?x=1"', True),    # query and fragment are not compared
    ('"https://mcp.example.com/mcp#part"', True),
    ('"https://mcp.example.com/%6Dcp"', True),      # an unreserved character percent-encoded
    ('"https://mcp.example.com/MCP"', False),       # the path is case-sensitive
    ('"http://mcp.example.com/mcp"', False),
    ('"https://mcp.example.com:8443/mcp"', False),
    ('"https://mcp.example.com/mcp/"', False),
    ('"https://evil.example/mcp"', False),
    ('"/mcp"', False), ('""', False), ("42", False), ("null", False),
])
IAT = st.one_of(
    st.integers(NOW - 300 - 5, NOW + 5).map(lambda t: (str(t), True)),
    st.sampled_from([(str(NOW - 306), False), (str(NOW + 6), False), ("NaN", False),
                     ("Infinity", False), ("-Infinity", False), ("1e400", False),
                     ("1" + "0" * 400, False), (f'"{NOW}"', False), ("true", False),
                     ("null", False), (f"{NOW}.5", True)]),
)
JTI = st.sampled_from([('"j-1"', True), ('""', False), ("7", False), ("null", False),
                       ('{"a":1}', False)])
ATHS = st.sampled_from([(f'"{ATH}"', True), (f'"{WRONG_ATH}"', False), ('""', False),
                        ("null", False), (None, False)])


@given(HTM, HTU, IAT, JTI, ATHS)
@example(('"POST"', True), (f'"{URL}"', True), ("NaN", False), ('"j-1"', True),
         (f'"{ATH}"', True))
@example(('"POST"', True), (f'"{URL}"', True), ("1e400", False), ('"j-1"', True),
         (f'"{ATH}"', True))
def test_a_proof_signed_by_joserfc_verifies_exactly_when_every_claim_passes(
        htm: tuple[str, bool], htu: tuple[str, bool], iat: tuple[str, bool],
        jti: tuple[str, bool], ath: tuple[str | None, bool]) -> None:
    members = [f'"htm":{htm[0]}', f'"htu":{htu[0]}', f'"iat":{iat[0]}', f'"jti":{jti[0]}']
    if ath[0] is not None:
        members.append(f'"ath":{ath[0]}')
    proof = _signed("{" + ",".join(members) + "}")
    check = {"htm": "POST", "htu": URL, "now": NOW, "access_token": TOKEN,
             "expected_jkt": KEY.thumbprint()}
    if htm[1] and htu[1] and iat[1] and jti[1] and ath[1]:
        assert verify_proof(proof, **check).jti == "j-1"
    else:
        _refused(proof, **check)


GOOD = json.dumps({"htm": "POST", "htu": URL, "iat": NOW, "jti": "j"})


@given(st.sampled_from([
    ({"typ": "JWT"}, "typ"), ({"typ": "DPOP+JWT"}, "typ"), ({"typ": None}, "typ"),
    ({"alg": "none"}, "alg"), ({"alg": "HS256"}, "alg"), ({"alg": 7}, "alg"),
    ({"jwk": None}, "jwk"), ({"jwk": "key"}, "jwk"),
    ({"jwk": {**KEY.as_dict(private=True)}}, "jwk"),          # a private key in the header
    ({"jwk": {"kty": "RSA", "n": "AQAB", "e": "AQAB"}}, "jwk"),  # not a key for ES256
    ({"jwk": {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}}, "jwk"),  # no point
    ({"jwk": {**KEY.as_dict(private=False), "crv": "Q-256"}}, "jwk"),  # no such curve
]))
def test_a_proof_whose_header_breaks_a_rule_is_refused_naming_it(
        change: tuple[dict[str, Any], str]) -> None:
    header, reason = change
    assert _refused(_forged(header, GOOD), htm="POST", htu=URL, now=NOW) == reason


def test_a_proof_signed_by_another_key_than_its_header_names_is_refused() -> None:
    proof = _signed(GOOD, key=OTHER_KEY)
    assert _refused(proof, htm="POST", htu=URL, now=NOW) == "signature"


def test_a_proof_by_another_key_than_the_tokens_is_refused_with_jkt() -> None:
    proof = _signed(GOOD)
    assert verify_proof(proof, htm="POST", htu=URL, now=NOW).jkt == KEY.thumbprint()
    assert _refused(proof, htm="POST", htu=URL, now=NOW,
                    expected_jkt=OTHER_KEY.thumbprint()) == "jkt"


@given(st.text(max_size=200) | st.from_regex(r"[A-Za-z0-9_\-]{0,40}\.[A-Za-z0-9_\-]{0,60}\."
                                              r"[A-Za-z0-9_\-]{0,90}", fullmatch=True))
@example("..")
@example("e30.e30.")
@example("eyJhbGciOiJub25lIn0.e30.")
def test_any_string_is_refused_with_the_check_it_failed(text: str) -> None:
    _refused(text, htm="POST", htu=URL, now=NOW)


@given(st.sampled_from([None, 7, b"a.b.c", ["a", "b"]]))
def test_a_proof_that_is_no_string_is_refused(value: Any) -> None:
    assert _refused(value, htm="POST", htu=URL, now=NOW) == "malformed"


def test_the_claims_above_are_json_the_standard_library_reads() -> None:
    """The drawn claims are JSON as written (NaN and Infinity are JSON to Python's reader,
    which is what a server using it would see); a guard that the examples mean what they
    say."""
    assert json.loads('{"iat":NaN}')["iat"] != json.loads('{"iat":NaN}')["iat"]
    assert json.loads('{"iat":1e400}')["iat"] == float("inf")
