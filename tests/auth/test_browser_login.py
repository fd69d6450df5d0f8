"""A real browser sign-in: `mcpkit login URL --no-browser` prints the authorization URL, and
headless Chromium (driven over DevTools, `tests/helpers/devtools.py`) opens it, fills in
node-oidc-provider's own login page, approves its consent page, and follows the redirect to
the CLI's loopback listener, whose page says the sign-in is done. The CLI then holds tokens a
later `mcpkit call` uses. The browser reaches 127.0.0.1 only (the provider's pages name a web
font elsewhere: that name never resolves)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from helpers.auth.as_process import ProtectedServer
from helpers.auth.oidc_process import OIDCProvider
from helpers.auth.signin_cli import mcpkit
from helpers.devtools import LOOPBACK_ONLY, Page, launched

WAIT = 60.0


async def submitted(page: Page, script: str) -> str:
    """Run `script` (which submits a form) and wait for the next page; its text."""
    page.browser.events.clear()
    await page.evaluate(script)
    await page.browser.event("Page.loadEventFired", page.session)
    return str(await page.evaluate("document.body.innerText"))


async def test_chromium_signs_in_through_the_providers_pages(
        oidc: OIDCProvider, rs: ProtectedServer, tmp_path: Path) -> None:
    data = tmp_path / "data"
    login = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit", "login", rs.url, "--no-browser", "--timeout", "120",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MCPKIT_DATA_DIR": str(data), "NO_PROXY": "127.0.0.1"})
    assert login.stderr is not None and login.stdout is not None
    try:
        said = b""
        while b"/auth?" not in said:
            said += await asyncio.wait_for(login.stderr.readline(), WAIT)
        url = said.decode().split("\n  ", 1)[1].strip()
        assert url.startswith(f"{oidc.issuer}/auth?")
        async with launched(tmp_path / "profile", LOOPBACK_ONLY) as browser:
            page = await browser.new_page()
            await page.open(url)
            assert "Sign-in" in await page.evaluate("document.title")
            shown = await submitted(page, """
                document.querySelector('input[name=login]').value = 'carol';
                document.querySelector('input[name=password]').value = 'any password';
                document.querySelector('form').submit();""")
            assert "mcp:read" in shown  # the consent page names the scopes asked for
            done = await submitted(page, "document.querySelector('form').submit()")
            assert "Signed in. You can close this tab" in done
            location = await page.evaluate("location.href")
            assert location.startswith("http://127.0.0.1:") and "/callback?" in location
        out = await asyncio.wait_for(login.stdout.read(), WAIT)
        assert await asyncio.wait_for(login.wait(), WAIT) == 0
        assert out.decode().startswith(f"Signed in to {rs.url} at {oidc.issuer}")
    finally:
        if login.returncode is None:
            login.kill()
            await login.wait()
    call = await asyncio.to_thread(mcpkit, data, "call", rs.url, "whoami")
    assert call.returncode == 0, call.stderr
    assert call.stdout.startswith("carol via ")
