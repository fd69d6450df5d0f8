"""`mcpkit logout URL`: end a sign-in at the authorization server, then forget it here.

For each issuer that holds tokens for the server, the AS's metadata is fetched (through the
client's checked requests, `mcpkit.transports.oauth.http.OAuthHTTP`) and, when it names a
`revocation_endpoint`, the refresh and access tokens are revoked there (RFC 7009) as the client
that obtained them: the registration kept for that issuer, or a machine sign-in's credentials
(and private key). Then the tokens and the sign-in are removed whatever revocation said, and
the outcome is one line: revoked, not offered by the AS, or what failed (the tokens are gone
here in every case; a grant not revoked may live on at the AS until it expires).

Imports: `mcpkit.cli` helpers, the OAuth client modules (lazily: `mcpkit logout` alone needs
them).
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import urlsplit

from mcpkit.cli.usage import EXIT_OK

__all__ = ["sign_out"]


async def sign_out(url: str, *, keep_grant: bool = False) -> int:
    from mcpkit.auth.client_discovery import canonical_resource
    from mcpkit.cli.auth import entries_for, forget
    from mcpkit.cli.signins import SignIns
    from mcpkit.store.tokens import FileTokenStorage

    storage = FileTokenStorage()
    signins = SignIns()
    resource = canonical_resource(url)
    said: list[str] = []
    if not keep_grant:
        signin = signins.get(resource)
        for issuer, _, tokens in await entries_for(storage, url):
            said.append(await _revoke(issuer, tokens, await storage.load_client(issuer),
                                      signin, url))
    issuers = await forget(signins, storage, url, resource)
    from mcpkit.cli.terminal import shown  # issuers and revocation errors are servers' words

    if not issuers:
        print(f"mcpkit logout: nothing was kept for {shown(url)}", file=sys.stderr)
        return EXIT_OK
    ended = "; ".join(said) if said else ("not revoked (--keep-grant): the authorization "
                                         "server still holds the grant")
    print(shown(f"Signed out of {url}: the tokens from {', '.join(sorted(issuers))} are "
                f"removed ({ended})"))
    return EXIT_OK


async def _revoke(issuer: str, tokens: Any, kept: Any, signin: Any, url: str) -> str:
    """Revoke one issuer's tokens; the words that say how it went."""
    import httpx

    from mcpkit.auth.client_targets import is_loopback_host
    from mcpkit.errors import AuthError
    from mcpkit.store.tokens import ClientInfo
    from mcpkit.transports.oauth.http import OAuthHTTP
    from mcpkit.transports.oauth.revocation import revoke_tokens

    client = kept
    if signin is not None and signin.client_id:  # a machine sign-in keeps its own credentials
        client = ClientInfo(signin.client_id, signin.client_secret, signin.auth_method,
                            "pre-registered")
    if client is None:
        return f"not revoked at {issuer}: no client registration is kept for it"
    loopback = is_loopback_host(urlsplit(url).hostname or "")
    try:
        async with httpx.AsyncClient(timeout=30.0, follow_redirects=False) as http:
            checked = OAuthHTTP(http, allow_loopback=loopback)
            metadata = await checked.as_metadata(issuer)
            if metadata is None:
                return f"not revoked: {issuer} publishes no metadata"
            done = await revoke_tokens(checked, metadata, client, tokens, private_key=(
                signin.private_key_text() if signin is not None else None))
    except AuthError as exc:
        return f"not revoked at {issuer}: {exc}"
    if done is None:
        return (f"{issuer} offers no revocation: it still holds the grant until it expires "
                "(revoke it there to end it now)")
    if done.problems:
        return f"revocation at {issuer} failed for {'; '.join(done.problems)}"
    kept_alive = [kind.replace("_", " ") for kind in done.unsupported]
    return f"revoked at {issuer}" + (f" ({' and '.join(kept_alive)} not revocable there: it "
                                     "lives until it expires)" if kept_alive else "")
