"""The answers a resource server gives instead of serving: 401, 403 and 400 with their
`WWW-Authenticate` challenges (RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1).

`ERROR_STATUS` is the one table from an OAuth error code to its HTTP status (OAuth 2.1 §5.3,
RFC 9449 §7.1). A challenge always names the Protected Resource Metadata document
(`resource_metadata`), so a client that knows nothing of this server can discover its
authorization server from the first refusal; it names the scopes the request needs when there
are any (AUTH-6, AUTH-10), and, when DPoP is accepted, a second `DPoP` challenge lists the
proof algorithms (and the nonce, when one is required). Values are quoted as RFC 9110 §5.6.4
says; a description is reduced to printable ASCII without quotes, so nothing a peer sent can
break the header. A challenge has no body: on the MCP endpoint a client reads JSON bodies as
JSON-RPC messages, and everything the refusal says is in its status and headers. No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from mcpkit.auth.server_scopes import scope_text
from mcpkit.errors import InternalError
from mcpkit.protocol.http_refusals import Refusal
from mcpkit.protocol.rejections import error_response

__all__ = [
    "ERROR_STATUS",
    "INSUFFICIENT_SCOPE",
    "INVALID_DPOP_PROOF",
    "INVALID_REQUEST",
    "INVALID_TOKEN",
    "USE_DPOP_NONCE",
    "ChallengeSettings",
    "challenge_refusal",
    "unavailable_refusal",
    "unresolved_refusal",
]

INVALID_REQUEST: Final = "invalid_request"
INVALID_TOKEN: Final = "invalid_token"
INSUFFICIENT_SCOPE: Final = "insufficient_scope"
INVALID_DPOP_PROOF: Final = "invalid_dpop_proof"
USE_DPOP_NONCE: Final = "use_dpop_nonce"

ERROR_STATUS: Final[Mapping[str | None, int]] = MappingProxyType({
    None: 401,                 # no credentials at all: a challenge without an error code
    INVALID_REQUEST: 400,      # malformed: two tokens, a token in the query, a bad header
    INVALID_TOKEN: 401,        # expired, revoked, malformed, for another audience or issuer
    INVALID_DPOP_PROOF: 401,   # RFC 9449 §7.1
    USE_DPOP_NONCE: 401,       # RFC 9449 §9: retry with the nonce given in DPoP-Nonce
    INSUFFICIENT_SCOPE: 403,   # the token is good, its scopes are not enough
})
"""OAuth error code -> HTTP status (None: the request carried no credentials)."""

_WWW_AUTHENTICATE: Final = b"www-authenticate"
_DPOP_NONCE: Final = b"dpop-nonce"
_MAX_DESCRIPTION: Final = 200


@dataclass(frozen=True, slots=True)
class ChallengeSettings:
    """What every challenge of one resource says besides its error: where its metadata is,
    and which DPoP algorithms it takes (empty: DPoP is not accepted)."""

    resource_metadata: str
    dpop_algs: tuple[str, ...] = ()


def challenge_refusal(
    settings: ChallengeSettings,
    error: str | None,
    description: str | None = None,
    *,
    scopes: Iterable[str] = (),
    dpop: bool = False,
    nonce: str | None = None,
) -> Refusal:
    """The refusal for `error` (a key of `ERROR_STATUS`): its status, the challenge(s), and a
    JSON body naming the error. `dpop`: the request used the DPoP scheme, so the challenge
    that carries the error is the DPoP one; `nonce` is sent as `DPoP-Nonce` (RFC 9449 §8)."""
    status = ERROR_STATUS[error]
    params = [("resource_metadata", settings.resource_metadata)]
    needed = scope_text(scopes)
    if needed:
        params.append(("scope", needed))
    base = list(params)
    if error is not None:
        params.append(("error", error))
        if description:
            params.append(("error_description", _printable(description)))
    headers: list[tuple[bytes, bytes]] = []
    if dpop and settings.dpop_algs:
        headers.append((_WWW_AUTHENTICATE, _challenge("DPoP", [
            *params, ("algs", " ".join(settings.dpop_algs))])))
        headers.append((_WWW_AUTHENTICATE, _challenge("Bearer", base)))
    else:
        headers.append((_WWW_AUTHENTICATE, _challenge("Bearer", params)))
        if settings.dpop_algs:
            headers.append((_WWW_AUTHENTICATE, _challenge("DPoP", [
                params[0], ("algs", " ".join(settings.dpop_algs))])))
    if nonce is not None:
        headers.append((_DPOP_NONCE, nonce.encode("ascii")))
    return Refusal(status, None, tuple(headers))


def unavailable_refusal(retry_after_s: float | None = None) -> Refusal:
    """503: the token could not be checked at all (the keys or the introspection endpoint are
    out of reach). Not a challenge: the client's credentials may be fine, and asking it to
    authorize again would not help. `Retry-After` is `retry_after_s` rounded up (at least 1),
    5 when the verifier does not say."""
    seconds = 5 if retry_after_s is None else max(1, math.ceil(min(retry_after_s, 86400)))
    return Refusal(503, None, ((b"retry-after", b"%d" % seconds),))


def unresolved_refusal() -> Refusal:
    """500: the server cannot tell its own resource URL (no `public_url`, and the connection
    came to no single loopback address), so it can check no token's audience. A fault of the
    configuration, which the client cannot fix: no challenge."""
    return Refusal(500, error_response(None, InternalError(
        "Internal error: this protected server has no resource URL configured "
        "(ProtectedResource.public_url)")))


def _challenge(scheme: str, params: list[tuple[str, str]]) -> bytes:
    return (scheme + " " + ", ".join(f'{name}="{_quoted(value)}"' for name, value in params)
            ).encode("ascii")


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _printable(text: str) -> str:
    """RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E; the rest becomes `?`."""
    cleaned = "".join(c if (" " <= c <= "~" and c not in '"\\') else "?" for c in text)
    return cleaned[:_MAX_DESCRIPTION]
