"""Authorization failed: a DPoP proof, a grant, an access token, a verifier out of reach, a
sign-in or step-up this client must ask for, the browser's redirect, or a request the
authorization proxy refuses. No message holds a token, code, secret or assertion."""

from __future__ import annotations

from mcpkit.errors.base import MCPError

__all__ = [
    "AuthError",
    "DPoPError",
    "GrantError",
    "InvalidTokenError",
    "OAuthRequestError",
    "RedirectError",
    "SignInNeeded",
    "StepUpNeeded",
    "VerifierUnavailableError",
]


class AuthError(MCPError):
    """Authorization failed."""


class DPoPError(AuthError):
    """A DPoP proof (RFC 9449) failed a check: raised by `mcpkit.auth.dpop.verify_proof`.

    `reason` names the check that failed, one short word a caller can branch on ("typ", "alg",
    "jwk", "signature", "htm", "htu", "iat", "jti", "ath", "jkt", "nonce", "malformed"), and
    `error` is the OAuth error code the answer carries: `use_dpop_nonce` when the proof lacks
    the nonce the server asked for (the client retries with it), `invalid_dpop_proof` for
    everything else. The message never holds the proof or the access token.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.error = "use_dpop_nonce" if reason == "nonce" else "invalid_dpop_proof"


class StepUpNeeded(AuthError):
    """A 403 `insufficient_scope` that this client cannot answer itself (it has no browser
    step): `scope` is the union it should sign in again with, for `server_url`."""

    def __init__(self, message: str, *, server_url: str, scope: str | None) -> None:
        super().__init__(message)
        self.server_url = server_url
        self.scope = scope


class SignInNeeded(AuthError):
    """A server needs a sign-in (none is kept, or the kept one expired, or its refresh was
    refused: the grant was revoked) that only the browser step can give, and this client has
    none (an `OAuth` without a redirect and callback handler, as the CLI's client commands
    use): `server_url` is the server, `issuer` the authorization server to sign in at."""

    def __init__(self, message: str, *, server_url: str, issuer: str) -> None:
        super().__init__(message)
        self.server_url = server_url
        self.issuer = issuer


class GrantError(AuthError):
    """An authorization server (or an enterprise IdP) refused a token request, or answered one
    with something that is no token response.

    `error` is the OAuth error code it sent (`invalid_grant`, `invalid_client`,
    `invalid_scope`, `unauthorized_client`, ...; `invalid_response` when the answer was not a
    token response), `description` its `error_description` (cut short), `status` the HTTP
    status. The message names the grant and the endpoint, never a token, secret or assertion.
    """

    def __init__(self, message: str, *, error: str, description: str | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.description = description
        self.status = status


class InvalidTokenError(AuthError):
    """A resource server refuses an access token: expired, not yet valid, badly signed, for
    another audience or issuer, revoked, or malformed. Raised by token verifiers.

    `error` is the OAuth code the 401 challenge carries (`invalid_token`; `invalid_request`
    for a malformed request, answered 400). The message says why for the challenge's
    `error_description`, and never holds the token.
    """

    def __init__(self, message: str, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.error = error


class VerifierUnavailableError(AuthError):
    """A resource server cannot check tokens right now: its JWKS or introspection endpoint is
    out of reach or answers nonsense. Answered 503, not 401: the client's token may be good.
    `retry_after_s`, when known, is how long until the verifier tries again (the 503's
    `Retry-After`)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RedirectError(AuthError):
    """The authorization response did not come back usable: the authorization server redirected
    the browser with an error (`error` is its code, e.g. `access_denied`), or nothing reached
    the loopback redirect listener in time (`error` is "timeout"). Raised by
    `mcpkit.transports.oauth.redirect`; the message says what to do and holds no code."""

    def __init__(self, message: str, *, error: str) -> None:
        super().__init__(message)
        self.error = error


class OAuthRequestError(AuthError):
    """The authorization proxy (`mcpkit.auth.proxy`) refuses what an MCP client or a browser
    asked of it: a registration, an authorization request, a token request, a revocation.

    `error` is the OAuth code of the answer (`invalid_request`, `invalid_client`,
    `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`,
    `access_denied`, `invalid_redirect_uri`, `invalid_client_metadata`, `server_error`,
    `temporarily_unavailable`), `status` the HTTP status of a direct answer; the message is
    the `error_description`, naming the parameter and the fix, never a code, token or secret.
    """

    def __init__(self, message: str, *, error: str, status: int = 400) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
