"""The machine grants: tokens for a client that has no user at a browser.

Three ways, each a grant object with one method, `obtain(http, metadata, resource=...)`, that
posts to the authorization server's token endpoint and returns a `TokenSet`:

- `ClientCredentialsGrant`: OAuth client credentials (the `oauth-client-credentials`
  extension), the client authenticating with a secret or a signed JWT;
- `EnterpriseGrant`: enterprise-managed authorization. The user's ID token from the company
  IdP is exchanged there (RFC 8693 token exchange) for an ID-JAG, an identity assertion
  addressed to the MCP server's AS, which is then presented to that AS with the RFC 7523
  jwt-bearer grant;
- `WorkloadIdentityGrant`: workload identity federation. The platform hands the workload a JWT
  (a Kubernetes service account token, a cloud instance identity), presented as is with the
  jwt-bearer grant. An error is final: no second try, no other grant, since the platform's
  token will not get better by asking again and a fallback would hide a broken trust setup.

How the client authenticates at a token endpoint is `ClientCredentials`: `client_secret_basic`,
`client_secret_post`, `private_key_jwt` (RFC 7523 section 2.2: a short-lived JWT signed with
the client's key, `iss` and `sub` its id, `aud` the AS's issuer) or `none`, chosen from what
the AS metadata lists when not fixed. Every token request may carry a DPoP proof
(`mcpkit.transports.oauth.dpop.DPoPSigner`); a `use_dpop_nonce` answer is retried once with
the nonce, the one retry RFC 9449 asks for.

Failures are `GrantError` with the AS's `error` code. Secrets, assertions and tokens stay out
of every message and `repr`. The grants are plain functions of an `httpx.AsyncClient` and the
AS metadata, so `MachineAuth` (`mcpkit.transports.oauth.machine`) and the CLI share them.

Imports: httpx, joserfc (through `mcpkit.protocol.extras`), `mcpkit.errors`, `mcpkit.store.
tokens`, `mcpkit.transports.oauth.dpop` and the standard library.
"""

from __future__ import annotations

import base64
import inspect
import json
import secrets
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol
from urllib.parse import quote

import httpx

from mcpkit.errors import GrantError
from mcpkit.protocol.extras import require
from mcpkit.store.tokens import TokenSet
from mcpkit.transports.oauth.dpop import DPoPSigner

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "ClientCredentials",
    "ClientCredentialsGrant",
    "EnterpriseGrant",
    "GrantError",
    "MachineGrant",
    "WorkloadIdentityGrant",
    "client_assertion",
    "exchange_for_id_jag",
    "import_private_key",
    "request_token",
    "signing_alg_for",
]

CLIENT_CREDENTIALS: Final = "client_credentials"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE: Final = "urn:ietf:params:oauth:token-type:id-jag"
CLIENT_ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
_ASSERTION_LIFETIME_S: Final = 300
_DESCRIPTION_CHARS: Final = 200

Assertion = str | Callable[[], str | Awaitable[str]]
"""A JWT, or something that returns a fresh one (a projected token re-read from its file)."""


@dataclass(frozen=True)
class ClientCredentials:
    """How this client proves who it is at a token endpoint.

    `private_key` (a PEM string or a private JWK) selects `private_key_jwt`; `client_secret`
    selects `client_secret_basic` (or `client_secret_post` when the AS lists only that);
    neither is a public client (`none`). `auth_method` fixes the choice.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | Mapping[str, Any] | None = field(default=None, repr=False)
    signing_alg: str | None = None
    """The assertion's JWS algorithm; default: the first the AS lists that fits the key."""
    auth_method: str | None = None

    def __post_init__(self) -> None:
        if not self.client_id:
            raise ValueError("ClientCredentials needs a client_id")
        if self.auth_method is not None and self.auth_method not in AUTH_METHODS:
            raise ValueError(f"token endpoint auth method {self.auth_method!r} is not one of "
                             f"{', '.join(AUTH_METHODS)}")

    def method_for(self, metadata: Mapping[str, Any]) -> str:
        """The auth method to use at the AS `metadata` describes."""
        if self.auth_method is not None:
            return self.auth_method
        listed = metadata.get("token_endpoint_auth_methods_supported")
        supported = set(listed) if isinstance(listed, list) else {"client_secret_basic"}
        if self.private_key is not None:
            return "private_key_jwt"
        if self.client_secret is not None:
            basic = "client_secret_basic" in supported or "client_secret_post" not in supported
            return "client_secret_basic" if basic else "client_secret_post"
        return "none"

    def apply(self, form: dict[str, str], headers: dict[str, str],
              metadata: Mapping[str, Any], now: float) -> None:
        """Add this client's authentication to a token request's form and headers."""
        method = self.method_for(metadata)
        if method == "client_secret_basic":
            secret = self._secret(method)
            pair = f"{quote(self.client_id, safe='')}:{quote(secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post":
            form["client_id"] = self.client_id
            form["client_secret"] = self._secret(method)
        elif method == "private_key_jwt":
            form["client_id"] = self.client_id
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = client_assertion(self, metadata, now)
        else:
            form["client_id"] = self.client_id

    def _secret(self, method: str) -> str:
        if self.client_secret is None:
            raise ValueError(f"{method} needs a client_secret for client {self.client_id!r}")
        return self.client_secret


