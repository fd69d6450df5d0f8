"""How one HTTP server is protected: `ProtectedResource`, and the `Principal` a verified token
becomes.

One object says everything (the issuers trusted, the audience tokens must name, the verifier,
the scopes, DPoP), checked when it is built so a mistake stops the server at start with a
message naming the field. It is handed to the HTTP app (`server.asgi(auth=...)` or
`HTTPOptions(auth=...)`), which checks every request with it before routing
(`mcpkit.transports.http_server.auth`). stdio takes none: a local process's credentials come from its
environment (AUTH-1).

A verifier is anything with `async verify(token) -> Principal` raising `InvalidTokenError`
(`JWTVerifier` and `IntrospectionVerifier` in `mcpkit.transports`), or a plain callable
`token -> Principal | None` (sync or async).
No I/O here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from mcpkit.auth.server_metadata import canonical_resource
from mcpkit.auth.server_scopes import ScopeHierarchy, check_scopes

__all__ = [
    "DPoPSettings",
    "Principal",
    "ProtectedResource",
    "TokenVerifier",
    "Verifier",
]

_DEFAULT_DPOP_ALGS = ("ES256", "EdDSA", "RS256", "PS256")


@dataclass(frozen=True, slots=True, eq=False)
class Principal:
    """Who a request acts for, as its verified token says: handlers read it as
    `ctx.principal`; sealed `requestState`, handles and legacy sessions are bound to its
    issuer and subject (`mcpkit.server.sealing.principal_key`)."""

    subject: str
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    issuer: str | None = None
    hierarchy: ScopeHierarchy | None = field(default=None, repr=False)
    """The resource's scope hierarchy, so `grants` counts broader scopes (set by the check)."""
    upstream: Callable[[], Awaitable[str]] | None = field(default=None, repr=False)
    """Where the caller's token at the upstream identity provider comes from, when the
    server signs users in through an authorization proxy (`mcpkit.auth.proxy`); a tool
    asks for it by name, `await ctx.upstream_token()`, and nothing else ever sees it."""

    def grants(self, needed: Iterable[str]) -> bool:
        """Whether the token's scopes cover every scope of `needed`, counting the hierarchy."""
        hierarchy = self.hierarchy or ScopeHierarchy()
        return not hierarchy.missing(self.scopes, needed)

    def __repr__(self) -> str:  # the claims may hold personal data: only the names
        return (f"Principal(subject={self.subject!r}, client_id={self.client_id!r}, "
                f"scopes={sorted(self.scopes)!r}, issuer={self.issuer!r})")


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks an access token and says whose it is."""

    async def verify(self, token: str) -> Principal:
        """The token's principal; `InvalidTokenError` when it is not good for this resource,
        `VerifierUnavailableError` when it cannot be checked now."""


Verifier = TokenVerifier | Callable[[str], "Principal | Awaitable[Principal | None] | None"]
"""A `TokenVerifier`, or a callable from token to principal (None: refused)."""


@dataclass(frozen=True, slots=True)
class DPoPSettings:
    """How DPoP-bound tokens (RFC 9449) are taken. A token bound to a key (`cnf.jkt`) is
    accepted only with `Authorization: DPoP` and a proof by that key; a bearer token never
    with the DPoP scheme."""

    enabled: bool = True
    """Accept DPoP-bound tokens at all (off: only bearer tokens, and no DPoP challenge)."""
    required: bool = False
    """Refuse bearer tokens: every token must be DPoP-bound."""
    nonce: bool = False
    """Ask clients for a server nonce in their proofs (`DPoP-Nonce`, RFC 9449 §9)."""
    nonce_lifetime_s: float = 300.0
    algorithms: tuple[str, ...] = _DEFAULT_DPOP_ALGS
    max_age_s: float = 300.0
    """How old a proof's `iat` may be; its `jti` is remembered that long against replay."""

    def __post_init__(self) -> None:
        if self.required and not self.enabled:
            raise ValueError("DPoPSettings: required=True needs enabled=True")
        if not self.algorithms or "none" in self.algorithms:
            raise ValueError("DPoPSettings.algorithms must name asymmetric algorithms, never "
                             "'none'")
        for name in ("nonce_lifetime_s", "max_age_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"DPoPSettings.{name} must be seconds > 0")


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """The protection of one MCP endpoint (an OAuth 2.1 resource server)."""

    issuers: tuple[str, ...] | str
    """The authorization servers trusted: their issuer identifiers, listed in the metadata's
    `authorization_servers` and compared exactly with each token's `iss`."""
    audience: str | None = None
    """What tokens must name in `aud`: None, this resource's canonical URI (`public_url`, else
    the loopback address and port the server listens on with its path; never a request's
    `Host`). Checking it is not optional: a token for another server must not be usable here
    (RFC 8707)."""
    verifier: Verifier | None = None
    """How tokens are checked: `JWTVerifier`, `IntrospectionVerifier`, or a callable."""
    scopes_supported: tuple[str, ...] = ()
    """The scopes basic use needs, published in the metadata and asked for in a 401."""
    resource_documentation: str | None = None
    """A page for people about this server's use of tokens (RFC 9728 `resource_documentation`)."""
    public_url: str | None = None
    """The endpoint's URL as clients reach it (`https://mcp.example.com/mcp`). Required unless
    the server listens on one loopback address (whose address and port then make the URL):
    behind a reverse proxy, on a public address, and whenever the allowed hosts take any host
    (`*`, `*.example.com`)."""
    dpop: DPoPSettings = field(default_factory=DPoPSettings)
    required_scopes: tuple[str, ...] = ()
    """Scopes every request needs, besides those of the operation (`scopes=` of a tool)."""
    scope_hierarchy: Mapping[str, Iterable[str]] | None = None
    """Broader scope -> the narrower scopes it implies (AUTH-10)."""
    resource_name: str | None = None
    """A human-readable name for the metadata (`resource_name`)."""
    leeway_s: float = 30.0
    """Clock drift allowed on `exp`, `nbf` and `iat`."""

    def __post_init__(self) -> None:
        issuers = (self.issuers,) if isinstance(self.issuers, str) else tuple(self.issuers)
        if not issuers or not all(isinstance(i, str) and i.startswith(("https://", "http://"))
                                  for i in issuers):
            raise ValueError("ProtectedResource.issuers must name at least one authorization "
                             "server by its issuer URL, e.g. 'https://auth.example.com'")
        object.__setattr__(self, "issuers", issuers)
        if self.verifier is None:
            raise ValueError("ProtectedResource.verifier is required: a JWTVerifier, an "
                             "IntrospectionVerifier, or a callable from token to Principal")
        if not (isinstance(self.verifier, TokenVerifier) or callable(self.verifier)):
            raise TypeError("ProtectedResource.verifier must have an async verify(token) or "
                            "be callable")
        if self.public_url is not None:
            object.__setattr__(self, "public_url", canonical_resource(self.public_url))
        if self.audience is not None and (type(self.audience) is not str or not self.audience):
            raise ValueError("ProtectedResource.audience must be a non-empty string (None: "
                             "this resource's canonical URI)")
        object.__setattr__(self, "scopes_supported", check_scopes(
            self.scopes_supported, "ProtectedResource.scopes_supported"))
        object.__setattr__(self, "required_scopes", check_scopes(
            self.required_scopes, "ProtectedResource.required_scopes"))
        if type(self.leeway_s) not in (int, float) or not 0 <= self.leeway_s <= 300:
            raise ValueError("ProtectedResource.leeway_s must be seconds in 0-300")
        if not isinstance(self.dpop, DPoPSettings):
            raise TypeError("ProtectedResource.dpop must be a DPoPSettings")

    @property
    def hierarchy(self) -> ScopeHierarchy:
        """The `scope_hierarchy` as a `ScopeHierarchy` (built, and checked, per call: the
        HTTP app keeps the one it builds at start)."""
        return ScopeHierarchy(self.scope_hierarchy)

    @property
    def issuer_list(self) -> tuple[str, ...]:
        """`issuers`, always a tuple once built."""
        issuers = self.issuers
        return (issuers,) if isinstance(issuers, str) else issuers
