"""The loopback redirect listener of a native OAuth client (RFC 8252 §7.3), and the browser.

`mcpkit login` and any program on the user's machine get the authorization response this way:
a listener on 127.0.0.1, on a port the system picks (never a fixed one another program could
hold), with the path `/callback`. The browser is sent to the authorization URL; the
authorization server redirects it back here; the listener answers with a short page the user
can close, and hands `(code, state, iss)` to the OAuth flow, which checks `state` and `iss`
(`mcpkit.transports.oauth.flow`). An error answer (`error=access_denied`) or no answer in time is a
`RedirectError` naming what happened, so a login that cannot finish ends with one clear line
instead of waiting for ever. One listener serves any number of authorizations in turn (a
step-up, a new sign-in after a refused refresh): each `wait` takes one answer, and the next
waits for the next one; a reload of a page already answered changes nothing.

The listener speaks just enough HTTP/1.1 for a browser's GET: a request head of at most
16 KiB read within a few seconds, every other path answered 404 (a browser asks for
`/favicon.ico`), and one response per connection. It binds 127.0.0.1 only, never a wildcard
address: the code is for this machine. Nothing it prints or raises holds the code.

Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qs, urlsplit

from mcpkit.errors import RedirectError

__all__ = [
    "CALLBACK_PATH",
    "AuthorizationResponse",
    "RedirectError",
    "RedirectListener",
    "can_open_browser",
    "open_in_browser",
]

CALLBACK_PATH: Final = "/callback"
_HEAD_LIMIT: Final = 16 * 1024
_HEAD_SECONDS: Final = 5.0
"""How long one connection may take to send its request head (a stuck peer holds nothing)."""

_DONE_PAGE: Final = (b"<!doctype html><meta charset=utf-8><title>mcpkit</title>"
                     b"<p>Signed in. You can close this tab and return to the terminal.</p>")
_ERROR_PAGE: Final = (b"<!doctype html><meta charset=utf-8><title>mcpkit</title>"
                      b"<p>The authorization server refused the sign-in. The terminal says why."
                      b"</p>")


@dataclass(frozen=True)
class AuthorizationResponse:
    """The parameters of the redirect (RFC 6749 §4.1.2, RFC 9207): `iss` is None when the
    authorization server did not send it (the flow decides whether that is allowed)."""

    code: str
    state: str | None
    iss: str | None

    def __repr__(self) -> str:  # the code is a credential until redeemed
        return f"AuthorizationResponse(code=..., state={self.state!r}, iss={self.iss!r})"


class RedirectListener:
    """`async with RedirectListener(timeout=300) as listener:` binds 127.0.0.1 on a free port;
    `listener.redirect_uri` is what the client registers and sends; `await
    listener.callback_handler()` waits for the browser to come back (the shape
    `mcpkit.transports.oauth.flow.OAuth` takes as its `callback_handler`)."""

    def __init__(self, *, timeout: float = 300.0, port: int = 0, host: str = "127.0.0.1") -> None:
        if not timeout > 0:
            raise ValueError(f"the redirect listener's timeout must be above zero, not {timeout}")
        if host not in ("127.0.0.1", "::1"):
            raise ValueError(f"the redirect listener binds a loopback address, not {host!r}")
        self.timeout = timeout
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._answer: asyncio.Future[AuthorizationResponse] | None = None
        self._taken: set[str | None] = set()
        """The `state` of every answer a `wait` already returned (a reload brings it again)."""

    async def __aenter__(self) -> RedirectListener:
        self._answer = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, self._host, self._port)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None
        if self._answer is not None and not self._answer.done():
            self._answer.cancel()

    @property
    def port(self) -> int:
        return self._port

    @property
    def redirect_uri(self) -> str:
        if self._server is None:
            raise RuntimeError("the redirect listener is not listening; use `async with`")
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self._port}{CALLBACK_PATH}"

    async def wait(self) -> AuthorizationResponse:
        """The authorization response, once the browser brings it."""
        if self._answer is None:
            raise RuntimeError("the redirect listener is not listening; use `async with`")
        try:
            answer = await asyncio.wait_for(asyncio.shield(self._answer), self.timeout)
        except RedirectError:
            self._answer = asyncio.get_running_loop().create_future()
            raise
        except TimeoutError:
            raise RedirectError(
                f"no answer reached {self.redirect_uri} within {self.timeout:g} s: the sign-in "
                "was not finished in the browser; run the command again (and open the URL it "
                "prints if no browser opened)", error="timeout") from None
        self._taken.add(answer.state)
        self._answer = asyncio.get_running_loop().create_future()  # the next authorization's
        return answer

    async def callback_handler(self) -> tuple[str, str | None, str | None]:
        """`(code, state, iss)`, for the OAuth flow's `callback_handler`."""
        answer = await self.wait()
        return answer.code, answer.state, answer.iss

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_SECONDS)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError):
            writer.close()
            return
        status, page = self._take(head[:_HEAD_LIMIT])
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}
        writer.write(f"HTTP/1.1 {status} {reason[status]}\r\nContent-Type: text/html; "
                     f"charset=utf-8\r\nContent-Length: {len(page)}\r\nCache-Control: no-store"
                     "\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
                     .encode("ascii") + page)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def _take(self, head: bytes) -> tuple[int, bytes]:
        """The answer to one request head, and the authorization response it may carry."""
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0] or rest
        parts = urlsplit(target)
        if parts.path != CALLBACK_PATH:
            return 404, b"not found"
        if method != "GET":
            return 405, b"GET only"
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        assert self._answer is not None
        if self._answer.done() or query.get("state") in self._taken:
            return 200, _DONE_PAGE  # a reload of the page: the first answer stands
        if "error" in query:
            self._taken.add(query.get("state"))
            self._answer.set_exception(_refused(query))
            return 200, _ERROR_PAGE
        if not query.get("code"):
            return 400, b"no code in this request"
        self._answer.set_result(AuthorizationResponse(query["code"], query.get("state"),
                                                      query.get("iss")))
        return 200, _DONE_PAGE


def _refused(query: dict[str, str]) -> RedirectError:
    error = query["error"][:64]
    description = query.get("error_description", "")[:200]
    said = f" ({description})" if description else ""
    return RedirectError(f"the authorization server refused the sign-in: {error!r}{said}",
                         error=error)


def can_open_browser() -> bool:
    """Whether a browser can be shown here: False on a Linux or BSD host with no display and
    no $BROWSER (an SSH session), where `webbrowser` would pick a text browser or nothing."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def open_in_browser(url: str, say: Callable[[str], None], *, browser: bool = True) -> None:
    """Send the user to `url`: always say it, so a browser that does not come up is no dead
    end, and open it in the browser when one can be shown (and `browser`).

    The browser is started from a thread of its own and not waited for: `webbrowser` waits for
    a `$BROWSER` command to exit, and a browser that stays open must not hold up the listener
    that its redirect comes back to."""
    if browser and can_open_browser():
        say(f"Opening the browser to sign in. If it does not open, visit:\n  {url}")
        threading.Thread(target=_open, args=(url,), name="mcpkit-browser", daemon=True).start()
    else:
        say(f"Open this URL in a browser to sign in:\n  {url}")


def _open(url: str) -> None:
    with contextlib.suppress(webbrowser.Error, OSError):
        webbrowser.open(url, new=1, autoraise=True)
