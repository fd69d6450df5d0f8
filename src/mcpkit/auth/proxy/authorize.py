"""An MCP client's authorization request to the proxy, checked without I/O.

The checks come in the order that decides where a refusal may go (OAuth 2.1 §4.1.2.1): while
the client or its redirect URI is in doubt, nothing is sent to that URI (an open redirector
would hand an attacker's page the user's browser), so those refusals are pages of the proxy's
own; once both are known, every other refusal is sent back to the client's redirect URI with
its `state` and the proxy's `iss`. `parse_query` refuses a parameter given twice (RFC 6749
§3.1), so two readers cannot take different values of one request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcpkit.auth.proxy.clients import ClientRecord, redirect_matches
from mcpkit.auth.server_metadata import canonical_resource
from mcpkit.errors import OAuthRequestError
from mcpkit.protocol.scopes import SCOPE_TOKEN

__all__ = [
    "AuthorizationRequest",
    "check_request",
    "granted_scopes",
    "parse_query",
    "redirect_with",
]

_CHALLENGE: Final = re.compile(r"[A-Za-z0-9_-]{43}")
"""A base64url SHA-256 digest without padding: the only S256 code challenge there is."""
_STATE_LIMIT: Final = 2048
_PARAM_LIMIT: Final = 4096


def parse_query(text: str, *, what: str = "the request") -> dict[str, str]:
    """Form or query parameters, each at most once; `invalid_request` for a repeated one,
    a value past `_PARAM_LIMIT` or text that is no form encoding."""
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text),
                          max_num_fields=64)
    except ValueError:
        raise OAuthRequestError(f"{what} is not form-encoded parameters",
                                error="invalid_request") from None
    found: dict[str, str] = {}
    for name, value in pairs:
        if name in found:
            raise OAuthRequestError(f"{what} gives {name!r} more than once (RFC 6749 §3.1)",
                                    error="invalid_request")
        if len(value) > _PARAM_LIMIT:
            raise OAuthRequestError(f"{what}'s {name!r} is longer than {_PARAM_LIMIT} "
                                    "characters", error="invalid_request")
        found[name] = value
    return found


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """What a checked authorization request asks for."""

    client_id: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str


def granted_scopes(asked: str | None, supported: Iterable[str]) -> tuple[str, ...]:
    """The scopes granted for `asked` (space-separated): those of it the proxy supports, in
    its order; nothing asked, every supported scope. `invalid_scope` when scopes were asked
    and none of them is supported."""
    known = tuple(supported)
    if asked is None or not asked.strip():
        return tuple(s for s in known if s != "offline_access")
    wanted = [s for s in asked.split(" ") if s]
    if not all(SCOPE_TOKEN.fullmatch(s) for s in wanted):
        raise OAuthRequestError("scope holds a value that is no scope (RFC 6749 §3.3)",
                                error="invalid_scope")
    granted = tuple(dict.fromkeys(s for s in wanted if s in known))
    if not granted and any(s != "offline_access" for s in wanted):
        raise OAuthRequestError(f"none of the scopes asked for is offered; this server offers "
                                f"{' '.join(known) or 'none'}", error="invalid_scope")
    return granted


def client_redirect(client: ClientRecord, params: Mapping[str, str]) -> str:
    """The redirect URI the response goes to: the one asked for, if it is registered (the
    only one registered, when none is asked for); `invalid_request` otherwise, shown on the
    proxy's own page, never sent anywhere."""
    asked = params.get("redirect_uri")
    if asked is None:
        if len(client.redirect_uris) == 1:
            return client.redirect_uris[0]
        raise OAuthRequestError("redirect_uri is required: this client registered several",
                                error="invalid_request")
    if not redirect_matches(client.redirect_uris, asked):
        raise OAuthRequestError(f"the redirect URI {asked[:120]!r} is not one this client "
                                "registered; nothing is sent there", error="invalid_request")
    return asked


def check_request(client: ClientRecord, redirect_uri: str, params: Mapping[str, str], *,
                  resource: str, scopes_supported: Iterable[str]) -> AuthorizationRequest:
    """The rest of the request, once the client and `redirect_uri` are settled: every
    refusal here may go back to the client (`redirect_with`)."""
    if params.get("response_type") != "code":
        raise OAuthRequestError("response_type must be 'code'", error="unsupported_response_type")
    challenge = params.get("code_challenge")
    if challenge is None:
        raise OAuthRequestError("PKCE is required: send code_challenge with "
                                "code_challenge_method=S256", error="invalid_request")
    if params.get("code_challenge_method") != "S256":
        raise OAuthRequestError("code_challenge_method must be S256 (plain is not taken)",
                                error="invalid_request")
    if not _CHALLENGE.fullmatch(challenge):
        raise OAuthRequestError("code_challenge must be the base64url SHA-256 of the verifier "
                                "(43 characters)", error="invalid_request")
    state = params.get("state")
    if state is not None and len(state) > _STATE_LIMIT:
        raise OAuthRequestError(f"state is longer than {_STATE_LIMIT} characters",
                                error="invalid_request")
    asked_resource = params.get("resource")
    if asked_resource is not None:
        try:
            named = canonical_resource(asked_resource, "resource")
        except ValueError:
            named = None
        if named != resource:
            raise OAuthRequestError(f"resource must be {resource}: this server issues tokens "
                                    "for itself only (RFC 8707)", error="invalid_target")
    if "request" in params or "request_uri" in params:
        raise OAuthRequestError("request objects are not taken: send the parameters as they "
                                "are", error="request_not_supported")
    scopes = granted_scopes(params.get("scope"), scopes_supported)
    return AuthorizationRequest(client.client_id, redirect_uri, state, challenge, scopes,
                                resource)


def redirect_with(redirect_uri: str, params: Mapping[str, str | None]) -> str:
    """`redirect_uri` with `params` added to its query (those it had are kept)."""
    parts = urlsplit(redirect_uri)
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit(parts._replace(query=query))
