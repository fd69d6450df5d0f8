"""`OAuth`: the MCP client's authorization, an httpx `Auth` flow the HTTP transport drives.

Give it to the transport (`HTTPConnector(url, auth=OAuth(...))`): every request to the MCP
server goes through `async_auth_flow`, which adds `Authorization: Bearer <token>` when it holds
a token for that server and reacts to the answer:

- **401**: discovery (`mcpkit.auth.client_discovery`: the challenge's `resource_metadata`,
  then the path-inserted PRM, then the root one; the AS metadata by RFC 8414 then OIDC), the
  PRM's `resource` and the AS's `issuer` checked; then, cheapest first: a token another task
  or process already stored for (issuer, resource), a refresh (the new refresh token kept:
  rotation), and only then the authorization code flow with PKCE S256, `state`, RFC 9207
  `iss`, `resource` in both requests and the scope chosen in the spec's order. The request is
  then sent again, a bounded number of times;
- **403 insufficient_scope**: step-up, a new authorization for the union of the scopes asked
  before and those challenged, at most `step_up_limit` times per (resource, operation);
- anything else is the transport's to read.

A server that publishes no PRM is a 2025-03-26 server: its origin is the issuer, and the
default endpoints (`/authorize`, `/token`, `/register`) stand in when it has no metadata.
A 401 or 403 never makes the client try the legacy era (`mcpkit.client.opening`): it is an
authorization event, and a failed one is an `AuthError`.

The browser part is the host's: `redirect_handler(url)` shows or opens the authorization URL
(checked first: http or https only, https off loopback), and `callback_handler()` returns the
redirect's query (a mapping, or `(code, state, iss)`). Tokens live in `storage`, the file in
the user's data folder by default (`mcpkit.store.tokens`). Registration is
`mcpkit.transports.oauth_registration`, the checked HTTP to authorization servers
`mcpkit.transports.oauth_http`. Tokens never reach a log line or an exception message.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from mcpkit.auth.client_authorization import (
    Pending,
    Pkce,
    authorization_url,
    read_callback,
    require_pkce,
)
from mcpkit.auth.client_challenge import BearerChallenge, bearer_challenge, sent_scheme
from mcpkit.auth.client_discovery import (
    ASMetadata,
    ResourceMetadata,
    as_metadata_urls,
    canonical_resource,
    origin_of,
    prm_urls,
    read_prm,
)
from mcpkit.auth.client_scopes import StepUps, initial_scope, step_up_scope
from mcpkit.auth.client_targets import check_authorization_url, is_loopback_host
from mcpkit.errors import AuthError, SignInNeeded, StepUpNeeded
from mcpkit.store.tokens import ClientInfo, FileTokenStorage, TokenSet, TokenStorage
from mcpkit.transports.oauth_http import OAuthHTTP, client_auth
from mcpkit.transports.oauth_registration import ClientInfoHandler, Registration, auth_method_for

__all__ = ["OAuth"]

log = logging.getLogger("mcpkit.auth")

RedirectHandler = Callable[[str], "Awaitable[None] | None"]
CallbackHandler = Callable[[], Awaitable[Any]]
_MAX_AUTHORIZATIONS = 3
"""Answers of 401 one request may meet: a kept token, a refresh, a new authorization."""


@dataclass
class _Resource:
    """What the flow knows of one MCP server (keyed by its canonical URL)."""

    server_url: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tokens: TokenSet | None = None
    issuer: str | None = None
    resource: str | None = None
    prm: ResourceMetadata | None = None
    metadata: ASMetadata | None = None
    client: ClientInfo | None = None
    scope: str | None = None
    """The scopes last asked for (the base of a step-up's union)."""


class OAuth(httpx.Auth):
    """The authorization code flow (and refresh, step-up) for MCP servers over HTTP."""

    requires_request_body = True

    def __init__(
        self,
        *,
        redirect_uri: str | None = None,
        redirect_handler: RedirectHandler | None = None,
        callback_handler: CallbackHandler | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        private_key: Any = None,
        private_key_alg: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcpkit",
        application_type: str | None = None,
        client_info_handler: ClientInfoHandler | None = None,
        storage: TokenStorage | None = None,
        scope: str | None = None,
        want_refresh: bool = True,
        step_up_limit: int = 2,
        allow_loopback: bool | None = None,
        allow_private: bool = False,
        timeout: float = 30.0,
        httpx_options: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
        dpop: Any = None,
    ) -> None:
        """`redirect_uri` is registered with the AS and receives the authorization response;
        `client_id`/`client_secret` are pre-registered credentials (for `client_issuer`, or
        the first AS they are used with); `client_metadata_url` is this client's CIMD URL;
        `storage` defaults to the token file in the user's data folder. `allow_loopback`
        (default: when the MCP server is on loopback) lets metadata fetches reach loopback
        addresses; private and link-local ones only with `allow_private`. `scope` is asked
        for on a first authorization besides what the server's challenge names (a user who
        knows the tools need more than basic use). `dpop` (a
        `mcpkit.transports.oauth_dpop.DPoPSigner`) asks for DPoP-bound tokens: a proof on
        every token and MCP request, nonce challenges of either server retried once."""
        if redirect_uri is not None:
            check_authorization_url(redirect_uri)
        self.redirect_uri = redirect_uri
        self.redirect_handler = redirect_handler
        self.callback_handler = callback_handler
        self.registration = Registration(
            client_id, client_secret, client_issuer, token_endpoint_auth_method,
            client_metadata_url, client_name, application_type, private_key is not None,
            client_info_handler)
        self.private_key = private_key
        self.private_key_alg = private_key_alg
        self.storage: TokenStorage = storage if storage is not None else FileTokenStorage()
        self.scope = scope
        self.want_refresh = want_refresh
        self.step_ups = StepUps(step_up_limit)
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private
        self.timeout = timeout
        self.httpx_options = dict(httpx_options or {})
        self.clock = clock
        self.dpop = dpop
        self.authorizing = 0
        """Requests whose 401 or 403 is being answered (a sign-in may take minutes): the
        client's probe does not time out on one of them."""
        self._resources: dict[str, _Resource] = {}

    async def aclose(self) -> None:
        """Nothing to release: each authorization event opens and closes its own client."""

    # -- the flow the transport drives ----------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Any:
        raise RuntimeError("OAuth works with httpx.AsyncClient only (mcpkit's HTTP transport)")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        state = self._resource_of(str(request.url))
        operation = _operation_of(request)
        if state.tokens is not None and state.tokens.expired(self.clock()):
            async with state.lock:
                if state.tokens is not None and state.tokens.expired(self.clock()):
                    await self._refresh_or_forget(state)
        sent = self._apply(request, state)
        response = yield request
        authorizations = 0
        nonce_retried = False
        counted = False  # in `authorizing` while this request's 401 or 403 is answered
        try:
            while True:
                status = response.status_code
                if status in (401, 403) and not counted:
                    counted = True
                    self.authorizing += 1
                challenge = bearer_challenge(response.headers.get_list("www-authenticate"),
                                             sent_scheme(request.headers.get("authorization")))
                if self.dpop is not None:
                    self.dpop.learn(response)
                if (status == 401 and self.dpop is not None and not nonce_retried
                        and sent is not None and self.dpop.retry_after(response)):
                    nonce_retried = True  # the resource server's nonce: same token, new proof
                elif status == 401:
                    if authorizations >= _MAX_AUTHORIZATIONS:
                        raise AuthError(f"{operation}: the server at {state.server_url} still "
                                        "answers 401 after authorizing; the token it was given "
                                        "is refused")
                    authorizations += 1
                    async with state.lock:
                        if state.tokens is sent:  # no other task authorized meanwhile
                            await self._unauthorized(state, challenge or BearerChallenge(), sent)
                elif status == 403 and challenge is not None and challenge.insufficient_scope:
                    if not self.step_ups.allow(state.server_url, operation):
                        needed = " ".join(challenge.scope or ()) or "more scopes"
                        raise AuthError(
                            f"{operation}: the server at {state.server_url} still answers 403 "
                            f"insufficient_scope (it needs {needed}) after "
                            f"{self.step_ups.limit} re-authorizations; not asking again")
                    async with state.lock:
                        if state.tokens is sent:
                            await self._step_up(state, challenge)
                else:
                    if status < 400:
                        self.step_ups.succeeded(state.server_url, operation)
                    return
                sent = self._apply(request, state)
                response = yield request
        finally:
            if counted:
                self.authorizing -= 1

    def _resource_of(self, url: str) -> _Resource:
        key = canonical_resource(url)
        state = self._resources.get(key)
        if state is None:
            state = self._resources[key] = _Resource(key)
        return state

    def _apply(self, request: httpx.Request, state: _Resource) -> TokenSet | None:
        """Put the current token on `request` (and return it, to know later what was sent)."""
        tokens = state.tokens
        if tokens is None:
            return None
        if self.dpop is not None and tokens.token_type.lower() == "dpop":
            self.dpop.sign_resource_request(request, tokens.access_token)
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"
        return tokens

    # -- what a 401 or a 403 starts -------------------------------------------------------------

    def _checked(self, client: httpx.AsyncClient, server_url: str) -> OAuthHTTP:
        loopback = self.allow_loopback
        if loopback is None:
            loopback = is_loopback_host(urlsplit(server_url).hostname or "")
        return OAuthHTTP(client, allow_loopback=loopback, allow_private=self.allow_private)

    async def _unauthorized(self, state: _Resource, challenge: BearerChallenge,
                            sent: TokenSet | None) -> None:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False,
                                     **self.httpx_options) as client:
            http = self._checked(client, state.server_url)
            await self._discover(state, http, challenge)
            assert state.issuer is not None and state.resource is not None
            kept = await self.storage.load(state.issuer, state.resource)
            fresh = kept is not None and not kept.expired(self.clock())
            if kept is not None and fresh and (sent is None or
                                               kept.access_token != sent.access_token):
                state.tokens, state.scope = kept, kept.scope
                return
            if kept is not None and kept.refresh_token:
                refreshed = await self._refresh(state, http, kept)
                if refreshed is not None:
                    return
            if kept is not None:
                await self.storage.delete(state.issuer, state.resource)
            state.tokens = None
            assert state.metadata is not None
            scope = initial_scope(challenge.scope,
                                  state.prm.scopes_supported if state.prm else None,
                                  state.metadata.scopes_supported, want_refresh=self.want_refresh)
            if self.scope:
                scope = step_up_scope(scope, tuple(self.scope.split()))
            await self._authorize(state, http, scope)

    async def _step_up(self, state: _Resource, challenge: BearerChallenge) -> None:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False,
                                     **self.httpx_options) as client:
            http = self._checked(client, state.server_url)
            if state.metadata is None:
                await self._discover(state, http, challenge)
            wider = step_up_scope(state.scope, challenge.scope)
            if self.redirect_handler is None or self.callback_handler is None:
                raise StepUpNeeded(
                    f"the server at {state.server_url} needs the scopes {wider or 'it names'} "
                    f"(this sign-in has {state.scope or 'none named'}); sign in again with "
                    "them", server_url=state.server_url, scope=wider)
            await self._authorize(state, http, wider)

    async def _refresh_or_forget(self, state: _Resource) -> None:
        """Before a request: a token past its expiry is refreshed, or dropped."""
        kept = state.tokens
        if kept is None or not kept.refresh_token or state.metadata is None:
            state.tokens = None
            return
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False,
                                     **self.httpx_options) as client:
            if await self._refresh(state, self._checked(client, state.server_url), kept) is None:
                state.tokens = None

    # -- discovery ------------------------------------------------------------------------------

    async def _discover(self, state: _Resource, http: OAuthHTTP,
                        challenge: BearerChallenge) -> None:
        prm: ResourceMetadata | None = None
        for url in prm_urls(state.server_url, challenge.resource_metadata):
            status, doc = await http.get_json(url)
            if status == 200:
                prm = read_prm(doc, url, state.server_url)
                break
        if prm is not None:
            issuer, resource = prm.authorization_servers[0], prm.resource
        else:  # no PRM: a 2025-03-26 server, its own authorization server
            issuer, resource = origin_of(state.server_url), state.server_url
        metadata = await http.as_metadata(issuer)
        if metadata is None:
            if prm is not None:
                raise AuthError(f"the authorization server {issuer} (named by {prm.url}) "
                                f"publishes no metadata at {', '.join(as_metadata_urls(issuer))}")
            metadata = ASMetadata.fallback(issuer)
        if state.issuer is not None and state.issuer != issuer:
            log.info("the server at %s moved from the authorization server %s to %s: "
                     "registering again", state.server_url, state.issuer, issuer)
            state.tokens, state.client, state.scope = None, None, None
        state.prm, state.metadata, state.issuer, state.resource = prm, metadata, issuer, resource

    # -- the authorization code flow ------------------------------------------------------------

    async def _authorize(self, state: _Resource, http: OAuthHTTP, scope: str | None) -> None:
        metadata, issuer, resource = state.metadata, state.issuer, state.resource
        assert metadata is not None and issuer is not None and resource is not None
        if metadata.raw:  # the 2025-03-26 defaults have no list to check
            require_pkce(metadata.code_challenge_methods_supported, issuer)
        if metadata.authorization_endpoint is None or metadata.token_endpoint is None:
            raise AuthError(f"the authorization server {issuer} names no authorization or "
                            "token endpoint")
        if self.redirect_handler is None or self.callback_handler is None:
            raise SignInNeeded(f"the server at {state.server_url} needs a sign-in at {issuer}; "
                               "this client has no browser step (give OAuth a redirect_handler "
                               "and a callback_handler)", server_url=state.server_url,
                               issuer=issuer)
        if self.redirect_uri is None:
            raise AuthError("the authorization code flow needs a redirect URI (redirect_uri=)")
        check_authorization_url(metadata.authorization_endpoint)
        client = state.client = await self.registration.client_for(
            issuer, metadata, self.storage, http, self.redirect_uri)
        pending = Pending(issuer, metadata.iss_parameter_supported, secrets.token_urlsafe(32),
                          Pkce.from_random(secrets.token_bytes(32)), self.redirect_uri,
                          resource, scope, client.client_id, metadata.authorization_endpoint)
        url = authorization_url(pending)
        log.info("authorizing at %s for %s", issuer, state.server_url)
        shown = self.redirect_handler(url)
        if inspect.isawaitable(shown):
            await shown
        answer = await self.callback_handler()
        if isinstance(answer, tuple):
            code_, state_, iss_ = answer
            answer = {"code": code_, "state": state_, "iss": iss_}
        params = {k: v for k, v in dict(answer).items() if v is not None}
        code = read_callback(pending, params)
        tokens = await self._token_request(state, http, {
            "grant_type": "authorization_code", "code": code,
            "redirect_uri": pending.redirect_uri, "code_verifier": pending.pkce.verifier,
            "resource": resource,
        }, scope)
        if tokens is None:
            raise AuthError(f"the authorization server {issuer} refused the authorization code")
        state.scope = scope

    async def _refresh(self, state: _Resource, http: OAuthHTTP, kept: TokenSet
                       ) -> TokenSet | None:
        """A refresh (the refresh token rotated when the AS sends a new one); None when
        the AS refuses it, so the caller authorizes again."""
        assert kept.refresh_token is not None and state.resource is not None
        if state.client is None:
            assert state.issuer is not None and state.metadata is not None
            state.client = await self.registration.client_for(
                state.issuer, state.metadata, self.storage, http, self.redirect_uri)
        return await self._token_request(state, http, {
            "grant_type": "refresh_token", "refresh_token": kept.refresh_token,
            "resource": state.resource,
        }, kept.scope, previous=kept)

    async def _token_request(self, state: _Resource, http: OAuthHTTP, form: dict[str, str],
                             scope: str | None, previous: TokenSet | None = None
                             ) -> TokenSet | None:
        """POST to the token endpoint; the tokens are stored and put in use. None for an
        `invalid_grant` on a refresh; any other refusal is an `AuthError`."""
        metadata, client, issuer = state.metadata, state.client, state.issuer
        assert metadata is not None and client is not None and issuer is not None
        assert metadata.token_endpoint is not None and state.resource is not None
        method = auth_method_for(client, metadata, has_key=self.private_key is not None)
        headers, extra = client_auth(
            client, method, audience=issuer, private_key=self.private_key,
            private_key_alg=self.private_key_alg,
            signing_algs=metadata.raw.get("token_endpoint_auth_signing_alg_values_supported"))
        status, doc, _ = await http.post_form(metadata.token_endpoint, {**form, **extra}, headers,
                                              dpop=self.dpop)
        if status != 200 or not isinstance(doc, dict) or not isinstance(
                doc.get("access_token"), str):
            error = doc.get("error") if isinstance(doc, dict) else None
            if previous is not None and status in (400, 401):
                log.info("the refresh at %s was refused (%s): authorizing again", issuer, error)
                return None
            detail = doc.get("error_description") if isinstance(doc, dict) else None
            raise AuthError(f"the token endpoint of {issuer} answered HTTP {status}"
                            + (f": {error}" if error else " without an access token")
                            + (f" ({detail})" if isinstance(detail, str) else ""))
        expires_in = doc.get("expires_in")
        tokens = TokenSet(
            access_token=doc["access_token"],
            token_type=str(doc.get("token_type") or "Bearer"),
            refresh_token=doc.get("refresh_token") if isinstance(doc.get("refresh_token"), str)
            else (previous.refresh_token if previous is not None else None),
            expires_at=(self.clock() + float(expires_in)
                        if isinstance(expires_in, int | float) and expires_in > 0 else None),
            scope=doc.get("scope") if isinstance(doc.get("scope"), str) else scope,
        )
        await self.storage.save(issuer, state.resource, tokens)
        state.tokens, state.scope = tokens, tokens.scope
        return tokens


def _operation_of(request: httpx.Request) -> str:
    """What step-up attempts are counted by: the JSON-RPC method and the name it targets."""
    method = request.headers.get("mcp-method")
    name = request.headers.get("mcp-name")
    if method is None:
        try:
            body = orjson.loads(request.content) if request.content else None
        except orjson.JSONDecodeError:
            body = None
        if isinstance(body, dict):
            method = body.get("method") if isinstance(body.get("method"), str) else None
            params = body.get("params")
            if isinstance(params, dict):
                target = params.get("name", params.get("uri"))
                name = target if isinstance(target, str) else None
    what = method or f"{request.method} {request.url.path}"
    return f"{what} {name}" if name else what
