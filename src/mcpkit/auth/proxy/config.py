"""How an authorization proxy is configured: `AuthProxy`, the `Upstream` identity provider it
signs users in at, the claims that become the principal (`ClaimMap`) and its limits
(`ProxyLimits`).

Everything is checked when it is built, so a mistake stops the server at start with a message
naming the field, and nothing here does I/O: endpoints an OpenID provider publishes in its
discovery document are read by the proxy when it first needs them (and by `mcpkit run` at
start, to fail early).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.auth.client_targets import is_loopback_host
from mcpkit.auth.server_config import DPoPSettings, ProtectedResource, Verifier
from mcpkit.auth.server_metadata import canonical_resource
from mcpkit.protocol.scopes import check_scopes

__all__ = [
    "AUTH_METHODS",
    "AuthProxy",
    "ClaimMap",
    "ProxyLimits",
    "Upstream",
    "check_url",
]

AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "none")
"""How the proxy may authenticate at the upstream's token endpoint."""


def check_url(url: object, what: str, *, loopback_http: bool = True) -> str:
    """`url` if it is an absolute https URL (http on a loopback host, for development and
    tests), else a `ValueError` naming `what`."""
    if type(url) is not str or not url:
        raise ValueError(f"{what} must be an absolute https URL, not {url!r}")
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host and loopback_http and is_loopback_host(host):
        return url
    raise ValueError(f"{what} {url!r} must be an absolute https URL (http only on a loopback "
                     "address)")


@dataclass(frozen=True, slots=True)
class ClaimMap:
    """Which upstream claims become the principal: `subject` (required; GitHub's numeric
    `id`, Entra's `oid`, everyone else's `sub`), and the `email`, `name` and `groups` kept in
    the principal's claims under those names (None: not kept)."""

    subject: str = "sub"
    email: str | None = "email"
    name: str | None = "name"
    groups: str | None = "groups"

    def __post_init__(self) -> None:
        for name in ("subject", "email", "name", "groups"):
            value = getattr(self, name)
            if (value is None and name != "subject") or (type(value) is str and value):
                continue
            raise ValueError(f"ClaimMap.{name} must name a claim (a non-empty string)")


@dataclass(frozen=True, slots=True)
class Upstream:
    """The identity provider users sign in at, and the client the proxy is registered there
    as (one confidential client, made once in the provider's console; its redirect URI is the
    proxy's `<issuer>/oauth/callback`).

    An OpenID provider is named by `discovery_url` (its endpoints, issuer and keys are read
    from there) or by its endpoints and `issuer` and `jwks_uri` (the ID token is checked with
    them); a plain OAuth provider (GitHub) by its endpoints and a `userinfo_endpoint`, which
    says who signed in."""

    name: str
    """Shown to the user on the consent page: "GitHub", "Google", "Acme SSO"."""
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    discovery_url: str | None = None
    issuer: str | None = None
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    userinfo_endpoint: str | None = None
    jwks_uri: str | None = None
    revocation_endpoint: str | None = None
    scopes: tuple[str, ...] = ("openid", "email", "profile")
    """What the proxy asks the upstream for (never what MCP clients ask the proxy for)."""
    claims: ClaimMap = field(default_factory=ClaimMap)
    auth_method: str = "client_secret_basic"
    """How the proxy authenticates at the upstream's token endpoint (`AUTH_METHODS`)."""
    pkce: bool = True
    """Send PKCE S256 to the upstream too (every provider here takes it)."""
    authorize_params: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Extra parameters of the upstream authorization request (Google's
    `access_type=offline` for a refresh token)."""
    userinfo_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Extra headers of the userinfo request (GitHub's API version)."""

    def __post_init__(self) -> None:
        if type(self.name) is not str or not self.name.strip():
            raise ValueError("Upstream.name is shown to users on the consent page: name the "
                             "identity provider, e.g. 'GitHub'")
        if type(self.client_id) is not str or not self.client_id:
            raise ValueError(f"Upstream {self.name}: client_id is the proxy's client at the "
                             "identity provider, made in its console; it is required")
        if self.auth_method not in AUTH_METHODS:
            raise ValueError(f"Upstream {self.name}: auth_method must be one of "
                             f"{', '.join(AUTH_METHODS)}, not {self.auth_method!r}")
        if self.auth_method != "none" and not self.client_secret:
            raise ValueError(f"Upstream {self.name}: {self.auth_method} needs the client "
                             "secret the identity provider's console gave (client_secret=)")
        for name in ("discovery_url", "issuer", "authorization_endpoint", "token_endpoint",
                     "userinfo_endpoint", "jwks_uri", "revocation_endpoint"):
            value = getattr(self, name)
            if value is not None:
                check_url(value, f"Upstream {self.name}: {name}")
        if self.discovery_url is None:
            missing = [n for n in ("authorization_endpoint", "token_endpoint")
                       if getattr(self, n) is None]
            if missing:
                raise ValueError(f"Upstream {self.name}: give discovery_url, or "
                                 f"{' and '.join(missing)}")
            if self.userinfo_endpoint is None and (self.issuer is None or self.jwks_uri is None):
                raise ValueError(f"Upstream {self.name}: the proxy learns who signed in from an "
                                 "ID token (issuer= and jwks_uri=) or a userinfo_endpoint; give "
                                 "one of them")
        object.__setattr__(self, "scopes", check_scopes(self.scopes, f"Upstream {self.name}: "
                                                        "scopes"))
        if not isinstance(self.claims, ClaimMap):
            raise TypeError(f"Upstream {self.name}: claims must be a ClaimMap")
        object.__setattr__(self, "authorize_params", MappingProxyType(dict(self.authorize_params)))
        object.__setattr__(self, "userinfo_headers", MappingProxyType(dict(self.userinfo_headers)))

    @property
    def oidc(self) -> bool:
        """Whether sign-ins are OpenID Connect ones (an ID token is asked for and checked)."""
        return "openid" in self.scopes

    def __repr__(self) -> str:  # the secret never appears
        return (f"Upstream(name={self.name!r}, client_id={self.client_id!r}, "
                f"issuer={self.issuer or self.discovery_url!r})")


