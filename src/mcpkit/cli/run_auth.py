"""`mcpkit run --http --auth-issuer URL`: an OAuth-protected server without a line of code.

The options (or the environment: `MCPKIT_AUTH_ISSUER`, `MCPKIT_AUTH_AUDIENCE`,
`MCPKIT_AUTH_SCOPES`, `MCPKIT_AUTH_INTROSPECTION`, `MCPKIT_AUTH_CLIENT_ID`,
`MCPKIT_AUTH_CLIENT_SECRET`; an option wins over its variable) build the `ProtectedResource` a
server file would (`mcpkit.auth.server_config`):

- tokens are JWTs checked against the issuer's keys: its `jwks_uri`, read from its metadata
  (RFC 8414, then OpenID Connect Discovery) when the server starts, the metadata's `issuer`
  compared exactly, so a typo or the wrong server stops the start with one line; or, with
  `--auth-introspection URL`, opaque tokens asked about at that RFC 7662 endpoint, as the
  client `--auth-client-id` with the secret from `MCPKIT_AUTH_CLIENT_SECRET` (never an option:
  `ps` shows a command line);
- `--auth-audience` is what tokens must name in `aud`; by default the served URL, as in code
  (RFC 8707: a token for another server is refused here);
- `--auth-scopes` are the scopes basic use needs, published in the Protected Resource Metadata
  and named in a 401's challenge; a tool's own `scopes=` still asks for more with a 403.

`--auth-issuer` also takes an identity provider preset for the providers that issue tokens for
the server itself (`auth0:DOMAIN`, `okta:DOMAIN/oauth2/SERVER`, `keycloak:REALM_URL`,
`entra:TENANT`, `oidc:URL`: `mcpkit.auth.proxy.presets.issuer`), which knows its keys and how
it marks its access tokens. `--auth-upstream` instead signs users in through an authorization
proxy (`mcpkit.cli.run_upstream`), sharing `--auth-scopes` and `--auth-public-url`.

The flags and variables are entries of the settings table (`mcpkit.cli.settings`), which
reads a flag, else the variable, else `--env-file`'s line into `args`; `AuthSettings` (and
`ProxySettings`) are plain data, so a reloading parent passes the options on and each
`--workers` process builds the same protection from it (`settings_from_json`).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import Any, Final

from mcpkit.cli.usage import UsageError

__all__ = [
    "ENV",
    "AuthSettings",
    "auth_settings",
    "passed_on",
    "protected_resource",
    "settings_from_json",
]

ENV: Final = {
    "issuer": "MCPKIT_AUTH_ISSUER",
    "audience": "MCPKIT_AUTH_AUDIENCE",
    "scopes": "MCPKIT_AUTH_SCOPES",
    "introspection": "MCPKIT_AUTH_INTROSPECTION",
    "client_id": "MCPKIT_AUTH_CLIENT_ID",
    "public_url": "MCPKIT_AUTH_PUBLIC_URL",
}
SECRET_ENV: Final = "MCPKIT_AUTH_CLIENT_SECRET"
_METADATA_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class AuthSettings:
    """How `mcpkit run` protects its endpoint (the options and variables, checked)."""

    issuer: str
    audience: str | None = None
    scopes: tuple[str, ...] = ()
    introspection: str | None = None
    client_id: str | None = None
    public_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuthSettings:
        return cls(**{**data, "scopes": tuple(data.get("scopes") or ())})


def settings_from_json(data: dict[str, Any]) -> Any:
    """`AuthSettings` or `ProxySettings` from their `to_json()` (a worker's spec)."""
    if data.get("kind") == "upstream":
        from mcpkit.cli.run_upstream import ProxySettings

        return ProxySettings.from_json(data)
    return AuthSettings.from_json(data)


def auth_settings(args: argparse.Namespace) -> Any:
    """The protection `args` (and the environment) ask for (`AuthSettings`, or the
    `ProxySettings` of `--auth-upstream`), or None; a `UsageError` naming the option when they
    do not fit together."""
    def given(name: str) -> str | None:
        value = getattr(args, f"auth_{name}", None) or os.environ.get(ENV[name]) or None
        return value.strip() if isinstance(value, str) else None

    issuer = given("issuer")
    from mcpkit.cli.run_upstream import ENV as UPSTREAM_ENV

    if any(getattr(args, f"auth_{name}", None) or os.environ.get(variable)
           for name, variable in UPSTREAM_ENV.items()):
        return _proxy_settings(args, issuer, given)
    others = [f"--auth-{n.replace('_', '-')}" for n in ENV if n != "issuer" and given(n)]
    if issuer is None:
        if others:
            raise UsageError(f"{', '.join(others)} protect the server together with "
                             f"--auth-issuer URL (or {ENV['issuer']}); add it")
        return None
    if not issuer.startswith(("https://", "http://")):
        _preset_issuer(issuer)  # a preset names it, or this is a UsageError
    if getattr(args, "http", None) is None:
        raise UsageError("--auth-issuer protects an HTTP server; add --http [HOST:]PORT (a "
                         "stdio server takes its credentials from its environment)")
    introspection, client_id = given("introspection"), given("client_id")
    if introspection is not None and (client_id is None or not os.environ.get(SECRET_ENV)):
        raise UsageError(f"--auth-introspection needs --auth-client-id and {SECRET_ENV} (the "
                         "client this server introspects tokens as)")
    if client_id is not None and introspection is None:
        raise UsageError("--auth-client-id is the client of --auth-introspection URL; add it, "
                         "or leave both out to check tokens as JWTs")
    from mcpkit.protocol.scopes import check_scopes

    try:
        scopes = check_scopes(tuple((given("scopes") or "").split()), "--auth-scopes")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    public_url = given("public_url")
    if public_url is not None and not public_url.startswith(("https://", "http://")):
        raise UsageError(f"--auth-public-url {public_url!r} is not an http(s) URL, e.g. "
                         "https://mcp.example.com/mcp")
    return AuthSettings(issuer, given("audience"), scopes, introspection, client_id,
                        public_url)


def _proxy_settings(args: argparse.Namespace, issuer: str | None, given: Any) -> Any:
    """The `--auth-upstream` route's settings, with the options it shares checked here."""
    from mcpkit.cli.run_upstream import proxy_settings
    from mcpkit.protocol.scopes import check_scopes

    if issuer is not None:
        raise UsageError("--auth-issuer and --auth-upstream are two ways to protect the "
                         "server (tokens of your provider, or sign-in through a proxy of the "
                         "server's own); give one")
    alone = [f"--auth-{n.replace('_', '-')}" for n in ("audience", "introspection",
                                                        "client_id") if given(n)]
    if alone:
        raise UsageError(f"{', '.join(alone)} go with --auth-issuer; the proxy of "
                         "--auth-upstream issues its own tokens, for this server")
    try:
        scopes = check_scopes(tuple((given("scopes") or "").split()), "--auth-scopes")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    public_url = given("public_url")
    if public_url is not None and not public_url.startswith(("https://", "http://")):
        raise UsageError(f"--auth-public-url {public_url!r} is not an http(s) URL, e.g. "
                         "https://mcp.example.com/mcp")
    return proxy_settings(args, scopes=scopes, public_url=public_url)


def _preset_issuer(spec: str) -> Any:
    """The `Issuer` of a preset named in `--auth-issuer` (`NAME:TENANT`)."""
    from mcpkit.auth.proxy.presets import issuer, parse_spec

    name, tenant = parse_spec(spec)
    try:
        return issuer(name, tenant)
    except ValueError as exc:
        raise UsageError(f"--auth-issuer {spec!r} is not the authorization server's http(s) "
                         f"issuer URL (e.g. https://auth.example.com), nor a provider preset: "
                         f"{exc}") from None


def passed_on(settings: Any) -> list[str]:
    """The options that say `settings` again (a reloading parent's children)."""
    if settings is None:
        return []
    if not isinstance(settings, AuthSettings):
        return list(settings.passed_on())
    out = [f"--auth-issuer={settings.issuer}"]
    out += [f"--auth-audience={settings.audience}"] if settings.audience else []
    out += [f"--auth-scopes={' '.join(settings.scopes)}"] if settings.scopes else []
    if settings.introspection:
        out += [f"--auth-introspection={settings.introspection}",
                f"--auth-client-id={settings.client_id}"]
    out += [f"--auth-public-url={settings.public_url}"] if settings.public_url else []
    return out


def protected_resource(settings: Any) -> Any:
    """The `ProtectedResource` of `settings`: the JWKS URL read from the issuer's metadata
    now (a `UsageError` naming what failed), or the introspection endpoint; for
    `ProxySettings`, the `AuthProxy`."""
    from mcpkit.auth.server_config import ProtectedResource

    if not isinstance(settings, AuthSettings):
        from mcpkit.cli.run_upstream import auth_proxy

        return auth_proxy(settings)
    issuer, jwks, typ = settings.issuer, None, "at+jwt"
    if not issuer.startswith(("https://", "http://")):
        named = _preset_issuer(issuer)
        jwks, typ = named.jwks_uri, named.typ
        issuer = named.issuer or named.discovery_url.split(
            "/.well-known/openid-configuration", 1)[0]
    if settings.introspection is not None:
        from mcpkit.transports.http_server.auth_introspection import IntrospectionVerifier

        verifier: Any = IntrospectionVerifier(
            settings.introspection, settings.client_id or "", os.environ.get(SECRET_ENV, ""),
            issuer=issuer)
    else:
        from mcpkit.transports.http_server.auth_jwt import JWTVerifier

        verifier = JWTVerifier(jwks or _jwks_uri(issuer), typ=typ)
    try:
        return ProtectedResource(issuers=issuer, audience=settings.audience,
                                 verifier=verifier, scopes_supported=settings.scopes,
                                 public_url=settings.public_url)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _jwks_uri(issuer: str) -> str:
    """The `jwks_uri` of the authorization server `issuer`, from its metadata."""
    import httpx

    from mcpkit.auth.client_discovery import as_metadata_urls

    tried: list[str] = []
    with httpx.Client(timeout=_METADATA_TIMEOUT_S, follow_redirects=False) as http:
        for url in as_metadata_urls(issuer):
            tried.append(url)
            try:
                answer = http.get(url, headers={"accept": "application/json"})
            except httpx.HTTPError as exc:
                raise UsageError(f"--auth-issuer {issuer}: its metadata at {url} could not be "
                                 f"fetched ({type(exc).__name__}); is the authorization server "
                                 "up and the URL its issuer?") from None
            if answer.status_code != 200:
                continue
            try:
                doc = answer.json()
            except ValueError:
                doc = None
            if not isinstance(doc, dict) or doc.get("issuer") != issuer:
                named = doc.get("issuer") if isinstance(doc, dict) else None
                raise UsageError(f"--auth-issuer {issuer}: the metadata at {url} names the "
                                 f"issuer {named!r}; give exactly that URL")
            jwks = doc.get("jwks_uri")
            if not isinstance(jwks, str) or not jwks.startswith(("https://", "http://")):
                raise UsageError(f"--auth-issuer {issuer}: its metadata names no jwks_uri; "
                                 "check opaque tokens with --auth-introspection URL instead")
            return jwks
    raise UsageError(f"--auth-issuer {issuer}: no authorization server metadata at "
                     f"{' or '.join(tried)}")
