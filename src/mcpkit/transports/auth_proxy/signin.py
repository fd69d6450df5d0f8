"""The authorization proxy's browser steps: the authorization request and its consent page, the
user's decision, and the identity provider's answer, which ends in a code of the proxy's own.

A sign-in is bound to the browser that started it (a cookie of the proxy's, checked at each
step) and the decision to the page that browser was shown (a CSRF token derived from the state
key ring, so any replica checks it). Once the client's redirect URI is known, a sign-in that
cannot go on is answered there, to the client; before that, the browser is shown a page saying
why. Nothing here logs a code, a token, a secret or a cookie.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from mcpkit.auth.proxy import consent
from mcpkit.auth.proxy.authorize import (
    check_request,
    client_redirect,
    parse_query,
    redirect_with,
)
from mcpkit.auth.proxy.tokens import digest, pkce_challenge
from mcpkit.errors import AuthError, OAuthRequestError
from mcpkit.transports.auth_proxy.http import (
    RateWindow,
    client_address,
    header,
    only,
    read_body,
    send_page,
    send_redirect,
)
from mcpkit.transports.http_server.endpoint import Receive, Scope, Send

if TYPE_CHECKING:
    from mcpkit.transports.auth_proxy.routes import ProxyRoutes
    from mcpkit.transports.auth_proxy.state import ProxyState

__all__ = [
    "SignInEndpoints",
]

log = logging.getLogger("mcpkit.auth.proxy")

_FORM_LIMIT: Final = 16 * 1024
_CSRF_PURPOSE: Final = b"mcpkit authorization proxy consent"
_COOKIE_AGE_S: Final = 30 * 86400.0
_UPSTREAM_DENIALS: Final = frozenset({"access_denied", "login_required", "consent_required",
                                      "interaction_required", "account_selection_required"})


class SignInEndpoints:
    """`/oauth/authorize`, `/oauth/consent` and `/oauth/callback` of one proxy."""

    def __init__(self, routes: ProxyRoutes) -> None:
        self.routes = routes
        self.proxy = routes.proxy
        self.limits = routes.limits
        self.secure = routes.secure
        self.upstream = routes.upstream
        self._authorizations = RateWindow(routes.limits.authorizations_per_minute)

    @property
    def state(self) -> ProxyState:
        return self.routes.state

    def clock(self) -> float:
        return self.routes.clock()

    def _csrf_keys(self) -> tuple[bytes, ...]:
        return tuple(self.routes.server.sealer.ring.derived(_CSRF_PURPOSE))

    async def _page_error(self, send: Send, status: int, title: str, message: str,
                          headers: Any = ()) -> None:
        await send_page(send, status, consent.error_page(title, message), headers)

    async def authorize(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "GET")
        if not self._authorizations.allow(client_address(scope), self.clock()):
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
                client = await self.routes.client(client_id)
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

    async def consent(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "POST")
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

    async def callback(self, scope: Scope, receive: Receive, send: Send) -> None:
        only(scope, "GET")
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
        await self.state.put("upstream", grant, {
            "v": 0, "until": grant_expires, "sealed": self.routes.seal(upstream)}, grant_expires)
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
