"""The authorization proxy against a real upstream: node-oidc-provider with no registration
endpoint and one pre-registered confidential client (`proxy_process.upstream_for`), and an
mcpkit server behind the proxy in its own process (`proxy_server.py`, every client message
schema-checked). mcpkit's own client signs in through the proxy's consent page and the
upstream's login and consent pages (walked as a user would), calls a tool in both eras,
refreshes with rotation, and is refused after revocation; the negative paths are spoken by
hand and each is refused with its OAuth error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import ProxiedServer, upstream_for
from helpers.auth.proxy_walk import RawClient, Walk, list_tools, pkce, query_of
from helpers.services import free_port

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.oauth.flow import OAuth
from mcpkit.transports.oauth.redirect import RedirectListener

PORTS = (free_port(), free_port())


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(*PORTS)
    yield provider
    provider.stop()


@pytest.fixture(scope="module")
def proxied(upstream: OIDCProvider) -> Iterator[ProxiedServer]:
    yield from ProxiedServer.serving(upstream, PORTS[0])


@pytest.fixture(scope="module")
def other(upstream: OIDCProvider) -> Iterator[ProxiedServer]:
    """A second MCP server behind its own proxy at the same upstream: another resource."""
    yield from ProxiedServer.serving(upstream, PORTS[1])


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        import time

        return time.time() + self.offset


class User:
    """The user at a browser, walking each authorization URL to the client's listener."""

    def __init__(self, login: str = "alice") -> None:
        self.login = login
        self.opened: list[str] = []
        self.walk = Walk()

    async def open(self, url: str) -> None:
        self.opened.append(url)
        stop = query_of(url)["redirect_uri"]
        back = await asyncio.to_thread(self.walk.to, url, stop, login=self.login)
        async with httpx.AsyncClient(trust_env=False) as http:
            assert (await http.get(back)).status_code == 200  # the listener takes it


@pytest.fixture
async def listener() -> AsyncIterator[RedirectListener]:
    async with RedirectListener(timeout=60) as redirect:
        yield redirect


def signed_in_client(url: str, user: User, listener: RedirectListener, era: str,
                     storage: MemoryTokenStorage, clock: Clock | None = None) -> Client:
    auth = OAuth(redirect_uri=listener.redirect_uri, redirect_handler=user.open,
                 callback_handler=listener.callback_handler, storage=storage,
                 clock=clock or Clock())
    return Client(HTTPConnector(url, auth=auth),
                  options=ClientOptions(era=era, timeout=60.0))  # type: ignore[arg-type]


async def text_of(c: Client, tool: str) -> str:
    result = await c.call_tool(tool, {})
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])


def metadata_of(server: ProxiedServer) -> dict[str, Any]:
    return dict(httpx.get(f"{server.origin}/.well-known/oauth-authorization-server",
                          trust_env=False).json())


