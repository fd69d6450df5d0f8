"""What the test authorization server keeps, and the authlib grants that use it.

The authorization server (`authorization_server.py`) is authlib's: its grants, PKCE, dynamic
registration and introspection endpoints do the protocol work. This module holds only what
authlib leaves to its host: the client, code and token records (in memory: one process, one
test module), the signing keys and their rotation, and the RFC 8707 audience, which authlib's
JWT access token generator leaves to its host as well.
"""

from __future__ import annotations

import contextvars
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin, InvalidGrantError, InvalidRequestError, grants
from authlib.oauth2.rfc6749.errors import OAuth2Error
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from joserfc.jwk import ECKey, KeySet, RSAKey

__all__ = [
    "AuthorizationCodeGrant",
    "ClientCredentialsGrant",
    "Code",
    "InvalidTargetError",
    "RefreshTokenGrant",
    "Registry",
    "SigningKeys",
    "TestClient",
    "Token",
    "TokenGenerator",
    "User",
]

AUDIENCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("audience", default=None)
"""The audience of the token being issued: authlib's generator is not handed the request."""

LOOPBACK = ("127.0.0.1", "::1", "localhost")


class InvalidTargetError(OAuth2Error):
    """RFC 8707 §2: a `resource` the grant does not cover."""

    error = "invalid_target"
    status_code = 400


@dataclass(frozen=True)
class User:
    """The one resource owner: the consent step approves as her."""

    subject: str = "alice"

    def get_user_id(self) -> str:
        return self.subject


