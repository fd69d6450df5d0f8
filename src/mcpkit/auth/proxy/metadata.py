"""The authorization proxy's own Authorization Server Metadata (RFC 8414), without I/O.

MCP clients find it from the Protected Resource Metadata (whose `authorization_servers`
names the proxy's issuer) at `/.well-known/oauth-authorization-server` with the issuer's path
appended (RFC 8414 §3.1). It says what the proxy takes: the authorization code flow only,
PKCE with S256 only (a client that cannot do it is refused before a browser opens), public
clients and client secrets, Dynamic Client Registration and Client ID Metadata Documents when
enabled, RFC 9207's `iss` in every authorization response, and RFC 7009 revocation.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.auth.proxy.config import AuthProxy

__all__ = [
    "AS_WELL_KNOWN",
    "ENDPOINTS",
    "authorization_server_metadata",
    "metadata_path",
]

AS_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
ENDPOINTS: Final = ("authorize", "consent", "callback", "token", "register", "revoke", "jwks")
"""The proxy's endpoints, each at `<issuer>/oauth/<name>`."""
AUTH_METHODS_SUPPORTED: Final = ("none", "client_secret_basic", "client_secret_post")


def metadata_path(issuer: str) -> str:
    """The request path of the issuer's metadata (RFC 8414 §3.1: the well-known path, then
    the issuer's own path)."""
    return AS_WELL_KNOWN + urlsplit(issuer).path.rstrip("/")


def authorization_server_metadata(proxy: AuthProxy) -> dict[str, Any]:
    """The RFC 8414 §2 document of `proxy`."""
    doc: dict[str, Any] = {
        "issuer": proxy.issuer_url,
        "authorization_endpoint": proxy.endpoint("authorize"),
        "token_endpoint": proxy.endpoint("token"),
        "revocation_endpoint": proxy.endpoint("revoke"),
        "jwks_uri": proxy.endpoint("jwks"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS_SUPPORTED),
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS_SUPPORTED),
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": proxy.client_documents,
    }
    if proxy.dynamic_registration:
        doc["registration_endpoint"] = proxy.endpoint("register")
    scopes = [s for s in proxy.scopes_supported if s != "offline_access"]
    if scopes:
        doc["scopes_supported"] = scopes
    if proxy.resource_documentation:
        doc["service_documentation"] = proxy.resource_documentation
    return doc
