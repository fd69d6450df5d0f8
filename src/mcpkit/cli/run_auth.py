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

The flags and variables are entries of the settings table (`mcpkit.cli.settings`), which
reads a flag, else the variable, else `--env-file`'s line into `args`; `AuthSettings` is plain data, so a reloading parent passes the options on and each `--workers`
process builds the same protection from it.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from typing import Any, Final

from mcpkit.cli.usage import UsageError

__all__ = ["ENV", "AuthSettings", "auth_settings", "passed_on", "protected_resource"]

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


def auth_settings(args: argparse.Namespace) -> AuthSettings | None:
    """The protection `args` (and the environment) ask for, or None; a `UsageError` naming
    the option when they do not fit together."""
    def given(name: str) -> str | None:
        value = getattr(args, f"auth_{name}", None) or os.environ.get(ENV[name]) or None
        return value.strip() if isinstance(value, str) else None

    issuer = given("issuer")
    others = [f"--auth-{n.replace('_', '-')}" for n in ENV if n != "issuer" and given(n)]
    if issuer is None:
        if others:
            raise UsageError(f"{', '.join(others)} protect the server together with "
                             f"--auth-issuer URL (or {ENV['issuer']}); add it")
        return None
    if not issuer.startswith(("https://", "http://")):
        raise UsageError(f"--auth-issuer {issuer!r} is not the authorization server's http(s) "
                         "issuer URL, e.g. https://auth.example.com")
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


def passed_on(settings: AuthSettings | None) -> list[str]:
    """The options that say `settings` again (a reloading parent's children)."""
    if settings is None:
        return []
    out = [f"--auth-issuer={settings.issuer}"]
    out += [f"--auth-audience={settings.audience}"] if settings.audience else []
    out += [f"--auth-scopes={' '.join(settings.scopes)}"] if settings.scopes else []
    if settings.introspection:
        out += [f"--auth-introspection={settings.introspection}",
                f"--auth-client-id={settings.client_id}"]
    out += [f"--auth-public-url={settings.public_url}"] if settings.public_url else []
    return out


def protected_resource(settings: AuthSettings) -> Any:
    """The `ProtectedResource` of `settings`: the JWKS URL read from the issuer's metadata
    now (a `UsageError` naming what failed), or the introspection endpoint."""
    from mcpkit.auth.server_config import ProtectedResource

    if settings.introspection is not None:
        from mcpkit.transports.http_auth_introspection import IntrospectionVerifier

        verifier: Any = IntrospectionVerifier(
            settings.introspection, settings.client_id or "", os.environ.get(SECRET_ENV, ""),
            issuer=settings.issuer)
    else:
        from mcpkit.transports.http_auth_jwt import JWTVerifier

        verifier = JWTVerifier(_jwks_uri(settings.issuer))
    try:
        return ProtectedResource(issuers=settings.issuer, audience=settings.audience,
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