@dataclass
class TestClient(ClientMixin):  # type: ignore[misc]
    """A registered client: dynamically (RFC 7591) or by the server's own set-up."""

    __test__ = False  # not a pytest class, despite the name

    client_id: str
    client_secret: str | None
    metadata: dict[str, Any]

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.metadata.get("redirect_uris") or []
        return uris[0] if uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return ""
        allowed = set(str(self.metadata.get("scope") or "").split())
        return " ".join(s for s in scope.split() if not allowed or s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Exact match, except the port of a loopback URI (RFC 8252 §7.3): a native client
        listens on whatever port is free each time it asks."""
        for registered in self.metadata.get("redirect_uris") or []:
            if redirect_uri == registered:
                return True
            a, b = urlsplit(redirect_uri), urlsplit(registered)
            if (a.scheme == b.scheme == "http" and a.hostname in LOOPBACK
                    and a.hostname == b.hostname and a.path == b.path and a.query == b.query):
                return True
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and hmac.compare_digest(
            self.client_secret.encode(), client_secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return bool(method == self.metadata.get("token_endpoint_auth_method",
                                                    "client_secret_basic"))
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type in (self.metadata.get("response_types") or ["code"])

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in (self.metadata.get("grant_types") or ["authorization_code"])


@dataclass
class Code:
    code: str
    client_id: str
    redirect_uri: str | None
    scope: str
    resource: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    user: User

    def get_redirect_uri(self) -> str | None:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token:
    """One issued access token, with the refresh token issued beside it (if any)."""

    client_id: str
    subject: str
    scope: str
    audience: str | None
    access_token: str
    refresh_token: str | None
    expires_in: int
    issued_at: int = field(default_factory=lambda: int(time.time()))
    access_revoked: bool = False
    refresh_used: bool = False

    def check_client(self, client: TestClient) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self) -> bool:
        return self.access_revoked

    def get_user(self) -> User:
        return User(self.subject)


class SigningKeys:
    """The keys access tokens are signed with: the newest signs, the older ones stay in the
    JWKS so tokens already issued still verify, until `rotate(keep=False)` drops them."""

    def __init__(self, alg: str = "RS256") -> None:
        self.alg = alg
        self.keys: list[Any] = []
        self.rotate()

    def rotate(self, keep: bool = True) -> str:
        kid = secrets.token_urlsafe(8)
        params = {"kid": kid, "use": "sig", "alg": self.alg}
        key = (ECKey.generate_key("P-256", parameters=params) if self.alg == "ES256"
               else RSAKey.generate_key(2048, parameters=params))
        self.keys = [key, *self.keys] if keep else [key]
        return kid

    @property
    def current(self) -> KeySet:
        return KeySet([self.keys[0]])

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) for k in self.keys]}


class Registry:
    """Clients, codes and tokens of one server process."""

    def __init__(self) -> None:
        self.clients: dict[str, TestClient] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: list[Token] = []

    def access(self, value: str) -> Token | None:
        return next((t for t in self.tokens if t.access_token == value), None)

    def refresh(self, value: str) -> Token | None:
        return next((t for t in self.tokens if t.refresh_token == value), None)

    def save(self, token: dict[str, Any], client: TestClient, user: User | None) -> None:
        self.tokens.append(Token(
            client_id=client.client_id, subject=user.subject if user else client.client_id,
            scope=str(token.get("scope") or ""), audience=AUDIENCE.get(),
            access_token=token["access_token"], refresh_token=token.get("refresh_token"),
            expires_in=int(token.get("expires_in") or 0)))


class TokenGenerator(JWTBearerTokenGenerator):  # type: ignore[misc]
    """RFC 9068 access tokens, signed with the newest key, `aud` the requested resource."""

    def __init__(self, issuer: str, keys: SigningKeys, ttl: int) -> None:
        self.keys = keys
        self.ttl = ttl
        super().__init__(issuer, alg=keys.alg, refresh_token_generator=self._refresh,
                         expires_generator=lambda client, grant_type: self.ttl)

    @staticmethod
    def _refresh(**_: Any) -> str:
        return secrets.token_urlsafe(32)

    def get_jwks(self) -> KeySet:
        return self.keys.current

    def get_audiences(self, client: TestClient, user: Any, scope: str) -> str:
        return AUDIENCE.get() or client.get_client_id()


def _resource(grant: Any) -> str | None:
    """The request's RFC 8707 `resource`: one absolute URI without a fragment, or none."""
    values = grant.request.payload.datalist.get("resource") or []
    if len(values) > 1:
        raise InvalidTargetError(description="this server issues tokens for one resource")
    if not values:
        return None
    parts = urlsplit(values[0])
    if not parts.scheme or not parts.netloc or parts.fragment:
        raise InvalidTargetError(description="resource must be an absolute URI, no fragment")
    return str(values[0])


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
    registry: Registry

    def save_authorization_code(self, code: str, request: Any) -> None:
        data = request.payload.data
        self.registry.codes[code] = Code(
            code, request.client.client_id, request.payload.redirect_uri, request.scope or "",
            _resource(self), data.get("code_challenge"), data.get("code_challenge_method"),
            request.user)

    def query_authorization_code(self, code: str, client: TestClient) -> Code | None:
        found = self.registry.codes.get(code)
        return found if found and found.client_id == client.client_id else None

    def delete_authorization_code(self, authorization_code: Code) -> None:
        self.registry.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: Code) -> User:
        return authorization_code.user

    def validate_token_request(self) -> None:
        super().validate_token_request()
        code: Code = self.request.authorization_code
        if code.code_challenge is None:
            raise InvalidRequestError("this server requires PKCE (code_challenge, S256)")
        asked = _resource(self)
        if asked is not None and asked != code.resource:
            raise InvalidTargetError(description="resource differs from the authorization's")

    def generate_token(self, *args: Any, **kwargs: Any) -> Any:
        AUDIENCE.set(self.request.authorization_code.resource)
        return super().generate_token(*args, **kwargs)

    def save_token(self, token: dict[str, Any]) -> None:
        self.registry.save(token, self.request.client, self.request.user)


class RefreshTokenGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    """Refresh with rotation: each refresh token works once, and a reused one is refused."""

    TOKEN_ENDPOINT_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
    INCLUDE_NEW_REFRESH_TOKEN = True
    registry: Registry

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        found = self.registry.refresh(refresh_token)
        if found is not None and found.refresh_used:
            raise InvalidGrantError("this refresh token was already used (rotation)")
        return found

    def authenticate_user(self, refresh_token: Token) -> User:
        return refresh_token.get_user()

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.refresh_used = True

    def generate_token(self, *args: Any, **kwargs: Any) -> Any:
        old: Token = self.request.refresh_token
        asked = _resource(self)
        if asked is not None and asked != old.audience:
            raise InvalidTargetError(description="resource differs from the grant's")
        AUDIENCE.set(old.audience)
        return super().generate_token(*args, **kwargs)

    def save_token(self, token: dict[str, Any]) -> None:
        self.registry.save(token, self.request.client, self.request.user)


class ClientCredentialsGrant(grants.ClientCredentialsGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
    registry: Registry

    def generate_token(self, *args: Any, **kwargs: Any) -> Any:
        AUDIENCE.set(_resource(self))
        return super().generate_token(*args, **kwargs)

    def save_token(self, token: dict[str, Any]) -> None:
        self.registry.save(token, self.request.client, None)