_ALGS_BY_KEY: Final[Mapping[tuple[str, str | None], tuple[str, ...]]] = {
    ("EC", "P-256"): ("ES256",), ("EC", "P-384"): ("ES384",), ("EC", "P-521"): ("ES512",),
    ("RSA", None): ("RS256", "PS256", "RS384", "PS384", "RS512", "PS512"),
    ("OKP", "Ed25519"): ("EdDSA", "Ed25519"),
}
"""The JWS algorithms a private key can sign with, by key type and curve, the usual first."""


def _algorithms_of(key: Any) -> tuple[str, ...]:
    kty = str(getattr(key, "key_type", ""))
    curve = None if kty == "RSA" else str(getattr(key, "curve_name", ""))
    return _ALGS_BY_KEY.get((kty, curve), ())


def signing_alg_for(key: Any, listed: Any, fixed: str | None = None) -> str:
    """The algorithm a `private_key_jwt` assertion is signed with: `fixed` when given, else
    the first of the AS's `token_endpoint_auth_signing_alg_values_supported` (`listed`) that
    `key` can sign with (an AS may list `HS256` first: a shared-secret algorithm, which no
    private key fits), else the key's usual one when the AS lists none."""
    fits = _algorithms_of(key)
    if fixed is not None:
        if fixed not in fits:
            raise ValueError(f"private_key_jwt: a {getattr(key, 'key_type', '?')} key cannot "
                             f"sign {fixed!r} (it signs {', '.join(fits) or 'nothing known'})")
        return fixed
    algs = [a for a in listed if isinstance(a, str)] if isinstance(listed, list | tuple) else []
    if not algs:
        if not fits:
            raise ValueError("private_key_jwt: the key is not an EC, RSA or Ed25519 key")
        return fits[0]
    chosen = next((a for a in algs if a in fits), None)
    if chosen is None:
        raise ValueError(f"private_key_jwt: the authorization server accepts "
                         f"{', '.join(algs)} for client assertions, and this "
                         f"{getattr(key, 'key_type', '?')} key signs "
                         f"{', '.join(fits) or 'none of them'}; use a key of a type it accepts")
    return chosen


def import_private_key(raw: Any, client_id: str) -> Any:
    """A client's private key (a PEM string, a private JWK, or a joserfc key) as joserfc
    holds it; a `ValueError` naming the client when it is not one or has no private part."""
    require("joserfc", "private_key_jwt client authentication")
    from joserfc import jwk

    key: Any = raw if hasattr(raw, "key_type") else None
    if key is None:
        data: Any = dict(raw) if isinstance(raw, Mapping) else raw
        kinds = ([data.get("kty")] if isinstance(data, dict) else ["EC", "RSA", "OKP"])
        for kind in kinds:  # named, so joserfc need not guess (and warn)
            try:
                key = jwk.import_key(data, kind)  # type: ignore[arg-type]
                break
            except Exception:  # not this kind: the next one
                continue
        if key is None:
            raise ValueError(f"the private key of client {client_id!r} is not a key joserfc "
                             "can read (an EC, RSA or Ed25519 key as PEM or JWK)")
    if not key.is_private:
        raise ValueError(f"the key of client {client_id!r} has no private part")
    return key


def _signing_key(client: ClientCredentials, metadata: Mapping[str, Any]) -> tuple[Any, str]:
    """The client's private key as joserfc holds it, and the algorithm to sign with."""
    key = import_private_key(client.private_key, client.client_id)
    alg = signing_alg_for(key, metadata.get("token_endpoint_auth_signing_alg_values_supported"),
                          client.signing_alg)
    return key, alg


