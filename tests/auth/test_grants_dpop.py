"""DPoP on a machine client's requests, against the small real AS and protected server of
`grant_peer` on 127.0.0.1: proofs on the token and MCP requests, a fresh jti on each, the
DPoP scheme, and the nonce retries of both the AS and the resource server."""

from __future__ import annotations

import json

import httpx
import pytest
from helpers.auth.grant_peer import Peer
from helpers.auth.grant_peer import peer as peer  # the fixture, shared
from joserfc import jws

from mcpkit import Client, HTTPConnector
from mcpkit.auth.dpop import DPoPKey, verify_proof
from mcpkit.errors import GrantError
from mcpkit.transports.oauth.dpop import DPoPSigner, nonce_challenge
from mcpkit.transports.oauth.grants import ClientCredentials, ClientCredentialsGrant
from mcpkit.transports.oauth.machine import MachineAuth

CREDS = ClientCredentials("svc", client_secret="secret")


async def two_calls(peer: Peer, auth: MachineAuth) -> None:
    connector = HTTPConnector(f"{peer.base}/mcp", auth=auth)
    try:
        async with Client(connector) as client:
            await client.call_tool("echo", {"text": "one"})
            await client.call_tool("echo", {"text": "two"})
    finally:
        await auth.aclose()


def claims_of(proof: str) -> dict[str, object]:
    return dict(json.loads(jws.extract_compact(proof.encode()).payload))


async def test_token_and_resource_requests_carry_proofs_of_one_key(peer: Peer) -> None:
    signer = DPoPSigner()
    await two_calls(peer, MachineAuth(ClientCredentialsGrant(CREDS), dpop=signer))
    (_, headers), = peer.token_requests
    token_proof = claims_of(headers["dpop"])
    assert token_proof["htu"] == f"{peer.base}/token" and "ath" not in token_proof
    assert peer.issued["tok-1"].jkt == signer.thumbprint
    presented = [h for h in peer.mcp_headers if h.get("authorization", "").startswith("DPoP ")]
    assert len(presented) >= 2
    assert all(h["authorization"] == "DPoP tok-1" for h in presented)
    assert len(peer.proof_jtis) == len(set(peer.proof_jtis)) == len(presented)


async def test_the_as_nonce_is_asked_for_then_honoured(peer: Peer) -> None:
    peer.as_nonce = "as-nonce-1"
    await two_calls(peer, MachineAuth(ClientCredentialsGrant(CREDS), dpop=True))
    assert len(peer.token_requests) == 2
    first, second = (claims_of(h["dpop"]) for _, h in peer.token_requests)
    assert "nonce" not in first and second["nonce"] == "as-nonce-1"
    assert first["jti"] != second["jti"]


async def test_the_resource_server_nonce_is_asked_for_then_honoured(peer: Peer) -> None:
    peer.rs_nonce = "rs-nonce-1"
    await two_calls(peer, MachineAuth(ClientCredentialsGrant(CREDS), dpop=True))
    with_nonce = [claims_of(h["dpop"]) for h in peer.mcp_headers
                  if "dpop" in h and claims_of(h["dpop"]).get("nonce") == "rs-nonce-1"]
    assert len(with_nonce) == len(peer.proof_jtis) >= 2  # every accepted proof had the nonce
    assert len(peer.token_requests) == 1  # a nonce challenge is not a reason for a new token


async def test_an_as_that_keeps_asking_for_a_nonce_is_asked_once_more_only(peer: Peer) -> None:

    def always_nonce(form: dict[str, str], headers: dict[str, str]
                     ) -> tuple[int, dict[str, object], dict[str, str]]:
        return 400, {"error": "use_dpop_nonce"}, {"dpop-nonce": f"n{len(peer.token_requests)}"}

    peer.answer_token = always_nonce  # type: ignore[method-assign,assignment]
    with pytest.raises(GrantError) as caught:
        await two_calls(peer, MachineAuth(ClientCredentialsGrant(CREDS), dpop=True))
    assert caught.value.error == "use_dpop_nonce"
    assert len(peer.token_requests) == 2


def test_nonce_challenge_reads_both_kinds_of_server() -> None:
    request = httpx.Request("POST", "https://as.example/token")
    as_answer = httpx.Response(400, json={"error": "use_dpop_nonce"},
                               headers={"DPoP-Nonce": "n1"}, request=request)
    rs_answer = httpx.Response(401, headers={"DPoP-Nonce": "n2", "WWW-Authenticate":
                                             'DPoP error="use_dpop_nonce"'}, request=request)
    other = httpx.Response(400, json={"error": "invalid_grant"},
                           headers={"DPoP-Nonce": "n3"}, request=request)
    no_header = httpx.Response(400, json={"error": "use_dpop_nonce"}, request=request)
    assert nonce_challenge(as_answer) == "n1"
    assert nonce_challenge(rs_answer) == "n2"
    assert nonce_challenge(other) is None and nonce_challenge(no_header) is None


def test_signer_keeps_nonces_per_origin_and_signs_with_them() -> None:
    signer = DPoPSigner(DPoPKey.generate(), clock=lambda: 1_800_000_000)
    answer = httpx.Response(200, headers={"DPoP-Nonce": "as-n"},
                            request=httpx.Request("POST", "https://AS.example:443/token"))
    signer.learn(answer)
    assert signer.nonce_for("https://as.example/other") == "as-n"
    assert signer.nonce_for("https://rs.example/mcp") is None
    request = signer.sign_resource_request(httpx.Request("POST", "https://as.example/x?q=1"),
                                           "the-token")
    verified = verify_proof(request.headers["dpop"], htm="POST", htu="https://as.example/x",
                            now=1_800_000_000, access_token="the-token", nonce="as-n",
                            expected_jkt=signer.thumbprint)
    assert request.headers["authorization"] == "DPoP the-token"
    assert verified.jkt == signer.thumbprint
    assert "the-token" not in repr(signer)
