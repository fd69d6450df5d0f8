"""The authorization code request and its response, without I/O (AUTH-24, AUTH-25, AUTH-28,
AUTH-29).

- `Pkce`: the S256 verifier and challenge (RFC 7636), made from randomness the caller passes;
- `require_pkce`: an AS whose metadata does not list S256 in `code_challenge_methods_supported`
  is refused before any redirect (an absent list is a refusal too, as the spec says);
- `Pending`: what is recorded before the redirect (the validated issuer, whether it promised
  `iss`, the state, the verifier, the redirect URI, the resource and the scopes), and
  `authorization_url` builds the request from it;
- `read_callback`: the authorization response checked in RFC 9207's order, *before* its code
  or its error is looked at: the `iss` compared with the recorded issuer by plain string
  equality (no case folding, no default port or trailing slash, nothing percent-decoded beyond
  the query's own form decoding), the table of AUTH-28 for when it may be absent, then `state`.
  A response that fails is refused whole: an `error` it carries is not shown, since a mix-up
  attacker would choose it.

Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcpkit.errors import AuthError

__all__ = [
    "Pending",
    "Pkce",
    "authorization_url",
    "read_callback",
    "require_pkce",
]

S256: Final = "S256"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Pkce:
    verifier: str
    challenge: str
    method: str = S256

    @classmethod
    def from_random(cls, raw: bytes) -> Pkce:
        """From 32 or more random bytes: a 43+ character verifier of the unreserved set."""
        if len(raw) < 32:
            raise ValueError("a PKCE verifier needs at least 32 random bytes")
        verifier = _b64(raw)
        return cls(verifier, _b64(hashlib.sha256(verifier.encode("ascii")).digest()))


def require_pkce(methods: tuple[str, ...] | None, issuer: str) -> None:
    """Refuse an AS that does not say it supports S256 (AUTH-24)."""
    if methods is None:
        raise AuthError(
            f"the authorization server {issuer} does not publish "
            "code_challenge_methods_supported, so PKCE support cannot be verified; the "
            "authorization is refused (ask its operator to publish S256)")
    if S256 not in methods:
        raise AuthError(f"the authorization server {issuer} does not support PKCE with S256 "
                        f"(code_challenge_methods_supported: {list(methods)})")


@dataclass(frozen=True)
class Pending:
    """One authorization request in flight: everything its response is checked against."""

    issuer: str
    iss_supported: bool
    state: str
    pkce: Pkce
    redirect_uri: str
    resource: str
    scope: str | None
    client_id: str
    authorization_endpoint: str


def authorization_url(pending: Pending) -> str:
    """The URL the user's browser opens (the endpoint's own query kept)."""
    params: dict[str, str] = {
        "response_type": "code",
        "client_id": pending.client_id,
        "redirect_uri": pending.redirect_uri,
        "state": pending.state,
        "code_challenge": pending.pkce.challenge,
        "code_challenge_method": pending.pkce.method,
        "resource": pending.resource,
    }
    if pending.scope:
        params["scope"] = pending.scope
    parts = urlsplit(pending.authorization_endpoint)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def read_callback(pending: Pending, params: Mapping[str, str | None]) -> str:
    """The authorization code of a response whose form-decoded query is `params`, once its
    `iss` and `state` passed; an `AuthError` otherwise (or the AS's error, once trusted)."""
    iss = params.get("iss")
    if iss is not None:
        if iss != pending.issuer:
            raise AuthError(
                f"the authorization response names the issuer {iss!r}, not {pending.issuer!r} "
                "the request was sent to (RFC 9207): it is refused unread, and its code is "
                "not used")
    elif pending.iss_supported:
        raise AuthError(
            f"the authorization response carries no iss, but {pending.issuer} advertises "
            "authorization_response_iss_parameter_supported (RFC 9207): it is refused, and "
            "its code is not used")
    state = params.get("state")
    if state is None or state != pending.state:
        raise AuthError("the authorization response's state does not match the request's "
                        f"({'missing' if state is None else 'another state'}): it is refused")
    error = params.get("error")
    if error is not None:
        description = params.get("error_description")
        raise AuthError(f"the authorization server {pending.issuer} refused the authorization: "
                        f"{error}" + (f" ({description})" if description else ""))
    code = params.get("code")
    if not code:
        raise AuthError("the authorization response carries neither a code nor an error")
    return code