def test_the_resource_metadata_names_the_proxy_and_the_proxy_publishes_its_own(
        proxied: ProxiedServer, upstream: OIDCProvider) -> None:
    prm = httpx.get(f"{proxied.origin}/.well-known/oauth-protected-resource/mcp",
                    trust_env=False).json()
    assert prm["resource"] == proxied.url
    assert prm["authorization_servers"] == [proxied.origin]
    doc = metadata_of(proxied)
    assert doc["issuer"] == proxied.origin
    head = httpx.head(f"{proxied.origin}/.well-known/oauth-authorization-server",
                      trust_env=False)
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 0
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["registration_endpoint"] == f"{proxied.origin}/oauth/register"
    # The upstream offers no registration: the proxy is the only way in.
    upstream_doc = httpx.get(f"{upstream.issuer}/.well-known/openid-configuration",
                             trust_env=False).json()
    assert "registration_endpoint" not in upstream_doc
    assert httpx.post(f"{upstream.issuer}/reg", json={"redirect_uris": [
        "http://127.0.0.1/cb"]}, trust_env=False).status_code in (400, 404)
    unauthenticated = list_tools(proxied.url)
    assert unauthenticated.status_code == 401
    assert "resource_metadata=" in unauthenticated.headers["www-authenticate"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_mcpkits_client_signs_in_calls_refreshes_and_is_refused_after_revocation(
        proxied: ProxiedServer, listener: RedirectListener, era: str) -> None:
    user, storage, clock = User(), MemoryTokenStorage(), Clock()
    async with signed_in_client(proxied.url, user, listener, era, storage, clock) as c:
        who = await text_of(c, "whoami")
        issuer = proxied.origin
        first = await storage.load(issuer, proxied.url)
        client_id = (await storage.load_client(issuer)).client_id
        assert who == (f"alice via {client_id} with mcp:admin mcp:read; alice@example.test "
                       "staff,team-alice")
        # The upstream token reaches a tool that asks for it, and nothing else.
        assert (await text_of(c, "upstream_me")).startswith("200 alice ")
        seen = json.loads(await text_of(c, "leak"))
        assert set(seen["claims"]) <= {"iss", "sub", "aud", "exp", "iat", "nbf", "jti", "gid",
                                       "client_id", "scope", "email", "name", "groups"}
        assert first is not None and first.refresh_token
        assert first.access_token not in json.dumps(seen)
        clock.offset = 7200.0  # the client holds its token expired: it refreshes first
        assert (await text_of(c, "whoami")).startswith("alice via")
        second = await storage.load(issuer, proxied.url)
    assert second is not None and second.access_token != first.access_token
    assert second.refresh_token and second.refresh_token != first.refresh_token
    assert len(user.opened) == 1
    raw = RawClient(proxied.origin, client_id=client_id)
    # Rotation is real: the first refresh token is spent.
    spent = raw.token(grant_type="refresh_token", refresh_token=first.refresh_token)
    assert spent.status_code == 400 and spent.json()["error"] == "invalid_grant"
    # ...and presenting it again ended the grant: the live tokens are refused too.
    refused = list_tools(proxied.url, second.access_token)
    assert refused.status_code == 401 and "revoked" in refused.headers["www-authenticate"]
    assert raw.token(grant_type="refresh_token",
                     refresh_token=second.refresh_token).json()["error"] == "invalid_grant"


async def test_revocation_ends_the_grant_for_the_refresh_and_the_access_token(
        proxied: ProxiedServer, listener: RedirectListener) -> None:
    user, storage = User("bob"), MemoryTokenStorage()
    async with signed_in_client(proxied.url, user, listener, "modern", storage) as c:
        assert (await text_of(c, "whoami")).startswith("bob via")
    tokens = await storage.load(proxied.origin, proxied.url)
    client_id = (await storage.load_client(proxied.origin)).client_id
    assert tokens is not None and tokens.refresh_token
    good = list_tools(proxied.url, tokens.access_token)
    assert good.status_code != 401
    revoked = httpx.post(f"{proxied.origin}/oauth/revoke", trust_env=False, data={
        "token": tokens.refresh_token, "token_type_hint": "refresh_token",
        "client_id": client_id})
    assert revoked.status_code == 200
    after = list_tools(proxied.url, tokens.access_token)
    assert after.status_code == 401 and 'error="invalid_token"' in after.headers[
        "www-authenticate"]
    again = RawClient(proxied.origin, client_id=client_id).token(
        grant_type="refresh_token", refresh_token=tokens.refresh_token)
    assert again.json()["error"] == "invalid_grant"
    # An unknown token is answered 200 too (RFC 7009 §2.2): the answer tells nothing.
    assert httpx.post(f"{proxied.origin}/oauth/revoke", trust_env=False, data={
        "token": "nothing-we-issued", "client_id": client_id}).status_code == 200


# -- by hand: each refusal with its OAuth error -------------------------------------------------


@pytest.fixture
def raw(proxied: ProxiedServer) -> RawClient:
    client = RawClient(proxied.origin)
    client.register()
    return client


def test_a_sign_in_by_hand_gets_a_token_for_this_resource_only(
        raw: RawClient, proxied: ProxiedServer, other: ProxiedServer) -> None:
    verifier, challenge = pkce()
    walk = Walk()
    back = walk.to(raw.authorization_url(challenge), raw.redirect_uri)
    got = query_of(back)
    assert got["state"] == "st-1" and got["iss"] == proxied.origin and "code" in got
    answer = raw.redeem(back, verifier)
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    tokens = answer.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp:read"
    # Signed by a key the proxy publishes at its jwks_uri, typed as an access token.
    import base64

    header = json.loads(base64.urlsafe_b64decode(tokens["access_token"].split(".")[0] + "=="))
    assert header["typ"] == "at+jwt" and header["alg"] == "ES256"
    jwks = httpx.get(metadata_of(proxied)["jwks_uri"], trust_env=False).json()
    assert header["kid"] in [k["kid"] for k in jwks["keys"]]
    assert all("d" not in k for k in jwks["keys"])  # public keys only
    ok = list_tools(proxied.url, tokens["access_token"])
    assert ok.status_code == 200, ok.text
    # The other server's proxy signs with the same keys' kind but names its own resource:
    # this token is for another resource there.
    elsewhere = list_tools(other.url, tokens['access_token'])
    assert elsewhere.status_code == 401
    assert 'error="invalid_token"' in elsewhere.headers["www-authenticate"]


def test_an_unregistered_redirect_uri_is_a_page_of_the_proxy_never_a_redirect(
        raw: RawClient) -> None:
    _, challenge = pkce()
    url = raw.authorization_url(challenge, redirect_uri="https://evil.example/steal")
    answer = httpx.get(url, trust_env=False)
    assert answer.status_code == 400 and "location" not in answer.headers
    assert "nothing is sent there" in answer.text
    assert answer.headers["x-frame-options"] == "DENY"


def test_a_request_without_pkce_is_sent_back_to_the_client_as_invalid_request(
        raw: RawClient) -> None:
    answer = httpx.get(raw.authorization_url("", code_challenge=None,  # type: ignore[arg-type]
                                             code_challenge_method=None), trust_env=False)
    assert answer.status_code == 303
    back = query_of(answer.headers["location"])
    assert back["error"] == "invalid_request" and "PKCE" in back["error_description"]
    assert back["state"] == "st-1"


def test_a_token_asked_for_another_resource_is_invalid_target(raw: RawClient) -> None:
    _, challenge = pkce()
    answer = httpx.get(raw.authorization_url(challenge, resource="https://other.example/mcp"),
                       trust_env=False)
    assert answer.status_code == 303
    assert query_of(answer.headers["location"])["error"] == "invalid_target"


def test_a_verifier_that_does_not_match_is_invalid_grant(raw: RawClient) -> None:
    _, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri)
    wrong, _ = pkce()
    answer = raw.redeem(back, wrong)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    assert "code_verifier" in answer.json()["error_description"]


