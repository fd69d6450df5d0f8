"""How the OAuth client obtains its client id at one authorization server (AUTH-17..22): the
pre-registered credentials given for that issuer (the caller's explicit choice wins over what
an earlier run kept), then a registration already kept for it, then a Client ID Metadata
Document URL when the AS supports CIMD, then Dynamic Client Registration (with
`application_type`, AUTH-21), then asking the host. Whatever is chosen at an AS is kept for
it, a CIMD URL included, so a later process that was given none (a later CLI command) refreshes
as the same client.

Credentials are bound to the issuer that issued them: a kept registration is looked up by the
validated `issuer` only, and pre-registered credentials name their issuer (`client_issuer`)
or bind to the first one they are used with, so an MCP server whose PRM moves to another AS
gets a fresh registration there, never the old id (the CIMD URL is portable by design).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcpkit.auth.client_discovery import ASMetadata
from mcpkit.auth.client_targets import is_loopback_host
from mcpkit.errors import AuthError
from mcpkit.store.tokens import ClientInfo, TokenStorage
from mcpkit.transports.oauth.http import OAuthHTTP

__all__ = [
    "ClientInfoHandler",
    "Registration",
    "auth_method_for",
]

log = logging.getLogger("mcpkit.auth")

ClientInfoHandler = Callable[[str], "ClientInfo | Awaitable[ClientInfo | None] | None"]
"""Asked for a client id when nothing else gives one: receives the issuer."""

_PREFERRED_SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def auth_method_for(client: ClientInfo, metadata: ASMetadata, *, has_key: bool) -> str:
    """The token endpoint auth method: as registered, else the best the AS lists for what the
    client holds (RFC 8414's default list is `client_secret_basic`)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    supported = metadata.token_endpoint_auth_methods_supported or ("client_secret_basic",)
    if has_key and "private_key_jwt" in supported:
        return "private_key_jwt"
    if client.client_secret is not None:
        for method in _PREFERRED_SECRET_METHODS:
            if method in supported:
                return method
        return "none" if "none" in supported else "client_secret_basic"
    return "none"


@dataclass
class Registration:
    """The client's registration settings, and the one-issuer binding of pre-registered ids."""

    client_id: str | None = None
    client_secret: str | None = None
    client_issuer: str | None = None
    token_endpoint_auth_method: str | None = None
    client_metadata_url: str | None = None
    client_name: str = "mcpkit"
    application_type: str | None = None
    has_key: bool = False
    client_info_handler: ClientInfoHandler | None = None

    async def client_for(self, issuer: str, metadata: ASMetadata, storage: TokenStorage,
                         http: OAuthHTTP, redirect_uri: str | None) -> ClientInfo:
        if self.client_id is not None:
            if self.client_issuer is None:
                self.client_issuer = issuer  # bound to the first AS it is used with
            if self.client_issuer == issuer:
                return ClientInfo(self.client_id, self.client_secret,
                                  self.token_endpoint_auth_method, "pre-registered",
                                  (redirect_uri,) if redirect_uri else ())
            log.warning("the pre-registered client id is for %s, not %s: it is not sent there",
                        self.client_issuer, issuer)
        kept = await storage.load_client(issuer)
        if kept is not None and (self.client_metadata_url is None or kept.source != "cimd"
                                 or kept.client_id == self.client_metadata_url):
            return kept
        if self.client_metadata_url and metadata.client_id_metadata_document_supported:
            method = "private_key_jwt" if self.has_key else "none"
            client = ClientInfo(self.client_metadata_url, None, method, "cimd")
            await storage.save_client(issuer, client)
            return client
        if metadata.registration_endpoint:
            client = await self._register(issuer, metadata, http, redirect_uri)
            await storage.save_client(issuer, client)
            return client
        if self.client_info_handler is not None:
            answer = self.client_info_handler(issuer)
            asked = await answer if inspect.isawaitable(answer) else answer
            if asked is not None:
                await storage.save_client(issuer, asked)
                return asked
        mismatch = (f" (the pre-registered client id is for {self.client_issuer})"
                    if self.client_id is not None else "")
        raise AuthError(
            f"no client id for the authorization server {issuer}{mismatch}: it offers neither "
            "a Client ID Metadata Document (client_metadata_url=) nor Dynamic Client "
            "Registration; register a client there and pass client_id= (and client_secret=)")

    async def _register(self, issuer: str, metadata: ASMetadata, http: OAuthHTTP,
                        redirect_uri: str | None) -> ClientInfo:
        """Dynamic Client Registration (RFC 7591); deprecated in MCP, kept for ASes without
        CIMD."""
        assert metadata.registration_endpoint is not None
        if redirect_uri is None:
            raise AuthError(f"registering at {issuer} needs a redirect URI (redirect_uri=)")
        host = urlsplit(redirect_uri).hostname or ""
        app_type = self.application_type or ("native" if is_loopback_host(host) or
                                              urlsplit(redirect_uri).scheme not in
                                              ("http", "https") else "web")
        supported = metadata.token_endpoint_auth_methods_supported or ()
        method = ("none" if "none" in supported or not supported else
                  next((m for m in _PREFERRED_SECRET_METHODS if m in supported), supported[0]))
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": app_type,
        }
        status, doc, _ = await http.post_form(metadata.registration_endpoint, {}, {},
                                              json_body=body)
        if status not in (200, 201) or not isinstance(doc, dict):
            error = doc.get("error") if isinstance(doc, dict) else None
            detail = doc.get("error_description") if isinstance(doc, dict) else None
            raise AuthError(
                f"dynamic client registration at {issuer} failed (HTTP {status}"
                + (f", {error}" if error else "") + (f": {detail}" if detail else "") + "); "
                f"the redirect URI {redirect_uri} or application_type {app_type!r} may not be "
                "accepted there: pre-register a client and pass client_id=")
        client_id = doc.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthError(f"dynamic client registration at {issuer} answered no client_id")
        secret = doc.get("client_secret")
        registered = doc.get("token_endpoint_auth_method")
        expires = doc.get("client_secret_expires_at")
        return ClientInfo(
            client_id, secret if isinstance(secret, str) else None,
            registered if isinstance(registered, str) else method, "dcr", (redirect_uri,),
            float(expires) if isinstance(expires, int | float) and expires else None)
