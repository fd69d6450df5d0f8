"""What the authorization proxy keeps between requests, through the server's `Store`.

Every record is a JSON object under a key of its kind, written once with `Store.add` (atomic
"first one wins" on every backend: memory, SQLite, PostgreSQL, Redis), so replicas sharing the
store (`ServerOptions.store`, `mcpkit run --store URL`) share every authorization:

| kind | key | lives | what |
| --- | --- | --- | --- |
| `client` | client id | `registration_ttl_s` | a dynamically registered client (its secret's digest only) |
| `document` | document URL | `client_document_ttl_s` | a Client ID Metadata Document's checked record |
| `pending` | random id | `pending_ttl_s` | an authorization request waiting for the user's consent |
| `upstream-state` | the upstream `state` | what is left of it | a consented request waiting for the upstream's answer |
| `code` | the code's digest | `code_ttl_s` | an authorization code (kept once redeemed, so a replay is known and revokes its grant) |
| `refresh` | the token's digest | the grant's life | a refresh token (kept once used: a second use revokes the grant) |
| `upstream` | grant id (+ version) | the grant's life | the upstream's tokens, sealed with the state keys |
| `revoked` | grant id or token id | past the tokens' life | a revocation |

Single use (a code, a refresh token, a pending authorization, an upstream state) is a second
`add` of a `used` key: of two replicas redeeming the same code at once, exactly one wins, and
the loser learns the code was used. Codes and refresh tokens are looked up by digest, so the
store holds nothing a thief could present.

Imports: the standard library, orjson, `mcpkit.store`.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from mcpkit.store import Store

__all__ = ["ProxyState"]

_PREFIX: Final = "mcpkit.proxy"
_MARGIN_S: Final = 60.0
"""How much longer than what it guards a `used` or `revoked` record is kept."""


class ProxyState:
    """Typed records of the proxy over one `Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def _key(kind: str, key: str) -> str:
        return f"{_PREFIX}/{kind}/{key}"  # no NUL: PostgreSQL text cannot hold one

    async def put(self, kind: str, key: str, record: dict[str, Any], expires_at: float) -> bool:
        """Write a record unless a live one holds the key (True when written)."""
        return await self.store.add(self._key(kind, key), orjson.dumps(record), expires_at)

    async def get(self, kind: str, key: str) -> dict[str, Any] | None:
        raw = await self.store.get(self._key(kind, key))
        if raw is None:
            return None
        value = orjson.loads(raw)
        return value if isinstance(value, dict) else None

    async def delete(self, kind: str, key: str) -> None:
        await self.store.delete(self._key(kind, key))

    async def use(self, kind: str, key: str, until: float) -> bool:
        """Mark the record used: True for the one caller that did so first."""
        return await self.store.add(self._key(f"used-{kind}", key), b"", until + _MARGIN_S)

    async def take(self, kind: str, key: str, until: float) -> dict[str, Any] | None:
        """The record, for the one caller that redeems it (None: absent, expired, or
        redeemed already)."""
        record = await self.get(kind, key)
        if record is None or not await self.use(kind, key, until):
            return None
        await self.delete(kind, key)
        return record

    async def revoke(self, ident: str, until: float) -> None:
        await self.store.add(self._key("revoked", ident), b"", until + _MARGIN_S)

    async def revoked(self, *idents: str) -> bool:
        for ident in idents:
            if await self.store.get(self._key("revoked", ident)) is not None:
                return True
        return False
