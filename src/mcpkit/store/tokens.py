"""Where an OAuth client keeps what it obtained: tokens per (issuer, resource), and the client
registration it holds at each authorization server (AUTH-16, AUTH-22, AUTH-31).

Everything is keyed by the authorization server's validated `issuer`: credentials one AS
issued are never looked up for another, so a server whose Protected Resource Metadata moves
to a new AS gets a fresh registration, not a replay of the old one. Tokens are further keyed
by the resource (the MCP server's canonical URI): a token is sent only to the server it was
issued for.

- `MemoryTokenStorage`: one process, gone at exit;
- `FileTokenStorage`: the default of `mcpkit.transports.oauth.flow.OAuth`, one JSON file in the
  user's data folder (`tokens.json` beside the state key ring, see `state_keys.data_dir`), so a
  restarted CLI or agent does not send its user through the browser again. Each change writes
  a private temporary file (mode 0600) in full, then renames it over the old one: a reader
  never sees half a file, and a crash leaves the previous version. A file that others may read,
  or that does not parse, is refused with `TokenFileError` naming the fix; it is never
  overwritten, since it may hold the only refresh token of a grant;
- `StagedTokenStorage`: a sign-in on trial over another storage: it reads the registrations
  kept there, and keeps what the sign-in obtains to itself until `commit`, so a sign-in that
  fails leaves the previous one whole;
- anything else that has the five methods of `TokenStorage` (a keychain, a database).

Imports: the standard library and `mcpkit.store.state_keys`.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from mcpkit.errors import TokenFileError
from mcpkit.store.private_json import read_private_json, write_private_json
from mcpkit.store.state_keys import data_dir

__all__ = [
    "TOKEN_FILE_NAME",
    "ClientInfo",
    "FileTokenStorage",
    "MemoryTokenStorage",
    "StagedTokenStorage",
    "TokenFileError",
    "TokenSet",
    "TokenStorage",
]

TOKEN_FILE_NAME: Final = "tokens.json"
_VERSION: Final = 1


@dataclass(frozen=True)
class TokenSet:
    """An access token and what came with it. `repr` hides the tokens, so a log line or a
    traceback that shows a `TokenSet` shows no credential."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    """Unix time after which the access token is no longer sent (None: not said)."""
    scope: str | None = None
    """The scopes granted (space-separated), or those requested when the AS did not say."""

    def expired(self, now: float, margin: float = 30.0) -> bool:
        """True from `margin` seconds before the expiry: a token that dies in flight is a
        401 and a second round trip, a refresh a little early is not."""
        return self.expires_at is not None and now >= self.expires_at - margin

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> TokenSet:
        return cls(**_fields_of(cls, data))


@dataclass(frozen=True)
class ClientInfo:
    """The client's identity at one authorization server: pre-registered, a Client ID Metadata
    Document URL, or what Dynamic Client Registration answered."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    """As registered (the DCR answer says which); None lets the flow pick from the AS's list."""
    source: str = "dcr"
    """"pre-registered", "cimd" or "dcr": how the id was obtained."""
    redirect_uris: tuple[str, ...] = ()
    client_secret_expires_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if v is not None}
        data["redirect_uris"] = list(self.redirect_uris)
        return data

    @classmethod
    def from_json(cls, data: Any) -> ClientInfo:
        values = _fields_of(cls, data)
        values["redirect_uris"] = tuple(values.get("redirect_uris") or ())
        return cls(**values)


def _fields_of(cls: type, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"a {cls.__name__} is a JSON object, not {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@runtime_checkable
class TokenStorage(Protocol):
    """What the OAuth flow keeps between runs. Every method is awaited; an implementation
    that raises fails the authorization with its error, and loses nothing."""

    async def load(self, issuer: str, resource: str) -> TokenSet | None: ...

    async def save(self, issuer: str, resource: str, tokens: TokenSet) -> None: ...

    async def delete(self, issuer: str, resource: str) -> None: ...

    async def load_client(self, issuer: str) -> ClientInfo | None: ...

    async def save_client(self, issuer: str, client: ClientInfo) -> None: ...


class MemoryTokenStorage:
    """Tokens and registrations for the life of the process."""

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, str], TokenSet] = {}
        self._clients: dict[str, ClientInfo] = {}

    async def load(self, issuer: str, resource: str) -> TokenSet | None:
        return self._tokens.get((issuer, resource))

    async def save(self, issuer: str, resource: str, tokens: TokenSet) -> None:
        self._tokens[(issuer, resource)] = tokens

    async def delete(self, issuer: str, resource: str) -> None:
        self._tokens.pop((issuer, resource), None)

    async def load_client(self, issuer: str) -> ClientInfo | None:
        return self._clients.get(issuer)

    async def save_client(self, issuer: str, client: ClientInfo) -> None:
        self._clients[issuer] = client

    async def entries(self) -> list[tuple[str, str, TokenSet]]:
        """Every (issuer, resource, tokens) held, for `mcpkit auth status`."""
        return [(i, r, t) for (i, r), t in sorted(self._tokens.items())]


