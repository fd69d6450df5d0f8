"""The requests the OAuth client makes to authorization servers, each checked before it leaves.

`OAuthHTTP` wraps an httpx client for one authorization event:

- `get_json`: a metadata document (PRM, AS metadata). Before every hop the URL passes
  `mcpkit.auth.client_targets.check_fetch_url` (http(s) only, https off loopback) and the
  host's resolved addresses pass `check_address` (no private, link-local or reserved ranges;
  loopback in development only); at most `MAX_HOPS` redirects are followed, each checked the
  same way; the body is bounded (`MAX_DOCUMENT_BYTES`). A 4xx is an answer ("not here"), so
  the caller tries its next URL;
- `post_form`: a token or registration request, to a URL checked the same way and never
  redirected (a token request replayed elsewhere would hand the code to a third party);
- `client_auth`: how the client authenticates at the token endpoint:
  `client_secret_basic` (RFC 6749 §2.3.1: the id and secret form-encoded, then Basic),
  `client_secret_post`, `none` (the id in the body), `private_key_jwt` (RFC 7523 §2.2, a
  short-lived assertion signed with joserfc).

Name resolution here is a check, not a pin: the connection resolves again, so a name that
changes its answer between the two is a residual risk, which an egress proxy closes
(docs/auth.md). Nothing here logs or repeats a token; an error names the URL without its query.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, urljoin, urlsplit

import httpx
import orjson

from mcpkit.auth.client_discovery import ASMetadata, as_metadata_urls, read_as_metadata
from mcpkit.auth.client_targets import check_address, check_fetch_url
from mcpkit.errors import AuthError
from mcpkit.store.tokens import ClientInfo

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_HOPS",
    "OAuthHTTP",
    "client_auth",
]

MAX_HOPS: Final = 3
MAX_DOCUMENT_BYTES: Final = 1024 * 1024


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class OAuthHTTP:
    """Checked requests to authorization servers through one httpx client."""

    def __init__(self, client: httpx.AsyncClient, *, allow_loopback: bool,
                 allow_private: bool = False) -> None:
        self.client = client
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private

    async def _check(self, url: str) -> None:
        host = check_fetch_url(url, allow_loopback=self.allow_loopback)
        if self.allow_private:
            return
        try:
            ipaddress.ip_address(host.strip("[]"))
            return  # a literal address: already checked
        except ValueError:
            pass
        port = urlsplit(url).port or (443 if url.lower().startswith("https") else 80)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port)
        except OSError as exc:
            raise AuthError(f"{_shown(url)}: the host does not resolve ({exc})") from None
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
            check_address(address, url, allow_loopback=self.allow_loopback)

    async def _read(self, response: httpx.Response, url: str) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise AuthError(f"{_shown(url)} answered more than {MAX_DOCUMENT_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def get_json(self, url: str) -> tuple[int, Any]:
        """(status, the decoded JSON document or None) of a GET, redirects checked per hop."""
        for _hop in range(MAX_HOPS + 1):
            await self._check(url)
            request = self.client.build_request("GET", url, headers={"accept": "application/json"})
            try:
                response = await self.client.send(request, stream=True, follow_redirects=False)
            except httpx.HTTPError as exc:
                raise AuthError(f"fetching {_shown(url)} failed ({type(exc).__name__})") from None
            try:
                location = response.headers.get("location")
                if response.status_code in (301, 302, 303, 307, 308) and location:
                    url = urljoin(url, location)
                    continue
                body = await self._read(response, url)
            finally:
                await response.aclose()
            if response.status_code != 200:
                return response.status_code, None
            try:
                return 200, orjson.loads(body)
            except orjson.JSONDecodeError:
                raise AuthError(f"{_shown(url)} answered 200 with a body that is not JSON") from None
        raise AuthError(f"{_shown(url)}: more than {MAX_HOPS} redirects; not followed further")

    async def as_metadata(self, issuer: str) -> ASMetadata | None:
        """The metadata of the authorization server `issuer` (RFC 8414, then OIDC Discovery),
        its `issuer` checked exactly; None when none of its well-known URLs has it."""
        for url in as_metadata_urls(issuer):
            status, doc = await self.get_json(url)
            if status == 200:
                return read_as_metadata(doc, url, issuer)
        return None

    async def post_form(self, url: str, data: Mapping[str, str], headers: Mapping[str, str],
                        *, json_body: Any = None, dpop: Any = None
                        ) -> tuple[int, Any, httpx.Headers]:
        """(status, the decoded JSON answer or None, the headers) of a POST, not redirected.
        With `dpop` (a `DPoPSigner`), the request carries a proof, and a `use_dpop_nonce`
        answer is retried once with a proof carrying the nonce (RFC 9449 §8)."""
        await self._check(url)
        for attempt in range(2):
            if json_body is not None:
                request = self.client.build_request(
                    "POST", url, content=orjson.dumps(json_body),
                    headers={"content-type": "application/json", "accept": "application/json",
                             **headers})
            else:
                request = self.client.build_request(
                    "POST", url, data=dict(data), headers={"accept": "application/json",
                                                           **headers})
            if dpop is not None:
                dpop.sign_token_request(request)
            try:
                response = await self.client.send(request, stream=True, follow_redirects=False)
            except httpx.HTTPError as exc:
                raise AuthError(
                    f"the request to {_shown(url)} failed ({type(exc).__name__})") from None
            try:
                body = await self._read(response, url)
            finally:
                await response.aclose()
            doc: Any = None
            if body:
                try:
                    doc = orjson.loads(body)
                except orjson.JSONDecodeError:
                    doc = None
            if dpop is not None:
                dpop.learn(response)
                if (attempt == 0 and response.status_code == 400 and isinstance(doc, dict)
                        and doc.get("error") == "use_dpop_nonce"
                        and response.headers.get("dpop-nonce")):
                    continue
            break
        return response.status_code, doc, response.headers


def client_auth(client: ClientInfo, method: str, *, audience: str,
                private_key: Any = None, private_key_alg: str | None = None,
                signing_algs: Any = None, now: float | None = None
                ) -> tuple[dict[str, str], dict[str, str]]:
    """(headers, form fields) that authenticate `client` at a token endpoint by `method`;
    a `private_key_jwt` assertion is signed with `private_key_alg`, else the first of the
    AS's `signing_algs` the key fits (`grants.signing_alg_for`)."""
    if method == "client_secret_basic":
        if client.client_secret is None:
            raise AuthError(f"client_secret_basic needs a client secret for {client.client_id!r}")
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode()}, {}
    if method == "client_secret_post":
        if client.client_secret is None:
            raise AuthError(f"client_secret_post needs a client secret for {client.client_id!r}")
        return {}, {"client_id": client.client_id, "client_secret": client.client_secret}
    if method == "none":
        return {}, {"client_id": client.client_id}
    if method == "private_key_jwt":
        if private_key is None:
            raise AuthError("private_key_jwt needs the client's private key (private_key=)")
        from mcpkit.transports.oauth.grants import (
            CLIENT_ASSERTION_TYPE,
            ClientCredentials,
            client_assertion,
            import_private_key,
        )

        try:
            key = import_private_key(private_key, client.client_id)
            assertion = client_assertion(
                ClientCredentials(client.client_id, private_key=key,
                                  signing_alg=private_key_alg),
                {"issuer": audience, "token_endpoint_auth_signing_alg_values_supported":
                 list(signing_algs or ())}, time.time() if now is None else now)
        except ValueError as exc:
            raise AuthError(str(exc)) from None
        return {}, {"client_id": client.client_id, "client_assertion_type": CLIENT_ASSERTION_TYPE,
                    "client_assertion": assertion}
    raise AuthError(f"the token endpoint auth method {method!r} is not supported (use "
                    "client_secret_basic, client_secret_post, none or private_key_jwt)")
