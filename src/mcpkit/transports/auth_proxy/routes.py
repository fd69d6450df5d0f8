"""`ProxyRoutes`: the authorization proxy's endpoints inside the HTTP app, and the resource
server its tokens are checked by.

`HTTPApp` builds one when `HTTPOptions.auth` is an `AuthProxy` (`mcpkit.auth.proxy`). Its
paths are answered before the MCP endpoint's, after the `Host` check:

| path | what |
| --- | --- |
| `/.well-known/oauth-authorization-server` | the RFC 8414 metadata |
| `/oauth/jwks` | the public keys of its access tokens |
| `/oauth/register` | Dynamic Client Registration (RFC 7591) |
| `/oauth/authorize` | a client's authorization request: checked, then the consent page |
| `/oauth/consent` | the user's decision (POST, CSRF-checked); allowed, the browser goes upstream |
| `/oauth/callback` | the upstream's answer: its code exchanged, a code of the proxy's issued |
| `/oauth/token`, `/oauth/revoke` | tokens (authorization code, refresh with rotation), RFC 7009 (`mcpkit.transports.auth_proxy.tokens`) |

The MCP endpoint itself is protected by the ordinary `AuthGate` with a `ProtectedResource`
whose verifier reads the proxy's own tokens (`ProxyVerifier`), so the Protected Resource
Metadata names the proxy as the authorization server and every check of a token (issuer,
audience, time, scopes per tool) is the one every protected server makes.

State lives in the server's `Store` (`mcpkit.transports.auth_proxy.state`), keys come from its
state key ring, so replicas sharing both serve any step of any sign-in. Nothing here logs a
code, a token, a secret or a cookie.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from mcpkit.auth.client_targets import is_loopback_host
from mcpkit.auth.proxy import consent
from mcpkit.auth.proxy.authorize import (
    check_request,
    client_redirect,
    parse_query,
    redirect_with,
)
from mcpkit.auth.proxy.clients import (
    ClientRecord,
    check_document_url,
    client_from_document,
    client_from_registration,
)
from mcpkit.auth.proxy.config import AuthProxy
from mcpkit.auth.proxy.metadata import authorization_server_metadata, metadata_path
from mcpkit.auth.proxy.tokens import SIGNING_PURPOSE, SigningKeys, digest, pkce_challenge
from mcpkit.errors import AuthError, OAuthRequestError, StoreUnavailableError
from mcpkit.protocol.http import HostPolicy, read_headers
from mcpkit.protocol.http_refusals import forbidden
from mcpkit.transports.auth_proxy.http import (
    CORS,
    NO_STORE,
    header,
    read_body,
    send_error,
    send_json,
    send_page,
    send_redirect,
)
from mcpkit.transports.auth_proxy.state import ProxyState
from mcpkit.transports.auth_proxy.upstream import UpstreamClient
from mcpkit.transports.http_server.endpoint import Receive, Scope, Send, refuse

__all__ = ["ProxyRoutes"]

log = logging.getLogger("mcpkit.auth.proxy")

_FORM_LIMIT: Final = 16 * 1024
_CSRF_PURPOSE: Final = b"mcpkit authorization proxy consent"
_COOKIE_AGE_S: Final = 30 * 86400.0
_TRACKED: Final = 10_000
"""Most client addresses whose request rate is counted at once."""
_UPSTREAM_DENIALS: Final = frozenset({"access_denied", "login_required", "consent_required",
                                      "interaction_required", "account_selection_required"})


class _RateWindow:
    """At most `limit` events per address per minute, in this process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._seen: OrderedDict[str, tuple[int, int]] = OrderedDict()

    def allow(self, address: str, now: float) -> bool:
        minute = int(now // 60)
        start, count = self._seen.pop(address, (minute, 0))
        if start != minute:
            start, count = minute, 0
        self._seen[address] = (start, count + 1)
        while len(self._seen) > _TRACKED:
            self._seen.popitem(last=False)
        return count < self.limit


class ProxyRoutes:
    """The endpoints of one `AuthProxy` (see the module docstring)."""

    def __init__(self, server: Any, proxy: AuthProxy, policy: HostPolicy) -> None:
        from mcpkit.transports.auth_proxy.tokens import ProxyVerifier, TokenEndpoints

        self.server = server
        self.proxy = proxy
        self.policy = policy
        self.limits = proxy.limits
        self.upstream = UpstreamClient(proxy.upstream, proxy.limits, proxy.callback_url)
        self.secure = proxy.issuer_url.startswith("https://")
        self.loopback = is_loopback_host(urlsplit(proxy.issuer_url).hostname or "")
        self.tokens = TokenEndpoints(self)
        self.verifier = ProxyVerifier(self)
        self.resource = proxy.protected_resource(self.verifier)
        base = urlsplit(proxy.issuer_url).path.rstrip("/") + "/oauth/"
        self._routes = {
            metadata_path(proxy.issuer_url): self._metadata,
            base + "jwks": self._jwks,
            base + "register": self._register,
            base + "authorize": self._authorize,
            base + "consent": self._consent,
            base + "callback": self._callback,
            base + "token": self.tokens.token,
            base + "revoke": self.tokens.revoke,
        }
        self._registrations = _RateWindow(proxy.limits.registrations_per_minute)
        self._authorizations = _RateWindow(proxy.limits.authorizations_per_minute)
        self._fixed_keys = (SigningKeys.from_pem(proxy.signing_key)
                            if proxy.signing_key is not None else None)
        self._derived: tuple[tuple[bytes, ...], SigningKeys] | None = None

    # -- shared -----------------------------------------------------------------------------

    @property
    def state(self) -> ProxyState:
        return ProxyState(self.server.sealer.store)

    def clock(self) -> float:
        return float(self.server.options.clock())

    def keys(self) -> SigningKeys:
        """The access tokens' signing keys: configured, else derived from the state key ring
        (again when the ring rotated)."""
        if self._fixed_keys is not None:
            return self._fixed_keys
        secrets_now = self.server.sealer.ring.derived(SIGNING_PURPOSE)
        if self._derived is None or self._derived[0] != secrets_now:
            self._derived = (secrets_now, SigningKeys.derived(secrets_now))
        return self._derived[1]

    def _csrf_keys(self) -> tuple[bytes, ...]:
        return tuple(self.server.sealer.ring.derived(_CSRF_PURPOSE))

    def seal(self, data: dict[str, Any]) -> str:
        return str(self.server.sealer.ring.seal(b"mcpkit proxy upstream", orjson.dumps(data)))

    def unseal(self, token: str) -> dict[str, Any]:
        plain, _ = self.server.sealer.ring.open(b"mcpkit proxy upstream", token,
                                                "the authorization proxy", "upstream tokens")
        value = orjson.loads(plain)
        assert isinstance(value, dict)
        return value

    async def client(self, client_id: str) -> ClientRecord | None:
        """The client `client_id` names: a registered one, or the record of the metadata
        document at that URL (fetched, checked, and kept for `client_document_ttl_s`)."""
        if client_id.startswith("https://") or (self.loopback and client_id.startswith(
                "http://") and self.proxy.client_documents):
            if not self.proxy.client_documents:
                return None
            return await self._document_client(client_id)
        if not client_id or len(client_id) > 200:
            return None
        record = await self.state.get("client", client_id)
        return None if record is None else ClientRecord.from_json(record)

    async def _document_client(self, url: str) -> ClientRecord:
        from mcpkit.transports.auth_proxy.documents import fetch_client_document

        if not (self.loopback and url.startswith("http://")):
            check_document_url(url)
        kept = await self.state.get("document", url)
        if kept is not None:
            return ClientRecord.from_json(kept)
        doc = await fetch_client_document(url, self.limits, allow_loopback=self.loopback)
        record = client_from_document(doc, url, limits=self.limits)
        await self.state.put("document", url, record.to_json(),
                             self.clock() + self.limits.client_document_ttl_s)
        return record

    # -- serving ----------------------------------------------------------------------------

    def serves(self, scope: Scope) -> bool:
        return scope["path"] in self._routes

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = read_headers(scope["headers"])
        refusal = self.policy.check(headers.host, None)
        if refusal is not None:
            await refuse(send, forbidden(refusal))
            return
        method = scope["method"]
        if method == "OPTIONS":
            await send_json(send, 200, {}, [
                *CORS, (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
                (b"access-control-allow-headers", b"authorization, content-type, "
                 b"mcp-protocol-version"), (b"access-control-max-age", b"600")])
            return
        handler = self._routes[scope["path"]]
        try:
            await handler(scope, receive, send)
        except OAuthRequestError as exc:
            await send_error(send, exc)
        except StoreUnavailableError as exc:
            log.warning("authorization proxy: %s", exc)
            await send_error(send, OAuthRequestError(
                "the server's store cannot be reached; try again shortly",
                error="temporarily_unavailable", status=503),
                ((b"retry-after", b"5"),))

    # -- metadata and keys ------------------------------------------------------------------

    async def _metadata(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "GET", "HEAD")
        await send_json(send, 200, authorization_server_metadata(self.proxy), [
            *CORS, (b"cache-control", b"public, max-age=300")], head=scope["method"] == "HEAD")

    async def _jwks(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "GET", "HEAD")
        await send_json(send, 200, self.keys().jwks(), [
            *CORS, (b"cache-control", b"public, max-age=300")], head=scope["method"] == "HEAD")

    # -- registration -----------------------------------------------------------------------

    async def _register(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "POST")
        if not self.proxy.dynamic_registration:
            raise OAuthRequestError("this server takes no dynamic registrations; name your "
                                    "client by a Client ID Metadata Document URL",
                                    error="invalid_request", status=404)
        if not self._registrations.allow(_address(scope), self.clock()):
            raise OAuthRequestError("too many registrations from this address; try again in "
                                    "a minute", error="invalid_request", status=429)
        if not (header(scope, b"content-type") or "").lower().startswith("application/json"):
            raise OAuthRequestError("a registration is a JSON object (Content-Type: "
                                    "application/json)", error="invalid_client_metadata")
        body = await read_body(receive, self.limits.max_registration_bytes)
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise OAuthRequestError("the registration is not JSON",
                                    error="invalid_client_metadata") from None
        now = self.clock()
        client_id = "mcp-" + secrets.token_urlsafe(18)
        secret = secrets.token_urlsafe(32)
        record = client_from_registration(doc, client_id=client_id, secret_hash=digest(secret),
                                          now=now, limits=self.limits)
        await self.state.put("client", client_id, record.to_json(),
                             now + self.limits.registration_ttl_s)
        answer: dict[str, Any] = {
            "client_id": client_id, "client_id_issued_at": int(now),
            "redirect_uris": list(record.redirect_uris),
            "grant_types": list(record.grant_types), "response_types": ["code"],
            "token_endpoint_auth_method": record.auth_method,
        }
        if record.secret_hash is not None:
            answer.update(client_secret=secret, client_secret_expires_at=0)
        for name in ("client_name", "client_uri"):
            if getattr(record, name):
                answer[name] = getattr(record, name)
        await send_json(send, 201, answer, [*NO_STORE, *CORS])

    # -- the browser's steps ------------------------------------------------------------------

    async def _page_error(self, send: Send, status: int, title: str, message: str,
                          headers: Any = ()) -> None:
        await send_page(send, status, consent.error_page(title, message), headers)

    async def _authorize(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "GET")
        if not self._authorizations.allow(_address(scope), self.clock()):
            await self._page_error(send, 429, "Too many sign-ins", "Too many sign-ins were "
                                   "started from this address; try again in a minute.")
            return
        try:
            params = parse_query(scope.get("query_string", b"").decode("latin-1"),
                                 what="the authorization request")
            client_id = params.get("client_id")
            if not client_id:
                raise OAuthRequestError("client_id is required", error="invalid_request")
            try:
                client = await self.client(client_id)
            except AuthError as exc:
                raise OAuthRequestError(f"the client's metadata document could not be used: "
                                        f"{exc}", error="invalid_client") from None
            if client is None:
                raise OAuthRequestError(f"no client is registered as {client_id[:80]!r} (or "
                                        "its registration expired): register again",
                                        error="invalid_client")
            redirect_uri = client_redirect(client, params)
        except OAuthRequestError as exc:
            await self._page_error(send, 400, "This sign-in cannot go on", str(exc))
            return
        try:
            request = check_request(client, redirect_uri, params,
                                    resource=self.proxy.public_url,
                                    scopes_supported=self.proxy.scopes_supported)
        except OAuthRequestError as exc:
            await send_redirect(send, self._client_error(redirect_uri, params.get("state"),
                                                         exc.error, str(exc)))
            return
        browser = consent.read_cookie(header(scope, b"cookie"), self.secure)
        headers: list[tuple[bytes, bytes]] = []
        if browser is None:
            browser = secrets.token_hex(24)
            headers.append((b"set-cookie", consent.set_cookie(browser, self.secure,
                                                              _COOKIE_AGE_S)))
        pending = secrets.token_urlsafe(24)
        now = self.clock()
        await self.state.put("pending", pending, {
            "client_id": request.client_id, "redirect_uri": request.redirect_uri,
            "state": request.state, "challenge": request.code_challenge,
            "scopes": list(request.scopes), "resource": request.resource,
            "browser": consent.browser_binding(browser),
            "expires": now + self.limits.pending_ttl_s,
        }, now + self.limits.pending_ttl_s)
        page = consent.consent_page(
            client=client, redirect_uri=redirect_uri, scopes=request.scopes,
            resource=self.proxy.public_url, resource_name=self.proxy.resource_name,
            upstream=self.proxy.upstream.name, action=self.proxy.endpoint("consent"),
            pending=pending, csrf=consent.csrf_token(self._csrf_keys()[0], pending, browser))
        await send_page(send, 200, page, headers)

    def _client_error(self, redirect_uri: str, state: str | None, error: str,
                      description: str) -> str:
        return redirect_with(redirect_uri, {"error": error, "error_description": description,
                                            "state": state, "iss": self.proxy.issuer_url})

    async def _consent(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "POST")
        origin = header(scope, b"origin")
        issuer = urlsplit(self.proxy.issuer_url)
        if origin is not None and origin != f"{issuer.scheme}://{issuer.netloc}":
            await self._page_error(send, 403, "Refused", "This decision was sent from another "
                                   "site; decide on this server's own page.")
            return
        try:
            params = parse_query((await read_body(receive, _FORM_LIMIT)).decode("latin-1"),
                                 what="the decision")
        except OAuthRequestError as exc:
            await self._page_error(send, exc.status, "Refused", str(exc))
            return
        browser = consent.read_cookie(header(scope, b"cookie"), self.secure)
        pending_id, csrf = params.get("pending", ""), params.get("csrf", "")
        if browser is None or not any(
                secrets.compare_digest(consent.csrf_token(key, pending_id, browser), csrf)
                for key in self._csrf_keys()):
            await self._page_error(send, 403, "Refused", "This decision does not come from the "
                                   "consent page this browser was shown; start the sign-in "
                                   "again from the application.")
            return
        pending = await self.state.take("pending", pending_id, self.clock()
                                        + self.limits.pending_ttl_s)
        if pending is None:
            await self._page_error(send, 400, "This sign-in has ended", "It expired or was "
                                   "decided already; start it again from the application.")
            return
        if pending.get("browser") != consent.browser_binding(browser):
            await self._page_error(send, 403, "Refused", "This sign-in was started in another "
                                   "browser.")
            return
        if params.get("decision") != "allow":
            await send_redirect(send, self._client_error(
                pending["redirect_uri"], pending.get("state"), "access_denied",
                "the user denied the request"))
            return
        upstream_state = secrets.token_urlsafe(24)
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(16)
        await self.state.put("upstream-state", upstream_state,
                             {**pending, "verifier": verifier, "nonce": nonce},
                             float(pending["expires"]))
        try:
            location = await self.upstream.authorization_url(
                upstream_state, pkce_challenge(verifier), nonce)
        except AuthError as exc:
            log.warning("authorization proxy: %s", exc)
            await send_redirect(send, self._client_error(
                pending["redirect_uri"], pending.get("state"), "temporarily_unavailable",
                f"the identity provider {self.proxy.upstream.name} cannot be reached"))
            return
        await send_redirect(send, location)

    async def _callback(self, scope: Scope, receive: Receive, send: Send) -> None:
        _only(scope, "GET")
        try:
            params = parse_query(scope.get("query_string", b"").decode("latin-1"),
                                 what="the identity provider's answer")
        except OAuthRequestError as exc:
            await self._page_error(send, 400, "This sign-in cannot go on", str(exc))
            return
        pending = await self.state.take("upstream-state", params.get("state", ""),
                                        self.clock() + self.limits.pending_ttl_s)
        if pending is None:
            await self._page_error(send, 400, "This sign-in cannot go on", "No sign-in of this "
                                   "server waits for this answer (it expired, was answered "
                                   "already, or was never consented to here).")
            return
        browser = consent.read_cookie(header(scope, b"cookie"), self.secure)
        if browser is None or pending.get("browser") != consent.browser_binding(browser):
            await self._page_error(send, 403, "Refused", "This answer reached another browser "
                                   "than the one the sign-in was started in.")
            return
        redirect_uri, state = pending["redirect_uri"], pending.get("state")
        error = params.get("error")
        if error is not None:
            code = (error if error == "temporarily_unavailable" else "access_denied"
                    if error in _UPSTREAM_DENIALS else "server_error")
            await send_redirect(send, self._client_error(
                redirect_uri, state, code, f"the sign-in at {self.proxy.upstream.name} ended "
                f"with {error[:60]!r}"))
            return
        try:
            location = await self._finish(pending, params)
        except AuthError as exc:
            log.warning("authorization proxy: the sign-in failed: %s", exc)
            location = self._client_error(redirect_uri, state, "server_error",
                                           f"the sign-in at {self.proxy.upstream.name} failed")
        except _Refused as refused:
            location = self._client_error(redirect_uri, state, refused.error, refused.why)
        await send_redirect(send, location)

    async def _finish(self, pending: dict[str, Any], params: dict[str, str]) -> str:
        """The upstream code exchanged, the user admitted, a code of the proxy's issued: the
        client's redirect URI with it."""
        endpoints = await self.upstream.endpoints()
        issued_by = params.get("iss")
        if issued_by is not None and endpoints.issuer is not None and \
                issued_by != endpoints.issuer:
            raise _Refused("server_error", "the identity provider's answer names another "
                           "issuer (RFC 9207)")
        code = params.get("code")
        if not code:
            raise _Refused("server_error", "the identity provider answered without a code")
        tokens = await self.upstream.exchange(code, pending["verifier"])
        identity = await self.upstream.identity(tokens, pending["nonce"])
        if self.proxy.admit is not None and not self.proxy.admit(dict(identity)):
            raise _Refused("access_denied", "this account may not use this server")
        now = self.clock()
        grant = secrets.token_urlsafe(16)
        grant_expires = now + self.limits.refresh_token_ttl_s
        upstream = {"access_token": tokens["access_token"],
                    "refresh_token": tokens.get("refresh_token"),
                    "expires_at": _expiry(tokens, now)}
        await self.state.put("upstream", grant, {"v": 0, "until": grant_expires,
                                                 "sealed": self.seal(upstream)}, grant_expires)
        ours = secrets.token_urlsafe(32)
        await self.state.put("code", digest(ours), {
            "grant": grant, "grant_expires": grant_expires, "client_id": pending["client_id"],
            "redirect_uri": pending["redirect_uri"], "challenge": pending["challenge"],
            "scopes": pending["scopes"], "resource": pending["resource"],
            "identity": identity}, now + self.limits.code_ttl_s)
        return redirect_with(pending["redirect_uri"], {
            "code": ours, "state": pending.get("state"), "iss": self.proxy.issuer_url})


class _Refused(Exception):
    """A sign-in the client is told about by its redirect (`error`, `why`)."""

    def __init__(self, error: str, why: str) -> None:
        super().__init__(why)
        self.error = error
        self.why = why


def _expiry(tokens: dict[str, Any], now: float) -> float | None:
    seconds = tokens.get("expires_in")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        return None
    return now + float(seconds)


def _only(scope: Scope, *methods: str) -> None:
    if scope["method"] not in methods:
        raise OAuthRequestError(f"{scope['path']} takes {' or '.join(methods)}",
                                error="invalid_request", status=405)


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if isinstance(client, tuple | list) and client else "?"
