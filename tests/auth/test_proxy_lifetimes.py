"""The authorization proxy past each of its lifetimes, with the server's clock moved on
(`ServerOptions.clock`, which the store's expiries and the token checks read) instead of
waiting: a code past `code_ttl_s`, a consent page past `pending_ttl_s`, an access token past
`access_token_ttl_s` (and the resource server's leeway), a grant past
`refresh_token_ttl_s`, a registration past `registration_ttl_s`. The server runs in this
process on 127.0.0.1 in front of node-oidc-provider (no registration, one client)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import uvicorn
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import CLIENT_ID, CLIENT_SECRET, upstream_for
from helpers.auth.proxy_server import build
from helpers.auth.proxy_walk import Forms, RawClient, Walk, list_tools, pkce
from helpers.services import free_port

PORT = free_port()
LIMITS = {"code_ttl_s": 20, "pending_ttl_s": 60, "access_token_ttl_s": 100,
          "refresh_token_ttl_s": 300, "registration_ttl_s": 1000}
LEEWAY_S = 30  # the resource server's, on exp


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


UPSTREAM_TTL_S = 5
"""The provider's access tokens: under the proxy's early-refresh margin, so each tool that
asks for one gets a refreshed one."""


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(PORT, ttl=UPSTREAM_TTL_S)
    yield provider
    provider.stop()


@pytest.fixture
async def served(upstream: OIDCProvider) -> AsyncIterator[tuple[RawClient, Clock]]:
    clock = Clock()
    app = build({"upstream": upstream.issuer, "client_id": CLIENT_ID,
                 "client_secret": CLIENT_SECRET, "port": PORT, "limits": LIMITS,
                 "store": "memory"}, clock=clock)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", PORT))
    sock.listen()
    runner = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    async with asyncio.timeout(30):
        while not runner.started:
            await asyncio.sleep(0.01)  # uvicorn says it started by a flag only
    raw = RawClient(f"http://127.0.0.1:{PORT}")
    await asyncio.to_thread(raw.register)
    try:
        yield raw, clock
    finally:
        runner.should_exit = True
        await serving


async def signed(raw: RawClient) -> tuple[str, str]:
    """(the client's redirect with a code, the PKCE verifier)."""
    verifier, challenge = pkce()
    back = await asyncio.to_thread(Walk().to, raw.authorization_url(challenge),
                                   raw.redirect_uri)
    return back, verifier


async def test_a_code_past_its_lifetime_is_invalid_grant(
        served: tuple[RawClient, Clock]) -> None:
    raw, clock = served
    back, verifier = await signed(raw)
    clock.offset = LIMITS["code_ttl_s"] + 1
    answer = await asyncio.to_thread(raw.redeem, back, verifier)
    assert answer.json()["error"] == "invalid_grant"
    assert "unknown or expired" in answer.json()["error_description"]


async def test_a_consent_page_past_the_pending_lifetime_ends_the_sign_in(
        served: tuple[RawClient, Clock]) -> None:
    raw, clock = served
    _, challenge = pkce()
    walk = Walk()
    page = await asyncio.to_thread(walk.http.get, raw.authorization_url(challenge))
    forms = Forms()
    forms.feed(page.text)
    allow = next(fields for _, fields in forms.forms if fields["decision"] == "allow")
    clock.offset = LIMITS["pending_ttl_s"] + 1
    answer = await asyncio.to_thread(walk.http.post, f"{raw.origin}/oauth/consent", data=allow)
    assert answer.status_code == 400 and "expired" in answer.text


async def test_tokens_and_the_grant_end_when_their_lifetimes_do(
        served: tuple[RawClient, Clock]) -> None:
    raw, clock = served
    back, verifier = await signed(raw)
    tokens = (await asyncio.to_thread(raw.redeem, back, verifier)).json()
    assert tokens["expires_in"] == LIMITS["access_token_ttl_s"]
    assert (await asyncio.to_thread(list_tools, f"{raw.origin}/mcp", tokens["access_token"])).status_code == 200
    clock.offset = LIMITS["access_token_ttl_s"] + LEEWAY_S + 1
    expired = await asyncio.to_thread(list_tools, f"{raw.origin}/mcp", tokens["access_token"])
    assert expired.status_code == 401 and "expired" in expired.headers["www-authenticate"]
    renewed = await asyncio.to_thread(raw.token, grant_type="refresh_token",
                                      refresh_token=tokens["refresh_token"])
    assert renewed.status_code == 200
    # The last access token of a grant ends with it, however early it was issued.
    assert renewed.json()["expires_in"] <= LIMITS["refresh_token_ttl_s"] - clock.offset + 1
    clock.offset = LIMITS["refresh_token_ttl_s"] + 1
    over = await asyncio.to_thread(raw.token, grant_type="refresh_token",
                                   refresh_token=renewed.json()["refresh_token"])
    assert over.json()["error"] == "invalid_grant"


async def test_a_registration_past_its_lifetime_is_forgotten(
        served: tuple[RawClient, Clock]) -> None:
    raw, clock = served
    clock.offset = LIMITS["registration_ttl_s"] + 1
    _, challenge = pkce()
    page = await asyncio.to_thread(httpx.get, raw.authorization_url(challenge),
                                   trust_env=False)
    assert page.status_code == 400 and "registration expired" in page.text


async def test_an_upstream_token_near_its_expiry_is_refreshed_before_a_tool_gets_it(
        served: tuple[RawClient, Clock]) -> None:
    raw, _ = served
    back, verifier = await signed(raw)
    tokens = (await asyncio.to_thread(raw.redeem, back, verifier)).json()
    seen = []
    for _ in range(2):
        answer = await asyncio.to_thread(call_tool, raw, tokens["access_token"], "upstream_me")
        status, subject, digest = answer.split(" ")
        assert (status, subject) == ("200", "alice")  # the provider took the token
        seen.append(digest)
    assert seen[0] != seen[1]  # refreshed at the provider in between


def call_tool(raw: RawClient, token: str, name: str) -> str:
    answer = httpx.post(f"{raw.origin}/mcp", trust_env=False, timeout=30, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": name, "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}},
        headers={"authorization": f"Bearer {token}", "mcp-method": "tools/call",
                 "mcp-name": name, "mcp-protocol-version": "2026-07-28",
                 "accept": "application/json, text/event-stream"})
    result = answer.json()["result"]
    assert not result.get("isError"), result
    return str(result["content"][0]["text"])

