"""A stand-in for the user at a browser, for an authorization server with login and consent
pages (node-oidc-provider's): `python form_login.py URL [LOGIN]` loads the authorization URL,
follows redirects with the cookies a browser keeps, and submits each page's form as a person
would (LOGIN and any password on the login page, "Continue" on the consent page) until the
redirect reaches the client's loopback listener. Every hop must be on 127.0.0.1: the tests
reach nothing else. Tests point $BROWSER at it, or call `sign_in_at` (in a thread)."""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

HOPS = 16
__all__ = ["sign_in_at"]


class _Form(HTMLParser):
    """The first form of a page: its action and the values it would submit."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action, self._inside = named.get("action", ""), True
        elif tag == "input" and self._inside and "name" in named:
            self.fields[named["name"]] = named.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


def sign_in_at(url: str, login: str = "alice") -> int:
    """Walk the sign-in from `url` to the redirect listener; the last page's status."""
    with httpx.Client(trust_env=False, timeout=10, follow_redirects=False) as http:
        method, data = "GET", None
        for _ in range(HOPS):
            if urlsplit(url).hostname != "127.0.0.1":
                raise SystemExit(f"form_login.py: refusing to load {urlsplit(url).netloc!r}; "
                                 "tests stay on 127.0.0.1")
            answer = http.request(method, url, data=data)
            if answer.is_redirect:
                url, method, data = urljoin(url, answer.headers["location"]), "GET", None
                continue
            form = _Form()
            form.feed(answer.text)
            if answer.status_code != 200 or form.action is None:
                return answer.status_code
            fields = dict(form.fields)
            if "login" in fields or form.fields.get("prompt") == "login":
                fields.update(login=login, password="any password")
            url, method, data = urljoin(url, form.action), "POST", fields
    raise SystemExit("form_login.py: too many pages and redirects")


if __name__ == "__main__":
    status = sign_in_at(sys.argv[1], *sys.argv[2:3])
    sys.exit(0 if status == 200 else f"form_login.py: the last page answered {status}")
