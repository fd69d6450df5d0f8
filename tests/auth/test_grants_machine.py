"""The machine grants against a small real token endpoint on 127.0.0.1 (`grant_peer.Peer`),
and `MachineAuth` driving them for a real `mcpkit.Client` calling a protected real server."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx
import pytest
from helpers.auth.grant_peer import Peer
from helpers.auth.grant_peer import peer as peer  # the fixture, shared
from joserfc import jwt
from joserfc.jwk import ECKey, OKPKey

from mcpkit import Client, HTTPConnector
from mcpkit.errors import AuthError, GrantError
from mcpkit.transports.oauth.grants import (
    CLIENT_ASSERTION_TYPE,
    ClientCredentials,
    ClientCredentialsGrant,
    EnterpriseGrant,
    WorkloadIdentityGrant,
)
from mcpkit.transports.oauth.machine import MachineAuth

SECRET = "s3cr3t:with/odd chars"


async def call_echo(peer: Peer, auth: MachineAuth) -> str:
    connector = HTTPConnector(f"{peer.base}/mcp", auth=auth)
    try:
        async with Client(connector) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    finally:
        await auth.aclose()
    return str(result["content"][0]["text"])


async def test_client_credentials_with_basic_auth_reach_the_tool(peer: Peer) -> None:
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)))
    assert await call_echo(peer, auth) == "hi"
    (form, headers), = peer.token_requests
    assert form["grant_type"] == "client_credentials"
    assert form["resource"] == f"{peer.base}/mcp"
    assert form["scope"] == "mcp:tools"  # the challenge's scope
    assert "client_secret" not in form
    decoded = base64.b64decode(headers["authorization"].removeprefix("Basic ")).decode()
    assert decoded == "svc:s3cr3t%3Awith%2Fodd%20chars"  # RFC 6749 2.3.1: form-encoded first
    assert peer.mcp_headers[-1]["authorization"] == "Bearer tok-1"


async def test_client_secret_post_when_the_as_lists_only_that(peer: Peer) -> None:
    creds = ClientCredentials("svc", client_secret=SECRET)
    assert creds.method_for({"token_endpoint_auth_methods_supported":
                             ["client_secret_post"]}) == "client_secret_post"
    auth = MachineAuth(ClientCredentialsGrant(
        ClientCredentials("svc", client_secret=SECRET, auth_method="client_secret_post")))
    assert await call_echo(peer, auth) == "hi"
    (form, headers), = peer.token_requests
    assert form["client_id"] == "svc" and form["client_secret"] == SECRET
    assert "authorization" not in headers


async def test_private_key_jwt_assertion_is_signed_for_the_issuer(peer: Peer) -> None:
    key = ECKey.generate_key("P-256")
    pem = key.as_pem(private=True).decode()
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", private_key=pem)))
    assert await call_echo(peer, auth) == "hi"
    (form, _), = peer.token_requests
    assert form["client_assertion_type"] == CLIENT_ASSERTION_TYPE
    token = jwt.decode(form["client_assertion"], key, algorithms=["ES256"])
    claims = token.claims
    assert claims["iss"] == claims["sub"] == "svc"
    assert claims["aud"] == peer.base
    assert 0 < claims["exp"] - claims["iat"] <= 300 and claims["jti"]
    assert token.header["alg"] == "ES256"


async def test_a_public_key_alone_is_refused_with_a_clear_error(peer: Peer) -> None:
    public = ECKey.generate_key("P-256").as_pem(private=False).decode()
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", private_key=public)))
    with pytest.raises(ValueError, match="no private part"):
        await call_echo(peer, auth)
    assert peer.token_requests == []


async def test_a_refusal_is_a_grant_error_without_the_secret(peer: Peer) -> None:
    peer.refusal = {"error": "invalid_client", "error_description": "unknown client"}
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)))
    with pytest.raises(GrantError) as caught:
        await call_echo(peer, auth)
    assert caught.value.error == "invalid_client" and caught.value.status == 400
    assert "unknown client" in str(caught.value)
    assert SECRET not in str(caught.value) and SECRET not in repr(auth.grant)


async def test_step_up_on_403_asks_again_with_the_union_of_scopes(peer: Peer) -> None:
    peer.required_scope = "mcp:admin"
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)))
    assert await call_echo(peer, auth) == "hi"
    scopes = [form.get("scope") for form, _ in peer.token_requests]
    assert scopes[0] == "mcp:tools"
    assert scopes[1] == "mcp:tools mcp:admin"
    assert auth.token is not None and "tok-" not in repr(auth.token)


async def test_enterprise_exchange_then_jwt_bearer(peer: Peer) -> None:
    grant = EnterpriseGrant(
        client=ClientCredentials("mcp-client", client_secret=SECRET),
        idp_token_endpoint=f"{peer.base}/idp/token", id_token="id.token.jwt",
        idp_client=ClientCredentials("idp-client", auth_method="none"))
    assert await call_echo(peer, MachineAuth(grant)) == "hi"
    exchange, = peer.idp_requests
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert exchange["audience"] == peer.base
    assert exchange["resource"] == f"{peer.base}/mcp"
    assert exchange["client_id"] == "idp-client"
    (form, headers), = peer.token_requests
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert form["assertion"] == "idjag.header.sig"
    assert headers["authorization"].startswith("Basic ")


async def test_enterprise_refuses_a_token_exchange_that_issued_no_id_jag(peer: Peer) -> None:
    def not_a_jag(form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        return 200, {"access_token": "a.b.c", "issued_token_type":
                     "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"}

    peer.answer_idp = not_a_jag  # type: ignore[method-assign]
    grant = EnterpriseGrant(client=ClientCredentials("c", client_secret=SECRET),
                            idp_token_endpoint=f"{peer.base}/idp/token", id_token="x.y.z")
    with pytest.raises(GrantError, match="not an ID-JAG"):
        await call_echo(peer, MachineAuth(grant))
    assert peer.token_requests == []


async def test_workload_identity_presents_the_assertion(peer: Peer) -> None:
    calls = 0

    def fresh_assertion() -> str:
        nonlocal calls
        calls += 1
        return f"wl.jwt.{calls}"

    auth = MachineAuth(WorkloadIdentityGrant(fresh_assertion,
                                             ClientCredentials("wl", auth_method="none")))
    assert await call_echo(peer, auth) == "hi"
    (form, headers), = peer.token_requests
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert form["assertion"] == "wl.jwt.1" and form["client_id"] == "wl"
    assert "authorization" not in headers


@pytest.mark.parametrize("error", ["invalid_grant", "invalid_scope", "unauthorized_client"])
async def test_workload_identity_error_is_final(peer: Peer, error: str) -> None:
    peer.refusal = {"error": error}
    auth = MachineAuth(WorkloadIdentityGrant("wl.jwt.sig"))
    with pytest.raises(GrantError) as caught:
        await call_echo(peer, auth)
    assert caught.value.error == error
    assert len(peer.token_requests) == 1  # no retry, no other grant
    assert "wl.jwt.sig" not in str(caught.value)


async def test_workload_identity_refuses_what_is_no_jwt_before_sending(peer: Peer) -> None:
    with pytest.raises(GrantError, match="not a compact JWT"):
        await call_echo(peer, MachineAuth(WorkloadIdentityGrant("plain-text")))
    assert peer.token_requests == []


async def test_a_token_response_without_a_token_is_refused(peer: Peer) -> None:
    def empty(form: dict[str, str], headers: dict[str, str]
              ) -> tuple[int, dict[str, Any], dict[str, str]]:
        return 200, {"token_type": "Bearer"}, {}

    peer.answer_token = empty  # type: ignore[method-assign]
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)))
    with pytest.raises(GrantError) as caught:
        await call_echo(peer, auth)
    assert caught.value.error == "invalid_response"


async def test_grants_as_functions_of_an_httpx_client(peer: Peer) -> None:
    async with httpx.AsyncClient() as http:
        token = await ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)) \
            .obtain(http, peer.metadata(), resource=f"{peer.base}/mcp", scope="mcp:admin")
    assert token.access_token == "tok-1" and token.scope == "mcp:admin"
    assert token.expires_at is not None and token.expires_at > time.time() + 3000
    assert json.dumps(token.to_json())  # storable as TokenStorage keeps it


@pytest.mark.filterwarnings("ignore:EdDSA is deprecated")
async def test_private_key_jwt_signs_with_the_first_listed_algorithm_the_key_fits(
        peer: Peer) -> None:
    # An AS may list a shared-secret algorithm first (node-oidc-provider lists HS256 first):
    # no private key signs it, so the first one the key fits is taken.
    peer.signing_algs = ("HS256", "RS256", "PS256", "ES256", "EdDSA")
    for key, alg in ((ECKey.generate_key("P-256"), "ES256"), (OKPKey.generate_key("Ed25519"),
                                                               "EdDSA")):
        peer.token_requests.clear()
        auth = MachineAuth(ClientCredentialsGrant(ClientCredentials(
            "svc", private_key=key.as_dict(private=True))))
        assert await call_echo(peer, auth) == "hi"
        (form, _), = peer.token_requests
        assert jwt.decode(form["client_assertion"], key, algorithms=[alg]).header["alg"] == alg


async def test_private_key_jwt_with_no_algorithm_the_key_fits_says_so(peer: Peer) -> None:
    peer.signing_algs = ("HS256", "RS256")
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials(
        "svc", private_key=ECKey.generate_key("P-256").as_dict(private=True))))
    with pytest.raises(ValueError, match=r"accepts HS256, RS256 .* signs ES256"):
        await call_echo(peer, auth)
    assert peer.token_requests == []


class LoopbackOnly(httpx.AsyncHTTPTransport):
    """Connects to 127.0.0.1 only; every other host is recorded and never reached."""

    def __init__(self) -> None:
        super().__init__()
        self.elsewhere: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host != "127.0.0.1":
            self.elsewhere.append(str(request.url))
            raise httpx.ConnectError("not reached: the test stays on 127.0.0.1", request=request)
        return await super().handle_async_request(request)


@pytest.mark.parametrize(("host", "kind"), [("2852039166", "link-local"),  # 169.254.169.254
                                             ("167772161", "private")])     # 10.0.0.1
async def test_machine_metadata_is_refused_when_its_host_name_resolves_to_a_private_address(
        peer: Peer, host: str, kind: str) -> None:
    # A name, not a literal address: only resolving it shows where it leads.
    peer.authorization_server = f"https://{host}"
    guard = LoopbackOnly()
    async with httpx.AsyncClient(transport=guard) as http:
        auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)),
                           http=http)
        with pytest.raises(AuthError, match=f"resolves to a {kind} address"):
            await call_echo(peer, auth)
    assert guard.elsewhere == [] and peer.token_requests == []


async def test_machine_metadata_redirects_are_followed_each_hop_checked(peer: Peer) -> None:
    prm = "/.well-known/oauth-protected-resource/mcp"
    peer.moved[prm] = f"{peer.base}/moved/prm"
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc", client_secret=SECRET)))
    assert await call_echo(peer, auth) == "hi"
    peer.moved[prm] = "https://2852039166/prm"  # a hop to a link-local address: refused
    guard = LoopbackOnly()
    async with httpx.AsyncClient(transport=guard) as http:
        refused = MachineAuth(ClientCredentialsGrant(ClientCredentials("svc",
                                                                       client_secret=SECRET)),
                              http=http)
        with pytest.raises(AuthError, match="link-local"):
            await call_echo(peer, refused)
    assert guard.elsewhere == []