def test_a_replayed_code_is_refused_and_ends_the_tokens_it_gave(
        raw: RawClient, proxied: ProxiedServer) -> None:
    verifier, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri)
    first = raw.redeem(back, verifier)
    assert first.status_code == 200
    replay = raw.redeem(back, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert "used before" in replay.json()["error_description"]
    token = first.json()["access_token"]
    answer = list_tools(proxied.url, token)
    assert answer.status_code == 401


def test_a_code_for_another_client_or_redirect_uri_is_invalid_grant(
        raw: RawClient, proxied: ProxiedServer) -> None:
    verifier, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri)
    thief = RawClient(proxied.origin, redirect_uri="http://127.0.0.1:9/other")
    thief.register()
    stolen = thief.redeem(back, verifier)
    assert stolen.json()["error"] == "invalid_grant"
    verifier, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri)
    code = query_of(back)["code"]
    moved = raw.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                      redirect_uri="http://127.0.0.1:9/callback/")
    assert moved.json()["error"] == "invalid_grant"


def test_a_confidential_client_must_prove_its_secret(proxied: ProxiedServer) -> None:
    client = RawClient(proxied.origin)
    client.register(token_endpoint_auth_method="client_secret_basic")
    assert client.client_secret
    client.client_secret = "wrong"
    answer = client.token(grant_type="refresh_token", refresh_token="x")
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
    unknown = RawClient(proxied.origin, client_id="mcp-never-registered")
    assert unknown.token(grant_type="authorization_code").json()["error"] == "invalid_client"


