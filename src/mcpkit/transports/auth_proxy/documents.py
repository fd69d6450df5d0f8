"""Fetching a Client ID Metadata Document for the authorization proxy.

The URL is the client's word, so the fetch is held to the OAuth client's rules for URLs a
peer chose (`OAuthHTTP`): https only (http on loopback when the proxy itself is on loopback,
for development), no private, link-local or reserved address after name resolution, a few
redirects at most, each checked again, the whole fetch bounded by `upstream_timeout_s`. The
document must then name its own URL as `client_id` (checked by the caller), so a redirect
cannot make one client pass for another.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcpkit.auth.proxy.config import ProxyLimits
from mcpkit.errors import AuthError
from mcpkit.transports.oauth.http import OAuthHTTP

__all__ = ["fetch_client_document"]


async def fetch_client_document(url: str, limits: ProxyLimits, *, allow_loopback: bool) -> Any:
    """The JSON document at `url`; `AuthError` when it cannot be had."""
    try:
        async with httpx.AsyncClient(timeout=limits.upstream_timeout_s,
                                     follow_redirects=False) as http, \
                asyncio.timeout(limits.upstream_timeout_s):
            status, doc = await OAuthHTTP(http, allow_loopback=allow_loopback).get_json(url)
    except TimeoutError:
        raise AuthError(f"{url} did not answer within {limits.upstream_timeout_s} s") from None
    if status != 200:
        raise AuthError(f"{url} answered {status}")
    return doc
