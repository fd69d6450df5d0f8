"""The MCP clients an authorization proxy knows, without I/O: a Dynamic Client Registration
request (RFC 7591) or a Client ID Metadata Document checked into a `ClientRecord`, and the
redirect URI rules every authorization request is held to.

Redirect URIs are compared exactly with those registered (OAuth 2.1 §2.3.1), with the one
exception RFC 8252 §7.3 makes for native apps: a registered `http://127.0.0.1:PORT/...` (or
`[::1]`) URI also matches the same URI on any other port, since a native app takes whatever
port is free when it listens. What may be registered: `https` URIs, `http` ones on a loopback
address (`127.0.0.1`, `[::1]`, `localhost`), and private-use schemes of native apps
(`com.example.app:/callback`, RFC 8252 §7.1: a dot in the scheme). Never a fragment,
credentials, or a scheme a browser would run (`javascript:`, `data:`, `file:`).

A refusal is an `OAuthRequestError` with the RFC 7591 code (`invalid_redirect_uri`,
`invalid_client_metadata`) and a description that names the field and the fix.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from mcpkit.auth.proxy.config import ProxyLimits
from mcpkit.errors import OAuthRequestError

__all__ = [
    "ClientRecord",
    "check_document_url",
    "client_from_document",
    "client_from_registration",
    "redirect_matches",
]

_TEXT_LIMIT: Final = 200
_URI_LIMIT: Final = 2000
_PUBLIC: Final = "none"
_SECRET_METHODS: Final = ("client_secret_basic", "client_secret_post")
_GRANTS: Final = frozenset({"authorization_code", "refresh_token"})
_BROWSER_SCHEMES: Final = frozenset({"javascript", "data", "file", "vbscript", "about", "blob",
                                     "filesystem", "view-source", "chrome", "ws", "wss"})


@dataclass(frozen=True, slots=True)
class ClientRecord:
    """One MCP client as the proxy keeps it (in its store: DCR clients; CIMD ones are made
    from their document each time it is read)."""

    client_id: str
    redirect_uris: tuple[str, ...]
    auth_method: str
    """`none` (a public client, PKCE its only proof) or a client secret's method."""
    grant_types: tuple[str, ...]
    client_name: str | None = None
    client_uri: str | None = None
    secret_hash: str | None = None
    """SHA-256 of the client secret (hex); the secret itself is never kept."""
    source: str = "dcr"
    """`dcr` or `cimd` (the id is the document's URL, whose host vouches for the name)."""
    issued_at: int = 0

    @property
    def refreshes(self) -> bool:
        """Whether refresh tokens are issued to it (it registered the grant)."""
        return "refresh_token" in self.grant_types

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClientRecord:
        return cls(**{**data, "redirect_uris": tuple(data["redirect_uris"]),
                      "grant_types": tuple(data["grant_types"])})


def _bad(code: str, description: str) -> OAuthRequestError:
    return OAuthRequestError(description, error=code, status=400)


def _text(doc: Mapping[str, Any], name: str) -> str | None:
    value = doc.get(name)
    if value is None:
        return None
    if type(value) is not str or len(value) > _TEXT_LIMIT or not value.isprintable():
        raise _bad("invalid_client_metadata", f"{name} must be printable text of at most "
                   f"{_TEXT_LIMIT} characters")
    return value.strip() or None


def check_redirect_uri(uri: object) -> str:
    """`uri` if it may be registered as a redirect URI (see the module docstring)."""
    if type(uri) is not str or not uri or len(uri) > _URI_LIMIT:
        raise _bad("invalid_redirect_uri", f"each redirect URI must be a string of at most "
                   f"{_URI_LIMIT} characters")
    if not uri.isascii() or any(c.isspace() or ord(c) < 0x20 for c in uri):
        raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} must be ASCII "
                   "without spaces (percent-encode the rest)")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} is not a URI") from None
    scheme = parts.scheme.lower()
    if "#" in uri:
        raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} must have no "
                   "fragment (RFC 6749 §3.1.2)")
    if not scheme or scheme in _BROWSER_SCHEMES:
        raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} must be https, http "
                   "on a loopback address, or a native app's private-use scheme")
    if scheme in ("http", "https"):
        if not parts.hostname:
            raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} names no host")
        if parts.username is not None or parts.password is not None:
            raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} must not carry "
                       "credentials")
        try:
            parts.port  # noqa: B018 -- raises on a port that is no number
        except ValueError:
            raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} has a port that "
                       "is not a number") from None
        if scheme == "http" and not _loopback(parts.hostname):
            raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} must be https: "
                       "plain http only on a loopback address (127.0.0.1, [::1], localhost)")
        return uri
    if "." not in scheme:  # RFC 8252 §7.1: private-use schemes are reverse domain names
        raise _bad("invalid_redirect_uri", f"the redirect URI {uri[:80]!r} uses the scheme "
                   f"{scheme!r}: a native app's private-use scheme is a reverse domain name "
                   "(com.example.app:/callback)")
    return uri


