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

from mcpkit.auth.server_challenges import (
    INSUFFICIENT_SCOPE,
    INVALID_DPOP_PROOF,
    INVALID_REQUEST,
    INVALID_TOKEN,
    ChallengeSettings,
    challenge_refusal,
    unavailable_refusal,
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
from mcpkit.legacy.session_quota import PRINCIPAL_SCOPE_KEY
from mcpkit.protocol.codec import Message, Request, encode
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.server.scopes import operation_scopes
from mcpkit.transports.http_endpoint import Scope, Send, refuse

__all__ = ["PRINCIPAL_SCOPE_KEY", "WELL_KNOWN", "AuthGate"]

log = logging.getLogger("mcpkit.auth")

_AUTHORIZATION: Final = b"authorization"
_DPOP: Final = b"dpop"
_HOST: Final = b"host"
_CHALLENGES: Final = "mcpkit.auth.challenges"
"""Scope key: this request's `ChallengeSettings`, kept for the scope check after the body."""


class AuthGate:
    """The authorization check of one HTTP app (see the module docstring)."""

    def __init__(self, server: Any, resource: ProtectedResource, path: str | None) -> None:
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
        resource = self._resource_of(scope, self._path or scope["path"][len(WELL_KNOWN):])
        settings = self.resource
        body = encode(metadata_document(
            resource, settings.issuer_list, scopes_supported=settings.scopes_supported,
            resource_documentation=settings.resource_documentation,
            resource_name=settings.resource_name, dpop_algs=self._algs,
            dpop_required=settings.dpop.required))
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)),
            (b"cache-control", b"public, max-age=3600"),
            (b"access-control-allow-origin", b"*")]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})

    # -- the token ------------------------------------------------------------------------------

    async def authenticate(self, scope: Scope, send: Send) -> bool:
        """Check the request's credentials; True with the principal in the scope, False once
        refused."""
        resource = self._resource_of(scope, self._path or scope["path"])
        settings = ChallengeSettings(metadata_url(resource), self._algs)
        scope[_CHALLENGES] = settings
        refusal: Refusal | None
        try:
            principal = await self._principal(scope, resource, settings)
        except _Refused as refused:
            refusal = refused.refusal
        except VerifierUnavailableError as exc:
            log.warning("cannot check an access token: %s", exc)
            refusal = unavailable_refusal()
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
        scheme, _, token = headers[0].decode("latin-1").strip().partition(" ")
        scheme, token = scheme.lower(), token.strip()
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
        htu = self._url_of(scope, resource)
        for expected in nonces:
            try:
                proof = verify_proof(proofs[0].decode("latin-1"), htm=scope["method"], htu=htu,
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

    def _resource_of(self, scope: Scope, path: str) -> str:
        """This resource's canonical URI: configured, else the request's scheme, Host and the
        endpoint's path."""
        public = self.resource.public_url
        if public is not None:
            return public
        host = next((v for n, v in scope["headers"] if n == _HOST), b"").decode("latin-1")
        try:
            return canonical_resource(f"{scope.get('scheme', 'http')}://{host}{path}",
                                      "the request's URL")
        except ValueError:
            return f"{scope.get('scheme', 'http')}://localhost{path.rstrip('/')}"

    def _url_of(self, scope: Scope, resource: str) -> str:
        """The URL a DPoP proof must name (`htu`): the public one behind a proxy."""
        if self.resource.public_url is not None or self._path is not None:
            return resource
        return self._resource_of(scope, scope["path"])


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
