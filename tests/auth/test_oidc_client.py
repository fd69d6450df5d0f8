"""The client flows of the Python API against node-oidc-provider, an authorization server
nobody here wrote (`oidc_process.OIDCProvider`), with mcpkit's resource server in front of a
real mcpkit server (`protected_server.py`, every client message checked against the schema):
its login and consent pages walked as a user would (`form_login.sign_in_at`), refresh with
rotation, Dynamic Client Registration, step-up on one `OAuth` and one `RedirectListener`,
client credentials, private_key_jwt, introspection, and DPoP with both servers' nonces."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from helpers.auth.as_process import ProtectedServer
from helpers.auth.form_login import sign_in_at
from helpers.auth.oidc_process import OIDCProvider
from joserfc.jwk import ECKey, RSAKey

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.auth.dpop import DPoPKey
from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.oauth.dpop import DPoPSigner
from mcpkit.transports.oauth.flow import OAuth
from mcpkit.transports.oauth.grants import ClientCredentials, ClientCredentialsGrant
from mcpkit.transports.oauth.machine import MachineAuth
from mcpkit.transports.oauth.redirect import RedirectListener


@pytest.fixture(scope="module")
def nonces() -> Iterator[OIDCProvider]:
    """A provider whose token endpoint asks DPoP proofs for its nonce."""
    yield from OIDCProvider.serving(dpop_nonce=True)


@pytest.fixture(scope="module")
def rs_nonces(nonces: OIDCProvider) -> Iterator[ProtectedServer]:
    """A resource server that asks DPoP proofs for its nonce too."""
    yield from ProtectedServer.serving(nonces, "jwt", dpop_nonce=True)


class User:
    """The user at the browser: each authorization URL walked through the provider's pages."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def open(self, url: str) -> None:
        self.opened.append(url)
        assert await asyncio.to_thread(sign_in_at, url) == 200


@pytest.fixture
async def signed_in() -> AsyncIterator[tuple[User, RedirectListener]]:
    async with RedirectListener(timeout=60) as listener:
        yield User(), listener


def browser_oauth(user: User, listener: RedirectListener, **options: Any) -> OAuth:
    return OAuth(redirect_uri=listener.redirect_uri, redirect_handler=user.open,
                 callback_handler=listener.callback_handler,
                 storage=options.pop("storage", None) or MemoryTokenStorage(), **options)


def client(url: str, auth: Any) -> Client:
    return Client(HTTPConnector(url, auth=auth), options=ClientOptions(timeout=60.0))


async def text_of(c: Client, tool: str) -> str:
    return str((await c.call_tool(tool, {}))["content"][0]["text"])


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        import time

        return time.time() + self.offset


async def test_sign_in_refresh_and_rotation_through_the_providers_pages(
        oidc: OIDCProvider, rs: ProtectedServer,
        signed_in: tuple[User, RedirectListener]) -> None:
    user, listener = signed_in
    storage, clock = MemoryTokenStorage(), Clock()
    auth = browser_oauth(user, listener, storage=storage, clock=clock)
    async with client(rs.url, auth) as c:
        first_whoami = await text_of(c, "whoami")
        first = await storage.load(oidc.issuer, rs.url)
        assert first is not None and first.refresh_token
        clock.offset = 3600.0  # past the access token's expiry: refreshed before it is sent
        again = await text_of(c, "whoami")
        second = await storage.load(oidc.issuer, rs.url)
    client_id = (await storage.load_client(oidc.issuer)).client_id  # registered by DCR
    assert first_whoami == again == f"alice via {client_id} with mcp:read"
    assert second is not None and second.access_token != first.access_token
    assert second.refresh_token and second.refresh_token != first.refresh_token  # rotated
    assert len(user.opened) == 1
    # The provider refuses the used refresh token: rotation is real, not just a new string.
    async with httpx.AsyncClient(trust_env=False) as http:
        reused = await http.post(f"{oidc.issuer}/token", data={
            "grant_type": "refresh_token", "refresh_token": first.refresh_token,
            "client_id": client_id})
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"


