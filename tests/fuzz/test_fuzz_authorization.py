"""The `Authorization` and `DPoP` headers as any client may send them, through a protected
app's ASGI entry (a scope as uvicorn builds it, one request per example).

The expected answer comes from the RFCs' grammar, transcribed here, not from the gate:
credentials are `auth-scheme 1*SP token68` (RFC 9110 §11.4, RFC 6750 §2.1, RFC 9449 §7.1),
the field value without the spaces and tabs around it (RFC 9110 §5.5). A scheme the server
does not take is a challenge without an error (401), `Bearer` or `DPoP` without a token68
is `invalid_request` (400), a well-formed token that is not good is `invalid_token` (401),
and only the RFC 6750 example token, sent as a bearer token, reaches the tool. A DPoP-bound
token with any proof but a good one is `invalid_dpop_proof` (401); a proof joserfc signed
for the request is taken. Never a 500.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st
from joserfc import jwk, jws
from token_mutations import MUTATIONS, mutate

import mcpkit
from mcpkit.auth.dpop import access_token_hash
from mcpkit.auth.server_config import DPoPSettings, Principal, ProtectedResource

VALID = "mF_9.B5f-4.1JqM"  # RFC 6750 §2.1's example
BOUND = "bound.token-1"
URL = "https://mcp.example.com/mcp"
NOW = 1_800_000_000.0
KEY = jwk.ECKey.generate_key("P-256")
TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
BODY = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "whoami", "arguments": {}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})


def _verify(token: str) -> Principal | None:
    if token == VALID:
        return Principal("alice")
    if token == BOUND:
        return Principal("bob", claims={"cnf": {"jkt": KEY.thumbprint()}})
    return None


def _app() -> Any:
    server = mcpkit.Server("fuzzed", options=mcpkit.ServerOptions(clock=lambda: NOW))

    @server.tool()
    def whoami(ctx: mcpkit.Context) -> str:
        return ctx.principal.subject

    return server.asgi(path="/mcp", auth=ProtectedResource(
        "https://as.example", verifier=_verify, public_url=URL,
        dpop=DPoPSettings(algorithms=("ES256",))))


def _serve(headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[bytes, list[bytes]], bytes]:
    """One POST of `tools/call whoami` with `headers` besides the usual ones."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/mcp", "raw_path": b"/mcp",
             "root_path": "", "query_string": b"", "server": ("127.0.0.1", 8000),
             "client": ("127.0.0.1", 50000), "headers": [
                 (b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                 (b"accept", b"application/json, text/event-stream"),
                 (b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
                 (b"mcp-name", b"whoami"), (b"content-length", b"%d" % len(BODY)), *headers]}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        async with asyncio.timeout(10):
            await _app()(scope, receive, send)

    asyncio.run(run())
    start = sent[0]
    assert start["type"] == "http.response.start"
    answer: dict[bytes, list[bytes]] = {}
    for name, value in start["headers"]:
        answer.setdefault(name, []).append(value)
    return start["status"], answer, b"".join(m.get("body", b"") for m in sent[1:])


def expected(value: str) -> str:
    """What RFC 9110 §11.4 and RFC 6750 §2.1 make of an Authorization value."""
    value = value.strip(" \t")
    scheme, _, rest = value.partition(" ")
    if scheme.lower() not in ("bearer", "dpop"):
        return "challenge"
    token = rest.lstrip(" ")
    if TOKEN68.fullmatch(token) is None:
        return "malformed"
    return "accepted" if (scheme.lower(), token) == ("bearer", VALID) else "invalid"


_HEADER_TEXT = st.characters(min_codepoint=1, max_codepoint=255, exclude_characters="\r\n")
SCHEMES = st.sampled_from(["Bearer", "bearer", "BEARER", "DPoP", "dpop", "Basic", "Bearerx",
                           "", "Bear er", "Bearer\t", "B\xe9arer"]) | st.text(_HEADER_TEXT,
                                                                             max_size=8)
SEPARATORS = st.sampled_from([" ", "  ", "", "\t", " \t", "\t "])
TOKENS = st.sampled_from([VALID, VALID + "=", VALID + "==", "", "abc", "a=b", "=", "a.b.c",
                          VALID + "\x0b", VALID + " x", "é"]) | st.text(
    st.sampled_from("AZaz09-._~+/= \t\x0b\xa0,\""), max_size=24)
PADS = st.sampled_from(["", " ", "\t", " \t ", "\x0b", "\xa0", "\x85", "\x0c"])


@given(PADS, SCHEMES, SEPARATORS, TOKENS, PADS)
@example("", "Bearer", " ", VALID, "")
@example("", "bearer", "   ", VALID, " ")
@example("", "Bearer", " ", VALID, "\x0b")
@example("\xa0", "Bearer", " ", VALID, "")
@example("", "Bearer", " \t", VALID, "")
@example("", "DPoP", " ", VALID, "")
@example("", "Bearer", "", "", "")
def test_any_authorization_value_gets_the_answer_the_rfc_grammar_gives(
        before: str, scheme: str, separator: str, token: str, after: str) -> None:
    value = before + scheme + separator + token + after
    status, headers, body = _serve([(b"authorization", value.encode("latin-1"))])
    verdict = expected(value)
    challenge = b", ".join(headers.get(b"www-authenticate", []))
    if verdict == "accepted":
        assert status == 200, (value, status, challenge)
        assert orjson.loads(body)["result"]["content"][0]["text"] == "alice"
    elif verdict == "challenge":
        assert status == 401 and b"error=" not in challenge, (value, status, challenge)
    elif verdict == "malformed":
        assert status == 400 and b'error="invalid_request"' in challenge, (value, status)
    else:
        assert status == 401 and b'error="invalid_token"' in challenge, (value, status)


@given(st.lists(st.sampled_from([f"Bearer {VALID}", "Bearer x", "Basic a"]), min_size=2,
                max_size=3))
def test_two_authorization_headers_are_400_whatever_they_say(values: list[str]) -> None:
    status, headers, _ = _serve([(b"authorization", v.encode()) for v in values])
    assert status == 400
    assert b'error="invalid_request"' in b"".join(headers[b"www-authenticate"])


def _proof(claims: dict[str, Any], key: Any = KEY) -> str:
    """A proof signed by joserfc; the claims written by the standard library, which writes
    NaN as the JSON readers of servers take it."""
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 4096
    return str(jws.serialize_compact(
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": KEY.as_dict(private=False)},
        json.dumps(claims), key, registry=registry))


def _good_claims(jti: str = "j1") -> dict[str, Any]:
    return {"jti": jti, "htm": "POST", "htu": URL, "iat": int(NOW),
            "ath": access_token_hash(BOUND)}


GOOD_PROOF = _proof(_good_claims())


def _dpop_call(*proofs: bytes) -> tuple[int, bytes]:
    status, headers, _ = _serve([(b"authorization", f"DPoP {BOUND}".encode()),
                                 *((b"dpop", p) for p in proofs)])
    return status, b", ".join(headers.get(b"www-authenticate", []))


def test_a_proof_joserfc_signed_for_the_request_is_taken() -> None:
    assert _dpop_call(GOOD_PROOF.encode())[0] == 200


@given(st.integers(0, 2), MUTATIONS)
@example(1, ("flip", 3, 1))
@example(2, ("cut", 5, 0))
def test_a_changed_proof_is_refused_as_a_dpop_proof(part: int,
                                                    mutation: tuple[str, Any, Any]) -> None:
    parts = GOOD_PROOF.split(".")
    changed = parts[:]
    changed[part] = mutate(parts[part], mutation)
    if changed == parts:
        return
    status, challenge = _dpop_call(".".join(changed).encode("latin-1", "replace"))
    if status == 200:  # the same bytes spelled otherwise (padding bits): a valid proof still
        return
    assert status == 401 and b'error="invalid_dpop_proof"' in challenge, (status, challenge)


@given(st.binary(max_size=120).filter(lambda b: b"\r" not in b and b"\n" not in b)
       | st.sampled_from([b"", b"..", b"a.b.c", GOOD_PROOF.encode() + b" ", b"e30.e30.e30"]))
def test_any_dpop_header_with_a_bound_token_is_an_invalid_proof_never_a_500(
        value: bytes) -> None:
    status, challenge = _dpop_call(value)
    if value.strip(b" \t") == GOOD_PROOF.encode():
        return
    assert status == 401 and b'error="invalid_dpop_proof"' in challenge, (value, status)


@given(st.sampled_from([{"iat": float("nan")}, {"iat": NOW + 3600}, {"htm": "GET"},
                        {"htu": "https://mcp.example.com/other"}, {"ath": "x"}, {"jti": ""},
                        {"iat": "now"}]))
def test_a_signed_proof_with_one_claim_wrong_is_an_invalid_proof(change: dict[str, Any]) -> None:
    status, challenge = _dpop_call(_proof({**_good_claims(), **change}).encode())
    assert status == 401 and b'error="invalid_dpop_proof"' in challenge, (change, status)


def test_two_proofs_are_refused() -> None:
    status, challenge = _dpop_call(GOOD_PROOF.encode(), _proof(_good_claims("j2")).encode())
    assert status == 401 and b"send one DPoP proof" in challenge
