"""The user's browser through a sign-in at the authorization proxy, walked with httpx: the
proxy's consent page (allow or deny), then the upstream's login and consent pages
(node-oidc-provider's: any login name signs in; `abort` cancels at its login page), until the
browser is sent to the client's redirect URI, which is returned without being loaded. The
cookies a browser keeps are kept. Every hop stays on 127.0.0.1.

Also a raw client of the proxy for the tests that speak OAuth by hand: `register`,
`authorization_url`, `redeem`."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx

__all__ = ["Forms", "RawClient", "Walk", "list_tools", "pkce", "query_of"]

HOPS = 20


class Forms(HTMLParser):
    """Every form of a page: (action, fields)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, dict[str, str]]] = []
        self.links: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append((named.get("action", ""), {}))
            self._inside = True
        elif tag == "input" and self._inside and "name" in named:
            self.forms[-1][1][named["name"]] = named.get("value", "")
        elif tag == "a" and "href" in named:
            self.links.append(named["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


@dataclass
class Walk:
    """One browser: its cookies, and the pages it saw."""

    http: httpx.Client = field(default_factory=lambda: httpx.Client(
        trust_env=False, timeout=15, follow_redirects=False))
    pages: list[httpx.Response] = field(default_factory=list)

    def close(self) -> None:
        self.http.close()

    def to(self, url: str, stop_at: str, *, login: str = "alice", decide: str = "allow",
           upstream: str = "allow", route: Callable[[str], str] | None = None) -> str:
        """Walk from `url` until a redirect to `stop_at`; that URL. `decide` is the answer
        on the proxy's consent page, `upstream` ("allow" or "abort") at the upstream's;
        `route` picks where each request really goes (a balancer's choice of replica)."""
        method, data = "GET", None
        for _ in range(HOPS):
            if route is not None:
                url = route(url)
            assert urlsplit(url).hostname == "127.0.0.1", url
            answer = self.http.request(method, url, data=data)
            self.pages.append(answer)
            if answer.is_redirect:
                url, method, data = urljoin(url, answer.headers["location"]), "GET", None
                if url.startswith(stop_at):
                    return url
                continue
            forms = Forms()
            forms.feed(answer.text)
            assert answer.status_code == 200 and forms.forms, (answer.status_code,
                                                               answer.text[:500])
            chosen = self._choose(forms, decide, upstream)
            if chosen is None:  # aborting at the upstream: its cancel link
                abort = next(link for link in forms.links if "abort" in link)
                url, method, data = urljoin(url, abort), "GET", None
                continue
            action, fields = chosen
            if "login" in fields:
                fields.update(login=login, password="any password")
            url, method, data = urljoin(url, action), "POST", fields
        raise AssertionError("too many pages and redirects")

    @staticmethod
    def _choose(forms: Forms, decide: str, upstream: str) -> tuple[str, dict[str, str]] | None:
        ours = [f for f in forms.forms if "decision" in f[1]]
        if ours:
            return next(f for f in ours if f[1]["decision"] == decide)
        if upstream == "abort":
            return None
        return forms.forms[0][0], dict(forms.forms[0][1])


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


@dataclass
class RawClient:
    """An OAuth client of the proxy, spoken by hand."""

    origin: str
    redirect_uri: str = "http://127.0.0.1:9/callback"
    client_id: str = ""
    client_secret: str | None = None

    def register(self, **metadata: Any) -> dict[str, Any]:
        body = {"redirect_uris": [self.redirect_uri], "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "client_name": "raw test client", **metadata}
        answer = httpx.post(f"{self.origin}/oauth/register", json=body, trust_env=False)
        assert answer.status_code == 201, answer.text
        doc = dict(answer.json())
        self.client_id, self.client_secret = doc["client_id"], doc.get("client_secret")
        return doc

    def authorization_url(self, challenge: str, **params: str) -> str:
        query = {"response_type": "code", "client_id": self.client_id,
                 "redirect_uri": self.redirect_uri, "code_challenge": challenge,
                 "code_challenge_method": "S256", "state": "st-1", "scope": "mcp:read",
                 **params}
        return f"{self.origin}/oauth/authorize?" + urlencode(
            {k: v for k, v in query.items() if v is not None})

    def token(self, **form: str) -> httpx.Response:
        body = {"client_id": self.client_id, **form}
        auth = (self.client_id, self.client_secret) if self.client_secret else None
        return httpx.post(f"{self.origin}/oauth/token", data=body, auth=auth, trust_env=False)

    def redeem(self, back: str, verifier: str) -> httpx.Response:
        code = parse_qs(urlsplit(back).query)["code"][0]
        return self.token(grant_type="authorization_code", code=code,
                          redirect_uri=self.redirect_uri, code_verifier=verifier)


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {}}}}


def list_tools(url: str, token: str | None = None) -> httpx.Response:
    """A 2026-07-28 tools/list at the MCP endpoint `url`, with `token` as the bearer token."""
    headers = {"accept": "application/json, text/event-stream", "mcp-method": "tools/list",
               "mcp-protocol-version": "2026-07-28"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(url, json=LIST_TOOLS, headers=headers, trust_env=False)

