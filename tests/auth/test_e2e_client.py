"""mcpkit's `Client` with the OAuth flow (`mcpkit.transports.oauth.flow.OAuth`) against the real
authorization server and mcpkit's resource server, each in its own process. The browser step
is driven headlessly: the redirect handler loads the authorization URL, and the callback hands
the flow the query of the auto-approving server's redirect. Every message the client sends is
checked against the schema (`SchemaTap`, and the protected server's own gate)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from helpers.auth.as_process import AuthServer, ProtectedServer
from helpers.client.schema_tap import SchemaTap, TappedConnector

from mcpkit.client import Client
from mcpkit.errors import AuthError
from mcpkit.store.tokens import MemoryTokenStorage
from mcpkit.transports.http_client.transport import HTTPConnector
from mcpkit.transports.oauth.flow import OAuth

REDIRECT = "http://127.0.0.1:1/callback"  # never listened on: the callback is read headlessly


@pytest.fixture(scope="module")
def protected(auth_server: AuthServer) -> Iterator[ProtectedServer]:
    yield from ProtectedServer.serving(auth_server, "jwt")


class HeadlessBrowser:
    """Loads the authorization URL and keeps the redirect's query, as a browser would bring it
    to a redirect listener; `tamper` changes it first (an attacker's redirect)."""

    def __init__(self, **tamper: str) -> None:
        self.tamper = tamper
        self.query: dict[str, str] = {}
        self.visits = 0

    async def redirect_handler(self, url: str) -> None:
        self.visits += 1
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            answer = await http.get(url)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(REDIRECT + "?")
        self.query = dict(parse_qsl(urlsplit(location).query)) | self.tamper

    async def callback_handler(self) -> dict[str, str]:
        return self.query


def _client(url: str, browser: HeadlessBrowser, tap: SchemaTap) -> tuple[Client, OAuth]:
    oauth = OAuth(redirect_uri=REDIRECT, redirect_handler=browser.redirect_handler,
                  callback_handler=browser.callback_handler, storage=MemoryTokenStorage())
    return Client(TappedConnector(HTTPConnector(url, auth=oauth), tap)), oauth


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_sign_in_then_step_up_for_a_tool_that_needs_more(
        auth_server: AuthServer, protected: ProtectedServer) -> None:
    browser, tap = HeadlessBrowser(), SchemaTap()
    client, _ = _client(protected.url, browser, tap)
    before = len(auth_server.requests("authorize"))
    async with client:
        who = await client.call_tool("whoami", {})
        assert _text(who).startswith("alice via ") and _text(who).endswith(" with mcp:read")
        purged = await client.call_tool("purge", {})  # 403 insufficient_scope: a step-up
        assert _text(purged) == "purged" and not purged.get("isError")
    asked = [r["scope"] for r in auth_server.requests("authorize")[before:]]
    assert asked == ["mcp:read", "mcp:read mcp:admin"]  # the union, not only the new scope
    assert browser.visits == 2
    tap.assert_clean()


@pytest.mark.parametrize("tamper", [{"iss": "http://127.0.0.1:9"}, {"state": "forged"}])
async def test_a_forged_redirect_is_refused_before_the_code_is_used(
        auth_server: AuthServer, protected: ProtectedServer, tamper: dict[str, str]) -> None:
    browser, tap = HeadlessBrowser(**tamper), SchemaTap()
    client, _ = _client(protected.url, browser, tap)
    before = len(auth_server.requests("token"))
    with pytest.raises(AuthError) as caught:
        async with client:
            await client.call_tool("whoami", {})
    assert next(iter(tamper)) in str(caught.value)
    assert auth_server.requests("token")[before:] == []  # the code never reached the AS
    assert browser.query["code"] not in str(caught.value)
