"""The identity providers users already have, as data: where each one's endpoints are, what
to ask it for, and which of its claims become the principal.

A `Preset` is filled in with the one value that names a tenant (Entra's tenant, an Auth0 or
Okta domain, a Keycloak realm URL) and becomes either

- an `Upstream` for the authorization proxy (`upstream(...)`), for providers MCP clients
  cannot register with (GitHub, Google, and the others on plans without dynamic registration),
  or
- the issuer, key set and token rules of the plain resource-server route (`issuer(...)`), for
  providers that issue access tokens for the MCP server itself (an Auth0 API, an Okta custom
  authorization server, a Keycloak audience mapper, an Entra app that exposes an API).

The endpoints are those each provider publishes in its discovery document (the tests hold the
documents' fields, `tests/helpers/auth/provider_documents.py`); `oidc` takes any OpenID provider by
its discovery URL, whose endpoints are read when the proxy starts. docs/auth.md has the
console steps for each. No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.auth.proxy.config import ClaimMap, Upstream, check_url

__all__ = [
    "PRESETS",
    "Issuer",
    "Preset",
    "discovered",
    "discovery_url",
    "issuer",
    "parse_spec",
    "preset",
    "upstream",
]


@dataclass(frozen=True, slots=True)
class Preset:
    """One identity provider. `{tenant}` in a URL is the value that names the tenant (a
    domain, a tenant id, a realm's URL); a preset without it has fixed endpoints."""

    name: str
    title: str
    tenant: str | None
    """What `{tenant}` is, for messages ("the Auth0 domain"); None: no tenant."""
    issuer: str | None
    authorization_endpoint: str | None
    token_endpoint: str | None
    userinfo_endpoint: str | None
    jwks_uri: str | None
    revocation_endpoint: str | None
    scopes: tuple[str, ...]
    claims: ClaimMap
    auth_method: str = "client_secret_basic"
    authorize_params: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    userinfo_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    access_token_typ: str | None = "at+jwt"
    """The JOSE `typ` its access tokens carry on the resource-server route (None: it marks
    them otherwise or not at all, so the check is left to issuer, audience and signature)."""
    discovery: bool = False
    """The endpoints come from the discovery document at `{tenant}` (the `oidc` preset)."""


def _tenanted(template: str, tenant: str) -> str:
    return template.replace("{tenant}", tenant)


_OIDC_CLAIMS: Final = ClaimMap()

PRESETS: Final[Mapping[str, Preset]] = MappingProxyType({p.name: p for p in (
    Preset(
        "github", "GitHub", None, None,
        "https://github.com/login/oauth/authorize",
        "https://github.com/login/oauth/access_token",
        "https://api.github.com/user", None, None,
        ("read:user", "user:email"),
        ClaimMap(subject="id", email="email", name="login", groups=None),
        auth_method="client_secret_post",
        userinfo_headers=MappingProxyType({"accept": "application/vnd.github+json",
                                           "x-github-api-version": "2022-11-28"}),
        access_token_typ=None),
    Preset(
        "google", "Google", None, "https://accounts.google.com",
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
        "https://openidconnect.googleapis.com/v1/userinfo",
        "https://www.googleapis.com/oauth2/v3/certs",
        "https://oauth2.googleapis.com/revoke",
        ("openid", "email", "profile"), ClaimMap(groups=None),
        authorize_params=MappingProxyType({"access_type": "offline", "prompt": "consent"}),
        access_token_typ=None),
    Preset(
        "entra", "Microsoft Entra ID", "the directory (tenant) id, the GUID its tokens name "
        "in iss",
        "https://login.microsoftonline.com/{tenant}/v2.0",
        "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize",
        "https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token",
        "https://graph.microsoft.com/oidc/userinfo",
        "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys", None,
        ("openid", "email", "profile", "offline_access"),
        ClaimMap(subject="oid", email="email", name="name", groups="groups"),
        access_token_typ=None),
    Preset(
        "auth0", "Auth0", "the Auth0 domain (dev-abc123.us.auth0.com, or a custom domain)",
        "https://{tenant}/",
        "https://{tenant}/authorize", "https://{tenant}/oauth/token",
        "https://{tenant}/userinfo", "https://{tenant}/.well-known/jwks.json",
        "https://{tenant}/oauth/revoke",
        ("openid", "email", "profile", "offline_access"), _OIDC_CLAIMS,
        access_token_typ=None),
    Preset(
        "okta", "Okta", "the authorization server: the Okta domain and its path "
        "(dev-123.okta.com/oauth2/default)",
        "https://{tenant}",
        "https://{tenant}/v1/authorize", "https://{tenant}/v1/token",
        "https://{tenant}/v1/userinfo", "https://{tenant}/v1/keys",
        "https://{tenant}/v1/revoke",
        ("openid", "email", "profile", "offline_access"), _OIDC_CLAIMS,
        access_token_typ=None),
    Preset(
        "keycloak", "Keycloak", "the realm's URL (https://sso.example.com/realms/acme)",
        "{tenant}",
        "{tenant}/protocol/openid-connect/auth", "{tenant}/protocol/openid-connect/token",
        "{tenant}/protocol/openid-connect/userinfo", "{tenant}/protocol/openid-connect/certs",
        "{tenant}/protocol/openid-connect/revoke",
        ("openid", "email", "profile"), _OIDC_CLAIMS,
        access_token_typ=None),
    Preset(
        "oidc", "OpenID Connect", "the provider's discovery URL (https://idp.example.com/"
        ".well-known/openid-configuration) or its issuer",
        None, None, None, None, None, None, ("openid", "email", "profile"), _OIDC_CLAIMS,
        discovery=True),
)})


def preset(name: str) -> Preset:
    """The preset called `name`; a `ValueError` listing them for any other."""
    found = PRESETS.get(name.strip().lower())
    if found is None:
        raise ValueError(f"no identity provider preset {name!r}; the presets are "
                         f"{', '.join(PRESETS)} (or an OpenID provider's https URL)")
    return found


def _tenant_value(chosen: Preset, tenant: str | None) -> str:
    if chosen.tenant is None:
        if tenant:
            raise ValueError(f"the {chosen.title} preset takes no tenant (got {tenant!r})")
        return ""
    if not tenant or not tenant.strip():
        raise ValueError(f"the {chosen.title} preset needs {chosen.tenant}: "
                         f"{chosen.name}:VALUE")
    value = tenant.strip().rstrip("/")
    if chosen.name in ("keycloak", "oidc"):
        check_url(value, f"the {chosen.title} preset's {chosen.tenant}")
        return value
    if chosen.name in ("auth0", "okta"):
        value = value.removeprefix("https://")
    if "://" in value or not value or any(c in value for c in "?#@ \\"):
        raise ValueError(f"the {chosen.title} preset's tenant {tenant!r} must be "
                         f"{chosen.tenant}")
    if chosen.name == "entra" and "/" in value:
        raise ValueError(f"the Entra tenant {tenant!r} is an id or a domain, with no path")
    return value


def discovery_url(value: str) -> str:
    """The OpenID Connect discovery URL of `value`: itself when it names the document, else
    the issuer's `/.well-known/openid-configuration`."""
    marker = "/.well-known/openid-configuration"
    return value if marker in urlsplit(value).path else value.rstrip("/") + marker


def discovered(chosen: Upstream, doc: object) -> Upstream:
    """`chosen` (named by its discovery URL) with the endpoints its discovery document `doc`
    names; a `ValueError` when the document's `issuer` is not the URL it was found under
    (OpenID Connect Discovery §4.3) or it names no authorization or token endpoint."""
    import dataclasses

    url = chosen.discovery_url
    assert url is not None
    expected = url.split("/.well-known/openid-configuration", 1)[0]
    if not isinstance(doc, dict):
        raise ValueError(f"the discovery document at {url} is no JSON object")
    if doc.get("issuer") != expected:
        raise ValueError(f"the discovery document at {url} names the issuer "
                         f"{doc.get('issuer')!r}, not {expected!r}; give exactly that URL")
    named = {k: doc.get(k) for k in ("authorization_endpoint", "token_endpoint",
                                     "userinfo_endpoint", "jwks_uri", "revocation_endpoint")}
    found: dict[str, Any] = {k: v for k, v in named.items() if isinstance(v, str) and v}
    if "authorization_endpoint" not in found or "token_endpoint" not in found:
        raise ValueError(f"the discovery document at {url} names no authorization or token "
                         "endpoint")
    return dataclasses.replace(chosen, discovery_url=None, issuer=expected, **found)


def upstream(name: str, tenant: str | None = None, *, client_id: str,
             client_secret: str | None = None, scopes: tuple[str, ...] | None = None,
             claims: ClaimMap | None = None) -> Upstream:
    """The `Upstream` of the preset `name` for `tenant`, signed in at as `client_id`."""
    chosen = preset(name)
    value = _tenant_value(chosen, tenant)
    given_scopes = chosen.scopes if scopes is None else scopes
    if chosen.discovery:
        return Upstream(
            name=urlsplit(value).hostname or chosen.title, client_id=client_id,
            client_secret=client_secret, discovery_url=discovery_url(value),
            scopes=given_scopes, claims=claims or chosen.claims, auth_method=chosen.auth_method)

    def url(template: str | None) -> str | None:
        return None if template is None else _tenanted(template, value)

    return Upstream(
        name=chosen.title, client_id=client_id, client_secret=client_secret,
        issuer=url(chosen.issuer), authorization_endpoint=url(chosen.authorization_endpoint),
        token_endpoint=url(chosen.token_endpoint),
        userinfo_endpoint=url(chosen.userinfo_endpoint), jwks_uri=url(chosen.jwks_uri),
        revocation_endpoint=url(chosen.revocation_endpoint), scopes=given_scopes,
        claims=claims or chosen.claims, auth_method=chosen.auth_method,
        authorize_params=chosen.authorize_params, userinfo_headers=chosen.userinfo_headers)


@dataclass(frozen=True, slots=True)
class Issuer:
    """What the resource-server route needs of a provider that issues tokens for the MCP
    server: its issuer (compared exactly with `iss`), its keys (None: read from its
    metadata at start), and the `typ` its access tokens carry (None: not checked)."""

    issuer: str | None
    jwks_uri: str | None
    typ: str | None
    discovery_url: str | None = None


def issuer(name: str, tenant: str | None = None) -> Issuer:
    """The resource-server route's settings for the preset `name` and `tenant`. GitHub and
    Google issue no access tokens for other servers: they take the proxy route only."""
    chosen = preset(name)
    if chosen.name in ("github", "google"):
        raise ValueError(f"{chosen.title} issues no access tokens for your own server: sign "
                         f"users in through the authorization proxy (--auth-upstream "
                         f"{chosen.name})")
    value = _tenant_value(chosen, tenant)
    if chosen.discovery:
        return Issuer(None, None, chosen.access_token_typ, discovery_url(value))
    assert chosen.issuer is not None and chosen.jwks_uri is not None
    return Issuer(_tenanted(chosen.issuer, value), _tenanted(chosen.jwks_uri, value),
                  chosen.access_token_typ)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[:TENANT]` (or an https URL, taken as the `oidc` preset's) -> (name, tenant)."""
    text = spec.strip()
    if text.lower().startswith(("https://", "http://")):
        return "oidc", text
    name, sep, tenant = text.partition(":")
    return name.lower(), tenant if sep else None
