"""A real browser through the authorization proxy: `mcpkit login URL --no-browser` prints the
proxy's authorization URL, and headless Chromium (over DevTools, `tests/helpers/devtools.py`) opens
it, reads the proxy's consent page and allows, signs in on node-oidc-provider's login page,
approves its consent page, and follows the redirects back to the CLI's listener. The
browser keeps and sends the proxy's cookie as a browser does (SameSite=Lax across the
provider's redirect), and the page's policy lets the form go through. A later `mcpkit call`
uses the tokens. The browser reaches 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.proxy_process import ProxiedServer, upstream_for
from helpers.auth.signin_cli import mcpkit
from helpers.devtools import LOOPBACK_ONLY, Page, launched
from helpers.services import free_port

WAIT = 60.0
PORT = free_port()


@pytest.fixture(scope="module")
def upstream() -> Iterator[OIDCProvider]:
    provider = upstream_for(PORT)
    yield provider
    provider.stop()


@pytest.fixture(scope="module")
def proxied(upstream: OIDCProvider) -> Iterator[ProxiedServer]:
    yield from ProxiedServer.serving(upstream, PORT)


async def submitted(page: Page, script: str) -> str:
    """Run `script` (which submits a form) and wait for the next page; its text."""
    page.browser.events.clear()
    await page.evaluate(script)
    await page.browser.event("Page.loadEventFired", page.session)
    return str(await page.evaluate("document.body.innerText"))


async def test_chromium_signs_in_through_the_proxys_consent_and_the_providers_pages(
        proxied: ProxiedServer, tmp_path: Path) -> None:
    data = tmp_path / "data"
    login = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "login", proxied.url, "--no-browser", "--timeout",
        "120", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MCPKIT_DATA_DIR": str(data), "NO_PROXY": "127.0.0.1"})
    assert login.stderr is not None and login.stdout is not None
    try:
        said = b""
        while b"/oauth/authorize?" not in said:
            said += await asyncio.wait_for(login.stderr.readline(), WAIT)
        url = said.decode().split("\n  ", 1)[1].strip()
        assert url.startswith(f"{proxied.origin}/oauth/authorize?")
        async with launched(tmp_path / "profile", LOOPBACK_ONLY) as browser:
            page = await browser.new_page()
            await page.open(url)
            shown = str(await page.evaluate("document.body.innerText"))
            assert "Allow access to The proxied test server?" in shown
            assert "not verified" in shown and "mcp:read" in shown
            login_page = await submitted(page, "document.forms[0].submit()")  # Allow
            assert "Sign-in" in await page.evaluate("document.title"), login_page
            consent = await submitted(page, """
                document.querySelector('input[name=login]').value = 'dana';
                document.querySelector('input[name=password]').value = 'any password';
                document.querySelector('form').submit();""")
            assert "Authorize" in consent or "consent" in consent.lower()
            done = await submitted(page, "document.querySelector('form').submit()")
            assert "Signed in. You can close this tab" in done
        out = await asyncio.wait_for(login.stdout.read(), WAIT)
        assert await asyncio.wait_for(login.wait(), WAIT) == 0
        assert out.decode().startswith(f"Signed in to {proxied.url} at {proxied.origin}")
    finally:
        if login.returncode is None:
            login.kill()
            await login.wait()
    call = await asyncio.to_thread(mcpkit, data, "call", proxied.url, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.startswith("dana via mcp-") and "dana@example.test" in call.stdout
