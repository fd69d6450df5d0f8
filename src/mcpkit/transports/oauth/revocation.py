"""Token revocation (RFC 7009): ending a grant at the authorization server, not only forgetting
its tokens here.

`revoke_tokens` posts each token of a sign-in to the AS's `revocation_endpoint`, the refresh
token first (revoking it ends the whole grant at most servers, RFC 7009 §2.1), then the access
token, each with its `token_type_hint` and the client's authentication at the token endpoint
(`http.client_auth`: the same client that obtained them). An AS that lists no revocation
endpoint offers none: the caller says so. RFC 7009 §2.2 answers 200 for a token that is
already invalid, so any 200 is done; `unsupported_token_type` (§2.2.1: a self-contained JWT
access token the AS cannot recall) is kept apart, since that token simply lives until it
expires; any other answer is reported by the token kind and the AS's error code, never with
the token.

Imports: `mcpkit.auth`, `mcpkit.store.tokens` and the sibling `http`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mcpkit.auth.client_discovery import ASMetadata
from mcpkit.errors import AuthError
from mcpkit.store.tokens import ClientInfo, TokenSet
from mcpkit.transports.oauth.http import OAuthHTTP, client_auth
from mcpkit.transports.oauth.registration import auth_method_for

__all__ = [
    "Revoked",
    "revoke_tokens",
]


@dataclass(frozen=True)
class Revoked:
    """What revocation did: the token kinds the AS accepted, those it cannot revoke, and what
    went wrong otherwise."""

    revoked: tuple[str, ...]
    problems: tuple[str, ...]
    unsupported: tuple[str, ...] = ()


async def revoke_tokens(http: OAuthHTTP, metadata: ASMetadata, client: ClientInfo,
                        tokens: TokenSet, *, private_key: Any = None) -> Revoked | None:
    """Revoke `tokens` at the AS `metadata` describes, authenticated as `client`; None when
    the AS names no revocation endpoint."""
    endpoint = metadata.raw.get("revocation_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return None
    methods = metadata.raw.get("revocation_endpoint_auth_methods_supported")
    listed = tuple(m for m in methods if isinstance(m, str)) if isinstance(methods, list) else None
    as_listed = dataclasses.replace(metadata, token_endpoint_auth_methods_supported=(
        listed or metadata.token_endpoint_auth_methods_supported))
    method = auth_method_for(client, as_listed, has_key=private_key is not None)
    revoked: list[str] = []
    problems: list[str] = []
    unsupported: list[str] = []
    for kind, token in (("refresh_token", tokens.refresh_token),
                        ("access_token", tokens.access_token)):
        if not token:
            continue
        headers, extra = client_auth(
            client, method, audience=metadata.issuer, private_key=private_key,
            signing_algs=metadata.raw.get(
                "revocation_endpoint_auth_signing_alg_values_supported")
            or metadata.raw.get("token_endpoint_auth_signing_alg_values_supported"))
        try:
            status, doc, _ = await http.post_form(
                endpoint, {"token": token, "token_type_hint": kind, **extra}, headers)
        except AuthError as exc:
            problems.append(f"the {kind.replace('_', ' ')}: {exc}")
            continue
        if status == 200:
            revoked.append(kind)
            continue
        error = doc.get("error") if isinstance(doc, dict) else None
        if error == "unsupported_token_type":
            unsupported.append(kind)
            continue
        problems.append(f"the {kind.replace('_', ' ')}: HTTP {status}"
                        + (f" ({error})" if isinstance(error, str) else ""))
    return Revoked(tuple(revoked), tuple(problems), tuple(unsupported))
