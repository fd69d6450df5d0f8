"""The test authorization server does what the end-to-end tests count on: an authorization
code grant that insists on PKCE S256 and answers with RFC 9207 `iss`, tokens whose `aud` is
the `resource` asked for, refresh tokens that work once, introspection, client credentials and
key rotation. Driven by hand here (plain httpx), so a failure of the end-to-end tests can be
told apart from a failure of their authorization server."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from helpers.auth.as_process import AuthServer
from joserfc import jwt
from joserfc.jwk import KeySet

RESOURCE = "http://127.0.0.1:9/mcp"
REDIRECT = "http://127.0.0.1:1/callback"


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _authorize(server: AuthServer, client_id: str, challenge: str | None,
               redirect: str = REDIRECT) -> dict[str, list[str]]:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
              "state": "s1", "resource": RESOURCE, "scope": "mcp:read"}
    if challenge:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    answer = httpx.get(f"{server.issuer}/authorize", params=params, trust_env=False)
    assert answer.status_code == 302, answer.text
    return parse_qs(urlsplit(answer.headers["location"]).query)


def _public_client(server: AuthServer) -> str:
    return str(server.register(redirect_uris=[REDIRECT], token_endpoint_auth_method="none",
                               grant_types=["authorization_code", "refresh_token"],
                               client_name="test")["client_id"])


def _token(server: AuthServer, **form: str) -> httpx.Response:
    return httpx.post(f"{server.issuer}/token", data=form, trust_env=False)


def _claims(server: AuthServer, token: str) -> dict[str, Any]:
    keys = KeySet.import_key_set(httpx.get(server.jwks_url, trust_env=False).json())
    return dict(jwt.decode(token, keys).claims)


def test_metadata_names_s256_and_the_iss_parameter(auth_server: AuthServer) -> None:
    meta = httpx.get(f"{auth_server.issuer}/.well-known/oauth-authorization-server",
                     trust_env=False).json()
    assert meta["issuer"] == auth_server.issuer
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True


def test_code_flow_gives_a_token_for_the_resource_and_iss(auth_server: AuthServer) -> None:
    client_id = _public_client(auth_server)
    verifier, challenge = _pkce()
    # A loopback redirect URI on another port is the same registration (RFC 8252 §7.3).
    query = _authorize(auth_server, client_id, challenge, "http://127.0.0.1:2/callback")
    assert query["iss"] == [auth_server.issuer] and query["state"] == ["s1"]
    answer = _token(auth_server, grant_type="authorization_code", code=query["code"][0],
                    client_id=client_id, code_verifier=verifier, resource=RESOURCE,
                    redirect_uri="http://127.0.0.1:2/callback")
    assert answer.status_code == 200, answer.text
    claims = _claims(auth_server, answer.json()["access_token"])
    assert claims["aud"] == RESOURCE and claims["iss"] == auth_server.issuer
    assert claims["sub"] == "alice" and claims["scope"] == "mcp:read"


def test_a_wrong_verifier_and_no_pkce_are_refused(auth_server: AuthServer) -> None:
    client_id = _public_client(auth_server)
    _, challenge = _pkce()
    code = _authorize(auth_server, client_id, challenge)["code"][0]
    wrong = _token(auth_server, grant_type="authorization_code", code=code, client_id=client_id,
                   code_verifier=_pkce()[0], redirect_uri=REDIRECT)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    bare = _authorize(auth_server, client_id, None)["code"][0]
    refused = _token(auth_server, grant_type="authorization_code", code=bare,
                     client_id=client_id, redirect_uri=REDIRECT)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_request"


def test_a_refresh_token_works_once(auth_server: AuthServer) -> None:
    client_id = _public_client(auth_server)
    verifier, challenge = _pkce()
    code = _authorize(auth_server, client_id, challenge)["code"][0]
    first = _token(auth_server, grant_type="authorization_code", code=code, client_id=client_id,
                   code_verifier=verifier, redirect_uri=REDIRECT, resource=RESOURCE).json()
    second = _token(auth_server, grant_type="refresh_token", client_id=client_id,
                    refresh_token=first["refresh_token"])
    assert second.status_code == 200, second.text
    assert second.json()["refresh_token"] != first["refresh_token"]
    assert _claims(auth_server, second.json()["access_token"])["aud"] == RESOURCE
    again = _token(auth_server, grant_type="refresh_token", client_id=client_id,
                   refresh_token=first["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_client_credentials_and_introspection(auth_server: AuthServer) -> None:
    machine = auth_server.register(grant_types=["client_credentials"],
                                   token_endpoint_auth_method="client_secret_basic")
    answer = httpx.post(f"{auth_server.issuer}/token", trust_env=False,
                        auth=(machine["client_id"], machine["client_secret"]),
                        data={"grant_type": "client_credentials", "resource": RESOURCE})
    assert answer.status_code == 200, answer.text
    token = answer.json()["access_token"]
    rs = (auth_server.introspection_client_id, auth_server.introspection_client_secret)
    seen = httpx.post(auth_server.introspection_url, auth=rs, data={"token": token},
                      trust_env=False).json()
    assert seen["active"] is True and seen["aud"] == RESOURCE
    assert seen["client_id"] == machine["client_id"]
    wrong = httpx.post(auth_server.introspection_url, auth=(rs[0], "not-it"),
                       data={"token": token}, trust_env=False)
    assert wrong.status_code == 401


@pytest.mark.parametrize("keep", [True, False])
def test_rotation_signs_with_a_new_kid(keep: bool) -> None:
    server = AuthServer.start("--alg", "ES256")
    try:
        before = {k["kid"] for k in httpx.get(server.jwks_url, trust_env=False).json()["keys"]}
        kid = server.rotate(keep=keep)
        after = {k["kid"] for k in httpx.get(server.jwks_url, trust_env=False).json()["keys"]}
        assert kid not in before and kid in after
        assert (before <= after) is keep
        machine = server.register(grant_types=["client_credentials"],
                                  token_endpoint_auth_method="client_secret_post")
        token = httpx.post(f"{server.issuer}/token", trust_env=False, data={
            "grant_type": "client_credentials", "client_id": machine["client_id"],
            "client_secret": machine["client_secret"]}).json()["access_token"]
        assert jwt.decode(token, KeySet.import_key_set(
            httpx.get(server.jwks_url, trust_env=False).json())).header["kid"] == kid
    finally:
        server.stop()
