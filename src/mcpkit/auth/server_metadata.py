"""Protected Resource Metadata (RFC 9728) and the resource's canonical URI, without I/O.

The resource identifier is this server's canonical URI (RFC 8707, AUTH-25): scheme and host
in lower case, the port only when it is not the scheme's default, the endpoint's path without
a trailing slash, no query or fragment. It is what tokens must name in `aud`, what the
metadata's `resource` says, and where the metadata's own URL is derived from: the
path-inserted well-known URI (`/.well-known/oauth-protected-resource` + the endpoint's path,
RFC 9728 §3.1), with the root one served as well for clients that try it (AUTH-5).

Behind a reverse proxy the URI the client used is not the one the application sees, so it is
configured (`ProtectedResource.public_url`); without it, it is made from the loopback address
the server listens on and the endpoint's path, never from a request's `Host`
(`mcpkit.transports.http_server.auth`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = [
    "WELL_KNOWN",
    "canonical_resource",
    "metadata_document",
    "metadata_paths",
    "metadata_url",
]

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def canonical_resource(url: str, what: str = "public_url") -> str:
    """`url` as a canonical resource URI; a `ValueError` naming `what` for anything that is
    not an absolute http(s) URL without a query or fragment."""
    if not url.isascii():  # it goes into headers (challenges), which are ASCII
        raise ValueError(f"{what} {url!r} must be ASCII: write an internationalized host in "
                         "its xn-- form and percent-encode the path")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{what} {url!r} must be an absolute http or https URL, e.g. "
                         "'https://mcp.example.com/mcp'")
    if parts.query or parts.fragment or "#" in url:
        raise ValueError(f"{what} {url!r} must have no query or fragment (RFC 8707 §2)")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"{what} {url!r} must not carry credentials")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{what} {url!r} has a port that is not a number in 0-65535") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    return f"{scheme}://{host}{path}"


def metadata_url(resource: str) -> str:
    """The path-inserted well-known URL of `resource`'s metadata (RFC 9728 §3.1)."""
    parts = urlsplit(resource)
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path}"


def metadata_paths(*endpoint_paths: str) -> frozenset[str]:
    """The request paths answered with the metadata: the root well-known path and the
    path-inserted one of each endpoint path (the public one and the one the app sees)."""
    paths = {WELL_KNOWN}
    for path in endpoint_paths:
        trimmed = path.rstrip("/")
        if trimmed:
            paths.add(WELL_KNOWN + trimmed)
    return frozenset(paths)


def metadata_document(
    resource: str,
    authorization_servers: Iterable[str],
    *,
    scopes_supported: Iterable[str] = (),
    resource_documentation: str | None = None,
    resource_name: str | None = None,
    dpop_algs: Iterable[str] = (),
    dpop_required: bool = False,
) -> dict[str, Any]:
    """The RFC 9728 §2 document. `scopes_supported` is the minimal set for basic use, so
    `offline_access` is left out even when configured (AUTH-11); tokens are taken in the
    `Authorization` header only (`bearer_methods_supported`)."""
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    scopes = [s for s in scopes_supported if s != "offline_access"]
    if scopes:
        document["scopes_supported"] = scopes
    if resource_documentation:
        document["resource_documentation"] = resource_documentation
    if resource_name:
        document["resource_name"] = resource_name
    algs = list(dpop_algs)
    if algs:
        document["dpop_signing_alg_values_supported"] = algs
    if dpop_required:
        document["dpop_bound_access_tokens_required"] = True
    return document