def test_consent_cannot_be_skipped_forged_or_replayed(raw: RawClient,
                                                       proxied: ProxiedServer) -> None:
    _, challenge = pkce()
    browser = Walk()
    page = browser.http.get(raw.authorization_url(challenge))
    assert page.status_code == 200 and "Allow access to" in page.text
    from helpers.auth.proxy_walk import Forms

    forms = Forms()
    forms.feed(page.text)
    allow = next(fields for _, fields in forms.forms if fields["decision"] == "allow")
    consent = f"{proxied.origin}/oauth/consent"
    # Another browser (no cookie) posting this page's decision: refused.
    assert httpx.post(consent, data=allow, trust_env=False).status_code == 403
    # A forged CSRF token, in the right browser: refused.
    assert browser.http.post(consent, data={**allow, "csrf": "0" * 64}).status_code == 403
    # Another site posting it (its Origin): refused.
    cross = browser.http.post(consent, data=allow, headers={"origin": "https://evil.example"})
    assert cross.status_code == 403
    # Straight to the callback, as if the upstream answered a sign-in never consented to.
    skipped = browser.http.get(f"{proxied.origin}/oauth/callback?code=x&state=made-up")
    assert skipped.status_code == 400 and "never consented" in skipped.text
    # The genuine decision works once; the same form again is over.
    assert browser.http.post(consent, data=allow).status_code == 303
    again = browser.http.post(consent, data=allow)
    assert again.status_code == 400 and "decided already" in again.text


def test_denying_on_the_consent_page_is_access_denied_at_the_client(raw: RawClient) -> None:
    _, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri, decide="deny")
    got = query_of(back)
    assert got["error"] == "access_denied" and got["state"] == "st-1" and "code" not in got


def test_cancelling_at_the_upstream_is_access_denied_at_the_client(
        raw: RawClient, proxied: ProxiedServer) -> None:
    _, challenge = pkce()
    back = Walk().to(raw.authorization_url(challenge), raw.redirect_uri, upstream="abort")
    got = query_of(back)
    assert got["error"] == "access_denied" and got["iss"] == proxied.origin
    assert "ended with 'access_denied'" in got["error_description"]


def test_the_upstream_answer_reaching_another_browser_is_refused(raw: RawClient,
                                                                  proxied: ProxiedServer
                                                                  ) -> None:
    """Login CSRF: an attacker's upstream answer planted in the victim's browser."""
    _, challenge = pkce()
    attacker = Walk()
    upstream_page = attacker.to(raw.authorization_url(challenge), f"{proxied.origin}/oauth/"
                                "callback")
    # The attacker stops at the proxy's callback URL and hands it to a victim's browser.
    victim = Walk()
    answer = victim.http.get(upstream_page)
    assert answer.status_code == 403 and "another browser" in answer.text


def test_a_registration_that_cannot_be_served_is_refused_with_its_rfc_7591_error(
        proxied: ProxiedServer) -> None:
    for body, error in [
        ({"redirect_uris": ["http://app.example.com/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example.com/cb"], "grant_types": ["password"]},
         "invalid_client_metadata"),
    ]:
        answer = httpx.post(f"{proxied.origin}/oauth/register", json=body, trust_env=False)
        assert answer.status_code == 400 and answer.json()["error"] == error
    too_big = httpx.post(f"{proxied.origin}/oauth/register", trust_env=False,
                         content=b'{"client_name": "' + b"x" * 20000 + b'"}',
                         headers={"content-type": "application/json"})
    assert too_big.status_code == 413