class StagedTokenStorage(MemoryTokenStorage):
    """A new sign-in kept apart from `under` until it succeeds: no kept token is read (the
    sign-in is afresh), a kept registration is (the client stays the same), and everything
    obtained is written to `under` only by `commit`."""

    def __init__(self, under: TokenStorage) -> None:
        super().__init__()
        self.under = under

    async def load_client(self, issuer: str) -> ClientInfo | None:
        staged = await super().load_client(issuer)
        return staged if staged is not None else await self.under.load_client(issuer)

    async def commit(self) -> None:
        """Write the registrations and tokens obtained to the storage underneath."""
        for issuer, client in sorted(self._clients.items()):
            await self.under.save_client(issuer, client)
        for issuer, resource, tokens in await self.entries():
            await self.under.save(issuer, resource, tokens)


class FileTokenStorage:
    """One private JSON file: `{"version": 1, "tokens": {issuer: {resource: ...}},
    "clients": {issuer: ...}}`. Each call reads the file afresh, so processes that share it
    (two CLI commands, an agent and the CLI) see each other's refreshes."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else data_dir() / TOKEN_FILE_NAME
        self._lock = asyncio.Lock()

    async def load(self, issuer: str, resource: str) -> TokenSet | None:
        data = await self._read()
        entry = data["tokens"].get(issuer, {}).get(resource)
        return None if entry is None else self._parse(TokenSet, entry, f"tokens of {resource}")

    async def save(self, issuer: str, resource: str, tokens: TokenSet) -> None:
        async with self._lock:
            data = await self._read()
            data["tokens"].setdefault(issuer, {})[resource] = tokens.to_json()
            await asyncio.to_thread(self._write, data)

    async def delete(self, issuer: str, resource: str) -> None:
        async with self._lock:
            data = await self._read()
            by_resource = data["tokens"].get(issuer, {})
            if resource not in by_resource:
                return
            del by_resource[resource]
            if not by_resource:
                del data["tokens"][issuer]
            await asyncio.to_thread(self._write, data)

    async def load_client(self, issuer: str) -> ClientInfo | None:
        data = await self._read()
        entry = data["clients"].get(issuer)
        return None if entry is None else self._parse(ClientInfo, entry, f"client of {issuer}")

    async def save_client(self, issuer: str, client: ClientInfo) -> None:
        async with self._lock:
            data = await self._read()
            data["clients"][issuer] = client.to_json()
            await asyncio.to_thread(self._write, data)

    async def entries(self) -> list[tuple[str, str, TokenSet]]:
        """Every (issuer, resource, tokens) in the file, for `mcpkit auth status`."""
        data = await self._read()
        return [(issuer, resource, self._parse(TokenSet, entry, f"tokens of {resource}"))
                for issuer, by_resource in sorted(data["tokens"].items())
                for resource, entry in sorted(by_resource.items())]

    # -- the file -------------------------------------------------------------------------------

    def _parse(self, cls: Any, entry: Any, what: str) -> Any:
        try:
            return cls.from_json(entry)
        except TypeError as exc:
            raise TokenFileError(f"{self.path}: the {what} is malformed ({exc}); remove the "
                                 "entry or the file (`mcpkit logout URL`)") from None

    async def _read(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._read_now)

    def _read_now(self) -> dict[str, Any]:
        data = read_private_json(self.path, TokenFileError, "token file")
        if data is None:
            return {"version": _VERSION, "tokens": {}, "clients": {}}
        if (not isinstance(data, dict) or not isinstance(data.get("tokens"), dict)
                or not isinstance(data.get("clients"), dict)):
            raise TokenFileError(f"{self.path}: not an mcpkit token file (no 'tokens' and "
                                 "'clients' objects); remove it to sign in again")
        return data

    def _write(self, data: dict[str, Any]) -> None:
        data["version"] = _VERSION
        write_private_json(self.path, data)
