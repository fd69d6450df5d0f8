"""`mcpkit run --http --auth-upstream PROVIDER`: users sign in at the identity provider they
already have, through an authorization proxy, without a line of code in the server file.

The options (an option wins over its variable):

| option | variable | meaning |
| --- | --- | --- |
| `--auth-upstream SPEC` | `MCPKIT_AUTH_UPSTREAM` | the provider: `github`, `google`, `entra:TENANT`, `auth0:DOMAIN`, `okta:DOMAIN/oauth2/SERVER`, `keycloak:REALM_URL`, or an OpenID provider's issuer or discovery URL |
| `--auth-upstream-client-id ID` | `MCPKIT_AUTH_UPSTREAM_CLIENT_ID` | the proxy's client there; its secret only in `MCPKIT_AUTH_UPSTREAM_CLIENT_SECRET` |
| `--auth-upstream-scopes SCOPES` | `MCPKIT_AUTH_UPSTREAM_SCOPES` | what to ask the provider for (default: the preset's) |
| `--auth-token-lifetime SECONDS` | `MCPKIT_AUTH_TOKEN_LIFETIME` | the proxy's access tokens' lifetime (default 3600) |

They are entries of the settings table (`mcpkit.cli.settings`: flag, variable or `--env-file`
line, `--show-config`). `--auth-scopes` (the MCP scopes clients may ask for) and `--auth-public-url` (the URL clients
reach the server by; by default the loopback address served) are shared with `--auth-issuer`,
which `--auth-upstream` replaces. An OpenID provider named by URL is looked up when the
server starts (its discovery document, its `issuer` compared with the URL), so a typo stops
the start with one line. `ProxySettings` is plain data, so `--reload` and `--workers`
processes build the same proxy from it; they share its state through `--store` (PostgreSQL or
Redis for several processes).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import Any, Final

from mcpkit.cli.usage import UsageError

__all__ = [
    "ENV",
    "SECRET_ENV",
    "ProxySettings",
    "auth_proxy",
    "proxy_settings",
]

ENV: Final = {
    "upstream": "MCPKIT_AUTH_UPSTREAM",
    "upstream_client_id": "MCPKIT_AUTH_UPSTREAM_CLIENT_ID",
    "upstream_scopes": "MCPKIT_AUTH_UPSTREAM_SCOPES",
    "token_lifetime": "MCPKIT_AUTH_TOKEN_LIFETIME",
}
SECRET_ENV: Final = "MCPKIT_AUTH_UPSTREAM_CLIENT_SECRET"
_DISCOVERY_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class ProxySettings:
    """How `mcpkit run` signs users in through an upstream provider (checked options)."""

    upstream: str
    client_id: str
    scopes: tuple[str, ...] = ()
    upstream_scopes: tuple[str, ...] | None = None
    public_url: str | None = None
    token_lifetime: float = 3600.0

    def to_json(self) -> dict[str, Any]:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        return {"kind": "upstream", **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProxySettings:
        fields = {k: v for k, v in data.items() if k != "kind"}
        upstream_scopes = fields.get("upstream_scopes")
        return cls(**{**fields, "scopes": tuple(fields.get("scopes") or ()),
                      "upstream_scopes": None if upstream_scopes is None
                      else tuple(upstream_scopes)})

    def passed_on(self) -> list[str]:
        """The options that say these settings again (a reloading parent's children)."""
        out = [f"--auth-upstream={self.upstream}",
               f"--auth-upstream-client-id={self.client_id}",
               f"--auth-token-lifetime={self.token_lifetime:g}"]
        out += [f"--auth-scopes={' '.join(self.scopes)}"] if self.scopes else []
        if self.upstream_scopes is not None:
            out += [f"--auth-upstream-scopes={' '.join(self.upstream_scopes)}"]
        return out + ([f"--auth-public-url={self.public_url}"] if self.public_url else [])


def _given(args: argparse.Namespace, name: str) -> str | None:
    """A setting's value as text: from `args` (the settings table put the flag, the variable
    or the env file's line there), else the environment."""
    value = getattr(args, f"auth_{name}", None)
    if value is None or value == "":
        value = os.environ.get(ENV[name]) or None
    if value is None:
        return None
    return value.strip() if isinstance(value, str) else f"{value:g}"


def proxy_settings(args: argparse.Namespace, *, scopes: tuple[str, ...],
                   public_url: str | None) -> ProxySettings | None:
    """The sign-in `args` (and the environment) ask for, or None; a `UsageError` naming the
    option when they do not fit together. `scopes` and `public_url` are the shared options,
    checked by the caller."""
    spec = _given(args, "upstream")
    client_id = _given(args, "upstream_client_id")
    if spec is None:
        if client_id or _given(args, "upstream_scopes") or _given(args, "token_lifetime"):
            raise UsageError("--auth-upstream-client-id, --auth-upstream-scopes and "
                             "--auth-token-lifetime go with --auth-upstream PROVIDER (or "
                             f"{ENV['upstream']}); add it")
        return None
    if getattr(args, "http", None) is None:
        raise UsageError("--auth-upstream signs users in to an HTTP server; add --http "
                         "[HOST:]PORT")
    from mcpkit.auth.proxy.presets import parse_spec, upstream

    name, tenant = parse_spec(spec)
    try:  # the name and the tenant checked now, with a stand-in client
        upstream(name, tenant, client_id="-", client_secret="-")
    except ValueError as exc:
        raise UsageError(f"--auth-upstream {spec!r}: {exc}") from None
    if client_id is None:
        raise UsageError(f"--auth-upstream {spec} needs --auth-upstream-client-id ID (or "
                         f"{ENV['upstream_client_id']}): the client made for this server in the "
                         "provider's console, its secret in " + SECRET_ENV)
    upstream_scopes = _given(args, "upstream_scopes")
    lifetime_text = _given(args, "token_lifetime") or "3600"
    try:
        lifetime = float(lifetime_text)
    except ValueError:
        lifetime = -1.0
    if not 0 < lifetime <= 86400:
        raise UsageError(f"--auth-token-lifetime {lifetime_text!r} must be seconds in 1-86400")
    return ProxySettings(spec, client_id, scopes,
                         tuple(upstream_scopes.split()) if upstream_scopes else None,
                         public_url or _loopback_url(args.http), lifetime)


def _loopback_url(address: str) -> str:
    """The served URL, when it is the one loopback address and port given to `--http`."""
    from mcpkit.auth.client_targets import is_loopback_host
    from mcpkit.transports.http_server.running import parse_address

    host, port, path = parse_address(address)
    if not is_loopback_host(host) or port == 0:
        raise UsageError(f"--auth-upstream on --http {address}: give --auth-public-url URL, "
                         "the URL clients reach this server by (the provider sends users back "
                         "there, so it is registered in its console)")
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def auth_proxy(settings: ProxySettings) -> Any:
    """The `AuthProxy` of `settings`; an OpenID provider named by URL is looked up now (a
    `UsageError` naming what failed)."""
    from mcpkit.auth.proxy import AuthProxy, ProxyLimits
    from mcpkit.auth.proxy.presets import parse_spec, upstream

    name, tenant = parse_spec(settings.upstream)
    secret = os.environ.get(SECRET_ENV) or None  # never a flag: ps shows a command line
    try:
        chosen = upstream(name, tenant, client_id=settings.client_id, client_secret=secret,
                          scopes=settings.upstream_scopes)
        if chosen.discovery_url is not None:
            chosen = _discovered(chosen)
        return AuthProxy(chosen, public_url=settings.public_url or "",
                         scopes_supported=settings.scopes,
                         limits=ProxyLimits(access_token_ttl_s=settings.token_lifetime))
    except (ValueError, UsageError) as exc:
        raise UsageError(f"--auth-upstream {settings.upstream}: {exc}") from None


def _discovered(chosen: Any) -> Any:
    """`chosen` with the endpoints its discovery document names (fetched now)."""
    import httpx

    from mcpkit.auth.proxy.presets import discovered

    url = chosen.discovery_url
    try:
        with httpx.Client(timeout=_DISCOVERY_TIMEOUT_S, follow_redirects=False) as http:
            answer = http.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise UsageError(f"the discovery document at {url} could not be fetched "
                         f"({type(exc).__name__}); is the provider up and the URL its "
                         "issuer?") from None
    try:
        doc = answer.json() if answer.status_code == 200 else None
    except ValueError:
        doc = None
    if doc is None:
        raise UsageError(f"no discovery document at {url} (status {answer.status_code})")
    return discovered(chosen, doc)