async def test_a_step_up_is_a_second_authorization_on_one_oauth_and_one_listener(
        oidc: OIDCProvider, rs: ProtectedServer,
        signed_in: tuple[User, RedirectListener]) -> None:
    user, listener = signed_in
    storage = MemoryTokenStorage()
    async with client(rs.url, browser_oauth(user, listener, storage=storage)) as c:
        assert (await text_of(c, "whoami")).endswith("with mcp:read")
        assert await text_of(c, "purge") == "purged"  # 403, then a sign-in for mcp:admin
        assert (await text_of(c, "whoami")).endswith("with mcp:admin mcp:read")
    assert len(user.opened) == 2
    assert "mcp%3Aadmin" in user.opened[1] and "mcp%3Aread" in user.opened[1]
    kept = await storage.load(oidc.issuer, rs.url)
    assert kept is not None and set((kept.scope or "").split()) >= {"mcp:read", "mcp:admin"}


async def test_dpop_sign_in_with_both_nonces_steps_up(
        nonces: OIDCProvider, rs_nonces: ProtectedServer,
        signed_in: tuple[User, RedirectListener]) -> None:
    """Both servers ask for a nonce; the purge tool's 403 arrives in the DPoP challenge."""
    user, listener = signed_in
    storage, signer = MemoryTokenStorage(), DPoPSigner()
    auth = browser_oauth(user, listener, storage=storage, dpop=signer)
    async with client(rs_nonces.url, auth) as c:
        assert (await text_of(c, "whoami")).endswith("with mcp:read")
        assert await text_of(c, "purge") == "purged"
    kept = await storage.load(nonces.issuer, rs_nonces.url)
    assert kept is not None and kept.token_type.lower() == "dpop"
    assert signer.nonce_for(nonces.issuer) and signer.nonce_for(rs_nonces.url)
    assert len(user.opened) == 2


def machine(oidc: OIDCProvider, **metadata: Any) -> dict[str, Any]:
    return oidc.register(grant_types=["client_credentials"], response_types=[],
                         redirect_uris=[], scope="mcp:read mcp:admin", **metadata)


@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
async def test_machine_client_with_dpop_steps_up_in_the_dpop_challenge(
        nonces: OIDCProvider, rs_nonces: ProtectedServer, alg: str) -> None:
    registered = machine(nonces, token_endpoint_auth_method="client_secret_basic")
    signer = DPoPSigner(DPoPKey.generate(alg))
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials(
        registered["client_id"], registered["client_secret"])), dpop=signer)
    try:
        async with client(rs_nonces.url, auth) as c:
            assert await text_of(c, "purge") == "purged"
            assert (await text_of(c, "whoami")).startswith(registered["client_id"])
    finally:
        await auth.aclose()
    assert auth.token is not None and auth.token.token_type == "DPoP"
    assert "mcp:admin" in (auth.token.scope or "")


@pytest.mark.parametrize("kind", ["EC", "RSA"])
async def test_private_key_jwt_machine_client(oidc: OIDCProvider, rs: ProtectedServer,
                                              kind: str) -> None:
    key = ECKey.generate_key("P-256") if kind == "EC" else RSAKey.generate_key(2048)
    registered = machine(oidc, token_endpoint_auth_method="private_key_jwt",
                         jwks={"keys": [key.as_dict(private=False)]})
    auth = MachineAuth(ClientCredentialsGrant(ClientCredentials(
        registered["client_id"], private_key=key.as_pem(private=True).decode())))
    try:
        async with client(rs.url, auth) as c:
            assert (await text_of(c, "whoami")).startswith(registered["client_id"])
    finally:
        await auth.aclose()


async def test_opaque_tokens_checked_by_introspection(oidc: OIDCProvider) -> None:
    server = ProtectedServer.start(oidc, "introspection", introspector=oidc.introspector())
    try:
        oidc.opaque(server.url)
        registered = machine(oidc, token_endpoint_auth_method="client_secret_post")
        auth = MachineAuth(ClientCredentialsGrant(ClientCredentials(
            registered["client_id"], registered["client_secret"],
            auth_method="client_secret_post")))
        try:
            async with client(server.url, auth) as c:
                assert (await text_of(c, "whoami")).startswith(registered["client_id"])
        finally:
            await auth.aclose()
        assert auth.token is not None and auth.token.access_token.count(".") != 2  # opaque
        assert server.schema_report()["problems"] == []
    finally:
        server.stop()
