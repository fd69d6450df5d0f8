"""`AuthGate`: the HTTP app's authorization check, run before a request is routed to either
era, and the Protected Resource Metadata endpoints.

`HTTPApp` holds one when `HTTPOptions.auth` is set (an unprotected app holds None and pays one
attribute test). For every request it:

1. answers a GET of the metadata's well-known paths, without credentials (`metadata`);
2. reads the one `Authorization` header (`Bearer` or `DPoP`), has the configured verifier
   check the token, holds its claims to the issuers, the audience and the clock
   (`mcpkit.auth.server_claims`), and, for a DPoP-bound token, checks the proof
   (`mcpkit.auth.dpop.verify_proof`) and records its `jti` in the server's `Store` so a
   replay is refused across every process sharing the store (`authenticate`);
3. once the body is decoded, refuses with 403 `insufficient_scope` an operation whose scopes
   (`mcpkit.server.scopes.operation_scopes`, plus `required_scopes`) the token does not cover,
   naming all of them (`refusal_for`).

The principal is put in the ASGI scope under `PRINCIPAL_SCOPE_KEY`, where the endpoints read it
for `Context.principal`, sealed states and legacy sessions. Each refusal and its challenge come
from `mcpkit.auth.server_challenges`; nothing here logs or echoes a token.

The resource (the URL tokens must name in `aud`, the metadata's `resource`, where challenges
point, what DPoP proofs sign) is configuration, never a request's word: `public_url`, or,
without it, the one loopback address and port the connection came to (`scope["server"]`, set
by the ASGI server from its socket), with the endpoint's path. A `Host` header picks nothing:
a policy that lets any host through (`*`, `*.example.com`) without `public_url` is refused when
the app is built, and a server listening elsewhere without `public_url` answers 500 and logs
the fix.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import inspect
import logging
import os
from typing import Any, Final
from urllib.parse import quote

from mcpkit.auth.server_challenges import (
    INSUFFICIENT_SCOPE,
    INVALID_DPOP_PROOF,
    INVALID_REQUEST,
    INVALID_TOKEN,
    ChallengeSettings,
    challenge_refusal,
    unavailable_refusal,
    unresolved_refusal,
)
from mcpkit.auth.server_claims import check_claims, token_jkt
from mcpkit.auth.server_config import Principal, ProtectedResource, TokenVerifier
from mcpkit.auth.server_metadata import (
    WELL_KNOWN,
    canonical_resource,
    metadata_document,
    metadata_paths,
    metadata_url,
)
from mcpkit.errors import DPoPError, InvalidTokenError, VerifierUnavailableError
from mcpkit.protocol.codec import Message, Request, encode
from mcpkit.protocol.http import PRINCIPAL_SCOPE_KEY, HostPolicy
from mcpkit.protocol.http_host import is_loopback
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.server.scopes import operation_scopes
from mcpkit.transports.http_server.endpoint import Scope, Send, refuse

__all__ = [
    "PRINCIPAL_SCOPE_KEY",
    "WELL_KNOWN",
    "AuthGate",
]

log = logging.getLogger("mcpkit.auth")

_AUTHORIZATION: Final = b"authorization"
_DPOP: Final = b"dpop"
_CHALLENGES: Final = "mcpkit.auth.challenges"
"""Scope key: this request's `ChallengeSettings`, kept for the scope check after the body."""
_CACHED: Final = 64
"""Most resources (one per loopback address and mount) and challenge settings remembered."""
_PATH_SAFE: Final = "/%!$&'()*+,;=:@-._~"
"""What a path keeps as it is in a resource URL; anything else is percent-encoded."""


