"""The loopback redirect listener `mcpkit login` waits on (mcpkit.transports.oauth.redirect):
real connections to 127.0.0.1, as a browser makes them."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest

from mcpkit.errors import AuthError, RedirectError
from mcpkit.transports.oauth.redirect import RedirectListener, can_open_browser, open_in_browser

BOUND = 10.0


async def _get(url: str, method: str = "GET") -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False, timeout=BOUND) as http:
        return await http.request(method, url)


async def test_the_callback_gives_code_state_and_iss() -> None:
    async with RedirectListener(timeout=BOUND) as listener:
        assert listener.redirect_uri == f"http://127.0.0.1:{listener.port}/callback"
        assert listener.port > 0
        waiting = asyncio.create_task(listener.callback_handler())
        page = await _get(f"{listener.redirect_uri}?code=c0de&state=st&iss=http%3A%2F%2Fas")
        assert page.status_code == 200 and "close this tab" in page.text
        assert "c0de" not in page.text
        assert await asyncio.wait_for(waiting, BOUND) == ("c0de", "st", "http://as")


async def test_other_paths_and_methods_leave_it_waiting() -> None:
    async with RedirectListener(timeout=BOUND) as listener:
        base = listener.redirect_uri.removesuffix("/callback")
        assert (await _get(f"{base}/favicon.ico")).status_code == 404
        assert (await _get(f"{listener.redirect_uri}?code=x", "POST")).status_code == 405
        assert (await _get(f"{listener.redirect_uri}?state=only")).status_code == 400
        # A connection that sends nothing holds nobody up.
        _, idle = await asyncio.open_connection("127.0.0.1", listener.port)
        assert (await _get(f"{listener.redirect_uri}?code=late&state=s")).status_code == 200
        assert (await asyncio.wait_for(listener.wait(), BOUND)).code == "late"
        # A reload of a page already answered changes nothing; the next wait is the next
        # authorization's (a step-up, a sign-in after a refused refresh).
        assert (await _get(f"{listener.redirect_uri}?code=other&state=s")).status_code == 200
        assert (await _get(f"{listener.redirect_uri}?code=second&state=t")).status_code == 200
        assert (await asyncio.wait_for(listener.wait(), BOUND)).code == "second"
        idle.close()


async def test_an_error_redirect_is_a_redirect_error_naming_it() -> None:
    async with RedirectListener(timeout=BOUND) as listener:
        waiting = asyncio.create_task(listener.callback_handler())
        await _get(f"{listener.redirect_uri}?error=access_denied&error_description=no+thanks"
                   "&state=s")
        with pytest.raises(RedirectError, match=r"access_denied.*no thanks") as caught:
            await asyncio.wait_for(waiting, BOUND)
        assert caught.value.error == "access_denied"
        assert isinstance(caught.value, AuthError)


async def test_no_answer_in_time_is_a_clear_timeout() -> None:
    async with RedirectListener(timeout=0.05) as listener:
        with pytest.raises(RedirectError, match=r"within 0.05 s.*run the command again") as caught:
            await listener.callback_handler()
        assert caught.value.error == "timeout"


async def test_the_port_is_closed_after_the_block() -> None:
    async with RedirectListener(timeout=BOUND) as listener:
        port = listener.port
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)


def test_only_loopback_and_a_positive_timeout() -> None:
    with pytest.raises(ValueError, match="loopback"):
        RedirectListener(host="0.0.0.0")
    with pytest.raises(ValueError, match="above zero"):
        RedirectListener(timeout=0)


def test_without_a_display_the_url_is_printed_and_no_browser_runs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert not can_open_browser()
    said: list[str] = []
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, **_: opened.append(url) or True)
    open_in_browser("http://127.0.0.1:1/authorize?x=1", said.append)
    assert said == ["Open this URL in a browser to sign in:\n  http://127.0.0.1:1/authorize?x=1"]
    assert opened == []
    monkeypatch.setenv("BROWSER", "true")
    assert can_open_browser()
    open_in_browser("http://127.0.0.1:1/a", said.append, browser=False)
    assert said[-1].startswith("Open this URL") and opened == []