def client_assertion(client: ClientCredentials, metadata: Mapping[str, Any],
                     now: float) -> str:
    """A `private_key_jwt` client assertion for the AS `metadata` describes: `iss` and `sub`
    the client id, `aud` the AS's issuer, a fresh `jti`, five minutes of life."""
    from joserfc import jwt

    key, alg = _signing_key(client, metadata)
    audience = metadata.get("issuer") or metadata.get("token_endpoint")
    claims = {
        "iss": client.client_id,
        "sub": client.client_id,
        "aud": audience,
        "jti": secrets.token_urlsafe(24),
        "iat": int(now),
        "exp": int(now) + _ASSERTION_LIFETIME_S,
    }
    header = {"alg": alg, "typ": "JWT", **({"kid": key.kid} if key.kid else {})}
    with warnings.catch_warnings():  # EdDSA: the AS's own choice (see mcpkit.auth.dpop)
        warnings.filterwarnings("ignore", message="EdDSA is deprecated")
        return str(jwt.encode(header, claims, key, algorithms=[alg]))


def _endpoint(metadata: Mapping[str, Any], what: str) -> str:
    url = metadata.get("token_endpoint")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise GrantError(f"{what}: the authorization server metadata has no token_endpoint",
                         error="invalid_metadata")
    return url


