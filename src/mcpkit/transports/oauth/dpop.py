"""DPoP on the client's requests: a proof on every token and resource request, and the nonce
retries both kinds of server may ask for (RFC 9449 sections 5, 7, 8 and 9).

`DPoPSigner` holds one `DPoPKey` and the latest `DPoP-Nonce` each server sent, by origin (the
authorization server and the MCP server keep nonces of their own). It is the one object the
OAuth flows share: the token requests of `mcpkit.transports.oauth.grants` and of the
authorization code flow put a proof on the token endpoint POST, and the resource requests put
`Authorization: DPoP <token>` and a proof carrying the token's hash.

A server that wants a nonce answers with one: the token endpoint with 400 and
`{"error": "use_dpop_nonce"}`, the resource server with 401 and `WWW-Authenticate: DPoP
error="use_dpop_nonce"`, both with a `DPoP-Nonce` header. `nonce_challenge` recognises both;
the flow sends the request again, once, with a new proof that carries the nonce. Any response
may also bring a fresh nonce for next time (`learn`).

Every proof has a fresh `jti`: a request sent twice (a nonce retry, a stream resumed) is
signed twice.

Imports: httpx, `mcpkit.auth.dpop` and the standard library.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

import httpx

from mcpkit.auth.dpop import DPoPKey

__all__ = [
    "DPOP_NONCE",
    "DPoPSigner",
    "nonce_challenge",
]

DPOP_NONCE: Final = "dpop-nonce"
DPOP: Final = "dpop"
USE_DPOP_NONCE: Final = "use_dpop_nonce"


def _origin(url: httpx.URL | str) -> str:
    parts = urlsplit(str(url))
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def nonce_challenge(response: httpx.Response) -> str | None:
    """The nonce `response` asks the next proof to carry, when it is a `use_dpop_nonce`
    challenge (a token endpoint's 400 or a resource server's 401); None otherwise.

    The token endpoint's JSON body is read only when it is already loaded (the flows read
    token responses in full before asking)."""
    nonce: str | None = response.headers.get(DPOP_NONCE)
    if not nonce:
        return None
    if response.status_code == 401:
        for challenge in response.headers.get_list("www-authenticate"):
            if challenge.lower().startswith("dpop") and USE_DPOP_NONCE in challenge:
                return nonce
        return None
    if response.status_code == 400:
        try:
            body = json.loads(response.content)
        except (ValueError, httpx.ResponseNotRead):
            return None
        if isinstance(body, dict) and body.get("error") == USE_DPOP_NONCE:
            return nonce
    return None


class DPoPSigner:
    """One client's DPoP key, and the nonces its servers handed out.

    `clock` is the time proofs are stamped with (seconds); tests hand in their own.
    """

    def __init__(self, key: DPoPKey | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.key = key if key is not None else DPoPKey.generate()
        self._clock = clock
        self._nonces: dict[str, str] = {}

    @property
    def thumbprint(self) -> str:
        """The key's RFC 7638 thumbprint: the `cnf.jkt` the AS binds tokens to."""
        return self.key.thumbprint()

    def nonce_for(self, url: httpx.URL | str) -> str | None:
        """The latest nonce the server at `url`'s origin sent, if any."""
        return self._nonces.get(_origin(url))

    def learn(self, response: httpx.Response) -> None:
        """Keep the `DPoP-Nonce` a response carries, for the next proof to that origin."""
        nonce = response.headers.get(DPOP_NONCE)
        if nonce:
            self._nonces[_origin(response.request.url)] = nonce

    def proof(self, method: str, url: httpx.URL | str, access_token: str | None = None) -> str:
        """A fresh proof for one request to `url`, with the nonce that origin last sent."""
        return self.key.proof(method, str(url), nonce=self.nonce_for(url),
                              access_token=access_token, now=self._clock())

    def sign_token_request(self, request: httpx.Request) -> httpx.Request:
        """Put a proof on a token endpoint request (no `ath`: there is no token yet)."""
        request.headers[DPOP] = self.proof(request.method, request.url)
        return request

    def sign_resource_request(self, request: httpx.Request, access_token: str) -> httpx.Request:
        """Present a DPoP-bound token: `Authorization: DPoP <token>` and a proof whose `ath`
        is the token's hash."""
        request.headers["authorization"] = f"DPoP {access_token}"
        request.headers[DPOP] = self.proof(request.method, request.url, access_token)
        return request

    def retry_after(self, response: httpx.Response) -> bool:
        """True when `response` is a nonce challenge: the nonce is kept and the caller sends
        its request again, signed anew."""
        nonce = nonce_challenge(response)
        if nonce is None:
            return False
        self._nonces[_origin(response.request.url)] = nonce
        return True

    def __repr__(self) -> str:
        return f"DPoPSigner(alg={self.key.alg!r}, jkt={self.thumbprint!r})"