def _loopback(host: str) -> bool:
    host = host.lower().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loopback_ip(host: str | None) -> bool:
    """An IP literal on loopback: the redirect URIs whose port may vary (RFC 8252 §7.3)."""
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redirect_matches(registered: tuple[str, ...], asked: str) -> bool:
    """Whether `asked` is one of the `registered` redirect URIs: the same string, or, for an
    `http` loopback IP literal, the same URI on another port."""
    if asked in registered:
        return True
    try:
        parts = urlsplit(asked)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme != "http" or not _loopback_ip(parts.hostname) or port is None:
        return False
    for uri in registered:
        known = urlsplit(uri)
        if (known.scheme == "http" and known.hostname == parts.hostname
                and known.path == parts.path and known.query == parts.query
                and _loopback_ip(known.hostname)):
            return True
    return False


def _redirect_uris(doc: Mapping[str, Any], limits: ProxyLimits) -> tuple[str, ...]:
    uris = doc.get("redirect_uris")
    if type(uris) is not list or not uris:
        raise _bad("invalid_redirect_uri", "redirect_uris must be a non-empty list: where the "
                   "authorization response is sent back to")
    if len(uris) > limits.max_redirect_uris:
        raise _bad("invalid_redirect_uri", f"at most {limits.max_redirect_uris} redirect URIs "
                   f"may be registered, not {len(uris)}")
    return tuple(dict.fromkeys(check_redirect_uri(uri) for uri in uris))


def _grants(doc: Mapping[str, Any]) -> tuple[str, ...]:
    grants = doc.get("grant_types", ["authorization_code"])
    if type(grants) is not list or not all(type(g) is str for g in grants):
        raise _bad("invalid_client_metadata", "grant_types must be a list of strings")
    unknown = sorted(set(grants) - _GRANTS)
    if unknown or "authorization_code" not in grants:
        raise _bad("invalid_client_metadata", "grant_types may hold authorization_code (which "
                   f"is required) and refresh_token only, not {', '.join(unknown) or grants}")
    responses = doc.get("response_types", ["code"])
    if type(responses) is not list or responses != ["code"]:
        raise _bad("invalid_client_metadata", "response_types must be [\"code\"]: the "
                   "authorization code flow is the only one served")
    return tuple(dict.fromkeys(grants))


def client_from_registration(doc: object, *, client_id: str, secret_hash: str | None,
                             now: float, limits: ProxyLimits) -> ClientRecord:
    """The record of an RFC 7591 registration request `doc`, given the id (and, for a
    confidential client, the hash of the secret) the proxy chose."""
    if not isinstance(doc, dict):
        raise _bad("invalid_client_metadata", "the registration request must be a JSON object")
    method = doc.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in (_PUBLIC, *_SECRET_METHODS):
        raise _bad("invalid_client_metadata", f"token_endpoint_auth_method must be none, "
                   f"client_secret_basic or client_secret_post, not {str(method)[:40]!r}")
    return ClientRecord(
        client_id=client_id, redirect_uris=_redirect_uris(doc, limits), auth_method=method,
        grant_types=_grants(doc), client_name=_text(doc, "client_name"),
        client_uri=_client_uri(doc), secret_hash=None if method == _PUBLIC else secret_hash,
        source="dcr", issued_at=int(now))


def _client_uri(doc: Mapping[str, Any]) -> str | None:
    value = doc.get("client_uri")
    if value is None:
        return None
    if type(value) is not str or len(value) > _URI_LIMIT or not value.startswith("https://"):
        raise _bad("invalid_client_metadata", "client_uri must be an https URL")
    return value


def check_document_url(client_id: str) -> str:
    """`client_id` if it names a Client ID Metadata Document: an https URL with a path, no
    fragment, credentials or dot segments; else `invalid_client`."""
    parts = urlsplit(client_id)
    segments = parts.path.split("/")
    if (parts.scheme != "https" or not parts.hostname or parts.path in ("", "/")
            or parts.fragment or "#" in client_id or parts.username or parts.password
            or "." in segments or ".." in segments or len(client_id) > _URI_LIMIT):
        raise OAuthRequestError(
            f"the client id {client_id[:80]!r} is no client metadata document URL: an https "
            "URL with a path, without a fragment, credentials or dot segments",
            error="invalid_client", status=400)
    return client_id


def client_from_document(doc: object, url: str, *, limits: ProxyLimits) -> ClientRecord:
    """The record of the Client ID Metadata Document fetched from `url`: its `client_id`
    must be that URL, exactly; it authenticates with PKCE only (`none`), since a document
    anyone can read holds no secret."""
    if not isinstance(doc, dict):
        raise _bad("invalid_client_metadata", f"the client metadata document at {url} is not "
                   "a JSON object")
    if doc.get("client_id") != url:
        raise _bad("invalid_client_metadata", f"the client metadata document at {url} names "
                   "another client_id; it must name its own URL exactly")
    method = doc.get("token_endpoint_auth_method", _PUBLIC)
    if method != _PUBLIC:
        raise _bad("invalid_client_metadata", f"the client metadata document at {url} asks for "
                   f"{str(method)[:40]!r}; this server takes public clients (none) by document")
    return ClientRecord(
        client_id=url, redirect_uris=_redirect_uris(doc, limits), auth_method=_PUBLIC,
        grant_types=_grants(doc), client_name=_text(doc, "client_name"),
        client_uri=_client_uri(doc), source="cimd")