def _refusal(what: str, url: str, response: httpx.Response) -> GrantError:
    """The `GrantError` for a token endpoint's non-200 answer."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        error = body["error"]
        raw = body.get("error_description")
        description = raw[:_DESCRIPTION_CHARS] if isinstance(raw, str) else None
        said = f": {description}" if description else ""
        return GrantError(f"{what} refused by {url} ({response.status_code} {error}){said}",
                          error=error, description=description, status=response.status_code)
    return GrantError(f"{what}: {url} answered {response.status_code} without an OAuth error",
                      error="invalid_response", status=response.status_code)


def _token_set(what: str, url: str, response: httpx.Response, scope: str | None,
               now: float) -> tuple[TokenSet, dict[str, Any]]:
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise GrantError(f"{what}: {url} answered 200 with no JSON object",
                         error="invalid_response", status=200)
    token, kind = body.get("access_token"), body.get("token_type")
    if not isinstance(token, str) or not token or not isinstance(kind, str):
        raise GrantError(f"{what}: {url} answered without an access_token and token_type",
                         error="invalid_response", status=200)
    expires_in = body.get("expires_in")
    lifetime = expires_in if isinstance(expires_in, int | float) and expires_in > 0 else None
    refresh = body.get("refresh_token")
    granted = body.get("scope")
    return TokenSet(
        access_token=token,
        token_type="DPoP" if kind.lower() == "dpop" else kind,
        refresh_token=refresh if isinstance(refresh, str) else None,
        expires_at=now + lifetime if lifetime is not None else None,
        scope=granted if isinstance(granted, str) else scope,
    ), body


async def request_token(http: httpx.AsyncClient, metadata: Mapping[str, Any],
                        form: Mapping[str, str], *, client: ClientCredentials | None,
                        what: str, dpop: DPoPSigner | None = None,
                        clock: Callable[[], float] = time.time,
                        ) -> tuple[TokenSet, dict[str, Any]]:
    """POST `form` to the token endpoint of `metadata`, authenticated as `client`, with a
    DPoP proof when `dpop` is given; return the token and the whole JSON answer.

    A `use_dpop_nonce` refusal is sent again once with the nonce; any other refusal is a
    `GrantError`. `what` names the grant in messages ("client credentials grant").
    """
    url = _endpoint(metadata, what)
    for _ in range(2):
        body, headers = dict(form), {"accept": "application/json"}
        if client is not None:
            client.apply(body, headers, metadata, clock())
        request = http.build_request("POST", url, data=body, headers=headers)
        if dpop is not None:
            dpop.sign_token_request(request)
        try:
            response = await http.send(request)
            await response.aread()
        except httpx.HTTPError as exc:
            raise GrantError(f"{what}: {url} could not be reached ({type(exc).__name__})",
                             error="temporarily_unavailable") from None
        if dpop is not None:
            dpop.learn(response)
            if response.status_code == 400 and dpop.retry_after(response):
                continue
        if response.status_code != 200:
            raise _refusal(what, url, response)
        return _token_set(what, url, response, form.get("scope"), clock())
    raise _refusal(what, url, response)


def _scoped(form: dict[str, str], scope: str | None, resource: str | None) -> dict[str, str]:
    if scope:
        form["scope"] = scope
    if resource:
        form["resource"] = resource
    return form


async def _assertion_of(source: Assertion, what: str) -> str:
    value = source() if callable(source) else source
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or value.count(".") != 2:
        raise GrantError(f"{what}: the assertion supplied is not a compact JWT",
                         error="invalid_assertion")
    return value


class MachineGrant(Protocol):
    """A way to get a token with no user present (the grants of this module)."""

    async def obtain(self, http: httpx.AsyncClient, metadata: Mapping[str, Any], *,
                     resource: str | None, scope: str | None = None,
                     dpop: DPoPSigner | None = None) -> TokenSet: ...


@dataclass(frozen=True)
class ClientCredentialsGrant:
    """The OAuth client credentials grant, the client authenticating as `client` says."""

    client: ClientCredentials

    async def obtain(self, http: httpx.AsyncClient, metadata: Mapping[str, Any], *,
                     resource: str | None, scope: str | None = None,
                     dpop: DPoPSigner | None = None) -> TokenSet:
        form = _scoped({"grant_type": CLIENT_CREDENTIALS}, scope, resource)
        token, _ = await request_token(http, metadata, form, client=self.client, dpop=dpop,
                                       what="client credentials grant")
        return token


@dataclass(frozen=True)
class WorkloadIdentityGrant:
    """The jwt-bearer grant with a JWT the workload's platform supplied (`assertion`: the JWT
    or a function returning a fresh one). `client` is optional: many ASes identify the
    workload by the assertion alone. Errors are final (see the module's docstring)."""

    assertion: Assertion = field(repr=False)
    client: ClientCredentials | None = None

    async def obtain(self, http: httpx.AsyncClient, metadata: Mapping[str, Any], *,
                     resource: str | None, scope: str | None = None,
                     dpop: DPoPSigner | None = None) -> TokenSet:
        what = "workload identity (jwt-bearer) grant"
        form = {"grant_type": JWT_BEARER, "assertion": await _assertion_of(self.assertion, what)}
        token, _ = await request_token(http, metadata, _scoped(form, scope, resource),
                                       client=self.client, dpop=dpop, what=what)
        return token


async def exchange_for_id_jag(http: httpx.AsyncClient, idp_token_endpoint: str,
                              id_token: str, *, audience: str, resource: str | None,
                              scope: str | None = None,
                              idp_client: ClientCredentials | None = None,
                              idp_issuer: str | None = None) -> str:
    """RFC 8693 token exchange at the enterprise IdP: the user's ID token for an ID-JAG
    addressed to the authorization server `audience` (its issuer), for `resource`."""
    form = _scoped({
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG_TYPE,
        "audience": audience,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN_TYPE,
    }, scope, resource)
    idp = {"token_endpoint": idp_token_endpoint, "issuer": idp_issuer or idp_token_endpoint,
           "token_endpoint_auth_methods_supported": ["client_secret_basic", "none",
                                                     "client_secret_post", "private_key_jwt"]}
    what = "token exchange for an ID-JAG"
    token, body = await request_token(http, idp, form, client=idp_client, what=what)
    if body.get("issued_token_type") != ID_JAG_TYPE:
        raise GrantError(f"{what}: {idp_token_endpoint} issued a "
                         f"{body.get('issued_token_type')!r}, not an ID-JAG",
                         error="invalid_response", status=200)
    return token.access_token


@dataclass(frozen=True)
class EnterpriseGrant:
    """Enterprise-managed authorization: `id_token` (from the company IdP's sign-in) is
    exchanged at `idp_token_endpoint` for an ID-JAG, which the jwt-bearer grant turns into an
    access token at the MCP server's AS, where the client authenticates as `client`."""

    client: ClientCredentials
    idp_token_endpoint: str
    id_token: Assertion = field(repr=False)
    idp_client: ClientCredentials | None = None
    idp_issuer: str | None = None
    """The IdP's issuer, the audience of a `private_key_jwt` assertion there."""

    async def obtain(self, http: httpx.AsyncClient, metadata: Mapping[str, Any], *,
                     resource: str | None, scope: str | None = None,
                     dpop: DPoPSigner | None = None) -> TokenSet:
        issuer = metadata.get("issuer")
        if not isinstance(issuer, str) or not issuer:
            raise GrantError("enterprise-managed authorization: the authorization server "
                             "metadata has no issuer to address the ID-JAG to",
                             error="invalid_metadata")
        id_token = await _assertion_of(self.id_token, "token exchange for an ID-JAG")
        id_jag = await exchange_for_id_jag(http, self.idp_token_endpoint, id_token,
                                           audience=issuer, resource=resource, scope=scope,
                                           idp_client=self.idp_client,
                                           idp_issuer=self.idp_issuer)
        form = _scoped({"grant_type": JWT_BEARER, "assertion": id_jag}, scope, resource)
        token, _ = await request_token(http, metadata, form, client=self.client, dpop=dpop,
                                       what="jwt-bearer grant with an ID-JAG")
        return token