class AuthGate:
    """The authorization check of one HTTP app (see the module docstring)."""

    def __init__(self, server: Any, resource: ProtectedResource, path: str | None,
                 policy: HostPolicy | None = None) -> None:
        if resource.public_url is None and policy is not None and policy.open_ended:
            raise ValueError(
                f"a protected server whose allowed hosts take any host ({', '.join(policy.hosts)}"
                ") needs ProtectedResource.public_url, the URL clients reach it by: the audience "
                "its tokens must name is configuration, never a request's Host")
        self.server = server
        self.resource = resource
        self._hierarchy = resource.hierarchy
        self._path = path
        public_path = ""
        if resource.public_url is not None:
            public_path = resource.public_url.split("://", 1)[1].partition("/")[2]
            public_path = "/" + public_path if public_path else ""
        self._paths = metadata_paths(path or "", public_path)
        dpop = resource.dpop
        self._algs = dpop.algorithms if dpop.enabled else ()
        self._nonce_key = os.urandom(32)
        self._claims_checked = isinstance(resource.verifier, TokenVerifier)
        self._resources: dict[tuple[Any, str], str | None] = {}
        """(`scope["server"]`, `root_path`) -> the resource, for a fixed endpoint path."""
        self._settings: dict[str, ChallengeSettings] = {}
        self._warned = False

    # -- the metadata ---------------------------------------------------------------------------

    def is_metadata(self, scope: Scope) -> bool:
        """Whether the request is for the well-known metadata (answered by `metadata`)."""
        path: str = scope["path"]
        return path.startswith(WELL_KNOWN) and path[len(WELL_KNOWN):len(WELL_KNOWN) + 1] in ("",
                                                                                          "/")

    async def metadata(self, scope: Scope, send: Send) -> None:
        """The RFC 9728 document for GET (and HEAD), with no credentials asked."""
        if scope["path"].rstrip("/") not in self._paths and scope["path"] not in self._paths:
            await refuse(send, Refusal(404))
            return
        if scope["method"] not in ("GET", "HEAD"):
            await refuse(send, Refusal(405, None, ((b"allow", b"GET, HEAD"),)))
            return
        resource = self._resource_of(scope, scope["path"][len(WELL_KNOWN):])
        if resource is None:
            await refuse(send, self._unresolved(scope))
            return
        settings = self.resource
        body = encode(metadata_document(
            resource, settings.issuer_list, scopes_supported=settings.scopes_supported,
            resource_documentation=settings.resource_documentation,
            resource_name=settings.resource_name, dpop_algs=self._algs,
            dpop_required=settings.dpop.required))
        # Shared caches may keep a configured URL; one made from the address the connection
        # came to is this connection's answer only.
        caching = b"public, max-age=3600" if settings.public_url is not None else b"no-store"
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)),
            (b"cache-control", caching), (b"access-control-allow-origin", b"*")]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})

    # -- the token ------------------------------------------------------------------------------

    async def authenticate(self, scope: Scope, send: Send) -> bool:
        """Check the request's credentials; True with the principal in the scope, False once
        refused."""
        resource = self._resource_of(scope, scope["path"])
        if resource is None:
            await refuse(send, self._unresolved(scope))
            return False
        settings = self._settings.get(resource)
        if settings is None:
            settings = ChallengeSettings(metadata_url(resource), self._algs)
            if len(self._settings) >= _CACHED:
                self._settings.clear()
            self._settings[resource] = settings
        scope[_CHALLENGES] = settings
        refusal: Refusal | None
        try:
            principal = await self._principal(scope, resource, settings)
        except _Refused as refused:
            refusal = refused.refusal
        except VerifierUnavailableError as exc:
            log.warning("cannot check an access token: %s", exc)
            refusal = unavailable_refusal(exc.retry_after_s)
        else:
            scope[PRINCIPAL_SCOPE_KEY] = principal
            return True
        await refuse(send, refusal)
        return False

    async def refused(self, scope: Scope, message: Message, send: Send) -> bool:
        """Answer 403 and say True when the decoded request needs scopes the principal lacks."""
        refusal = self.refusal_for(scope, message)
        if refusal is not None:
            await refuse(send, refusal)
        return refusal is not None

    def refusal_for(self, scope: Scope, message: Message) -> Refusal | None:
        """403 when the decoded request needs scopes the principal lacks (AUTH-10)."""
        principal: Principal = scope[PRINCIPAL_SCOPE_KEY]
        needed = self.resource.required_scopes
        if type(message) is Request:
            needed = tuple(dict.fromkeys(
                needed + operation_scopes(self.server, message.method, message.params)))
        if not needed or not self._hierarchy.missing(principal.scopes, needed):
            return None
        return challenge_refusal(
            scope[_CHALLENGES], INSUFFICIENT_SCOPE,
            f"this request needs the scopes {' '.join(needed)}", scopes=needed,
            dpop=scope.get("mcpkit.auth.dpop", False))

    async def _principal(self, scope: Scope, resource: str,
                         settings: ChallengeSettings) -> Principal:
        headers = [value for name, value in scope["headers"] if name == _AUTHORIZATION]
        wanted = self.resource.scopes_supported
        if not headers:
            raise _Refused(challenge_refusal(settings, None, scopes=wanted))
        if len(headers) > 1:
            raise _Refused(challenge_refusal(settings, INVALID_REQUEST,
                                             "send one Authorization header"))
        # RFC 9110 §5.5 and §11.4: the value without the spaces and tabs around it, then
        # `scheme 1*SP token68`; any other whitespace is part of what it is next to.
        scheme, _, token = headers[0].decode("latin-1").strip(" \t").partition(" ")
        scheme, token = scheme.lower(), token.lstrip(" ")
        dpop = scheme == "dpop" and bool(self._algs)
        if scheme != "bearer" and not dpop:  # a scheme not taken here: no usable credentials
            raise _Refused(challenge_refusal(settings, None, scopes=wanted))
        if not _is_token68(token):
            raise _Refused(challenge_refusal(
                settings, INVALID_REQUEST, "the Authorization header must be 'Bearer <token>'"
                + (" or 'DPoP <token>'" if self._algs else "")))
        scope["mcpkit.auth.dpop"] = dpop
        try:
            principal = await self._verify(token)
            if self._claims_checked:
                check_claims(principal.claims, issuers=self.resource.issuer_list,
                             audience=self.resource.audience or resource,
                             now=self.server.options.clock(), leeway_s=self.resource.leeway_s)
            jkt = token_jkt(principal.claims)
        except InvalidTokenError as exc:
            raise _Refused(challenge_refusal(settings, exc.error, str(exc), scopes=wanted,
                                             dpop=dpop)) from None
        if jkt is None and dpop:
            raise _Refused(challenge_refusal(settings, INVALID_TOKEN, "a bearer token was sent "
                                             "with the DPoP scheme", dpop=True))
        if jkt is not None and not dpop:
            raise _Refused(challenge_refusal(settings, INVALID_TOKEN, "this token is bound to a "
                                             "DPoP key: send it as 'DPoP <token>' with a proof"))
        if jkt is None and self.resource.dpop.required:
            raise _Refused(challenge_refusal(settings, INVALID_TOKEN, "this resource takes "
                                             "DPoP-bound tokens only", dpop=True))
        if jkt is not None:
            await self._check_proof(scope, resource, token, jkt, settings)
        return dataclasses.replace(principal, hierarchy=self._hierarchy)

    async def _verify(self, token: str) -> Principal:
        verifier = self.resource.verifier
        if isinstance(verifier, TokenVerifier):
            principal: Any = await verifier.verify(token)
        else:
            assert callable(verifier)
            principal = verifier(token)
            if inspect.isawaitable(principal):
                principal = await principal
        if principal is None:
            raise InvalidTokenError("the token is not valid")
        if not isinstance(principal, Principal):
            raise VerifierUnavailableError(f"the token verifier returned a "
                                           f"{type(principal).__name__}, not a Principal")
        return principal

    async def _check_proof(self, scope: Scope, resource: str, token: str, jkt: str,
                           settings: ChallengeSettings) -> None:
        from mcpkit.auth.dpop import replay_key, verify_proof

        proofs = [value for name, value in scope["headers"] if name == _DPOP]
        dpop = self.resource.dpop
        now = self.server.options.clock()
        nonces = self._nonces(now) if dpop.nonce else (None,)
        fresh = nonces[0]
        if len(proofs) != 1:
            raise _Refused(challenge_refusal(settings, INVALID_DPOP_PROOF, "send one DPoP proof "
                                             "header with a DPoP-bound token", dpop=True,
                                             nonce=fresh))
        for expected in nonces:
            try:
                proof = verify_proof(proofs[0].decode("latin-1"), htm=scope["method"],
                                     htu=resource,
                                     now=now, access_token=token, expected_jkt=jkt,
                                     nonce=expected, max_age_s=dpop.max_age_s,
                                     algorithms=dpop.algorithms)
                break
            except DPoPError as exc:
                if exc.reason == "nonce" and expected is not nonces[-1]:
                    continue  # perhaps signed with the nonce of the window before
                raise _Refused(challenge_refusal(settings, exc.error, str(exc), dpop=True,
                                                 nonce=fresh)) from None
        key = replay_key(proof.jkt, proof.jti)
        if not await self.server.sealer.store.add(key, b"", now + dpop.max_age_s + 60):
            raise _Refused(challenge_refusal(settings, INVALID_DPOP_PROOF, "this DPoP proof "
                                             "was used before", dpop=True, nonce=fresh))

    def _nonces(self, now: float) -> tuple[str, str]:
        """The nonce of this window and of the one before (a client may have signed with it
        just before the window turned): an HMAC of the window's number, so nothing is kept
        per client. The key is this process's own: behind a balancer, a client whose requests
        reach another instance is asked for that instance's nonce (one more round trip)."""
        window = int(now // self.resource.dpop.nonce_lifetime_s)
        return self._nonce(window), self._nonce(window - 1)

    def _nonce(self, window: int) -> str:
        digest = hmac.new(self._nonce_key, b"%d" % window, hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(digest).decode("ascii")

    # -- where the request came to --------------------------------------------------------------

    def _resource_of(self, scope: Scope, request_path: str) -> str | None:
        """This resource's canonical URI: `public_url`, else `http://` + the loopback address
        and port the connection came to + where the app is mounted and its path (the request's
        path when the app serves every path); None when neither can be had."""
        public = self.resource.public_url
        if public is not None:
            return public
        if self._path is None:  # the app serves every path: each is its own resource
            origin = _loopback_origin(scope.get("server"))
            if origin is None:
                return None
            return origin + quote(request_path, safe=_PATH_SAFE).rstrip("/")
        key = (scope.get("server"), scope.get("root_path", ""))
        try:
            return self._resources[key]
        except (KeyError, TypeError):  # TypeError: a server address that is no tuple
            pass
        origin = _loopback_origin(key[0])
        resource = None
        if origin is not None:
            root = key[1] if type(key[1]) is str else ""
            resource = canonical_resource(
                origin + quote(root + self._path, safe=_PATH_SAFE), "the resource URL")
        try:
            if len(self._resources) >= _CACHED:
                self._resources.clear()
            self._resources[key] = resource
        except TypeError:
            pass
        return resource

    def _unresolved(self, scope: Scope) -> Refusal:
        """500, once logged with the fix: no resource URL is configured and the connection did
        not come to one loopback address."""
        if not self._warned:
            self._warned = True
            log.error("a protected server listening on %r cannot tell its own URL: set "
                      "ProtectedResource.public_url to the URL clients reach it by",
                      scope.get("server"))
        return unresolved_refusal()


def _loopback_origin(server: object) -> str | None:
    """`http://HOST:PORT` of the address an ASGI server says it listens on, when that is one
    loopback address and a port; None otherwise (a wildcard, a name, a socket file)."""
    if not isinstance(server, tuple | list) or len(server) != 2:
        return None
    host, port = server
    if type(port) is not int or not 0 < port <= 65535 or not is_loopback(host):
        return None
    host = host.strip("[]")
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}" if port == 80 else f"http://{shown}:{port}"


class _Refused(Exception):
    """Control flow inside the gate: the refusal to answer with; never raised out of it."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal


def _is_token68(token: str) -> bool:
    """RFC 9110 §11.2 token68: what a bearer or DPoP token may be."""
    if not token:
        return False
    body = token.rstrip("=")
    return bool(body) and all(c.isascii() and (c.isalnum() or c in "-._~+/") for c in body)
