"""Where a client looks for an MCP server's authorization metadata, and what it accepts there.

- `prm_urls`: the Protected Resource Metadata (RFC 9728) locations in the spec's order
  (AUTH-13): the `resource_metadata` URL of the challenge when there is one, else the
  path-inserted well-known URI, then the root one;
- `as_metadata_urls`: the authorization server metadata locations (AUTH-14): RFC 8414, then
  OIDC Discovery with the path inserted, then OIDC with the path appended, for an issuer with a
  path; RFC 8414, then OIDC, for one without;
- `read_prm` and `read_as_metadata`: the documents checked before anything in them is used:
  the PRM's `resource` must name the server being called (same origin, the server's path
  under the resource's, so `https://evil.example.com/mcp` is refused before any authorization
  request is made), and the AS metadata's `issuer` must equal, character for character, the
  issuer its URL was built from (AUTH-15): a document that names another issuer gives no
  endpoint at all;
- `canonical_resource`: the server's canonical URI, the `resource` parameter of RFC 8707
  (AUTH-25): lowercase scheme and host, no default port, no fragment or query, no trailing
  slash.

Every refusal is an `AuthError` saying which document said what. Imports: the standard
library and `mcpkit.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from mcpkit.errors import AuthError

__all__ = [
    "ASMetadata",
    "ResourceMetadata",
    "as_metadata_urls",
    "canonical_resource",
    "origin_of",
    "prm_urls",
    "read_as_metadata",
    "read_prm",
    "resource_matches",
]

PRM_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN: Final = "/.well-known/openid-configuration"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def _split(url: str) -> tuple[str, str, int | None, str]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        raise AuthError(f"{url!r} has an invalid port") from None
    if port == _DEFAULT_PORTS.get(scheme):
        port = None
    return scheme, host, port, parts.path


def _netloc(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of `url`, lowercased, the default port dropped."""
    scheme, host, port, _ = _split(url)
    return f"{scheme}://{_netloc(host, port)}"


def canonical_resource(url: str) -> str:
    """The canonical URI of the MCP server at `url` (RFC 8707 `resource`)."""
    scheme, host, port, path = _split(url)
    if scheme not in _DEFAULT_PORTS or not host:
        raise AuthError(f"{url!r} is not an http(s) URL, so it names no resource")
    return urlunsplit((scheme, _netloc(host, port), path.rstrip("/"), "", ""))


def prm_urls(server_url: str, resource_metadata: str | None = None) -> list[str]:
    """The PRM URLs to try, in order."""
    scheme, host, port, path = _split(server_url)
    base = f"{scheme}://{_netloc(host, port)}"
    urls: list[str] = []
    if resource_metadata:
        urls.append(resource_metadata)
    path = path.rstrip("/")
    if path:
        urls.append(f"{base}{PRM_WELL_KNOWN}{path}")
    urls.append(f"{base}{PRM_WELL_KNOWN}")
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata URLs to try for `issuer`, in order."""
    scheme, host, port, path = _split(issuer)
    base = f"{scheme}://{_netloc(host, port)}"
    path = path.rstrip("/")
    if path:
        return [f"{base}{OAUTH_WELL_KNOWN}{path}", f"{base}{OIDC_WELL_KNOWN}{path}",
                f"{base}{path}{OIDC_WELL_KNOWN}"]
    return [f"{base}{OAUTH_WELL_KNOWN}", f"{base}{OIDC_WELL_KNOWN}"]


def resource_matches(server_url: str, resource: str) -> bool:
    """Whether a PRM naming `resource` may speak for the server at `server_url`: the same
    scheme, host and port, and the server's path within the resource's path (a root PRM's
    `http://host:port` speaks for `http://host:port/mcp`; `/mcp` does not for `/mcpx`)."""
    try:
        s_scheme, s_host, s_port, s_path = _split(server_url)
        r_scheme, r_host, r_port, r_path = _split(resource)
    except AuthError:
        return False
    if (s_scheme, s_host, s_port) != (r_scheme, r_host, r_port):
        return False
    r_path = r_path.rstrip("/")
    s_path = s_path.rstrip("/")
    return not r_path or s_path == r_path or s_path.startswith(r_path + "/")


@dataclass(frozen=True)
class ResourceMetadata:
    """A checked Protected Resource Metadata document."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    url: str
    raw: Mapping[str, Any]


def _strings(doc: Mapping[str, Any], name: str, where: str) -> tuple[str, ...] | None:
    value = doc.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AuthError(f"{where}: {name} is not a list of strings")
    return tuple(value)


def read_prm(doc: Any, url: str, server_url: str) -> ResourceMetadata:
    """The PRM document fetched from `url`, checked for the server at `server_url`."""
    where = f"the protected resource metadata at {url}"
    if not isinstance(doc, Mapping):
        raise AuthError(f"{where} is not a JSON object")
    resource = doc.get("resource")
    if not isinstance(resource, str) or not resource:
        raise AuthError(f"{where} has no resource")
    if not resource_matches(server_url, resource):
        raise AuthError(
            f"{where} is for {resource!r}, not for {server_url!r}: it cannot speak for this "
            "server, so no authorization is attempted")
    servers = _strings(doc, "authorization_servers", where)
    if not servers:
        raise AuthError(f"{where} lists no authorization_servers")
    return ResourceMetadata(resource, servers, _strings(doc, "scopes_supported", where),
                            url, doc)


@dataclass(frozen=True)
class ASMetadata:
    """A checked authorization server metadata document (RFC 8414 or OIDC Discovery)."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str | None
    registration_endpoint: str | None
    code_challenge_methods_supported: tuple[str, ...] | None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None
    scopes_supported: tuple[str, ...] | None
    iss_parameter_supported: bool
    client_id_metadata_document_supported: bool
    raw: Mapping[str, Any]

    @classmethod
    def fallback(cls, issuer: str) -> ASMetadata:
        """The 2025-03-26 defaults for a server that publishes no metadata: `/authorize`,
        `/token` and `/register` at the issuer's origin."""
        base = origin_of(issuer)
        return cls(issuer, f"{base}/authorize", f"{base}/token", f"{base}/register", None,
                   None, None, False, False, {})


def read_as_metadata(doc: Any, url: str, issuer: str) -> ASMetadata:
    """The metadata fetched from `url`, accepted only if it names `issuer` exactly."""
    where = f"the authorization server metadata at {url}"
    if not isinstance(doc, Mapping):
        raise AuthError(f"{where} is not a JSON object")
    named = doc.get("issuer")
    if named != issuer:
        raise AuthError(f"{where} names the issuer {named!r}, not {issuer!r} whose metadata "
                        "it should be; none of its endpoints is used (RFC 8414 §3.3)")

    def endpoint(name: str) -> str | None:
        value = doc.get(name)
        if value is not None and not isinstance(value, str):
            raise AuthError(f"{where}: {name} is not a string")
        return value or None

    return ASMetadata(
        issuer=issuer,
        authorization_endpoint=endpoint("authorization_endpoint"),
        token_endpoint=endpoint("token_endpoint"),
        registration_endpoint=endpoint("registration_endpoint"),
        code_challenge_methods_supported=_strings(doc, "code_challenge_methods_supported",
                                                  where),
        token_endpoint_auth_methods_supported=_strings(
            doc, "token_endpoint_auth_methods_supported", where),
        scopes_supported=_strings(doc, "scopes_supported", where),
        iss_parameter_supported=doc.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_document_supported=(
            doc.get("client_id_metadata_document_supported") is True),
        raw=doc,
    )
