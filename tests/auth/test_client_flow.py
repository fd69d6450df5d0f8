"""The OAuth flow over a real uvicorn on 127.0.0.1 (`oauth_peer.Peer`: an authorization server
and a Bearer guard before a real mcpkit server): refresh with rotation, tokens kept across a
restart, a 401 that never leads to the legacy era, and targets that are never opened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.auth.oauth_peer import Browser, Peer
from helpers.transports.resume_peer import on_free_port

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.errors import AuthError
from mcpkit.store.tokens import FileTokenStorage, MemoryTokenStorage, TokenStorage
from mcpkit.transports.oauth.flow import OAuth
from mcpkit.transports.oauth.redirect import RedirectListener

REDIRECT = "http://127.0.0.1:1/callback"


@pytest.fixture
async def peer() -> AsyncIterator[tuple[Peer, str]]:
    app = Peer()
    async with on_free_port(app) as url:
        app.base = url.removesuffix("/mcp")
        yield app, url


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def oauth(browser: Browser, storage: TokenStorage | None = None, **options: Any) -> OAuth:
    return OAuth(redirect_uri=REDIRECT, redirect_handler=browser.open,
                 callback_handler=browser.callback,
                 storage=storage if storage is not None else MemoryTokenStorage(), **options)


def client(url: str, auth: OAuth | None) -> Client:
    return Client(HTTPConnector(url, auth=auth) if auth else HTTPConnector(url),
                  options=ClientOptions(era="auto", timeout=30.0))


async def test_a_401_signs_in_once_and_every_request_carries_the_token(
        peer: tuple[Peer, str]) -> None:
    app, url = peer
    browser = Browser()
    async with client(url, oauth(browser)) as c:
        await c.call_tool("echo", {"text": "hi"})
        await c.list_tools()
    assert len(browser.opened) == 1
    mcp = [s for s in app.seen if s.startswith("POST /mcp")]
    assert mcp[0] == "POST /mcp server/discover"  # the 401
    assert "initialize" not in " ".join(mcp)
    assert [g["grant_type"] for g in app.grants] == ["authorization_code"]
    assert app.grants[0]["resource"] == url


async def test_an_expired_token_is_refreshed_and_the_rotated_refresh_token_kept(
        peer: tuple[Peer, str]) -> None:
    app, url = peer
    browser, clock, storage = Browser(), Clock(), MemoryTokenStorage()
    auth = oauth(browser, storage, clock=clock)
    async with client(url, auth) as c:
        await c.call_tool("echo", {"text": "one"})
        first = await storage.load(app.issuer, url)
        assert first is not None and first.refresh_token is not None
        clock.now += 7200  # past expires_in
        await c.call_tool("echo", {"text": "two"})
        second = await storage.load(app.issuer, url)
        clock.now += 7200
        await c.call_tool("echo", {"text": "three"})
        third = await storage.load(app.issuer, url)
    assert second is not None and third is not None
    assert [g["grant_type"] for g in app.grants] == [
        "authorization_code", "refresh_token", "refresh_token"]
    # each refresh used the token the one before returned: the AS takes each only once
    assert app.grants[1]["refresh_token"] == first.refresh_token
    assert app.grants[2]["refresh_token"] == second.refresh_token != first.refresh_token
    assert third.access_token in app.access and len(browser.opened) == 1


async def test_a_refused_refresh_leads_to_a_new_sign_in(peer: tuple[Peer, str]) -> None:
    app, url = peer
    browser, clock = Browser(), Clock()
    async with client(url, oauth(browser, clock=clock)) as c:
        await c.call_tool("echo", {"text": "one"})
        app.refuse_refresh = True
        app.access.clear()  # the AS forgot the access token too
        await c.call_tool("echo", {"text": "two"})
    assert [g["grant_type"] for g in app.grants] == [
        "authorization_code", "refresh_token", "authorization_code"]
    assert len(browser.opened) == 2


async def test_one_redirect_listener_serves_a_second_sign_in(peer: tuple[Peer, str]) -> None:
    """The pattern docs/auth.md shows: one `RedirectListener` for the life of the `OAuth`; a
    refused refresh sends the user through the browser again, to the same listener."""
    app, url = peer
    opened: list[str] = []

    async def browse(authorization_url: str) -> None:  # the AS redirects to the listener
        opened.append(authorization_url)
        async with httpx.AsyncClient(trust_env=False, follow_redirects=True) as http:
            assert (await http.get(authorization_url)).status_code == 200

    async with RedirectListener(timeout=30) as listener:
        auth = OAuth(redirect_uri=listener.redirect_uri, redirect_handler=browse,
                     callback_handler=listener.callback_handler, storage=MemoryTokenStorage())
        async with client(url, auth) as c:
            await c.call_tool("echo", {"text": "one"})
            app.refuse_refresh = True
            app.access.clear()
            assert (await c.call_tool("echo", {"text": "two"}))["content"][0]["text"] == "two"
    assert [g["grant_type"] for g in app.grants] == [
        "authorization_code", "refresh_token", "authorization_code"]
    assert len(opened) == 2 and opened[0] != opened[1]


async def test_a_restart_uses_the_stored_tokens_without_the_browser(
        peer: tuple[Peer, str], tmp_path: Path) -> None:
    app, url = peer
    path = tmp_path / "tokens.json"
    async with client(url, oauth(Browser(), FileTokenStorage(path))) as c:
        await c.call_tool("echo", {"text": "one"})

    class NoBrowser(Browser):
        async def open(self, url: str) -> None:
            raise AssertionError("the stored token should have been used")

    async with client(url, oauth(NoBrowser(), FileTokenStorage(path))) as c:
        result = await c.call_tool("echo", {"text": "again"})
    assert "again" in str(result)
    assert [g["grant_type"] for g in app.grants] == ["authorization_code"]


async def test_a_401_without_auth_is_an_auth_error_and_never_initialize(
        peer: tuple[Peer, str]) -> None:
    app, url = peer
    with pytest.raises(AuthError, match="requires authorization"):
        async with client(url, None) as c:
            await c.list_tools()
    assert app.seen == ["POST /mcp server/discover"]


async def test_an_unsafe_authorization_endpoint_is_never_opened(peer: tuple[Peer, str]) -> None:
    app, url = peer
    app.metadata_overrides["authorization_endpoint"] = "javascript:alert(document.cookie)"
    browser = Browser()
    with pytest.raises(AuthError, match="only http and https"):
        async with client(url, oauth(browser)) as c:
            await c.list_tools()
    assert browser.opened == [] and app.grants == []


async def test_a_metadata_redirect_to_a_link_local_address_is_refused(
        peer: tuple[Peer, str]) -> None:
    app, url = peer
    app.redirects["/.well-known/oauth-protected-resource/mcp"] = (
        "https://169.254.169.254/latest/meta-data")
    browser = Browser()
    with pytest.raises(AuthError, match="link-local"):
        async with client(url, oauth(browser)) as c:
            await c.list_tools()
    assert browser.opened == []


async def test_loopback_metadata_is_refused_when_development_is_turned_off(
        peer: tuple[Peer, str]) -> None:
    app, url = peer
    with pytest.raises(AuthError, match="loopback"):
        async with client(url, oauth(Browser(), allow_loopback=False)) as c:
            await c.list_tools()
    assert not any("well-known" in s for s in app.seen)


async def test_no_token_appears_in_an_error(peer: tuple[Peer, str]) -> None:
    app, url = peer
    clock = Clock()
    async with client(url, oauth(Browser(), clock=clock)) as c:
        await c.call_tool("echo", {"text": "one"})
        app.access.clear()
        app.metadata_overrides["token_endpoint"] = f"{app.base}/nowhere"
        with pytest.raises(AuthError) as caught:
            await c.call_tool("echo", {"text": "two"})
    text = str(caught.value)
    assert "HTTP 404" in text
    assert not any(t in text for t in app.refresh | app.access) and "access-" not in text


async def test_a_sign_in_longer_than_the_probe_timeout_is_waited_for(
        peer: tuple[Peer, str]) -> None:
    app, url = peer

    class SlowUser(Browser):
        async def open(self, url: str) -> None:
            await asyncio.sleep(2.5)  # the user reads the consent page: past two probe windows
            await super().open(url)

    auth = oauth(SlowUser())
    options = ClientOptions(era="auto", timeout=30.0, probe_timeout=1.0)
    async with Client(HTTPConnector(url, auth=auth), options=options) as c:
        await c.call_tool("echo", {"text": "hi"})
    assert "initialize" not in " ".join(app.seen)
    assert auth.authorizing == 0