@dataclass(frozen=True, slots=True)
class ProxyLimits:
    """How long each piece of an authorization lives, and how much a client may register.
    Every value is checked; docs/security.md lists them with their defaults."""

    code_ttl_s: float = 60.0
    """An authorization code the proxy issues: used once, within this."""
    pending_ttl_s: float = 600.0
    """From the client's authorization request to the user's return from the upstream."""
    access_token_ttl_s: float = 3600.0
    refresh_token_ttl_s: float = 30 * 86400.0
    """A grant's whole life: refresh tokens rotate within it and never outlive it."""
    registration_ttl_s: float = 365 * 86400.0
    """A dynamically registered client is forgotten this long after it registered."""
    client_document_ttl_s: float = 300.0
    """The longest a Client ID Metadata Document is kept before it is fetched again."""
    max_redirect_uris: int = 10
    max_registration_bytes: int = 16 * 1024
    """The largest registration request or client metadata document."""
    registrations_per_minute: int = 30
    """Per client address, in each process."""
    authorizations_per_minute: int = 60
    """Authorization requests per client address, in each process."""
    upstream_timeout_s: float = 10.0
    """One call to the upstream (token, userinfo, keys, discovery), as a whole."""

    def __post_init__(self) -> None:
        for name in ("code_ttl_s", "pending_ttl_s", "access_token_ttl_s",
                     "refresh_token_ttl_s", "registration_ttl_s", "client_document_ttl_s",
                     "upstream_timeout_s"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not 0 < value < float("inf"):
                raise ValueError(f"ProxyLimits.{name} must be a finite number of seconds > 0, "
                                 f"not {value!r}")
        for name in ("max_redirect_uris", "max_registration_bytes", "registrations_per_minute",
                     "authorizations_per_minute"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"ProxyLimits.{name} must be an integer >= 1, not {value!r}")
        if self.refresh_token_ttl_s < self.access_token_ttl_s:
            raise ValueError("ProxyLimits.refresh_token_ttl_s (a grant's life) must be at least "
                             "access_token_ttl_s")


Admit = Callable[[Mapping[str, Any]], bool]
"""Who may sign in: called with the upstream identity's claims (after `ClaimMap`); False
refuses the sign-in with `access_denied`."""


@dataclass(frozen=True, slots=True)
class AuthProxy:
    """An authorization server of this MCP server's own in front of an identity provider
    that MCP clients cannot register with: handed to the HTTP app (`server.asgi(auth=...)`)
    where a `ProtectedResource` would be (`mcpkit.transports.auth_proxy.routes`)."""

    upstream: Upstream
    public_url: str
    """The MCP endpoint's URL as clients reach it: the resource its tokens are for."""
    issuer: str | None = None
    """The proxy's issuer; None: the origin of `public_url` (its metadata then lives at
    `/.well-known/oauth-authorization-server`, its endpoints under `/oauth/`)."""
    scopes_supported: tuple[str, ...] = ()
    """The MCP scopes clients may ask for (granted as asked, among these; none asked: all)."""
    required_scopes: tuple[str, ...] = ()
    scope_hierarchy: Mapping[str, Iterable[str]] | None = None
    resource_name: str | None = None
    """The server's name on the consent page and in the metadata."""
    resource_documentation: str | None = None
    limits: ProxyLimits = field(default_factory=ProxyLimits)
    dynamic_registration: bool = True
    """Accept RFC 7591 registrations (`/oauth/register`)."""
    client_documents: bool = True
    """Accept Client ID Metadata Documents (an https URL as `client_id`)."""
    admit: Admit | None = None
    signing_key: str | None = field(default=None, repr=False)
    """A PEM EC P-256 private key for the tokens; None: one derived from the server's state
    key ring, so replicas sharing the ring (or its store) share the key and a rotation of the
    ring rotates it."""

    def __post_init__(self) -> None:
        if not isinstance(self.upstream, Upstream):
            raise TypeError("AuthProxy.upstream must be an Upstream (see mcpkit.auth.proxy."
                            "presets for the common identity providers)")
        object.__setattr__(self, "public_url", canonical_resource(
            check_url(self.public_url, "AuthProxy.public_url"), "AuthProxy.public_url"))
        issuer = self.issuer
        if issuer is None:
            parts = urlsplit(self.public_url)
            issuer = f"{parts.scheme}://{parts.netloc}"
        check_url(issuer, "AuthProxy.issuer")
        parts = urlsplit(issuer)
        if parts.query or parts.fragment:
            raise ValueError(f"AuthProxy.issuer {issuer!r} must have no query or fragment "
                             "(RFC 8414 §2)")
        object.__setattr__(self, "issuer", issuer.rstrip("/"))
        object.__setattr__(self, "scopes_supported", check_scopes(
            self.scopes_supported, "AuthProxy.scopes_supported"))
        object.__setattr__(self, "required_scopes", check_scopes(
            self.required_scopes, "AuthProxy.required_scopes"))
        if not isinstance(self.limits, ProxyLimits):
            raise TypeError("AuthProxy.limits must be a ProxyLimits")
        if not (self.dynamic_registration or self.client_documents):
            raise ValueError("AuthProxy: with neither dynamic_registration nor client_documents "
                             "no MCP client can register")
        if self.admit is not None and not callable(self.admit):
            raise TypeError("AuthProxy.admit must be callable: claims -> bool")

    @property
    def issuer_url(self) -> str:
        """`issuer`, always a string once built."""
        assert self.issuer is not None
        return self.issuer

    def endpoint(self, name: str) -> str:
        """The URL of one of the proxy's endpoints (`authorize`, `token`, `callback`, ...)."""
        return f"{self.issuer_url}/oauth/{name}"

    @property
    def callback_url(self) -> str:
        """The redirect URI to register at the upstream for the proxy's client."""
        return self.endpoint("callback")

    def protected_resource(self, verifier: Verifier) -> ProtectedResource:
        """The resource server the tokens this proxy issues are checked by: this issuer,
        this resource as the audience, bearer tokens (the proxy binds none to a DPoP key)."""
        return ProtectedResource(
            issuers=self.issuer_url, verifier=verifier, scopes_supported=self.scopes_supported,
            resource_documentation=self.resource_documentation, public_url=self.public_url,
            dpop=DPoPSettings(enabled=False), required_scopes=self.required_scopes,
            scope_hierarchy=self.scope_hierarchy, resource_name=self.resource_name)

    def __repr__(self) -> str:
        return (f"AuthProxy(upstream={self.upstream!r}, public_url={self.public_url!r}, "
                f"issuer={self.issuer!r})")
